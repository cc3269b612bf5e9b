"""The native PPO trainer: self-play on the batched engine (read :mod:`.trainer` top to bottom).

- ``trainer``: the algorithm in one file: checks, seeding, rollout, GAE, the clipped update, logging.
- ``sampler``: the rollout and its returns, one function that the trainer runs in its process and
  ``ray_samplers`` (``algo: ppo_ray``) runs in Ray actors; ``ray_cluster`` joins or starts Ray.
- ``returns``: per-seat reward crediting and GAE, a pure function of one rollout.
- ``opponents``: who plays the learner's other seats (self-play, past snapshots, baseline policies).
- ``config``: the run's settings as dataclasses, loaded from YAML with ``--set``, every value validated.
- ``run_folder``: the run folder, checked before anything is written; resume rules; what a run reports.
- ``logs``: ``metrics.csv``, ``eval.csv`` and the learning-curve plot.
- ``vec_env``, ``tables``: the games PPO steps (the batched engine, or plain engines as the reference).
- ``transfer``: a universal network started from a rules-specific one.

The RLlib backend (:mod:`blackout_training.rllib`) reuses the config, run folder, logs and opponents.
"""
