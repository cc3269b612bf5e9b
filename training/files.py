"""Files written whole or not at all: a temporary file beside the target, moved onto it once complete.

A reader never meets half a file, and a write that fails (an error, Ctrl-C, a full disk) leaves the
target as it was. The temporary file is ``.NAME.XXXXXXXX.tmp`` in the target's folder (the same file
system, so the final move is atomic); a process killed mid-write leaves one of those, never a damaged
target.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["replaced_atomically", "write_text_atomically"]


@contextlib.contextmanager
def replaced_atomically(path: str | os.PathLike[str], binary: bool = False) -> Iterator[IO[Any]]:
    """A file to write ``path``'s new contents to; they replace ``path`` when the block ends normally.

    The target's folder must exist. The file is flushed to disk before the move and made readable
    by others (0644), as an ordinary file is.
    """
    path = Path(path)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, 0o644)  # mkstemp makes the file private
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``path`` whole or not at all (:func:`replaced_atomically`)."""
    with replaced_atomically(path) as file:
        file.write(text)
    return Path(path)
