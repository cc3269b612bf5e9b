"""``blackout bench engine`` runs end to end at a tiny size (figures are not checked: no timed tests)."""

import json
import subprocess
import sys

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
    assert "--games must be positive, got 0" in capsys.readouterr().err


def test_benchmarks_are_found_by_module_name():
    assert "engine" in benchmark_names()


def test_both_loops_count_player_decisions_only():
    # A 10-card hand for 4 players: 4 bids and 40 cards.
    assert play_matches(Rules(num_players=4, hand_sizes=[10]), games=2, seed=0) == 88
    if openspiel_available():
        assert openspiel_hands(players=4, tricks=10, hands=2, seed=0) == 88


def test_bench_without_a_name_lists_the_benchmarks(capsys):
    assert main(["bench"]) == 2
    err = capsys.readouterr().err
    assert "name a benchmark: " + ", ".join(benchmark_names()) in err and "required" not in err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bench", "aec", "--steps", "0"], "--steps must be positive, got 0"),
        (["bench", "aec", "--repeats", "0"], "--repeats must be positive, got 0"),
        (["bench", "batched", "--seconds", "0"], "--seconds must be a positive finite number (at least 0.001), got 0.0"),
        (["bench", "batched", "--games", "8", "0"], "--games must be positive, got 0"),
    ],
)
def test_bench_refuses_empty_measurements_naming_the_option(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.skipif(not openspiel_available(), reason="needs open_spiel (bench extra)"))
        if name == "openspiel-ismcts" else name  # it asks for OpenSpiel first
        for name in benchmark_names()
    ],
)
def test_bench_checks_its_json_path_before_measuring(name, tmp_path, capsys):
    assert main(["bench", name, "--json", "/proc/no-such-folder/x.json"]) == 2
    captured = capsys.readouterr()
    assert "--json '/proc/no-such-folder/x.json'" in captured.err
    assert captured.out == ""  # refused before the first measurement
    assert main(["bench", name, "--json", str(tmp_path)]) == 2
    assert "is not a file" in capsys.readouterr().err


def test_bench_batched_without_openspiel_prints_no_ratio(capsys):
    argv = ["bench", "batched", "--games", "2", "--scenarios", "hands", "--seconds", "0.01", "--repeats", "1",
            "--no-openspiel"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "nan" not in out
    row = [line for line in out.splitlines() if line.startswith("hands ")][0]
    assert row.split()[4] == "-"  # scenario, games, observations, decisions/s, x OpenSpiel


def test_a_benchmark_run_as_a_module_names_itself_as_blackout_bench_does():
    for flags in ([], ["-OO"]):  # -OO: no docstrings, so no description, and still no crash
        result = subprocess.run([sys.executable, *flags, "-m", "blackout_training.bench.engine", "--help"],
                                capture_output=True, text=True, check=True)
        assert result.stdout.startswith("usage: blackout bench engine ")
