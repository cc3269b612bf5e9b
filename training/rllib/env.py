"""Blackout as RLlib multi-agent environments: the batched engine inside one env, and the plain AEC env.

:class:`BatchedMultiAgentEnv` puts a whole :class:`~blackout_env.batched.BatchedBlackout`
inside one RLlib ``MultiAgentEnv``: every (game, seat) is an agent, named
``g{game}_s{seat}``, so one ``step`` advances every game by one decision (hundreds of
decisions per call instead of one). In each step the agents to act are the seat to
act of every game; its observation is the AEC env's ``{"observation", "action_mask"}``
dict, bit for bit, so one RLModule serves both envs.

One RLlib episode is one hand of every game. All games start their matches
together and every match deals the same hand sizes in the same order, so the
games stay in step: every game ends its hand in the same ``step``. That step
pays each seat its hand score (times ``reward_scale``; ``"zero_sum"`` subtracts
the mean of the other seats') and ends the episode for every agent; RLlib
credits the reward to each seat's latest decision (it holds the reward of an
agent that has no new observation until that agent's episode ends). This is
the native trainer's crediting (``blackout_training.ppo.returns``): a decision's reward is
the hand score its seat receives before its next decision, and the hand's end
cuts the seat's stream. The next ``reset()`` continues every match with its
next hand (the batched engine has already dealt it), and a finished match
starts a new one inside the engine.

:func:`make_aec_env` is the plain path for comparison: RLlib's ``PettingZooEnv`` over
``blackout_env.env()``, one decision per ``step``.

Ray RLlib is optional (``pip install "blackout-rl[rllib]"``); this module imports it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
from ray.rllib.utils.metrics import NUM_AGENT_STEPS_SAMPLED

from blackout_env import Rules
from blackout_env.batched import BatchedBlackout
from blackout_env.game.encoding import observation_bounds

__all__ = ["BatchedMultiAgentEnv", "NumpyOnceEnvRunner", "agent_name", "make_aec_env", "observation_space"]


def agent_name(game: int, seat: int) -> str:
    """The agent id of ``seat`` in game ``game``: ``g{game}_s{seat}``."""
    return f"g{game}_s{seat}"


def observation_space(rules: Rules) -> spaces.Dict:
    """One seat's observation space: the AEC env's ``{"observation", "action_mask"}``."""
    low, high = observation_bounds(rules)
    return spaces.Dict(
        {
            "observation": spaces.Box(low=low.copy(), high=high.copy(), dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(rules.num_actions,), dtype=np.int8),
        }
    )


class BatchedMultiAgentEnv(MultiAgentEnv):
    """``num_games`` Blackout matches of a batched engine as one RLlib multi-agent env.

    ``config`` (RLlib's ``env_config``) keys: ``rules`` (a preset name, a YAML path or a
    rules mapping; default "standard"), ``num_games`` (default 256), ``reward``
    ("score" or "zero_sum"), ``reward_scale`` (default 0.1, as the native trainer) and
    ``seed`` (the deals; each RLlib env runner adds its ``worker_index`` so runners deal
    different cards).

    A league (``opponents``: the training config's ``opponents`` section as a mapping, with
    ``mode: pool``; ``model``: ``hidden_sizes``, ``arch`` and ``card_width`` of the learner's
    network, for its snapshots): every game draws, at every hand, who plays it exactly as the
    native trainer does (:class:`blackout_training.ppo.opponents.OpponentPool`): the learner in
    every seat, or the learner in some seats against past snapshots or baseline bots. Only the
    learner's seats are agents; the env plays the others itself, inside the same engine step.
    The driver hands new snapshots and the run's progress to the env with :meth:`set_league`;
    they take effect at the next hand.
    """

    def __init__(self, config: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        worker_index = getattr(config, "worker_index", 0)  # an RLlib EnvContext knows its runner
        config = dict(config or {})
        known = ("rules", "num_games", "reward", "reward_scale", "seed", "opponents", "model")
        unknown = set(config) - set(known)
        if unknown:
            raise ValueError(f"BatchedMultiAgentEnv: unknown config key(s) {sorted(unknown)}; known: {', '.join(known)}")
        self.rules = Rules.resolve(config.get("rules", "standard"))
        reward = config.get("reward", "score")
        if reward not in ("score", "zero_sum"):
            raise ValueError(f"reward: must be 'score' or 'zero_sum' (paid when each hand ends), got {reward!r}")
        seed = config.get("seed")
        self._seed = None if seed is None else int(seed) + 1_000_003 * int(worker_index)
        self.engine = BatchedBlackout(
            self.rules, config.get("num_games", 256), episode="match", reward=reward,
            reward_scale=float(config.get("reward_scale", 0.1)),
        )
        self.num_games, n = self.engine.num_envs, self.rules.num_players
        self._names = np.array([[agent_name(g, s) for s in range(n)] for g in range(self.num_games)], dtype=object)
        self._all_names = list(self._names.ravel())
        self._games = np.arange(self.num_games)
        self.possible_agents = list(self._all_names)
        self.agents = list(self._all_names)
        space, action_space = observation_space(self.rules), spaces.Discrete(self.rules.num_actions)
        self.observation_spaces = dict.fromkeys(self._all_names, space)
        self.action_spaces = dict.fromkeys(self._all_names, action_space)
        self._pending = None  # the engine's latest BatchStep, when it opens a hand not yet handed out
        self._acting: list[str] = []
        self._acting_games = self._games
        self._last = None  # the BatchStep the agents in self._acting answer
        self.pool = None
        if (config.get("opponents") or {}).get("mode", "self_play") == "pool":
            self.pool = self._make_pool(config["opponents"], config.get("model") or {})
        self._progress = 0.0
        self._ended = False  # the league's last turns ended the hand
        self._new_snapshots: list | None = None  # from set_league, loaded at the next hand

    def _make_pool(self, opponents: Mapping[str, Any], model: Mapping[str, Any]) -> Any:
        from blackout_env.agents.policies import load_policy

        from ..agents.policy_net import make_model
        from ..ppo.config import OpponentsConfig
        from ..ppo.opponents import OpponentPool

        config = OpponentsConfig(**opponents)
        base = 0 if self._seed is None else self._seed
        bots = [load_policy(spec, self.rules, base + j) for j, spec in enumerate(config.bots)]
        rules, sizes, arch, width = self.rules, model["hidden_sizes"], model["arch"], model["card_width"]
        return OpponentPool(config, self.num_games, rules.num_players, bots,
                            lambda: make_model(rules, sizes, arch, width), np.random.default_rng(self._seed),
                            rules=rules)

    def set_league(self, snapshots: list | None = None, progress: float | None = None) -> None:
        """New past snapshots (state dicts of the learner's network) and the run's progress (0..1), from the driver.

        Both take effect when the next hand is drawn (the agents of a hand do not change within it).
        """
        if snapshots is not None:
            self._new_snapshots = list(snapshots)
        if progress is not None:
            self._progress = float(progress)

    def view(self, game: int, player: int) -> Any:
        """What ``player`` may know in game ``game`` (for the league's baseline bots)."""
        return self.engine.view(game, player)

    def engines(self) -> list[tuple[int, BatchedBlackout]]:
        """The batched engine behind the games, from game 0 (the league's heuristic decides them in one call)."""
        return [(0, self.engine)]

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        """The first decisions of the next hand of every game (fresh matches on the first call or with a seed)."""
        if self._pending is None or seed is not None:
            self._pending = self.engine.reset(seed=self._seed if seed is None else seed)
        step, self._pending = self._pending, None
        if self.pool is not None:
            if self._new_snapshots is not None:
                self.pool.load(self._new_snapshots)
                self._new_snapshots = None
            self.pool.draw(self._games, self._progress)
            step = self._play_opponents(step)
            if self._ended:  # pragma: no cover - the learner bids in every hand
                raise RuntimeError("a hand ended before the learner acted")
        return self._observe(step), {}

    def step(self, action_dict: Mapping[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        """One action of every game's seat to act; a hand's end pays every seat and ends the episode."""
        try:
            chosen = np.fromiter((action_dict[name] for name in self._acting), dtype=np.int64, count=len(self._acting))
        except KeyError as error:
            raise ValueError(f"no action for agent {error.args[0]!r}, whose turn it is") from None
        if self.pool is None:
            actions = chosen
        else:  # the league's seats act in the same engine step
            actions = self._opponent_actions(self._last)
            actions[self._acting_games] = chosen
        step = self.engine.step(actions)
        rewards = dict.fromkeys(self._acting, 0.0)
        if self.pool is not None and not self.engine.hand_over.any():
            step = self._play_opponents(step)
        hand_over = self.engine.hand_over
        if hand_over.all():
            if self.pool is None:
                rewards = dict(zip(self._all_names, step.rewards.ravel().tolist()))
            else:  # the learner's seats only
                paid = self.pool.learner_seats(self._games)
                rewards = dict(zip(self._names[paid].tolist(), step.rewards[paid].tolist()))
            self._pending, self._acting = step, []
            return {}, rewards, {"__all__": True}, {"__all__": False}, {}
        if hand_over.any():  # pragma: no cover - the games are in step by construction
            raise RuntimeError("the games' hands fell out of step; every game must start its match together")
        observations = self._observe(step)
        rewards.update(dict.fromkeys(self._acting, 0.0))
        return observations, rewards, {"__all__": False}, {"__all__": False}, {}

    def _opponent_actions(self, step: Any) -> np.ndarray:
        """Every game's action from the league (the learner's games get theirs from RLlib)."""
        import torch

        action = torch.zeros(self.num_games, dtype=torch.int64)
        learner = self.pool.learner_acts(step.current_player)
        obs, mask = torch.from_numpy(step.observation), torch.from_numpy(step.action_mask).bool()
        self.pool.act(action, obs, mask, learner, self, step.current_player)
        return action.numpy()

    def _play_opponents(self, step: Any) -> Any:
        """Step the games while no game's seat to act is the learner's (the league's turns), up to the hand's end."""
        self._ended = False
        while not self.pool.learner_acts(step.current_player).any():
            step = self.engine.step(self._opponent_actions(step))
            if self.engine.hand_over.any():
                self._ended = True
                break
        return step

    def _observe(self, step: Any) -> dict[str, dict[str, np.ndarray]]:
        self._last = step
        if self.pool is None:
            games = self._games
        else:
            games = np.flatnonzero(self.pool.learner_acts(step.current_player))
        self._acting_games = games
        self._acting = self._names[games, step.current_player[games]].tolist()
        observation, action_mask = step.observation, step.action_mask
        if self.pool is not None:
            observation, action_mask = observation[games], action_mask[games]
        return {
            name: {"observation": obs, "action_mask": mask}
            for name, obs, mask in zip(self._acting, observation, action_mask)
        }


class NumpyOnceEnvRunner(MultiAgentEnvRunner):
    """RLlib's multi-agent env runner, with each sampled episode converted to numpy once, when returned.

    Run with ``episodes_to_numpy=False``. With ``True``, RLlib 2.60's runner converts every
    episode that ended during a ``sample()`` call again after each later env step, and one
    call of ours ends several hands (an episode each, of 4 x ``num_envs`` agents): most of a
    runner's time went there. Left as lists, the episodes reach the learner as thousands of
    small arrays, whose unpickling took a third of the driver's time. Converted here, once,
    they travel as a few large arrays, as RLlib's own default returns them.
    """

    def sample(self, *args: Any, **kwargs: Any) -> list:
        return [episode.to_numpy() for episode in super().sample(*args, **kwargs)]

    def get_metrics(self) -> Any:
        """RLlib's metrics, less the per-agent step counts that are NaN.

        RLlib reduces each agent's count of sampled steps over one ``sample()`` call; an agent
        that sampled in an earlier call but not in this one (in a league, the learner's seats
        change from hand to hand) reduces to NaN, and PPO's sampling loop then fails summing
        them (``int(nan)``). Dropped, the agent counts as it should: no steps.
        """
        metrics = super().get_metrics()
        counts = metrics.get(NUM_AGENT_STEPS_SAMPLED)
        if isinstance(counts, dict):
            for agent in [agent for agent, count in counts.items() if math.isnan(float(count))]:
                del counts[agent]
        return metrics

    def set_league(self, snapshots: list | None = None, progress: float | None = None) -> None:
        """:meth:`BatchedMultiAgentEnv.set_league` on each env of this runner (the driver calls it)."""
        for env in getattr(getattr(self, "env", None), "envs", ()):
            if isinstance(env.unwrapped, BatchedMultiAgentEnv):
                env.unwrapped.set_league(snapshots, progress)


def make_aec_env(config: Mapping[str, Any] | None = None) -> MultiAgentEnv:
    """RLlib's ``PettingZooEnv`` over ``blackout_env.env(**config)`` (one decision per step), for comparison."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    import blackout_env

    return PettingZooEnv(blackout_env.env(**dict(config or {})))
