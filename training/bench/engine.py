"""``blackout bench engine``: decisions per second of the rules engine, random legal actions.

Two measurements, in one run so they share the machine's load:

- whole matches of the chosen rules for 3, 4 and 5 players;
- single 10-card hands for 4 players, dealing included, side by side with
  OpenSpiel's ``oh_hell`` driven from Python on the same work (a loop of chance
  outcomes, ``legal_actions`` and ``apply_action``), when ``open_spiel`` is
  installed (``pip install -e .[bench]``); otherwise that side is skipped.

A decision is one bid or one card by a player; OpenSpiel's chance outcomes (its
deal) are done in its loop but not counted. Our loop asks ``legal_actions()``
and calls ``step()``, which checks the action, and the game keeps its full
history, as in normal use. Each figure is the best of ``--repeats`` runs (the
least disturbed by other processes); the engine and OpenSpiel runs alternate.
Time is the process's CPU time by default (``--clock cpu``), so waiting for a
busy machine's cores does not count; ``--clock wall`` uses the wall clock.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable

import numpy as np

from blackout_env import BlackoutGame, Rules

from . import check_output_file, check_positive, command, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="standard", help="rules of the whole matches: preset or YAML (default standard)")
    parser.add_argument("--players", type=int, nargs="+", default=[3, 4, 5], help="table sizes for whole matches")
    parser.add_argument("--games", type=int, default=100, help="whole matches per measurement (default 100)")
    parser.add_argument("--hands", type=int, default=2000, help="single 10-card hands per measurement (default 2000)")
    parser.add_argument("--repeats", type=int, default=5, help="measurements per figure; the best counts (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--clock", choices=["cpu", "wall"], default="cpu", help="cpu: process CPU time (default); wall: wall clock"
    )
    parser.add_argument("--no-openspiel", action="store_true", help="skip the OpenSpiel comparison")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def play_matches(rules: Rules, games: int, seed: int) -> int:
    """Play whole matches with random legal actions; return the number of decisions."""
    deal_rng = np.random.default_rng(seed)
    pick = random.Random(seed).random
    decisions = 0
    for _ in range(games):
        game = BlackoutGame(rules, seed=deal_rng)
        while game.phase != "game_over":
            legal = game.legal_actions()
            game.step(legal[int(pick() * len(legal))])
            decisions += 1
    return decisions


def openspiel_hands(players: int, tricks: int, hands: int, seed: int) -> int:
    """OpenSpiel's oh_hell with random legal actions; return the number of player decisions."""
    import pyspiel

    game = pyspiel.load_game("oh_hell", {"players": players, "num_tricks_fixed": tricks})
    pick = random.Random(seed).random
    decisions = 0
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()  # uniform: the deal, the dealer, the trump card
                state.apply_action(outcomes[int(pick() * len(outcomes))][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[int(pick() * len(legal))])
                decisions += 1
    return decisions


def best_rate(runs: list[tuple[int, float]]) -> float:
    """The highest decisions per second among (decisions, seconds) runs."""
    return max(decisions / seconds for decisions, seconds in runs)


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def timed(clock: Callable[[], float], work: Callable[..., int], *args: object) -> tuple[int, float]:
    """(decisions, seconds) of one call of ``work(*args)``, timed by ``clock``."""
    start = clock()
    decisions = work(*args)
    return decisions, clock() - start


def openspiel_available() -> bool:
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def run(args: argparse.Namespace) -> int:
    check_positive(games=args.games, hands=args.hands, repeats=args.repeats)
    check_output_file(args.json)
    base = Rules.resolve(args.rules)
    for players in args.players:  # every table checked before the first is timed
        try:
            base.replace(num_players=players)
        except ValueError as error:
            raise ValueError(f"--players {players}: {error}") from None
    clock = CLOCKS[args.clock]
    results: dict[str, object] = {"rules": args.rules, "clock": args.clock, "matches": {}, "single_hands": {}}
    print("Blackout engine benchmark: random legal actions, every action checked, full history kept")
    print(f"(best of {args.repeats} runs, {args.clock} time; a decision is one bid or one card)\n")

    print(f"Whole matches, rules {args.rules!r}:")
    for players in args.players:
        rules = base.replace(num_players=players)
        runs = [timed(clock, play_matches, rules, args.games, args.seed + r) for r in range(args.repeats)]
        rate = best_rate(runs)
        per_game = runs[0][0] / args.games
        results["matches"][str(players)] = {"decisions_per_second": rate, "decisions_per_match": per_game}  # type: ignore[index]
        print(f"  {players} players: {rate:>12,.0f} decisions/s   ({rules.num_rounds} hands, {per_game:.0f} decisions a match)")

    print("\nSingle 10-card hands, 4 players, dealing included:")
    hand_rules = base.replace(num_players=4, hand_sizes=[10])
    with_openspiel = not args.no_openspiel and openspiel_available()
    ours: list[tuple[int, float]] = []
    theirs: list[tuple[int, float]] = []
    for r in range(args.repeats):  # alternate, so both sides see the same load
        ours.append(timed(clock, play_matches, hand_rules, args.hands, args.seed + r))
        if with_openspiel:
            theirs.append(timed(clock, openspiel_hands, 4, 10, args.hands, args.seed + r))
    our_rate = best_rate(ours)
    hands_results: dict[str, float] = {"blackout_engine": our_rate}
    print(f"  blackout engine        {our_rate:>12,.0f} decisions/s")
    if with_openspiel:
        their_rate = best_rate(theirs)
        hands_results["openspiel_oh_hell"] = their_rate
        hands_results["ratio"] = our_rate / their_rate
        print(f"  OpenSpiel oh_hell      {their_rate:>12,.0f} decisions/s   (pyspiel, from Python)")
        print(f"  ratio                  {our_rate / their_rate:>12.2f}x")
    else:
        reason = "--no-openspiel" if args.no_openspiel else "open_spiel is not installed (pip install -e .[bench])"
        print(f"  OpenSpiel oh_hell      skipped: {reason}")
    results["single_hands"] = hands_results
    write_json(args.json, results)
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
