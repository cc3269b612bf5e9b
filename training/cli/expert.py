"""``blackout expert``: expert iteration, distilling ``ppo+search`` into a universal network.

``blackout expert generate --out DIR --minutes 20 --workers 2 --seed 0`` plays matches of
``ppo+search`` and keeps its searched decisions as shards in ``DIR``;
``blackout expert distill --data DIR --out distilled.pt`` fine-tunes the network toward
the search's choices (``blackout_training.expert``; docs/generalist.md).
"""

from __future__ import annotations

import argparse
import json

from blackout_env.game.rules import Rules

from ..ppo.tables import DRAWN_TABLES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    steps = parser.add_subparsers(dest="step", metavar="STEP")
    steps.required = True
    generate = steps.add_parser(
        "generate", help="play ppo+search matches and keep its searched decisions as shards",
        description="play ppo+search matches and keep its searched decisions (universal observation, mask, root visit counts) as shards",
    )
    generate.add_argument("--out", required=True, help="folder of shards (other seeds' shards may be there)")
    generate.add_argument("--rules", default="standard",
                          help="a preset name or a YAML file (default: standard), or a family to draw each match's table"
                               f" from ({', '.join(DRAWN_TABLES)}, as the trainer's env.tables)")
    generate.add_argument("--players", type=int, default=None, help="number of players (overrides the rules)")
    generate.add_argument("--matches", type=int, default=100, help="matches to play (with --minutes: at most; default 100)")
    generate.add_argument("--minutes", type=float, default=None, help="start no match after this many minutes")
    generate.add_argument("--simulations", type=int, default=400, help="the search's simulations per decision (default 400)")
    generate.add_argument("--decisions", choices=("bids", "all"), default="bids",
                          help="search and keep the bids (the network plays the cards; default) or every decision")
    generate.add_argument("--checkpoint", default=None, help="the universal network guiding the search (default: the shipped ppo)")
    generate.add_argument("--seed", type=int, default=0, help="the run's seed; a folder holding this seed's shards is refused (default 0)")
    generate.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    distill = steps.add_parser(
        "distill", help="fine-tune the network toward the search's choices in the shards",
        description="fine-tune a universal network toward the search's choices in the shards, holding it on the other tables",
    )
    distill.add_argument("--data", required=True, nargs="+",
                         help="folder of shards from blackout expert generate, or several (one table each)")
    distill.add_argument("--out", required=True, help="checkpoint to write (then a ppo:PATH policy)")
    distill.add_argument("--checkpoint", default=None, help="the network to start from (default: the shipped ppo)")
    distill.add_argument("--decisions", choices=("bids", "all"), default="bids", help="learn from the bids only (default) or every decision kept")
    distill.add_argument("--epochs", type=int, default=6, help="passes over the training shards (default 6)")
    distill.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate, decaying linearly to 0 (default 1e-3)")
    distill.add_argument("--temperature", type=float, default=0.1, help="targets are visits ** (1 / T), normalised (default 0.1)")
    distill.add_argument("--kl-weight", type=float, default=1.0, help="weight of KL(old || new) on the other tables (default 1)")
    distill.add_argument("--reference-decisions", type=int, default=3000, help="states per other table for the KL (default 3000)")
    distill.add_argument("--seed", type=int, default=0, help="seed of the reference states and minibatches (default 0)")
    distill.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's setting)")


def run(args: argparse.Namespace) -> int:
    from ..expert import distill, generate

    if args.step == "generate":
        if args.rules in DRAWN_TABLES:
            if args.players is not None:
                raise ValueError(f"--players: the family {args.rules!r} draws each table's players; leave it out")
            rules = args.rules
        else:
            rules = Rules.resolve(args.rules)
        if args.players is not None:
            if not 3 <= args.players <= 7:
                raise ValueError(f"--players must be 3..7, got {args.players}")
            rules = rules.replace(num_players=args.players)
        result = generate(
            args.out, rules, matches=args.matches, minutes=args.minutes, simulations=args.simulations,
            decisions=args.decisions, checkpoint=args.checkpoint, seed=args.seed, workers=args.workers, log=print,
        )
    else:
        result = distill(
            args.data, args.out, checkpoint=args.checkpoint, decisions=args.decisions, epochs=args.epochs, lr=args.lr,
            temperature=args.temperature, kl_weight=args.kl_weight, reference_decisions=args.reference_decisions,
            seed=args.seed, threads=args.threads, log=print,
        )
        print(f"wrote {args.out}")
    print(json.dumps(result, indent=2))
    return 0
