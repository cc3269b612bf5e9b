"""The per-card features of the "cards" network, and that network as a policy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from blackout_training.agents.card_features import CardFeatures
from blackout_training.agents.policy_net import ActorCritic, PolicyBot, load_checkpoint, make_model, save_checkpoint

from blackout_env import BlackoutGame, Rules, deck_order
from blackout_env.game import encoding
from blackout_env.game.cards import parse_card
from blackout_env.game.rules_logic import card_power

HAND, UNSEEN, IN_TRICK, TRUMP, LED, RANK, UNSEEN_ABOVE, HAND_ABOVE, HAND_BELOW, HAND_SUIT, UNSEEN_SUIT, BEATS = range(12)
VOIDS = 12


def three_card_game() -> tuple[BlackoutGame, Rules]:
    """Hearts trump; seat 0 leads 2C; seat 2 holds no club."""
    rules = Rules(num_players=4, hand_sizes=(3,), first_dealer=3)
    hands = [["AS", "7H", "2C"], ["KS", "3H", "4C"], ["QS", "9H", "5D"], ["2S", "8H", "6C"]]
    game = BlackoutGame(rules, decks=[deck_order(hands, dealer=3, turned_card="5H")])
    for bid in (1, 0, 1, 0):  # the dealer may not bid 1 (hook)
        game.step(rules.num_cards + bid)
    return game, rules


def features_of(game: BlackoutGame, rules: Rules, seat: int) -> np.ndarray:
    obs = torch.from_numpy(encoding.encode(game.view(seat)))[None, :]
    return CardFeatures(rules)(obs)[0].numpy()


def test_features_read_the_trick_the_suits_and_the_unseen_cards():
    game, rules = three_card_game()
    game.play("2C")
    f = features_of(game, rules, 1)
    card = parse_card
    assert f[card("KS"), HAND] == 1 and f[card("AS"), HAND] == 0
    assert f[card("AS"), UNSEEN] == 1 and f[card("2C"), UNSEEN] == 0 and f[card("5H"), UNSEEN] == 0  # played, turned
    assert f[card("2C"), IN_TRICK] == 1 and f[card("AS"), IN_TRICK] == 0
    assert f[card("3H"), TRUMP] == 1 and f[card("KS"), TRUMP] == 0
    assert f[card("4C"), LED] == 1 and f[card("KS"), LED] == 0
    assert f[card("AS"), RANK] == 1 and f[card("2S"), RANK] == 0
    # Above KS, only AS is unseen; above 3H, 4H..AH less the turned 5H: ten cards.
    assert f[card("KS"), UNSEEN_ABOVE] == pytest.approx(1 / 12)
    assert f[card("3H"), UNSEEN_ABOVE] == pytest.approx(10 / 12)
    assert f[card("4C"), HAND_SUIT] == pytest.approx(1 / 13)
    assert f[card("2S"), HAND_ABOVE] == pytest.approx(1 / 12) and f[card("KS"), HAND_BELOW] == 0
    assert f[card("QS"), UNSEEN_SUIT] == pytest.approx(12 / 13)  # 13 spades less my KS; none played yet
    # Against 2C: the 4 of clubs and any trump win; a side-suit king does not.
    assert f[card("4C"), BEATS] == 1 and f[card("3H"), BEATS] == 1 and f[card("KS"), BEATS] == 0


def test_leading_every_card_wins_the_empty_trick_and_voids_are_per_seat():
    game, rules = three_card_game()
    f = features_of(game, rules, 0)
    assert f[:52, BEATS].all()
    game.play("2C")
    game.play("4C")
    game.play("5D")  # seat 2 shows a void in clubs
    f = features_of(game, rules, 3)
    # Seat 3's other seats clockwise: 0, 1, 2 -> void columns VOIDS + 0, 1, 2.
    assert f[parse_card("6C"), VOIDS + 2] == 1 and f[parse_card("6C"), VOIDS + 0] == 0
    assert f[parse_card("8H"), VOIDS + 2] == 0
    assert f[parse_card("6C"), BEATS] == 1 and f[parse_card("2S"), BEATS] == 0


@pytest.mark.parametrize("preset", ["standard", "jokers", "no-trump", "up-and-down", {"jokers": 1}])
def test_features_stay_in_range_and_match_the_hand_in_random_games(preset):
    rules = Rules.resolve(preset)
    features = CardFeatures(rules)
    rng = np.random.default_rng(0)
    game = BlackoutGame(rules, seed=1)
    for _ in range(120):
        if game.is_over:
            break
        view = game.view(game.current_player)
        obs = torch.from_numpy(encoding.encode(view))[None, :]
        f = features(obs)[0].numpy()
        assert f.shape == (rules.num_cards, features.num_features)
        assert f.min() >= 0 and f.max() <= 1
        assert set(np.flatnonzero(f[:, HAND])) == set(view.hand)
        shown = {view.turned_card} if view.turned_card is not None else set()
        assert set(np.flatnonzero(f[:, UNSEEN])) == set(view.unseen_cards) - shown
        game.step(int(rng.choice(view.legal_actions)))


@pytest.mark.parametrize("preset", ["short", "jokers"])
def test_the_cards_network_plays_legal_moves_and_survives_a_checkpoint(preset, tmp_path):
    rules = Rules.preset(preset)
    torch.manual_seed(0)
    net = make_model(rules, [32], arch="cards", card_width=8)
    bot = PolicyBot(net, rules, greedy=False, seed=1)
    game = BlackoutGame(rules, seed=2)
    while not game.is_over:
        action = bot.act(game.view(game.current_player))
        assert action in game.legal_actions()
        game.step(action)
    path = save_checkpoint(tmp_path / "cards.pt", net, rules)
    loaded, _, payload = load_checkpoint(path, rules)
    assert payload["arch"] == "cards" and loaded.spec() == net.spec()
    obs = torch.rand(5, net.observation_size)
    assert torch.equal(net.logits(obs), loaded.logits(obs))


def random_decisions(rules: Rules, seed: int, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Observations and boolean masks of the first ``count`` decisions of a game of random legal moves."""
    rng = np.random.default_rng(seed)
    game = BlackoutGame(rules, seed=seed)
    obs, masks = [], []
    while not game.is_over and len(obs) < count:
        view = game.view(game.current_player)
        obs.append(encoding.encode(view))
        masks.append(encoding.action_mask(view))
        game.step(int(rng.choice(view.legal_actions)))
    return torch.from_numpy(np.stack(obs)), torch.from_numpy(np.stack(masks)).bool()


def test_embedding_only_the_held_cards_gives_every_legal_card_its_full_logit():
    # The network embeds the K held cards only; a card's logit must equal what embedding all cards gives.
    rules = Rules.preset("standard")
    torch.manual_seed(1)
    net = make_model(rules, [32], arch="cards", card_width=8)
    obs_t, mask_t = random_decisions(rules, seed=4, count=60)
    with torch.no_grad():
        every = net.card_net(net.card_features(obs_t))  # (batch, 52, w)
        hand = obs_t[:, :52]
        held = torch.einsum("bc,bcw->bw", hand, every)
        state = net.trunk_mlp[1:](net.trunk_mlp[0](obs_t) + net.held_in(held))
        reference = torch.einsum("bcw,bw->bc", every, net.card_query(state)) + net.card_bias(every).squeeze(-1)
        logits = net.logits(obs_t)
    legal_cards = mask_t[:, :52]
    assert legal_cards.any()
    assert torch.allclose(logits[:, :52][legal_cards], reference[legal_cards], atol=1e-5)
    assert torch.allclose(net.trunk(obs_t), state, atol=1e-5)


def test_precomputed_card_inputs_give_the_same_policy_and_value():
    # The trainer computes card_inputs once per observation and passes them to every update epoch.
    rules = Rules.preset("standard")
    torch.manual_seed(2)
    net = make_model(rules, [32], arch="cards", card_width=8)
    obs_t, mask_t = random_decisions(rules, seed=5, count=40)
    actions = net.greedy_action(obs_t, mask_t)
    plain = net.get_action_and_value(obs_t, mask_t, actions)
    cached = net.get_action_and_value(obs_t, mask_t, actions, inputs=net.card_inputs(obs_t))
    for a, b in zip(plain, cached):
        assert torch.equal(a, b)
    assert make_model(rules, [32], arch="mlp").card_inputs(obs_t) is None


def test_the_cards_network_needs_the_rules_and_a_known_arch():
    rules = Rules.preset("short")
    size = encoding.observation_size(rules)
    with pytest.raises(ValueError, match="arch 'cards' needs the rules"):
        ActorCritic(size, rules.num_actions, [8], arch="cards")
    with pytest.raises(ValueError, match="arch: must be one of mlp, cards, got 'lstm'"):
        ActorCritic(size, rules.num_actions, [8], arch="lstm", rules=rules)


def test_the_would_win_feature_reads_the_rules_trick_power_on_every_input():
    features = CardFeatures(Rules(num_players=4, jokers=2))
    suits = (0, 1, 2, 3, None)  # the columns of the observation's "trump" and "led_suit" blocks
    for (t, trump), (k, led) in itertools.product(enumerate(suits), repeat=2):
        assert features.power[t, k].tolist() == [card_power(card, led, trump) for card in range(54)]


@pytest.mark.parametrize("preset", ["standard", "jokers", {"jokers": 1}, "universal"])
def test_the_features_of_the_held_slots_equal_the_gathered_features_of_every_card(preset):
    # card_inputs computes the features at the K slots only (CardFeatures.at); the values must be exactly those of
    # the per-card features (CardFeatures.__call__, the definition the tests above pin down) gathered at the slots.
    from blackout_env.game.universal import universal_observation

    rules = Rules.resolve("jokers" if preset == "universal" else preset)
    obs_t, _ = random_decisions(rules, seed=6, count=80)
    if preset == "universal":
        obs_t = torch.from_numpy(universal_observation(obs_t.numpy(), rules))
    features = CardFeatures(rules, "universal" if preset == "universal" else "rules")
    every = features(obs_t)
    assert every.shape == (len(obs_t), features.num_cards, features.num_features)
    _, slot_card = obs_t[:, : features.num_cards].topk(10, dim=1)
    gathered = every.gather(1, slot_card[:, :, None].expand(-1, -1, every.shape[2]))
    assert torch.equal(features.at(obs_t, slot_card), gathered)
