"""The file of a counted model (the bid model, the play model): its counts and smoothing as JSON, read back
with a clear error for a missing, foreign or corrupt file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

Model = TypeVar("Model")


def save_counts(path: str | Path, file_format: str, model: Any) -> None:
    """Write ``model``'s ``counts``, ``smoothing``, ``floor`` and ``source`` as a ``file_format`` file of version 1."""
    data = {"format": file_format, "version": 1, "source": model.source, "smoothing": model.smoothing,
            "floor": model.floor, "counts": _plain(np.asarray(model.counts).tolist())}
    Path(path).write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")


def _plain(values: Any) -> Any:
    """Nested lists of floats with the whole numbers written as integers."""
    if isinstance(values, list):
        return [_plain(value) for value in values]
    return int(values) if float(values).is_integer() else values


def load_counts(cls: type[Model], path: str | Path, file_format: str, what: str) -> Model:
    """The ``cls`` model saved at ``path`` by :func:`save_counts`; ``what`` names it in the errors."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(f"{what} {str(path)!r}: cannot be read ({error})") from None
    if not isinstance(data, dict) or data.get("format") != file_format or data.get("version") != 1:
        raise ValueError(f"{what} {str(path)!r}: not a {file_format} file of version 1")
    try:
        return cls(np.array(data["counts"], dtype=float), smoothing=float(data["smoothing"]),
                   floor=float(data["floor"]), source=str(data.get("source", "")))
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{what} {str(path)!r}: corrupt ({error})") from None
