"""``blackout bench ray``: distributed native PPO (``algo: ppo_ray``) on a multi-node Ray test cluster, beside the native trainer.

In one run, so that every figure shares the machine's load:

- ``native``: the config trained by ``algo: ppo`` for about ``--seconds`` seconds, first and again after
  the distributed runs (the load of a shared machine moves; the ratios use the mean of the two);
- ``ppo_ray``: the same config with ``--samplers`` sampler actors (1, 2 and 4 by default), on
  Ray's own multi-node test cluster (``ray.cluster_utils.Cluster``: ``--nodes`` Ray nodes
  started on this machine, with enough logical CPUs for the most samplers), the samplers
  spread over the nodes (the node each ran on is printed);
- optionally ``rllib``: the config on the RLlib backend (``algo: rllib_ppo``) with
  ``--rllib-runners`` env runners, the path a user had before.

Each is a real training run (``blackout train``'s loop) in a temporary folder, with
evaluation and checkpoints off. A figure is the mean over the run's updates, the first
(warm-up) left out: decisions per second of whole updates (rollout + returns + update),
each sampler's own rollout speed, the share of an update the learner takes (the update
after the rollouts came back), and the transfer (the rollout's wall time beyond the
slowest sampler's own). Each sampler plays ``env.num_envs`` games, so one update of
``n`` samplers trains on ``n`` times the native update's decisions. On a machine with
fewer cores than samplers the cores cap the total: the per-sampler figures and the
learner's share say how it would scale on a cluster with a core per sampler.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from . import check_output_file, check_positive, command, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", default="default", help="the run config: a file or a shipped config's name (default: default, the default run)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config value")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each training run (default 60)")
    parser.add_argument("--samplers", type=int, nargs="+", default=[1, 2, 4], help="sampler counts (default 1 2 4)")
    parser.add_argument("--nodes", type=int, default=2, help="Ray nodes of the local test cluster (default 2)")
    parser.add_argument("--rllib-runners", type=int, default=0,
                        help="also time the RLlib backend with this many env runners (default 0: not run)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def summarise(updates: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean figures of a run's updates (``train``'s ``on_update`` records), the first left out when there are more."""
    kept = updates[1:] if len(updates) > 1 else updates
    if not kept:
        raise ValueError("a run finished no update; give it more --seconds")
    decisions = sum(u["decisions"] for u in kept)
    update_s = sum(u["update_s"] for u in kept)
    rollout_s = sum(u["rollout_s"] for u in kept)
    samplers = len(kept[0]["samplers"])
    per_sampler = [sum(u["samplers"][i]["decisions"] for u in kept) / sum(u["samplers"][i]["seconds"] for u in kept)
                   for i in range(samplers)]
    slowest = sum(max(s["seconds"] for s in u["samplers"]) for u in kept)
    return {
        "updates": len(kept),
        "decisions_per_update": decisions / len(kept),
        "decisions_per_second": decisions / update_s,
        "rollout_decisions_per_second": decisions / rollout_s,
        "per_sampler_decisions_per_second": per_sampler,
        "learner_share": (update_s - rollout_s) / update_s,
        "transfer_share": (rollout_s - slowest) / update_s,
        "nodes": [s.get("host", "driver") + ":" + str(s["node"])[:8] for s in kept[0]["samplers"]],
    }


def _train(config_path: str, overrides: list[str], folder: str, name: str, seconds: float) -> list[dict[str, Any]]:
    from blackout_training.ppo.config import load_config
    from blackout_training.ppo.trainer import train

    config = load_config(config_path, [
        *overrides, f"run.out_dir={folder}", f"run.name={name}", f"run.time_limit_minutes={seconds / 60.0}",
        "run.progress_bar=false", "run.checkpoint_every_updates=1000000", "eval.every_updates=0", "eval.final_deals=0",
    ])
    updates: list[dict[str, Any]] = []
    train(config, log=lambda *_: None, on_update=updates.append)
    return updates


def _line(name: str, figures: dict[str, Any], native: float) -> str:
    per = figures["per_sampler_decisions_per_second"]
    return (f"{name:14} {figures['decisions_per_second']:9,.0f} decisions/s per whole update ({figures['decisions_per_second'] / native:.2f}x native); "
            f"rollout {figures['rollout_decisions_per_second']:,.0f}/s; per sampler {', '.join(f'{x:,.0f}' for x in per)}/s; "
            f"learner {figures['learner_share']:.0%} of an update, transfer {figures['transfer_share']:.1%}; "
            f"{figures['updates']} updates of {figures['decisions_per_update']:,.0f}")


def run(args: argparse.Namespace) -> int:
    check_positive(seconds=args.seconds, nodes=args.nodes)
    if any(n < 1 for n in args.samplers):
        raise ValueError(f"--samplers: each count must be at least 1, got {args.samplers}")
    if args.rllib_runners < 0:
        raise ValueError(f"--rllib-runners: 0 or more, got {args.rllib_runners}")
    check_output_file(args.json)
    rllib_overrides = [*args.set, "algo=rllib_ppo", f"rllib.num_env_runners={args.rllib_runners}"]
    if args.rllib_runners:  # (checked before the native run trains: RLlib refuses what its module lacks)
        from blackout_training.ppo.config import ConfigError, load_config

        try:
            load_config(args.config, rllib_overrides)
        except ConfigError as error:
            hint = "; --set model.critic=view times every path with the view critic" if "model.critic" in str(error) else ""
            raise ConfigError(f"--rllib-runners: {error}{hint}") from None
    from blackout_training.ppo.ray_cluster import import_ray

    ray = import_ray("blackout bench ray")
    from ray.cluster_utils import Cluster

    load_before = os.getloadavg()
    result: dict[str, Any] = {"config": args.config, "overrides": args.set, "cores": os.cpu_count(), "nodes": args.nodes}
    with tempfile.TemporaryDirectory(prefix="blackout-bench-ray-") as folder:
        native = summarise(_train(args.config, [*args.set, "algo=ppo"], folder, "native", args.seconds))
        result["native"] = native
        print(_line("native", native, native["decisions_per_second"]), flush=True)
        # RLlib before the test cluster: it starts and stops a Ray of its own.
        if args.rllib_runners:
            from blackout_training.ppo.config import load_config
            from blackout_training.rllib.backend import train as rllib_train

            from .train import training_figures

            config = load_config(args.config, [
                *rllib_overrides, f"run.out_dir={folder}", "run.name=rllib", f"run.time_limit_minutes={args.seconds / 60.0}",
                "run.progress_bar=false", "run.checkpoint_every_updates=1000000", "eval.every_updates=0", "eval.final_deals=0",
            ])
            rllib_train(config, log=lambda *_: None)
            rllib = training_figures(Path(folder) / "rllib" / "metrics.csv")
            result["rllib"] = rllib
            print(f"{'rllib x' + str(args.rllib_runners):14} {rllib['decisions_per_second']:9,.0f} decisions/s per whole update "
                  f"({rllib['decisions_per_second'] / native['decisions_per_second']:.2f}x native); rollout "
                  f"{rllib['rollout_decisions_per_second']:,.0f}/s; {rllib['updates']} updates", flush=True)
        cpus_per_node = -(-max(args.samplers) // args.nodes)
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": cpus_per_node})
        for _ in range(args.nodes - 1):
            cluster.add_node(num_cpus=cpus_per_node)
        ray.init(address=cluster.address, log_to_driver=False)
        try:
            result["ppo_ray"] = []
            for count in args.samplers:
                figures = summarise(_train(args.config, [*args.set, "algo=ppo_ray", f"ray.num_samplers={count}"],
                                           folder, f"ray{count}", args.seconds))
                figures["samplers"] = count
                figures["distinct_nodes"] = len(set(figures["nodes"]))
                result["ppo_ray"].append(figures)
                print(_line(f"ppo_ray x{count}", figures, native["decisions_per_second"]), flush=True)
                print(f"{'':14} samplers on {figures['distinct_nodes']} of {args.nodes} Ray nodes: {', '.join(figures['nodes'])}",
                      flush=True)
        finally:
            ray.shutdown()
            cluster.shutdown()
        # The native trainer again: on a shared machine the load moves; both timings are kept, the mean is the reference.
        native_after = summarise(_train(args.config, [*args.set, "algo=ppo"], folder, "native-after", args.seconds))
        result["native_after"] = native_after
        print(_line("native, again", native_after, native["decisions_per_second"]), flush=True)
        reference = (native["decisions_per_second"] + native_after["decisions_per_second"]) / 2
        result["native_mean_decisions_per_second"] = reference
        for figures in result["ppo_ray"]:
            figures["ratio_to_native"] = figures["decisions_per_second"] / reference
        print("ppo_ray / native (the mean of both native runs): "
              + ", ".join(f"{f['samplers']} samplers {f['ratio_to_native']:.2f}x" for f in result["ppo_ray"]), flush=True)
    load_after = os.getloadavg()
    result["load_average"] = {"before": load_before, "after": load_after}
    print(f"cores: {os.cpu_count()}; load average before {load_before[0]:.2f}, after {load_after[0]:.2f} "
          f"(1-minute), {np.round(load_after, 2).tolist()}")
    write_json(args.json, result)
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
