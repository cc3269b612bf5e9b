"""``blackout bench generalist``: the result table of a policy for every table, by duplicate evaluation.

One row per table: the policy (``--policy``, default ``ppo``, the shipped
generalist) in one seat and the heuristic bot in the others, whole matches,
duplicate deals (:func:`blackout_training.evaluation.tournament.evaluate`: every deal is
played once per rotation of the seats, and the interval is over deals). The
default rows are every preset at its default players plus ``standard`` at 3, 5,
6 and 7 players; ``--rows`` picks some (``PRESET`` or ``PRESET-Np``, e.g.
``standard,short,standard-7p``). ``--versus SPEC ...`` adds rows on the
standard 4-player table with SPEC in the other seats instead of the heuristic
(row ``standard-vs-SPEC``).

Per row: the agent's and the opponent's mean score per hand, the difference
(agent minus opponent) with its 95% interval, paired per deal, the interval's
half-width, the agent's bid-made rate, and the seconds the row took. The
table prints as Markdown (``--markdown PATH`` writes it; ``--json PATH`` writes
the figures). ``--deals`` sizes every row (``--versus-deals`` the versus rows);
``--row-deals ROW=N`` sizes one row, a versus row included (``standard-vs-search=40``).

``--held-out N`` adds N rows of random valid rule sets that training never draws
(:mod:`blackout_training.evaluation.held_out`: every option over its documented
range, every fourth table from the per-trick family), drawn from
``--held-out-seed`` (default 1009; a seed that training drew tables from is
refused before anything runs). They print as a second table, one row per table:
the difference with its interval, both sides' bid-made rates, and the rules in
one line. ``--held-out-long N`` adds N rows of long-hands held-out tables (3
players with a longest hand of 14 to 17 cards, or 4 players with 13; their own
draw from the same seed). ``--rows held-out-12-8-4-1`` plays the named held-out table (3
players, hands 12-8-4-1, trump must break, 1 per trick and 5 for an exact bid).

The JSON keeps each row's per-deal differences and seed, so runs with other
seeds (other deals) can be pooled into one interval: ``--pool A.json B.json``
plays nothing and prints the table of every row found in the files, its
per-deal differences concatenated (a slow row, such as the search bot's, can
so be played over several sittings). Files with the same seed hold the same
deals and are refused.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import Any

from blackout_env import Rules

from ..evaluation.generalist import OPPONENT, VERSUS_TABLE, default_rows, markdown_table, play_row, pool_rows, row_rules
from ..evaluation.held_out import DEFAULT_HELD_OUT_SEED, held_out_rows, rules_line
from ..evaluation.tournament import check_tournament
from ..ppo.training_seeds import check_held_out_seed
from . import check_output_file, check_positive, command, write_json


def parse_row_deals(items: list[str], rows: list[str]) -> dict[str, int]:
    """``ROW=N`` items as a mapping row -> deals (each ROW one of ``rows``, N a positive whole number)."""
    sizes: dict[str, int] = {}
    for item in items:
        row, _, number = item.rpartition("=")
        if row not in rows:
            raise ValueError(f"--row-deals {item!r}: {row!r} is not one of the rows ({', '.join(rows)})")
        if not number.isdigit() or int(number) < 1:
            raise ValueError(f"--row-deals {item!r}: the deals must be a positive whole number")
        sizes[row] = int(number)
    return sizes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policy", default="ppo", help="the agent's policy spec (default ppo, the shipped generalist)")
    parser.add_argument(
        "--rows", default=None,
        help="comma-separated rows, PRESET, PRESET-Np or a held-out table by its row name, "
        "held-out[-long]-SEED-I[-per-trick] "
        "(default: every preset, then standard-3p,-5p,-6p,-7p; "
        "\"\" with --versus: the versus rows alone)",
    )
    parser.add_argument("--deals", type=int, default=150, help="duplicate deals per row (default 150)")
    parser.add_argument(
        "--row-deals", nargs="+", action="extend", default=[], metavar="ROW=N",
        help="deals for one row, e.g. standard-7p=200 short=400 standard-vs-search=40 (repeatable)",
    )
    parser.add_argument(
        "--versus", nargs="+", default=[], metavar="SPEC",
        help="extra rows on the standard 4-player table: the agent against SPEC (1 vs the rest), e.g. ppo-standard search",
    )
    parser.add_argument("--versus-deals", type=int, default=None, help="deals of each --versus row (default --deals)")
    parser.add_argument(
        "--held-out", type=int, default=0, metavar="N",
        help="also N rows of random rule sets that training never draws (default 0); \"\" --rows: these alone",
    )
    parser.add_argument(
        "--held-out-long", type=int, default=0, metavar="N",
        help="also N rows of long-hands held-out tables (3 players with a 14-17-card hand, 4 players with 13; default 0)",
    )
    parser.add_argument(
        "--held-out-seed", type=int, default=None, metavar="S",
        help=f"seed of the held-out draw (default {DEFAULT_HELD_OUT_SEED}); a seed training drew tables from is refused",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes playing deals in parallel (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots (default 0)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    parser.add_argument("--markdown", default=None, help="also write the Markdown table to this file")
    parser.add_argument(
        "--pool", nargs="+", default=None, metavar="JSON",
        help="play nothing: pool the rows of these --json files (runs with different seeds) into one table",
    )


def run(args: argparse.Namespace) -> int:
    check_positive(deals=args.deals, workers=args.workers, versus_deals=args.versus_deals or args.deals)
    if args.seed < 0:
        raise ValueError(f"--seed must be >= 0, got {args.seed}")
    check_output_file(args.json)
    check_output_file(args.markdown, "--markdown")
    if args.pool is not None:
        policy, rows = pool_rows(args.pool)
        return _write(args, policy, rows)
    for option, count in (("--held-out", args.held_out), ("--held-out-long", args.held_out_long)):
        if count < 0:
            raise ValueError(f"{option} must be 0 or more, got {count}")
    drawing = args.held_out or args.held_out_long
    if args.held_out_seed is not None and not drawing:
        raise ValueError(f"--held-out-seed {args.held_out_seed}: give --held-out N or --held-out-long N too (the number "
                         "of held-out tables)")
    held_out_seed = DEFAULT_HELD_OUT_SEED if args.held_out_seed is None else args.held_out_seed
    if drawing:
        check_held_out_seed(held_out_seed, args.policy)
    names = default_rows() if args.rows is None else [row.strip() for row in args.rows.split(",") if row.strip()]
    if not names and not args.versus and not drawing:
        raise ValueError("--rows: name at least one row (or give --versus, --held-out or --held-out-long)")
    drawn = [row for row in names if HELD_OUT_ROW.fullmatch(row)]
    tables = [(row, row_rules(row), OPPONENT, args.deals, None) for row in names if row not in drawn]
    held_out = [(row, rules, OPPONENT, args.deals, family)
                for row, family, rules in held_out_rows(held_out_seed, args.held_out)]
    held_out += [(row, rules, OPPONENT, args.deals, family)
                 for row, family, rules in held_out_rows(held_out_seed, args.held_out_long, long=True)]
    held_out += [(row, rules, OPPONENT, args.deals, family) for row, family, rules in _drawn_rows(drawn, args.policy)]
    versus = [(f"{VERSUS_TABLE}-vs-{spec}", Rules.preset(VERSUS_TABLE), spec, args.versus_deals or args.deals, None)
              for spec in args.versus]
    sizes = parse_row_deals(args.row_deals, [row for row, *_ in tables + held_out + versus])
    plan = [(row, rules, opponent, sizes.get(row, deals), family)
            for row, rules, opponent, deals, family in tables + held_out + versus]
    for row, rules, opponent, deals, _ in plan:  # a bad spec or a refused checkpoint fails before any game
        try:
            check_tournament({"agent": args.policy, "opponent": opponent}, rules, deals, args.seed, args.workers)
        except ValueError as error:
            raise ValueError(f"row {row!r} ({rules_line(rules)}): {error}") from None
    rows = play_table(args, plan)
    seeds = {int(HELD_OUT_ROW.fullmatch(row).group(1)) for row in drawn} | ({held_out_seed} if drawing else set())
    return _write(args, args.policy, rows, seeds.pop() if len(seeds) == 1 else None)


HELD_OUT_ROW = re.compile(r"held-out-(?:long-)?([0-9]+)-([0-9]+)(-per-trick)?")
"""A held-out table by its row name (``held-out-SEED-I``, ``-per-trick`` for that family), as ``--held-out`` names it
(``held-out-long-SEED-I``: ``--held-out-long``'s)."""


def _drawn_rows(names: list[str], policy: str) -> list[tuple[str, str, Rules]]:
    """The held-out tables that ``--rows`` names one by one (their seeds checked as ``--held-out-seed``'s)."""
    rows = []
    for name in names:
        seed, index = (int(group) for group in HELD_OUT_ROW.fullmatch(name).groups()[:2])
        if index < 1:
            raise ValueError(f"--rows: {name!r}: held-out tables count from 1")
        check_held_out_seed(seed, policy)
        row = held_out_rows(seed, index, long=name.startswith("held-out-long-"))[-1]
        if row[0] != name:
            raise ValueError(f"--rows: {name!r}: held-out table {index} of seed {seed} is {row[0]!r}")
        rows.append(row)
    return rows


def _write(args: argparse.Namespace, policy: str, rows: list[dict[str, Any]], held_out_seed: int | None = None) -> int:
    """Print the table; write it to ``--markdown`` and the figures to ``--json`` when given."""
    table = markdown_table(policy, rows)
    print()
    print(table)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write(table + "\n")
    if args.json:
        seed = None if args.pool is not None else args.seed  # a pooled table's seeds are in its rows
        figures = {"policy": policy, "seed": seed, "workers": args.workers, "command": sys.argv,
                   "load_average": os.getloadavg(), "rows": rows}
        if held_out_seed is not None:
            figures["held_out_seed"] = held_out_seed
        write_json(args.json, figures)
    return 0


def play_table(args: argparse.Namespace, plan: list[tuple[str, Rules, str, int, str | None]]) -> list[dict[str, Any]]:
    """Every row of the plan (a held-out row has its family, the others None), printed as it finishes."""
    print(f"{args.policy}: 1 seat against the rest, whole matches, duplicate deals, seed {args.seed}, "
          f"{args.workers} worker(s); load average {os.getloadavg()[0]:.1f}", flush=True)
    rows = []
    for row, rules, opponent, deals, family in plan:
        rows.append(play_row(row, rules, args.policy, opponent, deals, args.seed, args.workers, family))
        r = rows[-1]
        width = "n/a" if r["half_width"] is None else f"{r['half_width']:.2f}"
        print(f"  {row:<28} {r['difference']:+.2f} ± {width} vs {opponent} ({deals} deals, {r['seconds']:.0f} s)",
              flush=True)
    return rows


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
