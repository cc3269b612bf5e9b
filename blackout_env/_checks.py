"""Argument checks shared by the parts of :mod:`blackout_env` (one wording for one kind of mistake)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def check_choice(name: str, value: Any, allowed: Sequence[Any], error: type[ValueError] = ValueError) -> Any:
    """``value`` when it is one of ``allowed``, else ``error`` saying "NAME: must be one of A, B; got VALUE"."""
    if value not in allowed:
        raise error(f"{name}: must be one of {', '.join(map(str, allowed))}; got {value!r}")
    return value


def check_number(name: str, value: Any) -> float:
    """``value`` as a float when it is a finite number (not a bool), else a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not np.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    return float(value)


def check_seed(seed: Any, name: str = "seed", generator: bool = True) -> None:
    """Raise a ValueError naming ``name`` unless ``seed`` is None, an int >= 0 (or, with
    ``generator``, a ``numpy.random.Generator``): the one check of a ``seed`` argument."""
    if seed is None or (generator and isinstance(seed, np.random.Generator)):
        return
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        kinds = "an int >= 0, a numpy Generator or None" if generator else "an int >= 0 or None"
        raise ValueError(f"{name}: expected {kinds}, got {seed!r}")
