"""Benchmarks run by ``blackout bench NAME [options]``.

Each benchmark is one module here, ``training/bench/<name>.py``, with
``main(argv: list[str] | None) -> int`` (which parses its own options, so
``blackout bench <name> --help`` lists them); ``blackout bench`` finds the
modules by name, so adding a benchmark is adding one file. A module that
defines ``add_arguments(parser)`` and ``run(args) -> int`` gets its ``main``
from :func:`command`, and writes its ``--json`` figures with :func:`write_json`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pkgutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..files import write_text_atomically

__all__ = ["benchmark_names", "check_output_file", "check_positive", "command", "write_json"]


def benchmark_names() -> list[str]:
    """The benchmarks available to ``blackout bench`` (module names, without importing them; a module
    ``strength_curve`` is the benchmark ``strength-curve``, its underscores written as hyphens)."""
    return sorted(
        info.name.replace("_", "-") for info in pkgutil.iter_modules([str(Path(__file__).parent)])
        if not info.name.startswith("_")
    )


def check_positive(**options: float) -> None:
    """Refuse a count or a length below 1 (or a duration that is not a positive finite number of at least a
    millisecond) before a benchmark starts, naming the option."""
    for name, value in options.items():
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 1:
                raise ValueError(f"--{name.replace('_', '-')} must be positive, got {value}")
        elif not 1e-3 <= value < math.inf:  # (NaN fails too)
            raise ValueError(f"--{name.replace('_', '-')} must be a positive finite number (at least 0.001), got {value}")


def check_output_file(path: str | None, option: str = "--json") -> None:
    """Fail before a benchmark starts (not after it, losing its figures) when ``--json PATH`` cannot be written.

    An existing file must be a writable file; otherwise its folder must exist and
    take a new file (tried with a temporary file, removed at once).
    """
    if path is None:
        return
    target = Path(os.path.realpath(path))  # (a link to a missing file: its target's folder must exist)
    try:
        if target.exists():
            if not target.is_file():
                raise ValueError(f"{option} {path!r} is not a file")
            with target.open("a", encoding="utf-8"):
                pass
        else:
            folder = target.parent
            if not folder.is_dir():
                raise ValueError(f"{option} {path!r}: folder {str(folder)!r} does not exist")
            handle, probe = tempfile.mkstemp(dir=folder, prefix=".bench-write-test.")
            os.close(handle)
            os.unlink(probe)
    except OSError as error:
        raise ValueError(f"{option} {path!r} cannot be written: {error.strerror or error}") from None


def command(
    module: str,
    doc: str | None,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace], int],
) -> Callable[[list[str] | None], int]:
    """The ``main(argv)`` of benchmark ``module`` (its ``__name__``): parse the options ``add_arguments`` declares, then ``run``.

    The program name is ``blackout bench <name>`` and the description the first line of
    the module's docstring ``doc``, so ``blackout bench <name> --help`` reads as the module does.
    """
    if module == "__main__":  # python -m blackout_training.bench.NAME: the module's own name is in its spec
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module = spec.name if spec is not None else module
    name = module.rsplit(".", 1)[-1]
    description = next(iter((doc or "").strip().splitlines()), None)  # no docstrings under python -OO

    def main(argv: list[str] | None = None) -> int:
        parser = argparse.ArgumentParser(prog=f"blackout bench {name}", description=description)
        add_arguments(parser)
        args = parser.parse_args(argv)
        seed = getattr(args, "seed", None)
        if isinstance(seed, int) and seed < 0:  # (each benchmark's generators would say it without the option)
            raise ValueError(f"--seed must be 0 or more, got {seed}")
        return run(args)

    main.__doc__ = f"Run the benchmark from the command line (``python -m blackout_training.bench.{name}``)."
    return main


def write_json(path: str | None, figures: Any) -> None:
    """Write a benchmark's figures to ``--json PATH`` (nothing when ``path`` is None); NaN is refused, not written."""
    if path is None:
        return
    write_text_atomically(path, json.dumps(figures, indent=2, allow_nan=False))  # (NaN refused before a byte is written)
