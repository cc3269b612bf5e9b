"""``blackout bench endgame``: positions per second of the exact endgame solver at k tricks left, and the share of decisions it decides.

For each ``--tricks`` k, ``--positions`` deals of the rules' largest hand are played
by heuristic bots (the bids and every trick before the last k), and the position
at the start of the k-th last trick, every hand known, is solved exactly
(``SimState.solve``: max-n, each seat playing for its own hand score) with an
empty transposition table, one position at a time. Reported per k: positions
solved per second (process CPU time), the mean and largest number of positions
searched per solve, and the slowest solve; the peer, in the same run, is a random playout
of the same positions (``SimState.rollout``, the playout the solver replaces in
``ismcts:endgame=k``): ``x playout`` is one solve's mean time in random playouts. ``share`` is the part of the
decisions with a choice (two or more legal actions) in those heuristic hands
that come with k or fewer tricks left: the decisions at which every simulation
of ``ismcts:endgame=k`` (or ``ppo+search:endgame=k``) ends in the solver.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from blackout_baselines.heuristic import HeuristicBot
from blackout_baselines.ismcts import Endgame, SimState

from blackout_env import BlackoutGame, Rules

from . import check_output_file, check_positive, command, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="single-hand", help="preset or YAML (default single-hand: 4 players, 10 cards)")
    parser.add_argument("--tricks", type=int, nargs="+", default=[3, 4, 5], help="tricks left to solve (default 3 4 5)")
    parser.add_argument("--positions", type=int, default=200, help="positions per k (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="deals (default 0)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def positions(rules: Rules, tricks: int, count: int, seed: int) -> tuple[list[SimState], list[int]]:
    """``count`` positions with ``tricks`` tricks left (heuristic play), and per position the number of
    decisions of its hand with a choice before it and at or after it."""
    size_index = max(range(rules.num_rounds), key=lambda r: rules.hand_sizes[r])
    size = rules.hand_sizes[size_index]
    if not 1 <= tricks <= size:
        raise ValueError(f"--tricks {tricks}: the rules' largest hand has {size} cards")
    bot = HeuristicBot()
    states, counts = [], [0, 0]
    for index in range(count):
        game = BlackoutGame(rules, seed=seed * 100_003 + index, start_round=size_index)
        state = None
        while not game.is_over and game.round_index == size_index:
            if game.phase == "play" and state is None and game.tricks_left == tricks and not game.current_trick:
                state = SimState.from_view(game.view(game.current_player), game.hands)
            view = game.view(game.current_player)
            if len(view.legal_actions) > 1:
                counts[state is not None] += 1
            game.step(bot.act(view))
        states.append(state)
    return states, counts


PLAYOUT_REPEATS = 20
"""Random playouts of each position per k (a playout is fast; the repeats steady its timing)."""


def row_rate(count: int, seconds: float) -> float:
    """``count`` per ``seconds`` (``count`` per second when too fast to time)."""
    return count / seconds if seconds > 0 else float(count)


def run(args: argparse.Namespace) -> int:
    check_positive(positions=args.positions)
    for k in args.tricks:
        check_positive(tricks=k)
    check_output_file(args.json)
    rules = Rules.resolve(args.rules)
    largest = max(rules.hand_sizes)
    if max(args.tricks) > largest:  # before any k is timed
        raise ValueError(f"--tricks {max(args.tricks)}: the rules' largest hand has {largest} cards")
    figures = {"rules": args.rules, "positions": args.positions, "seed": args.seed, "tricks": {}}
    print(f"Endgame solver, rules {args.rules!r} ({rules.num_players} players), {args.positions} positions per k (CPU time):")
    print(
        f"  {'k':>2}  {'positions/s':>12}  {'searched (mean)':>15}  {'searched (max)':>14}  {'slowest':>9}"
        f"  {'playouts/s':>11}  {'x playout':>9}  {'share':>6}"
    )
    rand = np.random.default_rng(args.seed).random
    warm, _ = positions(rules, 1, 1, args.seed + 1)
    warm[0].solve()  # load the solver and the playout (numba's cache, or a compile) outside the timing
    warm[0].copy().rollout(rand)
    for k in args.tricks:
        states, (before, after) = positions(rules, k, args.positions, args.seed)
        times, searched = [], []
        for state in states:
            scratch = Endgame(state.v.size, state.n * state.hand_size)
            start = time.process_time()
            state.copy().solve(scratch)
            times.append(time.process_time() - start)
            searched.append(int(scratch.counts[0]))
        total = sum(times)
        start = time.process_time()
        for _ in range(PLAYOUT_REPEATS):
            for state in states:
                state.copy().rollout(rand)
        playout_time = (time.process_time() - start) / PLAYOUT_REPEATS
        playouts_per_s = len(states) / playout_time if playout_time > 0 else float("inf")
        share = after / (before + after) if before + after else 0.0
        row = {
            "positions_per_s": row_rate(len(states), total),
            "searched_mean": float(np.mean(searched)), "searched_max": int(max(searched)),
            "slowest_ms": 1000 * max(times), "share": share,
            "playouts_per_s": playouts_per_s, "solve_in_playouts": playouts_per_s / row_rate(len(states), total),
        }
        figures["tricks"][str(k)] = row
        print(
            f"  {k:>2}  {row['positions_per_s']:>12,.0f}  {row['searched_mean']:>15,.0f}  {row['searched_max']:>14,}"
            f"  {row['slowest_ms']:>7.2f}ms  {playouts_per_s:>11,.0f}  {row['solve_in_playouts']:>9,.1f}  {share:>6.1%}"
        )
    write_json(args.json, figures)
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
