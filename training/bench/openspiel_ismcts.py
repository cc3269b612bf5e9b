"""``blackout bench openspiel_ismcts``: our policies against OpenSpiel's IS-MCTS on mirrored deals.

A cross-check against an algorithm nobody here wrote: each of our policies
(``--agents``, policy specs such as ``ismcts:simulations=500``, ``heuristic``,
``ppo``) plays one seat, and ``pyspiel.ISMCTSBot`` (random-rollout evaluator,
one rollout per simulation, ``--uct-c``, ``--simulations``, playing its most
visited action) plays the other seats of OpenSpiel's ``oh_hell`` game. Every
deal is played once per seat of our agent (duplicate seating), so card luck
cancels in the difference.

Mirrored games: one :class:`~blackout_env.game.engine.BlackoutGame` and one
OpenSpiel state are stepped together. OpenSpiel deals its ``k``-th dealt card
to player ``k % n`` and then turns the trump card; we feed its chance nodes our
dealer and our hands so that every seat holds the same cards, and the same
turned card names trump. Cards map by rank and suit: ours are ``suit * 13 +
rank`` with suits C D H S, OpenSpiel's are ``rank * 4 + suit`` with suits
C D S H (:func:`to_openspiel_card`). Bids map ``52 + k`` to ``52 + k``. At every
decision the legal actions of the two games are checked to be the same
(OpenSpiel's ``oh_hell`` also has the dealer's hook, and the player left of
the dealer bids first and leads).

OpenSpiel's bots search from a state rebuilt from their seat's view, the other
seats' hidden cards drawn anew (``--redeal 1``, the default): OpenSpiel's
``oh_hell`` ``ResampleFromInfostate`` deals the other seats only cards truly dealt
to them, so searching from the mirrored state its IS-MCTS would know which cards
are out of play (:class:`OpenSpielPlayer`).

One redeal fixes one set of out-of-play cards for all of a decision's
simulations. ``--redeals K`` (default 1, the single search) makes the field
draw K states from the seat's view per decision and search each with
S = ``--simulations // K`` simulations: ``--simulations`` is the decision's
total either way, so fields with different K spend the same simulations. The K
searches' normalized visit counts are summed and the largest sum played (ties:
the lowest action in our numbering). K below 1, or S below 2 (OpenSpiel's
search spends its first simulation on expanding the root), is refused before
anything runs, OpenSpiel installed or not. The spec option ``redeals=K`` does
the same for ``openspiel_ismcts`` in the agent's seat, so the two fields meet
head to head at equal total simulations on duplicate deals:
``--agents openspiel_ismcts:simulations=200,redeals=4 --simulations 200``
(one K-redeal seat against three one-redeal seats), or the reverse,
``--agents openspiel_ismcts:simulations=200 --simulations 200 --redeals 4``.

Scoring: every hand is scored by OUR rules (standard: 10 + bid for an exact
bid, 0 for a miss). OpenSpiel's ``oh_hell`` returns differ on a missed bid (it
pays one point per trick taken, exact or not, plus 10 for an exact bid), so its
bots search for its own scoring; the figures here are ours.

Whole matches (``--match``): the rules' hands 10..1, each a fresh OpenSpiel game
with ``num_tricks_fixed`` set to the hand size (OpenSpiel's bot searches one
hand at a time, as ours do).

``--agents openspiel_ismcts[:simulations=N,uct_c=C]`` puts OpenSpiel's own
IS-MCTS in the agent's seat (acting on the mirrored OpenSpiel state, seeded apart
from the other seats): the harness's null test, which must score about 0.
``--field SPEC`` puts one of our policies in the other seats instead of
OpenSpiel's IS-MCTS (the reverse check: ``--agents openspiel_ismcts --field
ismcts:simulations=500``).

Reported per agent: mean score per hand of the agent and of the IS-MCTS seats,
their difference per deal (agent minus the mean of the IS-MCTS seats, averaged
over the rotations) with a 95% interval over deals, bid-made rates, and the
wall time per decision of each side (measured in the same run, so they share
the machine's load).

``--pool FILE FILE ...`` plays nothing: it pools earlier ``--json`` files of the same agents against
the same field on other seeds (sittings) into one figure per agent, per deal (the difference and its
interval over all the deals), and prints and writes it as a run would (OpenSpiel not needed).

``--speed HANDS`` measures instead the CPU time per decision of each agent and
of OpenSpiel's IS-MCTS on the same decisions (OpenSpiel's bot plays every seat;
our agent decides each of those positions too).

Needs the ``bench`` extra (``pip install -e ".[bench]"``), which installs ``open_spiel``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from blackout_env import Rules

from ..evaluation.openspiel import (
    default_field,
    load_player,
    parse_openspiel_spec,
    pool_sittings,
    require_openspiel,
    run_agent,
    simulations_per_search,
    speed,
    table,
)
from . import check_output_file, check_positive, command, write_json

__all__ = ["main"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agents", nargs="+", default=["ismcts:simulations=500"], metavar="SPEC",
        help="our policies, each played in one seat (default ismcts:simulations=500)",
    )
    parser.add_argument(
        "--field", default=None, metavar="SPEC",
        help="the policy in the other seats (default: OpenSpiel's IS-MCTS with --simulations and --uct-c)",
    )
    parser.add_argument(
        "--redeal", type=int, choices=(0, 1), default=1,
        help="1 (default): OpenSpiel's IS-MCTS in the other seats searches from a state rebuilt from its view, the "
        "hidden cards drawn anew (OpenSpiel's oh_hell resampling would otherwise know which cards are out of play); "
        "0: from the mirrored state, as before",
    )
    parser.add_argument(
        "--redeals", type=int, default=1, metavar="K",
        help="states the field redeals from its view per decision, one IS-MCTS search each with --simulations // K "
        "simulations, their normalized visit counts summed (default 1: one search of --simulations)",
    )
    parser.add_argument("--deals", type=int, default=50, help="duplicate deals per agent (default 50)")
    parser.add_argument(
        "--simulations", type=int, default=500,
        help="OpenSpiel IS-MCTS simulations per decision, in all (shared among --redeals searches; default 500)",
    )
    parser.add_argument("--uct-c", type=float, default=2.0, help="OpenSpiel IS-MCTS exploration constant (default 2)")
    parser.add_argument("--match", action="store_true", help="whole matches (hands 10..1) instead of single 10-card hands")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and the bots (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument(
        "--speed", type=int, default=0, metavar="HANDS",
        help="instead of games: CPU time per decision of each agent and of OpenSpiel's IS-MCTS on the same "
        "decisions of this many hands",
    )
    parser.add_argument(
        "--pool", nargs="+", default=None, metavar="FILE",
        help="instead of playing: pool the --json files of sittings of the same agents and field on other seeds",
    )
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def run(args: argparse.Namespace) -> int:
    if args.pool is not None:
        return _pool(args)
    # sizes first: a bad one is refused whether or not OpenSpiel is installed
    check_positive(deals=args.deals, simulations=args.simulations, workers=args.workers, redeals=args.redeals)
    if not 0 <= args.uct_c < math.inf:  # (NaN fails too: OpenSpiel's search then finds no candidate)
        raise ValueError(f"--uct-c must be a finite number >= 0, got {args.uct_c}")
    simulations_per_search(args.simulations, args.redeals, flag="--")
    if args.redeals > 1 and (not args.redeal or args.field or args.speed):
        raise ValueError(
            "--redeals sets how OpenSpiel's field in the other seats searches: it needs --redeal 1, no --field "
            "(an openspiel_ismcts field spec takes redeals=K) and no --speed"
        )
    try:
        require_openspiel()
    except ImportError as error:
        print(f"blackout bench openspiel_ismcts: error: {error}", file=sys.stderr)
        return 2
    if args.speed < 0:
        raise ValueError(f"--speed must be a number of hands (0: play games instead), got {args.speed}")
    check_output_file(args.json)
    for spec in [*args.agents, *([args.field] if args.field else [])]:  # a bad spec fails here, before any game
        load_player(require_openspiel(), spec, Rules.preset("standard"), args.seed)
    if args.speed:
        if args.field or any(parse_openspiel_spec(spec) for spec in args.agents):
            raise ValueError("--speed times our policies against OpenSpiel's IS-MCTS: no --field, no openspiel_ismcts agent")
        pyspiel = require_openspiel()
        rows = [speed(pyspiel, spec, args.speed, args.seed, args.simulations, args.uct_c) for spec in args.agents]
        for r in rows:
            print(
                f"{r['agent']}: {r['agent_cpu_ms_per_decision']:.1f} ms CPU per decision; OpenSpiel IS-MCTS "
                f"({args.simulations} simulations): {r['openspiel_cpu_ms_per_decision']:.1f} ms; ratio {r['ratio']:.2f} "
                f"({r['decisions']} decisions)"
            )
        write_json(args.json, {"simulations": args.simulations, "speed": rows})
        return 0
    # OpenSpiel's oh_hell: 4 players by default here, hands 10..1 (a match) or the match's first hand (10 cards):
    # our agents play the standard rules either way, so policies trained for them only (ppo-standard) play single
    # hands too.
    rules = Rules.preset("standard")
    rows = []
    for spec in args.agents:
        rows.append(
            run_agent(
                spec, rules, args.deals, args.seed, args.simulations, args.uct_c, args.match, args.workers, args.field,
                bool(args.redeal), args.redeals,
            )
        )
        if len(args.agents) > 1:
            print(f"{spec}: done", file=sys.stderr, flush=True)
    print(table(rows, args.simulations, args.field, args.redeals))
    write_json(
        args.json,
        {
            "simulations": args.simulations, "redeals": args.redeals, "uct_c": args.uct_c, "match": args.match,
            "seed": args.seed, "rows": rows,
        },
    )
    return 0


def _pool(args: argparse.Namespace) -> int:
    if args.speed:
        raise ValueError("--pool pools game runs: no --speed")
    check_output_file(args.json)
    sittings = []
    for name in args.pool:
        try:
            with open(name, encoding="utf-8") as handle:
                sittings.append((name, json.load(handle)))
        except (OSError, ValueError) as error:
            raise ValueError(f"--pool {name}: cannot be read as JSON ({error})") from None
    pooled = pool_sittings(sittings)
    field = pooled["rows"][0]["field"]
    defaults = {default_field(pooled["simulations"], pooled["uct_c"], redeal, pooled["redeals"]) for redeal in (False, True)}
    named_field = None if field in defaults else field  # a --field sitting: say whose
    print(table(pooled["rows"], pooled["simulations"], named_field, pooled["redeals"]))
    write_json(args.json, pooled)
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
