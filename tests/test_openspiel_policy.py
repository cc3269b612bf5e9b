"""OpenSpiel's IS-MCTS as a policy spec (``openspiel_ismcts``): the ladder's external anchor, played from a view."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from blackout_training.cli import main
from blackout_training.evaluation.openspiel import openspiel_rules_problems

from blackout_env import BlackoutGame, Rules
from blackout_env.agents.policies import load_policy, policy_names

TINY = "openspiel_ismcts:simulations=4"


def test_openspiel_ismcts_is_a_policy_name():
    assert "openspiel_ismcts" in policy_names()


def test_without_openspiel_the_spec_is_refused_in_one_line_naming_the_bench_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now raises ImportError
    with pytest.raises(ValueError, match=r"needs OpenSpiel, which is not installed: install the bench extra"):
        load_policy("openspiel_ismcts", "standard")
    assert main(["eval", "--policies", TINY, "heuristic", "--deals", "1", "--hands", "--no-plot"]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "bench extra" in error and error.startswith("blackout eval: error:")


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("openspiel_ismcts:simulations=1", "at least 2"),
        ("openspiel_ismcts:simulations=20,redeals=20", "at least 40"),
        ("openspiel_ismcts:uct_c=-1", "uct_c must be"),
        ("openspiel_ismcts:rollouts=2", "unknown option 'rollouts'"),
        ("openspiel_ismcts:simulations=many", "simulations must be"),
        ("openspiel_ismcts:redeal=0", "redeal=0 searches from the cross-check's mirrored state"),
    ],
)
def test_bad_options_are_refused_whether_or_not_openspiel_is_installed(monkeypatch, spec, words):
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    with pytest.raises(ValueError, match=words):
        load_policy(spec, "standard")


@pytest.mark.parametrize("preset", ["jokers", "no-trump", "rotating-trump", "no-hook", "trump-must-break", "full-deck"])
def test_rules_that_openspiels_oh_hell_does_not_play_are_refused_naming_the_rules(preset):
    with pytest.raises(ValueError, match="OpenSpiel's oh_hell does not play these rules"):
        load_policy("openspiel_ismcts", preset)


def test_the_rules_it_accepts_are_the_standard_game_at_3_to_7_players_under_any_scoring():
    for players in range(3, 8):
        assert openspiel_rules_problems(Rules.preset("standard").replace(num_players=players)) == []
    for preset in ("per-trick", "minus-scoring", "short", "long", "up-and-down"):
        assert openspiel_rules_problems(Rules.preset(preset)) == [], preset


@pytest.mark.parametrize("players", [3, 5, 7])
def test_at_every_player_count_it_accepts_openspiel_and_our_engine_agree_on_every_legal_action(players):
    """What :func:`openspiel_rules_problems` accepts is a game OpenSpiel's oh_hell plays move for move."""
    pyspiel = pytest.importorskip("pyspiel")
    from blackout_training.evaluation.openspiel import _start_openspiel_hand, from_openspiel_action, to_openspiel_action

    rules = Rules.preset("standard").replace(num_players=players)
    rng = np.random.default_rng(players)
    for deal in range(2):
        game = BlackoutGame(rules, seed=deal)
        state = _start_openspiel_hand(pyspiel, game)
        while game.round_index == 0:
            assert sorted(from_openspiel_action(a) for a in state.legal_actions()) == game.legal_actions()
            assert state.current_player() == game.current_player
            action = int(rng.choice(game.legal_actions()))
            game.step(action)
            state.apply_action(to_openspiel_action(action))
        assert state.is_terminal()


@pytest.mark.parametrize(("players", "spec"), [(4, TINY), (7, TINY), (3, "openspiel_ismcts:simulations=8,redeals=2")])
def test_it_plays_a_legal_action_at_every_decision_of_a_hand_from_its_view_alone(players, spec):
    pytest.importorskip("pyspiel")
    rules = Rules.preset("standard").replace(num_players=players)
    policy = load_policy(spec, rules, seed=1)
    game = BlackoutGame(rules, seed=players)
    decisions = 0
    while game.round_index == 0:
        view = game.view(game.current_player)
        action = policy.act(view)
        assert action in view.legal_actions
        game.step(action)
        decisions += 1
    assert decisions == players * (1 + rules.hand_sizes[0])


def test_a_policy_loaded_without_rules_refuses_a_table_openspiel_does_not_play():
    pytest.importorskip("pyspiel")
    policy = load_policy(TINY, None)
    game = BlackoutGame(Rules.preset("jokers"), seed=0)
    with pytest.raises(ValueError, match="jokers"):
        policy.act(game.view(game.current_player))


def test_blackout_eval_plays_it_at_the_standard_table(tmp_path, capsys):
    pytest.importorskip("pyspiel")
    from blackout_training.evaluation.tournament import evaluate

    result = evaluate([TINY, "heuristic"], "standard", deals=2, seed=0, hands=True)
    assert result.stats(TINY).hands > 0
    assert main(["eval", "--policies", TINY, "random", "--deals", "1", "--hands", "--no-plot", "--no-progress",
                 "--out", str(tmp_path)]) == 0
    assert TINY in capsys.readouterr().out


def test_a_tiny_ladder_seats_it_beside_our_agents(tmp_path):
    pytest.importorskip("pyspiel")
    from blackout_training.evaluation.ladder import create_ladder, play

    three = Rules.preset("standard").replace(num_players=3)
    with create_ladder(tmp_path / "l.db", three, deals=2, seed=0, hands=True) as ladder:
        for spec in ("random", "heuristic", TINY):
            ladder.add_agent(spec)
        assert play(ladder) == 2 * 3  # one table, 2 deals, 3 rotations
        standings = {row.name: row for row in ladder.standings()}
    assert standings[TINY].games == 6 and standings[TINY].hands == 6


def test_the_ladder_refuses_it_on_rules_openspiel_does_not_play_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "l.db"
    assert main(["ladder", "run", str(path), "--agents", "random", "heuristic", TINY, "--rules", "jokers",
                 "--players", "3", "--deals", "1"]) == 2
    assert "does not play these rules" in capsys.readouterr().err
    assert not path.exists()
