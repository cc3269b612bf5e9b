"""Would a control variate shrink `blackout eval`'s interval? Two candidates measured on one agent against copies of another.

Per deal (standard rules, whole matches, `blackout eval`'s deals and seeds), with the agent A
in each rotation j at seat s_j and copies of B elsewhere:

* D: the duplicate difference `blackout eval` reports, the mean over rotations of
  X_j = A's score per hand minus the mean of the B seats'.
* value control: G = the same difference of each seat's own value estimate at its bid
  (`explain(policy, view).value`: the network's value head, the heuristic's expected score),
  regressed out with a coefficient fitted on the other half of the deals (cross-fitting).
* shadow-table control, one seat per deal: X_j for one rotation minus C_j, the same
  difference in the game where B also holds A's seat (all seats B, same deal). C_j averages
  to exactly zero over the seats of each deal, so with all rotations it cancels;
  with one rotation per deal (seat cycling with the deal) it is unbiased over each cycle.
Usage: python docs/data/variance_controls.py DEALS [AGENT] [OPPONENT]
"""

from __future__ import annotations

import sys

import numpy as np
from blackout_training.agents.policies import load_policy
from blackout_training.evaluation.tournament import draw_deal, play_game, reseed, rotations, single_threaded_torch

from blackout_env.agents.policies import explain
from blackout_env.game.engine import BlackoutGame
from blackout_env.game.rules import Rules


def measure(deals: int, agent: str, opponent: str) -> dict[str, float]:
    rules = Rules.preset("standard")
    n = rules.num_players
    a, b = load_policy(agent, rules, None), load_policy(opponent, rules, None)
    x = np.zeros((deals, n))
    g = np.zeros((deals, n))
    c = np.zeros((deals, n))
    for deal in range(deals):
        cards = draw_deal(rules, 0, deal, False)
        reseed(b, 0, deal, n, 1)
        shadow = np.array(play_game(rules, cards, [b] * n, False).round_scores, dtype=float).mean(axis=0)
        for j, seating in enumerate(rotations(["A"] + ["B"] * (n - 1))):
            reseed(a, 0, deal, j, 0)
            reseed(b, 0, deal, j, 1)
            seated = [a if name == "A" else b for name in seating]
            game = BlackoutGame(rules, decks=cards.decks, first_dealer=cards.first_dealer)
            values = np.zeros(n)
            while not game.is_over:
                seat = game.current_player
                if game.phase == "bid":
                    reason = explain(seated[seat], game.view(seat))
                    values[seat] += reason.value
                    game.step(reason.action)
                else:
                    game.step(seated[seat].act(game.view(seat)))
            scores = np.array(game.round_scores, dtype=float).mean(axis=0)
            s = seating.index("A")
            x[deal, s] = scores[s] - (scores.sum() - scores[s]) / (n - 1)
            g[deal, s] = values[s] - (values.sum() - values[s]) / (n - 1)
            c[deal, s] = shadow[s] - (shadow.sum() - shadow[s]) / (n - 1)
    d, gd = x.mean(axis=1), g.mean(axis=1)
    half = deals // 2
    residual = []
    for fit, use in ((slice(half, None), slice(0, half)), (slice(0, half), slice(half, None))):
        beta = np.cov(d[fit], gd[fit])[0, 1] / gd[fit].var(ddof=1)
        residual.append(d[use] - beta * (gd[use] - gd[fit].mean()))
    one_seat = x[np.arange(deals), np.arange(deals) % n]
    shadow_one = one_seat - c[np.arange(deals), np.arange(deals) % n]
    return {
        "duplicate D": d.var(ddof=1),
        "D with the value control": np.concatenate(residual).var(ddof=1),
        "corr(D, value control)": float(np.corrcoef(d, gd)[0, 1]),
        "one seat X": one_seat.var(ddof=1),
        "one seat X - shadow C": shadow_one.var(ddof=1),
        "mean D": d.mean(),
    }


if __name__ == "__main__":
    deals = int(sys.argv[1])
    agent = sys.argv[2] if len(sys.argv) > 2 else "ppo"
    opponent = sys.argv[3] if len(sys.argv) > 3 else "heuristic"
    with single_threaded_torch():
        figures = measure(deals, agent, opponent)
    print(f"{agent} against 3 {opponent}, standard rules, {deals} deals: per-deal variance (points per hand, squared)")
    for name, value in figures.items():
        deals_needed = f"   deals for a ±0.1 interval: {1.96**2 * value / 0.01:.0f}" if not name.startswith(("corr", "mean")) else ""
        print(f"  {name:<28} {value:8.3f}{deals_needed}")
