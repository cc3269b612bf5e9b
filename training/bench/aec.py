"""``blackout bench aec``: decisions per second of the environments, random legal actions.

Measures, in one run so the figures share the machine's load:

- ``engine``: ``BlackoutGame`` alone (legal actions and step; no observation), the ceiling;
- ``raw_env``: the AEC env without wrappers, ``last()`` (observation and mask) read at every step;
- ``env()``: the same through PettingZoo's OrderEnforcingWrapper;
- ``gym``: the single-agent env, learner steps per second (random opponents included);
- ``trivial env()``: an AEC env that does nothing, behind the wrappers ``env()`` applies
  (``blackout_env.envs.aec.with_wrappers``: PettingZoo's OrderEnforcingWrapper): the ceiling
  the wrappers themselves set on this machine now;
- ``openspiel``: shimmy's PettingZoo wrapper of OpenSpiel's ``oh_hell`` (hands of
  ``--tricks`` cards), when ``open_spiel`` and ``shimmy`` are installed.

A decision is one action by one player (a bid or a card). Each measurement is
repeated ``--repeats`` times and the best is reported (the least disturbed by
other processes); the repeats take turns across the targets, so every target
sees the same load. Time is the process's CPU time by default (``--clock cpu``),
so waiting for a busy machine's cores does not count; ``--clock wall`` uses the
wall clock. The ratio to watch is ``env()`` / ``trivial env()``: what this
environment's work costs behind the same wrapper.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from blackout_env import BlackoutGame, BlackoutGymEnv, Rules, env, observation_size, raw_env
from blackout_env.envs.aec import with_wrappers

from . import check_output_file, check_positive, command, write_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="standard", help="a preset name or YAML file (default: standard)")
    parser.add_argument("--players", type=int, default=4, help="players (default 4)")
    parser.add_argument("--steps", type=int, default=50_000, help="decisions per measurement (default 50000)")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per target; the best counts (default 3)")
    parser.add_argument("--tricks", type=int, default=10, help="cards per hand for OpenSpiel's oh_hell (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--clock", choices=["cpu", "wall"], default="cpu", help="cpu: process CPU time (default); wall: wall clock"
    )
    parser.add_argument("--skip", nargs="*", default=[], help="targets to leave out (engine raw_env env gym trivial openspiel)")
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")


def _engine(rules: Rules, steps: int, seed: int) -> int:
    pick = random.Random(seed).random
    done = 0
    game_seed = seed
    while done < steps:
        game = BlackoutGame(rules, seed=game_seed)
        game_seed += 1
        while game.phase != "game_over":
            legal = game.legal_actions()
            game.step(legal[int(pick() * len(legal))])
            done += 1
    return done


def _aec(make: Callable[[], object], steps: int, seed: int) -> int:
    """The PettingZoo loop of the docs on a new env (:func:`aec_loop`)."""
    environment = make()
    environment.reset(seed=seed)
    return aec_loop(environment, steps, random.Random(seed).random)


def aec_loop(environment: Any, steps: int, pick: Callable[[], float]) -> int:
    """The PettingZoo loop of the docs: last() every step, a random legal action from the mask (``pick()``
    in [0, 1) chooses it), whole episodes until ``steps`` decisions; returns the decisions made."""
    done = 0
    while done < steps:
        environment.reset()
        for _agent in environment.agent_iter():
            observation, _reward, terminated, truncated, _info = environment.last()
            if terminated or truncated:
                environment.step(None)
                continue
            legal = observation["action_mask"].nonzero()[0]
            environment.step(int(legal[int(pick() * len(legal))]))
            done += 1
    return done


class _TrivialEnv:
    """Built on first use (PettingZoo imported lazily): an AEC env that does nothing, to show the wrappers' cost."""

    @staticmethod
    def make(players: int, num_actions: int, size: int, episode_length: int = 100):
        from gymnasium import spaces
        from pettingzoo import AECEnv

        class TrivialEnv(AECEnv):
            metadata = {"name": "trivial_v0", "is_parallelizable": False}

            def __init__(self) -> None:
                super().__init__()
                self.possible_agents = [f"player_{i}" for i in range(players)]
                self._observation = np.zeros(size, dtype=np.float32)
                self._mask = np.ones(num_actions, dtype=np.int8)
                space = spaces.Dict(
                    {"observation": spaces.Box(0, 1, (size,), np.float32), "action_mask": spaces.Box(0, 1, (num_actions,), np.int8)}
                )
                self._space, self._actions = space, spaces.Discrete(num_actions)

            def observation_space(self, agent):
                return self._space

            def action_space(self, agent):
                return self._actions

            def observe(self, agent):
                return {"observation": self._observation.copy(), "action_mask": self._mask.copy()}

            def reset(self, seed=None, options=None):
                self.agents = self.possible_agents[:]
                self.rewards = dict.fromkeys(self.agents, 0.0)
                self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
                self.terminations = dict.fromkeys(self.agents, False)
                self.truncations = dict.fromkeys(self.agents, False)
                self.infos = {agent: {} for agent in self.agents}
                self.agent_selection = self.agents[0]
                self._seat, self._steps = 0, 0

            def step(self, action):
                if self.terminations[self.agent_selection]:
                    self._was_dead_step(action)
                    return
                self._steps += 1
                self._seat = (self._seat + 1) % players
                self.agent_selection = self.possible_agents[self._seat]
                if self._steps == episode_length:
                    self.terminations = dict.fromkeys(self.agents, True)

        return TrivialEnv()


def trivial_env(rules: Rules):
    """The do-nothing AEC env with this table's spaces, behind the wrappers that ``env()`` applies."""
    return with_wrappers(_TrivialEnv.make(rules.num_players, rules.num_actions, observation_size(rules)))


def _openspiel(players: int, tricks: int, steps: int, seed: int) -> int:
    import pyspiel
    from shimmy import OpenSpielCompatibilityV0

    # By name with a config: shimmy reloads the game by name at every reset, dropping a game object's parameters.
    config = {"players": players, "num_tricks_fixed": tricks}
    pyspiel.load_game("oh_hell", config)  # a bad config fails here, with OpenSpiel's message
    environment = OpenSpielCompatibilityV0(game_name="oh_hell", config=config)
    pick = random.Random(seed).random
    environment.reset(seed=seed)
    done = 0
    while done < steps:
        environment.reset()
        for _agent in environment.agent_iter():
            _observation, _reward, terminated, truncated, info = environment.last()
            if terminated or truncated:
                environment.step(None)
                continue
            legal = info["action_mask"].nonzero()[0]
            environment.step(int(legal[int(pick() * len(legal))]))
            done += 1
    return done


def _gym(rules: Rules, steps: int, seed: int) -> int:
    try:
        from blackout_baselines import make_bot

        opponents = [make_bot("random", seed=seed + k) for k in range(rules.num_players - 1)]
    except ImportError:  # pragma: no cover - baselines ships with the project
        rng = np.random.default_rng(seed)
        opponents = lambda view: view.legal_actions[int(rng.integers(len(view.legal_actions)))]  # noqa: E731
    environment = BlackoutGymEnv(rules, opponents=opponents)
    pick = random.Random(seed).random
    environment.reset(seed=seed)
    done = 0
    while done < steps:
        legal = environment.action_masks().nonzero()[0]
        _, _, terminated, truncated, _ = environment.step(int(legal[int(pick() * len(legal))]))
        done += 1
        if terminated or truncated:
            environment.reset()
    return done


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def measure(run: Callable[[], int], repeats: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """Best decisions per second over ``repeats`` runs."""
    best = 0.0
    for _ in range(repeats):
        start = clock()
        done = run()
        best = max(best, done / (clock() - start))
    return best


def _skip_name(target: str) -> str:
    """The name ``--skip`` takes for a target: ``"trivial env()"`` -> ``"trivial"``, ``"env()"`` -> ``"env"``."""
    words = target.split()
    return words[0].replace("()", "") if words else target


def run(args: argparse.Namespace) -> int:
    check_positive(steps=args.steps, repeats=args.repeats, tricks=args.tricks)
    check_output_file(args.json)
    rules = Rules.resolve(args.rules)
    if args.players != rules.num_players:
        rules = rules.replace(num_players=args.players)
    steps, seed = args.steps, args.seed
    targets: dict[str, Callable[[], int]] = {
        "engine": lambda: _engine(rules, steps, seed),
        "raw_env": lambda: _aec(lambda: raw_env(rules=rules), steps, seed),
        "env()": lambda: _aec(lambda: env(rules=rules), steps, seed),
        "gym": lambda: _gym(rules, max(steps // 10, 1), seed),
        "trivial env()": lambda: _aec(lambda: trivial_env(rules), steps, seed),
    }
    skip = {_skip_name(name) for name in args.skip}
    known = {_skip_name(name) for name in targets} | {"openspiel"}
    if skip - known:
        raise ValueError(f"--skip: unknown target {sorted(skip - known)[0]!r}; targets: {', '.join(sorted(known))}")
    try:
        import pyspiel  # noqa: F401
        import shimmy  # noqa: F401

        if "openspiel" not in skip:  # --tricks sizes its hands only: checked before anything is timed
            most = (52 - 1) // rules.num_players  # it deals a fixed hand and turns a card for trump
            if args.tricks > most:
                raise ValueError(f"--tricks {args.tricks}: at {rules.num_players} players OpenSpiel's oh_hell deals at "
                                 f"most {most} cards each (one card is left to turn); or --skip openspiel")
        targets["openspiel"] = lambda: _openspiel(rules.num_players, args.tricks, max(steps // 10, 1), seed)
    except ImportError:
        print("openspiel: skipped (pip install open_spiel shimmy[openspiel] to compare)")
    targets = {name: target for name, target in targets.items() if _skip_name(name) not in skip}
    clock = CLOCKS[args.clock]
    results = dict.fromkeys(targets, 0.0)
    for _ in range(args.repeats):  # in turns, so every target sees the same load
        for name, target in targets.items():
            results[name] = max(results[name], measure(target, 1, clock))
    print(f"{rules.num_players} players, rules {args.rules!r}, best of {args.repeats}, {args.clock} time; decisions per second:")
    for name, rate in results.items():
        print(f"  {name:<13} {rate:>12,.0f}")
    if "engine" in results:
        for name in ("raw_env", "env()"):
            if name in results:
                print(f"  {name} runs at {results[name] / results['engine']:.0%} of the bare engine")
    if "trivial env()" in results and "env()" in results:
        ratio = results["env()"] / results["trivial env()"]
        print(f"  env() runs at {ratio:.0%} ({ratio:.2f}x) of an env that does nothing, same wrapper")
    if "openspiel" in results and "env()" in results:
        print(f"  env() is {results['env()'] / results['openspiel']:.0f}x OpenSpiel's oh_hell through shimmy")
    write_json(args.json, {"players": rules.num_players, "rules": args.rules, "decisions_per_second": results})
    return 0


main = command(__name__, __doc__, add_arguments, run)


if __name__ == "__main__":
    sys.exit(main())
