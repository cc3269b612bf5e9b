"""Inferred hidden cards from the bids: the bid model, the weighted determinizations, the search option."""

import json
import random
from pathlib import Path

import numpy as np
import pytest
from blackout_baselines import ISMCTSBot, make_bot
from blackout_baselines.belief import MAX_TRICKS, Belief, BidModel, bid_records, default_model, likely_winners
from blackout_baselines.deals import DealSampler, sample_hands
from blackout_baselines.heuristic import HeuristicBot
from blackout_baselines.search import determinize

from blackout_env import BlackoutGame, Rules


def bid_views(rules: Rules, count: int, seed: int = 0):
    """The view of the first seat to play in each of ``count`` hands once every bid is in (heuristic bids)."""
    bot = HeuristicBot()
    for index in range(count):
        game = BlackoutGame(rules, seed=seed * 1000 + index)
        while game.phase == "bid":
            game.step(bot.act(game.view(game.current_player)))
        yield game.view(game.current_player)


def bid_distance(view, seats, drawn) -> float:
    """The mean distance between the likely winners the deals give ``seats`` and their bids."""
    hands = np.array(drawn, dtype=np.uint64)
    return float(np.mean([np.abs(likely_winners(hands[:, s], view.trump) - view.bids[s]).mean() for s in seats]))


def test_likely_winners_count_top_side_cards_high_trumps_and_jokers():
    ace_of_spades, king_of_hearts, two_of_clubs = 13 * 2 + 12, 13 * 3 + 11, 0
    hand = (1 << ace_of_spades) | (1 << king_of_hearts) | (1 << two_of_clubs)
    assert likely_winners([hand], None).tolist() == [1]  # 0.85 + 0.45 rounds to 1
    trumps = sum(1 << (13 * 1 + rank) for rank in (12, 11, 10, 9))  # A K Q J of diamonds
    assert likely_winners([trumps], 1).tolist() == [4]  # as trump
    assert likely_winners([trumps], 0).tolist() == [1]  # as a side suit: 0.85 + 0.45
    assert likely_winners([3 << 52], 0).tolist() == [2]  # two jokers


def test_likely_winners_are_the_greedy_playouts_bid_before_its_bounds():
    from blackout_baselines._ismcts_kernels import SIDE_TRICKS, TRUMP_TRICKS, greedy_bid

    rng = np.random.default_rng(0)
    for _ in range(200):
        cards = rng.choice(54, size=int(rng.integers(1, 15)), replace=False)
        hand = int(sum(1 << int(c) for c in cards))
        trump = int(rng.integers(-1, 4))
        expected = greedy_bid(np.uint64(hand), trump, SIDE_TRICKS, TRUMP_TRICKS)
        assert likely_winners([hand], None if trump < 0 else trump)[0] == expected


def test_a_model_fitted_to_one_rule_gives_that_rule_nearly_all_its_chance():
    records = [(5, w, min(w, 5)) for w in range(6) for _ in range(200)]
    model = BidModel.fit(records, smoothing=1.0)
    for winners in range(6):
        chances = model.probabilities(5, np.array([winners]), winners)
        assert chances[0] > 0.95
    assert np.allclose(model.table[5].sum(axis=1), 1.0)
    assert (model.table[5, :, 6:] == 0).all()  # no bid above the hand size
    assert (model.table[5, :, :6] > 0).all()  # and every other bid keeps some chance


def test_a_model_is_saved_and_loaded_and_bad_files_are_refused(tmp_path):
    model = BidModel.fit([(3, 1, 1), (3, 2, 1), (7, 3, 4)], source="test")
    path = tmp_path / "model.json"
    model.save(path)
    again = BidModel.load(path)
    assert np.array_equal(again.table, model.table) and again.source == "test"
    bad = tmp_path / "bad.json"
    for text, message in [("{", "cannot be read"), (json.dumps({"format": "x"}), "not a blackout-bid-model"),
                          (json.dumps({"format": "blackout-bid-model", "version": 1, "counts": [[1]],
                                       "smoothing": 1, "floor": 0.001}), "corrupt|shape")]:
        bad.write_text(text)
        with pytest.raises(ValueError, match=message):
            BidModel.load(bad)
    with pytest.raises(ValueError, match="cannot be read"):
        BidModel.load(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="outside"):
        BidModel.fit([(3, 1, 4)])


def test_the_shipped_model_loads():
    model = default_model()
    assert model.table.shape == (MAX_TRICKS + 1,) * 3 and model.counts.sum() > 10_000
    assert "ppo" in model.source


def test_weighted_deals_are_consistent_with_the_view_and_favour_the_bids():
    rules = Rules.preset("standard")
    records = bid_records(HeuristicBot(), rules, 300, seed=5)
    model = BidModel.fit(records)
    np_rng, rng = np.random.default_rng(0), random.Random(0)
    closer = 0
    for view in bid_views(rules, 8, seed=2):
        sampler = DealSampler(view)
        belief = Belief(view, model)
        deals = belief.draw(sampler, 200, np_rng, rng)
        uniform = sampler.draw(200, np_rng, rng)
        for deal in deals[:20]:
            other = determinize(view, [sorted(c for c in range(rules.num_cards) if deal[s] >> c & 1)
                                       for s in range(rules.num_players)])
            assert other.view(view.player) == view
        # the deals' likely winners sit nearer the bids than uniform deals' do
        closer += bid_distance(view, belief.seats, deals) < bid_distance(view, belief.seats, uniform)
    assert closer >= 7


def test_no_bid_made_means_uniform_deals():
    game = BlackoutGame(Rules.preset("standard"), seed=3)
    view = game.view(game.current_player)  # the first bidder: nobody has bid
    belief = Belief(view, default_model())
    assert belief.seats == [] and belief.weights([[0] * 4, [0] * 4]).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("belief", ["nonsense", "model.yaml", 3])
def test_a_bad_belief_is_refused(belief):
    with pytest.raises(ValueError, match="belief"):
        ISMCTSBot(belief=belief)
    with pytest.raises(ValueError, match="belief"):
        make_bot("ismcts", belief=belief)


def test_a_belief_model_file_that_does_not_exist_is_refused(tmp_path):
    with pytest.raises(ValueError, match="cannot be read"):
        ISMCTSBot(belief=str(tmp_path / "none.json"))


def test_with_the_belief_the_decision_depends_on_the_view_only():
    rules = Rules(num_players=4, hand_sizes=[6])
    rng = np.random.default_rng(4)
    for view in bid_views(rules, 5, seed=6):
        other = determinize(view, sample_hands(view, rng))
        assert other.view(view.player) == view
        first = ISMCTSBot(seed=3, simulations=60, belief="bids").act(view)
        second = ISMCTSBot(seed=3, simulations=60, belief="bids").act(other.view(view.player))
        assert first == second


def test_belief_fit_and_eval_commands(tmp_path, capsys):
    from blackout_training.cli import main

    out = tmp_path / "model.json"
    assert main(["belief", "fit", "--policy", "heuristic", "--rules", "standard", "--hands", "200",
                 "--out", str(out)]) == 0
    assert "bids of 200 hands by heuristic" in capsys.readouterr().out
    figures_file = tmp_path / "eval.json"
    assert main(["belief", "eval", "--model", str(out), "--policy", "heuristic", "--rules", "standard",
                 "--hands", "12", "--deals", "300", "--json", str(figures_file)]) == 0
    figures = json.loads(figures_file.read_text())
    assert figures["views"] == 48 and figures["cards"] > 0
    assert 0 < figures["log_loss_model"] and 0 < figures["log_loss_uniform"]
    assert sum(row["cards"] for row in figures["calibration"]) > figures["cards"]
    assert main(["belief", "fit", "--hands", "10", "--out", str(tmp_path / "model.txt")]) == 2
    assert "ends in .json" in capsys.readouterr().err
    assert main(["belief", "eval", "--model", str(tmp_path / "missing.json"), "--hands", "1"]) == 2
    assert "cannot be read" in capsys.readouterr().err


def test_the_search_takes_a_bid_model_file_only_with_a_bids_belief(tmp_path):
    path = tmp_path / "bids.json"
    BidModel.fit(bid_records(HeuristicBot(), Rules.preset("standard"), 10, seed=9), source="mine").save(path)
    assert ISMCTSBot(belief="bids+play", bid_model=str(path)).bid_model.source == "mine"
    assert ISMCTSBot(belief="bids", bid_model=str(path)).bid_model.source == "mine"
    assert ISMCTSBot(belief="bids+play").bid_model is default_model()
    for belief in ("uniform", "play"):
        with pytest.raises(ValueError, match="bid_model"):
            ISMCTSBot(belief=belief, bid_model=str(path))
    with pytest.raises(ValueError, match="bid_model: bid model .*cannot be read"):
        ISMCTSBot(belief="bids", bid_model=str(tmp_path / "missing.json"))


@pytest.mark.parametrize("change", [{"smoothing": float("inf")}, {"big": 1e308}, {"nested": True}])
def test_a_bid_model_file_that_cannot_give_probabilities_is_refused_when_it_loads(tmp_path, change):
    import json

    from blackout_baselines.belief import DEFAULT_BID_MODEL, BidModel

    data = json.loads(Path(DEFAULT_BID_MODEL).read_text())
    path = tmp_path / "model.json"
    if "big" in change:
        data["counts"][5][2][1] = data["counts"][5][2][2] = 1e308  # each finite, their sum not
    if "smoothing" in change:
        data["smoothing"] = change["smoothing"]
    text = "[" * 100_000 + "]" * 100_000 if "nested" in change else json.dumps(data)
    path.write_text(text)
    with pytest.raises(ValueError, match="bid model .*(corrupt|cannot be read)"):
        BidModel.load(path)
