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
