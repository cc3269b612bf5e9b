"""``blackout bench heuristic``: decisions per second of the batched heuristic beside HeuristicBot.act, in one run.

Every seat of ``--games`` batched games is played by
:class:`~blackout_baselines.heuristic_batch.BatchedHeuristic` for ``--steps``
steps (default: one whole match). Each step times its ``act`` call on every
game, then takes ``--sample`` games of that same state and times
``HeuristicBot.act`` on their views one by one (the view is built outside the
timing), checking on the way that both chose the same action. Both sides see
the same states and the same machine load; the ratio is the figure to quote.
Time is the process's CPU time by default (``--clock wall`` for the wall clock).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from blackout_baselines.heuristic import HeuristicBot
from blackout_baselines.heuristic_batch import BatchedHeuristic

from blackout_env import Rules
from blackout_env.batched import BatchedBlackout

from . import check_output_file, command, write_json

CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="standard", help="preset or YAML (default standard)")
    parser.add_argument("--games", type=int, default=4096, help="batched games (default 4096)")
    parser.add_argument(
        "--episode", choices=["match", "hand"], default="match",
        help="match: games in step through whole matches (default); hand: single hands of random sizes, mixed",
    )
    parser.add_argument("--steps", type=int, default=0, help="steps to time (default 0: one whole match)")
    parser.add_argument("--sample", type=int, default=8, help="games per step also decided by HeuristicBot.act (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--clock", choices=["cpu", "wall"], default="cpu", help="cpu: process CPU time (default); wall: wall clock"
    )
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def run(args: argparse.Namespace) -> int:
    if args.games < 1 or args.steps < 0 or args.sample < 1:
        raise ValueError("--games and --sample must be at least 1, --steps at least 0")
    check_output_file(args.json)
    rules = Rules.resolve(args.rules)
    clock = CLOCKS[args.clock]
    steps = args.steps or rules.decisions_per_match
    engine = BatchedBlackout(rules, args.games, episode=args.episode, observations=False, seed=args.seed)
    engine.reset(seed=args.seed)
    batched = BatchedHeuristic(rules)
    bot = HeuristicBot()
    rng = np.random.default_rng(args.seed)
    sample = min(args.sample, args.games)
    batch_time = single_time = 0.0
    batch_decisions = single_decisions = mismatches = 0
    for _ in range(steps):
        start = clock()
        actions = batched.act(engine)
        batch_time += clock() - start
        batch_decisions += args.games
        for game in rng.choice(args.games, size=sample, replace=False).tolist():
            view = engine.view(game, int(engine.current_player[game]))
            start = clock()
            action = bot.act(view)
            single_time += clock() - start
            single_decisions += 1
            mismatches += int(action != actions[game])
        engine.step(actions)
    batch_rate = batch_decisions / batch_time
    single_rate = single_decisions / single_time
    print(f"Heuristic bot, rules {args.rules!r}, {args.games} games, {args.episode} episodes, {steps} steps ({args.clock} time):")
    print(f"  BatchedHeuristic.act   {batch_rate:>12,.0f} decisions/s")
    print(f"  HeuristicBot.act       {single_rate:>12,.0f} decisions/s   ({single_decisions} sampled decisions)")
    print(f"  ratio                  {batch_rate / single_rate:>12.1f}x")
    print(f"  different decisions    {mismatches:>12}")
    if args.json:
        figures = {
            "rules": args.rules, "episode": args.episode, "games": args.games, "steps": steps, "clock": args.clock,
            "batched": batch_rate, "single": single_rate, "ratio": batch_rate / single_rate, "mismatches": mismatches,
        }
        write_json(args.json, figures)
    return 1 if mismatches else 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
