"""The one check of a ``seed`` argument, shared by the engine, the envs and the batched engine."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_seed(seed: Any, name: str = "seed", generator: bool = True) -> None:
    """Raise a ValueError naming ``name`` unless ``seed`` is None, an int >= 0 (or, with
    ``generator``, a ``numpy.random.Generator``)."""
    if seed is None or (generator and isinstance(seed, np.random.Generator)):
        return
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        kinds = "an int >= 0, a numpy Generator or None" if generator else "an int >= 0 or None"
        raise ValueError(f"{name}: expected {kinds}, got {seed!r}")
