"""``blackout bench train``: the training figure is the mean over the run's updates, and the benchmark runs end to end."""

import json
from pathlib import Path

from blackout_training.bench.train import training_figures
from blackout_training.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_the_training_figure_is_all_decisions_over_the_time_of_all_updates(tmp_path):
    # Update 1: 1000 decisions at 500/s (2 s, rollout 1 s); update 2: 2000 decisions at 1000/s (2 s, rollout 0.5 s).
    metrics = tmp_path / "metrics.csv"
    metrics.write_text("update,global_step,steps_per_s,rollout_steps_per_s\n1,1000,500,1000\n2,3000,1000,4000\n")
    figures = training_figures(metrics)
    assert figures["updates"] == 2 and figures["decisions"] == 3000
    assert figures["decisions_per_second"] == 750.0  # 3000 decisions in 4 s, not the mean of 500 and 1000
    assert figures["rollout_decisions_per_second"] == 2000.0  # 3000 in 1.5 s
    assert figures["rollout_share"] == 0.375


def test_bench_train_runs_a_short_training_and_the_engine_and_reports_the_ratio(tmp_path, capsys):
    out_file = tmp_path / "train.json"
    code = main(["bench", "train", "--config", str(ROOT / "configs" / "train" / "tiny.yaml"), "--seconds", "3",
                 "--engine-seconds", "0.02", "--repeats", "1", "--games", "8", "--json", str(out_file)])
    assert code == 0
    figures = json.loads(out_file.read_text())
    assert figures["num_envs"] == 16 and set(figures["engine_decisions_per_second"]) == {"8", "16"}
    assert figures["training"]["decisions"] > 0
    for games in ("8", "16"):
        ratio = figures["training"]["decisions_per_second"] / figures["engine_decisions_per_second"][games]
        assert abs(figures["ratio"][games] - ratio) < 1e-12
    assert "training keeps" in capsys.readouterr().out


def test_bench_train_trains_beside_busy_processes_and_gives_the_ratio_to_the_first(tmp_path, capsys):
    out_file = tmp_path / "train.json"
    code = main(["bench", "train", "--config", str(ROOT / "configs" / "train" / "tiny.yaml"), "--seconds", "2",
                 "--engine-seconds", "0.02", "--repeats", "1", "--games", "8", "--set", "run.threads=auto",
                 "--busy-cores", "0", "1", "--json", str(out_file)])
    assert code == 0
    runs = json.loads(out_file.read_text())["busy_cores"]
    assert [run["busy_cores"] for run in runs] == [0, 1]
    assert all(run["decisions"] > 0 and run["threads"] and min(run["threads"]) >= 1 for run in runs)
    assert "ratio to the first" in capsys.readouterr().out


def test_bench_train_refuses_a_negative_number_of_busy_cores(capsys):
    assert main(["bench", "train", "--busy-cores", "-1"]) == 2
    assert "--busy-cores" in capsys.readouterr().err
