"""Tianshou: masked multi-agent DQN on the AEC env, every seat's reward credited in full.

Tianshou's PettingZooEnv credits each step's reward to the seat that acted, so
the env is wrapped in ActingSeatRewards: each seat receives everything it
earned at its own decisions (and at an end decision when the match is over).
Seat 0 learns with DQN (illegal actions masked); the other seats play random
legal actions. A few hundred steps and one update: a smoke run, not training.
"""

import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.utils.net.common import Net
from tianshou.utils.torch_utils import policy_within_training_step

import blackout_env
from blackout_env.envs.wrappers import ActingSeatRewards

RULES = {"hand_sizes": [3, 2, 1]}  # a short match: 4 players, hands of 3, 2 and 1 cards


def make_env() -> PettingZooEnv:
    return PettingZooEnv(ActingSeatRewards(blackout_env.env(rules=RULES)))


torch.manual_seed(0)
np.random.seed(0)  # the DQN's exploration and the random opponents draw from numpy's global generator
env = make_env()
observation_space = env.observation_space["observation"]
net = Net(state_shape=observation_space.shape, action_shape=env.action_space.n, hidden_sizes=[64, 64])
learner = DQN(
    policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.1),
    optim=AdamOptimizerFactory(lr=1e-3),
    gamma=0.99,
    target_update_freq=50,
)
opponents = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in range(3)]
algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, *opponents], env=env)

train_envs = DummyVectorEnv([make_env for _ in range(2)])
train_envs.seed(0)
buffer = VectorReplayBuffer(2000, len(train_envs))
collector = Collector[CollectStats](algorithm, train_envs, buffer, exploration_noise=True)
collector.reset()
stats = collector.collect(n_step=300)
with policy_within_training_step(algorithm.policy):  # what Tianshou's trainers do around an update
    algorithm.update(buffer=buffer, sample_size=64)

# Every reward in the buffer belongs to the seat that acted in that step: Tianshou credits all of it.
data = buffer[buffer.sample_indices(0)]  # every stored step
rewards = data.rew
actor = np.array([env.agent_idx[agent] for agent in data.obs.agent_id])
credited = rewards[np.arange(len(rewards)), actor]
assert np.isclose(credited.sum(), rewards.sum()), "a reward reached a seat that did not act"
print(f"tianshou: {stats.n_collected_steps} steps, {stats.n_collected_episodes} matches, "
      f"reward credited to the acting seat: {credited.sum():.0f} of {rewards.sum():.0f}")
