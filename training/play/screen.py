"""What ``blackout play`` shows, as text: pure functions of a view or a game.

Nothing here reads input or writes to a terminal, so every screen can be
tested as a string. The game loop (:mod:`blackout_training.play.session`) decides when to show
what; this module decides how it looks.

Seats are named by the caller (``names[seat]``, e.g. ``"P0 you"``). Cards are
numbered for the person at the keyboard in the order of :func:`hand_order`
(by suit, trump last, high cards first), and :func:`hand_order` is the one
place that numbering comes from, so what is shown and what is typed agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from blackout_env import BlackoutGame, PlayerView
from blackout_env.game.cards import SUIT_NAMES, SUIT_SYMBOLS, card_to_str, counted, sort_hand, suit_of
from blackout_env.game.rules_logic import illegal_action_reason, is_trump
from blackout_env.game.scoresheet import score_sheet

__all__ = [
    "HELP",
    "bid_total_line",
    "describe_event",
    "explain_illegal_card",
    "forbidden_bid_reason",
    "hand_order",
    "render_bid_options",
    "render_final",
    "render_hand",
    "render_hand_result",
    "render_last_trick",
    "render_table",
    "render_turn",
    "strike",
    "trumped_in",
]

HELP = """\
Commands (at any prompt):
  s   score sheet: every hand so far, bid/taken and points per seat, b/o for a missed bid
  l   the last trick played
  h   this help
  q   save and quit (continue later with: blackout play --resume)
Bidding: type the number of tricks you will take, e.g. 2.
Playing: type a card's number from your hand (e.g. 3) or its name (e.g. QS, 10h, TH).
The game saves itself after every move."""


def strike(text: str, unicode: bool = True) -> str:
    """Text crossed out: a combining stroke over each character, or ``~~text~~`` in plain ASCII."""
    if unicode:
        return "".join(ch + "\u0336" for ch in text)
    return f"~~{text}~~"


def _suit_words(suit: int | None, unicode: bool) -> str:
    if suit is None:
        return "no trump"
    return f"{SUIT_NAMES[suit]} {SUIT_SYMBOLS[suit]}" if unicode else SUIT_NAMES[suit]


def hand_order(view: PlayerView) -> list[int]:
    """The player's cards in the order they are shown and numbered (1 = the first)."""
    return sort_hand(view.hand, view.trump)


def trumped_in(view: PlayerView, card: int) -> bool:
    """Whether ``card`` in the current trick is a trump played to a trick led in another suit."""
    return is_trump(card, view.trump) and view.led_suit not in (None, view.trump)


def bid_total_line(view: PlayerView) -> str:
    """The bids so far against the tricks of the hand, and whether the table is over or under."""
    made = [b for b in view.bids if b is not None]
    total = sum(made)
    tricks = view.hand_size
    if len(made) < view.num_players:
        return f"Bids so far: {total} ({len(made)} of {view.num_players} seats) for {counted(tricks, 'trick')}"
    if total == tricks:
        balance = "even"
    elif total > tricks:
        balance = f"overbid by {total - tricks}: someone must miss"
    else:
        balance = f"underbid by {tricks - total}"
    return f"Bids total {total} for {counted(tricks, 'trick')} ({balance})"


def render_table(view: PlayerView, names: Sequence[str], unicode: bool = True) -> str:
    """The table as one player sees it: the hand, trump, led suit, and a line per seat.

    Each seat shows its bid, tricks taken, total score, "b/o" once its bid can
    no longer be made, and its card in the current trick (marked when it trumped in).
    ``>`` marks the seat to act, ``(D)`` the dealer.
    """
    n = view.num_players
    lines = [
        f"Hand {view.round_index + 1} of {view.rules.num_rounds}: {counted(view.hand_size, 'card')} each, "
        f"dealer {names[view.dealer]}"
    ]
    trump = "Trump: " + _suit_words(view.trump, unicode)
    if view.turned_card is not None:
        what = "dealer's last card" if view.turned_card_held_by_dealer else "turned card"
        trump += f" ({what} {card_to_str(view.turned_card)})"
    elif view.rules.trump == "rotating":
        trump += " (rotating trump)"
    if view.rules.lead_trump == "broken" and view.trump is not None:
        trump += "; trump " + ("broken" if view.trump_broken else "not broken yet")
    lines.append(trump)
    if view.phase == "play":
        if view.current_trick:
            led = "a joker, no suit yet" if view.led_suit is None else _suit_words(view.led_suit, unicode)
            lines.append(f"Trick {sum(view.tricks_won) + 1} of {view.hand_size}, led by {names[view.leader]}: {led}")
        else:
            lines.append(f"Trick {sum(view.tricks_won) + 1} of {view.hand_size}: {names[view.leader]} leads")
    name_width = max(len(name) for name in names) + 4
    lines.append(f"  {'':<{name_width}} {'bid':>3} {'won':>4} {'':>3} {'score':>6}  trick")
    played = dict(view.current_trick)
    impossible = view.bid_impossible
    for seat in range(n):
        marker = ">" if seat == view.current_player else " "
        label = names[seat] + (" (D)" if seat == view.dealer else "")
        bid = "-" if view.bids[seat] is None else str(view.bids[seat])
        status = "b/o" if impossible[seat] else ""
        card = ""
        if seat in played:
            card = card_to_str(played[seat])
            if trumped_in(view, played[seat]):
                card += "  trumped in"
        row = f"{marker} {label:<{name_width}} {bid:>3} {view.tricks_won[seat]:>4} {status:>3} {view.scores[seat]:>6}  {card}"
        lines.append(row.rstrip())
    lines.append(bid_total_line(view))
    return "\n".join(lines)


def render_hand(view: PlayerView, unicode: bool = True) -> str:
    """The player's hand, one line per suit (trump last, marked), each card with its number."""
    cards = hand_order(view)
    if not cards:
        return "Your hand is empty."
    groups: list[tuple[str, list[str]]] = []
    for number, card in enumerate(cards, start=1):
        suit = suit_of(card)
        if suit is None:
            title = "jokers"
        else:
            title = SUIT_NAMES[suit] + (" (trump)" if suit == view.trump else "")
        if not groups or groups[-1][0] != title:
            groups.append((title, []))
        groups[-1][1].append(f"{number}) {card_to_str(card)}")
    width = max(len(title) for title, _ in groups)
    lines = ["Your hand:"]
    lines += [f"  {title:<{width}}  " + "  ".join(entries) for title, entries in groups]
    return "\n".join(lines)


def forbidden_bid_reason(view: PlayerView) -> str | None:
    """Why the dealer may not bid :attr:`PlayerView.forbidden_bid` now, or None when nothing is forbidden."""
    forbidden = view.forbidden_bid
    if forbidden is None:
        return None
    others = sum(b for b in view.bids if b is not None)
    return f"the dealer may not make the bids total the {counted(view.hand_size, 'trick')} (the others bid {others}; dealer's hook)"


def render_bid_options(view: PlayerView, suggestion: int | None = None, unicode: bool = True) -> str:
    """The bids the player may make, the forbidden one crossed out with the reason, and the suggestion."""
    forbidden = view.forbidden_bid
    options = [strike(str(k), unicode) if k == forbidden else str(k) for k in range(view.hand_size + 1)]
    lines = ["Bids: " + " ".join(options)]
    reason = forbidden_bid_reason(view)
    if reason is not None:
        lines.append(f"  {forbidden} is not allowed: {reason}")
    if suggestion is not None:
        lines.append(f"Suggested bid: {suggestion}")
    return "\n".join(lines)


def render_turn(
    view: PlayerView, names: Sequence[str], suggestion: int | None = None, unicode: bool = True
) -> str:
    """The whole screen for a player to act: the table, the hand, and the bid options when bidding."""
    parts = [render_table(view, names, unicode), render_hand(view, unicode)]
    if view.phase == "bid":
        parts.append(render_bid_options(view, suggestion, unicode))
    return "\n".join(parts)


def explain_illegal_card(view: PlayerView, card: int) -> str | None:
    """Why the player may not play ``card`` now, in words; None when it is legal.

    The rule broken is :func:`~blackout_env.game.rules_logic.illegal_action_reason`'s; the words are for the player.
    """
    name = card_to_str(card)
    if card >= view.num_cards:  # a joker the deck lacks: its number is a bid action, not a card
        return f"you do not hold {name}"
    reason = illegal_action_reason(view, card)
    if reason is None:
        return None
    playable = " ".join(card_to_str(c) for c in hand_order(view) if c in view.legal_actions)
    led = None if view.led_suit is None else SUIT_NAMES[view.led_suit]
    trump = None if view.trump is None else SUIT_NAMES[view.trump]
    words = {
        "card_not_held": f"you do not hold {name}",
        "must_follow_suit": f"you must follow suit: {led} were led and you hold {playable}",
        "trump_not_broken": f"trump ({trump}) may not be led until trump is broken, and you hold other suits: {playable}",
    }
    return words.get(reason, "it is not time to play a card: bidding is not over")


def render_last_trick(trick: Sequence[tuple[int, int]], winner: int, names: Sequence[str]) -> str:
    """A completed trick, card by seat in the order played, and who took it."""
    cards = ", ".join(f"{names[seat]} {card_to_str(card)}" for seat, card in trick)
    return f"Last trick: {cards}; taken by {names[winner]}"


def render_final(game: BlackoutGame, names: Sequence[str]) -> str:
    """The end of the match: the whole score sheet and the winner, or the seats sharing the win."""
    winners = game.winners()
    best = game.scores[winners[0]]
    if len(winners) == 1:
        result = f"{names[winners[0]]} wins with {best} points."
    else:
        who = ", ".join(names[seat] for seat in winners[:-1]) + " and " + names[winners[-1]]
        result = f"{who} share the win with {best} points each."
    return "\n".join(["Game over. Final score sheet:", score_sheet(game, names, status=False), result])


def render_hand_result(
    bids: Sequence[int], tricks: Sequence[int], points: Sequence[int], totals: Sequence[int], names: Sequence[str]
) -> str:
    """A scored hand, a line per seat: bid, tricks taken ("b/o" for a miss), points and new total."""
    lines = ["Hand over:"]
    width = max(len(name) for name in names)
    for seat, name in enumerate(names):
        result = "made" if bids[seat] == tricks[seat] else "b/o"
        lines.append(
            f"  {name:<{width}}  bid {bids[seat]}, took {tricks[seat]}  {result:<4} {points[seat]:+d}  total {totals[seat]}"
        )
    return "\n".join(lines)


def describe_event(event: tuple, names: Sequence[str], unicode: bool = True) -> str | None:
    """One history event of the engine as a line of narration.

    None for events told otherwise: the end of a hand (:func:`render_hand_result`) and of the game.
    """
    kind = event[0]
    if kind == "deal":
        _, round_index, dealer, hand_size, turned, trump, _hands = event
        text = f"--- Hand {round_index + 1}: {names[dealer]} deals {counted(hand_size, 'card')} each"
        if turned is not None:
            text += f"; turned card {card_to_str(turned)}"
        return text + f"; trump: {_suit_words(trump, unicode)} ---"
    if kind == "bid":
        return f"{names[event[1]]} bids {event[2]}"
    if kind == "play":
        return f"{names[event[1]]} plays {card_to_str(event[2])}"
    if kind == "trick":
        cards = " ".join(card_to_str(card) for _, card in event[2])
        return f"{names[event[1]]} takes the trick ({cards})"
    if kind == "round_end":
        _, round_index, hand_scores, totals = event
        scored = ", ".join(f"{names[s]} {p:+d} ({t})" for s, (p, t) in enumerate(zip(hand_scores, totals)))
        return f"Hand {round_index + 1} scored: {scored}"
    return None

