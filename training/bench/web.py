"""``blackout bench web``: how fast ``blackout serve`` serves bot moves, alone and beside many games.

A real server (uvicorn, in its own process, on a free loopback port) and real
WebSocket clients (the ``websockets`` package) in this process:

1. **Move time.** For each policy of ``--policies``, one table of four bots at
   speed 0 is watched for ``--moves`` moves; a move's time is the time between
   two consecutive ``state`` messages (the bot's decision, the engine's step, the
   save, the message), and the server's own timing of each decision is read from
   its log (``served in X ms``).
2. **Load.** One probe table (heuristic bots, speed 0) is timed alone, then
   again while ``--tables`` - 1 other tables play at the page's default speed
   (600 ms between bot moves): ``--tables`` simultaneous games. The figure is the
   ratio of the probe's median move time with and without the load.

Everything runs on loopback and stops by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from blackout_env import Rules
from blackout_env.agents.policies import split_specs

from . import check_output_file, check_positive, command, write_json

SERVER = (
    "import logging, sys\n"
    "from blackout_training.web.server import serve\n"
    "serve(port=int(sys.argv[1]), saves=sys.argv[2], bot_delay_ms=0)\n"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--policies", default="heuristic,ppo,ppo+search-deep",
                        help="policies whose move time is measured, comma separated (default heuristic,ppo,ppo+search-deep)")
    parser.add_argument("--rules", default="standard", help="a rules preset (default standard, 4 players)")
    parser.add_argument("--moves", type=int, default=200, help="moves timed per policy (default 200)")
    parser.add_argument("--tables", type=int, default=50, help="simultaneous games in the load test (default 50)")
    parser.add_argument("--load-delay-ms", type=int, default=600,
                        help="bot speed of the other tables in the load test (default 600, the page's default)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tables (default 0)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _watch(url: str, policy: str, rules: str, moves: int, seed: int, delay_ms: int = 0,
                 stop: asyncio.Event | None = None) -> list[float]:
    """Watch a table of four ``policy`` bots; the seconds between consecutive states, ``moves`` of them."""
    import websockets

    times: list[float] = []
    async with websockets.connect(url, max_size=None) as ws:
        await ws.recv()  # hello
        await ws.send(json.dumps({"type": "new", "rules": rules, "seats": [policy] * 4, "seed": seed,
                                  "bot_delay_ms": delay_ms}))
        last = None
        last_move = -1
        while len(times) < moves and (stop is None or not stop.is_set()):
            message = json.loads(await ws.recv())
            if message["type"] == "error":
                raise ValueError(f"the server refused a table of {policy}: {message['message']}")
            if message["type"] != "state":
                continue
            now = time.perf_counter()
            if message["move"] > last_move and last is not None and last_move >= 0:
                times.append(now - last)
            last, last_move = now, message["move"]
            if message["status"] == "over":  # a new match on the same connection
                seed += 1
                await ws.send(json.dumps({"type": "new", "rules": rules, "seats": [policy] * 4, "seed": seed,
                                          "bot_delay_ms": delay_ms}))
                last, last_move = None, -1
    return times


async def _load(url: str, rules: str, moves: int, tables: int, delay_ms: int, seed: int) -> list[float]:
    stop = asyncio.Event()
    others = [asyncio.create_task(_watch(url, "heuristic", rules, 10**9, seed + 1 + i, delay_ms, stop))
              for i in range(tables - 1)]
    await asyncio.sleep(2.0)  # every table created and playing
    try:
        return await _watch(url, "heuristic", rules, moves, seed)
    finally:
        stop.set()
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)


def _summary(seconds: list[float]) -> dict[str, float]:
    ms = sorted(1000.0 * s for s in seconds)
    return {"median_ms": statistics.median(ms), "p95_ms": ms[int(0.95 * (len(ms) - 1))], "moves": len(ms)}


def run(args: argparse.Namespace) -> int:
    check_positive(moves=args.moves, tables=args.tables)
    from ..web.table import MAX_BOT_DELAY_MS

    if not 0 <= args.load_delay_ms <= MAX_BOT_DELAY_MS:  # (the server's own range for a table's bot delay)
        raise ValueError(f"--load-delay-ms must be 0..{MAX_BOT_DELAY_MS}, got {args.load_delay_ms}")
    check_output_file(args.json)
    policies = [p for p in split_specs(args.policies) if p]
    if not policies:
        raise ValueError("--policies: name at least one policy")
    from blackout_training.agents.policies import load_policy

    for spec in policies:  # every spec loads before the first is timed (the server would refuse it later)
        try:
            load_policy(spec, Rules.resolve(args.rules), 0)
        except ValueError as error:
            raise ValueError(f"--policies: {error}") from None
    try:
        import websockets  # noqa: F401
    except ModuleNotFoundError:
        raise ValueError("blackout bench web needs the web extra: pip install -e '.[web]'") from None
    port = _free_port()
    url = f"ws://127.0.0.1:{port}/ws"
    with tempfile.TemporaryDirectory() as saves:
        log_path = Path(saves) / "server.log"
        with log_path.open("w") as log:
            server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(Path(saves) / "games")],
                                      stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        try:
            _wait_for(port, server)
            results: dict[str, Any] = {"rules": args.rules, "players": 4, "moves": {}, "server_ms": {}}
            for policy in policies:
                before = len(_served(log_path))
                times = asyncio.run(_watch(url, policy, args.rules, args.moves, args.seed))
                served = _served(log_path)[before:]
                results["moves"][policy] = _summary(times)
                results["server_ms"][policy] = {"median_ms": statistics.median(served), "decisions": len(served)}
            asyncio.run(_watch(url, "heuristic", args.rules, 20, args.seed + 99))  # warm up
            alone = asyncio.run(_watch(url, "heuristic", args.rules, args.moves, args.seed + 100))
            loaded = asyncio.run(_load(url, args.rules, args.moves, args.tables, args.load_delay_ms, args.seed + 100))
            results["load"] = {"tables": args.tables, "other_tables_delay_ms": args.load_delay_ms,
                               "alone": _summary(alone), "loaded": _summary(loaded)}
            results["load"]["slowdown"] = results["load"]["loaded"]["median_ms"] / results["load"]["alone"]["median_ms"]
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"blackout serve, {args.rules} rules, 4 players; a move = a bot's decision, the engine's step, the save "
          "and the state message, timed by a WebSocket client on loopback")
    width = max(12, *(len(policy) for policy in policies))
    print(f"{'policy':<{width}} {'move median':>12} {'move p95':>10} {'server decision median':>24} {'moves':>6}")
    for policy in policies:
        move, server_ms = results["moves"][policy], results["server_ms"][policy]
        print(f"{policy:<{width}} {move['median_ms']:>9.1f} ms {move['p95_ms']:>7.1f} ms {server_ms['median_ms']:>21.1f} ms "
              f"{move['moves']:>6}")
    load = results["load"]
    print(f"load: the probe table's median move {load['alone']['median_ms']:.1f} ms alone, "
          f"{load['loaded']['median_ms']:.1f} ms beside {args.tables - 1} other tables "
          f"(bots every {args.load_delay_ms} ms): {load['slowdown']:.2f}x")
    if args.json:
        write_json(args.json, results)
    return 0


def _served(log_path: Path) -> list[float]:
    return [float(m) for m in re.findall(r"served in ([0-9.]+) ms", log_path.read_text())]


def _wait_for(port: int, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise ValueError(f"the server stopped at start (exit code {server.returncode})")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise ValueError("the server did not start within 60 s")


main = command(__name__, __doc__, add_arguments, run)

if __name__ == "__main__":
    sys.exit(main())
