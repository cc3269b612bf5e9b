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
                        "default: configs/train/default.yaml)")
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


def _train(config_path: str, name: str, args: argparse.Namespace, minutes: list[float], log: Any) -> Path:
    from blackout_training.ppo.config import config_to_dict, load_config
    from blackout_training.ppo.trainer import train

    overrides = [
        *args.set,
        f"run.out_dir={args.out_dir}",
        f"run.name={name}",
        f"run.time_limit_minutes={max(minutes)}",
        f"run.checkpoint_minutes=[{', '.join(f'{m:g}' for m in minutes)}]",
        "run.progress_bar=false",
        "eval.final_deals=0",
    ]
    config = load_config(config_path, overrides)
    folder = Path(args.out_dir) / name
    if not args.retrain and _finished(folder, config_to_dict(config), minutes):
        log(f"{name}: {folder} already holds this training; evaluating it again (--retrain trains it again)")
        return folder
    load = os.getloadavg()[0]
    log(f"{name}: training {max(minutes):g} minutes ({config_path}); load average {load:.2f} at the start")
    train(config, force=True, log=lambda line: log(f"  {line}"))
    return folder


def _evaluate(folder: Path, minutes: float, args: argparse.Namespace, rules: Any, workers: int) -> dict[str, Any]:
    from blackout_training.agents.policy_net import read_checkpoint
    from blackout_training.evaluation.tournament import evaluate
    from blackout_training.ppo.trainer import minute_checkpoint

    path = minute_checkpoint(folder, minutes)
    saved = read_checkpoint(path).get("extra", {})
    result = evaluate({"agent": f"ppo:{path.resolve()}", args.opponent: args.opponent}, rules=rules,
                      deals=args.deals, seed=args.seed, workers=workers)
    per_deal = np.array(result.per_deal["agent"]) - np.array(result.per_deal[args.opponent])
    return {
        "minutes": minutes,
        "elapsed_s": float(saved.get("elapsed_s", float("nan"))),
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

    args.config = args.config or ["configs/train/default.yaml"]
    check_output_file(args.json)
    minutes = sorted(set(args.minutes))
    if any(not m > 0 for m in minutes):
        raise ValueError(f"--minutes: positive numbers of minutes, got {args.minutes}")
    if args.deals < 2:
        raise ValueError(f"--deals: at least 2 (an interval needs two deals), got {args.deals}")
    if args.workers < 0:
        raise ValueError(f"--workers: 0 (the free cores) or more, got {args.workers}")
    taken: set[str] = set()
    names = [_run_name(path, taken) for path in args.config]
    rules_by_name = {}
    for path, name in zip(args.config, names):  # every config is checked before the first one trains
        config = load_config(path, [*args.set, f"run.name={name}"])
        rules_by_name[name] = Rules.resolve(config.env.rules)
    if len({rules.to_dict().__repr__() for rules in rules_by_name.values()}) > 1:
        raise ValueError("--config: the configs train for different rules; their curves would not be comparable")

    def log(line: str) -> None:
        print(line, flush=True)

    folders = {name: _train(path, name, args, minutes, log) for path, name in zip(args.config, names)}
    workers = args.workers or free_cores()
    runs = []
    for path, name in zip(args.config, names):
        started = time.perf_counter()
        points = [_evaluate(folders[name], m, args, rules_by_name[name], workers) for m in minutes]
        log(f"{name}: {len(points)} networks evaluated on {args.deals} deals in {time.perf_counter() - started:.0f} s")
        runs.append({"name": name, "config": path, "folder": str(folders[name]), "points": points})

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
    plot_path = Path(args.plot) if args.plot else Path(args.out_dir) / "strength_curve.png"
    try:
        print(f"plot: {plot(runs, plot_path, args.opponent)}")
    except ImportError:
        print("plot: matplotlib is not installed (pip install matplotlib)")
    write_json(args.json, {
        "configs": args.config, "overrides": args.set, "minutes": minutes, "deals": args.deals, "seed": args.seed,
        "opponent": args.opponent, "runs": runs, "comparisons": comparisons,
        "load_average_at_the_end": os.getloadavg(),
    })
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
