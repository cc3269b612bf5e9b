"""The observation encoder: layout, bounds, seat-relative meaning, and that it sees only the view."""

from __future__ import annotations

import numpy as np
import pytest

from blackout_env import BlackoutGame, Rules
from blackout_env.envs.aec import raw_env
from blackout_env.game.encoding import (
    Block,
    action_mask,
    block_slices,
    encode,
    encode_into,
    observation_bounds,
    observation_layout,
    observation_size,
    score_scale,
)

RULE_SETS = {
    "standard": "standard",
    "3 players": {"num_players": 3, "hand_sizes": [5, 4, 3]},
    "5 players": {"num_players": 5, "hand_sizes": [4, 2, 1]},
    "7 players": {"num_players": 7, "hand_sizes": [7, 1]},
    "hook off": {"hook": False, "hand_sizes": [4, 3]},
    "trump must break": {"lead_trump": "broken", "hand_sizes": [8, 6]},
    "jokers": {"jokers": 2, "hand_sizes": [6, 5]},
    "one joker": {"jokers": 1, "hand_sizes": [6]},
    "full deck": {"num_players": 4, "hand_sizes": [13, 2]},
    "full deck, dealer's card": {"num_players": 4, "hand_sizes": [13, 2], "no_card_trump": "dealer_last"},
    "minus scoring": {"miss_points": -10, "miss_points_per_trick": -2, "hand_sizes": [3, 2, 1]},
    "rotating trump": {"trump": "rotating", "hand_sizes": [2, 2, 2, 2, 2, 2]},
}

FEATURES = (
    "hand trump turned_card turned_card_held_by_dealer phase hand_size tricks_left round_index position "
    "to_act leader bids tricks_won bid_impossible current_trick led_suit last_trick last_trick_winner "
    "played voids trump_broken scores"
).split()


def random_states(rules, seed, games=1):
    """Every state of some random games: yields (game) after each action, the start included."""
    rng = np.random.default_rng(seed)
    for _ in range(games):
        game = BlackoutGame(rules, seed=int(rng.integers(1 << 30)))
        yield game
        while game.phase != "game_over":
            legal = game.legal_actions()
            game.step(legal[int(rng.integers(len(legal)))])
            yield game


@pytest.fixture(params=list(RULE_SETS), ids=list(RULE_SETS))
def rules(request):
    return Rules.resolve(RULE_SETS[request.param])


def block(obs, rules, name):
    spec = next(b for b in observation_layout(rules) if b.name == name)
    return obs[spec.offset : spec.offset + spec.size].reshape(spec.shape)


# ---------------------------------------------------------------- the layout
def test_layout_blocks_are_contiguous_and_cover_the_vector(rules):
    layout = observation_layout(rules)
    assert [b.name for b in layout] == FEATURES
    offset = 0
    for b in layout:
        assert isinstance(b, Block)
        assert b.offset == offset and b.size == int(np.prod(b.shape)) and b.low < b.high
        offset += b.size
    assert offset == observation_size(rules)
    assert list(block_slices(rules)) == FEATURES


def test_layout_sizes_follow_players_cards_and_largest_hand():
    rules = Rules.resolve({"num_players": 5, "jokers": 2, "hand_sizes": [7, 3]})
    shapes = {b.name: b.shape for b in observation_layout(rules)}
    assert shapes["hand"] == (54,) and shapes["bids"] == (5, 9) and shapes["current_trick"] == (5, 54)
    assert shapes["voids"] == (5, 4) and shapes["scores"] == (5,)
    cards = 52 + 52 + 3 * 4 * 52  # hand, turned card; current trick, last trick, played by seat
    small = 5 + 1 + 3 + 3 + 5 + 1  # trump, held by dealer, phase, 3 scalars, led suit, trump broken
    per_seat = 4 * (1 + 1 + 1 + 12 + 1 + 1 + 1 + 4 + 1)  # position .. leader, bids, won, impossible, winner, voids, score
    assert observation_size(Rules()) == cards + small + per_seat == 838


def test_layout_accepts_a_preset_name_and_rejects_unknown_ones():
    assert observation_size("standard") == observation_size(Rules())
    with pytest.raises(ValueError, match="unknown rules preset 'nope'"):
        observation_size("nope")


def test_bounds_arrays_match_the_layout_and_are_read_only():
    low, high = observation_bounds(Rules())
    slices = block_slices(Rules())
    assert low.dtype == np.float32 and low.shape == (observation_size(Rules()),)
    assert (low[slices["scores"]] == -1).all() and (low[slices["hand"]] == 0).all() and (high == 1).all()
    with pytest.raises(ValueError):
        low[0] = 5


def test_score_scale_bounds_every_match_total():
    assert score_scale(Rules()) == sum(10 + h for h in range(10, 0, -1))
    minus = Rules.resolve({"miss_points": -10, "miss_points_per_trick": -3, "hand_sizes": [2]})
    # worst hand of 2 cards: bid 0 take 2 (or bid 2 take 0): -10 - 3 * 2 = -16, beats 10 + 2 = 12
    assert score_scale(minus) == 16


# ---------------------------------------------------------------- the values
def test_every_value_stays_within_its_documented_bounds(rules):
    low, high = observation_bounds(rules)
    for game in random_states(rules, seed=1):
        for seat in range(rules.num_players):
            obs = encode(game.view(seat))
            assert obs.dtype == np.float32 and obs.shape == low.shape
            assert (obs >= low).all() and (obs <= high).all(), game


def test_one_hot_blocks_have_exactly_one_one(rules):
    for game in random_states(rules, seed=2):
        seat = game.current_player if game.current_player is not None else 0
        obs = encode(game.view(seat))
        for name in ("trump", "phase", "position", "leader", "led_suit"):
            assert block(obs, rules, name).sum() == 1, name
        assert (block(obs, rules, "bids").sum(axis=1) == 1).all()
        assert block(obs, rules, "to_act").sum() == (game.phase != "game_over")


def test_rows_are_seat_relative_observer_first_then_clockwise(rules):
    n = rules.num_players
    for game in random_states(rules, seed=3):
        if not game.current_trick:
            continue
        for me in range(n):
            obs = encode(game.view(me))
            trick = block(obs, rules, "current_trick")
            for seat, card in game.current_trick:
                assert trick[(seat - me) % n, card] == 1
            assert trick.sum() == len(game.current_trick)
            assert block(obs, rules, "to_act")[(game.current_player - me) % n] == 1
            assert block(obs, rules, "leader")[(game.leader - me) % n] == 1


def test_hand_block_holds_exactly_the_observers_cards():
    game = BlackoutGame(Rules(), seed=5)
    for seat in range(4):
        hand = block(encode(game.view(seat)), game.rules, "hand")
        assert sorted(np.flatnonzero(hand).tolist()) == game.hands[seat]


def test_bids_show_not_yet_then_the_bid_and_scalars_scale_by_the_largest_hand():
    game = BlackoutGame(Rules(), seed=7)  # first hand: 10 cards, dealer seat 0, seat 1 bids first
    game.bid(3)
    obs = encode(game.view(0))
    bids = block(obs, game.rules, "bids")
    assert bids[1, 1 + 3] == 1  # seat 1 sits one place to seat 0's left
    assert bids[0, 0] == bids[2, 0] == bids[3, 0] == 1
    assert block(obs, game.rules, "position")[3] == 1  # seat 0 deals, so it bids last
    assert block(obs, game.rules, "hand_size")[0] == pytest.approx(1.0)
    assert block(obs, game.rules, "phase").tolist() == [1, 0, 0]


def test_trick_history_blocks_after_a_trick():
    rules = Rules.resolve({"hook": False, "hand_sizes": [3]})
    game = BlackoutGame(rules, seed=11)
    for _ in range(4):
        game.bid(1)
    first = [game.current_player]
    for _ in range(4):
        game.step(game.legal_actions()[0])
    obs = encode(game.view(2))
    last = block(obs, rules, "last_trick")
    for seat, card in game.last_trick:
        assert last[(seat - 2) % 4, card] == 1
        assert block(obs, rules, "played")[(seat - 2) % 4, card] == 1
    assert block(obs, rules, "last_trick_winner")[(game.last_trick_winner - 2) % 4] == 1
    assert block(obs, rules, "current_trick").sum() == 0
    assert block(obs, rules, "led_suit")[4] == 1  # nothing led yet in the new trick
    assert block(obs, rules, "tricks_left")[0] == pytest.approx(2 / 3)
    assert first  # the leader of trick one is recorded by the engine


def test_scores_are_scaled_and_seat_relative():
    rules = Rules.resolve({"hand_sizes": [1, 1], "hook": False})
    game = BlackoutGame(rules, seed=4)
    while game.round_index == 0:
        game.step(game.legal_actions()[0])
    for me in range(4):
        scores = block(encode(game.view(me)), rules, "scores")
        expected = [game.scores[(me + rel) % 4] / score_scale(rules) for rel in range(4)]
        assert scores.tolist() == pytest.approx(expected)


def test_turned_card_and_no_trump_of_the_full_deck_hand():
    full = BlackoutGame(Rules.resolve({"hand_sizes": [13]}), seed=1)
    obs = encode(full.view(0))
    assert block(obs, full.rules, "turned_card").sum() == 0 and block(obs, full.rules, "trump")[4] == 1
    shown = BlackoutGame(Rules.resolve({"hand_sizes": [13], "no_card_trump": "dealer_last"}), seed=1)
    obs = encode(shown.view(1))
    assert block(obs, shown.rules, "turned_card")[shown.turned_card] == 1
    assert block(obs, shown.rules, "turned_card_held_by_dealer")[0] == 1
    assert block(obs, shown.rules, "trump")[shown.trump] == 1


def test_game_over_observation_has_no_seat_to_act():
    game = BlackoutGame(Rules.resolve({"hand_sizes": [1]}), seed=0)
    while game.phase != "game_over":
        game.step(game.legal_actions()[0])
    obs = encode(game.view(0))
    assert block(obs, game.rules, "phase").tolist() == [0, 0, 1]
    assert block(obs, game.rules, "to_act").sum() == 0


def test_encode_into_overwrites_a_buffer_and_checks_it():
    game = BlackoutGame(Rules(), seed=2)
    out = np.full(observation_size(Rules()), 7.0, dtype=np.float32)
    assert encode_into(game.view(1), out) is out
    assert np.array_equal(out, encode(game.view(1)))
    with pytest.raises(ValueError, match="float32 array of shape"):
        encode_into(game.view(1), np.zeros(3, dtype=np.float32))
    with pytest.raises(ValueError, match="float32"):
        encode_into(game.view(1), np.zeros(observation_size(Rules()), dtype=np.float64))


# ---------------------------------------------------------------- the mask
def test_mask_is_int8_and_equals_the_legal_actions(rules):
    for game in random_states(rules, seed=6):
        for seat in range(rules.num_players):
            mask = action_mask(game.view(seat))
            assert mask.dtype == np.int8 and mask.shape == (rules.num_actions,)
            expected = game.legal_actions() if seat == game.current_player else []
            assert np.flatnonzero(mask).tolist() == expected


def test_mask_leaves_out_the_dealers_hooked_bid():
    game = BlackoutGame(Rules.resolve({"hand_sizes": [3]}), seed=0)
    for _ in range(3):
        game.bid(1)
    mask = action_mask(game.view(game.dealer))
    assert mask[52 + 0] == 0 and mask[[52 + 1, 52 + 2, 52 + 3]].tolist() == [1, 1, 1]


# ---------------------------------------------------------------- only the view
def _swap_hidden_cards(game, observer, rng):
    """A game with the same actions where the seats other than ``observer`` hold other cards.

    The unseen cards (other hands and undealt cards) are redealt among the other seats; a redeal
    that makes a past action illegal (a shown void) is drawn again. Returns None when none fits.
    """
    rules, n, r = game.rules, game.num_players, game.round_index
    deck = game.decks[r]
    h = game.hand_size
    dealt = n * h
    turned = deck[dealt] if dealt < len(deck) else None
    shown = deck[dealt - 1] if game.turned_card_held_by_dealer else None  # public: stays the dealer's last card
    hidden = [c for seat in range(n) if seat != observer for c in game.hands[seat] if c != shown]
    hidden += [c for c in deck[dealt:] if c != turned]
    for _ in range(50):
        pool = list(rng.permutation(hidden))
        new_hands = {}
        for seat in range(n):
            if seat == observer:
                new_hands[seat] = list(game.hands[seat])
            else:
                new_hands[seat] = [c if c == shown else pool.pop() for c in game.hands[seat]]
        order = [None] * len(deck)
        for seat in range(n):
            cards = list(game.played[seat]) + new_hands[seat]
            if shown in cards:
                cards.remove(shown)
                cards.append(shown)
            for k, card in enumerate(cards):
                order[(seat - game.dealer - 1) % n + k * n] = card
        rest = ([turned] if turned is not None else []) + pool
        order[dealt:] = rest
        decks = list(game.decks)
        decks[r] = order
        other = BlackoutGame(rules, decks=decks, first_dealer=game.first_dealer)
        try:
            for action in game.actions:
                other.step(action)
        except ValueError:
            continue
        if other.hands != game.hands:
            return other
    return None


@pytest.mark.parametrize("name", ["standard", "5 players", "trump must break", "jokers", "full deck, dealer's card"])
def test_observation_does_not_change_when_other_seats_hidden_cards_are_swapped(name):
    rules = Rules.resolve(RULE_SETS[name])
    rng = np.random.default_rng(8)
    checked = 0
    for game in random_states(rules, seed=9, games=2):
        if game.phase != "play" or len(game.played[0]) > game.hand_size // 2:
            continue
        observer = int(rng.integers(rules.num_players))
        other = _swap_hidden_cards(game, observer, rng)
        if other is None:
            continue
        assert np.array_equal(encode(game.view(observer)), encode(other.view(observer)))
        assert np.array_equal(action_mask(game.view(observer)), action_mask(other.view(observer)))
        checked += 1
    assert checked >= 5


# ---------------------------------------------------------------- the compiled encoder of one game (the AEC env's)
def test_the_aec_env_on_the_compiled_core_observes_and_masks_as_the_engine_after_every_action(rules):
    environment = raw_env(rules=rules)
    rng = np.random.default_rng(12)
    for episode in range(2):
        environment.reset(seed=episode)
        while True:
            game = environment.game  # the episode so far, replayed in a new engine
            for seat, agent in enumerate(environment.possible_agents):
                observation = environment.observe(agent)
                assert np.array_equal(observation["observation"], encode(game.view(seat))), (seat, game.history[-1])
                if not environment.terminations[agent]:
                    assert np.array_equal(observation["action_mask"], action_mask(game.view(seat)))
            if all(environment.terminations.values()):
                break
            legal = np.flatnonzero(environment.observe(environment.agent_selection)["action_mask"])
            environment.step(int(rng.choice(legal)))
        assert game.phase == "game_over"


def test_a_one_hand_episode_shows_the_finished_hand():
    rules = Rules.resolve({"hand_sizes": [2, 1], "no_card_trump": "dealer_last"})
    environment = raw_env(rules=rules, episode="hand")
    environment.reset(seed=5, options={"round": 0})
    while not all(environment.terminations.values()):
        legal = np.flatnonzero(environment.observe(environment.agent_selection)["action_mask"])
        environment.step(int(legal[0]))
    game = environment.game
    assert game.round_index == 1  # the engine dealt on; the observation still shows the finished hand
    obs = environment.observe("player_0")["observation"]
    assert block(obs, rules, "phase").tolist() == [0, 0, 1] and block(obs, rules, "to_act").sum() == 0
    assert block(obs, rules, "hand_size")[0] == 1.0 and block(obs, rules, "tricks_left")[0] == 0.0
    assert block(obs, rules, "scores")[0] == game.scores[0] / score_scale(rules)
    for seat in range(rules.num_players):
        assert np.array_equal(environment.observe(f"player_{seat}")["observation"], encode(environment.view(f"player_{seat}")))
