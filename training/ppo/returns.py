"""Per-seat reward crediting and generalised advantage estimation (GAE) for a multi-seat rollout.

A pure function of one rollout, so the subtlest part of the PPO trainer
(``blackout_training.ppo.trainer``) is tested on small streams computed by hand.

The rollout. At each of ``T`` steps one seat acts in each of ``N`` games:
``players[t, i]`` is that seat; ``recorded[t, i]`` says whether its decision is
the learner's (training data). After the step, ``hand_over[t, i]`` says that
game ``i``'s hand ended with it (a match's last hand included: the engine then
starts a new match), and ``hand_rewards[t, i]`` holds every seat's reward for
that hand (zero where no hand ended).

Streams. Each (game, seat) pair is its own stream of the seat's recorded
decisions. A hand's reward goes to the seat's latest recorded decision of that
hand, and the hand's end cuts the stream: hands are scored independently, so
a decision is worth the score of its own hand, and ``gamma`` only discounts
within a hand. A seat that made no recorded decision in the hand gets nothing.

Open tails. A stream's last decision that has neither a successor nor a hand
end inside the rollout is *open*: its reward is not known yet. It is left out
of the update (``trainable`` false) and bootstraps the decision before it
through its value: that one's advantage is ``r + gamma * V(next) - V`` with no
further GAE term.

GAE. For a trainable decision ``t`` with the same seat's next decision ``u``
in the same hand: ``delta = r_t + gamma * V_u - V_t`` and
``A_t = delta + gamma * lambda * A_u`` (``A_u = 0`` when ``u`` is open);
at a hand's end ``A_t = r_t - V_t``. ``returns = advantages + values``, the
value target. Entries that are not trainable hold advantage 0.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from blackout_env import Rules
from blackout_env.game.rules_logic import seat_rewards

__all__ = ["SeatReturns", "hand_rewards", "hand_scale", "seat_returns"]


class SeatReturns(NamedTuple):
    """The training targets of a rollout; every array is (T, N), indexed [step, game]."""

    advantages: np.ndarray
    """float32 GAE advantages (0 where not trainable)."""
    returns: np.ndarray
    """float32 value targets: ``advantages + values``."""
    trainable: np.ndarray
    """bool: recorded decisions whose stream continues or whose hand ended inside the rollout."""
    rewards: np.ndarray
    """float32 reward credited to each decision (the hand's reward, on the seat's last decision of the hand)."""
    hand_end: np.ndarray
    """bool: the decision is its seat's last of a hand that ended inside the rollout."""
    next_step: np.ndarray
    """int64: the step of the same seat's next recorded decision in the same hand, or -1."""


def hand_scale(rules: Rules) -> float:
    """A table's hand scale: the largest absolute hand score, averaged over the match's hands (``env.reward_norm``).

    ``rules.largest_match_total() / len(rules.hand_sizes)``, at least 1: 15.5 for the standard table (10 + bid,
    hands 10 down to 1), 11.25 for 1 point per trick and 5 for an exact bid over hands 12-8-4-1.
    """
    return max(rules.largest_match_total() / len(rules.hand_sizes), 1.0)


def hand_rewards(
    hand_scores: np.ndarray, reward: str = "score", scale: float | np.ndarray = 1.0, players: np.ndarray | None = None
) -> np.ndarray:
    """Rewards of hands from their scores (``[..., seat]``): the env's ``"score"`` or ``"zero_sum"`` mode, scaled.

    ``scale`` is one number, or one per hand (the shape of ``hand_scores`` without the seat axis: a table
    distribution's per-table normalisation, ``env.reward_norm: table``).

    ``"zero_sum"``: each seat's score minus the mean of the other seats' scores. ``players`` (the shape of
    ``hand_scores`` without the seat axis) gives the seats at each hand's table when the seat axis is
    padded beyond them (a table distribution; the padding seats score 0); default: every column is a seat.
    """
    if reward not in ("score", "zero_sum"):
        raise ValueError(f"reward: must be 'score' or 'zero_sum', got {reward!r}")
    if not np.isscalar(scale):
        scale = np.asarray(scale, dtype=np.float32)[..., None]
    if players is None:
        return seat_rewards(reward, hand_scores) * scale  # the env's own reward function
    # A padded seat axis: each table's own seats, table size by table size (padding seats get 0).
    players = np.asarray(players)
    rewards = np.zeros(hand_scores.shape, dtype=np.result_type(hand_scores.dtype, np.float32))
    for count in np.unique(players):
        at = players == count
        rewards[at, :count] = seat_rewards(reward, hand_scores[at, :count])
    return rewards * scale


def seat_returns(
    players: np.ndarray,
    recorded: np.ndarray,
    hand_over: np.ndarray,
    rewards: np.ndarray,
    values: np.ndarray,
    gamma: float,
    gae_lambda: float,
) -> SeatReturns:
    """Credit each hand's rewards to the seats' decisions and compute GAE per (game, seat) stream.

    Args:
        players: (T, N) int, the seat acting at step t in game i.
        recorded: (T, N) bool, the decision is training data.
        hand_over: (T, N) bool, the hand ended with step t's action.
        rewards: (T, N, num_players) float, each seat's reward for the hand that ended with step t
            (see :func:`hand_rewards`); read only where ``hand_over``.
        values: (T, N) float32, the value estimate of each decision.
        gamma, gae_lambda: discount and GAE lambda.
    """
    T, n_envs = players.shape
    n_players = rewards.shape[-1]
    games = np.arange(n_envs)
    reward = np.zeros((T, n_envs), dtype=np.float32)
    hand_end = np.zeros((T, n_envs), dtype=bool)
    next_step = np.full((T, n_envs), -1, dtype=np.int64)
    last_decision = np.full((n_envs, n_players), -1, dtype=np.int64)  # per (game, seat): its latest step this hand
    for t in range(T):
        seats, data = players[t], recorded[t]
        previous = last_decision[games, seats]
        link = data & (previous >= 0)
        next_step[previous[link], games[link]] = t
        last_decision[games[data], seats[data]] = t
        if hand_over[t].any():
            ended = np.flatnonzero(hand_over[t])
            ended_rewards = rewards[t, ended]
            for seat in range(n_players):
                steps = last_decision[ended, seat]
                has = steps >= 0
                reward[steps[has], ended[has]] += ended_rewards[has, seat]
                hand_end[steps[has], ended[has]] = True
                last_decision[ended, seat] = -1

    open_tail = recorded & ~hand_end & (next_step < 0)
    trainable = recorded & ~open_tail
    advantages = np.zeros((T, n_envs), dtype=np.float32)
    for t in reversed(range(T)):
        nxt = next_step[t]
        has_next = (nxt >= 0) & ~hand_end[t]
        safe = np.where(has_next, nxt, 0)
        next_value = np.where(has_next, values[safe, games], 0.0)
        next_adv = np.where(has_next & trainable[safe, games], advantages[safe, games], 0.0)
        delta = reward[t] + gamma * next_value - values[t]
        advantages[t] = np.where(trainable[t], delta + gamma * gae_lambda * next_adv, 0.0)
    return SeatReturns(advantages, advantages + values, trainable, reward, hand_end, next_step)
