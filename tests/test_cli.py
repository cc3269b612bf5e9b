"""The ``blackout`` command runs end to end."""

import subprocess
import sys
import time

import pytest
from blackout_training.cli import main


def test_rules_prints_the_standard_preset_in_words(capsys):
    assert main(["rules", "standard"]) == 0
    out = capsys.readouterr().out
    assert "Dealer's hook" in out and "10, 9, 8" in out


def test_rules_list_names_every_preset(capsys):
    assert main(["rules", "--list"]) == 0
    names = capsys.readouterr().out.split()
    assert {"standard", "no-trump", "trump-must-break", "full-deck", "minus-scoring", "short", "long"} <= set(names)


def test_unknown_preset_is_a_clear_error(capsys):
    assert main(["rules", "no-such-preset"]) == 2
    assert "unknown rules preset 'no-such-preset'" in capsys.readouterr().err


def test_demo_prints_a_score_sheet_through_the_console_script():
    result = subprocess.run(
        [sys.executable, "-m", "blackout_training.cli", "demo", "--seed", "3"], capture_output=True, text=True, check=True
    )
    assert "total" in result.stdout and "winner" in result.stdout


def test_six_and_seven_players_work_with_the_default_rules(tmp_path, capsys):
    import blackout_env

    seven = blackout_env.env(rules={"num_players": 7})
    seven.reset(seed=0)
    assert seven.unwrapped.game.hand_size == 7 and len(seven.agents) == 7
    assert main(["demo", "--players", "7", "--seed", "1"]) == 0
    assert "A match of 7 random players (7 hands)" in capsys.readouterr().out
    save = tmp_path / "six.json"
    assert main(["play", "--players", "6", "--humans", "0", "--bots", "random", "--seed", "2", "--save", str(save)]) == 0
    assert "Game over" in capsys.readouterr().out
    assert main(["eval", "--players", "7", "--policies", "random", "heuristic", "--deals", "1", "--hands",
                 "--no-progress"]) == 0
    assert "heuristic" in capsys.readouterr().out


def test_a_rules_path_that_is_a_folder_is_a_one_line_error(capsys):
    assert main(["demo", "--rules", "/etc"]) == 2
    err = capsys.readouterr().err
    assert "rules file '/etc' is a folder" in err and "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["demo", "--seed", "-1"], "--seed must be 0 or more, got -1"),
    (["play", "--resume", "--new"], "--resume and --new: give one"),
    (["play", "--humans", "0", "--hot-seat", "--save", "{file}.json"], "--hot-seat: hides each person's hand"),
    (["play", "--players", "3", "--humans", "3", "--bots", "search", "--save", "{file}.json"],
     "--bots: every seat of the 3 is a person"),
    (["play", "--bots", "", "--save", "{file}.json"], "--bots: empty policy name"),
    (["ladder", "run", "{file}.db", "--agents", "random", "heuristic", "search", "--players", "3", "--sprt", "0,1"],
     "--sprt and --pairwise-deals are for the pairwise matches: give --pairwise K too"),
    (["ladder", "run", "{file}.db", "--agents", "random", "heuristic", "search", "--players", "3", "--pairwise-deals",
      "100"], "--sprt and --pairwise-deals are for the pairwise matches: give --pairwise K too"),
    (["eval", "--policies", "random", "--deals", "1", "--out", ""], "--out: give a folder for the results"),
    (["belief", "fit", "--out", "{file}/b.json", "--policy", "heuristic", "--hands", "5"], "--out '{file}/b.json': "),
    (["belief", "fit", "--out", "{file}.json", "--policy", "random", "--hands", "5", "--seed", "-1"],
     "--seed must be 0 or more, got -1"),
    (["belief", "eval", "--policy", "random", "--hands", "5", "--seed", "-1"], "--seed must be 0 or more, got -1"),
    (["train", "--config", "configs/train/tiny.yaml", "--init-dataset", "x/y-v0", "--init-epochs", "0"],
     "--init-epochs must be at least 1, got 0"),
])
def test_options_a_command_cannot_honour_are_one_line_naming_them(argv, message, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    argv = [arg.format(file=afile) for arg in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message.format(file=afile) in captured.err and "Traceback" not in captured.err
    assert len(captured.err.strip().splitlines()) == 1 and afile.read_text() == "x"


SIGNAL_IN_A_CALLBACK = """
import os, signal, sys, time, weakref
import blackout_training.cli as cli
cli._MAIN_PID, cli._running = os.getpid(), True
number = getattr(signal, sys.argv[2])
if number == signal.SIGTERM:
    signal.signal(signal.SIGTERM, cli._terminated)
if sys.argv[1] == "hook":
    sys.unraisablehook = cli._redeliver
def callback(ref):
    signal.raise_signal(number)  # its handler raises inside this callback, where Python drops the exception
    for _ in range(1000):
        len([])
class Thing:
    pass
thing = Thing()
ref = weakref.ref(thing, callback)
try:
    del thing
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        time.sleep(0.001)
    print("went on")
except KeyboardInterrupt:
    print("interrupted")
"""


def _signal_in_a_callback(hook: str, signal_name: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SIGNAL_IN_A_CALLBACK, hook, signal_name], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("hook", ["hook", "none"])
def test_a_sigterm_dropped_by_a_weakref_callback_is_delivered_again(hook):
    """The handler's exit raised inside a weakref callback (as happened under h5py's writes) is dropped by
    Python; the CLI's unraisable hook sends SIGTERM again, so the run still stops (without it: it went on)."""
    done = _signal_in_a_callback(hook, "SIGTERM")
    if hook == "hook":
        assert done.returncode == 143 and "went on" not in done.stdout and not done.stderr
    else:
        assert done.returncode == 0 and "went on" in done.stdout and "Exception ignored" in done.stderr


@pytest.mark.parametrize("hook", ["hook", "none"])
def test_a_ctrl_c_dropped_by_a_weakref_callback_is_delivered_again(hook):
    done = _signal_in_a_callback(hook, "SIGINT")
    if hook == "hook":
        assert done.stdout.strip() == "interrupted" and not done.stderr
    else:
        assert "went on" in done.stdout and "Exception ignored" in done.stderr


SIGTERM_THEN_AN_EXIT_THAT_WAITS = """
import os, signal, sys, threading, time
import blackout_training.cli as cli
cli._MAIN_PID = os.getpid()
cli.EXIT_GRACE_SECONDS = float(sys.argv[1])
signal.signal(signal.SIGTERM, cli._terminated)
threading.Thread(target=time.sleep, args=(600,)).start()  # Python's exit waits for it, as for a pool's thread
signal.raise_signal(signal.SIGTERM)
"""


def test_a_process_whose_exit_waits_after_sigterm_ends_when_the_grace_runs_out():
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", SIGTERM_THEN_AN_EXIT_THAT_WAITS, "1"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 143 and "still running 1 s after SIGTERM; ending now" in done.stderr
    assert time.monotonic() - start < 30
    with pytest.raises(subprocess.TimeoutExpired):  # without the grace's end, the exit waits for the thread
        subprocess.run([sys.executable, "-c", SIGTERM_THEN_AN_EXIT_THAT_WAITS, "600"], capture_output=True,
                       timeout=8)


def test_a_command_runs_with_the_redelivering_hook_and_restores_the_one_before(monkeypatch):
    import importlib
    import signal

    import blackout_training.cli as cli

    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the CLI handles SIGTERM only over the default
    seen = []
    module = importlib.import_module(cli.SUBCOMMANDS["rules"][0])
    monkeypatch.setattr(module, "run", lambda args: seen.append((sys.unraisablehook, signal.getsignal(signal.SIGTERM))))
    before = sys.unraisablehook
    try:
        assert main(["rules", "standard"]) == 0
        assert seen == [(cli._redeliver, cli._terminated)]
        assert sys.unraisablehook is before and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        signal.signal(signal.SIGTERM, previous)
