"""``blackout bench NAME [options]``: run a benchmark from ``training/bench``.

``blackout bench engine --help`` shows a benchmark's own options. The module
is imported only when its benchmark runs, so one benchmark's optional
dependencies never burden the others (or the rest of the CLI).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from blackout_training.bench import benchmark_names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = benchmark_names()
    spelled = [*names, *(name.replace("-", "_") for name in names if "-" in name)]  # (the module's own name too)
    parser.add_argument("name", nargs="?", choices=spelled, metavar="NAME", help="the benchmark: " + ", ".join(names))
    parser.add_argument(
        "options", nargs=argparse.REMAINDER, help="options of the benchmark (see blackout bench NAME --help)"
    )


def run(args: argparse.Namespace) -> int:
    if args.name is None:
        names = benchmark_names()
        print(
            f"blackout bench: name a benchmark: {', '.join(names)}\n"
            f"(blackout bench NAME --help lists its options, e.g. blackout bench {names[0]} --help)",
            file=sys.stderr,
        )
        return 2
    module = importlib.import_module(f"blackout_training.bench.{args.name.replace('-', '_')}")
    return int(module.main(args.options) or 0)
