"""Starting a training run: every value checked, naming its key, before anything is written; resume and stale files."""

from __future__ import annotations

from pathlib import Path

import pytest
from blackout_training.cli import main
from blackout_training.ppo.config import ConfigError, TrainConfig, config_from_dict, load_config
from blackout_training.ppo.run_folder import write_config

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "train" / "tiny.yaml"
# One short update and no evaluation: a start that gets going finishes in a few seconds.
QUICK = ["ppo.total_steps=16", "eval.every_updates=0", "eval.final_deals=0"]


def train_args(out_dir: Path, *overrides: str) -> list[str]:
    args = ["train", "--config", str(TINY), "--set", f"run.out_dir={out_dir}"]
    for override in (*QUICK, *overrides):
        args += ["--set", override]
    return args


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "override, message",
    [
        ("env.reward_scale=.nan", "env.reward_scale: must be a finite number"),
        ("env.reward_scale=.inf", "env.reward_scale: must be a finite number"),
        ("env.reward_scale=0", "env.reward_scale: must be a positive number"),
        ("env.reward_norm=rules", "env.reward_norm: must be 'none' or 'table', got 'rules'"),
        ("algo=rllib_ppo env.reward_norm=table", "env.reward_norm: 'table' trains with algo: ppo or ppo_ray"),
        ("ppo.lr=.inf", "ppo.lr: must be a finite number"),
        ("ppo.lr=inf", "ppo.lr: must be a finite number"),
        ("ppo.lr=1e300", r"ppo.lr: must be in \(0, 1\]"),
        ("ppo.lr=1e400", "ppo.lr: must be a finite number"),
        ("ppo.ent_coef=nan", "ppo.ent_coef: must be a finite number"),
        ("ppo.ent_coef=-0.1", "ppo.ent_coef: must be >= 0"),
        ("ppo.max_grad_norm=nan", "ppo.max_grad_norm: must be a finite number"),
        ("ppo.max_grad_norm=0", "ppo.max_grad_norm: must be positive"),
        ("ppo.clip_coef=.inf", "ppo.clip_coef: must be a finite number"),
        ("ppo.gamma=nan", "ppo.gamma: must be a finite number"),
        ("ppo.gae_lambda=1.5", "ppo.gae_lambda: must be in 0..1"),
        ("ppo.target_kl=-1", "ppo.target_kl: must be positive, or null"),
        ("ppo.vf_coef=-1", "ppo.vf_coef: must be >= 0"),
        ("run.time_limit_minutes=nan", "run.time_limit_minutes: must be a finite number"),
        ("run.time_limit_minutes=-1", "run.time_limit_minutes: must be >= 0"),
        ("eval.deals=0", "eval.deals: must be at least 1"),
        ("eval.final_deals=-1", "eval.final_deals: must be >= 0"),
        ("run.name=/abs", "run.name: must be one folder name inside run.out_dir, got '/abs'"),
        ("run.name=../escape", "run.name: must be one folder name inside run.out_dir, got '../escape'"),
        ("run.name=..", "run.name: must be one folder name"),
        ("run.name=''", "run.name: must be one folder name"),
        ("run.seed=-1", r"run.seed: must be a whole number in 0..4294967295, got -1"),
        ("run.seed=4294967296", "run.seed: must be a whole number in 0..4294967295"),
        ("run.threads=0", "run.threads: must be a whole number of threads 1..1024, or auto"),
        ("run.threads=many", "run.threads: must be a whole number of threads 1..1024, or auto"),
        ("run.threads=100000", "run.threads: must be a whole number of threads 1..1024, or auto"),
        ("ray.sampler_threads=5000", "ray.sampler_threads: must be 1..1024"),
        ("run.device=cuda:x", "run.device: must be"),
        ("run.out_dir=''", "run.out_dir: must be a folder name"),
        ("opponents.latest_fraction=nan", "opponents.latest_fraction: must be a finite number"),
        ("opponents.bots_only_after=2", "opponents.bots_only_after: must be in 0..1"),
        ("opponents.pool_size=0", "opponents.pool_size: must be positive"),
        ("eval.opponent=''", "eval.opponent: must be a policy spec"),
        ("model.init_checkpoint=''", "model.init_checkpoint: must be a checkpoint path or null"),
        ("model.reset_bid_head=true", "model.reset_bid_head: re-initialises the bids of model.init_checkpoint, which is null"),
    ],
)
def test_every_bad_value_is_refused_naming_its_key(override, message):
    with pytest.raises(ConfigError, match=message):
        load_config(TINY, override.split(" "))


def test_every_float_field_refuses_nan_and_infinity():
    import typing

    checked = 0
    for section, section_type in typing.get_type_hints(TrainConfig).items():
        for name, tp in typing.get_type_hints(section_type).items():
            if tp is float or tp == (float | None):
                checked += 1
                for bad in (float("nan"), float("inf"), float("-inf")):
                    with pytest.raises(ConfigError, match=f"{section}.{name}: must be a finite number"):
                        config_from_dict({section: {name: bad}})
    assert checked >= 12


def test_the_shipped_configs_pass_validation():
    for path in (ROOT / "configs" / "train").glob("*.yaml"):
        load_config(path)


# ----------------------------------------------------- a failed start writes nothing
@pytest.mark.parametrize(
    "override, message",
    [
        ("eval.opponent=foo", "eval.opponent: unknown policy 'foo'"),
        ("eval.opponent=search:depth=x=1", "eval.opponent: policy 'search:depth=x=1'"),
        ("opponents.bots=[grandmaster]", "opponents.bots: unknown policy 'grandmaster'"),
        ("env.rules=no-such-preset", "env.rules: "),
        ("opponents.learner_seats=[4]", "opponents.learner_seats: each count must be 1..3"),
        ("model.init_checkpoint=/no/such.pt", "does not exist"),
        ("run.seed=-1", "run.seed"),
        ("env.reward_scale=.nan", "env.reward_scale"),
    ],
)
def test_a_failed_start_leaves_nothing_behind(tmp_path, capsys, override, message):
    out = tmp_path / "runs"
    assert main(train_args(out, override)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_the_corrected_command_runs_after_a_failed_start(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(train_args(out, "eval.opponent=foo")) == 2
    assert main(train_args(out, "eval.opponent=random")) == 0
    assert (out / "tiny" / "checkpoint.pt").is_file()


def test_a_policy_spec_works_as_eval_opponent_and_training_bot(tmp_path):
    out = tmp_path / "runs"
    args = train_args(out, "eval.opponent=search:samples=2", "eval.final_deals=1", "opponents.mode=pool",
                      "opponents.bot_fraction=0.5", "opponents.bots=[heuristic:seed=1]")
    assert main(args) == 0
    assert (out / "tiny" / "final_eval.json").is_file()


@pytest.mark.parametrize("where", ["file", "below a file"])
def test_an_out_dir_that_is_a_file_is_a_clear_error(tmp_path, capsys, where):
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine\n")
    out = blocker if where == "file" else blocker / "runs"
    assert main(train_args(out)) == 2
    err = capsys.readouterr().err
    assert "run.out_dir" in err and ("is a file, not a folder" in err or "is a file" in err)
    assert "Traceback" not in err and blocker.read_text() == "mine\n"


# ------------------------------------------------------------- resume and stale files
def test_resume_of_a_run_stopped_before_its_first_checkpoint_says_it_starts_over(tmp_path, capsys):
    out = tmp_path / "runs"
    config = load_config(TINY, [f"run.out_dir={out}", *QUICK])
    (out / "tiny").mkdir(parents=True)
    write_config(out / "tiny", config)  # what a run killed before its first checkpoint leaves
    assert main([*train_args(out), "--resume"]) == 0
    captured = capsys.readouterr().out
    assert "no checkpoint yet" in captured and "starting from update 0" in captured
    assert (out / "tiny" / "checkpoint.pt").is_file()


def test_stale_temporary_files_of_a_killed_write_are_removed_on_start(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(train_args(out)) == 0
    run_dir = out / "tiny"
    stale = [run_dir / ".checkpoint.pt.k9x2ab.tmp", run_dir / ".checkpoint-5min.pt.q1w2e3.tmp", run_dir / ".config.yaml.tmp",
             run_dir / ".final_eval.json.tmp"]
    for path in stale:
        path.write_bytes(b"half a file")
    keep = run_dir / "notes.tmp"  # not one of the run's temporary files
    keep.write_text("mine")
    assert main([*train_args(out, "ppo.total_steps=32"), "--resume"]) == 0
    assert not any(path.exists() for path in stale)
    assert keep.read_text() == "mine"


def test_a_folder_holding_only_stale_temporary_files_is_not_a_foreign_folder(tmp_path):
    run_dir = tmp_path / "runs" / "tiny"
    run_dir.mkdir(parents=True)
    (run_dir / ".checkpoint.pt.abc.tmp").write_bytes(b"half")
    assert main(train_args(tmp_path / "runs")) == 0
    assert not (run_dir / ".checkpoint.pt.abc.tmp").exists()


def test_the_shipped_ppo_as_eval_opponent_of_a_run_named_ppo_evaluates(tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(train_args(out, "eval.opponent=ppo", "eval.final_deals=1")) == 0
    assert (out / "tiny" / "final_eval.json").is_file()


def test_an_eval_opponent_that_cannot_play_one_of_the_eval_rules_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "runs"
    args = train_args(out, "env.rules=standard", "env.observation=universal", "eval.rules=[standard,short]",
                      "eval.opponent=ppo-standard")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "eval.opponent: " in err and "other rules" in err and "Traceback" not in err
    assert not out.exists()


def test_resuming_a_finished_run_replaces_its_final_evaluation_row(tmp_path):
    import csv

    out = tmp_path / "runs"
    args = train_args(out, "eval.final_deals=1")
    assert main(args) == 0
    assert main([*args, "--resume", "--set", "eval.final_deals=0"]) == 0  # no new final evaluation: the old row stays
    with (out / "tiny" / "eval.csv").open(newline="") as file:
        assert [row["final"] for row in csv.DictReader(file)] == ["1"]
    assert main([*args, "--resume"]) == 0  # nothing left to train: the final evaluation is made again
    with (out / "tiny" / "eval.csv").open(newline="") as file:
        rows = list(csv.DictReader(file))
    assert [row["final"] for row in rows] == ["1"]
    # Trained further without a final evaluation: the earlier end's row is no longer a final one.
    with (out / "tiny" / "metrics.csv").open(newline="") as file:
        steps = int(list(csv.DictReader(file))[-1]["global_step"])
    assert main([*args, "--resume", "--set", f"ppo.total_steps={steps + 1}", "--set", "eval.final_deals=0"]) == 0
    with (out / "tiny" / "eval.csv").open(newline="") as file:
        assert [row["final"] for row in csv.DictReader(file)] == []
    assert not (out / "tiny" / "final_eval.json").exists()  # the earlier end's result is not this run's


def test_a_resume_does_not_read_the_starting_checkpoint_again(tmp_path, capsys):
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(train_args(first)) == 0
    start = tmp_path / "start.pt"
    (first / "tiny" / "checkpoint.pt").rename(start)
    assert main(train_args(second, f"model.init_checkpoint={start}")) == 0
    start.unlink()  # moved to another machine, or a clone deleted since
    assert main([*train_args(second, f"model.init_checkpoint={start}", "ppo.total_steps=32"), "--resume"]) == 0


@pytest.mark.parametrize("damage, problem", [
    ("metrics", "its metrics.csv is damaged (line 2: update 'x' is not a count)"),
    ("eval header", "its eval.csv is damaged (line 2: update None is not a count)"),
    ("deleted", "its checkpoint.pt is missing, though metrics.csv logs update 1 (a checkpoint every 1)"),
    ("folder", "its checkpoint.pt is a folder, not a checkpoint"),
    ("empty config", "its config.yaml is invalid: it holds nothing"),
])
def test_a_resume_of_a_damaged_run_folder_is_refused_before_anything_is_written(tmp_path, capsys, damage, problem):
    out = tmp_path / "runs"
    args = train_args(out, "ppo.total_steps=32", "run.checkpoint_every_updates=1")
    assert main(args) == 0
    run_dir = out / "tiny"
    if damage == "metrics":
        (run_dir / "metrics.csv").write_text("update,global_step\nx,1\n")
    elif damage == "eval header":
        (run_dir / "eval.csv").write_text("upd,final\n1,0\n")
    else:
        (run_dir / "checkpoint.pt").unlink()
    if damage == "folder":
        (run_dir / "checkpoint.pt").mkdir()
    elif damage == "empty config":
        (run_dir / "config.yaml").write_text("")
    before = {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()}
    capsys.readouterr()
    assert main([*args, "--resume"]) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1, err
    assert {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()} == before


@pytest.mark.parametrize("every", [1, 5])
def test_a_run_that_diverges_keeps_its_last_good_checkpoint(tmp_path, capsys, monkeypatch, every):
    import torch
    from blackout_training.agents.policy_net import load_checkpoint
    from blackout_training.ppo import trainer

    update = trainer.ppo_update
    calls = []

    def diverging(agent, *args, **kwargs):  # the second update leaves NaN weights, as a too-large rate does
        stats = update(agent, *args, **kwargs)
        calls.append(1)
        if len(calls) == 2:
            with torch.no_grad():
                next(agent.parameters()).fill_(float("nan"))
        return stats

    monkeypatch.setattr(trainer, "ppo_update", diverging)
    out = tmp_path / "runs"
    assert main(train_args(out, "ppo.total_steps=100000", f"run.checkpoint_every_updates={every}",
                           "run.checkpoint_minutes=[0.00001]")) == 2
    err = capsys.readouterr().err
    assert "the training diverged (update 2): the weights" in err and err.count("\n") == 1, err
    saved = sorted((out / "tiny").glob("checkpoint*.pt"))
    assert saved and all(load_checkpoint(path) for path in saved)  # every one finite: it loads
    if every == 1:
        assert load_checkpoint(out / "tiny" / "checkpoint.pt")[2]["extra"]["update"] == 1
    else:  # stopped before its first checkpoint.pt: only the minute checkpoint of update 1
        assert not (out / "tiny" / "checkpoint.pt").exists()


def test_a_resume_keeps_the_rows_of_logs_written_with_other_columns(tmp_path):
    import csv

    out = tmp_path / "runs"
    assert main(train_args(out)) == 0
    metrics = out / "tiny" / "metrics.csv"
    with metrics.open(newline="") as file:
        rows = list(csv.DictReader(file))
    with metrics.open("w", newline="") as file:  # as another version wrote it: one column more
        writer = csv.DictWriter(file, fieldnames=[*rows[0], "kl_coef"])
        writer.writeheader()
        writer.writerows({**row, "kl_coef": "0.2"} for row in rows)
    steps = int(rows[-1]["global_step"])
    assert main([*train_args(out, f"ppo.total_steps={steps + 1}"), "--resume"]) == 0
    with metrics.open(newline="") as file:
        resumed = list(csv.DictReader(file))
    assert [row["update"] for row in resumed[: len(rows)]] == [row["update"] for row in rows]
    assert len(resumed) > len(rows) and "kl_coef" not in resumed[0]


def _bad_pool(extra):
    extra["pool"] = [{"not": "a network"}]


@pytest.mark.parametrize("edit, problem", [
    (lambda extra: extra.update(update=-5), "its update is -5, not a count"),
    (lambda extra: extra.update(global_step=float("nan")), "its global_step is nan, not a count"),
    (lambda extra: extra.update(elapsed_s="long"), "its elapsed_s is 'long'"),
    (lambda extra: extra.update(optimizer_state={}), "its optimizer state does not fit"),
    (lambda extra: extra.update(numpy_rng_state={"bit_generator": "MT19937"}), "its numpy generator state does not load"),
    (lambda extra: extra.update(torch_rng_state=[1, 2, 3]), "its torch generator state is not one"),
    (lambda extra: extra.update(pool=5), "its pool of past snapshots is a int"),
    (_bad_pool, "its past snapshot 0 does not fit"),
])
def test_a_damaged_training_state_stops_a_resume_before_anything_is_written(tmp_path, capsys, edit, problem):
    import torch

    out = tmp_path / "runs"
    assert main(train_args(out)) == 0
    run_dir = out / "tiny"
    payload = torch.load(run_dir / "checkpoint.pt", weights_only=False)
    edit(payload["extra"])
    torch.save(payload, run_dir / "checkpoint.pt")
    before = {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()}
    capsys.readouterr()
    assert main([*train_args(out, "ppo.total_steps=32"), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "--resume: " in err and "is damaged" in err and problem in err and err.count("\n") == 1, err
    assert {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()} == before


@pytest.mark.parametrize("replacement", ["export", "another network"])
def test_resuming_from_a_checkpoint_that_is_not_the_runs_is_one_line_and_writes_nothing(tmp_path, capsys, replacement):
    from blackout_training.agents.policy_net import export_policy

    out = tmp_path / "runs"
    assert main(train_args(out)) == 0
    run_dir = out / "tiny"
    if replacement == "export":
        export_policy(run_dir / "checkpoint.pt", tmp_path / "weights.pt")
    else:
        assert main(train_args(tmp_path / "other", "model.hidden_sizes=[16]")) == 0
        (tmp_path / "other" / "tiny" / "checkpoint.pt").rename(tmp_path / "weights.pt")
    (tmp_path / "weights.pt").replace(run_dir / "checkpoint.pt")
    before = {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()}
    capsys.readouterr()
    assert main([*train_args(out, "ppo.total_steps=32"), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "--resume: " in err and err.count("\n") == 1, err
    assert {path.name: path.read_bytes() for path in run_dir.iterdir() if path.is_file()} == before


def test_a_home_relative_out_dir_is_the_home_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(train_args(Path("~/runs"))) == 0
    assert (tmp_path / "runs" / "tiny" / "checkpoint.pt").is_file() and not Path("~").exists()


def test_a_section_whose_keys_are_all_commented_out_keeps_its_defaults(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("run:\n  # name: mine\nenv:\n  rules: short\n")
    assert load_config(path).run == TrainConfig().run
    assert load_config(path, ["run.seed=3"]).run.seed == 3  # an override into the empty section
    path.write_text("run: 3\n")
    with pytest.raises(ConfigError, match="c.yaml: run: expected a mapping of options, got 3"):
        load_config(path)
