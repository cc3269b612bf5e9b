"""PettingZoo Parallel API, for libraries that take only parallel envs: turn_based_aec_to_parallel.

Blackout is turn based: in each parallel step only the seat to act has legal
actions (its mask has ones); the actions given for the other seats are
ignored. Rewards reach every seat as in the AEC env.
"""

import numpy as np
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import blackout_env

RULES = {"hand_sizes": [3, 2, 1]}  # a short match: 4 players, hands of 3, 2 and 1 cards

env = turn_based_aec_to_parallel(blackout_env.env(rules=RULES))
observations, infos = env.reset(seed=0)
rng = np.random.default_rng(0)
totals = dict.fromkeys(env.possible_agents, 0.0)
steps = 0
while env.agents:
    actions = {}
    for agent in env.agents:
        legal = np.flatnonzero(observations[agent]["action_mask"])
        actions[agent] = int(rng.choice(legal)) if legal.size else 0  # 0: ignored, not this seat's turn
    observations, rewards, terminations, truncations, infos = env.step(actions)
    for agent, reward in rewards.items():
        totals[agent] += reward
    steps += 1
print(f"pettingzoo parallel: one match in {steps} steps, totals {totals}")
