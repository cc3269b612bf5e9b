"""``ppo+rollout``: the network's decisions chosen by playouts of the network itself."""

import numpy as np
import pytest

pytest.importorskip("torch")

from blackout_baselines.deals import deal_deck, sample_hands  # noqa: E402
from blackout_training.agents.policies import load_policy  # noqa: E402
from blackout_training.agents.policy_net import load_policy_bot  # noqa: E402
from blackout_training.agents.rollout_policy import RolloutPolicy  # noqa: E402

from blackout_env import BlackoutGame, Rules  # noqa: E402


def _game_at(rules: Rules, seed: int, round_index: int, actions: int) -> BlackoutGame:
    """A game at hand ``round_index`` after ``actions`` decisions of that hand (played by the network)."""
    bot = load_policy_bot(rules=rules)
    game = BlackoutGame(rules, seed=seed, start_round=round_index)
    for _ in range(actions):
        game.step(bot.act(game.view(game.current_player)))
    return game


def _scalar_values(policy: RolloutPolicy, view, seed: int, samples: int) -> dict[int, float]:
    """The same estimate one game at a time in the rules engine: the reference for the batched playouts."""
    rules, bot = view.rules, policy.bot
    rng = np.random.default_rng(seed)
    totals, weight_sum = dict.fromkeys(view.legal_actions, 0.0), 0.0
    for _ in range(samples):
        hands = sample_hands(view, rng)
        dealt = [list(hands[s]) + list(view.played[s]) for s in range(view.num_players)]
        deck = deal_deck(rules, view.dealer, dealt, view.turned_card, view.turned_card_held_by_dealer)
        r = view.round_index
        start = BlackoutGame(rules, decks={r: deck}, first_dealer=(view.dealer - r) % view.num_players, start_round=r)
        start.scores = list(view.scores)
        weight = 1.0
        for action in view.round_actions:
            if start.phase == "bid":
                weight *= bot.action_probabilities(start.view(start.current_player))[action] ** policy.belief
            start.step(action)
        weight_sum += weight
        for action in view.legal_actions:
            game = start.clone()
            game.step(action)
            while game.round_index == r and not game.is_over:
                game.step(bot.act(game.view(game.current_player)))
            totals[action] += weight * game.round_scores[-1][view.player]
    return {a: total / weight_sum for a, total in totals.items()}


@pytest.mark.parametrize("preset, round_index, actions", [("standard", 7, 2), ("jokers", 6, 5)])
def test_batched_playouts_are_the_rules_engines_playouts(preset, round_index, actions):
    # A bid after two others (weighted by their likelihood), and a card play mid-trick at a table with jokers.
    rules = Rules.preset(preset)
    game = _game_at(rules, seed=4, round_index=round_index, actions=actions)
    game.scores = [12, 0, 31, 7][: rules.num_players] + [0] * max(0, rules.num_players - 4)
    view = game.view(game.current_player)
    policy = RolloutPolicy(load_policy_bot(rules=rules), samples=6, card_samples=6, phases="all", seed=11)
    values = policy.action_values(view)
    expected = _scalar_values(policy, view, seed=11, samples=6)
    assert set(values) == set(view.legal_actions)
    for action, value in expected.items():
        assert values[action] == pytest.approx(value, rel=1e-4, abs=1e-4), action


@pytest.mark.parametrize("preset, round_index, actions", [("standard", 2, 7), ("up-and-down", 4, 9)])
def test_the_sampled_games_are_the_views_moment_with_the_unseen_cards_dealt(preset, round_index, actions):
    rules = Rules.preset(preset).replace(first_dealer="random")
    game = _game_at(rules, seed=8, round_index=round_index, actions=actions)
    game.scores = [5, 23, 0, 17][: rules.num_players] + [0] * max(0, rules.num_players - 4)
    view = game.view(game.current_player)
    policy = RolloutPolicy(load_policy_bot(rules=rules), seed=1)
    env, me, _ = policy.sampled_games(view, games=6, samples=3)
    n, shift = rules.num_players, (view.player - me) % rules.num_players
    unseen = set(view.unseen_cards)
    for g in range(6):
        seen = env.view(g, me)
        assert seen.hand == view.hand and seen.legal_actions == view.legal_actions
        for name in ("phase", "round_index", "hand_size", "trump", "turned_card", "led_suit", "trump_broken"):
            assert getattr(seen, name) == getattr(view, name), name
        for name in ("bids", "tricks_won", "played", "scores", "voids"):
            assert [getattr(seen, name)[q] for q in range(n)] == [getattr(view, name)[(q + shift) % n] for q in range(n)]
        others = [card for q in range(n) if q != me for card in env.view(g, q).hand]
        assert set(others) <= unseen and len(others) == sum(view.cards_left(s) for s in range(n) if s != view.player)
    # Games 0 and 1 share a sampled deal (two games per sample here).
    assert env.view(0, (me + 1) % n).hand == env.view(1, (me + 1) % n).hand


def test_a_sure_trick_is_worth_its_exact_bid():
    # One-card hands: with the top trump in hand (no jokers), bidding 1 always scores 10 + 1, bidding 0 never scores.
    rules = Rules.preset("standard")
    policy = RolloutPolicy(load_policy_bot(rules=rules), samples=4, seed=0)
    for seed in range(200):
        game = BlackoutGame(rules, seed=seed, start_round=rules.num_rounds - 1)
        view = game.view(game.current_player)
        if view.trump is not None and view.hand == (view.trump * 13 + 12,):
            break
    else:  # pragma: no cover - the ace of trump is dealt to the first bidder about once in 51 deals
        pytest.fail("no deal with the ace of trump in the first bidder's hand")
    values = policy.action_values(view)
    assert values[rules.num_cards + 1] == 11.0
    assert values[rules.num_cards + 0] == 0.0


def test_ppo_rollout_is_a_policy_spec_that_plays_every_table_reproducibly():
    for preset in ("standard", "short", "no-trump", "up-and-down"):
        rules = Rules.preset(preset)
        moves = []
        for _ in range(2):
            policy = load_policy("ppo+rollout:samples=3,phases=all,card_samples=2", rules, seed=5)
            assert isinstance(policy, RolloutPolicy) and policy.name == "ppo+rollout"
            game = BlackoutGame(rules, seed=9, start_round=1)
            played = []
            while game.round_index == 1:
                view = game.view(game.current_player)
                action = policy.act(view)
                assert action in view.legal_actions
                played.append(action)
                game.step(action)
            moves.append(played)
        assert moves[0] == moves[1], preset


def test_phases_choose_the_decisions_searched():
    rules = Rules.preset("standard")
    bot = load_policy_bot(rules=rules)
    game = _game_at(rules, seed=2, round_index=0, actions=0)
    bid = game.view(game.current_player)
    game = _game_at(rules, seed=2, round_index=0, actions=4)
    play = game.view(game.current_player)
    assert bid.phase == "bid" and play.phase == "play" and len(play.legal_actions) > 1
    searched = {phases: RolloutPolicy(bot, phases=phases) for phases in ("bids", "cards", "all")}
    assert [searched[p].searches(bid) for p in ("bids", "cards", "all")] == [True, False, True]
    assert [searched[p].searches(play) for p in ("bids", "cards", "all")] == [False, True, True]


def test_a_random_first_dealer_is_played_from_the_views_seats():
    rules = Rules.preset("standard").replace(first_dealer="random")
    policy = RolloutPolicy(load_policy_bot(rules=rules), samples=2, phases="all", card_samples=2, seed=0)
    game = BlackoutGame(rules, seed=3, start_round=8)
    while game.round_index == 8:
        view = game.view(game.current_player)
        game.step(policy.act(view))


def test_bad_options_are_refused_naming_the_spec():
    rules = Rules.preset("standard")
    for argument, problem in [
        ("samples=0", "samples"),
        ("phases=tricks", "phases"),
        ("margin=-1", "margin"),
        ("belief=x", "belief"),
        ("depth=3", "depth"),
    ]:
        with pytest.raises(ValueError, match=problem) as error:
            load_policy(f"ppo+rollout:{argument}", rules, seed=0)
        assert "ppo+rollout" in str(error.value)
    with pytest.raises(ValueError, match="greedy"):
        RolloutPolicy(load_policy_bot(rules=rules, greedy=False))


def test_a_belief_so_large_that_its_product_overflows_keeps_the_values_finite():
    # belief=1e305 times a log-likelihood below zero overflows: the likeliest deal takes the weight (the limit).
    rules = Rules.preset("standard")
    game = _game_at(rules, seed=4, round_index=7, actions=2)
    view = game.view(game.current_player)
    policy = RolloutPolicy(load_policy_bot(rules=rules), samples=6, phases="all", belief=1e305, seed=11)
    values = policy.action_values(view)
    assert set(values) == set(view.legal_actions) and all(np.isfinite(v) for v in values.values())


def test_deal_weights_are_the_likelihood_to_the_power_belief_with_its_limit():
    from blackout_training.agents.rollout_policy import _normalized_weights

    ll = np.log(np.array([0.5, 0.25, 0.25]))
    assert _normalized_weights(ll, 1.0) == pytest.approx([0.5, 0.25, 0.25])
    assert _normalized_weights(ll, 2.0) == pytest.approx(np.array([0.25, 0.0625, 0.0625]) / 0.375)
    assert _normalized_weights(ll, 0.0) == pytest.approx([1 / 3] * 3)
    assert _normalized_weights(ll, 1e305) == pytest.approx([1.0, 0.0, 0.0])  # the likeliest deal, not all alike
    assert _normalized_weights(np.array([-np.inf, np.log(0.1)]), 1.0) == pytest.approx([0.0, 1.0])
    assert _normalized_weights(np.array([-np.inf, -np.inf]), 1.0) == pytest.approx([0.5, 0.5])
    assert _normalized_weights(np.array([-np.inf, np.log(0.1), 0.0]), 0.0) == pytest.approx([0.0, 0.5, 0.5])
