"""The play-time agents: what plays a seat once training is done (needs torch).

- ``policy_net``, ``card_features``: the actor-critic network, its checkpoints, and a network as a bot
  (:class:`~blackout_training.agents.policy_net.PolicyBot`); the shipped checkpoints in ``checkpoints/``.
- ``search_policy``: ``ppo+search``, the search bot with the network as its prior; ``ppo+search-deep``, the same deeper.
- ``rollout_policy``: ``ppo+rollout``, the network's own play rolled out over sampled deals.
- ``policies``: policy specs by name (``heuristic``, ``search:samples=64``, ``ppo:PATH``); the registry
  itself lives in :mod:`blackout_env.agents.policies` so the Gym env can use it.

The agents import nothing from the trainers, evaluation or the front-ends.
"""
