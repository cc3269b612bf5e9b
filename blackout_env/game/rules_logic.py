"""The rule facts of play, each defined once: a plain function per fact.

Every part of the project that needs one of these facts calls the function
here, or (the batched engine, the card features of the policy network) builds
its lookup table by evaluating the function on every input. So "where is the
hook enforced?" has one answer, and a change of rule is made in one place.

Where each fact lives, and who uses it
--------------------------------------
=========================  ===============================================================
fact                       function; used by
=========================  ===============================================================
who deals                  :func:`dealer_of_round`; ``BlackoutGame``, the AEC env's deal, the
                           batched engine (the compiled ``deal`` kernel mirrors it)
dealing order              :func:`dealt_to`, :func:`dealt_hands`; ``BlackoutGame``,
                           ``deck_order`` (which inverts it), the batched ``deal_seat`` table
                           (the compiled deal of the batched engine and the AEC env)
the turned card            :func:`turned_card` (``dealer_last`` included); ``BlackoutGame``,
                           the batched ``turned_position`` / ``turned_held`` tables (the
                           compiled deal of the batched engine and the AEC env)
who bids first and leads   :func:`first_to_act`; ``BlackoutGame``, the batched
                           ``first_to_act`` table (the batched engine and the AEC env)
the bid range              :func:`bid_range`; ``BlackoutGame.legal_actions`` and ``.bid``,
                           :func:`illegal_action_reason`, the IS-MCTS simulator's legal bids;
                           compiled as the batched kernels' ``bid_range`` (masks, checks, bids)
decisions per match        :func:`decisions_per_hand`; ``Rules.decisions_per_match`` (the
                           batched engine's action record, training's rollout lengths)
dealer's hook              :func:`forbidden_bid`; ``BlackoutGame.legal_actions`` and
                           ``.forbidden_bid``, ``PlayerView.forbidden_bid``,
                           ``HeuristicBot.suggest_bid``, the batched engine's
                           ``forbidden_bid`` table (the play front-end reads the view's)
bid out of reach ("b/o")   :func:`bid_out_of_reach`; ``PlayerView.bid_impossible`` (so the
                           encoder and the renderers), the compiled encoder's
                           ``impossible`` table
follow suit / leading      :func:`playable_cards`; ``BlackoutGame.legal_actions``, the
trump                      search bot's playouts; :func:`playable_bits`, the same rule on
                           bitsets, compiled in the batched kernels' ``legal_game`` (which
                           the IS-MCTS simulator runs too)
the led suit               :func:`suit_led_after`, :func:`led_suit_of`; the engine, the
                           heuristic and search bots, the batched ``led_after`` table (the
                           AEC env and the IS-MCTS simulator run the batched step)
trick power, trick winner  :func:`card_power`, :func:`trick_winner`; the engine, the
                           heuristic and search bots, the batched ``power`` table, the
                           ``power`` table of the policy's card features; the tie-break (of
                           equal powers the first played wins) is :func:`trick_winner`'s,
                           which the batched ``trick_key_low`` table asks (the kernels'
                           ``trick_best``: the batched step, the IS-MCTS greedy playout)
trump cards, trump broken  :func:`is_trump`; the engine (through :func:`card_facts`), the
                           AEC env's last view of a hand, the play front-end, the batched
                           ``is_trump`` table
voids shown by a card      :func:`voids_shown`; the engine (through :func:`card_facts` when
                           following), the AEC env's last view of a hand, the batched
                           ``voids_shown`` table
illegal actions, why       :func:`illegal_action_reason`; the engine's error messages, the
                           play front-end's explanations (each in its own words)
reward modes               :func:`seat_rewards`, :data:`REWARDS`; the AEC env, the batched
                           engine, training's zero-sum credit (``returns.hand_rewards``)
who wins the match         :func:`match_winners` (``BlackoutGame.winners``) and, from it for
                           one game, :func:`win_shares`: the "win" reward, the evaluation's
                           match win rate
places at a match's end    :func:`match_places`; the ladder's ratings (ties share a place)
hand score                 ``Rules.hand_score`` (with the options it reads)
=========================  ===============================================================

Cards are ints (see :mod:`blackout_env.game.cards`): suit ``card // 13``, jokers 52
and 53 have no suit. Suits, trump and the led suit are 0..3 or None. (The
engine calls these functions at every action, so they compare ``card // 13``
directly where :func:`~blackout_env.game.cards.suit_of` would cost a call: for a
joker it is 4, which equals no suit.)
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .._checks import check_choice
from .cards import NUM_STANDARD_CARDS, suit_of

if TYPE_CHECKING:  # the view imports this module
    from .view import PlayerView

__all__ = [
    "CANNOT_WIN",
    "ILLEGAL_REASONS",
    "JOKER_POWER",
    "REWARDS",
    "TRUMP_POWER",
    "bid_out_of_reach",
    "bid_range",
    "card_facts",
    "card_power",
    "card_powers",
    "dealer_of_round",
    "dealt_hands",
    "dealt_to",
    "decisions_per_hand",
    "first_to_act",
    "forbidden_bid",
    "illegal_action_reason",
    "is_trump",
    "led_suit_of",
    "match_places",
    "match_winners",
    "playable_bits",
    "playable_cards",
    "seat_rewards",
    "suit_led_after",
    "trick_winner",
    "turned_card",
    "voids_shown",
    "win_shares",
]

# ------------------------------------------------------------------- dealing


def dealer_of_round(first_dealer: Any, round_index: Any, num_players: int) -> Any:
    """The dealer of hand ``round_index``: the deal passes one seat to the left each hand.

    Works on ints and on numpy arrays alike; a negative ``round_index`` counts back, so the
    first dealer of a match whose hand ``r`` is dealt by ``d`` is ``dealer_of_round(d, -r, n)``.
    """
    return (first_dealer + round_index) % num_players


def dealt_to(position: Any, dealer: Any, num_players: int) -> Any:
    """The seat that gets card ``position`` of the deck (``position < num_players * hand_size``).

    The dealing protocol: the dealer deals one card at a time, clockwise, starting
    with the player to the left, so card ``d[k]`` goes to seat ``(dealer + 1 + k) % n``.
    Works on ints and on numpy arrays alike.
    """
    return (dealer + 1 + position) % num_players


def dealt_hands(deck: Sequence[int], dealer: int, num_players: int, hand_size: int) -> list[list[int]]:
    """Every seat's hand (ascending) dealt from ``deck`` by :func:`dealt_to`: ``num_players * hand_size`` cards."""
    dealt = num_players * hand_size
    # Seat p gets every n-th card, starting at its distance from the dealer: dealt_to(k) == p.
    return [sorted(deck[(seat - dealer - 1) % num_players : dealt : num_players]) for seat in range(num_players)]


def turned_card(
    deck: Sequence[int], num_players: int, hand_size: int, trump_mode: str, no_card_trump: str
) -> tuple[int | None, bool]:
    """The card turned up to name trump after the deal, and whether the dealer holds it: ``(card, held_by_dealer)``.

    Only under ``trump_mode == "turned"`` is a card turned: the first card after
    the dealt ones, ``d[n * h]``. When every card is dealt, ``no_card_trump``
    decides: ``"dealer_last"`` shows the dealer's last dealt card, ``d[n * h - 1]``
    (it stays in the dealer's hand), ``"no_trump"`` turns nothing. ``(None, False)``
    when no card is turned. (A turned joker names no trump.)
    """
    if trump_mode != "turned":
        return None, False
    dealt = num_players * hand_size
    if dealt < len(deck):
        return deck[dealt], False
    if no_card_trump == "dealer_last":
        return deck[dealt - 1], True
    return None, False


def first_to_act(dealer: Any, num_players: int) -> Any:
    """The seat that bids first and leads the first trick of a hand: the dealer's left (so the dealer bids last).

    Works on ints and on numpy arrays alike.
    """
    return (dealer + 1) % num_players


def decisions_per_hand(num_players: int, hand_size: int) -> int:
    """The actions of one hand: every seat bids once, then plays each of its ``hand_size`` cards."""
    return num_players * (1 + hand_size)


# ------------------------------------------------------------------- bidding


def bid_range(hand_size: int) -> range:
    """The bids a seat may name in a hand of ``hand_size`` cards: 0 up to every trick, ``range(hand_size + 1)``.

    (The dealer's hook may take one of them away: :func:`forbidden_bid`.)
    """
    return range(hand_size + 1)


def forbidden_bid(hand_size: int, others_total: int, *, hook: bool) -> int | None:
    """The bid the dealer's hook forbids the dealer, or None when no bid is forbidden.

    The rule: the dealer bids last and, under the hook (``hook=True``), may not
    make the bids add up to the number of tricks in the hand, so that at least
    one player must miss. With ``others_total`` the sum of the other players'
    bids, the forbidden bid is ``hand_size - others_total``; when the others
    already bid more than ``hand_size`` tricks, no bid of the dealer can make the
    total and nothing is forbidden. Without the hook nothing is forbidden.
    """
    if not hook:
        return None
    forbidden = hand_size - others_total
    return forbidden if forbidden >= 0 else None


def bid_out_of_reach(bid: Any, tricks_won: Any, tricks_left: Any) -> Any:
    """Whether a bid can no longer be made this hand ("b/o", bust).

    It cannot when the seat has taken more tricks than it bid, or when fewer
    tricks remain (the current one included) than it still needs. Works on ints
    and, elementwise, on numpy arrays.
    """
    return (tricks_won > bid) | (tricks_won + tricks_left < bid)


# ---------------------------------------------------------------------- play


def is_trump(card: int, trump: int | None) -> bool:
    """Whether ``card`` is a trump: a card of the trump suit (jokers have no suit; no trump, no trumps).

    Playing a trump breaks trump for the rest of the hand.
    """
    return trump is not None and card // 13 == trump


def suit_led_after(led_suit: int | None, card: int) -> int | None:
    """The led suit of a trick once ``card`` is played to it (``led_suit``: before it; None when none yet).

    The first card of a trick that is not a joker names the led suit: a led joker
    names none, the next card does.
    """
    if led_suit is not None:
        return led_suit
    return suit_of(card)


def led_suit_of(cards: Iterable[int]) -> int | None:
    """The led suit of a trick of ``cards`` in the order played: the suit of its first card that is not a joker."""
    for card in cards:
        if card < NUM_STANDARD_CARDS:
            return card // 13
    return None


def playable_cards(
    hand: Sequence[int],
    led_suit: int | None,
    trump: int | None,
    *,
    leads: bool,
    trump_broken: bool,
    must_break: bool,
) -> list[int]:
    """The cards of ``hand`` (ascending, as the engine keeps hands) that may be played now, ascending.

    Following (``leads=False``): a player who holds a card of the led suit must
    play one; a joker may be played to any trick; a player with no card of the
    led suit, or after a led joker when no suit is led yet, may play anything.

    Leading (``leads=True``): anything, except under "trump must break"
    (``must_break``), where trump may not be led before a trump has been played
    to the hand (``trump_broken``) unless the leader holds nothing but trump
    (jokers do not count).
    """
    if not leads:
        if led_suit is None:
            return list(hand)
        # A suit is one slice of the ascending hand, and the jokers (52, 53) are its tail.
        low = bisect_left(hand, led_suit * 13)
        high = bisect_left(hand, led_suit * 13 + 13, low)
        if low == high:
            return list(hand)
        if hand[-1] < NUM_STANDARD_CARDS:  # no joker in hand: the suit's slice, a new list
            follow = hand[low:high]
            return follow if follow.__class__ is list else list(follow)
        return [*hand[low:high], *hand[bisect_left(hand, NUM_STANDARD_CARDS, high) :]]
    if must_break and trump is not None and not trump_broken:
        others = [card for card in hand if card // 13 != trump]
        if any(card < NUM_STANDARD_CARDS for card in others):
            return others
    return list(hand)


def playable_bits(leads, hand, follow_bits, break_bits, joker_bits, standard_bits):
    """:func:`playable_cards` on bitsets (bit ``c`` stands for card ``c``): the one copy the fast paths share.

    ``follow_bits``: the cards of the led suit (0 while leading, or when no suit is
    led yet); ``break_bits``: the trump suit's cards while trump may not be led
    (trump must break and is not broken), else 0; ``joker_bits`` and
    ``standard_bits``: the jokers and the 52 standard cards. Written with bit
    operations and truth tests only, so that it runs on Python integers (its
    statement test) and, compiled by numba, on 64-bit integers (the batched
    kernels' ``legal_game``, which the IS-MCTS simulator runs too).
    """
    if leads:
        others = hand & ~break_bits
        return others if others & standard_bits else hand
    follow = hand & follow_bits
    return follow | (hand & joker_bits) if follow else hand


JOKER_POWER = 100
"""Power of a joker: above every card (of two jokers, the first played wins)."""
TRUMP_POWER = 50
"""Power of the lowest trump (the two); a trump of rank ``r`` has ``TRUMP_POWER + r``."""
CANNOT_WIN = -1
"""Power of a card that can never win the trick: neither trump, nor of the led suit, nor a joker."""


def card_power(card: int, led_suit: int | None, trump: int | None) -> int:
    """How strongly ``card`` plays in a trick with this led suit and trump; the highest power wins.

    The rule: a joker beats every card (:data:`JOKER_POWER`), a trump beats every
    card that is not (``TRUMP_POWER + rank``), a card of the led suit beats the
    other suits (its rank, 0 = two .. 12 = ace), and a card of another suit cannot
    win (:data:`CANNOT_WIN`). Equal powers (only two jokers) go to the card
    played first.
    """
    if card >= NUM_STANDARD_CARDS:
        return JOKER_POWER
    suit = card // 13
    if suit == trump:
        return TRUMP_POWER + card % 13
    if suit == led_suit:
        return card % 13
    return CANNOT_WIN


_UNKNOWN = object()


def trick_winner(trick: Sequence[tuple[int, int]], trump: int | None, led_suit: Any = _UNKNOWN) -> int:
    """The seat that wins a trick of ``(seat, card)`` in the order played (or that leads it so far).

    The card of highest :func:`card_power` wins, with the led suit named by
    :func:`led_suit_of` (a caller that tracks it, as the engine does, may pass
    it as ``led_suit``); of equal powers (two jokers) the first played wins.
    """
    if led_suit is _UNKNOWN:
        led_suit = led_suit_of([card for _, card in trick])
    powers = card_powers(led_suit, trump)
    winner, strongest = trick[0]
    best = powers[strongest]
    for seat, card in trick:
        power = powers[card]
        if power > best:  # strictly: of equal powers the first played keeps the trick
            winner, best = seat, power
    return winner


@cache
def card_powers(led_suit: int | None, trump: int | None) -> tuple[int, ...]:
    """:func:`card_power` of every card (jokers included) for one led suit and trump, as one table (cached)."""
    return tuple(card_power(card, led_suit, trump) for card in range(NUM_STANDARD_CARDS + 2))


_JOKER_SUIT = 4  # card // 13 of both jokers
_NO_SUITS: frozenset[int] = frozenset()
_ONLY_SUIT = tuple(frozenset((suit,)) for suit in range(4))
_ALL_SUITS_BUT = tuple(frozenset(range(4)) - {suit} for suit in range(4))


def voids_shown(
    card: int,
    led_suit: int | None,
    trump: int | None,
    *,
    leads: bool,
    trump_broken: bool,
    must_break: bool,
) -> frozenset[int]:
    """The suits a player shows everyone they do not hold by playing ``card``.

    ``led_suit`` is the trick's led suit before the card (None when none yet) and
    ``leads`` says the card opens the trick. A card that does not follow the led
    suit shows a void in it (a joker shows nothing: it may be played to any
    trick). Under "trump must break" (``must_break``), leading trump before it is
    broken is legal only with nothing but trump in hand, so it shows a void in
    every other suit.
    """
    suit = card // 13
    if suit == _JOKER_SUIT:
        return _NO_SUITS
    if led_suit is None:
        if leads and must_break and suit == trump and not trump_broken:
            return _ALL_SUITS_BUT[suit]
        return _NO_SUITS
    return _NO_SUITS if suit == led_suit else _ONLY_SUIT[led_suit]



@cache
def card_facts(trump: int | None, must_break: bool) -> tuple[frozenset[int], tuple[tuple[tuple[frozenset[int], ...], ...], ...]]:
    """The per-card facts that the engine reads at every card, as tables.

    ``(trumps, follow_voids)`` for one hand's trump: ``trumps`` the cards that
    :func:`is_trump`, and ``follow_voids[trump_broken][led_suit][card]`` the
    :func:`voids_shown` by a card that follows a named led suit (``leads=False``;
    for a card that leads, or follows a led joker, call :func:`voids_shown`).
    Built from those functions, once per trump and rule, so the fact stays in
    one place and a card costs a lookup instead of two calls.
    """
    cards = range(NUM_STANDARD_CARDS + 2)
    trumps = frozenset(card for card in cards if is_trump(card, trump))
    follow_voids = tuple(
        tuple(
            tuple(
                voids_shown(card, led_suit, trump, leads=False, trump_broken=broken, must_break=must_break)
                for card in cards
            )
            for led_suit in range(4)
        )
        for broken in (False, True)
    )
    return trumps, follow_voids

# ---------------------------------------------------------- illegal actions

ILLEGAL_REASONS = (
    "game_over",
    "not_an_action",
    "bidding_over",
    "bid_too_high",
    "hook",
    "bidding_not_over",
    "card_not_held",
    "must_follow_suit",
    "trump_not_broken",
)
"""What :func:`illegal_action_reason` may answer, one name per rule an action can break."""


def illegal_action_reason(view: PlayerView, action: int) -> str | None:
    """The rule that forbids ``action`` to the player of ``view`` (the player to act), or None when it is legal.

    One of :data:`ILLEGAL_REASONS`: ``"game_over"`` (no action is legal);
    ``"not_an_action"`` (outside ``0..num_actions - 1``); for a bid,
    ``"bidding_over"`` (every player has bid), ``"bid_too_high"`` (more tricks
    than cards in the hand) or ``"hook"`` (the dealer's :func:`forbidden_bid`);
    for a card, ``"bidding_not_over"``, ``"card_not_held"``,
    ``"must_follow_suit"`` (see :func:`playable_cards`) or ``"trump_not_broken"``
    (trump led before it is broken while holding other suits). Each caller
    words the reason for its reader.
    """
    if view.phase == "game_over":
        return "game_over"
    if not 0 <= action < view.rules.num_actions:
        return "not_an_action"
    if action in view.legal_actions:
        return None
    num_cards = view.rules.num_cards
    if action >= num_cards:
        if view.phase != "bid":
            return "bidding_over"
        if action - num_cards not in bid_range(view.hand_size):
            return "bid_too_high"
        return "hook"
    if view.phase != "play":
        return "bidding_not_over"
    if action not in view.hand:
        return "card_not_held"
    if view.current_trick and view.led_suit is not None:
        return "must_follow_suit"
    return "trump_not_broken"


# ------------------------------------------------------------------- rewards

def match_winners(totals: Sequence[int]) -> list[int]:
    """The seats that win a match with these totals (one per seat), ascending: every seat with the highest total.

    Equal highest totals all win, and share the win (:func:`win_shares`).
    """
    best = max(totals)
    return [seat for seat, total in enumerate(totals) if total == best]


def match_places(totals: Sequence[int]) -> list[int]:
    """Each seat's place in a match with these totals: 1 for the winners, ties sharing the better place.

    A seat's place is one more than the number of seats with a higher total, so
    totals 30, 41, 30, 12 finish 2, 1, 2, 4 (the winners are :func:`match_winners`).
    """
    return [1 + sum(other > total for other in totals) for total in totals]


def win_shares(totals: Any) -> np.ndarray:
    """Each seat's share of the match win (last axis: seats; leading axes: games, if any).

    The highest total wins; seats with equal highest totals share the win, 1
    split equally among them; the others get 0.
    """
    if isinstance(totals, (list, tuple)) and totals and all(total.__class__ is int for total in totals):
        # One game's totals: the same shares without numpy's per-call cost.
        winners = match_winners(totals)
        shares = [0.0] * len(totals)
        for seat in winners:
            shares[seat] = 1 / len(winners)
        return np.array(shares)
    totals = np.asarray(totals)
    winners = totals == totals.max(axis=-1, keepdims=True)
    return winners / winners.sum(axis=-1, keepdims=True)


REWARDS = ("score", "zero_sum", "win")
"""The reward modes of the environments; see :func:`seat_rewards`."""


def seat_rewards(
    mode: str,
    hand_scores: Any,
    totals: Any = None,
    episode_over: Any = True,
) -> np.ndarray:
    """Each seat's reward for a finished hand (last axis: seats; leading axes: games, if any).

    - ``"score"``: the seat's hand score.
    - ``"zero_sum"``: the hand score minus the mean hand score of the other seats
      (the rewards of a hand sum to zero).
    - ``"win"``: paid when the episode ends (``episode_over``): a share of 1 split
      equally among the seats with the highest match total (``totals``), 0 for the
      others; 0 for every seat before the end.

    Integer scores give float64 rewards; float scores keep their dtype.
    """
    scores = np.asarray(hand_scores)
    if scores.dtype.kind != "f":
        scores = scores.astype(np.float64)
    if mode == "score":
        return scores
    if mode == "zero_sum":
        return scores - (scores.sum(axis=-1, keepdims=True) - scores) / (scores.shape[-1] - 1)
    if mode == "win":
        return win_shares(totals) * np.asarray(episode_over)[..., None]
    check_choice("reward", mode, REWARDS)
    raise AssertionError(f"reward mode {mode!r} has no formula")  # pragma: no cover - every mode has one
