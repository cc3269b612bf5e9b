"""``blackout positions``: the suite of obvious positions, each proved when loaded, and each agent's score on it.

Example: ``blackout positions --agents random heuristic search ppo`` prints every agent's score
and its failures in words; ``--file my.yaml`` runs another suite (verified the same way).
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--agents", nargs="*", default=["random", "heuristic", "search"], metavar="SPEC",
                        help="policy specs to score (default: random heuristic search)")
    parser.add_argument("--file", default=None, help="a positions file (default: the suite shipped in the package)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the agents' own randomness (default 0)")
    parser.add_argument("--failures", type=int, default=10, metavar="N",
                        help="failures to print per agent (default 10; -1: all)")


def run(args: argparse.Namespace) -> int:
    from ..agents.policies import load_policy
    from ..evaluation.positions import load_positions, run_suite

    if args.seed < 0:
        raise ValueError(f"--seed must be 0 or more, got {args.seed}")
    if not args.agents:
        raise ValueError("--agents: name at least one policy spec to score (e.g. --agents heuristic ppo)")
    if args.failures < -1:
        raise ValueError(f"--failures must be -1 (all), 0 (none) or a count, got {args.failures}")
    for spec in args.agents:  # an unknown agent is reported before the suite is proved (seconds) and scored
        load_policy(spec, None, None)
    positions = load_positions(args.file)  # proves every position, or names the first that is not sure
    players = sorted({p.rules.num_players for p in positions})
    sizes = sorted({len(p.hands[0]) for p in positions})
    bids = sum(p.game().phase == "bid" for p in positions)
    print(f"{len(positions)} positions, each proved by exhaustive search ({bids} bids, {len(positions) - bids} plays; "
          f"{', '.join(map(str, players))} players; hands of {', '.join(map(str, sizes))} cards)\n")
    results = [run_suite(spec, positions, seed=args.seed) for spec in args.agents]
    width = max([8, *(len(r.agent) for r in results)])
    print(f"{'agent':<{width}} {'right':>7} {'score':>7}")
    for result in results:
        skipped = f"   ({result.skipped} positions under rules it refuses, not counted)" if result.skipped else ""
        score = f"{result.score:>7.1%}" if result.total else f"{'-':>7}"
        print(f"{result.agent:<{width}} {result.passed:>3}/{result.total:<3} {score}{skipped}")
    for result in results:
        if not result.failures or args.failures == 0:
            continue
        shown = result.failures if args.failures < 0 else result.failures[: args.failures]
        print(f"\n{result.agent}: {len(result.failures)} failures" + (f" (first {len(shown)})" if len(shown) < len(result.failures) else ""))
        for failure in shown:
            print(f"  {failure}")
    return 0
