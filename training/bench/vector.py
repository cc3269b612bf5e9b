"""``blackout bench vector``: learner decisions per second of the Gymnasium vector env, against the raw batched engine.

In one run, so that the figures share the machine's load:

- ``raw``: :class:`blackout_env.batched.BatchedBlackout` stepping every game with
  uniform random legal actions (``random_actions``), with observations (``copy=True``,
  as the vector env); a decision is one bid or one card by any seat;
- ``vector``: :class:`blackout_env.envs.vector_env.BlackoutVectorEnv` against random
  opponents, the learner playing random legal actions; a decision is one learner
  decision (each one also carries the opponents' moves up to the learner's next turn,
  counted separately as ``engine moves``).

The ratio ``vector / raw`` is what the learner keeps of the engine's speed. Each
figure is the best of ``--repeats`` timings of ``--seconds`` each (the least
disturbed by other processes), timed alternately, on the wall clock (``--clock
cpu``: the process's CPU time, so that waiting for a busy machine's cores does
not count); the load average is printed with them (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np

from blackout_env import Rules
from blackout_env.batched import BatchedBlackout
from blackout_env.envs.vector_env import BlackoutVectorEnv

from . import check_output_file, check_positive, command, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", type=int, nargs="+", default=[4096], help="numbers of games (default 4096)")
    parser.add_argument("--rules", default="standard", help="a preset name or YAML file (default: standard)")
    parser.add_argument("--seconds", type=float, default=2.0, help="length of one timing (default 2.0)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per figure; the best counts (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    parser.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall", help="wall: wall clock (default); cpu: process CPU time"
    )


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
"""How a timing is measured: the process's CPU time, or the wall clock."""


def _timer(step: Callable[[], int], clock: Callable[[], float] = time.perf_counter) -> Callable[[float], float]:
    """A timer of ``step`` (which returns the decisions it made): decisions per second over ``seconds``."""

    def run(seconds: float) -> float:
        decisions = 0
        start = clock()
        while (elapsed := clock() - start) < seconds:
            decisions += step()
        return decisions / elapsed

    return run


def raw_runner(rules: Rules, games: int, seed: int, clock: Callable[[], float] = time.perf_counter) -> Callable[[float], float]:
    """Decisions per second of the batched engine with observations (random legal play)."""
    engine = BatchedBlackout(rules, games, seed=seed)
    rng = np.random.default_rng(seed)
    engine.reset()
    for _ in range(20):  # warm up: deal, allocate, reach a mix of phases
        engine.step(engine.random_actions(rng))

    def step() -> int:
        engine.step(engine.random_actions(rng))
        return games

    return _timer(step, clock)


def vector_runner(
    rules: Rules,
    games: int,
    seed: int,
    moves: list[int],
    clock: Callable[[], float] = time.perf_counter,
) -> Callable[[float], float]:
    """Learner decisions per second of the vector env against random opponents; ``moves`` counts engine moves."""
    envs = BlackoutVectorEnv(games, rules=rules, opponents="random", seed=seed)
    engine = envs.engine
    advance = engine._advance  # every move of the engine, checked or not, goes through it

    def counting_advance(actions, moving, observe):
        moves[0] += games if moving is None else len(moving)
        return advance(actions, moving, observe)

    engine._advance = counting_advance
    rng = np.random.default_rng(seed)
    envs.reset(seed=seed)
    for _ in range(20):
        envs.step(engine.random_actions(rng))  # every game is at a learner decision: its legal actions

    def step() -> int:
        envs.step(engine.random_actions(rng))
        return games

    return _timer(step, clock)


def run(args: argparse.Namespace) -> int:
    check_positive(games=min(args.games), seconds=args.seconds, repeats=args.repeats)
    check_output_file(args.json)
    rules = Rules.resolve(args.rules)
    clock = CLOCKS[args.clock]
    rows = []
    load_before = os.getloadavg()
    print(
        f"decisions per second, best of {args.repeats} x {args.seconds:g}s ({args.clock} time); {rules.num_players} players, "
        f"rules {args.rules}, random legal play; load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}"
    )
    for games in args.games:
        # The raw and vector timers run in turn within each repeat: they share the load.
        moves = [0]
        raw = raw_runner(rules, games, args.seed, clock=clock)
        vector = vector_runner(rules, games, args.seed, moves, clock=clock)
        best_raw = best_vector = best_moves = 0.0
        for _ in range(args.repeats):
            best_raw = max(best_raw, raw(args.seconds))
            moves[0] = 0
            start = clock()
            rate = vector(args.seconds)
            if rate > best_vector:
                best_vector, best_moves = rate, moves[0] / (clock() - start)
        row = {
            "games": games,
            "raw_decisions_per_second": best_raw,
            "vector_learner_decisions_per_second": best_vector,
            "vector_engine_moves_per_second": best_moves,
            "ratio": best_vector / best_raw,
        }
        rows.append(row)
        print(
            f"  {games} games: raw engine {best_raw:,.0f}/s, vector env {best_vector:,.0f} learner "
            f"decisions/s ({best_moves:,.0f} engine moves/s), ratio {row['ratio']:.3f}"
        )
        sys.stdout.flush()
    load_after = os.getloadavg()
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    write_json(args.json, {"rules": args.rules, "clock": args.clock, "load_average": [load_before, load_after], "rows": rows})
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
