"""``blackout dataset create | list | show | delete | clone | from-log``: Minari datasets of one seat's matches.

Example: ``blackout dataset create --policy heuristic --opponents heuristic --episodes 100 --seed 0
--name blackout/standard/heuristic-v0`` writes a dataset to the local Minari root
(``MINARI_DATASETS_PATH``, else ``~/.minari/datasets``); ``minari.load_dataset`` reads it
(docs/datasets.md). Needs the ``datasets`` extra.
"""

from __future__ import annotations

import argparse
import importlib
import json

from blackout_env.agents.policies import split_specs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    steps = parser.add_subparsers(dest="step", metavar="STEP")
    steps.required = True
    create = steps.add_parser(
        "create", help="play a policy's matches in one seat and write them as a Minari dataset",
        description="play a policy's matches in one seat (through the registered Gym env, or batched) and write "
                    "them as a Minari dataset",
    )
    create.add_argument("--name", required=True, help="the dataset's name, e.g. blackout/standard/heuristic-v0")
    create.add_argument("--policy", required=True, metavar="SPEC", help="the learner seat's policy (heuristic, ppo, ppo+search, ppo:PATH...)")
    create.add_argument("--opponents", default="heuristic", metavar="SPEC[,SPEC...]",
                        help="one spec for every other seat, or one per other seat clockwise (default heuristic)")
    create.add_argument("--rules", default="standard", help="a preset name or a YAML file (default: standard)")
    create.add_argument("--players", type=int, default=None, help="number of players (overrides the rules)")
    size = create.add_mutually_exclusive_group(required=True)
    size.add_argument("--episodes", type=int, help="episodes (one seat's match each)")
    size.add_argument("--decisions", type=int, help="whole episodes holding at least this many learner decisions")
    create.add_argument("--seed", type=int, default=0, help="the dataset's seed: every episode's deal follows from it (default 0)")
    create.add_argument("--seat", type=int, default=0, help="the learner's seat (default 0)")
    create.add_argument("--observation", choices=("rules", "universal"), default="rules",
                        help="the observation layout stored (default rules)")
    create.add_argument("--path", choices=("gym", "batched"), default="gym",
                        help="gym: the registered env, one decision at a time (any policy; default); batched: the vector env "
                             "with batched policies (heuristic, ppo), much faster")
    create.add_argument("--batch", type=int, default=1024, help="episodes played at once on the batched path (default 1024)")
    create.add_argument("--workers", type=int, default=1, help="processes (default 1): the gym path plays in N; the batched path in N-1 "
                        "while this one writes (2 uses two cores)")
    create.add_argument("--overwrite", action="store_true", help="replace a dataset of that name")

    steps.add_parser("list", help="the datasets in the local Minari root", description="the datasets in the local Minari root")
    show = steps.add_parser("show", help="a dataset's metadata", description="a dataset's metadata, as JSON")
    show.add_argument("name")
    delete = steps.add_parser("delete", help="delete a dataset from the local root", description="delete a dataset from the local root")
    delete.add_argument("name")

    clone = steps.add_parser(
        "clone", help="behaviour cloning with masks: a ppo:PATH network that imitates a dataset",
        description="behaviour cloning with masks: train the trainer's network to take a dataset's actions "
                    "(masked cross-entropy) and write it as a checkpoint (a ppo:PATH policy)",
    )
    clone.add_argument("name", help="the dataset")
    clone.add_argument("--out", required=True, help="the checkpoint to write")
    clone.add_argument("--hidden-sizes", type=int, nargs="+", default=[256, 256], help="the trunk's widths (default 256 256)")
    clone.add_argument("--arch", choices=("mlp", "cards"), default="mlp", help="the network (default mlp)")
    clone.add_argument("--card-width", type=int, default=32, help="--arch cards: the per-card embedding's width (default 32)")
    clone.add_argument("--epochs", type=int, default=3, help="passes over the dataset (default 3)")
    clone.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate (default 1e-3)")
    clone.add_argument("--batch-size", type=int, default=512, help="decisions per step (default 512)")
    clone.add_argument("--seed", type=int, default=0, help="seed of the initial weights and minibatches (default 0)")

    from_log = steps.add_parser(
        "from-log", help="a blackout eval --game-log file as a dataset of one seat's games",
        description="a blackout eval --game-log file as a dataset of one seat's games, replayed through the Gym env",
    )
    from_log.add_argument("file", metavar="FILE", help="the game log (JSON lines)")
    from_log.add_argument("--name", required=True, help="the dataset's name, e.g. blackout/standard/eval-v0")
    from_log.add_argument("--seat", type=int, default=0, help="whose games: the seat (default 0)")
    from_log.add_argument("--policy", default=None, metavar="NAME", help="keep only the games where this policy sits in the seat")
    from_log.add_argument("--observation", choices=("rules", "universal"), default="rules")
    from_log.add_argument("--overwrite", action="store_true", help="replace a dataset of that name")


DATASETS_EXTRA_HINT = "install the datasets extra: pip install 'blackout-rl[datasets]' (minari, h5py)"


def run(args: argparse.Namespace) -> int:
    # (h5py: Minari's HDF5 files, which list, show and delete do not open)
    for module in ("minari", "h5py") if args.step in ("create", "from-log", "clone") else ("minari",):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError:
            raise ValueError(f"needs the module {module!r}, which is not installed: {DATASETS_EXTRA_HINT}") from None
    from ..datasets import DatasetConfig, create_dataset, dataset_metadata, datasets_root, delete_dataset, list_datasets

    if args.step == "create":
        config = DatasetConfig(
            policy=args.policy, opponents=split_specs(args.opponents), rules=args.rules,
            players=args.players, episodes=args.episodes, decisions=args.decisions, seed=args.seed, seat=args.seat,
            observation=args.observation, path=args.path, batch=args.batch, workers=args.workers,
        )
        result = create_dataset(args.name, config, overwrite=args.overwrite, log=print)
        print(f"wrote {result.dataset_id} ({result.path}): {result.episodes:,} episode{'' if result.episodes == 1 else 's'}, {result.decisions:,} decisions "
              f"in {result.seconds:.1f} s ({result.decisions_per_second:,.0f} decisions/s, {args.path} path)")
    elif args.step == "list":
        summaries = list_datasets()
        print(f"{datasets_root()}: {len(summaries)} dataset{'' if len(summaries) == 1 else 's'}")
        for summary in summaries:
            print(summary.line())
        from ..datasets.store import unlisted_datasets

        skipped = unlisted_datasets(summary.dataset_id for summary in summaries)
        if skipped:
            print(f"not listed, Minari cannot read them (damaged?): {', '.join(skipped)}")
    elif args.step == "show":
        print(json.dumps(dataset_metadata(args.name), indent=2))
    elif args.step == "delete":
        print(f"deleted {args.name} ({delete_dataset(args.name)})")
    elif args.step == "clone":
        from ..datasets.cloning import clone

        result = clone(args.name, args.hidden_sizes, args.arch, args.card_width, epochs=args.epochs, lr=args.lr,
                       batch_size=args.batch_size, seed=args.seed, out=args.out, log=print)
        held = "" if result.validation_accuracy is None else (
            f", held-out {result.validation_accuracy:.1%} of {result.validation_decisions:,}")
        print(f"wrote {result.checkpoint} (policy ppo:{result.checkpoint}): {result.decisions:,} decisions, "
              f"accuracy {result.train_accuracy:.1%}{held}, {result.seconds:.0f} s")
    else:
        from ..datasets.game_logs import dataset_from_log

        episodes, decisions = dataset_from_log(
            args.file, args.name, seat=args.seat, policy=args.policy, observation=args.observation,
            overwrite=args.overwrite,
        )
        print(f"wrote {args.name}: {episodes:,} episodes, {decisions:,} decisions (seat {args.seat})")
    return 0
