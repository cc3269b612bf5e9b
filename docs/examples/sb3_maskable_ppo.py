"""Stable-Baselines3 + sb3-contrib: MaskablePPO on the single-agent Gymnasium env (one learner, three bots).

MaskablePPO reads the legal actions from the env's action_masks() method, so
the policy never samples an illegal card or bid. A few hundred steps: a smoke
run, not training.
"""

import gymnasium as gym
from sb3_contrib import MaskablePPO

RULES = {"hand_sizes": [3, 2, 1]}  # a short match: 4 players, hands of 3, 2 and 1 cards

env = gym.make("blackout_env:blackout/BlackoutVsRandom-v0", rules=RULES)
model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, policy_kwargs={"net_arch": [64]})
model.learn(total_timesteps=256)

# One match with the trained policy, masked at every decision.
obs, info = env.reset(seed=1)
total, done = 0.0, False
while not done:
    action, _ = model.predict(obs, action_masks=env.get_wrapper_attr("action_masks")(), deterministic=True)
    obs, reward, terminated, truncated, info = env.step(action)
    total += reward
    done = terminated or truncated
print(f"sb3: MaskablePPO trained 256 steps; one match scored {total:.0f}")
