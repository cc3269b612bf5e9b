"""Property tests: random rules, random legal play, and the engine checked against a reference.

The reference functions below are written independently of the engine (from
the rules text), so a shared mistake is unlikely: who gets which card, which
cards are legal, who wins a trick, what a hand scores.
"""

import random

import pytest
from game_helpers import snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rule_strategies import any_rules, full_deck_rules

from blackout_env import BlackoutGame, IllegalActionError
from blackout_env.game.rules import ROTATING_TRUMPS

JOKER = 52
PROPERTY_SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


seeds = st.integers(0, 2**32 - 1)


# ------------------------------------------------------------------ reference
def suit(card):
    return None if card >= JOKER else card // 13


def is_trump(card, trump):
    return trump is not None and card < JOKER and card // 13 == trump


def reference_deal(rules, deck, dealer, hand_size):
    """Hands (as sets) and trump by the dealing protocol and the trump rules."""
    n = rules.num_players
    hands = [set() for _ in range(n)]
    for k in range(n * hand_size):
        hands[(dealer + 1 + k) % n].add(deck[k])
    turned = None
    if rules.trump == "turned":
        if n * hand_size < len(deck):
            turned = deck[n * hand_size]
        elif rules.no_card_trump == "dealer_last":
            turned = deck[n * hand_size - 1]
        trump = None if turned is None else suit(turned)
    elif rules.trump == "none":
        trump = None
    else:
        trump = None  # set by the caller from the round index
    return hands, turned, trump


def reference_legal_plays(hand, trick, trump, must_break, broken):
    jokers = [c for c in hand if c >= JOKER]
    if trick:
        led = next((suit(c) for _, c in trick if c < JOKER), None)
        if led is None:
            return sorted(hand)
        following = [c for c in hand if suit(c) == led]
        return sorted(following + jokers) if following else sorted(hand)
    if must_break and trump is not None and not broken:
        others = [c for c in hand if c < JOKER and suit(c) != trump]
        if others:
            return sorted(others + jokers)
    return sorted(hand)


def reference_winner(trick, trump):
    for seat, card in trick:
        if card >= JOKER:
            return seat
    led = suit(trick[0][1])
    trumps = [(card, seat) for seat, card in trick if is_trump(card, trump)]
    if trumps:
        return max(trumps)[1]
    return max((card, seat) for seat, card in trick if suit(card) == led)[1]


def reference_score(rules, bid, taken):
    points = rules.points_per_trick * taken
    if bid == taken:
        return points + rules.exact_bonus + rules.points_per_bid * bid
    return points + rules.miss_points + rules.miss_points_per_trick * abs(bid - taken)


# -------------------------------------------------------- checked random play
def play_checked(game, rng):
    """Play random legal actions to the end, checking every step against the reference."""
    rules = game.rules
    n = rules.num_players
    totals = [0] * n
    round_index = None
    while not game.is_over:
        if game.round_index != round_index:
            # A new deal: check it against the dealing protocol.
            round_index = game.round_index
            dealer = (game.first_dealer + round_index) % n
            hand_size = rules.hand_sizes[round_index]
            dealt, turned, trump = reference_deal(rules, game.decks[round_index], dealer, hand_size)
            if rules.trump == "rotating":
                trump = ROTATING_TRUMPS[round_index % 5]
            assert game.dealer == dealer and game.hand_size == hand_size
            assert game.turned_card == turned and game.trump == trump
            assert [set(h) for h in game.hands] == dealt
            assert game.phase == "bid" and game.current_player == (dealer + 1) % n
            bids = []
            voids = [set() for _ in range(n)]
            trumps_played = False
            leader = (dealer + 1) % n
            tricks = [0] * n
        player = game.current_player
        legal = game.legal_actions()
        if game.phase == "bid":
            assert player == (dealer + 1 + len(bids)) % n
            allowed = list(range(hand_size + 1))
            if rules.hook and len(bids) == n - 1 and 0 <= hand_size - sum(bids):
                allowed.remove(hand_size - sum(bids))
            assert legal == [game.num_cards + k for k in allowed]
            action = rng.choice(legal)
            game.step(action)
            bids.append(action - game.num_cards)
            assert game.bids[player] == bids[-1]
            if len(bids) == n:
                if rules.hook:
                    assert sum(bids) != hand_size  # the hook: somebody must miss
                bids = bids[n - 1 - dealer :] + bids[: n - 1 - dealer]  # bidding order -> seat order
                assert game.bids == bids and game.phase == "play"
            continue
        trick = list(game.current_trick)
        assert player == (leader + len(trick)) % n
        expected = reference_legal_plays(game.hands[player], trick, trump, rules.lead_trump == "broken", trumps_played)
        assert legal == expected
        card = rng.choice(legal)
        # What the play reveals: not following the led suit shows a void; leading unbroken
        # trump under "trump must break" shows the leader holds nothing but trump.
        led = next((suit(c) for _, c in trick if c < JOKER), None)
        if led is not None and card < JOKER and suit(card) != led:
            voids[player].add(led)
        if not trick and rules.lead_trump == "broken" and not trumps_played and is_trump(card, trump):
            voids[player].update({0, 1, 2, 3} - {trump})
        game.step(card)
        if not game.is_over and game.round_index == round_index:
            assert [set(v) for v in game.voids] == voids
            assert game.trump_broken == (trumps_played or any(is_trump(c, trump) for _, c in trick + [(player, card)]))
            view = game.view(player)
            assert view.hand == tuple(game.hands[player]) and view.voids == tuple(map(frozenset, voids))
            assert view.bid_impossible == tuple(
                won > bid or won + (hand_size - sum(game.tricks_won)) < bid for bid, won in zip(bids, game.tricks_won)
            )
        # Card conservation: each seat's cards in hand plus played are exactly its deal.
        if not game.is_over and game.round_index == round_index:
            for seat in range(n):
                held, played = set(game.hands[seat]), set(game.played[seat])
                assert not held & played and held | played == dealt[seat]
                assert len(game.hands[seat]) + len(game.played[seat]) == hand_size
        trick.append((player, card))
        if len(trick) < n:
            continue
        # A full trick: one card from each seat, clockwise from the leader; the right winner.
        assert [seat for seat, _ in trick] == [(leader + i) % n for i in range(n)]
        winner = reference_winner(trick, trump)
        event = next(e for e in reversed(game.history) if e[0] == "trick")
        assert event == ("trick", winner, tuple(trick))
        tricks[winner] += 1
        trumps_played = trumps_played or any(is_trump(c, trump) for _, c in trick)
        leader = winner
        if sum(tricks) == hand_size:
            # The hand is over: tricks sum to the hand size, and scores follow the formula.
            scores = [reference_score(rules, b, t) for b, t in zip(bids, tricks)]
            totals = [a + b for a, b in zip(totals, scores)]
            assert game.round_scores[-1] == scores and game.round_bids[-1] == bids
            assert game.round_tricks[-1] == tricks and game.scores == totals
        else:
            assert game.current_player == winner and game.tricks_won == tricks
            assert game.trick_winner(trick) == winner
    best = max(totals)
    assert game.winners() == [seat for seat in range(n) if totals[seat] == best]
    assert game.legal_actions() == []


@settings(PROPERTY_SETTINGS, max_examples=100)
@given(rules=any_rules(), seed=seeds)
def test_random_play_follows_the_rules(rules, seed):
    rng = random.Random(seed)
    play_checked(BlackoutGame(rules, seed=seed), rng)


@settings(PROPERTY_SETTINGS, max_examples=60)
@given(rules=full_deck_rules(), seed=seeds)
def test_random_play_with_the_whole_deck_dealt_follows_the_rules(rules, seed):
    rng = random.Random(seed)
    play_checked(BlackoutGame(rules, seed=seed), rng)


# ------------------------------------------------------------ saves and errors
@PROPERTY_SETTINGS
@given(rules=any_rules(), seed=seeds, stops=st.lists(st.floats(0, 1), min_size=1, max_size=3))
def test_save_and_load_at_any_point_plays_on_identically(rules, seed, stops):
    rng = random.Random(seed)
    game = BlackoutGame(rules, seed=seed)
    total = sum(rules.hand_sizes) * (rules.num_players + 1)
    points = sorted(int(s * total) for s in stops)
    step = 0
    while True:
        while points and points[0] <= step:
            points.pop(0)
            loaded = BlackoutGame.from_json(game.to_json())
            assert loaded == game and snapshot(loaded) == snapshot(game)
            # Both copies play on identically.
            twin_rng = random.Random(seed + step)
            mirror_rng = random.Random(seed + step)
            twin, mirror = loaded, game.clone()
            while not twin.is_over:
                twin.step(twin_rng.choice(twin.legal_actions()))
                mirror.step(mirror_rng.choice(mirror.legal_actions()))
                assert twin.current_player == mirror.current_player
            assert snapshot(twin) == snapshot(mirror)
        if game.is_over:
            break
        game.step(rng.choice(game.legal_actions()))
        step += 1


@PROPERTY_SETTINGS
@given(rules=any_rules(), seed=seeds)
def test_an_illegal_action_leaves_the_state_identical(rules, seed):
    rng = random.Random(seed)
    game = BlackoutGame(rules, seed=seed)
    tries = 0
    while not game.is_over:
        legal = game.legal_actions()
        illegal = [a for a in range(-1, rules.num_actions + 1) if a not in legal]
        if tries == 0 or rng.random() < 0.2:  # at least one try per game, then about every fifth step
            action = rng.choice(illegal)
            before = snapshot(game)
            try:
                game.step(action)
            except IllegalActionError as error:
                message = str(error)
                assert f"player {game.current_player}" in message and "legal:" in message
            else:
                raise AssertionError(f"illegal action {action} was accepted")
            assert snapshot(game) == before
            tries += 1
        game.step(rng.choice(legal))
    assert tries > 0
    before = snapshot(game)
    with pytest.raises(IllegalActionError):
        game.step(0)
    assert snapshot(game) == before


# ------------------------------------------------------------------- no leaks
def hidden_positions(game, observer):
    """Positions in this round's deck whose card the observer cannot see, and their holders."""
    rules, n, h = game.rules, game.num_players, game.hand_size
    deck = game.decks[game.round_index]
    played = {c for cards in game.played for c in cards}
    positions = []
    for k, card in enumerate(deck):
        if k < n * h:
            seat = (game.dealer + 1 + k) % n
            if seat == observer or card in played:
                continue
            if game.turned_card_held_by_dealer and card == game.turned_card:
                continue  # shown to everyone
            positions.append((k, seat))
        elif k == n * h and rules.trump == "turned":
            continue  # the turned card is face up
        else:
            positions.append((k, None))  # undealt
    return positions


@PROPERTY_SETTINGS
@given(rules=any_rules(), seed=seeds, stop=st.floats(0, 1), observer_pick=st.integers(0, 6))
def test_a_view_is_the_same_whatever_other_players_hold(rules, seed, stop, observer_pick):
    rng = random.Random(seed)
    game = BlackoutGame(rules, seed=seed)
    total = sum(rules.hand_sizes) * (rules.num_players + 1)
    for _ in range(int(stop * total)):
        if game.is_over:
            break
        game.step(rng.choice(game.legal_actions()))
    if game.is_over:
        return
    observer = observer_pick % rules.num_players
    # Swap hidden cards between other seats (and the undealt rest), keeping every revealed void true.
    deck = list(game.decks[game.round_index])
    positions = hidden_positions(game, observer)
    for _ in range(4 * len(positions)):
        (i, a), (j, b) = rng.choice(positions), rng.choice(positions)
        fits_b = b is None or suit(deck[i]) not in game.voids[b]
        fits_a = a is None or suit(deck[j]) not in game.voids[a]
        if fits_a and fits_b:
            deck[i], deck[j] = deck[j], deck[i]
    decks = list(game.decks)
    decks[game.round_index] = deck
    other = BlackoutGame(rules, decks=decks, first_dealer=game.first_dealer, start_round=game.start_round)
    for action in game.actions:
        other.step(action)  # the same public play is legal with the other holdings
    assert other.view(observer) == game.view(observer)
    assert other.legal_actions() == game.legal_actions() or other.current_player != observer
