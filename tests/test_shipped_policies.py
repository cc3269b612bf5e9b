"""The shipped policies: ``ppo`` (the generalist) plays every table; ``ppo-standard`` (the specialist) plays its own.

These tests check loading, names and legality only, never strength: the
generalist's checkpoint file is replaced whenever a better one is trained.
"""

import pytest

pytest.importorskip("torch")

from blackout_training.agents.policies import load_policy  # noqa: E402
from blackout_training.agents.policy_net import (  # noqa: E402
    SHIPPED_CHECKPOINT,
    SPECIALIST_CHECKPOINT,
    CheckpointError,
)
from blackout_training.evaluation.tournament import single_threaded_torch  # noqa: E402

from blackout_env import BlackoutGame, Rules  # noqa: E402
from blackout_env.game.rules import preset_names  # noqa: E402

TABLES = {name: Rules.preset(name) for name in preset_names()} | {
    f"standard-{players}p": Rules.preset("standard").replace(num_players=players) for players in (3, 5, 6, 7)
}


@pytest.fixture(scope="module")
def shipped_ppo():
    """The ``ppo`` policy, loaded once; torch on one thread (one decision at a time: threads only wait)."""
    with single_threaded_torch():
        yield load_policy("ppo", seed=0)


def test_the_shipped_ppo_is_the_universal_generalist_and_loads_for_any_rules(shipped_ppo):
    assert SHIPPED_CHECKPOINT.name == "ppo_generalist.pt"
    assert shipped_ppo.name == "ppo" and shipped_ppo.observation == "universal"
    assert load_policy("ppo", Rules.preset("jokers").replace(num_players=5), seed=0).name == "ppo"


@pytest.mark.parametrize("table", TABLES)
def test_the_shipped_ppo_plays_the_largest_hand_of_every_preset_and_3_to_7_players_legally(shipped_ppo, table):
    rules, bot = TABLES[table], shipped_ppo
    largest = max(range(rules.num_rounds), key=lambda round_index: rules.hand_sizes[round_index])
    game = BlackoutGame(rules, seed=5, start_round=largest)
    while game.phase != "game_over" and game.round_index == largest:
        view = game.view(game.current_player)
        action = bot.act(view)
        assert action in view.legal_actions
        game.step(action)
    assert game.round_index != largest or game.phase == "game_over"  # the hand was played out


def test_ppo_standard_is_the_specialist_and_refuses_other_rules_naming_the_universal_alternative():
    bot = load_policy("ppo-standard", "standard", seed=0)
    assert bot.name == "ppo-standard" and bot.observation == "rules"
    assert SPECIALIST_CHECKPOINT.name == "ppo_standard_4p.pt"
    with pytest.raises(CheckpointError, match=r'other rules.*observation="universal".*configs/train/generalist.yaml'):
        load_policy("ppo-standard", "short")
    with pytest.raises(ValueError, match="ppo-standard:x.* takes no argument"):
        load_policy("ppo-standard:x", "standard")
