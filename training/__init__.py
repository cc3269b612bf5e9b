"""Training, evaluation and command-line tools for Blackout RL (imports torch only where needed).

Installed as ``blackout_training``; each subpackage is one part, and imports only the parts listed
before it:

- ``agents``: the play-time agents: the network and its checkpoints (the shipped ones included),
  ``PolicyBot``, ``ppo+search``, ``ppo+search-deep``, ``ppo+rollout``, policy specs by name.
- ``evaluation``: duplicate-deal tournaments, the generalist table, game logs.
- ``ppo``: the native PPO trainer, with its config, run folder and logs (read :mod:`.ppo.trainer`).
- ``expert``: expert iteration: search-labelled games distilled into the network.
- ``rllib``: the RLlib backend, on the native trainer's config and run folder.
- ``bench``: benchmarks, one module per ``blackout bench NAME``.
- ``cli``, ``play``, ``web``: the ``blackout`` command (one module per subcommand), the terminal game,
  the browser game.
"""
