"""``blackout train``: PPO self-play from a YAML config, with ``--set`` overrides.

Example: ``blackout train --config configs/train/default.yaml --set ppo.lr=3e-4``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..ppo.config import load_config

DEFAULT_CONFIG = "configs/train/default.yaml"
"""The README's main job, relative to the repository's root (the shipped ``default`` config elsewhere)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config", default=None,
        help="a YAML run config, or a shipped config's name: default, tiny, long, generalist... (default: default)",
    )
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
        help="override one config value, e.g. --set ppo.lr=3e-4 (repeatable)",
    )
    parser.add_argument("--resume", action="store_true", help="continue the run in the run folder from its checkpoint")
    parser.add_argument("--force", action="store_true", help="delete a run already in the run folder and start over")
    parser.add_argument("--device", default=None, help="auto (CUDA when present), cpu, cuda or cuda:N (overrides run.device)")
    parser.add_argument(
        "--init-dataset", default=None, metavar="NAME",
        help="start from a behaviour clone of this Minari dataset (blackout dataset create; docs/datasets.md): "
             "the clone is trained first, written beside the run folder and used as model.init_checkpoint",
    )
    parser.add_argument(
        "--init-epochs", type=int, default=None, help="with --init-dataset: passes over the dataset (default 3)"
    )
    parser.add_argument(
        "--ray-address", default=None, metavar="HOST:PORT",
        help="algo ppo_ray or rllib_ppo: join this Ray cluster instead of starting Ray here (overrides ray.address "
             "or rllib.address)",
    )


def run(args: argparse.Namespace) -> int:
    overrides = list(args.overrides)
    if args.device is not None:
        overrides.append(f"run.device={args.device}")
    if args.config is None:  # the README's file in a checkout, the shipped one (the same) anywhere else
        args.config = DEFAULT_CONFIG if Path(DEFAULT_CONFIG).is_file() else "default"
    config = load_config(args.config, overrides)
    if args.ray_address is not None:  # (not a --set override: YAML would read some HOST:PORT as a number)
        if config.algo == "rllib_ppo":
            config.rllib.address = args.ray_address
        elif config.algo == "ppo_ray":
            config.ray.address = args.ray_address
        else:
            raise ValueError(f"--ray-address: only for algo ppo_ray or rllib_ppo (this config's algo is {config.algo!r})")
        config.validate()

    if args.init_epochs is not None and args.init_dataset is None:
        raise ValueError("--init-epochs: passes over the --init-dataset, which is not given")
    if args.init_epochs is not None and args.init_epochs < 1:
        raise ValueError(f"--init-epochs must be at least 1, got {args.init_epochs}")
    if args.init_dataset is not None:
        _init_from_dataset(config, args)

    # (imports torch, or Ray: only once the config is known to be good)
    if config.algo == "rllib_ppo":
        from ..rllib.backend import train
    else:
        from ..ppo.trainer import train

    result = train(config, resume=args.resume, force=args.force)
    print(f"run folder: {result.run_dir}")
    print(f"checkpoint: {result.checkpoint} ({result.global_step:,} decisions, {result.updates} updates, "
          f"last {result.steps_per_s:,.0f} steps/s)")
    if result.final_eval:
        e = result.final_eval
        print(f"final evaluation vs {config.eval.opponent}: agent {e['agent_score']:.2f} per hand, "
              f"opponents {e['opponent_score']:.2f}, difference {e['difference']:+.2f} ± {e['difference_ci']:.2f} "
              f"(95%), bid made {e['agent_bid_made_rate']:.1%}")
        for name, r in e.get("per_rules", {}).items():
            print(f"  {name}: difference {r['difference']:+.2f} ± {r['difference_ci']:.2f}")
    return 0


def _init_from_dataset(config, args: argparse.Namespace) -> None:
    """Clone ``--init-dataset`` into ``out_dir/NAME-clone.pt`` and start the run from it (model.init_checkpoint)."""
    from ..datasets.cloning import check_init_dataset, clone_for_run
    from ..ppo.run_folder import check_run_folder

    if args.resume:
        raise ValueError("--init-dataset starts a run; --resume continues one (its config names the clone already)")
    # Before the clone is made: it overwrites NAME-clone.pt, which a run already in the folder starts from.
    check_init_dataset(config, args.init_dataset)
    check_run_folder(config, resume=False, force=args.force)
    result = clone_for_run(config, args.init_dataset, 3 if args.init_epochs is None else args.init_epochs, log=print)
    accuracy = "" if result.validation_accuracy is None else f", held-out accuracy {result.validation_accuracy:.1%}"
    print(f"behaviour clone of {args.init_dataset}: {result.decisions:,} decisions{accuracy}, wrote {result.checkpoint}")
    config.model.init_checkpoint = str(result.checkpoint)
    config.validate()
