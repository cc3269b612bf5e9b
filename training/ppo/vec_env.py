"""The training loop's view of the game: many games stepped together, one small adapter.

PPO (``blackout_training.ppo.trainer``) needs only this from the environment, per step of all
games at once: the seat to act, its observation and int8 action mask, the
hand scores that arrived with the step (a hand's score reaches every seat when
the hand ends), and which games just finished a hand: a :class:`GameBatch`,
whose fields are named as the batched engine's ``BatchStep``. Finished matches start
over by themselves.

Two adapters give it:

* :class:`BatchedVecEnv` over the batched numpy engine (``blackout_env.batched``),
  the fast path used for training;
* :class:`EngineVecEnv` over plain :class:`~blackout_env.BlackoutGame` objects and the
  encoder, one game at a time in Python: slow, but the reference that the
  batched path must agree with, and the fallback when no batched engine exists.

With ``observation="universal"`` both adapters show universal observations and
masks and take universal actions (:mod:`blackout_env.game.universal`), so one
network can be trained on several tables (``blackout_training.ppo.tables``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

import numpy as np

from blackout_env import BlackoutGame, PlayerView, Rules
from blackout_env.game import encoding
from blackout_env.game.universal import observation_kind, rules_actions, universal_action_mask, universal_observation

if TYPE_CHECKING:
    from blackout_env.batched import BatchedBlackout

__all__ = ["BatchedVecEnv", "EngineVecEnv", "GameBatch", "VecEnv", "make_vec_env"]


class GameBatch(NamedTuple):
    """What every game shows after a reset or a step.

    The first four fields have the names and meanings of the batched engine's
    :class:`~blackout_env.batched.BatchStep` (with ``reward="score"``, unscaled).
    """

    current_player: np.ndarray
    """(num_envs,) int: the seat to act."""
    observation: np.ndarray
    """(num_envs, observation_size) float32: that seat's observation."""
    action_mask: np.ndarray
    """(num_envs, num_actions) int8: that seat's legal actions."""
    rewards: np.ndarray
    """(num_envs, num_players) float32: each seat's score for a hand that ended with this step, else 0."""
    hand_over: np.ndarray
    """(num_envs,) bool: a hand ended with this step (the next decision belongs to a new hand)."""
    bid_made: np.ndarray
    """(num_envs, num_players) bool: each seat made its bid exactly in a hand that ended with this step."""


class VecEnv(Protocol):
    """The interface PPO steps: ``reset`` then ``step`` with one action per game."""

    num_envs: int
    rules: Rules

    def reset(self, seed: int, decks: np.ndarray | None = None) -> GameBatch: ...

    def step(self, actions: np.ndarray) -> GameBatch: ...

    def view(self, game: int, player: int) -> PlayerView: ...

    def engines(self) -> list[tuple[int, BatchedBlackout]]: ...

    def hidden_hands(self, player: np.ndarray) -> np.ndarray: ...


class EngineVecEnv:
    """``num_envs`` engine games in Python lists; exact, simple, slow (a few thousand steps/s)."""

    def __init__(self, rules: Rules, num_envs: int, observation: str = "rules") -> None:
        self.rules = rules
        self.num_envs = num_envs
        self.observation = observation_kind(observation)
        self.games: list[BlackoutGame] = []
        self._rng = np.random.default_rng(0)

    def reset(self, seed: int, decks: np.ndarray | None = None) -> GameBatch:
        """New matches; ``decks`` (games x rounds x deck size) fixes the first match's deals."""
        self._rng = np.random.default_rng(seed)
        self.games = [
            BlackoutGame(self.rules, seed=self._rng, decks=None if decks is None else np.asarray(decks[i]).tolist())
            for i in range(self.num_envs)
        ]
        zeros = np.zeros((self.num_envs, self.rules.num_players), dtype=np.float32)
        return self._observe(zeros, np.zeros(self.num_envs, dtype=bool), zeros.astype(bool))

    def step(self, actions: np.ndarray) -> GameBatch:
        n = self.rules.num_players
        hand_scores = np.zeros((self.num_envs, n), dtype=np.float32)
        hand_over = np.zeros(self.num_envs, dtype=bool)
        bid_made = np.zeros((self.num_envs, n), dtype=bool)
        if self.observation == "universal":
            actions = rules_actions(actions, self.rules)
        for i, game in enumerate(self.games):
            hands_done = len(game.round_scores)
            game.step(int(actions[i]))
            if len(game.round_scores) > hands_done:
                hand_scores[i] = game.round_scores[-1]
                hand_over[i] = True
                bid_made[i] = np.equal(game.round_bids[-1], game.round_tricks[-1])
            if game.is_over:
                self.games[i] = BlackoutGame(self.rules, seed=self._rng)
        return self._observe(hand_scores, hand_over, bid_made)

    def view(self, game: int, player: int) -> PlayerView:
        """What ``player`` may know in game ``game`` (for baseline-bot opponents)."""
        return self.games[game].view(player)

    def engines(self) -> list[tuple[int, BatchedBlackout]]:
        """No batched engine: bots act one game at a time."""
        return []

    def hidden_hands(self, player: np.ndarray) -> np.ndarray:
        """For the oracle critic (training only): every other seat's hand, clockwise from ``player`` in each game,
        in the layout of the observation (:func:`~blackout_training.agents.policy_net.table_oracle_inputs`)."""
        from ..agents.policy_net import table_oracle_inputs

        hands = np.array([[sum(1 << card for card in hand) for hand in game.hands] for game in self.games],
                         dtype=np.uint64)
        return table_oracle_inputs(hands, player, self.rules, self.observation)

    def _observe(self, hand_scores: np.ndarray, hand_over: np.ndarray, bid_made: np.ndarray) -> GameBatch:
        views = [game.view(game.current_player) for game in self.games]
        obs = np.stack([encoding.encode(v) for v in views])
        mask = np.stack([encoding.action_mask(v) for v in views])
        if self.observation == "universal":
            obs, mask = universal_observation(obs, self.rules), universal_action_mask(mask, self.rules)
        return GameBatch(
            current_player=np.array([v.player for v in views], dtype=np.int64),
            observation=obs,
            action_mask=mask,
            rewards=hand_scores,
            hand_over=hand_over,
            bid_made=bid_made,
        )


class BatchedVecEnv:
    """The batched numpy engine (:class:`blackout_env.batched.BatchedBlackout`) as a :class:`VecEnv`.

    Whole matches (``episode="match"``, restarted by the engine after the last
    hand) with ``reward="score"`` unscaled, so the rewards of a step are the
    scores of the hands that ended in it; the engine's ``hand_over``,
    ``last_hand_bids`` and ``last_hand_tricks`` tell which hands ended and how.
    """

    def __init__(self, rules: Rules, num_envs: int, observation: str = "rules", seed: int | None = None) -> None:
        from blackout_env.batched import BatchedBlackout

        self.rules = rules
        self.num_envs = num_envs
        self.observation = observation_kind(observation)
        self.engine = BatchedBlackout(rules, num_envs, episode="match", reward="score", observation=observation,
                                      seed=seed)

    def reset(self, seed: int, decks: np.ndarray | None = None) -> GameBatch:
        """New matches; ``decks`` (games x rounds x deck size) fixes the first match's deals."""
        step = self.engine.reset(seed=seed, decks=decks)
        zeros = np.zeros((self.num_envs, self.rules.num_players), dtype=np.float32)
        return GameBatch(step.current_player.astype(np.int64), step.observation, self._mask(step.action_mask), zeros,
                         self.engine.hand_over.copy(), zeros.astype(bool))

    def step(self, actions: np.ndarray) -> GameBatch:
        if self.observation == "universal":
            actions = rules_actions(actions, self.rules)
        step = self.engine.step(actions)
        hand_over = self.engine.hand_over.copy()
        made = hand_over[:, None] & (self.engine.last_hand_bids == self.engine.last_hand_tricks)
        return GameBatch(step.current_player.astype(np.int64), step.observation, self._mask(step.action_mask),
                         step.rewards, hand_over, made)

    def _mask(self, mask: np.ndarray) -> np.ndarray:
        return universal_action_mask(mask, self.rules) if self.observation == "universal" else mask

    def view(self, game: int, player: int) -> PlayerView:
        """What ``player`` may know in game ``game`` (for baseline-bot opponents)."""
        return self.engine.view(game, player)

    def engines(self) -> list[tuple[int, BatchedBlackout]]:
        """The batched engine behind the games, with the index of its first game (for batched bots)."""
        return [(0, self.engine)]

    def hidden_hands(self, player: np.ndarray) -> np.ndarray:
        """For the oracle critic (training only): every other seat's hand, clockwise from ``player`` in each game,
        in the layout of the observation (:func:`~blackout_training.agents.policy_net.table_oracle_inputs`)."""
        from ..agents.policy_net import table_oracle_inputs

        return table_oracle_inputs(self.engine.hands, player, self.rules, self.observation)


def make_vec_env(rules: Rules, num_envs: int, backend: str = "auto", observation: str = "rules") -> VecEnv:
    """The fastest available adapter ("auto"), or the one named ("batched", "engine")."""
    if backend == "engine":
        return EngineVecEnv(rules, num_envs, observation)
    try:
        return BatchedVecEnv(rules, num_envs, observation)
    except ImportError:
        if backend == "batched":
            raise ValueError("env.backend: 'batched' asked, but blackout_env.batched cannot be imported") from None
        return EngineVecEnv(rules, num_envs, observation)
