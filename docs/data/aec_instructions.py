"""Instructions per decision of the AEC loop of ``blackout bench aec``, counted by callgrind.

The timings of ``blackout bench aec`` move by 10-30% between runs on a shared
machine; instruction counts do not depend on the load. Each target runs in its
own process under ``valgrind --tool=callgrind`` with counting off; after a
warm-up (every kernel compiled or loaded) and ``gc.freeze()`` (so that the
collections inside the count do not depend on what was imported) counting is switched on for exactly
``--decisions`` decisions of the bench's loop, and the process exits without
shutting the interpreter down, so nothing else is counted.

    python docs/data/aec_instructions.py [--decisions 2600] [--json FILE]

Needs valgrind (``callgrind_control`` on the PATH). Prints the instructions per
decision of ``raw_env``, ``env()``, the do-nothing env behind the same wrapper
and bare, and the ratio of ``env()`` to the do-nothing env. To count another
tree, put its ``blackout_env`` first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

TARGETS = ("raw_env", "env()", "trivial env()", "trivial bare")


def _make(target: str):
    from blackout_training.bench.aec import _TrivialEnv

    import blackout_env
    from blackout_env.envs.aec import with_wrappers

    if target == "raw_env":
        return blackout_env.raw_env(rules="standard")
    if target == "env()":
        return blackout_env.env(rules="standard")
    trivial = _TrivialEnv.make(4, 63, blackout_env.observation_size("standard"))
    return with_wrappers(trivial) if target == "trivial env()" else trivial


def _child(target: str, decisions: int, ready: str) -> None:
    from blackout_training.bench.aec import aec_loop  # the loop of ``blackout bench aec``

    environment = _make(target)
    environment.reset(seed=0)
    pick = random.Random(0).random
    aec_loop(environment, 600, pick)  # warm-up
    gc.collect()
    gc.freeze()  # the count's collections then traverse what the loop allocates, not every object imported
    open(ready, "w").close()
    while os.path.exists(ready):  # the parent switches counting on, then removes the file
        time.sleep(0.05)
    aec_loop(environment, decisions, pick)
    os._exit(0)  # no interpreter shutdown inside the count


def _count(target: str, decisions: int, folder: str) -> float:
    ready, out = os.path.join(folder, "ready"), os.path.join(folder, "callgrind.out")
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
        sys.executable, __file__, "--child", target, "--decisions", str(decisions), "--ready", ready,
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONHASHSEED": "0"})
    while not os.path.exists(ready):
        if process.poll() is not None:
            raise SystemExit(f"{target}: the process ended before its warm-up did:\n{process.stderr.read()}")
        time.sleep(0.2)
    switch = subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], capture_output=True, text=True)
    if switch.returncode != 0:
        process.kill()
        raise SystemExit(f"{target}: callgrind_control failed:\n{switch.stdout}{switch.stderr}")
    os.remove(ready)
    _, errors = process.communicate()
    collected = re.search(r"Collected : (\d+)", errors)
    if process.returncode != 0 or collected is None:
        raise SystemExit(f"{target}: callgrind gave no count:\n{errors}")
    return int(collected.group(1)) / decisions


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=int, default=2600, help="decisions counted per target (default 2600: 10 matches)")
    parser.add_argument("--json", help="also write the counts to this JSON file")
    parser.add_argument("--child", choices=TARGETS, help=argparse.SUPPRESS)
    parser.add_argument("--ready", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.decisions < 1:
        parser.error(f"--decisions: must be at least 1, got {args.decisions}")
    if args.child:
        _child(args.child, args.decisions, args.ready)
        return 0
    counts = {}
    for target in TARGETS:
        with tempfile.TemporaryDirectory() as folder:
            counts[target] = _count(target, args.decisions, folder)
        print(f"{target:<14} {counts[target]:>10,.0f} instructions a decision", flush=True)
    ratio = counts["trivial env()"] / counts["env()"]
    print(f"env() runs at {ratio:.3f}x the do-nothing env by instructions")
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"decisions": args.decisions, "instructions_per_decision": counts, "ratio": ratio}, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
