"""``blackout eval``: a duplicate-deal tournament between named policies.

Example: ``blackout eval --policies heuristic search random --players 4 --deals 2000 --rules standard --out results/``
prints the table and writes ``results.json``, ``results.txt`` and ``results.png`` to ``--out``;
``--game-log games.jsonl`` also writes every game played, one JSON line each (a replay viewer reads it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from blackout_env.game.rules import Rules

from ..cpu import free_cores


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--policies", nargs="+", required=True, metavar="SPEC",
        help="policies: random, heuristic, search, ismcts, search:samples=64, ismcts:simulations=200, random:seed=3, ppo (the shipped generalist, every table), "
        "ppo-standard (the standard 4-player specialist), ppo:PATH, ppo+search, ppo+search-deep, ppo+rollout, rllib:PATH, "
        "openspiel_ismcts[:simulations=N,uct_c=C,redeals=K] (OpenSpiel's IS-MCTS, needs the bench extra); with fewer policies than seats the last one fills the remaining seats",
    )
    parser.add_argument("--players", type=int, default=None, help="number of players (overrides the rules)")
    parser.add_argument("--deals", type=int, default=200, help="duplicate deals, each played once per rotation (default 200)")
    parser.add_argument("--rules", default="standard", help="a preset name or a YAML file (default: standard)")
    parser.add_argument("--hands", action="store_true", help="deal single hands instead of whole matches")
    parser.add_argument("--seating", nargs="+", default=None, metavar="SPEC", help="one policy per seat (default: see --policies)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the policies (default 0)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes (0 = the cores other processes leave free, measured at the start; default 1)")
    parser.add_argument("--out", default=None, help="folder for results.json, results.txt and results.png")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG plot")
    parser.add_argument(
        "--game-log", default=None, metavar="FILE",
        help="write every game played (each deal in each rotation) to FILE, one JSON line each, for replays",
    )
    parser.add_argument(
        "--sprt", default=None, metavar="LOW,HIGH",
        help="stop as soon as a sequential test decides between a difference (first policy minus last, points per hand) "
        "of LOW and of HIGH; --deals is then the most it plays (a negative LOW with '=': --sprt=-0.5,0)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def _check_out(out: str) -> None:
    """Fail before any game when the output folder cannot be written, or a result's name is taken by a folder."""
    from ..evaluation.tournament import check_result_files

    try:
        check_result_files(out)
        probe = Path(out) / ".blackout-eval-write-test"
        probe.write_text("", encoding="utf-8")
        probe.unlink()
    except OSError as error:
        raise ValueError(f"--out {out!r} is not a writable folder: {error.strerror or error}") from None
    except ValueError as error:
        raise ValueError(f"--out: {error}") from None


def run(args: argparse.Namespace) -> int:
    from ..evaluation.game_log import check_game_log_path
    from ..evaluation.sequential import SPRT
    from ..evaluation.tournament import check_tournament, evaluate

    rules = Rules.resolve(args.rules)
    if args.players is not None:
        if not 3 <= args.players <= 7:
            raise ValueError(f"--players must be 3..7, got {args.players}")
        rules = rules.replace(num_players=args.players)
    if args.deals < 1:
        raise ValueError(f"--deals must be at least 1, got {args.deals}")
    if args.workers < 0:
        raise ValueError(f"--workers must be 0 (the free cores) or more, got {args.workers}")
    workers = args.workers if args.workers > 0 else free_cores()
    sprt = SPRT.parse(args.sprt) if args.sprt is not None else None
    if sprt is not None and len(args.policies) < 2:
        raise ValueError("--sprt: needs two policies (the agent first, its opponent last)")
    check_tournament(args.policies, rules, args.deals, args.seed, workers, args.seating)
    if args.game_log is not None:
        check_game_log_path(args.game_log, "--game-log")
    if args.out is not None:
        if not args.out.strip():
            raise ValueError("--out: give a folder for the results (an empty name would write them here)")
        _check_out(args.out)
        if args.game_log is not None:
            from ..evaluation.tournament import RESULT_FILES

            log = Path(args.game_log).resolve()
            taken = [name for name in RESULT_FILES.values() if (Path(args.out) / name).resolve() == log]
            if taken:
                raise ValueError(f"--game-log {args.game_log!r} is --out's {taken[0]}: the results would overwrite "
                                 "the log; name another file")
    result = evaluate(
        args.policies, rules, deals=args.deals, seed=args.seed, workers=workers, hands=args.hands,
        seating=args.seating, progress=not args.no_progress, game_log=args.game_log, sprt=sprt,
    )
    written = []
    if args.out is not None:  # saved before anything is printed: a closed pipe (| head) loses nothing
        try:
            written += result.save(args.out, plot=not args.no_plot).values()
        except ValueError as error:
            raise ValueError(f"--out: {error}") from None
    print(result.table())
    if args.game_log is not None:
        written.append(f"{args.game_log} ({result.deals * len(result.seating)} games)")
    if written:
        print("\nwrote " + ", ".join(str(p) for p in written))
    return 0
