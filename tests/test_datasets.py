"""Datasets for offline RL and imitation (blackout_training.datasets, ``blackout dataset``): Minari datasets of one seat."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

minari = pytest.importorskip("minari")

from blackout_training.cli import main  # noqa: E402
from blackout_training.datasets import (  # noqa: E402
    DatasetConfig,
    create_dataset,
    dataset_metadata,
    datasets_root,
    episode_decks,
    episode_seed,
    list_datasets,
    load_dataset,
)
from blackout_training.datasets.game_logs import dataset_from_log  # noqa: E402

from blackout_env.agents import policies as policy_registry  # noqa: E402
from blackout_env.game.rules import Rules  # noqa: E402

NAME = "blackout/standard/heuristic-v0"
TINY_CONFIG = Path(__file__).resolve().parents[1] / "configs" / "train" / "tiny.yaml"


@pytest.fixture(autouse=True)
def minari_root(tmp_path, monkeypatch):
    root = tmp_path / "minari"
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
    return root


def _episodes(dataset_id):
    return list(load_dataset(dataset_id).iterate_episodes())


def _root_entries(root):
    """Everything in the root, hidden staging folders included."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


# ------------------------------------------------------------------ create through the Gym env
def test_create_writes_a_minari_dataset_of_one_seats_matches_with_the_mask_in_infos():
    result = create_dataset(NAME, DatasetConfig(policy="heuristic", episodes=2, seed=5))
    dataset = minari.load_dataset(NAME)  # Minari's own reader, through MINARI_DATASETS_PATH
    assert dataset.total_episodes == 2 and result.decisions == dataset.total_steps == 2 * 65
    for episode in dataset.iterate_episodes():
        steps = len(episode.actions)
        assert episode.observations.shape == (steps + 1, dataset.observation_space.shape[0])
        assert episode.terminations[-1] and not episode.terminations[:-1].any() and not episode.truncations.any()
        mask = episode.infos["action_mask"]
        assert mask.shape == (steps + 1, 63) and mask.dtype == np.int8
        assert (mask[np.arange(steps), episode.actions] == 1).all(), "every action taken is in its step's mask"
        assert (mask[-1] == 1).all(), "after the last action: the Gym env's all-ones terminal mask"


def test_recover_environment_gives_the_registered_gym_env_with_the_datasets_options():
    create_dataset(NAME, DatasetConfig(policy="heuristic", opponents=["random"], players=5, episodes=1, seat=2))
    env = load_dataset(NAME).recover_environment()
    assert env.spec.id == "blackout/Blackout-v0"
    assert env.unwrapped.rules.num_players == 5 and env.unwrapped.learner_seat == 2
    observation, info = env.reset(seed=0)
    assert observation.shape == env.observation_space.shape
    env.step(int(np.flatnonzero(info["action_mask"])[0]))


def test_metadata_names_rules_policies_checkpoint_hashes_seed_version_and_layout():
    from blackout_training.agents.policy_net import SHIPPED_CHECKPOINT

    create_dataset(NAME, DatasetConfig(policy="ppo", opponents=["heuristic"], episodes=1, seed=3, path="batched"))
    meta = dataset_metadata(NAME)["blackout"]
    assert meta["policy"] == "ppo" and meta["opponents"] == ["heuristic"] * 3
    assert meta["checkpoints"] == {"ppo": hashlib.sha256(SHIPPED_CHECKPOINT.read_bytes()).hexdigest()}
    assert Rules.from_dict(meta["rules"]) == Rules.preset("standard")
    assert meta["seed"] == 3 and meta["package_version"] and meta["observation"] == "rules"
    assert meta["observation_layout"][0] == ["hand", 0, 52]


def test_two_runs_from_the_same_seed_write_the_same_array_bytes():
    config = DatasetConfig(policy="search:samples=2", opponents=["random"], episodes=2, seed=11)
    create_dataset("blackout/a-v0", config)
    create_dataset("blackout/b-v0", config)
    for first, second in zip(_episodes("blackout/a-v0"), _episodes("blackout/b-v0"), strict=True):
        for field in ("observations", "actions", "rewards", "terminations"):
            assert getattr(first, field).tobytes() == getattr(second, field).tobytes()
        for key in first.infos:
            assert first.infos[key].tobytes() == second.infos[key].tobytes()


def test_gym_path_workers_write_what_one_process_writes():
    config = DatasetConfig(policy="heuristic", opponents=["random"], rules="short", episodes=3, seed=8)
    create_dataset("blackout/one-v0", config)
    create_dataset("blackout/two-v0", DatasetConfig(**{**vars(config), "workers": 2}))
    for first, second in zip(_episodes("blackout/one-v0"), _episodes("blackout/two-v0"), strict=True):
        assert first.observations.tobytes() == second.observations.tobytes()
        assert first.actions.tobytes() == second.actions.tobytes()


def test_episode_decks_are_the_deals_of_the_gym_env_reset_with_the_episode_seed():
    import gymnasium as gym

    env = gym.make("blackout_env:blackout/Blackout-v0", learner_seat=1)
    rules = env.unwrapped.rules
    for index in range(3):
        seed = episode_seed(7, index)
        env.reset(seed=seed)
        assert episode_decks(rules, seed) == (env.unwrapped.game.first_dealer, env.unwrapped.game.decks)


# ------------------------------------------------------------------ the batched path
@pytest.mark.parametrize("policy", ["heuristic", "ppo"])
def test_batched_path_writes_what_the_gym_path_writes_but_the_terminal_observation(policy):
    config = DatasetConfig(policy=policy, opponents=["heuristic"], episodes=3, seed=2)
    create_dataset("blackout/gym-v0", config)
    create_dataset("blackout/batched-v0", DatasetConfig(**{**vars(config), "path": "batched", "batch": 2}))
    for gym_episode, batched in zip(_episodes("blackout/gym-v0"), _episodes("blackout/batched-v0"), strict=True):
        np.testing.assert_array_equal(gym_episode.actions, batched.actions)
        np.testing.assert_array_equal(gym_episode.rewards, batched.rewards)
        np.testing.assert_array_equal(gym_episode.observations[:-1], batched.observations[:-1])
        assert not batched.observations[-1].any(), "the batched path stores zeros after the last action"
        for key in gym_episode.infos:
            np.testing.assert_array_equal(gym_episode.infos[key], batched.infos[key], err_msg=key)
    assert dataset_metadata("blackout/batched-v0")["blackout"]["terminal_observation"] == "zeros"


def test_batched_path_workers_write_what_one_process_writes():
    # Waves of 2, 2 and 1 games (two env sizes) shared by two workers (each plays waves out of order and
    # carries its env from wave to wave); random seats everywhere, so every wave's seeding shows.
    config = DatasetConfig(policy="random", opponents=["random"], rules="short", episodes=5, seed=4, path="batched",
                           batch=2)
    create_dataset("blackout/one-v0", config)
    create_dataset("blackout/two-v0", DatasetConfig(**{**vars(config), "workers": 3}))
    first, second = _episodes("blackout/one-v0"), _episodes("blackout/two-v0")
    assert len(first) == len(second) == 5
    for one, two in zip(first, second, strict=True):
        for field in ("observations", "actions", "rewards", "terminations"):
            assert getattr(one, field).tobytes() == getattr(two, field).tobytes(), field
        assert one.infos["action_mask"].tobytes() == two.infos["action_mask"].tobytes()
    assert len({episode.actions.tobytes() for episode in first}) == 5


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, waiting to be reaped, does not)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not Path("/proc/thread-self/children").exists(), reason="reads a process's children in /proc (Linux)")
def test_a_terminated_run_stops_its_workers_and_leaves_no_staging_and_no_temporary_files(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    root, temporary = tmp_path / "root", tmp_path / "tmp"
    temporary.mkdir()
    env = {**os.environ, "MINARI_DATASETS_PATH": str(root), "TMPDIR": str(temporary)}
    process = subprocess.Popen(
        [sys.executable, "-m", "blackout_training.cli", "dataset", "create", "--policy", "random", "--opponents",
         "random", "--rules", "short", "--episodes", "100000", "--batch", "64", "--path", "batched", "--workers", "2",
         "--name", "blackout/short/killed-v0"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(temporary.glob("blackout-waves-*/wave-*")) and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read().decode()
            time.sleep(0.1)
        workers = [int(p) for p in Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()]
        assert workers, "a worker plays the waves"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        process.kill()
    deadline = time.monotonic() + 30
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)
    assert not list(temporary.iterdir())
    assert not root.exists() or not list(root.iterdir())


def test_batched_path_refuses_rules_that_draw_the_first_dealer():
    with pytest.raises(ValueError, match="fixed first dealer"):
        create_dataset(NAME, DatasetConfig(policy="heuristic", rules={"first_dealer": "random"}, episodes=1,
                                           path="batched"))


# ------------------------------------------------------------------ bad input, nothing half-written
@pytest.mark.parametrize(
    ("config", "message"),
    [
        (DatasetConfig(policy="nope", episodes=1), "policy 'nope': unknown policy"),
        (DatasetConfig(policy="heuristic", opponents=["nope"], episodes=1), "opponent 'nope': unknown policy"),
        (DatasetConfig(policy="ppo-standard", players=5, episodes=1), "trained for other rules"),
        (DatasetConfig(policy="heuristic", episodes=0), "episodes must be"),
        (DatasetConfig(policy="heuristic", episodes=1, decisions=10), "one of them"),
        (DatasetConfig(policy="heuristic", episodes=1, seat=4), "seat must be a seat 0..3"),
        (DatasetConfig(policy="heuristic", opponents=["random", "random"], episodes=1), "one per other seat"),
    ],
)
def test_bad_configs_are_refused_with_nothing_written(config, message, minari_root):
    with pytest.raises(ValueError, match=message):
        create_dataset(NAME, config)
    assert not list(minari_root.rglob("metadata.json"))


def test_an_existing_name_is_refused_without_overwrite_and_left_as_it_was():
    create_dataset(NAME, DatasetConfig(policy="heuristic", episodes=1, seed=1))
    before = _episodes(NAME)[0].actions
    with pytest.raises(ValueError, match="already exists.*--overwrite"):
        create_dataset(NAME, DatasetConfig(policy="random", episodes=2))
    assert load_dataset(NAME).total_episodes == 1
    create_dataset(NAME, DatasetConfig(policy="random", episodes=2), overwrite=True)
    assert load_dataset(NAME).total_episodes == 2
    assert not np.array_equal(_episodes(NAME)[0].actions, before)


def test_a_root_that_cannot_be_written_is_refused(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(blocker / "minari"))
    with pytest.raises(ValueError, match="is not a folder .*a-file' is a file.*MINARI_DATASETS_PATH"):
        create_dataset(NAME, DatasetConfig(policy="heuristic", episodes=1))


def test_a_malformed_name_is_refused():
    for name in ("no-version", "blackout/.hidden-v0", 3):
        with pytest.raises(ValueError, match="dataset name"):
            create_dataset(name, DatasetConfig(policy="heuristic", episodes=1))


class _FailingBot:
    """Plays legally for a while, then fails: a dataset interrupted in the middle."""

    name = "failing"

    def __init__(self):
        self.moves = 0

    def act(self, view):
        self.moves += 1
        if self.moves > 70:
            raise RuntimeError("the policy failed in the second episode")
        return view.legal_actions[0]


def test_a_failure_while_playing_leaves_no_dataset_and_no_staging_folder(monkeypatch, minari_root):
    create_dataset("blackout/kept-v0", DatasetConfig(policy="heuristic", episodes=1))
    before = _root_entries(minari_root)
    monkeypatch.setitem(policy_registry.LOADERS, "failing", lambda argument, rules, seed: _FailingBot())
    with pytest.raises(RuntimeError, match="second episode"):
        create_dataset(NAME, DatasetConfig(policy="failing", episodes=3))
    assert _root_entries(minari_root) == before
    with pytest.raises(RuntimeError, match="second episode"):
        create_dataset("blackout/kept-v0", DatasetConfig(policy="failing", episodes=3), overwrite=True)
    assert load_dataset("blackout/kept-v0").total_episodes == 1


# ------------------------------------------------------------------ list, show, delete
def test_cli_lists_shows_and_deletes_datasets_in_the_minari_root(capsys, minari_root):
    assert main(["dataset", "create", "--name", NAME, "--policy", "heuristic", "--opponents", "random",
                 "--decisions", "100", "--seed", "4"]) == 0
    assert "2 episodes, 130 decisions" in capsys.readouterr().out
    assert [summary.dataset_id for summary in list_datasets()] == [NAME] and datasets_root() == minari_root
    assert main(["dataset", "list"]) == 0
    assert f"{NAME}  2 episodes  130 steps  policy heuristic, standard, gym" in capsys.readouterr().out
    assert main(["dataset", "show", NAME]) == 0
    assert json.loads(capsys.readouterr().out)["blackout"]["opponents"] == ["random"] * 3
    (minari_root / "blackout" / "broken-v0" / "data").mkdir(parents=True)  # a dataset Minari cannot read
    (minari_root / "blackout" / "broken-v0" / "data" / "metadata.json").write_text("{not json")
    assert main(["dataset", "list"]) == 0
    listed = capsys.readouterr().out
    assert f"1 dataset\n{NAME}" in listed and "not listed, Minari cannot read them (damaged?): blackout/broken-v0" in listed
    assert main(["dataset", "delete", NAME]) == 0
    assert list_datasets() == []
    assert main(["dataset", "delete", NAME]) == 2
    assert f"no dataset {NAME!r}" in capsys.readouterr().err


def test_cli_refuses_an_existing_name_with_a_clear_error(capsys):
    argv = ["dataset", "create", "--name", NAME, "--policy", "random", "--episodes", "1"]
    assert main(argv) == 0
    assert main(argv) == 2
    assert "already exists" in capsys.readouterr().err


@pytest.mark.parametrize("module", ["minari", "h5py"])
def test_cli_without_the_datasets_extra_names_what_to_install(capsys, monkeypatch, minari_root, module):
    monkeypatch.setitem(sys.modules, module, None)  # (import fails as for a module not installed)
    assert main(["dataset", "create", "--name", NAME, "--policy", "random", "--episodes", "1"]) == 2
    err = capsys.readouterr().err
    assert f"needs the module {module!r}" in err and "blackout-rl[datasets]" in err and "Traceback" not in err
    assert not minari_root.exists() or not any(minari_root.iterdir())
    assert main(["dataset", "list"]) == (2 if module == "minari" else 0)  # (listing opens no HDF5 file)


# ------------------------------------------------------------------ from a game log
@pytest.fixture
def game_log(tmp_path):
    from blackout_training.evaluation.tournament import evaluate

    path = tmp_path / "games.jsonl"
    evaluate(["heuristic", "random"], "short", deals=1, seed=0, game_log=path)
    return path


def test_a_game_log_becomes_a_dataset_of_one_seats_games_replayed_through_the_gym_env(game_log):
    from blackout_training.evaluation.game_log import read_game_log

    games = read_game_log(game_log)
    episodes, decisions = dataset_from_log(game_log, NAME, seat=1)
    assert episodes == len(games) == 4
    for game, episode in zip(games, _episodes(NAME), strict=True):
        replay = game.start()
        mine = []
        for action in game.actions:
            if replay.current_player == 1:
                mine.append(action)
            replay.step(action)
        assert episode.actions.tolist() == mine
        assert episode.rewards.sum() == game.scores[1]
    assert decisions == sum(len(e.actions) for e in _episodes(NAME))
    logged = dataset_metadata(NAME)["blackout"]["games"]  # each episode's line-up: the rotations differ
    assert [g["opponents"] for g in logged] == [[game.seats[(1 + k) % 4] for k in (1, 2, 3)] for game in games]
    only = dataset_from_log(game_log, "blackout/heuristic-only-v0", seat=1, policy="heuristic")
    assert only[0] == sum(game.seats[1] == "heuristic" for game in games)


def test_a_corrupt_game_log_is_refused_naming_its_line_and_nothing_is_written(game_log, capsys, minari_root):
    lines = game_log.read_text().splitlines()
    lines[2] = lines[2].replace('"actions":[', '"actions":[999,')
    game_log.write_text("\n".join(lines) + "\n")
    assert main(["dataset", "from-log", str(game_log), "--name", NAME]) == 2
    assert f"game log {str(game_log)!r}, line 3: action #0 (999) is illegal" in capsys.readouterr().err
    assert not list(minari_root.rglob("metadata.json"))


# ------------------------------------------------------------------ the benchmark
def test_bench_dataset_times_both_paths_in_one_run_and_leaves_no_dataset(tmp_path, capsys, minari_root):
    from blackout_training.bench.dataset import main as bench

    out = tmp_path / "bench.json"
    assert bench(["--policies", "heuristic", "--gym-episodes", "1", "--batched-episodes", "2", "--batch", "2",
                  "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    row = figures["policies"]["heuristic"]
    assert row["gym"]["decisions"] == 65 and row["batched"]["decisions"] == 130
    assert row["speedup"] == pytest.approx(row["batched"]["decisions_per_s"] / row["gym"]["decisions_per_s"])
    assert "load average" in capsys.readouterr().out
    assert not minari_root.exists() or not list(minari_root.rglob("metadata.json"))


# ------------------------------------------------------------------ behaviour cloning
def test_behaviour_cloning_learns_the_datasets_actions_within_the_mask(tmp_path):
    import torch
    from blackout_training.agents.policy_net import load_checkpoint
    from blackout_training.datasets.cloning import clone, load_decisions

    create_dataset(NAME, DatasetConfig(policy="heuristic", episodes=20, path="batched", batch=20))
    result = clone(NAME, hidden_sizes=(64, 64), epochs=10, lr=3e-3, seed=0, out=tmp_path / "clone.pt")
    assert result.decisions + result.validation_decisions == 20 * 65
    assert result.validation_decisions == 2 * 65, "a tenth of the episodes is held out"
    model, rules, _ = load_checkpoint(result.checkpoint)
    assert rules == Rules.preset("standard")
    _, _, episodes = load_decisions(NAME)
    obs, mask, actions = (torch.as_tensor(np.concatenate([e[k] for e in episodes])) for k in range(3))
    with torch.inference_mode():
        chosen = model.logits(obs, mask).argmax(dim=-1)
    assert mask[torch.arange(len(chosen)), chosen].all(), "the clone's choices are always legal"
    choices = mask.sum(dim=1) > 1  # decisions with something to choose
    chance = float((1 / mask[choices].sum(dim=1)).mean())  # a uniformly random legal choice's expected accuracy
    assert float((chosen == actions)[choices].float().mean()) > chance + 0.3


def test_cli_clone_writes_a_ppo_checkpoint_that_plays(tmp_path, capsys):
    from blackout_training.agents.policy_net import load_checkpoint

    from blackout_env.agents.policies import load_policy

    create_dataset(NAME, DatasetConfig(policy="heuristic", rules="short", episodes=4))
    out = tmp_path / "clone.pt"
    assert main(["dataset", "clone", NAME, "--out", str(out), "--epochs", "1", "--hidden-sizes", "16"]) == 0
    assert f"wrote {out} (policy ppo:{out}): 42 decisions" in capsys.readouterr().out
    assert load_policy(f"ppo:{out}").rules == Rules.preset("short")
    # The card-aware network of the main job, at its embedding width.
    cards = tmp_path / "cards.pt"
    assert main(["dataset", "clone", NAME, "--out", str(cards), "--epochs", "1", "--hidden-sizes", "16", "--arch", "cards",
                 "--card-width", "8"]) == 0
    assert load_checkpoint(cards)[0].spec() == {"hidden_sizes": [16], "arch": "cards", "card_width": 8}
    assert main(["dataset", "clone", NAME, "--out", str(tmp_path / "bad.pt"), "--card-width", "0"]) == 2
    assert "card_width must be a whole number >= 1" in capsys.readouterr().err and not (tmp_path / "bad.pt").exists()


def test_clone_refuses_bad_sizes_and_an_unwritable_out_before_training_and_a_corrupt_dataset(tmp_path, capsys, minari_root):
    create_dataset(NAME, DatasetConfig(policy="heuristic", rules="short", episodes=2))
    (tmp_path / "afile").write_text("x")
    for extra, message in [(["--hidden-sizes", "0"], "hidden_sizes must be one or more whole numbers >= 1"),
                           (["--hidden-sizes", "-5"], "hidden_sizes must be one or more whole numbers >= 1"),
                           (["--out", str(tmp_path / "afile" / "c.pt")], "is a file, not a folder"),
                           (["--out", str(tmp_path)], "is a folder; name the checkpoint file")]:
        args = ["dataset", "clone", NAME, "--epochs", "1", *extra]
        if "--out" not in extra:
            args += ["--out", str(tmp_path / "c.pt")]
        assert main(args) == 2
        captured = capsys.readouterr()
        assert message in captured.err and "Traceback" not in captured.err and "epoch" not in captured.out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "minari"]
    # A dataset whose data file is damaged, and one whose metadata is: one line naming the dataset.
    data = minari_root / NAME / "data" / "main_data.hdf5"
    data.write_bytes(b"\x00" * 512)
    assert main(["dataset", "clone", NAME, "--out", str(tmp_path / "c.pt")]) == 2
    assert f"dataset {NAME!r}: its episodes cannot be read (OSError" in capsys.readouterr().err
    for text, words in (("{", "cannot be read"), ("[]", "is not a JSON object")):
        (minari_root / NAME / "data" / "metadata.json").write_text(text)
        for command in (["show", NAME], ["clone", NAME, "--out", str(tmp_path / "c.pt")]):
            assert main(["dataset", *command]) == 2
            assert f"dataset {NAME!r}: its metadata" in (err := capsys.readouterr().err) and words in err


def test_a_minari_root_that_is_a_file_is_one_line_for_every_command(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for root in (blocker, blocker / "below"):  # the root, or a folder above it, is a file
        monkeypatch.setenv("MINARI_DATASETS_PATH", str(root))
        for args in (["list"], ["show", NAME], ["delete", NAME], ["clone", NAME, "--out", str(tmp_path / "c.pt")]):
            assert main(["dataset", *args]) == 2
            err = capsys.readouterr().err
            assert f"the Minari root {str(root)!r} is not a folder" in err and "Traceback" not in err
    assert blocker.read_text() == "not a folder"


def test_list_of_a_root_not_made_yet_makes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "later"))
    assert main(["dataset", "list"]) == 0
    assert "0 datasets" in capsys.readouterr().out and not (tmp_path / "later").exists()


def test_a_name_inside_another_dataset_is_refused(minari_root):
    create_dataset(NAME, DatasetConfig(policy="random", episodes=1))
    with pytest.raises(ValueError, match=f"is inside the dataset '{NAME}'"):
        create_dataset(f"{NAME}/inner-v0", DatasetConfig(policy="random", episodes=1))
    assert not (minari_root / NAME / "inner-v0").exists()


def test_cloning_a_dataset_that_is_not_there_is_refused():
    from blackout_training.datasets.cloning import clone

    with pytest.raises(ValueError, match="no dataset 'blackout/none-v0'"):
        clone("blackout/none-v0")


@pytest.mark.parametrize("lr", [float("inf"), float("nan"), 0, -1e-3, "0.1", True, 1e308, 2])
def test_cloning_with_a_learning_rate_outside_0_to_1_is_refused(lr):
    from blackout_training.datasets.cloning import clone

    with pytest.raises(ValueError, match=r"lr must be a number in \(0, 1\]"):
        clone("blackout/none-v0", lr=lr)


def test_a_clone_that_diverges_is_not_written(tmp_path, diverging_adam):
    from blackout_training.datasets.cloning import clone

    create_dataset(NAME, DatasetConfig(policy="random", episodes=2))
    with pytest.raises(ValueError, match="the training diverged: the weights .* are not finite"):
        clone(NAME, hidden_sizes=(8,), epochs=1, out=tmp_path / "clone.pt")
    assert not (tmp_path / "clone.pt").exists()


def test_opponent_specs_keep_their_options_and_their_files_are_stored_absolute(tmp_path, monkeypatch):
    import torch
    from blackout_training.agents.policy_net import ActorCritic, save_checkpoint

    from blackout_env.game import encoding

    short = Rules.preset("short")
    torch.manual_seed(0)
    save_checkpoint(tmp_path / "mine.pt", ActorCritic(encoding.observation_size(short), short.num_actions, [8]), short)
    monkeypatch.chdir(tmp_path)
    spec = "ppo+search:checkpoint=mine.pt,simulations=4,prior_margin=none"
    assert main(["dataset", "create", "--policy", "heuristic", "--opponents", f"{spec},random,heuristic",
                 "--episodes", "1", "--rules", "short", "--name", NAME]) == 0
    stored = f"ppo+search:checkpoint={tmp_path / 'mine.pt'},simulations=4,prior_margin=none"
    assert dataset_metadata(NAME)["blackout"]["opponents"] == [stored, "random", "heuristic"]
    monkeypatch.chdir(tmp_path.parent)  # the env spec loads from any folder
    dataset = load_dataset(NAME)
    assert dataset.spec.env_spec.kwargs["opponents"][0] == stored
    dataset.recover_environment().reset(seed=0)


def test_train_init_dataset_starts_ppo_from_the_clone(tmp_path, capsys):
    from blackout_training.agents.policy_net import load_checkpoint

    create_dataset("blackout/short/heuristic-v0", DatasetConfig(policy="heuristic", rules="short", episodes=8,
                                                                path="batched", batch=8))
    out = tmp_path / "runs"
    tiny = ["train", "--config", str(TINY_CONFIG), "--set", f"run.out_dir={out}", "--set", "ppo.total_steps=300",
            "--set", "eval.final_deals=0", "--set", "eval.every_updates=0"]
    assert main([*tiny, "--init-epochs", "1"]) == 2  # (epochs of no dataset: refused, nothing trained)
    assert "--init-epochs: passes over the --init-dataset, which is not given" in capsys.readouterr().err
    assert not (out / "tiny").exists()
    assert main([*tiny, "--init-dataset", "blackout/short/heuristic-v0", "--init-epochs", "1"]) == 0
    printed = capsys.readouterr().out
    assert "behaviour clone of blackout/short/heuristic-v0" in printed
    assert f"starting from the weights of {out / 'tiny-clone.pt'}" in printed
    load_checkpoint(out / "tiny-clone.pt")
    # The same command again, without --force: the run folder is refused before the clone is made, so the clone
    # that the finished run's config names stays as it was.
    clone_bytes = (out / "tiny-clone.pt").read_bytes()
    assert main([*tiny, "--init-dataset", "blackout/short/heuristic-v0", "--init-epochs", "1"]) == 2
    assert "already holds a run" in capsys.readouterr().err
    assert (out / "tiny-clone.pt").read_bytes() == clone_bytes
    # A dataset of another table is refused before anything is trained or written.
    create_dataset("blackout/standard/random-v0", DatasetConfig(policy="random", episodes=1))
    assert main([*tiny, "--set", "run.name=other", "--init-dataset", "blackout/standard/random-v0"]) == 2
    assert "is not this run's" in capsys.readouterr().err
    assert not (out / "other").exists() and not (out / "other-clone.pt").exists()


# ------------------------------------------------------------------ the page's commands
def test_the_quick_start_commands_of_docs_datasets_run_as_written(capsys):
    import shlex

    page = (Path(__file__).resolve().parents[1] / "docs" / "datasets.md").read_text(encoding="utf-8")
    block = page.split("<!-- datasets-quick-start -->\n```bash\n", 1)[1].split("```", 1)[0]
    for line in block.strip().splitlines():
        words = shlex.split(line)
        assert words[0] == "blackout"
        assert main(words[1:]) == 0, line
    assert [summary.dataset_id for summary in list_datasets()] == [NAME]
    assert '"policy": "heuristic"' in capsys.readouterr().out
