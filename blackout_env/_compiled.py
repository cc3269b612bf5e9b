"""The loader of the batched engine's numba kernels (:mod:`blackout_env._batched_kernels`), and whether numba is there.

Importing the kernels imports numba, so nothing imports them at module level:
the batched engine and its encoder call :func:`kernels` when they run compiled.
"""

from __future__ import annotations

import importlib
from typing import Any

_KERNELS: list[Any] = []


def numba_available() -> bool:
    """Whether numba can be imported (the ``fast`` extra), so that the compiled paths can run.

    The batched engine's kernels and the search bot's compiled playouts both ask here.
    """
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def kernels() -> Any:
    """The kernels module, imported on first use; a clear ImportError where numba cannot be imported."""
    if not _KERNELS:
        try:
            module = importlib.import_module("blackout_env._batched_kernels")
        except ImportError as error:  # e.g. a compiled engine unpickled where numba is missing
            raise ImportError(
                f"this batched engine runs compiled (compiled=True) but numba cannot be imported ({error}); "
                'install the fast extra (pip install "blackout-rl[fast]")'
            ) from None
        _KERNELS.append(module)
    return _KERNELS[0]
