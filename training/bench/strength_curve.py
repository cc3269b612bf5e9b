"""``blackout bench strength-curve``: strength against wall-clock time, for one or more training configs.

Time to strength is what a user of the trainer waits for. For each ``--config``
(trained one after the other, so give it an idle machine):

1. train it once, for the longest of ``--minutes``, with ``blackout train``'s own loop
   (the config as it is, its periodic evaluations included: they are part of the
   job's wall clock), keeping the network as it was at each of ``--minutes``
   (``run.checkpoint_minutes``) in ``OUT_DIR/<config name>/``;
2. evaluate every kept network on the same ``--deals`` duplicate deals, one seat
   against three copies of ``--opponent`` (the heuristic bot), whole matches.

It prints one table (config, minutes, decisions, agent - opponent per hand with its
95% interval, bid-made rate), the paired differences between configs (deal by deal:
every later config at each of its minutes minus the first config at its longest
time, and at the same minutes), and draws one PNG with every config's curve
against minutes and against decisions.

With ``--init-dataset NAME``, every config is also trained warm-started (run ``<config name>-init``): a
behaviour clone of the Minari dataset with the config's network (what ``blackout train --init-dataset``
does) is trained first and PPO starts from it. The clone's time counts in the run's minutes: PPO trains
for the rest of the longest time, and the network at a minute before the clone is done does not exist
(that point is left out). Making the dataset is not counted. The clone (``OUT_DIR/<run>-clone.pt``) is
reused while ``<run>-clone.json`` records the same dataset (its metadata), ``--init-epochs``, network and
seed; otherwise (an unreadable record included) it is made again, and PPO from it trained again.

A run folder that already holds a finished training of the same config (every
checkpoint asked for, the same ``config.yaml``) is evaluated again, not retrained:
an interrupted bench goes on where it stopped; ``--retrain`` trains it again.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import check_output_file, command, write_json

__all__ = ["paired", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", action="append", default=None, metavar="FILE",
                        help="a training config (repeat it to compare; the first is the reference; "
                        "a file or a shipped config's name; default: default)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a value of every config")
    parser.add_argument("--minutes", type=float, nargs="+", default=[5.0, 10.0, 27.0],
                        help="minutes of training at which each network is evaluated (default 5 10 27)")
    parser.add_argument("--deals", type=int, default=300, help="duplicate deals per evaluation (default 300)")
    parser.add_argument("--opponent", default="heuristic", help="the three other seats (default heuristic)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the evaluation deals (default 0)")
    parser.add_argument("--workers", type=int, default=0,
                        help="evaluation processes (default 0: the cores other processes leave free)")
    parser.add_argument("--out-dir", default="runs/strength-curve",
                        help="where the run folders go (default runs/strength-curve)")
    parser.add_argument("--retrain", action="store_true", help="train again even when a run folder holds the training")
    parser.add_argument("--plot", default=None, help="the PNG (default OUT_DIR/strength_curve.png)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    parser.add_argument("--init-dataset", default=None, metavar="NAME",
                        help="also train every config warm-started from a behaviour clone of this Minari dataset "
                        "(blackout train --init-dataset), the clone's time counted in its minutes")
    parser.add_argument("--init-epochs", type=int, default=None,
                        help="with --init-dataset: passes over the dataset (default 3)")


def paired(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """Mean of ``a - b`` deal by deal, with its 95% interval (normal approximation over the deals)."""
    from blackout_training.evaluation.tournament import confidence_half_width

    difference = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    half = confidence_half_width(difference) or 0.0
    mean = float(difference.mean())
    return {"mean": mean, "low": mean - half, "high": mean + half}


def _run_name(path: str, taken: set[str]) -> str:
    name = Path(path).stem
    if name in taken:
        raise ValueError(f"--config {path!r}: two configs named {name!r}; each config file needs its own name")
    taken.add(name)
    return name


def _finished(folder: Path, config_dict: dict[str, Any], minutes: list[float]) -> bool:
    """Whether ``folder`` holds this config's training with every minute's network."""
    import yaml
    from blackout_training.ppo.config import ConfigError, config_from_dict, config_to_dict
    from blackout_training.ppo.trainer import minute_checkpoint

    saved = folder / "config.yaml"
    if not saved.is_file():
        return False
    try:  # (read as a config: keys added since it was written take their defaults)
        same = config_to_dict(config_from_dict(yaml.safe_load(saved.read_text(encoding="utf-8")))) == config_dict
    except (yaml.YAMLError, ConfigError):
        return False
    return same and all(minute_checkpoint(folder, m).is_file() for m in minutes)


def _metadata_digest(dataset_id: str) -> str:
    """A digest of the dataset's stored metadata (its seed, policy, sizes...): another dataset under the same name differs."""
    import hashlib
    import json

    from blackout_training.datasets.store import dataset_metadata

    return hashlib.sha256(json.dumps(dataset_metadata(dataset_id), sort_keys=True).encode()).hexdigest()


def _clone(run_config: Any, name: str, init: str, args: argparse.Namespace, log: Any) -> tuple[Path, float, bool]:
    """The warm run's clone of ``init``: its path, the seconds it took, and whether it was made now (False: the
    clone that ``OUT_DIR/<run>-clone.json`` records for the same dataset, epochs, network and seed, reused)."""
    import json

    from blackout_training.datasets.cloning import clone_for_run

    clone_path, clone_log = Path(args.out_dir) / f"{name}-clone.pt", Path(args.out_dir) / f"{name}-clone.json"
    # What the clone is made of: the dataset (its metadata: one regenerated under the same name differs) and
    # the run's network and seed (clone_for_run's), so that an old clone never starts another network.
    model = run_config.model
    wanted = {"dataset": init, "epochs": args.init_epochs, "dataset_metadata": _metadata_digest(init),
              "hidden_sizes": list(model.hidden_sizes), "arch": model.arch, "card_width": model.card_width,
              "seed": run_config.run.seed}
    try:  # (a record that cannot be read, or lacks the clone's time, is no record: the clone is made again)
        saved = json.loads(clone_log.read_text(encoding="utf-8")) if clone_log.is_file() else {}
    except (OSError, ValueError):
        saved = {}
    if not isinstance(saved, dict) or not isinstance(saved.get("seconds"), (int, float)):
        saved = {}
    made = args.retrain or not clone_path.is_file() or {k: saved.get(k) for k in wanted} != wanted
    if made:
        log(f"{name}: cloning {init} ({args.init_epochs} epochs); load average {os.getloadavg()[0]:.2f} at the start")
        clone_log.unlink(missing_ok=True)  # (until the new clone is written, no record names the old one)
        result = clone_for_run(run_config, init, args.init_epochs, log=lambda line: log(f"  {line}"))
        saved = {**wanted, "seconds": result.seconds, "decisions": result.decisions,
                 "validation_accuracy": result.validation_accuracy}
        clone_log.write_text(json.dumps(saved, indent=1), encoding="utf-8")
    log(f"{name}: the clone took {saved['seconds'] / 60:.2f} min; PPO trains for the rest")
    return clone_path, float(saved["seconds"]), made


def _train(config_path: str, name: str, args: argparse.Namespace, minutes: list[float], log: Any,
           init: str | None = None) -> dict[float, tuple[Path, float]]:
    """Train one config (with ``init``: warm-started from a clone of that dataset, the clone's time counted).

    Returns, for each of ``minutes`` at which a network exists, its checkpoint and the seconds spent before
    PPO started (the clone's; 0 without ``init``).
    """
    from blackout_training.ppo.config import config_to_dict, load_config
    from blackout_training.ppo.trainer import minute_checkpoint, train

    base = [*args.set, f"run.out_dir={args.out_dir}", f"run.name={name}", "run.progress_bar=false", "eval.final_deals=0"]
    folder = Path(args.out_dir) / name
    clone_s, clone_path, new_clone = 0.0, None, False
    if init is not None:  # (run() checked the dataset against every config before the first one trained)
        clone_path, clone_s, new_clone = _clone(load_config(config_path, base), name, init, args, log)
    offset = clone_s / 60.0
    marks = {m: round(m - offset, 4) for m in minutes if m - offset > 0}
    if not marks:
        raise ValueError(f"--init-dataset: the clone took {offset:.1f} minutes, longer than every --minutes")
    overrides = [
        *base,
        f"run.time_limit_minutes={max(marks.values()):g}",
        f"run.checkpoint_minutes=[{', '.join(f'{m:g}' for m in marks.values())}]",
        *([f"model.init_checkpoint={clone_path}"] if clone_path is not None else []),
    ]
    config = load_config(config_path, overrides)
    points = {m: (minute_checkpoint(folder, mark), clone_s) for m, mark in marks.items()}
    if not (args.retrain or new_clone) and _finished(folder, config_to_dict(config), list(marks.values())):
        log(f"{name}: {folder} already holds this training; evaluating it again (--retrain trains it again)")
        return points
    load = os.getloadavg()[0]
    log(f"{name}: training {max(marks.values()):g} minutes ({config_path}); load average {load:.2f} at the start")
    train(config, force=True, log=lambda line: log(f"  {line}"))
    return points


def _evaluate(path: Path, before_s: float, minutes: float, args: argparse.Namespace, rules: Any,
              workers: int) -> dict[str, Any]:
    from blackout_training.agents.policy_net import read_checkpoint
    from blackout_training.evaluation.tournament import evaluate

    saved = read_checkpoint(path).get("extra", {})
    result = evaluate({"agent": f"ppo:{path.resolve()}", args.opponent: args.opponent}, rules=rules,
                      deals=args.deals, seed=args.seed, workers=workers)
    per_deal = np.array(result.per_deal["agent"]) - np.array(result.per_deal[args.opponent])
    return {
        "minutes": minutes,
        "elapsed_s": before_s + float(saved.get("elapsed_s", float("nan"))),
        "decisions": int(saved.get("global_step", 0)),
        **{k: v for k, v in paired(per_deal, np.zeros_like(per_deal)).items()},
        "agent_score": result.stats("agent").mean_score_per_hand,
        "bid_made_rate": result.stats("agent").bid_made_rate,
        "per_deal_difference": [round(float(x), 6) for x in per_deal],
    }


def plot(runs: list[dict[str, Any]], path: Path, opponent: str) -> Path:
    """Every config's strength against minutes and against decisions, one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (by_time, by_decisions) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for entry in runs:
        points = entry["points"]
        y = [p["mean"] for p in points]
        error = [[p["mean"] - p["low"] for p in points], [p["high"] - p["mean"] for p in points]]
        by_time.errorbar([p["minutes"] for p in points], y, yerr=error, marker="o", capsize=4, label=entry["name"])
        by_decisions.errorbar([p["decisions"] / 1e6 for p in points], y, yerr=error, marker="o", capsize=4,
                              label=entry["name"])
    for axis, label in ((by_time, "minutes of training"), (by_decisions, "decisions trained (millions)")):
        axis.axhline(0.0, color="grey", linewidth=0.8)
        axis.set_xlabel(label)
        axis.grid(alpha=0.3)
    by_time.set_ylabel(f"agent - {opponent}, points per hand (95% CI)")
    by_time.legend()
    fig.suptitle(f"time to strength: one agent against three {opponent} bots, duplicate deals")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def run(args: argparse.Namespace) -> int:
    from blackout_training.cpu import free_cores
    from blackout_training.ppo.config import load_config

    from blackout_env import Rules

    args.config = args.config or ["default"]
    check_output_file(args.json)
    minutes = sorted(set(args.minutes))
    if any(not m > 0 for m in minutes):
        raise ValueError(f"--minutes: positive numbers of minutes, got {args.minutes}")
    if args.deals < 2:
        raise ValueError(f"--deals: at least 2 (an interval needs two deals), got {args.deals}")
    if args.workers < 0:
        raise ValueError(f"--workers: 0 (the free cores) or more, got {args.workers}")
    if args.init_epochs is not None and args.init_dataset is None:
        raise ValueError("--init-epochs: passes over the --init-dataset, which is not given")
    args.init_epochs = 3 if args.init_epochs is None else args.init_epochs
    if isinstance(args.init_epochs, bool) or not isinstance(args.init_epochs, int) or args.init_epochs < 1:
        raise ValueError(f"--init-epochs: a whole number >= 1, got {args.init_epochs!r}")
    taken: set[str] = set()
    names = [_run_name(path, taken) for path in args.config]
    jobs = [(path, name, name, None) for path, name in zip(args.config, names)]  # (config, run, its rules', dataset)
    if args.init_dataset is not None:
        from blackout_training.datasets.cloning import check_init_dataset

        for path, name in zip(args.config, names):  # (checked before the first config trains)
            check_init_dataset(load_config(path, [*args.set, f"run.name={name}"]), args.init_dataset)
        jobs += [(path, _run_name(f"{name}-init", taken), name, args.init_dataset) for path, name in zip(args.config, names)]
    rules_by_name = {}
    for path, name in zip(args.config, names):  # every config is checked before the first one trains
        config = load_config(path, [*args.set, f"run.name={name}"])
        rules_by_name[name] = Rules.resolve(config.env.rules)
    if len({rules.to_dict().__repr__() for rules in rules_by_name.values()}) > 1:
        raise ValueError("--config: the configs train for different rules; their curves would not be comparable")
    from blackout_training.agents.policies import load_policy

    try:  # the opponent and the plot's file, before minutes of training
        load_policy(args.opponent, next(iter(rules_by_name.values())), 0)
    except ValueError as error:
        raise ValueError(f"--opponent: {error}") from None
    plot_path = Path(args.plot) if args.plot else Path(args.out_dir) / "strength_curve.png"
    if args.plot:
        try:  # (the plot makes its folder: so does the check)
            Path(args.plot).parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(f"--plot {args.plot!r}: its folder cannot be made ({error.strerror or error})") from None
        check_output_file(args.plot, "--plot")

    def log(line: str) -> None:
        print(line, flush=True)

    trained = {name: _train(path, name, args, minutes, log, init) for path, name, _, init in jobs}
    workers = args.workers or free_cores()
    runs = []
    for path, name, rules_of, init in jobs:
        started = time.perf_counter()
        points = [_evaluate(checkpoint, before_s, m, args, rules_by_name[rules_of], workers)
                  for m, (checkpoint, before_s) in trained[name].items()]
        log(f"{name}: {len(points)} networks evaluated on {args.deals} deals in {time.perf_counter() - started:.0f} s")
        entry = {"name": name, "config": path, "folder": str(Path(args.out_dir) / name), "points": points}
        if init is not None:
            entry |= {"init_dataset": init, "clone_s": next(iter(trained[name].values()))[1]}
        runs.append(entry)

    reference = runs[0]
    last = reference["points"][-1]
    comparisons = []
    for entry in runs[1:]:
        for point in entry["points"]:
            same = next(p for p in reference["points"] if p["minutes"] == point["minutes"])
            for other, label in ((last, f"{reference['name']} at {last['minutes']:g} min"),
                                 (same, f"{reference['name']} at {same['minutes']:g} min")):
                comparisons.append({
                    "a": f"{entry['name']} at {point['minutes']:g} min", "b": label,
                    **paired(np.array(point["per_deal_difference"]), np.array(other["per_deal_difference"])),
                })
                if other is same:
                    break  # (same as last: one row)

    print()
    print(f"agent - {args.opponent} per hand, {args.deals} duplicate deals (seed {args.seed}), whole matches:")
    print(f"{'config':<24} {'minutes':>7} {'decisions':>12} {'agent - opp. (95% CI)':>26} {'bid made':>9}")
    for entry in runs:
        for p in entry["points"]:
            print(f"{entry['name']:<24} {p['minutes']:>7g} {p['decisions']:>12,} "
                  f"{p['mean']:>+8.2f} [{p['low']:+.2f}, {p['high']:+.2f}]{'':>3} {p['bid_made_rate']:>9.1%}")
    if comparisons:
        print()
        print("paired by deal:")
        for c in comparisons:
            print(f"  {c['a']} - {c['b']}: {c['mean']:+.2f} [{c['low']:+.2f}, {c['high']:+.2f}]")
    try:
        print(f"plot: {plot(runs, plot_path, args.opponent)}")
    except ImportError:
        print("plot: matplotlib is not installed (pip install matplotlib)")
    write_json(args.json, {
        "configs": args.config, "overrides": args.set, "minutes": minutes, "deals": args.deals, "seed": args.seed,
        "opponent": args.opponent, "init_dataset": args.init_dataset, "init_epochs": args.init_epochs, "runs": runs, "comparisons": comparisons,
        "load_average_at_the_end": os.getloadavg(),
    })
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
