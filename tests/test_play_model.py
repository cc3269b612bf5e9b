"""Inferred hidden cards from the play: the events, the classes of a card played, the play model, the weights."""

import json
import random

import numpy as np
import pytest
from blackout_baselines import ISMCTSBot
from blackout_baselines.belief import Belief
from blackout_baselines.deals import DealSampler, sample_hands
from blackout_baselines.heuristic import HeuristicBot
from blackout_baselines.play_model import (
    CLASSES,
    SITUATIONS,
    PlayModel,
    _events,
    default_play_model,
    event_classes,
    play_events,
    play_likelihood,
    play_records,
)
from blackout_baselines.search import determinize

from blackout_env import BlackoutGame, Rules
from blackout_env.game.rules_logic import card_powers

TABLES = ["standard", "jokers", "trump-must-break", "no-trump", Rules(num_players=3, hand_sizes=[7])]


def bits(cards) -> int:
    return sum(1 << c for c in cards)


def played_games(rules: Rules, count: int, seed: int = 0):
    """Per hand of ``count`` heuristic hands: the game at each card played, with the hands then and the card."""
    bot = HeuristicBot()
    for index in range(count):
        game = BlackoutGame(rules, seed=seed * 1000 + index, start_round=index % rules.num_rounds)
        while game.phase == "bid":
            game.step(bot.act(game.view(game.current_player)))
        start, steps = game.round_index, []
        while game.phase == "play" and game.round_index == start:
            view = game.view(game.current_player)
            card = bot.act(view)
            steps.append((start, [list(h) for h in game.hands], view, card))
            game.step(card)
        yield game, steps


def rules_of(table) -> Rules:
    return table if isinstance(table, Rules) else Rules.preset(table)


@pytest.mark.parametrize("table", TABLES, ids=str)
def test_events_are_the_cards_played_and_their_classes_the_engines_legal_cards(table):
    rules = rules_of(table)
    for _, steps in played_games(rules, 6, seed=1):
        for index, (_, hands, view, card) in enumerate(steps):
            events = play_events(view)
            assert [e.card for e in events] == [c for _, _, _, c in steps[:index]]
            assert [e.seat for e in events] == [v.player for _, _, v, _ in steps[:index]]
            before = [c for _, _, _, c in steps[:index]]
            event = _events(view, before + [card])[-1]  # this very play
            bid, won = view.bids[view.player], view.tricks_won[view.player]
            assert event.need == (0 if won < bid else 1 if won == bid else 2)
            assert event.leads == (not view.current_trick)
            assert event.last == (len(view.current_trick) == rules.num_players - 1)
            held = np.array([bits(hands[view.player])], dtype=np.uint64)
            situation, klass, _ = event_classes(event, held)
            offered = int(situation[0]) % (1 << CLASSES)
            assert offered >> int(klass[0]) & 1
            # every legal card falls in one class the legal cards offer, each class's share is its size,
            # and the situation does not depend on the card
            classes = []
            for other in view.legal_actions:
                other_situation, other_class, other_share = event_classes(_events(view, before + [other])[-1], held)
                assert other_situation[0] == situation[0]
                classes.append((int(other_class[0]), int(other_share[0])))
            sizes = {k: sum(1 for c, _ in classes if c == k) for k, _ in classes}
            assert all(share == sizes[k] for k, share in classes)
            assert sum(1 << k for k in sizes) == offered
            if not event.leads:  # a winning class is a card that would take the trick as it stands
                trick = view.current_trick
                powers = card_powers(view.led_suit, view.trump)
                best = max(powers[c] for _, c in trick)
                assert (int(klass[0]) < 2) == (powers[card] > best)


def test_the_likelihood_is_positive_for_every_deal_the_view_allows_and_the_truth_among_them():
    rules = Rules.preset("standard")
    model = PlayModel.fit(play_records(HeuristicBot(), rules, 60, seed=2))
    np_rng, rng = np.random.default_rng(0), random.Random(0)
    for _, steps in played_games(rules, 4, seed=3):
        for _, hands, view, _ in steps[::3]:
            sampler = DealSampler(view)
            drawn = np.array(sampler.draw(100, np_rng, rng), dtype=np.uint64)
            truth = np.array([[bits(h) for h in hands]], dtype=np.uint64)
            assert (play_likelihood(view, model, drawn) > 0).all()
            assert play_likelihood(view, model, truth)[0] > 0


def test_the_likelihood_of_the_true_deal_is_each_card_played_chance_given_the_hand_then():
    rules = Rules.preset("standard")
    model = PlayModel.fit(play_records(HeuristicBot(), rules, 60, seed=2))
    for _, steps in played_games(rules, 3, seed=8):
        for index, (_, hands, view, _) in enumerate(steps):
            expected = 1.0
            plays = [c for *_, c in steps]
            for earlier, (_, hands_then, view_then, _) in enumerate(steps[:index]):  # each card played before
                if view_then.player == view.player:
                    continue
                event = _events(view, plays[: earlier + 1])[-1]
                held = np.array([bits(hands_then[view_then.player])], dtype=np.uint64)
                situation, klass, share = event_classes(event, held)
                expected *= model.table[situation[0], klass[0]] / share[0]
            truth = np.array([[bits(h) for h in hands]], dtype=np.uint64)
            assert play_likelihood(view, model, truth)[0] == pytest.approx(expected, rel=1e-9)


class LowestCard:
    """Bids zero and plays its lowest legal card by power: a player whose plays give its hand away."""

    def act(self, view):
        legal = view.legal_actions
        if view.phase == "bid":
            return min(legal)
        powers = card_powers(view.led_suit, view.trump)
        return min(legal, key=lambda card: (powers[card], card % 13))


def test_weighted_deals_find_the_cards_of_a_player_whose_play_gives_its_hand_away(monkeypatch):
    import blackout_training.cli.belief as cli

    rules = Rules(num_players=4, hand_sizes=[8])
    model = PlayModel.fit(play_records(LowestCard(), rules, 300, seed=4))
    monkeypatch.setattr(cli, "_bot", lambda spec, rules, seed: LowestCard())
    figures = cli.evaluate([("lowest", rules)], "lowest", 6, 3000, 5, play=model, at="play")
    late = [row for row in figures["by_tricks_played"] if row["phase"] != "before the first trick ends"]
    assert figures["log_loss_model"] < 0.97 * figures["log_loss_uniform_sampled"]
    assert late and all(row["log_loss_model"] < row["log_loss_uniform_sampled"] for row in late)


def test_a_model_is_saved_and_loaded_and_bad_files_are_refused(tmp_path):
    model = PlayModel.fit(play_records(HeuristicBot(), Rules.preset("standard"), 20, seed=6), source="heuristic")
    assert model.table.shape == (SITUATIONS, CLASSES)
    offered = (np.arange(SITUATIONS)[:, None] % (1 << CLASSES)) >> np.arange(CLASSES) & 1
    assert (model.table[offered == 0] == 0).all() and (model.table[offered == 1] > 0).all()
    rows = offered.any(axis=1)
    assert np.allclose(model.table[rows].sum(axis=1), 1)
    path = tmp_path / "play.json"
    model.save(path)
    assert np.array_equal(PlayModel.load(path).table, model.table) and PlayModel.load(path).source == "heuristic"
    with pytest.raises(ValueError, match="cannot be read"):
        PlayModel.load(tmp_path / "missing.json")
    (tmp_path / "foreign.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="not a blackout-play-model"):
        PlayModel.load(tmp_path / "foreign.json")
    data = json.loads(path.read_text())
    data["counts"] = data["counts"][:3]
    (tmp_path / "short.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="corrupt"):
        PlayModel.load(tmp_path / "short.json")
    with pytest.raises(ValueError, match="floor"):
        PlayModel(model.counts, floor=0)
    for smoothing in (0, float("inf"), float("nan")):
        data = json.loads(path.read_text())
        data["smoothing"] = smoothing
        (tmp_path / "smoothing.json").write_text(json.dumps(data))
        with pytest.raises(ValueError, match="smoothing"):
            PlayModel.load(tmp_path / "smoothing.json")
    data = json.loads(path.read_text())
    data["counts"][5][0] = data["counts"][5][1] = 1e308  # each finite, their sum not (the table was NaN)
    (tmp_path / "huge.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="corrupt"):
        PlayModel.load(tmp_path / "huge.json")


def test_the_shipped_model_loads():
    model = default_play_model()
    assert "ppo" in model.source and model.counts.sum() > 100_000
    offered = (np.arange(SITUATIONS)[:, None] % (1 << CLASSES)) >> np.arange(CLASSES) & 1
    assert (model.table[offered == 0] == 0).all() and (model.table[offered == 1] >= model.floor / 2).all()
    assert np.allclose(model.table[offered.any(axis=1)].sum(axis=1), 1)


def test_no_card_played_by_another_seat_means_unweighted_deals():
    game = BlackoutGame(Rules.preset("standard"), seed=3)
    bot = HeuristicBot()
    while game.phase == "bid":
        game.step(bot.act(game.view(game.current_player)))
    view = game.view(game.current_player)  # the first card of the hand
    belief = Belief(view, play=default_play_model())
    assert belief.events == [] and belief.weights([[0] * 4, [0] * 4]).tolist() == [1.0, 1.0]
    leader = view.player
    game.step(bot.act(view))  # the leader's card: the only card played is the viewer's own
    belief = Belief(game.view(leader), play=default_play_model())
    assert belief.events == [] and belief.weights([[0] * 4]).tolist() == [1.0]
    game.step(bot.act(game.view(game.current_player)))  # another seat's card weighs the deals
    assert len(Belief(game.view(leader), play=default_play_model()).events) == 2


@pytest.mark.parametrize("belief", ["play", "bids+play"])
def test_with_the_play_belief_the_decision_depends_on_the_view_only(belief):
    rules = Rules(num_players=4, hand_sizes=[6])
    rng = np.random.default_rng(4)
    for _, steps in played_games(rules, 3, seed=7):
        for _, _, view, _ in steps[5::6]:
            other = determinize(view, sample_hands(view, rng))
            assert other.view(view.player) == view
            first = ISMCTSBot(seed=3, simulations=60, belief=belief).act(view)
            second = ISMCTSBot(seed=3, simulations=60, belief=belief).act(other.view(view.player))
            assert first == second


def test_belief_fit_and_eval_commands_for_the_play(tmp_path, capsys):
    from blackout_training.cli import main

    out = tmp_path / "play.json"
    assert main(["belief", "fit", "--kind", "play", "--policy", "heuristic", "--rules", "standard", "--hands", "40",
                 "--out", str(out)]) == 0
    assert "cards played in 40 hands by heuristic" in capsys.readouterr().out
    assert PlayModel.load(out).source == "heuristic on standard"
    figures_file = tmp_path / "eval.json"
    assert main(["belief", "eval", "--belief", "bids+play", "--play-model", str(out), "--at", "play",
                 "--policy", "heuristic", "--rules", "standard", "--hands", "3", "--deals", "200",
                 "--json", str(figures_file)]) == 0
    printed = capsys.readouterr().out
    assert "at every card played" in printed and "weighted by bids+play" in printed
    figures = json.loads(figures_file.read_text())
    assert figures["belief"] == "bids+play" and figures["at"] == "play"
    assert figures["views"] > 0
    assert sum(row["cards"] for row in figures["by_tricks_played"]) == figures["cards"]
    assert 0 < figures["effective_deals"] <= 1
    assert main(["belief", "eval", "--belief", "play", "--at", "play", "--play-model", str(tmp_path / "missing.json"),
                 "--hands", "1"]) == 2
    assert "play model" in capsys.readouterr().err
    assert main(["belief", "eval", "--belief", "play", "--hands", "1"]) == 2  # --at bids: nothing played yet
    assert "no card is played" in capsys.readouterr().err
    assert main(["belief", "eval", "--belief", "bids", "--play-model", str(out), "--hands", "1"]) == 2
    assert "does not weigh by the play" in capsys.readouterr().err


def test_belief_fit_at_other_player_counts(tmp_path, capsys):
    from blackout_training.cli import main

    out = tmp_path / "play.json"
    assert main(["belief", "fit", "--kind", "play", "--policy", "heuristic", "--rules", "standard", "single-hand",
                 "--players", "3", "7", "--hands", "12", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "skipped single-hand at 7 players" in captured.err
    assert PlayModel.load(out).source == ("heuristic on standard (3 players), standard (7 players), "
                                          "single-hand (3 players)")
    assert main(["belief", "fit", "--kind", "play", "--rules", "single-hand", "--players", "7", "--hands", "4",
                 "--out", str(tmp_path / "none.json")]) == 2
    assert "no table of --rules seats that many" in capsys.readouterr().err
    assert main(["belief", "eval", "--players", "8", "--hands", "4"]) == 2
    assert "--players must be 3..7" in capsys.readouterr().err
    assert not (tmp_path / "none.json").exists()


def test_the_search_takes_a_play_model_file_only_with_a_play_belief(tmp_path):
    path = tmp_path / "play.json"
    PlayModel.fit(play_records(HeuristicBot(), Rules.preset("standard"), 10, seed=9), source="mine").save(path)
    assert ISMCTSBot(belief="play", play_model=str(path)).play_model.source == "mine"
    assert ISMCTSBot(belief="bids+play").play_model is default_play_model()
    for belief in ("uniform", "bids"):
        with pytest.raises(ValueError, match="play_model"):
            ISMCTSBot(belief=belief, play_model=str(path))
    with pytest.raises(ValueError, match="cannot be read"):
        ISMCTSBot(belief="play", play_model=str(tmp_path / "missing.json"))

