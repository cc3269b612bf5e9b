"""``blackout ladder run | add | remove | show | export``: a rating ladder of agents at mixed tables, in one SQLite file.

Example: ``blackout ladder run ladder.db --agents random heuristic search ppo --deals 50`` creates the
ladder (or resumes it), plays every table's missing deals and prints the leaderboard;
``blackout ladder add ladder.db ismcts`` plays only the new agent's tables;
``blackout ladder remove ladder.db ismcts`` takes an agent off with its tables' games;
``blackout ladder show ladder.db``; ``blackout ladder export ladder.db --out docs/data/ladder``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys

from blackout_env.agents.policies import absolute_paths
from blackout_env.game.rules import Rules

AGENTS_HELP = (
    "policy specs: random, heuristic, search, ismcts, search:samples=64, ppo, ppo-standard, ppo:PATH, ppo+search, ppo+search-deep, "
    "ppo+rollout, openspiel_ismcts[:simulations=N,uct_c=C,redeals=K] (OpenSpiel's IS-MCTS, an external anchor; needs "
    "the bench extra), or a name registered in the blackout.policies entry points"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="ladder_command", metavar="ACTION")
    commands.required = True

    run = commands.add_parser("run", help="create or resume a ladder: play every table's missing deals")
    run.add_argument("file", help="the ladder's SQLite file (created when it does not exist)")
    run.add_argument("--agents", nargs="+", metavar="SPEC", default=None,
                     help=f"{AGENTS_HELP}; needed to create a ladder, optional when resuming (then the same set)")
    run.add_argument("--rules", default=None, help="a preset name or a YAML file (default: standard; fixed at creation)")
    run.add_argument("--players", type=int, default=None, help="seats per table (overrides the rules; fixed at creation)")
    run.add_argument("--hands", action="store_true", help="single hands instead of whole matches (fixed at creation)")
    run.add_argument("--seed", type=int, default=None, help="seed of the deals and the bots (default 0; fixed at creation)")
    run.add_argument("--deals", type=int, default=None,
                     help="deals per table, each played in every rotation (default 20 at creation; more deals resume)")
    run.add_argument("--pairwise", type=int, default=0, metavar="K",
                     help="then play each of the K best agents against copies of each other one (default 0: none)")
    run.add_argument("--pairwise-deals", type=int, default=None, metavar="N",
                     help="duplicate deals per pair for --pairwise (default 100; with --sprt the most it plays)")
    run.add_argument("--positions", action="store_true",
                     help="also score every agent on the suite of obvious positions (blackout positions)")
    run.add_argument("--sprt", default=None, metavar="LOW,HIGH",
                     help="--pairwise stops each pair as soon as a sequential test decides between a difference of LOW "
                     "and of HIGH points per hand")
    _common(run)

    add = commands.add_parser("add", help="add an agent to a ladder and play only its tables")
    add.add_argument("file", help="the ladder's SQLite file")
    add.add_argument("spec", help=AGENTS_HELP)
    add.add_argument("--name", default=None, help="the agent's name in the ladder (default: its spec)")
    _common(add)

    remove = commands.add_parser(
        "remove", help="take an agent off a ladder with the games of its tables (the others' ratings are recomputed)"
    )
    remove.add_argument("file", help="the ladder's SQLite file")
    remove.add_argument("name", help="the agent's name in the ladder (as `blackout ladder show` prints it)")

    show = commands.add_parser("show", help="print a ladder's leaderboard")
    show.add_argument("file", help="the ladder's SQLite file")

    export = commands.add_parser("export", help="write a ladder's leaderboard as ladder.md and ladder.json")
    export.add_argument("file", help="the ladder's SQLite file")
    export.add_argument("--out", required=True, help="folder for ladder.md and ladder.json")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workers", type=int, default=1, help="processes (0 = every core; default 1)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress line")


def _workers(value: int) -> int:
    if value < 0:
        raise ValueError(f"--workers must be 0 (every core) or more, got {value}")
    return value if value > 0 else (os.cpu_count() or 1)


def _progress(enabled: bool):
    if not enabled:
        return None

    def report(done: int, total: int) -> None:
        print(f"\r{done}/{total} units (table x deal)", end="" if done < total else "\n", file=sys.stderr, flush=True)

    return report


@contextlib.contextmanager
def _line_ended(progress: bool):
    """End the progress line when the run stops early (Ctrl-C, an error), so the message starts a line."""
    try:
        yield
    except BaseException:
        if progress:
            print(file=sys.stderr, flush=True)
        raise


def _create_or_open(args: argparse.Namespace):
    from ..evaluation.ladder import LadderError, create_ladder, open_ladder

    if args.deals is not None and args.deals < 1:
        raise ValueError(f"--deals must be at least 1, got {args.deals}")
    if os.path.exists(args.file):
        ladder = open_ladder(args.file)
        settings = {"--rules": args.rules, "--players": args.players, "--seed": args.seed}
        try:
            if args.rules is not None or args.players is not None:
                rules = Rules.resolve(args.rules or ladder.rules)
                if args.players is not None:
                    rules = rules.replace(num_players=args.players)
                if rules != ladder.rules:
                    given = " ".join(f"{k} {v}" for k, v in settings.items() if v is not None and k != "--seed")
                    raise LadderError(f"{args.file}: {given} differs from the ladder's rules (fixed when it was created)")
            if args.seed is not None and args.seed != ladder.seed:
                raise LadderError(f"{args.file}: --seed {args.seed} differs from the ladder's seed {ladder.seed}")
            if args.hands and not ladder.hands_only:
                raise LadderError(f"{args.file}: --hands given but the ladder plays whole matches")
            if args.agents is not None:
                stored = sorted(row.name for row in ladder.agents())
                if stored not in (sorted(args.agents), sorted(absolute_paths(a.strip()) for a in args.agents)):
                    raise LadderError(
                        f"{args.file}: --agents {' '.join(args.agents)} differs from the ladder's agents "
                        f"({' '.join(stored)}); add an agent with `blackout ladder add`"
                    )
            ladder.check_agents()  # a run that cannot start leaves the file as it was, its deals too
            if args.deals is not None and args.deals != ladder.deals:
                ladder.set_deals(args.deals)
        except BaseException:
            ladder.close()
            raise
        return ladder
    if not args.agents:
        raise LadderError(f"{args.file}: no such ladder; give --agents to create it")
    rules = Rules.resolve(args.rules or "standard")
    if args.players is not None:
        if not 3 <= args.players <= 7:
            raise ValueError(f"--players must be 3..7, got {args.players}")
        rules = rules.replace(num_players=args.players)
    if len({absolute_paths(spec.strip()) for spec in args.agents}) != len(args.agents):  # (ppo:a.pt and ppo:./a.pt)
        raise LadderError(f"--agents: {' '.join(args.agents)} names an agent twice")
    if len(args.agents) < rules.num_players:
        raise LadderError(
            f"--agents: a table of {rules.num_players} seats needs at least {rules.num_players} distinct agents, "
            f"got {len(args.agents)} (give more agents, or fewer --players)"
        )
    if args.seed is not None and args.seed < 0:
        raise ValueError(f"--seed must be 0 or more, got {args.seed}")
    # Every agent loads before the file is created, and is in it when it appears: a bad spec or an
    # interrupted creation leaves nothing behind.
    return create_ladder(args.file, rules, deals=args.deals or 20, seed=args.seed or 0, hands=args.hands,
                         agents=args.agents)


def run(args: argparse.Namespace) -> int:
    from ..evaluation.ladder import LadderError, open_ladder, play, play_pairwise, score_positions
    from ..evaluation.sequential import SPRT

    command = "blackout ladder " + " ".join(shlex.quote(a) for a in sys.argv[2:]) if sys.argv[1:2] == ["ladder"] else args.ladder_command
    if args.ladder_command == "run":
        workers = _workers(args.workers)
        if not args.pairwise and (args.sprt is not None or args.pairwise_deals is not None):
            raise ValueError("--sprt and --pairwise-deals are for the pairwise matches: give --pairwise K too")
        pairwise_deals = 100 if args.pairwise_deals is None else args.pairwise_deals
        if args.pairwise < 0 or pairwise_deals < 1:
            raise ValueError(f"--pairwise must be 0 or more and --pairwise-deals at least 1, got {args.pairwise}, {pairwise_deals}")
        sprt = SPRT.parse(args.sprt) if args.sprt is not None else None
        with _create_or_open(args) as ladder:
            # Every agent was loaded when the file was opened (or each as it was added to a new one).
            with _line_ended(not args.no_progress):
                played = play(ladder, command, workers=workers, on_unit=_progress(not args.no_progress), checked=True)
            print(f"played {played} games")
            if args.pairwise:
                pairs = play_pairwise(ladder, args.pairwise, pairwise_deals, workers, not args.no_progress, sprt)
                print(f"played {pairs} pairwise matches")
            if args.positions:
                print(f"scored {score_positions(ladder)} agents on the obvious positions")
            print()
            print(ladder.table())
        return 0
    if args.ladder_command == "add":
        workers = _workers(args.workers)
        with open_ladder(args.file) as ladder:
            ladder.check_agents()  # an agent that no longer loads stops the command before the new one is stored
            count = len(ladder.agents()) + ladder.is_new(args.spec, args.name)
            if count < ladder.rules.num_players:  # (a file made before agents came with the file)
                raise LadderError(
                    f"{args.file}: a table of {ladder.rules.num_players} seats needs {ladder.rules.num_players} "
                    f"distinct agents; with this one the ladder would have {count}: nothing was added"
                )
            agent = ladder.add_agent(args.spec, args.name)
            with _line_ended(not args.no_progress):
                played = play(ladder, command, with_agent=agent.id, workers=workers,
                              on_unit=_progress(not args.no_progress), checked=True)
            print(f"played {played} games of {agent.name}'s tables\n")
            print(ladder.table())
        return 0
    if args.ladder_command == "remove":
        with open_ladder(args.file) as ladder:
            before = ladder.games_played()
            agent = ladder.remove_agent(args.name, command)
            print(f"removed {agent.name} and the {before - ladder.games_played()} games of its tables\n")
            print(ladder.table())
        return 0
    with open_ladder(args.file, read_only=True) as ladder:
        if args.ladder_command == "show":
            print(ladder.table())
        else:
            paths = ladder.export(args.out)
            print("wrote " + ", ".join(str(path) for path in paths.values()))
    return 0
