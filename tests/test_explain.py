"""Why a policy acts: ``explain(view)`` gives the action ``act(view)`` plays, with its numbers per legal action."""

from __future__ import annotations

import io
import json
import math

import pytest
from blackout_baselines import HeuristicBot, ISMCTSBot, SearchBot
from blackout_training.cli import main
from blackout_training.play.session import PlaySession, explanation_lines, new_session
from test_play import ScriptedPerson

from blackout_env import BlackoutGame, PlayerView, Rules
from blackout_env.agents.policies import (
    EXPLANATION_KINDS,
    ActionReason,
    Explanation,
    SeededPolicy,
    explain,
    load_policy,
)
from blackout_env.game.cards import card_to_str

STANDARD = Rules.preset("standard")
SHORT = Rules.preset("short")

# spec -> the kind its explanations have (a one-card bid of `search` is the heuristic's, a forced move has no search)
SPECS = {
    "random": {"random"},
    "heuristic": {"heuristic"},
    "search:samples=2,bid_samples=2": {"search", "heuristic"},
    "ismcts:simulations=20": {"mcts"},
    "ppo": {"policy"},
    "ppo+search:simulations=20": {"mcts"},
}


def check_explanation(why: Explanation, view: PlayerView) -> None:
    """What every explanation promises: one reason per legal action, a legal action, plain JSON numbers."""
    assert why.kind in EXPLANATION_KINDS
    assert [reason.action for reason in why.actions] == list(view.legal_actions)
    assert why.action in view.legal_actions
    probabilities = [reason.probability for reason in why.actions]
    if any(p is not None for p in probabilities):
        assert all(p is not None and 0.0 <= p <= 1.0 for p in probabilities)
        assert math.isclose(sum(probabilities), 1.0, abs_tol=1e-5)
    assert why.note
    data = json.loads(json.dumps(why.to_dict(), allow_nan=False))
    assert data["action"] == why.action and data["kind"] == why.kind
    assert [reason["action"] for reason in data["actions"]] == list(view.legal_actions)


def play_explained(spec: str, seed: int = 3, max_decisions: int | None = None) -> list[Explanation]:
    """A standard game in which one copy of the policy acts and an identically seeded copy explains, in step.

    The copies are seeded once, so their generators stay in step only if explaining draws exactly what
    acting draws; the game goes on with the acting copy's action.
    """
    acting, explaining = load_policy(spec, seed=11), load_policy(spec, seed=11)
    game = BlackoutGame(STANDARD, seed=seed)
    explanations = []
    while not game.is_over and (max_decisions is None or len(explanations) < max_decisions):
        view = game.view(game.current_player)
        action = acting.act(view)
        why = explain(explaining, view)
        assert why.action == action, f"{spec}: decision {len(explanations)} explains {why.action}, plays {action}"
        check_explanation(why, view)
        explanations.append(why)
        game.step(action)
    return explanations


@pytest.mark.parametrize("spec", list(SPECS))
def test_explained_action_is_the_action_played(spec):
    explanations = play_explained(spec)
    assert len(explanations) == 260  # every decision of the standard match: 40 bids and 220 cards
    assert {why.kind for why in explanations} <= SPECS[spec]


def test_a_sampling_network_explains_the_very_draw_it_plays():
    from blackout_training.agents.policy_net import load_policy_bot

    acting, explaining = load_policy_bot(greedy=False, seed=5), load_policy_bot(greedy=False, seed=5)
    game = BlackoutGame(STANDARD, seed=8)
    while not game.is_over:
        view = game.view(game.current_player)
        action = acting.act(view)
        why = explaining.explain(view)
        assert why.action == action
        check_explanation(why, view)
        game.step(action)


def test_the_rollout_policy_explains_its_searched_decisions():
    spec = "ppo+rollout:samples=2,card_samples=2,phases=all"
    explanations = play_explained(spec, max_decisions=6)
    searched = [why for why in explanations if why.kind == "search"]
    assert searched, "the first bids are searched"
    for why in searched:
        assert all(reason.value is not None and reason.probability is not None for reason in why.actions)
        assert why.value == why.reason(why.action).value


def test_the_network_gives_a_probability_per_action_and_its_value_in_points():
    bot = load_policy("ppo")
    assert (bot.reward, bot.reward_scale) == ("score", 0.1)  # what the shipped value head learnt
    game = BlackoutGame(STANDARD, seed=1)
    view = game.view(game.current_player)
    why = bot.explain(view)
    assert why.kind == "policy" and why.value is not None
    assert {r.action: r.probability for r in why.actions} == pytest.approx(bot.action_probabilities(view))
    assert why.action == max(why.actions, key=lambda r: r.probability).action  # greedy
    assert -10.0 <= why.value <= 25.0  # a hand score of the standard rules (10 + bid, 0 for a miss), in points
    assert "points" in why.note


def test_the_heuristic_explains_bids_and_cards_by_the_expected_scores_it_maximises():
    bot = HeuristicBot()
    game = BlackoutGame(STANDARD, seed=2)
    view = game.view(game.current_player)
    why = bot.explain(view)
    by_bid = bot.bid_values(view)
    assert [r.value for r in why.actions] == [by_bid[a - view.num_cards] for a in view.legal_actions]
    assert why.action == view.num_cards + bot.suggest_bid(view) and why.value == max(by_bid)
    while game.phase == "bid":
        game.step(bot.act(game.view(game.current_player)))
    view = game.view(game.current_player)
    why = bot.explain(view)
    assert {r.action: r.value for r in why.actions} == bot.card_values(view)
    assert why.value == why.reason(why.action).value


def test_search_values_are_the_mean_sampled_hand_scores():
    game = BlackoutGame(STANDARD, seed=4)
    view = game.view(game.current_player)
    why = SearchBot(seed=1, samples=3, bid_samples=3).explain(view)
    values = SearchBot(seed=1, samples=3, bid_samples=3).action_values(view)
    assert {r.action: r.value for r in why.actions} == values
    assert why.kind == "search" and "3 sampled deals" in why.note


def test_ismcts_reports_every_simulation_as_a_visit_at_the_root_and_the_prior_it_was_given():
    game = BlackoutGame(STANDARD, seed=5)
    view = game.view(game.current_player)
    why = ISMCTSBot(seed=1, simulations=60).explain(view)
    assert sum(r.visits for r in why.actions) == 60
    assert all(r.probability is None for r in why.actions)  # no prior
    assert why.action == max(why.actions, key=lambda r: (r.visits, r.value or 0.0)).action
    guided = load_policy("ppo+search:simulations=30", seed=1).explain(view)
    assert sum(r.visits for r in guided.actions) == 30
    assert {r.action: r.probability for r in guided.actions} == pytest.approx(
        load_policy("ppo").action_probabilities(view))
    assert "prior" in guided.note


def test_a_forced_move_is_explained_without_searching():
    game = BlackoutGame(SHORT, seed=0)  # the first hand has one card each: every card play is forced
    while game.phase == "bid":
        game.step(HeuristicBot().act(game.view(game.current_player)))
    view = game.view(game.current_player)
    for bot in (SearchBot(seed=1), ISMCTSBot(seed=1, simulations=10)):
        state = bot.rng.bit_generator.state
        why = bot.explain(view)
        assert why.action == view.legal_actions[0] and why.actions == (ActionReason(why.action),)
        assert bot.rng.bit_generator.state == state  # as act: nothing drawn


def test_explain_reaches_a_bot_through_a_fixed_seed_spec_and_the_reseeding_applies():
    policy = load_policy("random:seed=3")
    assert isinstance(policy, SeededPolicy)
    game = BlackoutGame(STANDARD, seed=0)
    view = game.view(game.current_player)
    played, explained = [], []
    for decision in range(20):
        policy.seed(decision)
        played.append(policy.act(view))
        policy.seed(decision)
        why = explain(policy, view)
        assert why.kind == "random"
        explained.append(why.action)
    assert played == explained and len(set(played)) > 1


def test_a_policy_without_explain_falls_back_to_its_action_without_numbers():
    game = BlackoutGame(STANDARD, seed=0)
    view = game.view(game.current_player)

    def highest(view: PlayerView) -> int:
        return view.legal_actions[-1]

    why = explain(highest, view)
    assert why.kind == "none" and why.action == view.legal_actions[-1] and why.value is None
    assert why.actions == tuple(ActionReason(a) for a in view.legal_actions)
    check_explanation(why, view)


def test_an_explanation_is_plain_json_with_lists():
    game = BlackoutGame(STANDARD, seed=0)
    view = game.view(game.current_player)
    data = ISMCTSBot(seed=1, simulations=20).explain(view).to_dict()
    assert isinstance(data["actions"], list) and isinstance(data["actions"][0], dict)
    assert json.loads(json.dumps(data)) == data
    assert set(data["actions"][0]) == {"action", "probability", "value", "visits"}


# --------------------------------------------------------------------------- blackout play --why
def run_play(saved, path, why: bool) -> str:
    output = io.StringIO()
    person = ScriptedPerson(output)
    advice = HeuristicBot()
    session = PlaySession(saved, path, suggest_bid=lambda view: advice.suggest_bid(view), input=person,
                          output=output, unicode=False, why=why,
                          explain_bid=advice.explain if why else None)
    person.session = session
    assert session.run() == 0
    return output.getvalue()


def why_lines_of(lines: list[str]) -> list[tuple[str, str]]:
    """(the narrated move, the line) for every reason line (``    why...``) printed under a move."""
    pairs, move = [], ""
    for line in lines:
        if line.startswith("    why"):
            pairs.append((move, line))
        elif not line.startswith("    "):
            move = line
    return pairs


def test_why_shows_bid_reasons_and_never_a_bots_numbers_per_card_while_a_person_plays(tmp_path):
    out = run_play(new_session(SHORT, humans=1, bots="heuristic,search:samples=2,ppo", seed=4), tmp_path / "a.json",
                   why=True)
    pairs = why_lines_of(out.splitlines())
    under_bids = [line for move, line in pairs if " bids " in move]
    under_cards = [line for move, line in pairs if " plays " in move]
    assert any(line.startswith("    why (heuristic): ") for line in under_bids)
    assert any(line.startswith("    why (policy): ") for line in under_bids)
    assert under_cards and all(line.startswith("    why: ") and "[" not in line for line in under_cards)
    assert not any(move.startswith("P0 ") for move, _ in pairs)  # a person's move has no reasons
    assert "Expected score of each bid (heuristic): " in out


def without_reasons(lines: list[str]) -> list[str]:
    """The output less what ``--why`` adds: reason lines (``    why (kind): ...`` with its note under it, or
    ``    why: ...``) and the heuristic's expected score of each bid at a person's bid."""
    kept, skip = [], 0
    for line in lines:
        if skip:
            skip -= 1
        elif line.startswith("    why"):
            skip = 1 if line.startswith("    why (") else 0
        elif not line.startswith("Expected score of each bid"):
            kept.append(line)
    return kept


def test_why_adds_reason_lines_and_changes_nothing_else(tmp_path):
    path = tmp_path / "save.json"
    plain = run_play(new_session(SHORT, humans=1, bots="search:samples=2", seed=6), path, why=False)
    why = run_play(new_session(SHORT, humans=1, bots="search:samples=2", seed=6), path, why=True)
    assert "    why" not in plain and "    why" in why
    assert without_reasons(why.splitlines()) == plain.splitlines()


def test_with_nobody_at_the_keyboard_why_shows_every_cards_numbers(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert main(["play", "--rules", "short", "--humans", "0", "--seed", "1", "--why", "--bots", "heuristic"]) == 0
    pairs = why_lines_of(capsys.readouterr().out.splitlines())
    under_cards = [line for move, line in pairs if " plays " in move]
    assert any(line.startswith("    why (heuristic): ") for line in under_cards)  # every card's number
    assert not any(line.startswith("    why: ") for line in under_cards)


def test_a_hidden_card_line_names_only_the_card_and_the_value():
    game = BlackoutGame(STANDARD, seed=2)
    bot = HeuristicBot()
    while game.phase == "bid":
        game.step(bot.act(game.view(game.current_player)))
    view = game.view(game.current_player)
    why = bot.explain(view)
    (line,) = explanation_lines(why, view, every_action=False)
    assert f"value {why.value:.2f}" in line
    others = [a for a in view.legal_actions if a != why.action]
    assert all(card_to_str(card) not in line for card in others)


def test_a_value_head_trained_on_per_table_rewards_is_not_given_in_points():
    from blackout_training.agents.policy_net import _trained_reward

    config = {"env": {"reward": "score", "reward_scale": 1.0, "reward_norm": "table"}}
    assert _trained_reward({"extra": {"config": config}}) == ("score", None)  # no one factor back to points
    config["env"]["reward_norm"] = "none"
    assert _trained_reward({"extra": {"config": config}}) == ("score", 1.0)
