"""The full-information state: every hand and the public table, in no player's observation."""

from __future__ import annotations

import numpy as np
import pytest

from blackout_env import BlackoutGymEnv, Rules, raw_env
from blackout_env.game.encoding import encode, observation_size
from blackout_env.game.state import encode_state, state_layout, state_size


def play_randomly(e, rng, steps):
    for _ in range(steps):
        if all(e.terminations.values()):
            return
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(rng.choice(np.flatnonzero(mask))))


@pytest.mark.parametrize("rules", [Rules(), Rules(num_players=5, jokers=2, hand_sizes="short"), Rules(num_players=7)])
def test_the_state_holds_every_hand_and_seat_zeros_table_at_every_step(rules):
    e = raw_env(rules=rules)
    n, c = rules.num_players, rules.num_cards
    assert e.state_space.shape == (state_size(rules),) == (n * c + observation_size(rules),)
    rng = np.random.default_rng(0)
    e.reset(seed=1)
    for _ in range(60):
        state = e.state()
        assert state.dtype == np.float32 and e.state_space.contains(state)
        hands = state[: n * c].reshape(n, c)
        for seat in range(n):
            assert set(np.flatnonzero(hands[seat])) == set(e.game.hands[seat])
        np.testing.assert_array_equal(state[n * c :], encode(e.game.view(0)))
        np.testing.assert_array_equal(state, encode_state(e.game.hands, e.game.view(0)))
        play_randomly(e, rng, 1)


def test_the_layout_is_contiguous_and_names_the_table_blocks():
    rules = Rules(jokers=1)
    layout = state_layout(rules)
    assert layout[0].name == "hands" and layout[0].shape == (4, 54)
    assert all(b.name.startswith("table.") for b in layout[1:])
    offset = 0
    for block in layout:
        assert block.offset == offset and block.size == int(np.prod(block.shape))
        offset += block.size
    assert offset == state_size(rules)


def test_hidden_cards_change_the_state_but_no_observation_of_a_player_who_cannot_see_them():
    rules = Rules(hand_sizes=[3])
    deck = list(range(52))
    # Deal: card k goes to seat (dealer + 1 + k) % 4 with dealer 0, so deck[0] is seat 1's, deck[1] seat 2's.
    swapped = [deck[1], deck[0], *deck[2:]]
    a, b = raw_env(rules=rules), raw_env(rules=rules)
    a.reset(options={"decks": [deck], "first_dealer": 0})
    b.reset(options={"decks": [swapped], "first_dealer": 0})
    for seat in (0, 3):
        agent = f"player_{seat}"
        np.testing.assert_array_equal(a.observe(agent)["observation"], b.observe(agent)["observation"])
    differs = np.flatnonzero(a.state() != b.state())
    c = rules.num_cards
    assert sorted(differs) == sorted([1 * c + deck[0], 1 * c + deck[1], 2 * c + deck[0], 2 * c + deck[1]])


def test_the_state_of_a_finished_hand_episode_shows_the_finished_hand_and_the_gym_env_has_it_too():
    e = raw_env(episode="hand")
    e.reset(seed=3, options={"round": 9})  # the one-card hand
    rng = np.random.default_rng(0)
    play_randomly(e, rng, 100)
    assert all(e.terminations.values())
    state = e.state()
    assert not state[: 4 * 52].any()  # every card was played
    np.testing.assert_array_equal(state[4 * 52 :], e.observe("player_0")["observation"])
    gym_env = BlackoutGymEnv(opponents="random")
    gym_env.reset(seed=0)
    np.testing.assert_array_equal(gym_env.state(), gym_env.aec_env.state())


def test_state_before_reset_is_a_clear_error():
    with pytest.raises(RuntimeError, match="reset"):
        raw_env().state()
