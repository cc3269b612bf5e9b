"""Paired differences, deal by deal, between agents of `blackout bench openspiel_ismcts` JSON files.

    python docs/data/paired_ablation.py --reference ppo+search FILE [FILE ...]
    python docs/data/paired_ablation.py --reference field FILE [FILE ...]

Each file is one sitting (its seed names the deals). For every agent other than the reference, and
every seed where both sat, each deal's difference (agent minus field) less the reference's on the
same deal; printed per seed and pooled over the seeds, the mean per hand with a 95% t-interval.
``--reference field``: each agent's own differences against the field, unpaired, pooled the same way.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict

from scipy import stats


def interval(values: list[float]) -> str:
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)
    return f"{mean:+.2f} [{mean - half:+.2f}, {mean + half:+.2f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", required=True,
                        help="the agent every other is paired with ('field': none, each agent against the field)")
    parser.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    by_seed: dict[int, dict[str, list[float]]] = defaultdict(dict)
    for path in args.files:
        with open(path, encoding="utf-8") as handle:
            sitting = json.load(handle)
        for row in sitting["rows"]:
            if row["agent"] in by_seed[sitting["seed"]]:
                raise SystemExit(f"{path}: {row['agent']} on seed {sitting['seed']} again (a sitting given twice?)")
            by_seed[sitting["seed"]][row["agent"]] = row["per_deal_differences"]
    pooled: dict[str, list[float]] = defaultdict(list)
    for seed, agents in sorted(by_seed.items()):
        base = None if args.reference == "field" else agents.get(args.reference)
        if base is None and args.reference != "field":
            print(f"seed {seed}: no {args.reference} row; skipped", file=sys.stderr)
            continue
        for agent, values in agents.items():
            if agent == args.reference:
                continue
            if base is None:
                diffs = list(values)
            elif len(values) != len(base):
                raise SystemExit(f"seed {seed}: {agent} has {len(values)} deals, {args.reference} {len(base)}")
            else:
                diffs = [a - b for a, b in zip(values, base)]
            pooled[agent] += diffs
            print(f"seed {seed:>3}  {agent:<36} {len(diffs):>4} deals  {interval(diffs)}")
    for agent, diffs in pooled.items():
        print(f"pooled    {agent:<36} {len(diffs):>4} deals  {interval(diffs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
