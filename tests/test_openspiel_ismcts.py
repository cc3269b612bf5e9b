"""The OpenSpiel cross-check: the card map is exact, the mirrored games agree, a tiny run completes."""

import json
import sys

import pytest
from blackout_training.bench import benchmark_names
from blackout_training.bench.openspiel_ismcts import main
from blackout_training.evaluation.openspiel import from_openspiel_action, to_openspiel_card

from blackout_env.game.cards import card_to_str


def test_the_card_map_is_a_bijection_that_keeps_rank_and_suit():
    mapped = [to_openspiel_card(card) for card in range(52)]
    assert sorted(mapped) == list(range(52))
    assert all(from_openspiel_action(to_openspiel_card(card)) == card for card in range(52))
    assert [from_openspiel_action(52 + k) for k in range(11)] == [52 + k for k in range(11)]


def test_the_benchmark_is_listed():
    assert "openspiel-ismcts" in benchmark_names()  # (blackout bench openspiel_ismcts works too)


def test_a_missing_openspiel_names_the_extra_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel now raises ImportError
    assert main(["--deals", "1"]) == 2
    assert ".[bench]" in capsys.readouterr().err


def test_the_card_map_matches_openspiel_card_names():
    pyspiel = pytest.importorskip("pyspiel")
    state = pyspiel.load_game("oh_hell", {"players": 4, "num_tricks_fixed": 10}).new_initial_state()
    state.apply_action(10)  # the number of tricks
    state.apply_action(0)  # the dealer: the next chance outcomes are the cards, named
    for card in range(52):
        ours = card_to_str(card).replace("10", "T")  # "AS", "TH": rank then suit
        theirs = state.action_to_string(to_openspiel_card(card))  # "SA", "HT": suit then rank
        assert theirs == ours[-1] + ours[:-1]


@pytest.mark.slow
def test_a_tiny_run_plays_mirrored_hands_and_matches(tmp_path, capsys):
    pytest.importorskip("pyspiel")
    out = tmp_path / "result.json"
    assert main(["--agents", "random", "ismcts:simulations=10", "--deals", "2", "--simulations", "5", "--json", str(out)]) == 0
    assert "scored by our rules" in capsys.readouterr().out
    rows = json.loads(out.read_text())["rows"]
    assert [r["deals"] for r in rows] == [2, 2]
    assert all(r["interval"][0] <= r["difference"] <= r["interval"][1] for r in rows)
    assert main(["--agents", "heuristic", "--deals", "1", "--simulations", "3", "--match"]) == 0


def test_the_speed_comparison_times_both_bots_on_the_same_decisions(tmp_path):
    pytest.importorskip("pyspiel")
    out = tmp_path / "speed.json"
    assert main(["--agents", "ismcts:simulations=20", "--speed", "1", "--simulations", "20", "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["speed"]
    # 40 cards and 4 bids, less the forced ones; how many are forced depends on the play (30 and 31 were seen,
    # and OpenSpiel's seeded IS-MCTS, which plays these hands, did not play the same from run to run), so only
    # the bounds are exact
    assert 10 <= row["decisions"] <= 44
    assert row["agent_cpu_ms_per_decision"] > 0 and row["openspiel_cpu_ms_per_decision"] > 0


def test_the_speed_comparison_times_a_network_on_one_torch_thread_as_the_games_play_it(monkeypatch):
    """Torch's default pool made ppo+search 2-3x slower per decision on a loaded 2-core machine; the games
    (evaluate's workers) act on one thread, so the timing must too, and the setting is restored after."""
    pyspiel = pytest.importorskip("pyspiel")
    torch = pytest.importorskip("torch")
    from blackout_training.evaluation import openspiel

    from blackout_env.agents.policies import load_policy

    threads_seen = []

    class Recording:
        def __init__(self, bot):
            self.bot = bot

        def act(self, view):
            threads_seen.append(torch.get_num_threads())
            return self.bot.act(view)

    monkeypatch.setattr(openspiel, "load_policy", lambda spec, rules, seed: Recording(load_policy("random", rules, seed)))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        openspiel.speed(pyspiel, "random", 1, 0, 5, 2.0)
        assert threads_seen and set(threads_seen) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


@pytest.mark.slow
def test_single_hands_are_the_first_hand_of_a_standard_match_so_ppo_plays_them(tmp_path):
    """The trained ppo (and ppo+search) play the standard rules: single hands are the match's 10-card first hand."""
    pytest.importorskip("pyspiel")
    pytest.importorskip("torch")
    out = tmp_path / "result.json"
    assert main(["--agents", "ppo", "ppo+search:simulations=10", "--deals", "1", "--simulations", "5",
                 "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["deals"] for r in rows] == [1, 1]


def test_bad_sizes_are_refused():
    pytest.importorskip("pyspiel")
    with pytest.raises(ValueError, match="--deals must be positive"):
        main(["--deals", "0"])


def test_a_bad_agent_or_output_path_is_refused_before_any_game(tmp_path):
    pytest.importorskip("pyspiel")
    with pytest.raises(ValueError, match="nosuchbot"):
        main(["--agents", "random", "nosuchbot", "--deals", "1"])
    with pytest.raises(ValueError, match="--json"):
        main(["--agents", "random", "--deals", "1", "--json", str(tmp_path / "missing" / "out.json")])


def test_openspiel_specs_parse_and_bad_ones_are_refused():
    from blackout_training.evaluation.openspiel import parse_openspiel_spec

    assert parse_openspiel_spec("ismcts:simulations=5") is None
    assert parse_openspiel_spec("openspiel_ismcts") == {
        "simulations": 500, "uct_c": 2.0, "rollout_seed": 0, "redeal": 1, "redeals": 1}
    assert parse_openspiel_spec("openspiel_ismcts:simulations=20,uct_c=0.5,rollout_seed=7,redeal=0") == {
        "simulations": 20, "uct_c": 0.5, "rollout_seed": 7, "redeal": 0, "redeals": 1}
    assert parse_openspiel_spec("openspiel_ismcts:simulations=200,redeals=4")["redeals"] == 4
    for bad in ("openspiel_ismcts:simulations=0", "openspiel_ismcts:uct_c=-1", "openspiel_ismcts:rollouts=2",
                "openspiel_ismcts:simulations=many", "openspiel_ismcts:redeal=2"):
        with pytest.raises(ValueError, match="openspiel_ismcts"):
            parse_openspiel_spec(bad)


@pytest.mark.slow
def test_openspiel_in_our_seat_and_our_policy_in_the_field_play_mirrored_hands(tmp_path):
    """The null test (OpenSpiel's IS-MCTS in the agent's seat) and the reverse check (--field) run."""
    pytest.importorskip("pyspiel")
    out = tmp_path / "null.json"
    assert main(["--agents", "openspiel_ismcts:simulations=5", "--deals", "2", "--simulations", "5",
                 "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["deals"] == 2 and row["field"].startswith("openspiel_ismcts")
    assert main(["--agents", "openspiel_ismcts:simulations=5", "--field", "heuristic", "--deals", "1",
                 "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["field"] == "heuristic"
    with pytest.raises(ValueError, match="--speed"):
        main(["--agents", "openspiel_ismcts", "--speed", "1"])


def test_our_views_carry_openspiel_information_states():
    """At every decision of mirrored hands, an OpenSpiel state built from our view alone (hidden cards drawn)
    has the mirrored state's information state for the player to act: our agents see what OpenSpiel's see."""
    pyspiel = pytest.importorskip("pyspiel")
    import numpy as np
    from blackout_training.evaluation.openspiel import (
        _start_openspiel_hand,
        openspiel_state_from_view,
        to_openspiel_action,
    )

    from blackout_env import BlackoutGame, Rules

    rules = Rules.preset("standard")
    rng = np.random.default_rng(0)
    checked = 0
    for deal in range(3):
        game = BlackoutGame(rules, seed=deal)
        state = _start_openspiel_hand(pyspiel, game)
        while game.round_index == 0:
            player = game.current_player
            rebuilt = openspiel_state_from_view(pyspiel, game.view(player), rng)
            assert rebuilt.information_state_string(player) == state.information_state_string(player)
            checked += 1
            action = int(rng.choice(game.legal_actions()))
            game.step(action)
            state.apply_action(to_openspiel_action(action))
    assert checked == 3 * 44


def test_the_openspiel_field_does_not_know_which_cards_are_out_of_play():
    """OpenSpiel's oh_hell resampling deals the other seats only cards truly dealt to them, so searching from the
    mirrored state its IS-MCTS knows the 11 cards out of play; the benchmark's field searches from a redealt state."""
    pyspiel = pytest.importorskip("pyspiel")
    import random

    from blackout_training.evaluation.openspiel import OpenSpielPlayer, _start_openspiel_hand, to_openspiel_card

    from blackout_env import BlackoutGame, Rules

    game = BlackoutGame(Rules.preset("standard"), seed=1)
    state = _start_openspiel_hand(pyspiel, game)
    me = game.current_player
    dealt = {to_openspiel_card(c) for s in range(4) if s != me for c in game.hands[s]}
    rng = random.Random(0)

    def share_of_dealt_cards(root) -> float:
        inside = total = 0
        for _ in range(60):
            history = root.resample_from_infostate(me, rng.random).history()[2:42]  # the 40 cards dealt
            others = {card for k, card in enumerate(history) if k % 4 != me}
            inside += len(others & dealt)
            total += len(others)
        return inside / total

    assert share_of_dealt_cards(state) == 1.0  # the leak, in OpenSpiel's resampling of the mirrored state
    player = OpenSpielPlayer(pyspiel, simulations=5, uct_c=2.0)
    player.seed(3)
    searched = player.search_state(state, game.view(me))
    assert searched.information_state_string(me) == state.information_state_string(me)
    assert share_of_dealt_cards(searched) < 0.9  # 30 of 41 unseen cards are dealt: about 0.73 when not known
    assert OpenSpielPlayer(pyspiel, 5, 2.0, redeal=False).search_state(state, game.view(me)) is state


def _decisions(pyspiel, seed: int, count: int):
    """The first ``count`` decisions with a choice of a mirrored 10-card hand, played by seeded random legal actions.

    The game and the state are yielded live (act on them before the next one)."""
    import numpy as np
    from blackout_training.evaluation.openspiel import _start_openspiel_hand, to_openspiel_action

    from blackout_env import BlackoutGame, Rules

    game = BlackoutGame(Rules.preset("standard"), seed=seed)
    state = _start_openspiel_hand(pyspiel, game)
    rng = np.random.default_rng(seed)
    while game.round_index == 0 and count > 0:
        legal = game.legal_actions()
        if len(legal) > 1:
            yield game, state
            count -= 1
        action = int(rng.choice(legal))
        game.step(action)
        state.apply_action(to_openspiel_action(action))


class _Recording:
    """pyspiel with its ISMCTSBot recording what it is built with and every state it searches."""

    def __init__(self, pyspiel):
        self.pyspiel, self.built, self.searched = pyspiel, [], []

    def __getattr__(self, name):
        return getattr(self.pyspiel, name)

    def RandomRolloutEvaluator(self, *args):  # noqa: N802 (pyspiel's name)
        self.built.append(("evaluator", args))
        return self.pyspiel.RandomRolloutEvaluator(*args)

    def ISMCTSBot(self, seed, evaluator, *args):  # noqa: N802
        self.built.append(("bot", seed, args))
        bot, searched = self.pyspiel.ISMCTSBot(seed, evaluator, *args), self.searched

        class Bot:
            def step(self, state):
                searched.append(state.history())
                return bot.step(state)

            def get_policy(self, state):
                searched.append(state.history())
                return bot.get_policy(state)

        return Bot()


def test_one_redeal_searches_and_plays_as_the_field_did_before_redeals_existed():
    """redeals=1 (the default) is the one-redeal field unchanged: the bot built with the same arguments and seeds,
    the same states searched, the same actions. OpenSpiel's C++ search breaks UCB ties in its hash map's order,
    which changes from run to run (even in one process), so actions are compared at 2 simulations, where the
    search expands one action chosen by its seeded shuffle and breaks no tie; at 40 only its inputs are."""
    pyspiel = pytest.importorskip("pyspiel")
    import numpy as np
    from blackout_training.evaluation.openspiel import OpenSpielPlayer, from_openspiel_action, openspiel_state_from_view

    def before(recording, simulations, seed):  # OpenSpielPlayer.seed and act_openspiel as they were
        rng = np.random.default_rng([seed, 7])
        bot = recording.ISMCTSBot(
            seed, recording.RandomRolloutEvaluator(1, seed % 2**31), 2.0, simulations, -1,
            pyspiel.ISMCTSFinalPolicyType.MAX_VISIT_COUNT, False, False,
        )
        return lambda state, view: from_openspiel_action(bot.step(openspiel_state_from_view(pyspiel, view, rng)))

    for simulations in (2, 40):
        old, new = _Recording(pyspiel), _Recording(pyspiel)
        act_before = before(old, simulations, 11)
        player = OpenSpielPlayer(new, simulations, 2.0)
        player.seed(11)
        actions_before, actions_now = [], []
        for game, state in _decisions(pyspiel, 4, 12):
            view = game.view(game.current_player)
            actions_before.append(act_before(state, view))
            actions_now.append(player.act_openspiel(state, view))
        assert new.built == old.built and new.searched == old.searched and len(new.searched) == 12
        if simulations == 2:
            assert actions_now == actions_before


def test_several_redeals_search_each_redealt_state_and_reproduce_under_a_seed():
    """redeals=K: K states redealt from the view per decision, each searched with simulations // K; the same seed
    draws the same states (and, at 2 simulations a search, where OpenSpiel's search is deterministic, plays the
    same actions); every action is legal."""
    pyspiel = pytest.importorskip("pyspiel")
    from blackout_training.evaluation.openspiel import OpenSpielPlayer

    for simulations, redeals in ((6, 3), (63, 3)):
        runs = []
        for _ in range(2):
            recording = _Recording(pyspiel)
            player = OpenSpielPlayer(recording, simulations, 2.0, redeals=redeals)
            player.seed(5)
            actions = []
            for game, state in _decisions(pyspiel, 2, 10):
                action = player.act_openspiel(state, game.view(game.current_player))
                assert action in game.legal_actions()
                actions.append(action)
            runs.append((recording, actions))
        (first, first_actions), (second, second_actions) = runs
        (bot,) = [b for b in first.built if b[0] == "bot"]
        assert bot[2][1] == simulations // redeals  # simulations per search
        assert bot[2][3] == pyspiel.ISMCTSFinalPolicyType.NORMALIZED_VISIT_COUNT
        assert len(first.searched) == redeals * 10
        assert first.searched == second.searched and first.built == second.built
        if simulations // redeals == 2:
            assert first_actions == second_actions


def test_several_redeals_play_the_largest_sum_of_visit_shares_ties_to_the_lowest_action():
    """The searches' shares are summed (not voted): an action second in one search but far ahead in the other wins;
    equal sums go to the lowest action in our numbering."""
    pyspiel = pytest.importorskip("pyspiel")
    from blackout_training.evaluation.openspiel import OpenSpielPlayer, to_openspiel_action

    game, state = next(_decisions(pyspiel, 3, 1))  # the first bid
    low, high = game.legal_actions()[:2]

    class Fixed:
        def __init__(self, policies):
            self.policies = iter(policies)

        def get_policy(self, searched):
            return [(to_openspiel_action(action), share) for action, share in next(self.policies)]

    player = OpenSpielPlayer(pyspiel, 20, 2.0, redeals=2)
    player.seed(0)
    view = game.view(game.current_player)
    player.bot = Fixed([[(low, 0.6), (high, 0.4)], [(low, 0.2), (high, 0.8)]])
    assert player.act_openspiel(state, view) == high  # 0.8 against 1.2, though low led the first search
    player.bot = Fixed([[(high, 0.7), (low, 0.3)], [(high, 0.3), (low, 0.7)]])
    assert player.act_openspiel(state, view) == low  # 1.0 each: the lower action


def test_redeals_or_simulations_per_search_below_their_floor_are_refused_before_anything_runs(monkeypatch):
    """K below 1, or S = simulations // K below 2 (OpenSpiel's search spends its first simulation expanding the
    root), is a ValueError naming the option, raised before OpenSpiel is even looked for."""
    from blackout_training.evaluation.openspiel import OpenSpielPlayer, parse_openspiel_spec, simulations_per_search

    monkeypatch.setitem(sys.modules, "pyspiel", None)  # no OpenSpiel: the checks come first
    with pytest.raises(ValueError, match="--redeals must be positive, got 0"):
        main(["--redeals", "0", "--deals", "1"])
    with pytest.raises(ValueError, match="--simulations 7 over --redeals 4 leaves 1 simulation"):
        main(["--simulations", "7", "--redeals", "4", "--deals", "1"])
    with pytest.raises(ValueError, match="--redeals"):
        main(["--simulations", "8", "--redeals", "4", "--redeal", "0", "--deals", "1"])
    with pytest.raises(ValueError, match="--redeals"):
        main(["--simulations", "8", "--redeals", "4", "--field", "heuristic", "--deals", "1"])
    assert main(["--simulations", "8", "--redeals", "4", "--deals", "1"]) == 2  # good sizes: on to the missing extra
    assert simulations_per_search(200, 4) == 50 and simulations_per_search(203, 4) == 50
    with pytest.raises(ValueError, match="redeals must be a whole number >= 1"):
        simulations_per_search(10, 0)
    with pytest.raises(ValueError, match="simulations 1 over redeals 1 leaves 1"):
        OpenSpielPlayer(None, 1, 2.0)
    with pytest.raises(ValueError, match="redeal=1"):
        OpenSpielPlayer(None, 20, 2.0, redeal=False, redeals=2)
    for bad, named in (("redeals=0", "redeals must be"), ("simulations=7,redeals=4", "simulations 7 over redeals 4"),
                       ("redeals=2,redeal=0", "redeal=1")):
        with pytest.raises(ValueError, match=named):
            parse_openspiel_spec(f"openspiel_ismcts:{bad}")


@pytest.mark.slow
def test_the_several_redeal_field_meets_the_one_redeal_field_on_duplicate_deals(tmp_path, capsys):
    """K redeals in our seat against the one-redeal field, and the reverse, at equal total simulations."""
    pytest.importorskip("pyspiel")
    out = tmp_path / "fields.json"
    assert main(["--agents", "openspiel_ismcts:simulations=8,redeals=2", "--simulations", "8", "--deals", "1",
                 "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["field"] == "openspiel_ismcts:simulations=8,uct_c=2,redeal=1"
    assert main(["--agents", "openspiel_ismcts:simulations=8", "--simulations", "8", "--redeals", "2", "--deals", "1",
                 "--json", str(out)]) == 0
    assert "8 simulations: 2 redeals x 4" in capsys.readouterr().out
    figures = json.loads(out.read_text())
    assert figures["redeals"] == 2 and figures["rows"][0]["field"].endswith(",redeals=2")


SITTINGS = [f"docs/data/openspiel-redeals4-2000-s{seed}.json" for seed in (21, 22, 23, 24)]


def test_pooled_sittings_are_one_figure_per_deal_and_need_no_openspiel(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    assert main(["--pool", *SITTINGS, "--json", str(tmp_path / "pooled.json")]) == 0
    assert "ppo+search                     200" in capsys.readouterr().out
    pooled = json.loads((tmp_path / "pooled.json").read_text())
    row, = pooled["rows"]
    parts = [json.loads(Path(name).read_text())["rows"][0] for name in SITTINGS]
    assert row["per_deal_differences"] == [d for part in parts for d in part["per_deal_differences"]]
    assert row["deals"] == 200 and row["difference"] == pytest.approx(sum(row["per_deal_differences"]) / 200)
    assert row["interval"][0] < row["difference"] < row["interval"][1]
    assert row["agent_bid_made_rate"] == pytest.approx(sum(p["agent_bid_made_rate"] for p in parts) / 4)
    assert pooled["files"] == SITTINGS and pooled["redeals"] == 4 and pooled["simulations"] == 2000
    assert json.loads(Path("docs/data/openspiel-redeals4-2000-pooled.json").read_text()) == pooled | {"files": SITTINGS}


def test_pooled_sittings_against_a_named_field_say_so(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    sittings = [f"docs/data/deep-seed{seed}.json" for seed in (14, 15, 16, 17)]
    assert main(["--pool", *sittings, "--json", str(tmp_path / "pooled.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("vs ppo+search in the other seats") and "OpenSpiel" not in out
    assert "ppo+search-deep                800" in out
    assert json.loads(Path("docs/data/deep-vs-ppo-search-pooled.json").read_text()) == json.loads(
        (tmp_path / "pooled.json").read_text())


def test_sittings_that_are_not_one_measurement_are_refused(tmp_path, monkeypatch):
    from pathlib import Path

    monkeypatch.chdir(Path(__file__).resolve().parents[1])
    other = json.loads(Path(SITTINGS[0]).read_text()) | {"simulations": 500}
    (tmp_path / "other.json").write_text(json.dumps(other))
    (tmp_path / "broken.json").write_text("{")
    (tmp_path / "speed.json").write_text(json.dumps({"simulations": 2000, "speed": []}))
    for files, message in [
        ([SITTINGS[0], str(tmp_path / "other.json")], "simulations is 500"),
        ([SITTINGS[0], SITTINGS[0]], "the same deals as"),
        ([SITTINGS[0], str(tmp_path / "broken.json")], "cannot be read as JSON"),
        ([SITTINGS[0], str(tmp_path / "speed.json")], "not the figures of a game run"),
        ([SITTINGS[0]], "at least two sittings"),
    ]:
        with pytest.raises(ValueError, match=message):
            main(["--pool", *files, "--json", str(tmp_path / "out.json")])
        assert not (tmp_path / "out.json").exists()
