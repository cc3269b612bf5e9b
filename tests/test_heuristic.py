"""The heuristic bot: exact one-card bidding, expected-score bids under the hook, winning and ducking."""

from itertools import permutations
from math import comb, prod

import numpy as np
import pytest
from blackout_baselines import HeuristicBot
from blackout_baselines.deals import deal_deck
from blackout_baselines.heuristic import card_win_probabilities, one_card_win_probability, trick_distribution

from blackout_env import BlackoutGame, Rules, parse_card
from blackout_env.game.cards import card_to_str


def test_trick_distribution_is_the_poisson_binomial():
    assert trick_distribution([]) == [1.0]
    assert trick_distribution([1.0, 0.0]) == [0.0, 1.0, 0.0]
    p = 0.3
    assert np.allclose(trick_distribution([p] * 5), [comb(5, t) * p**t * (1 - p) ** (5 - t) for t in range(6)])
    mixed = trick_distribution([0.2, 0.5, 0.9])
    assert sum(mixed) == pytest.approx(1.0)
    assert mixed[3] == pytest.approx(0.2 * 0.5 * 0.9) and mixed[0] == pytest.approx(0.8 * 0.5 * 0.1)


def first_bidder_one_card_game(players: int, card: int, trump_suit: int, rules: Rules) -> BlackoutGame:
    """A one-card hand where seat 1 (first to bid, dealer 0) holds ``card`` and trump is ``trump_suit``."""
    turned = next(c for c in range(trump_suit * 13, trump_suit * 13 + 13) if c != card)
    others = iter(c for c in range(52) if c not in (card, turned))
    hands = [[next(others)] for _ in range(players)]
    hands[1] = [card]
    return BlackoutGame(rules, decks=[deal_deck(rules, 0, hands, turned_card=turned)], first_dealer=0)


def beaters(card: int, trump: int, turned: int) -> int:
    """Unseen cards that beat ``card`` when led: higher cards of its suit, and trumps when it is not one."""
    suit, rank = divmod(card, 13)
    higher = [c for c in range(suit * 13 + rank + 1, suit * 13 + 13)]
    trumps = [] if suit == trump else list(range(trump * 13, trump * 13 + 13))
    return len([c for c in higher + trumps if c != turned])


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("preset", ["standard", "minus-scoring", "per-trick"])
def test_first_bidder_in_a_one_card_hand_bids_exactly_by_the_win_probability(players, preset):
    rules = Rules.preset(preset).replace(num_players=players, hand_sizes=[1])
    bot = HeuristicBot()
    for trump in range(4):
        for card in range(52):
            game = first_bidder_one_card_game(players, card, trump, rules)
            view = game.view(1)
            assert view.position == 0 and game.trump == trump
            k = beaters(card, trump, game.turned_card)
            chance = prod((50 - k - j) / (50 - j) for j in range(players - 1))
            assert one_card_win_probability(view, card) == pytest.approx(chance, abs=1e-12)
            ev1 = chance * rules.hand_score(1, 1) + (1 - chance) * rules.hand_score(1, 0)
            ev0 = chance * rules.hand_score(0, 1) + (1 - chance) * rules.hand_score(0, 0)
            expected_bid = 1 if ev1 > ev0 + 1e-12 else 0
            assert bot.act(view) == rules.num_cards + expected_bid, (card_to_str(card), trump, chance)
            if preset == "standard":  # 10 + bid: bid 1 exactly when the chance exceeds 10/21
                assert expected_bid == (chance > 10 / 21)


def enumerated_win_chance(game: BlackoutGame, seat: int, card: int) -> float:
    """The chance that ``seat``'s ``card`` wins a one-card hand, by enumerating every deal of the unseen cards."""
    n = game.num_players
    unseen = [c for c in range(game.rules.deck_size) if c not in (card, game.turned_card)]
    others = [(game.leader + i) % n for i in range(n) if (game.leader + i) % n != seat]
    wins = total = 0
    for cards in permutations(unseen, n - 1):
        held = dict(zip(others, cards))
        held[seat] = card
        trick = [(s, held[s]) for s in ((game.leader + i) % n for i in range(n))]
        wins += game.trick_winner(trick) == seat
        total += 1
    return wins / total


@pytest.mark.parametrize(
    ("players", "jokers", "cards"),
    [
        (3, 0, range(0, 52)),
        (3, 1, range(0, 54, 2)),
        (3, 2, range(1, 54, 2)),
        (4, 2, (parse_card("QS"), parse_card("5D"), 53)),
    ],
)
def test_one_card_bids_are_exact_at_every_bidding_position_with_and_without_jokers(players, jokers, cards):
    rules = Rules(num_players=players, hand_sizes=[1], jokers=jokers)
    bot = HeuristicBot()
    turned = parse_card("2S")  # spades are trump
    for position in range(players):
        seat = (1 + position) % players  # dealer 0: seat 1 bids first, the dealer last
        for card in cards:
            if card == turned:
                continue
            rest = iter(c for c in range(rules.deck_size) if c not in (card, turned))
            hands = [[card] if s == seat else [next(rest)] for s in range(players)]
            game = BlackoutGame(rules, decks=[deal_deck(rules, 0, hands, turned_card=turned)], first_dealer=0)
            for _ in range(position):
                game.bid(0)
            view = game.view(seat)
            assert view.is_my_turn and view.position == position
            chance = enumerated_win_chance(game, seat, card)
            assert one_card_win_probability(view, card) == pytest.approx(chance, abs=1e-12), (position, card)
            values = [chance * rules.hand_score(bid, 1) + (1 - chance) * rules.hand_score(bid, 0) for bid in (0, 1)]
            permitted = [bid for bid in (0, 1) if bid != game.forbidden_bid]
            expected_bid = max(permitted, key=lambda bid: (values[bid] - 1e-12 * bid))
            assert bot.act(view) == rules.num_cards + expected_bid, (position, card_to_str(card), chance)


def test_one_card_chance_of_later_seats_averages_over_the_lead():
    # No trump: the dealer's ace of spades, played last, wins exactly when the leader leads a spade.
    rules = Rules(num_players=3, hand_sizes=[1], trump="none")
    game = BlackoutGame(rules, decks=[deal_deck(rules, 0, [[parse_card("AS")], [0], [1]])], first_dealer=0)
    view = game.view(0)  # the dealer plays last
    # 51 unseen cards, 12 of them spades; the middle seat's card cannot matter.
    assert one_card_win_probability(view, parse_card("AS")) == pytest.approx(12 / 51)


def test_one_card_chance_during_the_trick_uses_the_cards_played():
    rules = Rules(num_players=3, hand_sizes=[1])
    hands = [[parse_card("KH")], [parse_card("QH")], [parse_card("2C")]]
    game = BlackoutGame(rules, decks=[deal_deck(rules, 0, hands, turned_card=parse_card("3S"))], first_dealer=0)
    for _ in range(3):
        game.bid(0)
    game.play("QH")  # seat 1 leads
    view = game.view(2)
    assert card_win_probabilities(view)[parse_card("2C")] == 0.0
    game.play("2C")
    view = game.view(0)  # the dealer's king beats the queen; nobody plays after it
    assert card_win_probabilities(view)[parse_card("KH")] == 1.0


def test_bid_maximises_expected_score_and_respects_the_hook():
    bot = HeuristicBot()
    checked_hook = 0
    for seed in range(60):
        game = BlackoutGame(Rules(hand_sizes=[6]), seed=seed)
        while game.phase == "bid":
            view = game.view(game.current_player)
            values = bot.bid_values(view)
            permitted = [a - game.num_cards for a in view.legal_actions]
            bid = bot.act(view) - game.num_cards
            assert bid in permitted
            assert values[bid] == pytest.approx(max(values[b] for b in permitted))
            best_overall = max(range(len(values)), key=lambda b: (values[b], -b))
            if view.forbidden_bid is not None and best_overall == view.forbidden_bid:
                checked_hook += 1
                assert bid != best_overall
            game.step(game.num_cards + bid)
    assert checked_hook > 0


def test_suggest_bid_gives_a_hint_before_the_players_turn_and_refuses_during_play():
    game = BlackoutGame(Rules(hand_sizes=[8]), seed=4)
    dealer_view = game.view(game.dealer)
    assert not dealer_view.is_my_turn
    bot = HeuristicBot()
    values = bot.bid_values(dealer_view)
    assert bot.suggest_bid(dealer_view) == max(range(9), key=lambda bid: (values[bid], -bid))
    for _ in range(4):
        game.step(game.legal_actions()[0])
    with pytest.raises(ValueError, match="'play' phase, not bidding"):
        HeuristicBot().suggest_bid(game.view(game.current_player))


def test_a_dealer_whose_turn_has_not_come_is_hinted_the_best_bid_since_none_is_forbidden_yet():
    # One card each; the dealer (seat 0) holds the ace of spades and spades are trump: it takes the trick.
    rules = Rules(num_players=4, hand_sizes=[1])
    hands = [[parse_card("AS")], [parse_card("3H")], [parse_card("4D")], [parse_card("5C")]]
    game = BlackoutGame(rules, decks=[deal_deck(rules, 0, hands, turned_card=parse_card("2S"))], first_dealer=0)
    dealer_view = game.view(0)
    assert game.current_player == 1 and dealer_view.forbidden_bid is None
    bot = HeuristicBot()
    assert bot.bid_values(dealer_view)[1] == 11
    assert bot.suggest_bid(dealer_view) == 1
    # Once the others have bid 0, 0, 0 the hook forbids 1 on the dealer's turn: the hint follows the engine.
    for _ in range(3):
        game.bid(0)
    dealer_view = game.view(0)
    assert dealer_view.forbidden_bid == game.forbidden_bid == 1
    assert bot.suggest_bid(dealer_view) == 0 == bot.act(dealer_view) - 52


def test_stronger_hands_bid_more_tricks():
    rules = Rules(num_players=4, hand_sizes=[5])
    # Seat 1 (first to bid) holds the top trumps, or small side cards; spades are trump.
    strong = [parse_card(c) for c in ("AS", "KS", "QS", "AH", "AD")]
    weak = [parse_card(c) for c in ("2H", "3H", "2D", "3D", "4C")]
    bids = []
    for mine in (strong, weak):
        rest = iter(c for c in range(52) if c not in mine and c != parse_card("2S"))
        hands = [[next(rest) for _ in range(5)] for _ in range(4)]
        hands[1] = mine
        game = BlackoutGame(rules, decks=[deal_deck(rules, 0, hands, turned_card=parse_card("2S"))], first_dealer=0)
        bids.append(HeuristicBot().act(game.view(1)) - 52)
    assert bids[0] >= 4 and bids[1] == 0


def trick_position(hands: dict[int, str], bids: list[int], lead: list[str], trump_card: str = "2S") -> BlackoutGame:
    """A 4-player, 3-card hand (dealer 0, seat 1 leads): bids in seat order 1, 2, 3, 0, then ``lead`` played."""
    rules = Rules(num_players=4, hand_sizes=[3])
    cards = {seat: [parse_card(c) for c in text.split()] for seat, text in hands.items()}
    used = {c for hand in cards.values() for c in hand} | {parse_card(trump_card)}
    rest = iter(c for c in range(52) if c not in used)
    full = [cards.get(seat) or [next(rest) for _ in range(3)] for seat in range(4)]
    game = BlackoutGame(rules, decks=[deal_deck(rules, 0, full, turned_card=parse_card(trump_card))], first_dealer=0)
    for bid in bids:
        game.bid(bid)
    for card in lead:
        game.play(card)
    return game


def test_when_still_needing_a_trick_the_last_player_wins_as_cheaply_as_possible():
    # Needing two tricks with the queen and ace: the queen takes this one, the ace a later one.
    game = trick_position({1: "10H 5C 6C", 2: "2H 7C 8C", 3: "3H 9C 10C", 0: "QH AH 2C"}, [0, 0, 0, 2], ["10H", "2H", "3H"])
    assert game.current_player == 0 and game.bids[0] == 2
    assert HeuristicBot().act(game.view(0)) == parse_card("QH")


def test_once_the_bid_is_made_the_player_ducks_with_the_highest_card_that_loses():
    game = trick_position({1: "10H 5C 6C", 2: "2H 7C 8C", 3: "3H 9C 10C", 0: "4H 9H KH"}, [1, 1, 0, 0], ["10H", "2H", "3H"])
    assert game.bids[0] == 0
    assert HeuristicBot().act(game.view(0)) == parse_card("9H")


def test_a_void_player_who_wants_no_trick_sheds_its_dangerous_high_card():
    game = trick_position({1: "10H 5C 6C", 2: "2H 7C 8C", 3: "3H 9C 10C", 0: "AD 3D 2C"}, [1, 1, 0, 0], ["10H", "2H", "3H"])
    assert HeuristicBot().act(game.view(0)) == parse_card("AD")


def test_a_player_needing_tricks_leads_an_established_winner():
    game = trick_position({1: "AS AH 5C", 2: "2H 7C 8C", 3: "3H 9C 10C", 0: "4H 9H KH"}, [2, 0, 0, 0], [])
    assert game.current_player == 1
    assert HeuristicBot().act(game.view(1)) in (parse_card("AS"), parse_card("AH"))


def test_the_heuristic_beats_random_play():
    from blackout_baselines import RandomBot

    rules = Rules(num_players=4, hand_sizes=[5, 3, 1])
    totals = np.zeros(2)
    for seed in range(6):
        for rotation in range(2):  # the same deals with the seats swapped
            bots = [HeuristicBot() if (seat + rotation) % 2 == 0 else RandomBot(seed) for seat in range(4)]
            game = BlackoutGame(rules, seed=seed)
            while not game.is_over:
                seat = game.current_player
                game.step(bots[seat].act(game.view(seat)))
            for seat in range(4):
                totals[(seat + rotation) % 2] += game.scores[seat]
    assert totals[0] > 1.5 * totals[1]
