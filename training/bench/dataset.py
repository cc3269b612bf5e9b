"""``blackout bench dataset``: learner decisions per second written by ``blackout dataset create``, Gym path against batched.

In one run, so that the figures share the machine's load, for each ``--policies`` spec:

- ``gym``: :func:`blackout_training.datasets.create_dataset` with ``path="gym"`` (the
  registered Gym env stepped one decision at a time, the policy asked through ``act(view)``);
- ``batched``: the same with ``path="batched"`` (the vector env, ``--batch`` games at a time,
  the policy asked in batch; with ``--workers N`` > 1, played in N - 1 processes while the calling
  one writes).

A figure is learner decisions kept per second of playing and writing the whole dataset
(Minari's HDF5 file included), measured on the wall clock (``--clock cpu``: the process's CPU
time). The datasets go to a temporary Minari root, removed afterwards. Each path runs once untimed
on a small dataset first (the policy, numba's compiled kernels and the env's first calls load);
with ``--workers`` the workers start inside the timed run, as they do for a user. The load average
is printed with the figures (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from blackout_env import Rules

from . import check_output_file, check_positive, command, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policies", nargs="+", default=["heuristic", "ppo"], metavar="SPEC",
                        help="the learner's policies (default: heuristic ppo)")
    parser.add_argument("--opponents", default="heuristic", help="the other seats' policy (default heuristic)")
    parser.add_argument("--rules", default="standard", help="a preset name or YAML file (default: standard)")
    parser.add_argument("--gym-episodes", type=int, default=100, help="episodes on the Gym path (default 100)")
    parser.add_argument("--batched-episodes", type=int, default=8192,
                        help="episodes on the batched path (default 8192: eight waves of 1024, so that --workers overlaps)")
    parser.add_argument("--batch", type=int, default=1024, help="games at once on the batched path (default 1024)")
    parser.add_argument("--workers", type=int, default=1,
                        help="processes of the batched path: N - 1 play while one writes (default 1: one process)")
    parser.add_argument("--gym-only", action="store_true",
                        help="time the Gym path alone (for a policy with no batched form, e.g. ppo+search)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall clock (default) or process CPU time")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def _timed(dataset_id: str, config, clock) -> tuple[float, int]:
    from blackout_training.datasets import create_dataset

    start = clock()
    result = create_dataset(dataset_id, config)
    return clock() - start, result.decisions


def run(args: argparse.Namespace) -> int:
    check_positive(gym_episodes=args.gym_episodes, batched_episodes=args.batched_episodes, batch=args.batch,
                   workers=args.workers)
    check_output_file(args.json)
    if args.clock == "cpu" and args.workers > 1:
        raise ValueError("--clock cpu counts this process's time only, not its workers': use the wall clock with --workers")
    from blackout_training.agents.policies import load_policy
    from blackout_training.datasets import DatasetConfig

    rules = Rules.resolve(args.rules)
    for spec in (*args.policies, args.opponents):  # every spec loads before the first is timed
        load_policy(spec, rules, 0)

    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    root = tempfile.mkdtemp(prefix="blackout-bench-dataset-")
    saved = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = root
    figures: dict = {"rules": args.rules, "opponents": args.opponents, "batch": args.batch, "workers": args.workers,
                     "clock": args.clock, "policies": {}}
    try:
        for k, policy in enumerate(args.policies):
            base = dict(policy=policy, opponents=[args.opponents], rules=args.rules, seed=args.seed)
            row: dict = {}
            _timed(f"bench/gym-warm-{k}-v0", DatasetConfig(**base, episodes=1), clock)
            seconds, decisions = _timed(f"bench/gym-{k}-v0", DatasetConfig(**base, episodes=args.gym_episodes), clock)
            row["gym"] = {"decisions": decisions, "seconds": seconds, "decisions_per_s": decisions / seconds}
            if not args.gym_only:
                _timed(f"bench/warm-{k}-v0", DatasetConfig(**base, episodes=8, path="batched", batch=8), clock)
                seconds, decisions = _timed(
                    f"bench/batched-{k}-v0",
                    DatasetConfig(**base, episodes=args.batched_episodes, path="batched", batch=args.batch,
                                  workers=args.workers), clock,
                )
                row["batched"] = {"decisions": decisions, "seconds": seconds, "decisions_per_s": decisions / seconds}
                row["speedup"] = row["batched"]["decisions_per_s"] / row["gym"]["decisions_per_s"]
            figures["policies"][policy] = row
    finally:
        if saved is None:
            del os.environ["MINARI_DATASETS_PATH"]
        else:
            os.environ["MINARI_DATASETS_PATH"] = saved
        shutil.rmtree(root, ignore_errors=True)
    figures["load_average"] = list(os.getloadavg())
    print(f"blackout bench dataset: {args.rules}, opponents {args.opponents}, learner decisions written per second "
          f"({args.clock} clock)")
    for policy, row in figures["policies"].items():
        gym = row["gym"]
        line = f"  {policy:<12} gym {gym['decisions_per_s']:>9,.0f}/s ({gym['decisions']:,} in {gym['seconds']:.1f} s)"
        if "batched" in row:
            batched = row["batched"]
            line += (f"   batched {batched['decisions_per_s']:>9,.0f}/s ({batched['decisions']:,} in "
                     f"{batched['seconds']:.1f} s, batch {args.batch}, {args.workers} process"
                     f"{'es' if args.workers > 1 else ''})   x{row['speedup']:.1f}")
        print(line)
    print("load average: " + ", ".join(f"{x:.2f}" for x in figures["load_average"]))
    write_json(args.json, figures)
    return 0


main = command(__name__, __doc__, add_arguments, run)
