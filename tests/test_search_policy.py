"""``ppo+search``: IS-MCTS guided at the root by the shipped PPO policy."""

import pytest

pytest.importorskip("torch")

import numpy as np  # noqa: E402
from blackout_baselines import ISMCTSBot  # noqa: E402
from blackout_baselines.deals import sample_hands  # noqa: E402
from blackout_baselines.search import determinize  # noqa: E402
from blackout_training.agents.policies import load_policy  # noqa: E402
from blackout_training.agents.policy_net import SPECIALIST_CHECKPOINT, load_policy_bot  # noqa: E402
from blackout_training.agents.search_policy import DEEP_OPTIONS, DEFAULT_PRIOR_MARGIN, DEFAULT_SIMULATIONS  # noqa: E402

from blackout_env import BlackoutGame, Rules  # noqa: E402


def test_the_policys_probabilities_cover_the_legal_actions():
    rules = Rules.preset("standard")
    policy = load_policy_bot(rules=rules)
    game = BlackoutGame(rules, seed=2)
    for _ in range(6):
        view = game.view(game.current_player)
        probabilities = policy.action_probabilities(view)
        assert set(probabilities) == set(view.legal_actions)
        assert abs(sum(probabilities.values()) - 1.0) < 1e-4
        game.step(policy.act(view))


def test_ppo_search_is_a_policy_spec_that_plays_legal_actions():
    rules = Rules.preset("standard")
    bot = load_policy("ppo+search:simulations=30,prior_weight=0.5", rules, seed=1)
    assert isinstance(bot, ISMCTSBot) and bot.name == "ppo+search"
    assert bot.simulations == 30 and bot.prior_weight == 0.5
    game = BlackoutGame(rules, seed=3)
    round_index = game.round_index
    while game.round_index == round_index:
        view = game.view(game.current_player)
        action = bot.act(view)
        assert action in view.legal_actions
        game.step(action)


def test_ppo_search_is_guided_by_the_generalist_so_it_plays_any_table():
    rules = Rules.preset("short").replace(num_players=6, jokers=1)
    bot = load_policy("ppo+search:simulations=10", rules, seed=2)
    game = BlackoutGame(rules, seed=4, start_round=2)  # the 3-card hand
    while game.round_index == 2:
        view = game.view(game.current_player)
        action = bot.act(view)
        assert action in view.legal_actions
        game.step(action)


def test_ppo_search_with_the_specialist_as_its_prior_refuses_other_rules():
    with pytest.raises(ValueError, match="other rules"):
        load_policy(f"ppo+search:checkpoint={SPECIALIST_CHECKPOINT}", Rules.preset("short"), seed=0)


def test_a_bad_ppo_search_option_names_the_spec():
    with pytest.raises(ValueError, match=r"ppo\+search:simulations=0"):
        load_policy("ppo+search:simulations=0", Rules.preset("standard"), seed=0)
    with pytest.raises(ValueError, match="ppo\\+search:depth=3"):
        load_policy("ppo+search:depth=3", Rules.preset("standard"), seed=0)


def test_ppo_search_defaults_to_400_simulations_unless_the_spec_gives_a_budget():
    """400, not ismcts's 500: with the network's pass it stays within OpenSpiel's time per decision."""
    rules = Rules.preset("standard")
    assert load_policy("ppo+search", rules, seed=0).simulations == DEFAULT_SIMULATIONS == 400
    assert load_policy("ppo+search:simulations=500", rules, seed=0).simulations == 500
    timed = load_policy("ppo+search:time_ms=20", rules, seed=0)
    assert timed.time_ms == 20


def test_ppo_search_deep_is_ppo_search_at_four_times_the_simulations_with_exact_endgames():
    rules = Rules.preset("standard")
    deep = load_policy("ppo+search-deep", rules, seed=0)
    assert isinstance(deep, ISMCTSBot) and deep.name == "ppo+search-deep"
    assert (deep.simulations, deep.endgame) == (DEEP_OPTIONS["simulations"], DEEP_OPTIONS["endgame"]) == (1600, 3)
    assert deep.prior_margin == DEFAULT_PRIOR_MARGIN and deep.prior is not None
    options = load_policy("ppo+search-deep:simulations=50,endgame=2,prior_margin=none", rules, seed=0)
    assert (options.simulations, options.endgame, options.prior_margin) == (50, 2, None)
    timed = load_policy("ppo+search-deep:time_ms=20", rules, seed=0)
    assert timed.time_ms == 20 and timed.endgame == 3
    with pytest.raises(ValueError, match="ppo\\+search-deep:depth=3"):
        load_policy("ppo+search-deep:depth=3", rules, seed=0)


def test_ppo_search_deep_decides_from_its_view_only():
    """Redeal the other players' hidden cards consistently with the view: same view, same seed, same decision."""
    rules = Rules(num_players=4, hand_sizes=[5])
    rng = np.random.default_rng(4)
    _, views = _decisions(rules, 20, seed=6)
    checked = 0
    for view in views:
        if len(view.legal_actions) > 1 and view.phase == "play":
            other = determinize(view, sample_hands(view, rng))
            assert other.view(view.player) == view
            first = load_policy("ppo+search-deep:simulations=60", rules, seed=3).act(view)
            second = load_policy("ppo+search-deep:simulations=60", rules, seed=3).act(other.view(view.player))
            assert first == second
            checked += 1
    assert checked >= 4


def _decisions(rules, count, seed=3):
    """The views of the first ``count`` decisions of a game played by the network."""
    network = load_policy("ppo", rules, seed=0)
    game, views = BlackoutGame(rules, seed=seed), []
    while game.phase != "game_over" and len(views) < count:
        views.append(game.view(game.current_player))
        game.step(network.act(views[-1]))
    return network, views


def test_prior_margin_keeps_the_networks_action_unless_the_search_beats_it_by_more():
    rules = Rules.preset("standard")
    network, views = _decisions(rules, 40)
    overruled = load_policy("ppo+search:simulations=50,prior_margin=none", rules, seed=1)
    assert any(overruled.act(view) != network.act(view) for view in views)  # the plain search overrules it
    kept = load_policy("ppo+search:simulations=50,prior_margin=1", rules, seed=1)
    assert [kept.act(view) for view in views] == [network.act(view) for view in views]  # means lie in 0..1
    gated = load_policy("ppo+search:simulations=50,prior_margin=0", rules, seed=1)
    for view in views:
        explanation = gated.explain(view)
        if len(view.legal_actions) == 1:
            continue
        reasons = {reason.action: reason for reason in explanation.actions}
        most = max(reasons.values(), key=lambda r: (r.visits or 0, r.value if r.value is not None else 0.0))
        chosen = reasons[explanation.action]
        assert explanation.action in (most.action, network.act(view))
        if explanation.action != most.action:  # kept the network's action: the search's is no better
            assert most.value <= chosen.value + 1e-12
        assert "unless the prior's favourite is within 0" in explanation.note


def test_the_default_margin_is_point_one_and_none_turns_it_off():
    rules = Rules.preset("standard")
    _, views = _decisions(rules, 20)
    default = load_policy("ppo+search:simulations=50", rules, seed=1)
    assert default.prior_margin == DEFAULT_PRIOR_MARGIN == 0.1
    explicit = load_policy("ppo+search:simulations=50,prior_margin=0.1", rules, seed=1)
    assert [default.act(view) for view in views] == [explicit.act(view) for view in views]
    assert load_policy("ppo+search:prior_margin=none", rules, seed=1).prior_margin is None
    assert load_policy("ppo+search:prior_margin=None", rules, seed=1).prior_margin is None


def test_a_bad_prior_margin_is_refused_naming_it():
    with pytest.raises(ValueError, match="prior_margin: must be a finite number >= 0 \\(or none\\), got 'off'"):
        load_policy("ppo+search:prior_margin=off", Rules.preset("standard"), seed=0)
    with pytest.raises(ValueError, match="prior_margin: must be a finite number >= 0 \\(or none\\), got -0.5"):
        load_policy("ppo+search:prior_margin=-0.5", Rules.preset("standard"), seed=0)
    with pytest.raises(ValueError, match="prior_margin: keeps the prior's most probable action, so it needs a prior"):
        ISMCTSBot(prior_margin=0.1)


def test_the_stake_margin_is_the_share_of_the_hand_still_at_stake():
    """ppo+search's margin (margin_scale=stake): the whole margin while bidding; late in a hand the points the seat
    can still win or lose. A lost bid at one point a trick leaves a point per trick at stake, and the search's sure
    trick is played (p100 of the suite: 3 taken on a bid of 1, two tricks left); the whole hand's margin kept the
    network's card."""
    from blackout_training.evaluation.positions import load_positions

    position = next(p for p in load_positions() if p.id.startswith("p100-"))
    game = position.game()
    view = game.view(position.seat)
    bot = load_policy("ppo+search:simulations=100", position.rules, seed=0)
    assert bot.margin_scale == "stake"
    raw = [position.rules.hand_score(b, t) for b in range(view.hand_size + 1) for t in range(view.hand_size + 1)]
    stake = position.rules.hand_score(1, 5) - position.rules.hand_score(1, 3)  # 3 taken, 2 left
    assert stake == 2 and bot._margin(view) == pytest.approx(DEFAULT_PRIOR_MARGIN * stake / (max(raw) - min(raw)))
    assert bot.act(view) in position.acceptable
    whole = load_policy("ppo+search:simulations=100,margin_scale=hand", position.rules, seed=0)
    assert whole._margin(view) == DEFAULT_PRIOR_MARGIN and whole.act(view) not in position.acceptable
    bidding = BlackoutGame(position.rules, seed=0)
    assert bot._margin(bidding.view(bidding.current_player)) == DEFAULT_PRIOR_MARGIN


def test_a_bad_margin_scale_is_refused_naming_it():
    with pytest.raises(ValueError, match="margin_scale: must be 'hand' or 'stake', got 'points'"):
        load_policy("ppo+search:margin_scale=points", Rules.preset("standard"), seed=0)


def test_the_margin_is_off_once_the_endgame_solver_decides_every_trick_left():
    """ppo+search-deep solves the last three tricks exactly: there its search's means are solutions of sampled deals,
    not random playouts, and the margin (endgame_margin, 0 by default) no longer keeps the network's card. p122 of the
    suite: it needs one more trick with the jack and the two of spades under a led king; the network plays the jack,
    the search the two, by less than the stake margin. endgame_margin=0.1 is the one margin of before."""
    from blackout_training.evaluation.positions import load_positions

    position = next(p for p in load_positions() if p.id.startswith("p122-"))
    view = position.game().view(position.seat)
    assert view.tricks_left == 2 <= DEEP_OPTIONS["endgame"]
    deep = load_policy("ppo+search-deep:simulations=400", position.rules, seed=0)
    assert deep.endgame_margin == 0 and deep._margin(view) == 0
    assert deep.act(view) in position.acceptable
    before = load_policy("ppo+search-deep:simulations=400,endgame_margin=0.1", position.rules, seed=0)
    assert before._margin(view) > 0 and before.act(view) not in position.acceptable
    plain = load_policy("ppo+search", position.rules, seed=0)  # no endgame solver: the stake margin as before
    assert plain._margin(view) == pytest.approx(before._margin(view))
    assert "endgame_margin: every trick left is solved exactly" in deep.explain(view).note
    # earlier in a hand, and while bidding, the deep search keeps ppo+search's margin
    rules = Rules.preset("standard")
    game = BlackoutGame(rules, seed=4)
    deep = load_policy("ppo+search-deep", rules, seed=0)
    plain = load_policy("ppo+search", rules, seed=0)
    kept = 0
    while game.phase != "play" or game.view(game.current_player).tricks_left > DEEP_OPTIONS["endgame"]:
        view = game.view(game.current_player)
        assert deep._margin(view) == pytest.approx(plain._margin(view))
        kept += plain._margin(view) > 0  # (0 where nothing is at stake: a bid already lost)
        game.step(view.legal_actions[0])
    assert kept > 10 and deep._margin(game.view(game.current_player)) == 0


def test_a_bad_endgame_margin_is_refused_naming_it():
    with pytest.raises(ValueError, match="endgame_margin: must be a number >= 0, got -1"):
        load_policy("ppo+search-deep:endgame_margin=-1", Rules.preset("standard"), seed=0)
    with pytest.raises(ValueError, match="endgame_margin: must be a number >= 0, got 'off'"):
        load_policy("ppo+search-deep:endgame_margin=off", Rules.preset("standard"), seed=0)
    # it would do nothing without the endgame solver or a margin
    with pytest.raises(ValueError, match="endgame_margin: .* needs endgame > 0 and a prior_margin; got endgame=0"):
        load_policy("ppo+search:endgame_margin=0.1", Rules.preset("standard"), seed=0)
    with pytest.raises(ValueError, match="endgame_margin: .*got endgame=3, prior_margin=None"):
        load_policy("ppo+search-deep:prior_margin=none,endgame_margin=0.1", Rules.preset("standard"), seed=0)
    with pytest.raises(ValueError, match="endgame_margin"):
        ISMCTSBot(endgame=3, endgame_margin=0.1)


@pytest.mark.parametrize("spec, words", [
    ("ismcts:exploration=1e200", "exploration: must be a finite number"),
    ("ppo+search:exploration=inf", "exploration: must be a finite number"),
    ("search:time_limit_ms=inf", "time_limit_ms: must be a positive finite number"),
    ("ismcts:time_ms=inf", "time_ms: must be a positive finite number"),
    ("ppo+search:prior_weight=inf", "prior_weight: must be a finite number"),
    ("ppo+search:checkpoint=", "checkpoint is empty"),
    ("ppo+rollout:checkpoint=", "checkpoint is empty"),
    ("ppo+search:prior=1", "prior is the network's"),
])
def test_options_that_would_break_a_search_are_refused_when_it_loads(spec, words):
    with pytest.raises(ValueError, match=words):
        load_policy(spec, "short", 0)


def test_a_spec_seed_fixes_ppo_search_and_ppo_rollout_as_it_fixes_the_baselines():
    from blackout_env import BlackoutGame

    game = BlackoutGame("short", seed=4)
    view = game.view(game.current_player)
    for spec in ("ppo+search:seed=3,simulations=16", "ppo+rollout:seed=3,samples=4"):
        first, second = load_policy(spec, "short", 0), load_policy(spec, "short", 99)
        first.seed(5), second.seed(5)
        assert first.act(view) == second.act(view) and first.name == spec.split(":")[0]
