"""The loader of the compiled core (:mod:`blackout_env.batched._kernels`), and whether numba is there.

numba is a dependency of blackout-rl, but importing it takes a while, so nothing imports
the kernels at module level: the batched engine and its encoder call :func:`kernels`.
"""

from __future__ import annotations

import importlib
from typing import Any

_KERNELS: list[Any] = []


def numba_available() -> bool:
    """Whether numba can be imported (a dependency; False only in a broken install)."""
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def kernels() -> Any:
    """The kernels module, imported on first use; a clear ImportError where numba cannot be imported."""
    if not _KERNELS:
        try:
            module = importlib.import_module("blackout_env.batched._kernels")
        except ImportError as error:  # e.g. a compiled engine unpickled where numba is missing
            raise ImportError(
                f"the compiled core (batched engine, observation encoder, IS-MCTS simulations) is compiled with numba, "
                f"which cannot be imported ({error}); "
                "numba is a dependency of blackout-rl: reinstall it (pip install blackout-rl, or pip install numba)"
            ) from None
        _KERNELS.append(module)
    return _KERNELS[0]
