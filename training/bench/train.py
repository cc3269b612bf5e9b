"""``blackout bench train``: PPO training's decisions per second beside the raw batched engine's.

In one run, so that both figures share the machine's load:

- the batched engine alone (:class:`blackout_env.batched.BatchedBlackout` at its
  default settings, observations included, uniform random legal actions), with
  the run config's rules at the config's number of games and at ``--games``
  games; timed before and after training, the best timing counts;
- a real training run of the config (``blackout train``'s own loop: rollout,
  GAE, PPO update) for about ``--seconds`` seconds, in a temporary folder, with
  evaluation and checkpoints off. Its figure is the mean over the run: all
  decisions divided by the time of all updates (rollout + GAE + update), as
  logged in ``metrics.csv``; the rollout alone is given too.

The ratio ``training / engine`` says how much of the engine's speed training
keeps. ``--set SECTION.KEY=VALUE`` overrides the config as in ``blackout train``.

``--busy-cores K [K ...]`` runs the training once per K, each beside K other
processes that keep one core busy each (a busy loop: another experiment, a test
run, a browser tab), and gives each run's decisions/s as a ratio to the first:
how the trainer degrades on a shared machine (docs/training.md).
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from blackout_env import Rules
from blackout_env.batched import BatchedBlackout

from . import check_output_file, check_positive, command, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default="default", help="the run config: a file or a shipped config's name (default: default, the default run)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config value")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the training run (default 60)")
    parser.add_argument("--games", type=int, default=4096, help="the engine's second number of games (default 4096)")
    parser.add_argument("--engine-seconds", type=float, default=1.0, help="length of one engine timing (default 1)")
    parser.add_argument("--repeats", type=int, default=3, help="engine timings before and after training (default 3)")
    parser.add_argument("--busy-cores", type=int, nargs="+", default=[0], metavar="K",
                        help="train once per K beside K busy-loop processes (default 0: an idle machine); "
                        "e.g. --busy-cores 0 1 2")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


@contextmanager
def busy_cores(count: int) -> Iterator[None]:
    """``count`` other processes, each keeping one core busy, while the block runs."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        time.sleep(0.5 if count else 0.0)  # they are running before the trainer measures the free cores
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def engine_decisions_per_second(rules: Rules, games: int, seconds: float, seed: int = 0) -> float:
    """The batched engine at its default settings (observations, fresh arrays), random legal play."""
    env = BatchedBlackout(rules, games, seed=seed)
    rng = np.random.default_rng(seed)
    env.reset()
    for _ in range(10):
        env.step(env.random_actions(rng))
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        env.step(env.random_actions(rng))
        steps += 1
    return steps * games / elapsed


def training_figures(metrics_csv: Path) -> dict[str, float]:
    """Mean decisions/s over a run's updates (whole update, and rollout alone) from its metrics.csv."""
    with open(metrics_csv, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    if not rows:
        raise RuntimeError(f"{metrics_csv}: the run finished no update; give it more --seconds")
    decisions = np.diff([0] + [int(row["global_step"]) for row in rows])
    update_s = decisions / np.array([float(row["steps_per_s"]) for row in rows])
    rollout_s = decisions / np.array([float(row["rollout_steps_per_s"]) for row in rows])
    return {
        "updates": len(rows),
        "decisions": int(decisions.sum()),
        "decisions_per_second": float(decisions.sum() / update_s.sum()),
        "rollout_decisions_per_second": float(decisions.sum() / rollout_s.sum()),
        "rollout_share": float(rollout_s.sum() / update_s.sum()),
    }


def run(args: argparse.Namespace) -> int:
    from blackout_training.ppo.config import load_config

    check_positive(seconds=args.seconds, engine_seconds=args.engine_seconds, repeats=args.repeats, games=args.games)
    if any(count < 0 for count in args.busy_cores):
        raise ValueError(f"--busy-cores: counts of busy processes >= 0, got {args.busy_cores}")
    check_output_file(args.json)
    with tempfile.TemporaryDirectory(prefix="blackout-bench-train-") as folder:
        overrides = [
            *args.set,
            f"run.out_dir={folder}",
            f"run.time_limit_minutes={args.seconds / 60.0}",
            "run.progress_bar=false",
            "run.checkpoint_every_updates=1000000",
            "eval.every_updates=0",
            "eval.final_deals=0",
        ]
        config = load_config(args.config, [*overrides, "run.name=bench0"])
        rules = Rules.resolve(config.env.rules)
        sizes = sorted({config.env.num_envs, args.games})
        engine = dict.fromkeys(sizes, 0.0)

        def time_engine() -> None:
            for _ in range(args.repeats):
                for games in sizes:
                    engine[games] = max(engine[games], engine_decisions_per_second(rules, games, args.engine_seconds))

        from blackout_training.ppo.trainer import train

        time_engine()
        runs = []
        for index, count in enumerate(args.busy_cores):
            threads: list[int] = []
            run_config = load_config(args.config, [*overrides, f"run.name=bench{index}"])
            with busy_cores(count):
                train(run_config, log=lambda *_: None,
                      on_update=lambda info, used=threads: used.append(info["threads"]))
            runs.append({"busy_cores": count, "threads": sorted(set(threads)),
                         **training_figures(Path(folder) / f"bench{index}" / "metrics.csv")})
        time_engine()
    figures = runs[0]
    load = os.getloadavg()
    result = {
        "config": args.config,
        "overrides": args.set,
        "num_envs": config.env.num_envs,
        "threads": config.run.threads,
        "training": figures,
        "busy_cores": runs,
        "engine_decisions_per_second": {str(games): value for games, value in engine.items()},
        "ratio": {str(games): figures["decisions_per_second"] / value for games, value in engine.items()},
        "load_average": load,
    }
    print(f"training ({args.config}, {config.env.num_envs} games, threads {config.run.threads} "
          f"(used: {', '.join(map(str, figures['threads']))}), {figures['updates']} updates, "
          f"{figures['decisions']:,} decisions):")
    print(f"  whole updates (rollout + GAE + update): {figures['decisions_per_second']:,.0f} decisions/s")
    print(f"  rollout alone: {figures['rollout_decisions_per_second']:,.0f} decisions/s "
          f"({figures['rollout_share']:.0%} of the time)")
    for games, value in engine.items():
        print(f"engine with observations, {games} games: {value:,.0f} decisions/s; "
              f"training keeps {result['ratio'][str(games)]:.1%} of it")
    if len(runs) > 1:
        print("beside busy processes (each keeps one core busy):")
        print("busy cores  threads used  decisions/s  rollout decisions/s  ratio to the first")
        for entry in runs:
            print(f"{entry['busy_cores']:>10}  {', '.join(map(str, entry['threads'])):>12}  "
                  f"{entry['decisions_per_second']:>11,.0f}  {entry['rollout_decisions_per_second']:>19,.0f}  "
                  f"{entry['decisions_per_second'] / figures['decisions_per_second']:>18.2f}x")
    print(f"load average: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    write_json(args.json, result)
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
