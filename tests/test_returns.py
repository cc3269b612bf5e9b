"""Per-seat reward crediting and GAE (``blackout_training.ppo.returns``) on small streams computed by hand.

The streams are 3-player rollouts of one-card hands: three bids then three
plays per hand, so a hand is six decisions and ends with the sixth.
"""

from __future__ import annotations

import numpy as np
import pytest
from blackout_training.ppo.returns import hand_rewards, hand_scale, seat_returns

from blackout_env import Rules

GAMMA, LAM = 0.9, 0.5


def column(values) -> np.ndarray:
    """One game's per-step values as a (T, 1) array."""
    return np.asarray(values)[:, None]


def rollout(players, hand_ends, scores, recorded=None, values=None):
    """A one-game rollout: ``hand_ends`` maps a step to the hand's scores (per seat) ending with it."""
    T = len(players)
    n_players = len(scores[0]) if scores else 3
    hand_over = np.zeros((T, 1), dtype=bool)
    rewards = np.zeros((T, 1, n_players), dtype=np.float32)
    for step, hand_scores in zip(hand_ends, scores):
        hand_over[step, 0] = True
        rewards[step, 0] = hand_scores
    recorded = np.ones((T, 1), dtype=bool) if recorded is None else column(recorded).astype(bool)
    values = column(values).astype(np.float32)
    return seat_returns(column(players), recorded, hand_over, rewards, values, GAMMA, LAM)


# Seats 0,1,2 bid (t0..t2) and play (t3..t5); the hand ends with t5. The next hand (dealer moved on)
# starts with seat 1: t6 seat 1, t7 seat 2, t8 seat 0, t9 seat 1, and the rollout ends mid-hand.
PLAYERS = [0, 1, 2, 0, 1, 2, 1, 2, 0, 1]
V = [0.5, 0.2, -0.1, 0.8, 0.3, 0.4, 0.6, -0.2, 0.7, 0.9]


def test_a_hand_score_goes_to_each_seats_last_decision_of_the_hand():
    out = rollout(PLAYERS, [5], [[11.0, 0.0, 10.0]], values=V)
    assert out.rewards[:, 0].tolist() == [0, 0, 0, 11, 0, 10, 0, 0, 0, 0]
    assert out.hand_end[:, 0].tolist() == [False] * 3 + [True] * 3 + [False] * 4


def test_gae_within_a_hand_and_a_cut_at_its_end():
    out = rollout(PLAYERS, [5], [[11.0, 0.0, 10.0]], values=V)
    a = out.advantages[:, 0]
    # the plays end the hand: A = r - V (no bootstrap across the hand's end)
    a3, a4, a5 = 11 - 0.8, 0 - 0.3, 10 - 0.4
    assert a[3] == pytest.approx(a3) and a[4] == pytest.approx(a4) and a[5] == pytest.approx(a5)
    # the bids: delta = 0 + gamma V(play) - V(bid), plus gamma lambda A(play)
    assert a[0] == pytest.approx(GAMMA * 0.8 - 0.5 + GAMMA * LAM * a3)
    assert a[1] == pytest.approx(GAMMA * 0.3 - 0.2 + GAMMA * LAM * a4)
    assert a[2] == pytest.approx(GAMMA * 0.4 + 0.1 + GAMMA * LAM * a5)
    np.testing.assert_allclose(out.returns[:, 0], a + np.asarray(V, dtype=np.float32), rtol=1e-6)


def test_open_tails_bootstrap_through_their_value_and_are_not_trained_on():
    out = rollout(PLAYERS, [5], [[11.0, 0.0, 10.0]], values=V)
    # seat 1: t6 then t9, which is still open when the rollout ends
    assert out.next_step[6, 0] == 9
    assert out.advantages[6, 0] == pytest.approx(GAMMA * 0.9 - 0.6)  # no GAE term from the open tail
    # t7 (seat 2), t8 (seat 0), t9 (seat 1) have no successor and no hand end yet
    assert out.trainable[:, 0].tolist() == [True] * 7 + [False] * 3
    assert out.advantages[7:, 0].tolist() == [0.0, 0.0, 0.0]


def test_a_hand_ending_on_the_rollouts_last_step_leaves_nothing_open():
    out = rollout(PLAYERS[:6], [5], [[11.0, 0.0, 10.0]], values=V[:6])
    assert out.trainable.all()


def test_a_match_end_cuts_the_streams_like_a_hand_end():
    # the last hand of a match ends with t5; the engine starts a new match, seat 0 leading again (t6..t8)
    players = [0, 1, 2, 0, 1, 2, 0, 1, 2]
    values = [0.1] * 9
    out = rollout(players, [5, 8], [[10.0, 11.0, 0.0], [0.0, 0.0, 12.0]], values=values)
    assert out.next_step[3, 0] == -1 and out.next_step[6, 0] == -1  # no link from one match into the next
    assert out.rewards[:, 0].tolist() == [0, 0, 0, 10, 11, 0, 0, 0, 12]
    assert out.advantages[3, 0] == pytest.approx(10 - 0.1)
    assert out.advantages[6, 0] == pytest.approx(-0.1)  # seat 0 scored 0 in the new match's hand
    assert out.trainable.all()


def test_the_learners_stream_skips_decisions_that_are_not_recorded():
    # pool mode: only seat 0 is the learner; the other seats' decisions are neither data nor rewarded
    recorded = [p == 0 for p in PLAYERS]
    out = rollout(PLAYERS, [5], [[11.0, 0.0, 10.0]], recorded=recorded, values=V)
    assert out.next_step[0, 0] == 3
    assert out.rewards[:, 0].tolist() == [0, 0, 0, 11, 0, 0, 0, 0, 0, 0]
    assert out.trainable[:, 0].tolist() == [True, False, False, True, False, False, False, False, False, False]
    assert out.advantages[0, 0] == pytest.approx(GAMMA * 0.8 - 0.5 + GAMMA * LAM * (11 - 0.8))


def test_a_seat_without_a_recorded_decision_in_the_hand_gets_no_reward():
    recorded = [True, True, True, True, True, False, True, True, True, True]  # seat 2 recorded only its bid
    out = rollout(PLAYERS, [5], [[11.0, 0.0, 10.0]], recorded=recorded, values=V)
    assert out.rewards[2, 0] == 10 and out.hand_end[2, 0]  # its bid was its last recorded decision
    recorded = [p != 2 for p in PLAYERS]
    out = rollout(PLAYERS, [5], [[11.0, 0.0, 10.0]], recorded=recorded, values=V)
    assert out.rewards[:, 0].sum() == 11  # seat 2's 10 points reach nobody


def test_games_are_independent_streams():
    one = rollout(PLAYERS, [5], [[11.0, 0.0, 10.0]], values=V)
    other_players = [2, 0, 1, 2, 0, 1, 2, 0, 1, 2]
    other = rollout(other_players, [5], [[0.0, 3.0, 12.0]], values=V[::-1])
    both = seat_returns(
        np.stack([PLAYERS, other_players], axis=1),
        np.ones((10, 2), dtype=bool),
        _ends(10, 5, 2),
        np.stack([_scores(10, 5, [11.0, 0.0, 10.0]), _scores(10, 5, [0.0, 3.0, 12.0])], axis=1),
        np.stack([V, V[::-1]], axis=1).astype(np.float32),
        GAMMA,
        LAM,
    )
    np.testing.assert_array_equal(both.advantages, np.concatenate([one.advantages, other.advantages], axis=1))
    np.testing.assert_array_equal(both.trainable, np.concatenate([one.trainable, other.trainable], axis=1))


def _ends(T, step, games):
    ends = np.zeros((T, games), dtype=bool)
    ends[step] = True
    return ends


def _scores(T, step, scores):
    out = np.zeros((T, len(scores)), dtype=np.float32)
    out[step] = scores
    return out


def test_zero_sum_rewards_are_the_score_minus_the_others_mean_then_scaled():
    rewards = hand_rewards(np.array([[11.0, 0.0, 10.0]], dtype=np.float32), "zero_sum", 0.1)
    np.testing.assert_allclose(rewards, [[0.6, -1.05, 0.45]], rtol=1e-6)
    assert rewards.dtype == np.float32
    np.testing.assert_allclose(hand_rewards(np.array([[11.0, 0.0, 10.0]]), "score", 0.5), [[5.5, 0.0, 5.0]])


def test_zero_sum_rewards_flow_through_the_streams():
    rewards = hand_rewards(np.array([11.0, 0.0, 10.0], dtype=np.float32), "zero_sum")
    out = rollout(PLAYERS, [5], [rewards.tolist()], values=V)
    assert out.rewards[3:6, 0].tolist() == pytest.approx([6.0, -10.5, 4.5])
    assert out.rewards.sum() == pytest.approx(0.0)


def test_an_unknown_reward_mode_is_refused():
    with pytest.raises(ValueError, match="reward: must be 'score' or 'zero_sum'"):
        hand_rewards(np.zeros((1, 3)), "win")


def test_a_tables_hand_scale_is_its_largest_hand_score_averaged_over_the_match():
    assert hand_scale(Rules.preset("standard")) == 15.5  # 10 + bid, hands 10 down to 1: (20 + 19 + ... + 11) / 10
    per_trick = Rules(num_players=3, hand_sizes=[12, 8, 4, 1], exact_bonus=5, points_per_bid=0, points_per_trick=1)
    assert hand_scale(per_trick) == (17 + 13 + 9 + 6) / 4
    assert hand_scale(Rules(num_players=4, hand_sizes=[1], exact_bonus=0, points_per_bid=0)) == 1.0  # at least 1


def test_rewards_take_one_scale_per_hand():
    scores = np.array([[[11.0, 0.0, 10.0]], [[4.0, 2.0, 0.0]]], dtype=np.float32)  # (T=2, N=1, seats)
    rewards = hand_rewards(scores, "score", np.array([[0.5], [0.25]]))
    np.testing.assert_allclose(rewards, [[[5.5, 0.0, 5.0]], [[1.0, 0.5, 0.0]]])
    padded = hand_rewards(scores, "score", np.array([[0.5], [0.25]]), players=np.array([[2], [3]]))
    np.testing.assert_allclose(padded, [[[5.5, 0.0, 0.0]], [[1.0, 0.5, 0.0]]])
