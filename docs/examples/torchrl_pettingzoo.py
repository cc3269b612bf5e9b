"""TorchRL: the AEC env through PettingZooWrapper with action masks; check_env_specs and a masked rollout.

All four seats form one group ("agents"); ``("agents", "mask")`` marks the
seat to act and ``("agents", "action_mask")`` its legal actions. The rollout's
policy samples a legal action for the acting seat (the others' actions are
ignored).
"""

import torch
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType, check_env_specs

import blackout_env

RULES = {"hand_sizes": [3, 2, 1]}  # a short match: 4 players, hands of 3, 2 and 1 cards

env = PettingZooWrapper(
    env=blackout_env.env(rules=RULES),
    use_mask=True,
    categorical_actions=True,
    group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
    seed=0,
)
check_env_specs(env)


def masked_random_policy(tensordict):
    mask = tensordict["agents", "action_mask"]
    mask = torch.where(mask.any(-1, keepdim=True), mask, True)  # seats not to act: any action (ignored)
    tensordict["agents", "action"] = torch.multinomial(mask.float(), 1).squeeze(-1)
    return tensordict


torch.manual_seed(0)
rollout = env.rollout(300, masked_random_policy, break_when_any_done=False)
matches = int(rollout["next", "done"].sum())
rewards = rollout["next", "agents", "reward"].sum(0).squeeze(-1).tolist()
print(f"torchrl: check_env_specs passed; 300 steps, {matches} matches, rewards per seat {rewards}")
