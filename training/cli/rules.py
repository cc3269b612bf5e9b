"""``blackout rules [PRESET | FILE.yaml]``: the rules in words; ``--list`` names the presets."""

from __future__ import annotations

import argparse

from blackout_env.game.rules import Rules, preset_names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("preset", nargs="?", default="standard", help="a preset name or a YAML file (default: standard)")
    parser.add_argument("--list", action="store_true", help="list the presets")
    parser.add_argument("--yaml", action="store_true", help="print the rules as YAML instead of words")


def run(args: argparse.Namespace) -> int:
    if args.list:
        for name in preset_names():
            print(name)
        return 0
    rules = Rules.resolve(args.preset)
    print(rules.to_yaml() if args.yaml else f"Rules: {args.preset}\n{rules.describe()}")
    return 0
