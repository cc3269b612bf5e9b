"""Training, evaluation and command-line tools for Blackout RL (imports torch only where needed).

Where things are (installed as ``blackout_training``):

Training (PPO self-play on the batched engine, read :mod:`.ppo` top to bottom):

- ``ppo``: the algorithm in one file: checks, seeding, rollout, GAE, the clipped update, logging.
- ``returns``: per-seat reward crediting and GAE, a pure function of one rollout.
- ``opponents``: who plays the learner's other seats (self-play, past snapshots, baseline policies).
- ``config``: the run's settings as dataclasses, loaded from YAML with ``--set``, every value validated.
- ``run_folder``: the run folder, checked before anything is written; resume rules; stale temp files.
- ``logs``: ``metrics.csv``, ``eval.csv`` and the learning-curve plot.
- ``vec_env``: the games PPO steps (the batched engine, or plain engines as the reference).
- ``policy_net``, ``card_features``: the actor-critic network, its checkpoints, and a network as a bot.

Evaluation and policies:

- ``evaluate``: duplicate-deal tournaments with 95% intervals (table, JSON, plot).
- ``policies``: policy specs by name (``heuristic``, ``search:samples=64``, ``ppo:PATH``); the registry
  itself lives in :mod:`blackout_env.policies` so the Gym env can use it.

Front-ends, in their own subpackages: ``cli`` (the ``blackout`` command, one module per subcommand),
``play`` (the terminal game), ``bench`` (benchmarks, one module per ``blackout bench NAME``).
"""
