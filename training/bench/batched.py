"""``blackout bench batched``: decisions per second of the batched engine against OpenSpiel's C++.

In one run, so that every figure shares the machine's load:

- ``openspiel``: ``pyspiel.evaluate_bots`` with uniform random bots on ``oh_hell``
  (4 players, ``num_tricks_fixed=10``), all C++; a decision is one bid or one card;
- the batched engine (:class:`blackout_env.batched.BatchedBlackout`) with uniform
  random legal actions (``random_actions``), at each number of games, with and
  without observations, on single 10-card hands (the ``single-hand`` rules) and
  on whole matches of the ``standard`` rules (10 cards down to 1). The engine runs
  at its default settings (``copy=True``: every step's observation is a fresh
  array that the caller may keep), what a user gets; ``--no-copy`` times
  ``copy=False`` (the reused buffer) instead.

Each figure is the best of ``--repeats`` timings of ``--seconds`` each (the
least disturbed by other processes), in the process's CPU time by default
(``--clock cpu``: waiting for a busy machine's cores does not count; ``--clock
wall`` uses the wall clock); OpenSpiel is timed again before every
batched figure and its best is used for the ratio. Memory is the peak of the
numpy allocations (tracemalloc) while building and stepping the engine (the
compiled kernels allocate their arrays through numpy too).
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from blackout_env import Rules
from blackout_env.batched import BatchedBlackout

from . import check_output_file, check_positive, command, write_json

CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
"""How a timing is measured: the process's CPU time, or the wall clock."""

SCENARIOS = {"hands": "single-hand", "matches": "standard"}
"""Scenario name -> rules preset: single 10-card hands, whole standard matches."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--games", type=int, nargs="+", default=[1024, 4096, 16384], help="numbers of games (default 1024 4096 16384)"
    )
    parser.add_argument(
        "--scenarios", nargs="+", choices=sorted(SCENARIOS), default=list(SCENARIOS), help="hands and/or matches"
    )
    parser.add_argument("--seconds", type=float, default=1.0, help="length of one timing (default 1.0)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per figure; the best counts (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="cpu", help="cpu: process CPU time (default); wall: wall clock"
    )
    parser.add_argument("--no-copy", action="store_true", help="time copy=False (the reused observation buffer)")
    parser.add_argument("--no-openspiel", action="store_true", help="skip OpenSpiel (e.g. when it is not installed)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def _openspiel_runner(seed: int, clock: Callable[[], float] = time.perf_counter) -> Callable[[float], float] | None:
    """A timer of OpenSpiel's C++ random play (decisions per second), or None without pyspiel."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("oh_hell", {"players": 4, "num_tricks_fixed": 10})
    bots = [pyspiel.make_uniform_random_bot(player, seed + player) for player in range(4)]
    decisions_per_game = _openspiel_decisions(game)

    def run(seconds: float) -> float:
        games = 0
        start = clock()
        while (elapsed := clock() - start) < seconds:
            for _ in range(100):
                pyspiel.evaluate_bots(game.new_initial_state(), bots, seed + games)
                games += 1
        return games * decisions_per_game / elapsed

    return run


def _openspiel_decisions(game: object) -> int:
    """Decisions (non-chance moves) in one game of oh_hell: counted, not assumed."""
    rng = np.random.default_rng(0)
    state = game.new_initial_state()  # type: ignore[attr-defined]
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            decisions += 1
    return decisions


def _batched_runner(
    rules: Rules,
    games: int,
    observations: bool,
    seed: int,
    clock: Callable[[], float] = time.perf_counter,
    copy: bool = True,
) -> Callable[[float], float]:
    """A timer of the batched engine under random legal play (decisions per second)."""
    env = BatchedBlackout(rules, games, observations=observations, copy=copy, seed=seed)
    rng = np.random.default_rng(seed)
    env.reset()
    for _ in range(20):  # warm up: deal, allocate, reach a mix of phases
        env.step(env.random_actions(rng))

    def run(seconds: float) -> float:
        steps = 0
        start = clock()
        while (elapsed := clock() - start) < seconds:
            env.step(env.random_actions(rng))
            steps += 1
        return steps * games / elapsed

    return run


def peak_memory_mb(rules: Rules, games: int, observations: bool, seed: int, steps: int = 50) -> float:
    """Peak numpy memory (MB) while building the engine and stepping it ``steps`` times."""
    tracemalloc.start()
    try:
        env = BatchedBlackout(rules, games, observations=observations, seed=seed)
        env.reset()
        for _ in range(steps):
            env.step(env.random_actions())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def run(args: argparse.Namespace) -> int:
    check_positive(games=min(args.games), seconds=args.seconds, repeats=args.repeats)
    check_output_file(args.json)
    openspiel = None if args.no_openspiel else _openspiel_runner(args.seed, CLOCKS[args.clock])
    if openspiel is None and not args.no_openspiel:
        print("openspiel: not installed (pip install open_spiel); batched figures only")
    best_openspiel = 0.0
    rows = []
    print(
        f"decisions per second, best of {args.repeats} x {args.seconds:g}s ({args.clock} time); "
        "4 players, uniform random legal play"
    )
    for scenario in args.scenarios:
        rules = Rules.preset(SCENARIOS[scenario])
        for games in args.games:
            for observations in (False, True):
                # OpenSpiel is timed before each repeat, so that the two share the machine's load.
                timer = _batched_runner(rules, games, observations, args.seed, CLOCKS[args.clock], copy=not args.no_copy)
                best = 0.0
                for _ in range(args.repeats):
                    if openspiel is not None:
                        best_openspiel = max(best_openspiel, openspiel(args.seconds))
                    best = max(best, timer(args.seconds))
                del timer
                memory = peak_memory_mb(rules, games, observations, args.seed)
                rows.append(
                    {
                        "scenario": scenario,
                        "rules": SCENARIOS[scenario],
                        "games": games,
                        "observations": observations,
                        "decisions_per_second": best,
                        "peak_memory_mb": memory,
                    }
                )
                print(f"  {scenario} x {games} {'with' if observations else 'without'} observations: {best:,.0f}/s")
                sys.stdout.flush()
    # The ratios use OpenSpiel's best over the whole run: the least favourable comparison for us.
    # Without OpenSpiel (skipped or not installed) there is no ratio: that column says "-".
    header = f"{'scenario':<9} {'games':>6} {'observations':>12} {'decisions/s':>13} {'x OpenSpiel':>11} {'peak MB':>8}"
    print()
    print(header)
    print("-" * len(header))
    for row in rows:
        ratio = f"{row['decisions_per_second'] / best_openspiel:.2f}x" if best_openspiel else "-"
        obs = "yes" if row["observations"] else "no"
        print(
            f"{row['scenario']:<9} {row['games']:>6} {obs:>12} {row['decisions_per_second']:>13,.0f}"
            f" {ratio:>11} {row['peak_memory_mb']:>8.0f}"
        )
    if openspiel is not None:
        print(f"openspiel (pyspiel.evaluate_bots, random bots, oh_hell 4 players, 10 tricks): {best_openspiel:,.0f}/s")
    write_json(args.json, {"clock": args.clock, "copy": not args.no_copy, "openspiel_decisions_per_second": best_openspiel or None, "batched": rows})
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
