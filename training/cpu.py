"""How many CPU cores this process may use now: the cores it is allowed, less those other processes keep busy.

Torch's (OpenMP's) thread pool waits at every parallel region for all its threads; when another process
holds one of the cores, a thread of the pool waits for the scheduler instead of working, and small
matrix products (a network's inference on a rollout's batch) become 30x slower on a 2-core machine
(docs/training.md, "On a shared machine"). So the trainer, ``blackout eval`` and the server's bots take
as many threads (or processes) as there are free cores, measured from the kernel's counters:

- the allowed cores are ``os.sched_getaffinity(0)`` (a container or ``taskset`` may allow fewer than the
  machine has);
- between two readings of ``/proc/stat``, the busy time of those cores, less this process's own CPU time
  (``os.times``), is what the other processes used; divided by the wall time, it is how many cores they
  kept busy.

Where ``/proc/stat`` does not exist (not Linux), every allowed core counts as free.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from time import monotonic

__all__ = ["CoreMeter", "TorchThreads", "allowed_cores", "free_cores", "parse_threads"]

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_MARGIN = 0.3
"""A core counts as free when the others leave at least 0.7 of it: a thread that must share its core with
another busy process stalls every parallel region, so a partly busy core is left to them."""


def _own_cpu_seconds() -> float:
    """CPU time of this process, every thread's, user and system."""
    times = os.times()
    return times.user + times.system


def allowed_cores() -> list[int]:
    """The CPU cores this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return list(range(os.cpu_count() or 1))


def _busy_ticks(cores: set[int]) -> int | None:
    """Clock ticks the given cores spent busy since boot (every state but idle and iowait), or None."""
    try:
        text = Path("/proc/stat").read_text(encoding="ascii")
    except OSError:
        return None
    busy = 0
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cores:
            values = [int(v) for v in rest.split()[:8]]
            busy += sum(values) - values[3] - values[4]
    return busy


class CoreMeter:
    """The cores other processes kept busy between two readings (the first reading is taken at creation)."""

    def __init__(self) -> None:
        self.cores = allowed_cores()
        self._last = self._read()

    def _read(self) -> tuple[float, int | None, float]:
        return monotonic(), _busy_ticks(set(self.cores)), _own_cpu_seconds()

    def others_busy(self) -> float | None:
        """How many of the allowed cores other processes kept busy since the last call (None: unknown)."""
        now = self._read()
        (then, busy_then, own_then), (at, busy, own) = self._last, now
        self._last = now
        if busy is None or busy_then is None or at - then < 0.05:
            return None
        others = (busy - busy_then) / _CLOCK_TICKS - (own - own_then)
        return max(0.0, others / (at - then))

    def free_cores(self) -> int:
        """The allowed cores the other processes left free since the last reading (at least 1)."""
        others = self.others_busy()
        if others is None:
            return len(self.cores)
        return max(1, min(len(self.cores), math.floor(len(self.cores) - others + _MARGIN)))


def free_cores(sample_s: float = 0.3) -> int:
    """The allowed cores that other processes leave free, measured over ``sample_s`` seconds from now."""
    meter = CoreMeter()
    time.sleep(sample_s)
    return meter.free_cores()


MAX_THREADS = 1024
"""The most torch threads a setting may ask for: more is a typo (tens of thousands crash the process in OpenMP,
with no message)."""


def parse_threads(value: object, name: str) -> int | None:
    """A thread (or worker) count setting: a whole number 1..:data:`MAX_THREADS`, or ``"auto"`` (None: follow
    the free cores)."""
    if value == "auto":
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_THREADS:
        raise ValueError(f"{name}: a whole number of threads 1..{MAX_THREADS}, or auto (the free cores), got {value!r}")
    return value


class TorchThreads:
    """Torch's CPU threads for a run: a fixed number, or (``"auto"``) the free cores, measured again every
    ``every_s`` seconds at the run's own :meth:`tick` calls (between two rollout steps, two minibatches).

    Torch's thread count is per calling thread for OpenMP, so the training loop itself calls :meth:`tick`;
    a change is kept in :attr:`changes` (seconds since the start, threads) for the log.
    """

    def __init__(self, setting: object, name: str = "run.threads", every_s: float = 0.5) -> None:
        self.fixed = parse_threads(setting, name)
        self.every_s = every_s
        self.changes: list[tuple[float, int]] = []
        self._started = monotonic()
        self._meter: CoreMeter | None = None
        self._checked = 0.0

    def start(self) -> int:
        """Set torch's threads for the start of the run (the free cores now, for auto); the number set."""
        import torch

        threads = self.fixed if self.fixed is not None else free_cores()
        torch.set_num_threads(threads)
        self._meter, self._checked = CoreMeter(), monotonic()
        return threads

    def tick(self) -> None:
        """Follow the free cores (auto only; at most once every ``every_s`` seconds)."""
        if self.fixed is not None or self._meter is None:
            return
        now = monotonic()
        if now - self._checked < self.every_s:
            return
        self._checked = now
        import torch

        threads = self._meter.free_cores()
        if threads != torch.get_num_threads():
            torch.set_num_threads(threads)
            self.changes.append((now - self._started, threads))
