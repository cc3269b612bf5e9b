"""Every benchmark refuses a bad option before it measures anything (its figures would be lost after)."""

from __future__ import annotations

import pytest
from blackout_training.cli import main


@pytest.mark.parametrize("argv, words", [
    (["engine", "--games", "1", "--hands", "1", "--repeats", "1", "--players", "3", "9"], "--players 9: num_players"),
    (["endgame", "--positions", "2", "--tricks", "3", "11"], "--tricks 11: the rules' largest hand has 10 cards"),
    (["aec", "--steps", "50", "--repeats", "1", "--tricks", "14"], "--tricks 14: at 4 players OpenSpiel's oh_hell"),
    (["aec", "--steps", "50", "--repeats", "1", "--players", "8"], "num_players: must be in 3..7"),
    (["vector", "--games", "4", "--seconds", "nan"], "--seconds must be a positive finite number"),
    (["batched", "--games", "4", "--seconds", "1e-9"], "--seconds must be a positive finite number"),
    (["train", "--seconds", "0.001", "--engine-seconds", "nan"], "--engine-seconds must be a positive finite number"),
    (["dataset", "--policies", "heuristic", "bogus"], "unknown policy 'bogus'"),
    (["web", "--policies", "heuristic,bogus"], "--policies: unknown policy 'bogus'"),
    (["openspiel_ismcts", "--agents", "random", "--uct-c", "nan"], "--uct-c must be a finite number"),
    (["generalist", "--markdown", "/nonexistent-folder/m.md"], "--markdown '/nonexistent-folder/m.md'"),
    (["strength-curve", "--opponent", "bogus"], "--opponent: unknown policy 'bogus'"),
    (["ray", "--rllib-runners", "-1"], "--rllib-runners: 0 or more"),
    (["engine", "--seed", "-1"], "--seed must be 0 or more"),
    (["web", "--load-delay-ms", "-1"], "--load-delay-ms must be 0..5000, got -1"),
])
def test_a_bad_option_is_refused_before_anything_is_measured(argv, words, capsys):
    assert main(["bench", *argv]) == 2
    captured = capsys.readouterr()
    assert words in captured.err and "Traceback" not in captured.err
    assert "decisions/s" not in captured.out  # nothing was timed


def test_a_json_link_to_a_missing_folder_is_refused_before_measuring(tmp_path, capsys):
    link = tmp_path / "figures.json"
    link.symlink_to(tmp_path / "missing" / "figures.json")
    assert main(["bench", "engine", "--games", "1", "--hands", "1", "--repeats", "1", "--json", str(link)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_aec_at_6_players_runs_with_openspiel_skipped_and_its_default_tricks(capsys):
    assert main(["bench", "aec", "--players", "6", "--steps", "10", "--repeats", "1", "--skip", "openspiel", "gym",
                 "trivial", "env", "raw_env"]) == 0
    assert "6 players" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["--hidden", "0"], "model.hidden_sizes: must be positive widths"),
    (["--rules", "nosuch"], "unknown rules preset 'nosuch'"),
])
def test_bench_rllib_refuses_a_bad_option_before_ray_starts(argv, words, capsys, monkeypatch):
    from blackout_training.ppo import ray_cluster

    def started(*args, **kwargs):
        raise AssertionError("Ray was started before the options were checked")

    monkeypatch.setattr(ray_cluster, "import_rllib", started)
    assert main(["bench", "rllib", *argv]) == 2
    assert words in capsys.readouterr().err
