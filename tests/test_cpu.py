"""The free cores (blackout_training.cpu): what other processes keep busy, and torch's threads following it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from blackout_training import cpu


class FakeClock:
    """Readings of /proc/stat and os.times that a test sets: busy ticks of the allowed cores, this process's
    CPU seconds, the wall clock."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, cores: int = 2) -> None:
        self.busy, self.own, self.now = 0, 0.0, 1000.0
        monkeypatch.setattr(cpu, "allowed_cores", lambda: list(range(cores)))
        monkeypatch.setattr(cpu, "_busy_ticks", lambda allowed: self.busy)
        monkeypatch.setattr(cpu, "_CLOCK_TICKS", 100)
        monkeypatch.setattr(cpu, "_own_cpu_seconds", lambda: self.own)
        monkeypatch.setattr(cpu, "monotonic", lambda: self.now)

    def advance(self, seconds: float, others: float, own: float) -> None:
        """``seconds`` of wall time in which other processes used ``others`` cores and this one ``own``."""
        self.now += seconds
        self.own += own * seconds
        self.busy += round((others + own) * seconds * 100)


@pytest.mark.parametrize("others, free", [(0.0, 2), (0.3, 2), (0.6, 1), (1.0, 1), (1.7, 1), (2.0, 1)])
def test_a_core_counts_as_free_only_when_the_others_leave_most_of_it(monkeypatch, others, free):
    clock = FakeClock(monkeypatch)
    meter = cpu.CoreMeter()
    clock.advance(1.0, others=others, own=min(2.0 - others, 1.0))
    assert meter.free_cores() == free


def test_this_processs_own_work_is_not_counted_as_the_others(monkeypatch):
    clock = FakeClock(monkeypatch)
    meter = cpu.CoreMeter()
    clock.advance(2.0, others=0.0, own=2.0)  # both cores busy with this process's own threads
    assert meter.others_busy() == pytest.approx(0.0) and meter.free_cores() == 2


def test_without_the_kernels_counters_every_allowed_core_is_free(monkeypatch):
    monkeypatch.setattr(cpu, "_busy_ticks", lambda allowed: None)
    assert cpu.CoreMeter().free_cores() == len(cpu.allowed_cores())


def test_a_busy_process_is_seen(tmp_path):
    if cpu._busy_ticks({0}) is None:
        pytest.skip("no /proc/stat on this system")
    loop = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        meter = cpu.CoreMeter()
        time.sleep(1.0)
        assert meter.others_busy() >= 0.7  # the loop's core (and whatever else runs here)
    finally:
        loop.kill()
        loop.wait()


def test_auto_threads_follow_the_free_cores_and_a_fixed_count_stays(monkeypatch):
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        clock = FakeClock(monkeypatch)
        monkeypatch.setattr(cpu, "free_cores", lambda sample_s=0.3: 2)
        threads = cpu.TorchThreads("auto")
        assert threads.start() == 2 and torch.get_num_threads() == 2
        clock.advance(0.2, others=1.0, own=1.0)
        threads.tick()  # under half a second since the last check: nothing measured yet
        assert torch.get_num_threads() == 2
        clock.advance(0.5, others=1.0, own=1.0)
        threads.tick()
        assert torch.get_num_threads() == 1 and threads.changes == [(pytest.approx(0.7), 1)]
        clock.advance(1.0, others=0.0, own=1.0)  # the other process went away
        threads.tick()
        assert torch.get_num_threads() == 2 and [count for _, count in threads.changes] == [1, 2]

        fixed = cpu.TorchThreads(2)
        assert fixed.start() == 2
        clock.advance(1.0, others=2.0, own=0.0)
        fixed.tick()
        assert torch.get_num_threads() == 2 and fixed.changes == []
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("value", [0, -1, 1.5, "two", True, None, 100_000])
def test_a_bad_thread_setting_is_refused_naming_it(value):
    with pytest.raises(ValueError, match="run.threads: a whole number of threads 1..1024, or auto"):
        cpu.parse_threads(value, "run.threads")


def test_the_shared_machine_script_times_an_evaluation_and_a_web_bot(tmp_path):
    import json
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "docs" / "data" / "shared_machine.py"
    out = tmp_path / "shared.json"
    subprocess.run([sys.executable, str(script), "--busy-cores", "0", "--deals", "1", "--moves", "3", "--json",
                    str(out)], check=True, capture_output=True, timeout=240)
    (row,) = json.loads(out.read_text())["rows"]
    assert row["busy_cores"] == 0 and row["eval_s"] > 0 and row["web_ppo_move_ms"] > 0
