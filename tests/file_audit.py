"""Which files a block of code opens: a process-wide audit hook (PEP 578) that records only inside
:func:`files_opened`, so the tests that a client can never make the server open a path can fail."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

_recording: list[list[str]] = []
_installed = False


def _hook(event: str, args: tuple) -> None:
    if _recording and event in ("open", "os.open", "io.open"):
        _recording[-1].append(str(args[0]))


@contextmanager
def files_opened() -> Iterator[list[str]]:
    """The paths opened (by ``open``, ``Path.open``, ``os.open``...) while the block runs, in order."""
    global _installed
    if not _installed:  # an audit hook cannot be removed: install one for the whole test run, idle outside
        sys.addaudithook(_hook)
        _installed = True
    opened: list[str] = []
    _recording.append(opened)
    try:
        yield opened
    finally:
        _recording.pop()
