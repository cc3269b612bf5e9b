"""Gymnasium vector envs: make_vec in every mode, with masked random actions.

``sync`` and ``async`` run one single-agent env per copy (async: one process
each); ``vector_entry_point`` is the native vector env on the batched engine,
which steps every game with array operations (use it for thousands of games).
The same call works in every mode; the infos hold ``action_mask`` as one int8
array for all copies.
"""

import gymnasium as gym
import numpy as np

RULES = {"hand_sizes": [3, 2, 1]}  # a short match: 4 players, hands of 3, 2 and 1 cards

for mode in ("sync", "async", "vector_entry_point"):
    envs = gym.make_vec("blackout_env:blackout/BlackoutVsRandom-v0", num_envs=4, vectorization_mode=mode, rules=RULES)
    observations, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    matches = 0
    for _ in range(100):
        mask = infos["action_mask"]
        actions = (rng.random(mask.shape) * mask).argmax(axis=1)  # a random legal action in every copy
        observations, rewards, terminations, truncations, infos = envs.step(actions)
        matches += int(terminations.sum())
    envs.close()
    print(f"gymnasium make_vec {mode}: 4 copies x 100 steps, observations {observations.shape}, {matches} matches ended")
