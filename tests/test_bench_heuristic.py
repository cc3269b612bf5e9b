"""``blackout bench heuristic`` runs end to end at a tiny size and finds no different decision."""

import json

from blackout_training.bench import benchmark_names
from blackout_training.cli import main


def test_bench_heuristic_prints_and_saves_its_figures(tmp_path, capsys):
    assert "heuristic" in benchmark_names()
    out_file = tmp_path / "heuristic.json"
    code = main(["bench", "heuristic", "--rules", "short", "--games", "16", "--steps", "12", "--sample", "4",
                 "--json", str(out_file)])
    assert code == 0
    out = capsys.readouterr().out
    assert "BatchedHeuristic.act" in out and "HeuristicBot.act" in out
    figures = json.loads(out_file.read_text())
    assert figures["mismatches"] == 0 and figures["steps"] == 12
    assert figures["batched"] > 0 and figures["single"] > 0


def test_bench_heuristic_refuses_bad_sizes(capsys):
    assert main(["bench", "heuristic", "--games", "0"]) == 2
    assert "--games and --sample must be at least 1" in capsys.readouterr().err
