"""``blackout bench engine`` runs end to end at a tiny size (figures are not checked: no timed tests)."""

import json

import pytest
from blackout_training.bench import benchmark_names
from blackout_training.bench.engine import openspiel_available, openspiel_hands, play_matches
from blackout_training.cli import main

from blackout_env import Rules


def test_bench_engine_prints_and_saves_its_figures(tmp_path, capsys):
    out_file = tmp_path / "engine.json"
    code = main(["bench", "engine", "--games", "2", "--hands", "3", "--repeats", "1", "--players", "3", "5",
                 "--json", str(out_file)])
    assert code == 0
    out = capsys.readouterr().out
    assert "3 players:" in out and "5 players:" in out and "Single 10-card hands" in out
    figures = json.loads(out_file.read_text())
    assert set(figures["matches"]) == {"3", "5"}
    assert figures["matches"]["3"]["decisions_per_match"] == 55 * 3 + 10 * 3
    assert figures["single_hands"]["blackout_engine"] > 0
    if openspiel_available():
        assert figures["single_hands"]["ratio"] > 0 and "OpenSpiel oh_hell" in out


def test_bench_engine_skips_openspiel_when_asked(capsys):
    assert main(["bench", "engine", "--games", "1", "--hands", "2", "--repeats", "1", "--players", "4",
                 "--no-openspiel"]) == 0
    assert "skipped: --no-openspiel" in capsys.readouterr().out


def test_bench_rejects_unknown_benchmarks_and_bad_sizes(capsys):
    with pytest.raises(SystemExit):
        main(["bench", "no-such-benchmark"])
    assert "invalid choice" in capsys.readouterr().err
    assert main(["bench", "engine", "--games", "0"]) == 2
    assert "--games, --hands and --repeats must be at least 1" in capsys.readouterr().err


def test_benchmarks_are_found_by_module_name():
    assert "engine" in benchmark_names()


def test_both_loops_count_player_decisions_only():
    # A 10-card hand for 4 players: 4 bids and 40 cards.
    assert play_matches(Rules(num_players=4, hand_sizes=[10]), games=2, seed=0) == 88
    if openspiel_available():
        assert openspiel_hands(players=4, tricks=10, hands=2, seed=0) == 88
