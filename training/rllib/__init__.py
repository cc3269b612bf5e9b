"""The RLlib backend (``algo: rllib_ppo``): PPO self-play on Ray RLlib, with the native trainer's config,
run folder, logs and evaluation (needs ``blackout-rl[rllib]``).

- ``backend``: the training run, its checkpoints and resume.
- ``env``: the batched engine as an RLlib multi-agent env.
- ``module``: the actor-critic network as an RLlib module, and ``rllib:PATH`` checkpoints as bots.
"""
