"""The score sheet of a match as text: per hand, each seat's bid, tricks and points."""

from __future__ import annotations

from .engine import BlackoutGame

__all__ = ["score_sheet"]


def score_sheet(game: BlackoutGame, names: list[str] | None = None) -> str:
    """Round-by-round bids and results, "b/o" for a missed bid, then the totals and the winners.

    Each cell reads ``bid/taken points``, e.g. ``3/3 13`` (made) or ``2/4 b/o 0`` (missed).
    """
    n = game.num_players
    names = names or [f"P{seat}" for seat in range(n)]
    width = max(12, *(len(name) + 2 for name in names))
    header = f"{'hand':>4} {'cards':>5} {'dealer':>6} " + "".join(f"{name:>{width}}" for name in names)
    lines = [header, "-" * len(header)]
    first = game.start_round
    for offset, (bids, tricks, points) in enumerate(zip(game.round_bids, game.round_tricks, game.round_scores)):
        round_index = first + offset
        size = game.rules.hand_sizes[round_index]
        dealer = (game.first_dealer + round_index) % n
        cells = []
        for seat in range(n):
            mark = "" if bids[seat] == tricks[seat] else " b/o"
            cells.append(f"{f'{bids[seat]}/{tricks[seat]}{mark} {points[seat]}':>{width}}")
        lines.append(f"{round_index + 1:>4} {size:>5} {names[dealer]:>6} " + "".join(cells))
    lines.append("-" * len(header))
    lines.append(f"{'total':>18} " + "".join(f"{total:>{width}}" for total in game.scores))
    if game.is_over:
        winners = game.winners()
        label = "winner" if len(winners) == 1 else "winners (tie)"
        lines.append(f"{label}: " + ", ".join(names[seat] for seat in winners))
    return "\n".join(lines)
