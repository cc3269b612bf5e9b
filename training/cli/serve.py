"""``blackout serve``: play in the browser, watch agents play, replay games (docs/web.md).

Examples::

    blackout serve                                   # http://localhost:8000/, saves in ~/.local/share/blackout/web
    blackout serve --open --port 8080                # and open the page in the system browser
    blackout serve --rules my-table.yaml             # offer a rules file beside the presets
    blackout serve --policy mine=ppo:runs/default/checkpoint.pt   # offer a checkpoint by name
    blackout serve --host 0.0.0.0 --allow-origin https://cards.example.org   # behind a reverse proxy (docs/web.md)
    blackout serve --ladder ladder.sqlite            # and the leaderboard of a ladder at /ladder (docs/ladder.md)
"""

from __future__ import annotations

import argparse
from pathlib import Path

from blackout_env import Rules
from blackout_env.game.rules import preset_names

WEB_EXTRA_HINT = "install the web extra: pip install -e '.[web]'"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = __doc__.split("Examples::", 1)[1]
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--open", action="store_true", help="open the page in the system browser")
    parser.add_argument("--saves", default=None,
                        help="folder of the saved games (default ~/.local/share/blackout/web, or $XDG_DATA_HOME/blackout/web)")
    parser.add_argument("--rules", action="append", default=[], metavar="FILE.yaml",
                        help="a rules file the page offers beside the presets, named by its file name (repeatable)")
    parser.add_argument("--policy", action="append", default=[], metavar="NAME=SPEC",
                        help="a policy the page offers by NAME, e.g. mine=ppo:runs/x/checkpoint.pt or "
                        "league=rllib:runs/y (repeatable; a browser never names a file itself)")
    parser.add_argument("--allow-origin", action="append", default=[], metavar="URL",
                        help="an origin (http(s)://host[:port]) besides the page's own whose pages may connect, "
                        "e.g. the public address of a reverse proxy (repeatable)")
    parser.add_argument("--ladder", default=None, metavar="FILE",
                        help="a ladder file (blackout ladder) whose leaderboard /ladder shows, read-only")
    parser.add_argument("--bot-delay-ms", type=int, default=600,
                        help="default pause before each bot move, in milliseconds (default 600; the page changes it)")


def parse_policies(entries: list[str]) -> dict[str, str]:
    """``["mine=ppo:PATH"]`` -> ``{"mine": "ppo:/abs/PATH"}``, each spec checked by loading it once (a missing
    checkpoint or a bad option stops the server before it listens, not when a browser first seats the bot)."""
    from blackout_env.agents.policies import LOADERS, absolute_paths, load_policy, parse_spec

    policies: dict[str, str] = {}
    for entry in entries:
        name, sep, spec = entry.partition("=")
        name, spec = name.strip(), spec.strip()
        if not sep or not name or not spec or ":" in name or "," in name:
            raise ValueError(f"--policy: NAME=SPEC, e.g. mine=ppo:runs/x/checkpoint.pt, got {entry!r}")
        if parse_spec(spec)[0] not in LOADERS:
            raise ValueError(f"--policy {entry}: unknown policy {spec!r}; known: {', '.join(LOADERS)}")
        if name in policies:
            raise ValueError(f"--policy: the name {name!r} is given twice")
        if name in LOADERS:  # (the page's own list names it: a browser asking for the built-in would get this one)
            raise ValueError(f"--policy {entry}: {name!r} is a built-in policy's name; give yours another")
        spec = absolute_paths(spec)
        try:
            load_policy(spec, None, 0)
        except ValueError as error:
            raise ValueError(f"--policy {entry}: {error}") from None
        policies[name] = spec
    return policies


def parse_rules_files(entries: list[str]) -> dict[str, Rules]:
    rules: dict[str, Rules] = {}
    for entry in entries:
        path = Path(entry).expanduser()
        if not path.is_file():
            raise ValueError(f"--rules: no such file {entry!r}")
        if path.stem in rules:
            raise ValueError(f"--rules: two files are named {path.stem!r} (the page offers rules by file name); rename one")
        if path.stem in preset_names():
            raise ValueError(f"--rules {entry}: {path.stem!r} is a preset's name (the page offers it); rename the file")
        rules[path.stem] = Rules.from_yaml(path)
    return rules


def run(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        raise ValueError(f"--port: 1..65535, got {args.port}")
    policies = parse_policies(args.policy)
    rules_files = parse_rules_files(args.rules)
    try:
        from ..web.server import normalize_origin, serve
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] in ("starlette", "uvicorn"):
            raise ValueError(f"blackout serve needs {error.name}: {WEB_EXTRA_HINT}") from None
        raise
    try:
        origins = [normalize_origin(origin) for origin in args.allow_origin]
    except ValueError as error:
        raise ValueError(f"--allow-origin: {error}") from None
    serve(host=args.host, port=args.port, saves=args.saves, open_browser=args.open, rules_files=rules_files,
          policies=policies, bot_delay_ms=args.bot_delay_ms, allow_origins=origins, ladder=args.ladder)
    return 0
