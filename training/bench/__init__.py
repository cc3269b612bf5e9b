"""Benchmarks run by ``blackout bench NAME [options]``.

Each benchmark is one module here, ``training/bench/<name>.py``, with
``main(argv: list[str] | None) -> int`` (which parses its own options, so
``blackout bench <name> --help`` lists them); ``blackout bench`` finds the
modules by name, so adding a benchmark is adding one file.
"""

from __future__ import annotations

import pkgutil
from pathlib import Path

__all__ = ["benchmark_names"]


def benchmark_names() -> list[str]:
    """The benchmarks available to ``blackout bench`` (module names, without importing them)."""
    return sorted(
        info.name for info in pkgutil.iter_modules([str(Path(__file__).parent)]) if not info.name.startswith("_")
    )
