"""The ``blackout`` command: ``blackout rules | demo | eval | ladder | positions | train | expert | play | serve | bench | belief | dataset``.

Each subcommand lives in its own module with ``add_arguments(parser)`` and
``run(args) -> int``; this file only wires them, importing a module when its
subcommand runs (so ``blackout rules`` never imports torch).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import signal
import sys
import threading
from typing import Any

from blackout_env.agents.policies import TRAIN_EXTRA_HINT

TRAIN_EXTRA_MODULES = ("torch", "tensorboard")
"""Modules of the train extra: a command that misses one says how to install it."""

# subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "rules": ("blackout_training.cli.rules", "print a rules preset in words, or list the presets"),
    "demo": ("blackout_training.cli.demo", "play a match among random players and print the score sheet"),
    "bench": ("blackout_training.cli.bench", "benchmarks: blackout bench engine | aec | ... (decisions per second)"),
    "eval": ("blackout_training.cli.eval", "a duplicate-deal tournament between policies: table, JSON and plot"),
    "train": ("blackout_training.cli.train", "train a PPO policy by self-play from a YAML config (--set KEY=VALUE overrides)"),
    "expert": ("blackout_training.cli.expert", "expert iteration: play ppo+search into shards, distill them into the network"),
    "ladder": ("blackout_training.cli.ladder", "a rating ladder of agents at mixed tables in one SQLite file: run | add | remove | show | export"),
    "positions": ("blackout_training.cli.positions", "the suite of obvious positions (each proved by exhaustive search) and each agent's score"),
    "play": ("blackout_training.cli.play", "play in the terminal against bots or trained policies (saves, resumes)"),
    "serve": ("blackout_training.cli.serve", "play in the browser, watch agents play and replay games: a local web server"),
    "belief": ("blackout_training.cli.belief", "the bid and play models behind the search's inferred hidden cards: fit | eval"),
    "dataset": ("blackout_training.cli.dataset", "Minari datasets of one seat's matches: create, list, show, delete, clone, from-log"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="blackout", description="Blackout (Oh Hell) reinforcement-learning toolkit")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        module = importlib.import_module(module_name)
        module.add_arguments(sub)
        sub.set_defaults(_module=module_name)
    return parser


_MAIN_PID = os.getpid()

EXIT_GRACE_SECONDS = 30.0
"""After SIGTERM, the longest the cleanup and Python's own exit may take before the process ends anyway, with
the same status: an exit can wait for ever on a thread the run does not own (Python joins a process pool's
manager thread at exit, after the run has stopped the pool's workers)."""


def _terminated(signum: int, frame: Any) -> None:
    """SIGTERM (``kill``, a scheduler stopping a job) as an exit that runs the cleanup an interrupt runs
    (a half-written dataset's staging folder and temporary files removed, worker processes stopped).

    A second SIGTERM during that cleanup ends the process at once (the default), and so does the
    first in a forked worker, which inherits the handler (a pool stops its workers with SIGTERM). A process
    still running :data:`EXIT_GRACE_SECONDS` later is ended then, with the same status.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if os.getpid() != _MAIN_PID:
        os.kill(os.getpid(), signal.SIGTERM)
        return
    deadline = threading.Timer(EXIT_GRACE_SECONDS, _end_now, (128 + signum,))
    deadline.daemon = True
    deadline.start()
    raise _Terminated(128 + signum)


def _end_now(status: int) -> None:
    """The process still running :data:`EXIT_GRACE_SECONDS` after SIGTERM: end it, saying so."""
    with contextlib.suppress(Exception):
        print(f"blackout: still running {EXIT_GRACE_SECONDS:g} s after SIGTERM; ending now", file=sys.stderr,
              flush=True)
    os._exit(status)


class _Terminated(SystemExit):
    """The exit :func:`_terminated` raises (a SystemExit: the same status, cleanup and tests)."""


def _redeliver(unraisable: Any) -> None:
    """``sys.unraisablehook`` while SIGTERM is handled: a handler that ran inside a weakref callback or a
    ``__del__`` (where Python reports an exception and drops it) is run again 10 ms later, in the code
    that was running; without this a run went on writing its dataset after ``kill``. Others go to the
    previous hook."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and not isinstance(unraisable.exc_value, _Terminated):
        if _running and os.getpid() == _MAIN_PID:  # Ctrl-C met the same fate: a run went on after it
            timer = threading.Timer(0.01, _interrupt_again)
            timer.daemon = True
            timer.start()
            return
    if not isinstance(unraisable.exc_value, _Terminated):
        _previous_unraisablehook(unraisable)
        return
    signal.signal(signal.SIGTERM, _terminated)
    timer = threading.Timer(0.01, _send_again)
    timer.daemon = True
    timer.start()


def _interrupt_again() -> None:
    if _running and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        os.kill(os.getpid(), signal.SIGINT)


_running = False
"""Whether :func:`main` is running a command with the handlers above (a late timer sends nothing after it)."""


def _send_again() -> None:
    if signal.getsignal(signal.SIGTERM) is _terminated:  # (not if the run has ended meanwhile)
        os.kill(os.getpid(), signal.SIGTERM)


_previous_unraisablehook = sys.unraisablehook


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    module = importlib.import_module(args._module)
    # (only where SIGTERM has its default action: an ignored one, or a handler of the caller, is kept)
    handle = (threading.current_thread() is threading.main_thread()
              and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    if handle:
        global _MAIN_PID, _previous_unraisablehook, _running
        _MAIN_PID, _running = os.getpid(), True
        _previous_unraisablehook = sys.unraisablehook
        signal.signal(signal.SIGTERM, _terminated)
        sys.unraisablehook = _redeliver
    try:
        return int(module.run(args) or 0)
    except BrokenPipeError:  # output piped into `head` and the like: not an error
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps Python's exit flush quiet
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except ValueError as error:  # bad configs, rules, files: a clear message, no traceback
        print(f"blackout {args.command}: error: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:  # torch (or TensorBoard) missing: say which extra to install
        if (error.name or "").split(".")[0] not in TRAIN_EXTRA_MODULES:
            raise
        print(f"blackout {args.command}: error: needs {error.name!r}, which is not installed: {TRAIN_EXTRA_HINT}",
              file=sys.stderr)
        return 2
    finally:
        if handle:
            _running = False
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            sys.unraisablehook = _previous_unraisablehook
