"""Files written whole or not at all: a temporary file beside the target, moved onto it once complete.

A reader never meets half a file, and a write that fails (an error, Ctrl-C, a full disk) leaves the
target as it was. The temporary file is ``.NAME.XXXXXXXX.tmp`` in the target's folder (the same file
system, so the final move is atomic); a process killed mid-write leaves one of those, never a damaged
target. A symbolic link is written through (its target is replaced; the link stays), and a file that
exists keeps its permissions; a new one gets ``mode`` less the process's umask, as ``open`` gives.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["replaced_atomically", "write_text_atomically"]


def _temporary(path: Path, mode: int) -> tuple[int, Path]:
    for _ in range(100):
        temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), temp  # (the umask applies)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")  # pragma: no cover - 100 collisions


@contextlib.contextmanager
def replaced_atomically(path: str | os.PathLike[str], binary: bool = False, mode: int = 0o666) -> Iterator[IO[Any]]:
    """A file to write ``path``'s new contents to; they replace ``path`` when the block ends normally.

    The target's folder must exist. The file is flushed to disk before the move. ``mode``: a new file's
    permissions before the umask (0o600: readable by its owner only, as a game save with every hand is).
    """
    path = Path(os.path.realpath(path))
    handle, temp = _temporary(path, mode)
    try:
        with os.fdopen(handle, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temp, stat.S_IMODE(os.stat(path).st_mode))  # an existing file keeps its permissions
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | os.PathLike[str], text: str, mode: int = 0o666) -> Path:
    """Write ``text`` to ``path`` whole or not at all (:func:`replaced_atomically`)."""
    with replaced_atomically(path, mode=mode) as file:
        file.write(text)
    return Path(path)
