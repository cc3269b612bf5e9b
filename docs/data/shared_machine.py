"""The shared-machine table of docs/training.md: an evaluation and a browser bot beside busy processes.

For each K of ``--busy-cores``, with K other processes each keeping one core busy (a busy loop), it times

- ``blackout eval --policies ppo heuristic --workers 0`` over ``--deals`` duplicate deals (seconds; its
  workers are the free cores), and
- ``blackout bench web --policies ppo``: the median time of a ``ppo`` bot's move served by ``blackout serve``
  (milliseconds);

and writes one JSON file. The trainer's row comes from ``blackout bench train --busy-cores 0 1 2``.

    python docs/data/shared_machine.py --busy-cores 0 1 2 --json docs/data/shared-machine.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from blackout_training.bench.train import busy_cores


def timed_eval(deals: int) -> float:
    """Seconds of ``blackout eval`` (ppo against the heuristic, the free cores as workers)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "blackout_training.cli", "eval", "--policies", "ppo", "heuristic",
                    "--deals", str(deals), "--workers", "0", "--seed", "0"], check=True, capture_output=True)
    return time.perf_counter() - started


def web_move_ms(moves: int) -> float:
    """The median milliseconds of a ppo bot's move at a ``blackout serve`` table (``blackout bench web``)."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "web.json"
        subprocess.run([sys.executable, "-m", "blackout_training.cli", "bench", "web", "--policies", "ppo", "--moves",
                        str(moves), "--tables", "1", "--json", str(out)], check=True, capture_output=True)
        return float(json.loads(out.read_text())["moves"]["ppo"]["median_ms"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy-cores", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--deals", type=int, default=24, help="duplicate deals of the evaluation (default 24)")
    parser.add_argument("--moves", type=int, default=100, help="ppo moves timed at the web table (default 100)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if args.deals < 1 or args.moves < 1 or any(k < 0 for k in args.busy_cores):
        parser.error("--deals and --moves must be at least 1, --busy-cores at least 0")
    rows = []
    for count in args.busy_cores:
        with busy_cores(count):
            row = {"busy_cores": count, "eval_s": timed_eval(args.deals), "web_ppo_move_ms": web_move_ms(args.moves)}
        rows.append(row)
        print(f"busy cores {count}: eval {row['eval_s']:.1f} s ({row['eval_s'] / rows[0]['eval_s']:.2f}x the first), "
              f"web ppo move {row['web_ppo_move_ms']:.1f} ms", flush=True)
    result = {"deals": args.deals, "moves": args.moves, "rows": rows, "cores": len(os.sched_getaffinity(0)),
              "load_average_after": os.getloadavg()}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
