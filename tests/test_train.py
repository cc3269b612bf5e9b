"""``blackout train``: configs, run folders, and a seconds-long PPO run that trains, resumes and evaluates."""

from __future__ import annotations

import csv
import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from blackout_training.agents.policies import load_policy
from blackout_training.cli import main
from blackout_training.ppo.config import ConfigError, load_config
from blackout_training.ppo.vec_env import BatchedVecEnv, EngineVecEnv

from blackout_env import BlackoutGame, Rules

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "train" / "tiny.yaml"


def tiny_args(out_dir: Path, *extra: str) -> list[str]:
    return ["train", "--config", str(TINY), "--set", f"run.out_dir={out_dir}", *extra]


# ---------------------------------------------------------------------- configs
@pytest.mark.parametrize("name", ["tiny", "default", "long"])
def test_every_shipped_config_loads(name):
    config = load_config(ROOT / "configs" / "train" / f"{name}.yaml")
    assert config.env.num_envs > 0 and config.model.hidden_sizes


def test_overrides_set_nested_values_read_as_yaml():
    config = load_config(TINY, ["ppo.lr=3e-4", "model.hidden_sizes=[8, 8]", "ppo.target_kl=null", "run.name=x"])
    assert config.ppo.lr == 3e-4 and config.model.hidden_sizes == [8, 8]
    assert config.ppo.target_kl is None and config.run.name == "x"


def test_an_unknown_key_is_rejected_naming_the_key():
    with pytest.raises(ConfigError, match="unknown config key 'ppo.learning_rate'"):
        load_config(TINY, ["ppo.learning_rate=0.1"])
    with pytest.raises(ConfigError, match="unknown config key 'nonsense'"):
        load_config(TINY, ["nonsense.x=1"])


def test_an_unknown_key_in_the_yaml_file_is_rejected_naming_file_and_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("env:\n  num_env: 4\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: unknown config key 'env.num_env'"):
        load_config(path)


@pytest.mark.parametrize(
    "override, message",
    [
        ("env.num_envs=many", "env.num_envs: expected an integer"),
        ("ppo.lr=fast", "ppo.lr: expected a number"),
        ("run.progress_bar=3", "run.progress_bar: expected true or false"),
        ("model.hidden_sizes=64", "model.hidden_sizes: expected a list"),
        ("env.num_envs=0", "env.num_envs: must be positive"),
        ("opponents.mode=league", "opponents.mode: must be"),
        ("run.device=tpu", "run.device: must be"),
        ("env.reward=win", "env.reward: must be 'score' or 'zero_sum'"),
        ("ppo.lr", "expected KEY=VALUE"),
        ("model.arch=transformer", "model.arch: must be 'mlp' or 'cards'"),
        ("model.card_width=0", "model.card_width: must be positive"),
        ("opponents.learner_seats=2", "opponents.learner_seats: expected a list"),
    ],
)
def test_a_value_of_the_wrong_type_or_range_is_rejected_naming_the_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TINY, [override])


def test_a_missing_config_file_is_a_clear_cli_error(tmp_path, capsys):
    assert main(["train", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_the_shipped_configs_are_named_from_any_folder(tmp_path, capsys, monkeypatch):
    # An installed package trains outside a checkout: a shipped config by its name, `default` with no --config.
    from blackout_training.cli.train import DEFAULT_CONFIG
    from blackout_training.ppo.config import config_path

    monkeypatch.chdir(tmp_path)
    assert config_path("tiny") == config_path("tiny.yaml") == (ROOT / "configs" / "train" / "tiny.yaml").resolve()
    assert not Path(DEFAULT_CONFIG).exists() and config_path("default").read_bytes() == (ROOT / DEFAULT_CONFIG).read_bytes()
    assert main(["train", "--config", "tiny", "--set", "ppo.total_steps=16", "--set", "eval.every_updates=0",
                 "--set", "eval.final_deals=0"]) == 0
    assert (tmp_path / "runs" / "tiny" / "checkpoint.pt").is_file()
    assert main(["train", "--config", "tny"]) == 2
    err = capsys.readouterr().err
    assert "config file 'tny' does not exist (the shipped configs, by name: default, " in err and "tiny" in err


def test_a_config_that_is_a_folder_binary_or_broken_yaml_is_one_line_naming_it(tmp_path, capsys):
    binary, broken, twice = tmp_path / "binary.yaml", tmp_path / "broken.yaml", tmp_path / "twice.yaml"
    binary.write_bytes(b"\xf0\x28\x8c\x28 run:")
    broken.write_text("run: {name: x\nppo:\n")
    twice.write_text("run:\n  name: mine\nenv:\n  rules: short\nrun:\n  seed: 3\n")  # the first run: was dropped
    for path, message in [(tmp_path, "is a folder, not a YAML file of training settings"),
                          (binary, "is not UTF-8 text (byte 0"), (broken, "is not valid YAML: line 2, column 4: "),
                          (twice, "is not valid YAML: line 5, column 1: the key 'run' is given twice")]:
        assert main(["train", "--config", str(path)]) == 2
        err = capsys.readouterr().err
        assert f"config file {str(path)!r} {message}" in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ the env side
def test_the_batched_adapter_matches_the_engine_adapter_through_a_whole_match():
    rules = Rules.preset("short").replace(first_dealer=2)
    decks = np.array([BlackoutGame(rules, seed=seed).decks for seed in range(3)])
    engine, batched = EngineVecEnv(rules, 3), BatchedVecEnv(rules, 3)
    a, b = engine.reset(seed=0, decks=decks), batched.reset(seed=0, decks=decks)
    assert a.hand_over.sum() == b.hand_over.sum() == 0
    rng = np.random.default_rng(0)
    match_steps = rules.decisions_per_match
    hands_over = 0
    for step in range(match_steps):
        # After the last step a new match starts, dealt differently by each adapter: compare before it.
        assert np.array_equal(a.current_player, b.current_player) and np.array_equal(a.observation, b.observation)
        assert np.array_equal(a.action_mask, b.action_mask)
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in a.action_mask])
        a, b = engine.step(actions), batched.step(actions)
        assert np.array_equal(a.hand_over, b.hand_over), step
        assert np.array_equal(a.rewards, b.rewards) and np.array_equal(a.bid_made, b.bid_made), step
        hands_over += int(a.hand_over.sum())
    assert hands_over == 3 * rules.num_rounds


def test_a_game_batch_names_its_fields_as_the_batched_engines_step():
    from blackout_training.ppo.vec_env import GameBatch

    from blackout_env.batched import BatchStep

    shared = [name for name in GameBatch._fields if name in BatchStep._fields]
    assert shared == ["current_player", "observation", "action_mask", "rewards"]


# ----------------------------------------------------------------- a whole run
def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


@pytest.mark.slow
def test_tiny_run_trains_checkpoints_resumes_and_evaluates(tmp_path):
    out = tmp_path / "runs"
    # A real subprocess through the console entry point, as a user runs it.
    first = subprocess.run(
        [sys.executable, "-m", "blackout_training.cli", *tiny_args(out, "--set", "ppo.total_steps=700")],
        capture_output=True, text=True, cwd=ROOT,
    )
    assert first.returncode == 0, first.stderr
    run_dir = out / "tiny"
    for name in ["config.yaml", "checkpoint.pt", "metrics.csv", "eval.csv", "learning_curve.png", "final_eval.json"]:
        assert (run_dir / name).is_file(), name
    assert list((run_dir / "tensorboard").iterdir())
    saved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert saved["ppo"]["total_steps"] == 700 and saved["env"]["rules"] == "short"
    metrics = read_csv(run_dir / "metrics.csv")
    assert [int(r["update"]) for r in metrics] == list(range(1, len(metrics) + 1))
    assert all(float(r["steps_per_s"]) > 0 for r in metrics)

    # Resume with a larger step budget: the run continues from its last update, its rows kept.
    assert main(tiny_args(out, "--set", "ppo.total_steps=1400", "--resume")) == 0
    resumed = read_csv(run_dir / "metrics.csv")
    assert resumed[: len(metrics)] == metrics
    assert [int(r["update"]) for r in resumed] == list(range(1, len(resumed) + 1))
    assert int(resumed[-1]["global_step"]) >= 1400 > int(metrics[-1]["global_step"])

    # The trained policy plays as a bot named by its path, in a game and in the evaluation command.
    policy = load_policy(f"ppo:{run_dir / 'checkpoint.pt'}", "short", seed=0)
    game = BlackoutGame("short", seed=3)
    while not game.is_over:
        action = policy.act(game.view(game.current_player))
        assert action in game.legal_actions()
        game.step(action)


def test_an_existing_run_folder_is_refused_without_resume_or_force(tmp_path, capsys):
    out = tmp_path / "runs"
    args = tiny_args(out, "--set", "ppo.total_steps=300", "--set", "eval.final_deals=0", "--set", "eval.every_updates=0")
    assert main(args) == 0
    checkpoint = out / "tiny" / "checkpoint.pt"
    before = checkpoint.read_bytes()
    capsys.readouterr()
    assert main(args) == 2
    assert "already holds a run; pass --resume" in capsys.readouterr().err
    assert checkpoint.read_bytes() == before
    # A resume may not change what the run learns.
    assert main([*args, "--resume", "--set", "ppo.lr=0.5"]) == 2
    assert "ppo.lr was 0.001, now 0.5" in capsys.readouterr().err
    assert checkpoint.read_bytes() == before
    # --force starts over.
    assert main([*args, "--force"]) == 0


def test_a_moved_run_folder_resumes_where_it_lies(tmp_path):
    args = ["--set", "eval.final_deals=0", "--set", "eval.every_updates=0"]
    assert main(tiny_args(tmp_path / "runs", "--set", "ppo.total_steps=300", *args)) == 0
    (tmp_path / "runs" / "tiny").rename(tmp_path / "moved")
    moved = ["--set", f"run.out_dir={tmp_path}", "--set", "run.name=moved"]
    assert main(tiny_args(tmp_path / "runs", "--set", "ppo.total_steps=600", *args, *moved, "--resume")) == 0
    rows = read_csv(tmp_path / "moved" / "metrics.csv")
    assert int(rows[-1]["global_step"]) >= 600 and [int(r["update"]) for r in rows] == list(range(1, len(rows) + 1))
    saved = yaml.safe_load((tmp_path / "moved" / "config.yaml").read_text())
    assert (saved["run"]["out_dir"], saved["run"]["name"]) == (str(tmp_path), "moved")


def test_resume_needs_a_run_and_a_foreign_folder_is_never_deleted(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(tiny_args(out, "--resume")) == 2
    assert "nothing to resume" in capsys.readouterr().err
    foreign = out / "tiny"
    foreign.mkdir(parents=True)
    (foreign / "notes.txt").write_text("mine")
    assert main(tiny_args(out, "--force")) == 2
    assert "holds no run" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "mine"


def test_a_corrupt_checkpoint_stops_a_resume_with_a_clear_error(tmp_path, capsys):
    out = tmp_path / "runs"
    args = tiny_args(out, "--set", "ppo.total_steps=300", "--set", "eval.final_deals=0", "--set", "eval.every_updates=0")
    assert main(args) == 0
    (out / "tiny" / "checkpoint.pt").write_bytes(b"garbage")
    assert main([*args, "--resume"]) == 2
    assert "is not a torch checkpoint" in capsys.readouterr().err


def test_pool_training_with_snapshots_and_bot_opponents_runs(tmp_path):
    args = tiny_args(
        tmp_path, "--set", "ppo.total_steps=600", "--set", "eval.final_deals=0", "--set", "eval.every_updates=0",
        "--set", "opponents.mode=pool", "--set", "opponents.snapshot_every_updates=1",
        "--set", "opponents.bot_fraction=0.3", "--set", "opponents.bots=[random, heuristic]",
        "--set", "env.reward=zero_sum",
    )
    assert main(args) == 0
    assert read_csv(tmp_path / "tiny" / "metrics.csv")


def test_after_bots_only_after_only_the_learner_seat_is_training_data(tmp_path):
    args = tiny_args(
        tmp_path, "--set", "ppo.total_steps=200", "--set", "eval.final_deals=0", "--set", "eval.every_updates=0",
        "--set", "opponents.mode=pool", "--set", "opponents.bots_only_after=0.0", "--set", "opponents.bots=[random]",
        "--set", "opponents.latest_fraction=1.0",
    )
    assert main(args) == 0
    first = read_csv(tmp_path / "tiny" / "metrics.csv")[0]
    slots = 16 * 16  # tiny: 16 games x 16 steps per rollout
    # One seat in four acts against the bots: about a quarter of the decisions are the learner's.
    assert 0 < int(first["global_step"]) <= slots // 2


def test_learner_seats_sets_how_many_seats_of_a_bot_game_are_training_data(tmp_path):
    def learner_share(count: int) -> float:
        args = tiny_args(
            tmp_path / str(count), "--set", "ppo.total_steps=200", "--set", "eval.final_deals=0",
            "--set", "eval.every_updates=0", "--set", "opponents.mode=pool", "--set", "opponents.bots_only_after=0.0",
            "--set", "opponents.bots=[random]", "--set", f"opponents.learner_seats=[{count}]",
        )
        assert main(args) == 0
        first = read_csv(tmp_path / str(count) / "tiny" / "metrics.csv")[0]
        return int(first["global_step"]) / (16 * 16)  # tiny: 16 games x 16 steps per rollout

    one, three = learner_share(1), learner_share(3)
    # The learner holds 1 or 3 of the 4 seats: about a quarter, then about three quarters, of the decisions.
    assert 0.1 < one < 0.45 < 0.55 < three < 0.95


@pytest.mark.parametrize("seats, message", [("[4]", "1..3"), ("[0]", "at least 1"), ("[]", "at least one")])
def test_learner_seats_out_of_range_is_refused(tmp_path, capsys, seats, message):
    args = tiny_args(tmp_path, "--set", f"opponents.learner_seats={seats}")
    assert main(args) != 0
    err = capsys.readouterr().err
    assert "opponents.learner_seats" in err and message in err
    assert not (tmp_path / "tiny" / "checkpoint.pt").exists()


def test_the_readme_main_job_trains_the_default_config_within_the_laptop_budget():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- main-command -->", 1)[1].split("```", 2)[1]
    command = block.strip().splitlines()[1].strip()  # the line after ```bash
    assert "torch==2.13.0" in command, "torch is pinned where the main job installs it (the CPU build)"
    assert "blackout train --config configs/train/default.yaml" in command
    config = load_config(ROOT / "configs" / "train" / "default.yaml")
    assert config.run.threads == "auto" and 0 < config.run.time_limit_minutes <= 30
    assert config.env.rules == "standard" and config.eval.opponent == "heuristic"
    assert config.model.critic == "oracle"  # docs/training.md#time-to-strength
    reference = load_config(ROOT / "configs" / "train" / "default-view.yaml")  # the bench's reference: only the critic differs
    assert reference.model.critic == "view" and reference.run.name == "default-view"
    assert dataclasses.replace(reference.model, critic="oracle") == config.model
    assert (reference.ppo, reference.env, reference.eval) == (config.ppo, config.env, config.eval)


def test_the_ray_config_is_the_default_run_in_two_samplers():
    default = load_config(ROOT / "configs" / "train" / "default.yaml")
    ray = load_config(ROOT / "configs" / "train" / "ray.yaml")  # docs/rllib.md: "the default run with 2 samplers"
    assert ray.algo == "ppo_ray" and ray.ray.num_samplers * ray.env.num_envs == default.env.num_envs
    assert ray.model == default.model and (ray.ppo, ray.eval, ray.opponents) == (default.ppo, default.eval, default.opponents)
    assert dataclasses.replace(ray.env, num_envs=default.env.num_envs) == default.env
    assert dataclasses.replace(ray.run, name=default.run.name) == default.run


def test_init_checkpoint_of_another_network_is_refused_naming_both(tmp_path, capsys):
    first = tiny_args(tmp_path, "--set", "eval.final_deals=0", "--set", "eval.every_updates=0")
    assert main(first) == 0
    checkpoint = tmp_path / "tiny" / "checkpoint.pt"
    second = tiny_args(
        tmp_path, "--set", "run.name=other", "--set", "model.arch=mlp", "--set", f"model.init_checkpoint={checkpoint}"
    )
    assert main(second) != 0
    err = capsys.readouterr().err
    assert "model.init_checkpoint" in err and "'arch': 'cards'" in err and "'arch': 'mlp'" in err
    assert not (tmp_path / "other").exists(), "nothing is written: the same command, fixed, starts cleanly"
    missing = tiny_args(tmp_path, "--set", "run.name=other", "--set", f"model.init_checkpoint={tmp_path / 'nope.pt'}")
    assert main(missing) != 0
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "other").exists()
    same = tiny_args(
        tmp_path, "--set", "run.name=other", "--set", "eval.final_deals=0", "--set", "eval.every_updates=0",
        "--set", f"model.init_checkpoint={checkpoint}",
    )
    assert main(same) == 0
    assert "starting from the weights of" in capsys.readouterr().out


def test_the_rollout_keeps_sparse_observations_widening_its_buffers_and_clearing_stale_entries():
    import torch
    from blackout_training.agents.policy_net import SparseRows
    from blackout_training.ppo.sampler import _keep_sparse

    def rows(width: int, value: float) -> SparseRows:
        return SparseRows(torch.full((2, width), 7, dtype=torch.long), torch.full((2, width), value))

    buffers = _keep_sparse([], rows(3, 1.0), 0, steps=4)
    assert buffers[0].shape == (4, 2, 11) and buffers[1][0, :, :3].eq(1.0).all()
    buffers = _keep_sparse(buffers, rows(12, 2.0), 1, steps=4)  # wider than the buffers: widened, step 0 kept
    assert buffers[1].shape == (4, 2, 20)
    assert buffers[1][0, :, :3].eq(1.0).all() and buffers[1][0, :, 3:].eq(0).all()
    assert buffers[1][1, :, :12].eq(2.0).all()
    buffers = _keep_sparse(buffers, rows(2, 3.0), 1, steps=4)  # a narrower step overwrites the whole slot
    assert buffers[1][1, :, :2].eq(3.0).all() and buffers[1][1, :, 2:].eq(0).all()
    assert buffers[0][1, :, 2:].eq(0).all()


@pytest.mark.parametrize("tables", [[], ["short"]])
def test_reward_norm_table_divides_every_return_by_the_tables_hand_scale(tables):
    """Whole hands (gamma = lambda = 1, a rollout of one match): each return is the hand's reward, so the
    two runs (same seeds, same network) differ by exactly the table's hand scale."""
    import torch
    from blackout_training.agents.policy_net import make_model
    from blackout_training.ppo.config import load_config
    from blackout_training.ppo.returns import hand_scale
    from blackout_training.ppo.sampler import Sampler, make_env
    from blackout_training.ppo.tables import match_steps

    from blackout_env import Rules

    rules = Rules.preset("short")
    universal = ["env.observation=universal", f"env.tables={tables}", "env.table_groups=2"] if tables else []
    returns = {}
    for norm in ("none", "table"):
        config = load_config(TINY, [f"env.reward_norm={norm}", "ppo.gamma=1", "ppo.gae_lambda=1", "env.num_envs=4",
                                    f"ppo.rollout_steps={match_steps(rules)}", *universal])
        torch.manual_seed(0)
        model = make_model(rules, [8], "cards", 4, config.env.observation)
        sampler = Sampler(config, rules, make_env(config, rules), [], lambda model=model: model, np.random.default_rng(0),
                          torch.device("cpu"), reset_seed=3)
        torch.manual_seed(1)
        returns[norm] = sampler.collect(model, lambda: 0.0).returns
    assert returns["none"].abs().sum() > 0
    torch.testing.assert_close(returns["table"] * hand_scale(rules), returns["none"])


def test_the_logged_hands_are_the_seats_at_the_table_with_a_table_distribution(tmp_path):
    """A table distribution's games have seat columns for 7 players; the empty ones are not hands played."""
    import csv

    from blackout_training.ppo.trainer import train

    logged = []
    for name, tables in (("plain", []), ("tables", ["env.tables=[short]"])):
        config = load_config(TINY, [f"run.out_dir={tmp_path}", f"run.name={name}", "env.observation=universal", *tables,
                                    "ppo.total_steps=300", "eval.every_updates=0", "eval.final_deals=0"])
        with open(train(config, log=lambda *_: None).run_dir / "metrics.csv") as handle:
            row = next(csv.DictReader(handle))
        logged.append((row["hands"], row["hand_score"], row["bid_made_rate"]))
    assert logged[0] == logged[1]  # the same short 4-player games: the same hands, scores and bids made


def test_a_resume_may_change_where_ray_runs_but_not_what_is_learned(tmp_path):
    from blackout_training.ppo.run_folder import RunFolderError, check_run_folder, write_config

    config = load_config(TINY, [f"run.out_dir={tmp_path}"])
    (tmp_path / "tiny").mkdir()
    write_config(tmp_path / "tiny", config)
    moved = load_config(TINY, [f"run.out_dir={tmp_path}", "ray.address=10.0.0.6:6379", "rllib.address=10.0.0.6:6379",
                               "ray.num_cpus=8", "rllib.num_cpus=8"])
    assert check_run_folder(moved, resume=True, force=False).path == tmp_path / "tiny"
    with pytest.raises(RunFolderError, match="ray.num_samplers was"):
        check_run_folder(load_config(TINY, [f"run.out_dir={tmp_path}", "ray.num_samplers=3"]), resume=True, force=False)
