"""``blackout bench NAME [options]``: run a benchmark from ``training/bench``.

``blackout bench engine --help`` shows a benchmark's own options. The module
is imported only when its benchmark runs, so one benchmark's optional
dependencies never burden the others (or the rest of the CLI).
"""

from __future__ import annotations

import argparse
import importlib

from blackout_training.bench import benchmark_names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = benchmark_names()
    parser.add_argument("name", choices=names, metavar="NAME", help="the benchmark: " + ", ".join(names))
    parser.add_argument(
        "options", nargs=argparse.REMAINDER, help="options of the benchmark (see blackout bench NAME --help)"
    )


def run(args: argparse.Namespace) -> int:
    module = importlib.import_module(f"blackout_training.bench.{args.name}")
    return int(module.main(args.options) or 0)
