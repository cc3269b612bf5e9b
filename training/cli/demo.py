"""``blackout demo``: a match among random legal players, printed as a score sheet."""

from __future__ import annotations

import argparse

import numpy as np

from blackout_env import BlackoutGame, Rules
from blackout_env.game.scoresheet import score_sheet


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="standard", help="a preset name or a YAML file (default: standard)")
    parser.add_argument("--players", type=int, default=None, help="number of players (overrides the rules)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def run(args: argparse.Namespace) -> int:
    rules = Rules.resolve(args.rules)
    if args.players is not None:
        rules = rules.replace(num_players=args.players)
    if args.seed < 0:
        raise ValueError(f"--seed must be 0 or more, got {args.seed}")
    rng = np.random.default_rng(args.seed)
    game = BlackoutGame(rules, seed=rng)
    while not game.is_over:
        legal = game.legal_actions()
        game.step(legal[int(rng.integers(len(legal)))])
    print(f"A match of {rules.num_players} random players ({rules.num_rounds} hands):\n")
    print(score_sheet(game))
    return 0
