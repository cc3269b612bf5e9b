"""A match as text: the score sheet (per hand, each seat's bid, tricks and points)
and the full transcript (every deal, bid and trick), read from the game's history."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import SUIT_NAMES, card_to_str, cards_to_str, sort_hand
from .engine import BlackoutGame
from .rules_logic import dealer_of_round

__all__ = ["score_sheet", "transcript"]


def score_sheet(game: BlackoutGame, names: Sequence[str] | None = None, status: bool = True) -> str:
    """The score sheet so far: hand by hand, each seat's bid/taken and points ("b/o" for a miss), then totals.

    A cell reads ``bid/taken points``: ``2/2 12`` made, ``1/3 b/o 0`` missed. With
    ``status`` a last line names the winner(s) once the match is over (equal
    totals share the win), or the hand being played.
    """
    n = game.num_players
    names = list(names) if names is not None else [f"P{seat}" for seat in range(n)]
    width = max(11, *(len(name) + 2 for name in names))
    dealer_width = max(6, *(len(name) for name in names))
    header = f"{'hand':>4} {'cards':>5}  {'dealer':<{dealer_width}}" + "".join(f"{name:>{width}}" for name in names)
    rule = "-" * len(header)
    lines = [header, rule]
    for offset, (bids, tricks, points) in enumerate(zip(game.round_bids, game.round_tricks, game.round_scores)):
        round_index = game.start_round + offset
        dealer = names[dealer_of_round(game.first_dealer, round_index, n)]
        cells = "".join(
            f"{f'{bids[s]}/{tricks[s]}' + ('' if bids[s] == tricks[s] else ' b/o') + f' {points[s]}':>{width}}"
            for s in range(n)
        )
        lines.append(f"{round_index + 1:>4} {game.rules.hand_sizes[round_index]:>5}  {dealer:<{dealer_width}}{cells}")
    if not game.round_scores:
        lines.append("(no hand has been scored yet)")
    lines.append(rule)
    lines.append(f"{'total':<{12 + dealer_width}}" + "".join(f"{total:>{width}}" for total in game.scores))
    if status:
        if game.is_over:
            winners = game.winners()
            label = "winner" if len(winners) == 1 else "winners (tie)"
            lines.append(f"{label}: " + ", ".join(names[seat] for seat in winners))
        else:
            lines.append(f"Hand {game.round_index + 1} of {game.num_rounds} is being played.")
    return "\n".join(lines)


def transcript(game: BlackoutGame, names: list[str] | None = None) -> str:
    """The whole match so far as readable text, one event per line, from ``game.history``.

    Each deal shows the dealer, the hand size, the turned card and trump, and every
    hand; then the bids in bidding order, every trick with its winner, and the
    hand's scores and running totals; a finished match ends with the winners.
    Golden playthroughs in the tests are stored in this form, so a change of
    behaviour shows up as a readable diff.
    """
    n = game.num_players
    names = names or [f"P{seat}" for seat in range(n)]
    rules = game.rules
    options = ", ".join(f"{key}={value}" for key, value in rules.to_dict().items() if key != "hand_sizes")
    lines = [
        f"Blackout: {n} players, hands of {', '.join(map(str, rules.hand_sizes))} cards",
        f"Rules: {options}",
    ]
    trump = None
    bids: list[str] = []
    tricks = 0
    for event in game.history:
        kind = event[0]
        if kind == "deal":
            _, round_index, dealer, hand_size, turned, trump, hands = event
            if turned is None:
                shown = "no card turned"
            elif turned in hands[dealer]:
                shown = f"dealer's last card {card_to_str(turned)} shown"
            else:
                shown = f"turned {card_to_str(turned)}"
            trump_words = SUIT_NAMES[trump] if trump is not None else "none"
            lines.append("")
            lines.append(
                f"Hand {round_index + 1}: {hand_size} card{'s' if hand_size > 1 else ''}, "
                f"dealer {names[dealer]}, {shown}, trump {trump_words}"
            )
            for seat in range(n):
                lines.append(f"  {names[seat]}: {cards_to_str(sort_hand(hands[seat], trump))}")
            bids = []
            tricks = 0
        elif kind == "bid":
            bids.append(f"{names[event[1]]} {event[2]}")
            if len(bids) == n:
                lines.append("  Bids: " + ", ".join(bids))
        elif kind == "trick":
            tricks += 1
            _, winner, plays = event
            played = ", ".join(f"{names[seat]} {card_to_str(card)}" for seat, card in plays)
            lines.append(f"  Trick {tricks}: {played} -> {names[winner]}")
        elif kind == "round_end":
            _, round_index, hand_scores, totals = event
            offset = round_index - game.start_round
            bid_row, trick_row = game.round_bids[offset], game.round_tricks[offset]
            lines.append(
                "  Scores: "
                + ", ".join(
                    f"{names[seat]} {bid_row[seat]}/{trick_row[seat]} {hand_scores[seat]:+d}" for seat in range(n)
                )
            )
            lines.append("  Totals: " + ", ".join(f"{names[seat]} {totals[seat]}" for seat in range(n)))
        elif kind == "game_over":
            lines.append("")
            lines.append("Winners: " + ", ".join(names[seat] for seat in event[1]))
    return "\n".join(lines) + "\n"
