"""``blackout bench rllib``: decisions per second of RLlib's env runners, plain AEC env against the batched engine.

In one run, so that every figure shares the machine's load:

- ``aec``: RLlib's ``PettingZooEnv`` over ``blackout_env.env()`` (one decision per env step),
  the path a new user gets with RLlib's own wrapper;
- ``batched``: :class:`blackout_training.rllib.env.BatchedMultiAgentEnv` with ``--games`` games
  (every (game, seat) an agent, one env step = one decision of every game);

each with ``--runners`` remote env runners (Ray actors) sampling at once. A runner
samples with the PPO setup of ``algo: rllib_ppo`` (the masked network of ``--hidden``
widths, exploring), so a decision costs RLlib's connectors, the network's forward pass
and the env. A figure is the decisions all runners sampled (``EnvRunner.sample``) over
the slowest runner's time, best of ``--repeats``; per runner it is that divided by the
number of runners. The load average (``os.getloadavg``) is printed with the figures:
on a shared machine only the ratios measured in one run compare.
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from . import check_output_file, command, write_json

PATHS = ("aec", "batched")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--paths", nargs="+", choices=PATHS, default=list(PATHS), help="env paths (default: both)")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2], help="numbers of env runners (default 1 2)")
    parser.add_argument("--games", type=int, default=256, help="games per runner on the batched path (default 256)")
    parser.add_argument("--rules", default="standard", help="rules preset or YAML file (default standard)")
    parser.add_argument("--decisions", type=int, default=20_000,
                        help="decisions per runner per timing on the batched path (default 20000); "
                             "the aec path samples a twentieth of it")
    parser.add_argument("--hidden", type=int, nargs="+", default=[256, 256], help="network widths (default 256 256)")
    parser.add_argument("--arch", default="cards", choices=["mlp", "cards"], help="network (default cards)")
    parser.add_argument("--repeats", type=int, default=2, help="timings per figure; the best counts (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def _check(args: argparse.Namespace) -> None:
    if any(n < 1 for n in args.runners):
        raise ValueError(f"--runners: each count must be at least 1, got {args.runners}")
    for name in ("games", "decisions", "repeats"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name}: must be at least 1, got {getattr(args, name)}")
    check_output_file(args.json)


def _config(path: str, runners: int, args: argparse.Namespace) -> tuple[Any, Any]:
    """The run config and rules of one measurement (checked: ConfigError or RulesError naming the problem)."""
    from blackout_env import Rules

    from ..ppo.config import config_from_dict

    rules = Rules.resolve(args.rules)
    config = config_from_dict({
        "algo": "rllib_ppo",
        "run": {"seed": args.seed},
        "env": {"rules": args.rules, "num_envs": args.games},
        "model": {"hidden_sizes": args.hidden, "arch": args.arch},
        "ppo": {"rollout_steps": 1},
        "rllib": {"num_env_runners": runners, "env": path},
    })
    return config, rules


def _algorithm(path: str, runners: int, args: argparse.Namespace) -> Any:
    from ..rllib.backend import build_algorithm_config

    config, rules = _config(path, runners, args)
    return build_algorithm_config(config, rules).build_algo()


def _time_sampling(algo: Any, decisions: int) -> tuple[int, float]:
    """Decisions sampled by all remote runners at once, and the slowest runner's seconds."""

    def sample(runner: Any) -> tuple[int, float]:
        start = time.perf_counter()
        episodes = runner.sample(num_timesteps=decisions, explore=True)
        return sum(episode.agent_steps() for episode in episodes), time.perf_counter() - start

    results = algo.env_runner_group.foreach_env_runner(sample, local_env_runner=False)
    return sum(count for count, _ in results), max(seconds for _, seconds in results)


def run(args: argparse.Namespace) -> int:
    """Time each path's sampling with each number of runners, print the ratios, and write ``--json``."""
    _check(args)
    for runners in args.runners:  # every option checked before Ray starts (it writes ~/.ray)
        for path in args.paths:
            _config(path, runners, args)
    from ..ppo.ray_cluster import import_rllib

    ray = import_rllib("blackout bench rllib")
    ray.init(num_cpus=max(args.runners) + 1, include_dashboard=False, log_to_driver=False)
    figures: list[dict[str, Any]] = []
    try:
        for runners in args.runners:
            for path in args.paths:
                algo = _algorithm(path, runners, args)
                per_runner = args.decisions if path == "batched" else max(1, args.decisions // 20)
                _time_sampling(algo, min(per_runner, 2_000))  # warm-up: first resets, first forward passes
                best = 0.0
                for _ in range(args.repeats):
                    count, seconds = _time_sampling(algo, per_runner)
                    best = max(best, count / seconds)
                algo.stop()
                load = os.getloadavg()
                figures.append({"path": path, "runners": runners, "games": args.games if path == "batched" else 1,
                                "decisions_per_s": round(best, 1), "per_runner": round(best / runners, 1),
                                "load_average": [round(x, 2) for x in load]})
                print(f"{path:8} runners {runners}: {best:10,.0f} decisions/s ({best / runners:,.0f} per runner)"
                      f"   load average {load[0]:.2f}", flush=True)
    finally:
        ray.shutdown()

    print()
    by = {(f["path"], f["runners"]): f["decisions_per_s"] for f in figures}
    for runners in args.runners:
        if ("aec", runners) in by and ("batched", runners) in by:
            print(f"batched / aec with {runners} runner(s): {by['batched', runners] / by['aec', runners]:.1f}x")
    for path in args.paths:
        counts = [n for n in args.runners if (path, n) in by]
        if len(counts) > 1:
            base = counts[0]
            curve = ", ".join(f"{n}: {by[path, n] / by[path, base]:.2f}x" for n in counts)
            print(f"{path}: decisions/s by runners relative to {base} runner(s): {curve}")
    print(f"cores: {os.cpu_count()}, load average now {os.getloadavg()[0]:.2f}")
    write_json(args.json, {"args": vars(args), "figures": figures})
    return 0


main = command(__name__, __doc__, add_arguments, run)
