"""Golden decisions of the search bots: the same seeds play the same actions, with the same root statistics.

tests/golden/ismcts_decisions.json holds, for fixed views of every preset, what
``ISMCTSBot`` chose with four option sets (216 decisions, with the root's visits and
means) and what the shipped ``ppo+search`` chose (269 decisions, and 269 with ``margin_scale=hand``). It was written by the simulator that ran before the search moved onto
the compiled core (the ``endgame`` and ``bid_search`` sets were added in issue 48, recorded by the code of
then; the sets of the options retired in issue 48 were dropped, the rest unchanged), so a change of the
simulator that changes any search shows here.
After an intended change of behaviour, regenerate with::

    BLACKOUT_REGENERATE_GOLDEN=1 pytest tests/test_ismcts_golden.py

and say in the commit why the decisions changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from blackout_baselines import ISMCTSBot, RandomBot

from blackout_env import BlackoutGame, Rules, preset_names
from blackout_env.game.view import PlayerView

GOLDEN = Path(__file__).parent / "golden" / "ismcts_decisions.json"


def rising_prior(view: PlayerView) -> dict[int, float]:
    """A fixed prior: the k-th legal action weighs k + 1."""
    return {a: float(i + 1) for i, a in enumerate(view.legal_actions)}


OPTION_SETS = {
    "default": {},
    "prior": {"prior": rising_prior, "prior_margin": 0.1},
    "endgame": {"endgame": 3},
    "bid_search": {"bid_search": 2},
}


def views(preset: str, count: int, seed: int) -> list[PlayerView]:
    """Views of random moments of random hands of random play in which the player to act has a choice."""
    rules = Rules.preset(preset)
    rng = np.random.default_rng(seed)
    found = []
    for index in range(count):
        start = int(rng.integers(rules.num_rounds))
        game = BlackoutGame(rules, seed=seed * 1000 + index, start_round=start)
        bot = RandomBot(index)
        actions = rules.num_players * (rules.hand_sizes[start] + 1)
        for _ in range(int(rng.integers(0, actions - 1))):
            game.step(bot.act(game.view(game.current_player)))
        view = game.view(game.current_player)
        if not game.is_over and len(view.legal_actions) > 1:
            found.append(view)
    return found


def decisions() -> dict[str, list]:
    """Every golden decision: its action and the root's (action, visits, mean) after the search."""
    from blackout_env.agents.policies import load_policy

    result: dict[str, list] = {}
    for preset in preset_names():
        for index, view in enumerate(views(preset, 6, 7)):
            for name, options in OPTION_SETS.items():
                values = ISMCTSBot(seed=index, simulations=60, **options).action_values(view)
                action = ISMCTSBot(seed=index, simulations=60, **options).act(view)
                root = sorted([int(a), visits, round(mean, 9)] for a, (visits, mean) in values.items())
                result[f"{preset}/{index}/{name}"] = [int(action), root]
        # the shipped ppo+search (the generalist's prior), one bot deciding 20-odd views in turn; and with the
        # margin of the whole hand's range (its default before issue 51: these decisions were recorded then)
        for suffix in ("", ",margin_scale=hand"):
            policy = load_policy(f"ppo+search:simulations=100{suffix}", preset, seed=0)
            for index, view in enumerate(views(preset, 30, 11)):
                result[f"{preset}/{index}/ppo+search{suffix.replace(',', ':')}"] = [int(policy.act(view))]
    return result


def dump(played: dict[str, list]) -> str:
    """The golden file's text: a JSON object, one decision a line."""
    lines = [f"{json.dumps(key)}: {json.dumps(value)}" for key, value in sorted(played.items())]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def test_the_search_bots_decide_as_recorded():
    pytest.importorskip("torch")
    played = decisions()
    if os.environ.get("BLACKOUT_REGENERATE_GOLDEN"):
        GOLDEN.write_text(dump(played))
    recorded = json.loads(GOLDEN.read_text())
    assert len(recorded) >= 750
    different = [key for key in recorded if played.get(key) != recorded[key]]
    assert not different, f"{len(different)} of {len(recorded)} decisions differ, e.g. {different[0]}: " \
        f"recorded {recorded[different[0]]}, played {played.get(different[0])}"
    assert played.keys() == recorded.keys()
