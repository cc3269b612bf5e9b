"""Instructions per decision of the compiled core's users (batched engine, vector env, batched heuristic, IS-MCTS), counted by callgrind.

Timings move by 10-30% between runs on a shared machine; instruction counts do
not depend on the load. Each target runs in its own process under ``valgrind
--tool=callgrind`` with counting off; after a warm-up (every kernel compiled or
loaded: a whole match in every game) and ``gc.freeze()``, counting is switched on for exactly ``--steps``
steps of its loop, and the process exits without shutting the interpreter
down, so nothing else is counted (as ``aec_instructions.py``).

    python docs/data/core_instructions.py [--steps 40] [--json FILE]

Targets: ``batched`` (256 ``standard`` games with observations into the
encoder's buffer, ``copy=False``, random legal actions: a step is 256 decisions), ``batched, no observations``, ``vector env``
(256 games, random opponents: a step is 256 learner decisions), ``batched
heuristic`` (``HeuristicBot().batched(rules)`` acting in 256 games, then the
unobserved step) and ``IS-MCTS`` (``ISMCTSBot(simulations=100)`` deciding for
every seat of a ``standard`` game: a step is one decision). Needs valgrind
(``callgrind_control`` on the PATH). To count another tree, put its
``blackout_env`` (and ``blackout_baselines``) first on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np

TARGETS = ("batched", "batched, no observations", "vector env", "batched heuristic", "IS-MCTS")
GAMES = 256


def _loop(target: str) -> tuple[Callable[[], None], int, int]:
    """One step of ``target``'s loop (seeded: the same work in every process), the decisions it makes and the
    steps of its warm-up: a whole match in every game, so that every kernel is compiled or loaded before the
    count (loading one from numba's cache inside it would cost more than the steps counted)."""
    if target in ("batched", "batched, no observations", "batched heuristic"):
        from blackout_env.batched import BatchedBlackout

        # copy=False: the encoder's own buffer, so that the count does not depend on how the allocator
        # serves a fresh 0.9 MB array at each step
        engine = BatchedBlackout("standard", GAMES, observations=target == "batched", copy=False, seed=0)
        engine.reset()
        rng = np.random.default_rng(0)
        match = engine.rules.decisions_per_match + 1
        if target == "batched heuristic":
            from blackout_baselines import HeuristicBot

            bot = HeuristicBot().batched(engine.rules)
            return (lambda: engine.step(bot.act(engine), observe=False)), GAMES, match
        return (lambda: engine.step(engine.random_actions(rng))), GAMES, match
    if target == "vector env":
        from blackout_env.envs.vector_env import BlackoutVectorEnv

        envs = BlackoutVectorEnv(num_envs=GAMES, opponents="random")
        envs.reset(seed=0)
        rng = np.random.default_rng(0)

        def vector_step() -> None:
            masks = envs.action_masks()
            envs.step((rng.random(masks.shape) * masks).argmax(axis=1))

        return vector_step, GAMES, envs.engine.rules.decisions_per_match + 1
    from blackout_baselines import ISMCTSBot

    from blackout_env import BlackoutGame

    bot = ISMCTSBot(simulations=100, seed=0)
    game = BlackoutGame("standard", seed=0)

    def decide() -> None:
        nonlocal game
        if game.is_over:
            game = BlackoutGame("standard", seed=0)
        game.step(bot.act(game.view(game.current_player)))

    return decide, 1, 5  # (the bot compiles or loads its kernels when made)


def _child(target: str, steps: int, ready: str) -> None:
    step, _, warm_up = _loop(target)
    for _ in range(warm_up):
        step()
    gc.collect()
    gc.freeze()  # the count's collections then traverse what the loop allocates, not every object imported
    open(ready, "w").close()
    while os.path.exists(ready):  # the parent switches counting on, then removes the file
        time.sleep(0.05)
    for _ in range(steps):
        step()
    os._exit(0)  # no interpreter shutdown inside the count


def _count(target: str, steps: int, folder: str) -> float:
    ready, out = os.path.join(folder, "ready"), os.path.join(folder, "callgrind.out")
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
        sys.executable, __file__, "--child", target, "--steps", str(steps), "--ready", ready,
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
    return int(collected.group(1)) / (steps * _DECISIONS[target])


_DECISIONS = {target: 1 if target == "IS-MCTS" else GAMES for target in TARGETS}  # (as _loop returns)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="steps counted per target (default 40)")
    parser.add_argument("--targets", nargs="+", choices=TARGETS, default=list(TARGETS), help="which to count")
    parser.add_argument("--json", help="also write the counts to this JSON file")
    parser.add_argument("--child", choices=TARGETS, help=argparse.SUPPRESS)
    parser.add_argument("--ready", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps: must be at least 1, got {args.steps}")
    if args.child:
        _child(args.child, args.steps, args.ready)
        return 0
    counts = {}
    for target in args.targets:
        with tempfile.TemporaryDirectory() as folder:
            counts[target] = _count(target, args.steps, folder)
        print(f"{target:<26} {counts[target]:>12,.0f} instructions a decision", flush=True)
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"steps": args.steps, "instructions_per_decision": counts}, file, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
