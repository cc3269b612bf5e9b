"""Duplicate-deal tournaments: exact rotations, honest figures, reproducible, clear errors before any game."""

import json

import numpy as np
import pytest
from blackout_baselines import HeuristicBot
from blackout_training.agents.policies import load_policy, register_policy
from blackout_training.cli import main
from blackout_training.evaluation.tournament import confidence_half_width, evaluate, rotations, seating_for


def test_each_seating_entry_plays_each_seat_exactly_once_per_deal():
    seating = ["a", "b", "c", "d", "e"]
    table = rotations(seating)
    assert len(table) == 5
    for entry in range(5):
        seats = [assignment.index(seating[entry]) for assignment in table]
        assert sorted(seats) == list(range(5))
    for seat in range(5):
        assert sorted(assignment[seat] for assignment in table) == seating


def test_fewer_policies_than_seats_fill_the_rest_with_the_last_one():
    assert seating_for(["agent", "heuristic"], 4) == ["agent", "heuristic", "heuristic", "heuristic"]
    assert seating_for(["a", "b", "c"], 3) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="4 policies .* only 3 seats"):
        seating_for(["a", "b", "c", "d"], 3)


def test_identical_policies_score_identically_on_every_deal():
    # Duplicate deals: four copies of a deterministic bot, each in every seat once, must tie exactly.
    result = evaluate({name: "heuristic" for name in "abcd"}, "short", deals=4, seed=3)
    per_deal = np.array([result.per_deal[name] for name in "abcd"])
    assert np.allclose(per_deal, per_deal[0])
    assert result.difference("a", "b")["mean"] == 0.0


def test_figures_add_up():
    result = evaluate(["heuristic", "random"], "short", deals=5, seed=1)
    rules = result.rules
    heuristic, random = result.stats("heuristic"), result.stats("random")
    hands_per_match = rules.num_rounds
    # One heuristic seat and three random seats, in each of the 4 rotations of 5 deals.
    assert heuristic.hands == 5 * 4 * 1 * hands_per_match and random.hands == 5 * 4 * 3 * hands_per_match
    assert heuristic.matches == 20 and random.matches == 60
    assert sum(heuristic.hands_by_hand_size.values()) == heuristic.hands
    assert set(heuristic.bid_made_by_hand_size) == set(rules.hand_sizes)
    assert 0 <= heuristic.bid_made_rate <= 1
    # Everyone's win shares sum to one per match.
    assert heuristic.match_win_rate * 20 + random.match_win_rate * 60 == pytest.approx(20)
    assert heuristic.mean_match_score == pytest.approx(heuristic.mean_score_per_hand * hands_per_match)
    pair = result.difference("heuristic", "random")
    diffs = np.subtract(result.per_deal["heuristic"], result.per_deal["random"])
    assert pair["mean"] == pytest.approx(diffs.mean())
    assert pair["low"] == pytest.approx(diffs.mean() - confidence_half_width(diffs))
    assert result.difference("random", "heuristic")["mean"] == pytest.approx(-pair["mean"])
    text = result.table()
    assert "heuristic - random" in text and "bid made by hand size" in text
    data = json.loads(json.dumps(result.to_dict()))
    assert data["policies"][0]["name"] == "heuristic" and len(data["per_deal_mean_score_per_hand"]["random"]) == 5


def test_results_are_reproducible_and_independent_of_workers():
    one = evaluate(["random", "heuristic"], "short", deals=4, seed=9)
    again = evaluate(["random", "heuristic"], "short", deals=4, seed=9)
    parallel = evaluate(["random", "heuristic"], "short", deals=4, seed=9, workers=2)
    other = evaluate(["random", "heuristic"], "short", deals=4, seed=10)
    assert one.to_dict() == again.to_dict() == parallel.to_dict()
    assert one.per_deal != other.per_deal


def test_no_more_processes_start_than_there_are_deals(monkeypatch):
    import multiprocessing.context

    started = []
    pool = multiprocessing.context.BaseContext.Pool

    def recorded(self, processes=None, *args, **kwargs):
        started.append(processes)
        assert processes <= 2, f"{processes} processes for 2 deals"
        return pool(self, processes, *args, **kwargs)

    monkeypatch.setattr(multiprocessing.context.BaseContext, "Pool", recorded)
    result = evaluate(["random", "heuristic"], "short", deals=2, seed=9, workers=1000)
    assert started == [2] and result.to_dict() == evaluate(["random", "heuristic"], "short", deals=2, seed=9).to_dict()


def test_single_hands_cycle_through_the_hand_sizes():
    result = evaluate(["heuristic", "random"], "short", deals=5, seed=0, hands=True)
    assert result.stats("heuristic").hands_by_hand_size == {1: 8, 2: 8, 3: 4}
    assert result.stats("heuristic").hands == 20  # one hand per rotation


def test_policy_objects_and_explicit_seating():
    result = evaluate({"mine": HeuristicBot(), "field": "random"}, "short", deals=2, seating=["mine", "mine", "field", "field"])
    assert result.stats("mine").hands == result.stats("field").hands


def test_the_confidence_interval_uses_the_spread_over_deals():
    assert confidence_half_width([1.0]) is None
    values = np.arange(100.0)
    assert confidence_half_width(values) == pytest.approx((1.96 + 2.4 / 99) * values.std(ddof=1) / 10)
    assert confidence_half_width([0.0, 2.0]) == pytest.approx(12.706 * np.sqrt(2) / np.sqrt(2))
    assert confidence_half_width(np.arange(11.0)) == pytest.approx(2.228 * np.arange(11.0).std(ddof=1) / np.sqrt(11))


def test_load_policy_knows_the_bots_and_their_options():
    assert load_policy("search:samples=3").samples == 3
    assert load_policy("heuristic").name == "heuristic"
    with pytest.raises(ValueError, match="unknown policy 'alphago'; known policies: random, heuristic, search"):
        load_policy("alphago")
    with pytest.raises(ValueError, match="key=value"):
        load_policy("search:64")
    with pytest.raises(ValueError, match="no name"):
        evaluate([object()], "short", deals=1)


def test_register_policy_adds_a_name():
    register_policy("greedy-test", lambda argument, rules, seed: HeuristicBot(seed))
    try:
        assert isinstance(load_policy("greedy-test"), HeuristicBot)
    finally:
        from blackout_training.agents.policies import LOADERS

        del LOADERS["greedy-test"]
    with pytest.raises(ValueError, match="without ':'"):
        register_policy("a:b", lambda *a: None)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--policies", "heuristic", "nosuchbot"], "unknown policy 'nosuchbot'"),
        (["--policies", "heuristic", "--players", "9"], "--players must be 3..7, got 9"),
        (["--policies", "heuristic", "--players", "2"], "--players must be 3..7, got 2"),
        (["--policies", "heuristic", "--deals", "0"], "--deals must be at least 1, got 0"),
        (["--policies", "a", "b", "c", "d"], "unknown policy 'a'"),
        (["--policies", "random", "heuristic", "search", "random:x=1", "heuristic:y=2"], "5 policies"),
        (["--policies", "random", "--rules", "no-such-preset"], "unknown rules preset 'no-such-preset'"),
        (["--policies", "random", "--workers", "-1"], "--workers"),
    ],
)
def test_bad_input_is_a_clear_error_before_any_game(arguments, message, capsys, tmp_path):
    out = tmp_path / "results"
    assert main(["eval", *arguments, "--out", str(out), "--no-progress"]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_an_invalid_rules_file_is_refused(capsys, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("num_players: 12\n")
    assert main(["eval", "--policies", "random", "--rules", str(bad), "--no-progress"]) == 2
    assert "num_players: must be in 3..7" in capsys.readouterr().err


def test_an_unwritable_out_folder_is_refused_before_playing(capsys, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert main(["eval", "--policies", "random", "--out", str(blocker / "sub"), "--no-progress"]) == 2
    assert "is not a writable folder" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["results.txt", "results.json"])
def test_a_game_log_named_as_a_result_file_is_refused_before_playing(capsys, tmp_path, name):
    out = tmp_path / "ev"
    assert main(["eval", "--policies", "random", "--rules", "short", "--deals", "1", "--out", str(out),
                 "--game-log", str(out / name), "--no-progress"]) == 2
    assert f"is --out's {name}: the results would overwrite the log" in capsys.readouterr().err
    assert not (out / name).exists()


def test_eval_command_prints_the_table_and_writes_json_and_plot(capsys, tmp_path):
    out = tmp_path / "results"
    code = main(["eval", "--policies", "heuristic", "random", "--players", "3", "--deals", "3", "--rules", "short",
                 "--out", str(out), "--seed", "4", "--no-progress"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "score/hand (95% CI)" in printed and "heuristic - random" in printed
    data = json.loads((out / "results.json").read_text())
    assert data["rules"]["num_players"] == 3 and data["deals"] == 3 and data["seating"] == ["heuristic", "random", "random"]
    assert (out / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "results.txt").read_text().startswith("3 deals x 3 rotations")


def test_a_missing_or_corrupt_checkpoint_is_refused_before_playing(capsys, tmp_path):
    out = tmp_path / "results"
    assert main(["eval", "--policies", f"ppo:{tmp_path / 'missing.pt'}", "heuristic", "--out", str(out), "--no-progress"]) == 2
    assert "missing.pt' does not exist" in capsys.readouterr().err
    corrupt = tmp_path / "corrupt.pt"
    corrupt.write_text("not a checkpoint")
    assert main(["eval", "--policies", f"ppo:{corrupt}", "heuristic", "--out", str(out), "--no-progress"]) == 2
    assert "corrupt.pt' is not a torch checkpoint" in capsys.readouterr().err
    assert not out.exists()


def test_games_are_played_with_torch_on_one_thread_and_its_setting_is_restored():
    torch = pytest.importorskip("torch")
    threads_seen = []

    class Recorder:
        name = "recorder"

        def act(self, view):
            threads_seen.append(torch.get_num_threads())
            return view.legal_actions[0]

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        evaluate({"recorder": Recorder(), "random": "random"}, rules="short", deals=1, seed=0)
        assert threads_seen and set(threads_seen) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


EVAL = ["eval", "--policies", "heuristic", "random", "--rules", "short", "--deals", "1", "--no-progress"]


def test_a_result_name_taken_by_a_folder_is_refused_before_playing_and_nothing_is_written(capsys, tmp_path):
    (tmp_path / "results.png").mkdir()
    assert main([*EVAL, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "results.png' is in the way" in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.png"]


def test_results_are_saved_before_they_are_printed_and_an_old_plot_goes_with_no_plot(capsys, tmp_path, monkeypatch):
    (tmp_path / "results.png").write_bytes(b"an earlier run's plot")

    class ClosedPipe:
        def write(self, text):
            raise BrokenPipeError

        def flush(self):
            pass

    monkeypatch.setattr("sys.stdout", ClosedPipe())  # `blackout eval ... | head -0`
    assert main([*EVAL, "--out", str(tmp_path), "--no-plot"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "results.txt"]


def test_a_game_log_is_a_regular_file_and_a_link_to_one_is_written_through(capsys, tmp_path):
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert main([*EVAL, "--no-plot", "--game-log", str(fifo)]) == 2
    assert "is not a regular file" in capsys.readouterr().err and fifo.is_fifo()
    target, link = tmp_path / "real.jsonl", tmp_path / "link.jsonl"
    target.write_text("old\n")
    link.symlink_to(target)
    assert main([*EVAL, "--no-plot", "--game-log", str(link)]) == 0
    assert link.is_symlink() and target.read_text().count("\n") == 4  # four rotations of one deal
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    assert main([*EVAL, "--no-plot", "--game-log", str(blocker / "g.jsonl")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
