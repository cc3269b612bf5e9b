"""The Ray RLlib backend: the batched multi-agent env, the masked RLModule, a one-update run, interop, bad input.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``); skipped without it.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import torch  # noqa: E402
from blackout_training.agents.policies import load_policy  # noqa: E402
from blackout_training.cli import main  # noqa: E402
from blackout_training.ppo.config import ConfigError  # noqa: E402
from blackout_training.ppo.returns import hand_rewards, seat_returns  # noqa: E402
from blackout_training.rllib.backend import connect_ray  # noqa: E402
from blackout_training.rllib.env import BatchedMultiAgentEnv, NumpyOnceEnvRunner, agent_name  # noqa: E402
from blackout_training.rllib.module import (  # noqa: E402
    MODULE_ID,
    BlackoutRLModule,
    DecisionScheduledPPOLearner,
    module_config,
)
from ray.rllib.core.columns import Columns  # noqa: E402
from ray.rllib.core.rl_module.rl_module import RLModuleSpec  # noqa: E402
from ray.rllib.env.multi_agent_episode import MultiAgentEpisode  # noqa: E402

from blackout_env import Rules  # noqa: E402

TINY = str(Path(__file__).resolve().parents[1] / "configs" / "train" / "tiny.yaml")


def _random_legal(observations: dict, rng: np.random.Generator) -> dict:
    return {name: int(rng.choice(np.flatnonzero(obs["action_mask"]))) for name, obs in observations.items()}


# ------------------------------------------------------------------ the env
def test_one_step_of_the_batched_env_is_one_decision_of_every_game():
    env = BatchedMultiAgentEnv({"rules": "short", "num_games": 8, "seed": 3})
    observations, _ = env.reset()
    assert len(observations) == 8
    assert {name.split("_")[0] for name in observations} == {f"g{game}" for game in range(8)}
    for name, obs in observations.items():
        game, seat = (int(part[1:]) for part in name.split("_"))
        assert seat == env.engine.current_player[game]
        assert obs["observation"].shape == env.observation_spaces[name]["observation"].shape
        assert env.observation_spaces[name].contains(obs)


def test_each_seat_gets_its_hand_score_at_its_last_decision_of_the_hand_and_the_hand_ends_the_episode():
    """The native trainer's crediting (``blackout_training.ppo.returns.seat_returns``), decision by decision."""
    rules = Rules.resolve("short")
    n_games, n_players = 6, rules.num_players
    env = BatchedMultiAgentEnv({"rules": "short", "num_games": n_games, "seed": 5, "reward_scale": 0.1})
    rng = np.random.default_rng(0)
    observations, infos = env.reset()
    for hand in range(3):  # hands of 1, 2 and 3 cards
        episode = MultiAgentEpisode(observation_space=env.observation_spaces, action_space=env.action_spaces)
        episode.add_env_reset(observations=observations, infos=infos)
        players, terminated = [], False
        while not terminated:
            seats = {int(name.split("_s")[0][1:]): int(name.split("_s")[1]) for name in observations}
            players.append([seats[game] for game in range(n_games)])
            actions = _random_legal(observations, rng)
            observations, rewards, terminateds, truncateds, infos = env.step(actions)
            terminated = terminateds["__all__"]
            episode.add_env_step(observations, actions, rewards, infos=infos, terminateds=terminateds,
                                 truncateds=truncateds)
        assert episode.is_terminated and not observations  # the hand's end ends every agent's episode
        T = len(players)
        hand_over = np.zeros((T, n_games), dtype=bool)
        hand_over[-1] = True
        scores = env.engine.round_scores[:, hand, :]
        step_rewards = np.zeros((T, n_games, n_players), dtype=np.float32)
        step_rewards[-1] = hand_rewards(scores, "score", 0.1)
        native = seat_returns(np.array(players), np.ones((T, n_games), dtype=bool), hand_over, step_rewards,
                              np.zeros((T, n_games), dtype=np.float32), 1.0, 1.0).rewards
        for game in range(n_games):
            for seat in range(n_players):
                steps = [t for t in range(T) if players[t][game] == seat]
                credited = episode.agent_episodes[agent_name(game, seat)].get_rewards()
                assert len(credited) == len(steps) == 1 + rules.hand_sizes[hand]  # a bid and a card per trick
                np.testing.assert_allclose(credited, native[steps, game], rtol=1e-6)
                assert credited[-1] == pytest.approx(0.1 * scores[game, seat])
        observations, infos = env.reset()  # the next hand of every match


def test_masked_actions_are_never_illegal():
    rules = Rules.resolve("short")
    env = BatchedMultiAgentEnv({"rules": "short", "num_games": 12, "seed": 1})
    module = RLModuleSpec(
        module_class=BlackoutRLModule, observation_space=env.observation_spaces[agent_name(0, 0)],
        action_space=env.action_spaces[agent_name(0, 0)], model_config=module_config(rules, [16], "cards", 4),
    ).build()
    torch.manual_seed(0)
    observations, _ = env.reset()
    decisions = 0
    for _ in range(rules.decisions_per_match + 5):  # a match and more
        if not observations:
            observations, _ = env.reset()
        names = list(observations)
        batch = {Columns.OBS: {key: torch.as_tensor(np.stack([observations[n][key] for n in names]))
                               for key in ("observation", "action_mask")}}
        logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
        actions = torch.distributions.Categorical(logits=logits).sample().numpy()
        masks = batch[Columns.OBS]["action_mask"].numpy()
        assert masks[np.arange(len(names)), actions].all()
        decisions += len(names)
        observations, *_ = env.step(dict(zip(names, actions.tolist())))  # the engine raises on an illegal one
    assert decisions > 12 * 56


# ------------------------------------------------------------------ a run
@pytest.fixture(scope="module")
def rllib_run(tmp_path_factory):
    """One RLlib PPO update of the tiny config, through ``blackout train``."""
    out = tmp_path_factory.mktemp("rllib_runs")
    code = main([
        "train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={out}",
        "--set", "ppo.total_steps=100", "--set", "rllib.num_env_runners=0", "--set", "eval.final_deals=2",
    ])
    assert code == 0
    return out / "tiny"


def test_a_one_update_run_writes_the_native_run_folder(rllib_run):
    for name in ("config.yaml", "metrics.csv", "eval.csv", "final_eval.json", "checkpoint.pt", "learning_curve.png"):
        assert (rllib_run / name).is_file(), name
    assert (rllib_run / "rllib_checkpoint").is_dir()
    rows = (rllib_run / "metrics.csv").read_text().splitlines()
    assert len(rows) == 2  # the header and one update
    update, global_step = rows[1].split(",")[:2]
    assert update == "1" and int(global_step) >= 16 * 16  # env.num_envs x ppo.rollout_steps decisions


def test_the_rllib_checkpoint_and_its_native_export_play_the_same_policy(rllib_run):
    rules = Rules.resolve("short")
    rllib_bot = load_policy(f"rllib:{rllib_run}", rules=rules)
    native_bot = load_policy(f"ppo:{rllib_run / 'checkpoint.pt'}", rules=rules)
    env = BatchedMultiAgentEnv({"rules": "short", "num_games": 32, "seed": 9})
    observations, _ = env.reset()
    obs = np.stack([o["observation"] for o in observations.values()])
    mask = np.stack([o["action_mask"] for o in observations.values()])
    assert np.array_equal(rllib_bot.act_batch(obs, mask), native_bot.act_batch(obs, mask))
    for name in (rllib_run, rllib_run / "rllib_checkpoint"):  # the run folder or RLlib's own checkpoint folder
        assert load_policy(f"rllib:{name}", rules=rules).name == f"rllib:{name}"


def test_blackout_eval_and_play_accept_an_rllib_checkpoint(rllib_run, tmp_path, capsys):
    spec = f"rllib:{rllib_run}"
    assert main(["eval", "--policies", spec, "heuristic", "--rules", "short", "--deals", "2", "--no-progress",
                 "--no-plot"]) == 0
    assert spec in capsys.readouterr().out
    assert main(["play", "--rules", "short", "--humans", "0", "--bots", spec, "--seed", "1",
                 "--save", str(tmp_path / "game.json")]) == 0
    out = capsys.readouterr().out
    assert "Seats: P0 rllib" in out and "win" in out.splitlines()[-1]  # (a match may end in a shared win)


def test_the_runner_returns_each_episode_converted_to_numpy():
    import ray
    from blackout_training.ppo.config import load_config
    from blackout_training.rllib.backend import build_algorithm_config

    config = load_config(TINY, ["algo=rllib_ppo", "rllib.num_env_runners=0"])
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        algo = build_algorithm_config(config, Rules.resolve(config.env.rules)).build_algo()
        episodes = algo.env_runner.sample(num_timesteps=400, explore=True)  # several whole hands and a cut one
        assert isinstance(algo.env_runner, NumpyOnceEnvRunner)
        assert len(episodes) > 2 and all(episode.is_numpy for episode in episodes)
        algo.stop()
    finally:
        ray.shutdown()


def _copy_run(run_dir: Path, to: Path) -> Path:
    """A copy of a run folder (a copied or moved run resumes where it lies)."""
    shutil.copytree(run_dir, to / run_dir.name)
    return to / run_dir.name


def _resume(run_dir: Path, *overrides: str) -> int:
    return main(["train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={run_dir.parent}",
                 "--set", "rllib.num_env_runners=0", "--set", "eval.final_deals=0", *overrides, "--resume"])


def test_resume_restores_the_learner_and_rllibs_counters_and_continues_the_logs(rllib_run, tmp_path):
    import ray

    run_dir = _copy_run(rllib_run, tmp_path)
    first = (run_dir / "metrics.csv").read_text().splitlines()
    saved = torch.load(run_dir / "checkpoint.pt", weights_only=False)["model_state"]
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)  # one Ray for both resumes
    try:
        # At its own budget nothing is left to train: the re-exported network is the restored learner's.
        assert _resume(run_dir, "--set", "ppo.total_steps=100") == 0
        again = torch.load(run_dir / "checkpoint.pt", weights_only=False)["model_state"]
        assert all(torch.equal(saved[key], again[key]) for key in saved)
        # A larger budget continues at update 2 (then 3), where RLlib's step counter left off.
        assert _resume(run_dir, "--set", "ppo.total_steps=600") == 0
    finally:
        ray.shutdown()
    rows = (run_dir / "metrics.csv").read_text().splitlines()
    assert rows[:2] == first[:2] and rows[2].startswith("2,512,")
    # lr anneals from 1e-3 to 2e-5 over 600 decisions: about 1.6e-4 after the 512 sampled in all,
    # about 5.8e-4 had the count started again from 256.
    lr = float(rows[2].split(",")[5])
    assert lr < 3.5e-4
    progress = json.loads((run_dir / "rllib_checkpoint" / "blackout_progress.json").read_text())
    assert (progress["update"], progress["global_step"]) == (3, 768)  # 768 >= 600 decisions: done


def test_a_save_killed_between_its_renames_resumes_from_the_whole_checkpoint(rllib_run, tmp_path):
    from blackout_training.rllib.backend import read_progress

    run_dir = _copy_run(rllib_run, tmp_path)
    (run_dir / "rllib_checkpoint").rename(run_dir / "rllib_checkpoint.tmp")  # the new one written, not yet swapped in
    assert read_progress(run_dir)["update"] == 1
    assert (run_dir / "rllib_checkpoint" / "blackout_progress.json").is_file()


# ------------------------------------------------------------------ bad input
def test_an_rllib_checkpoint_from_other_rules_is_refused_naming_the_difference(rllib_run):
    with pytest.raises(ValueError, match=r"other rules \(hand_sizes: checkpoint \[1, 2, 3, 2, 1\]"):
        load_policy(f"rllib:{rllib_run}", rules="standard")


def test_a_folder_that_is_no_rllib_checkpoint_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not an RLlib checkpoint"):
        load_policy(f"rllib:{tmp_path}")
    with pytest.raises(ValueError, match="does not exist"):
        load_policy(f"rllib:{tmp_path / 'missing'}")
    with pytest.raises(ValueError, match="needs a checkpoint"):
        load_policy("rllib")


def test_resume_refuses_a_missing_or_corrupt_rllib_checkpoint_before_ray_starts(rllib_run, tmp_path, capsys):
    run_dir = _copy_run(rllib_run, tmp_path)
    progress = run_dir / "rllib_checkpoint" / "blackout_progress.json"
    progress.write_text('{"update": 1, "global_step": "many"')
    before = sorted(p.name for p in run_dir.iterdir()), (run_dir / "metrics.csv").read_text()
    start = time.perf_counter()
    assert _resume(run_dir, "--set", "ppo.total_steps=600") == 2
    assert f"{progress}' is corrupt" in capsys.readouterr().err
    shutil.rmtree(run_dir / "rllib_checkpoint")
    assert _resume(run_dir, "--set", "ppo.total_steps=600") == 2
    assert "holds no RLlib checkpoint" in capsys.readouterr().err
    assert time.perf_counter() - start < 10  # refused before Ray starts
    assert before[1] == (run_dir / "metrics.csv").read_text()


def test_an_unreachable_ray_address_fails_within_seconds_before_any_run_folder(tmp_path, capsys):
    start = time.perf_counter()
    code = main(["train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={tmp_path}",
                 "--ray-address", "127.0.0.1:9"])
    assert code == 2
    assert time.perf_counter() - start < 15
    assert "no Ray cluster answers there" in capsys.readouterr().err
    assert not (tmp_path / "tiny").exists()
    with pytest.raises(ConfigError, match="expected HOST:PORT"):
        connect_ray("no-port-here", 1)


def test_more_env_runners_than_free_cpus_is_refused_before_any_run_folder(tmp_path, capsys):
    code = main(["train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={tmp_path}",
                 "--set", "rllib.num_env_runners=64", "--set", "rllib.num_cpus=2"])
    assert code == 2
    assert "rllib.num_env_runners: 64 env runners need 64 CPUs, but the Ray started here has" in capsys.readouterr().err
    assert not (tmp_path / "tiny").exists()


def test_unsupported_settings_are_refused_by_name(tmp_path, capsys):
    code = main(["train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={tmp_path}",
                 "--set", "opponents.mode=pool", "--set", "rllib.env=aec"])
    assert code == 2
    assert "does not support opponents.mode: pool with rllib.env: aec" in capsys.readouterr().err
    code = main(["train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={tmp_path}",
                 "--set", "opponents.mode=pool", "--set", "opponents.learner_seats=[4]"])
    assert code == 2
    assert "opponents.learner_seats: each count must be 1..3 with 4 players" in capsys.readouterr().err
    for setting, words in (("ppo.norm_adv=false", "ppo.norm_adv: false"), ("run.checkpoint_minutes=[1]", "run.checkpoint_minutes")):
        code = main(["train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={tmp_path}",
                     "--set", setting])
        assert code == 2
        assert f"does not support {words}" in capsys.readouterr().err
    code = main(["train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={tmp_path}",
                 "--set", "opponents.mode=pool", "--set", "opponents.bot_fraction=0.5",
                 "--set", "opponents.bots=[no-such-bot]"])
    assert code == 2
    assert "opponents.bots:" in capsys.readouterr().err
    assert not (tmp_path / "tiny").exists()


# ------------------------------------------------------------------ a league (opponents.mode: pool)
LEAGUE = {"mode": "pool", "latest_fraction": 0.25, "bot_fraction": 0.5, "bots": ["heuristic", "random"],
          "learner_seats": [1, 2]}
SMALL_NET = {"hidden_sizes": [16], "arch": "cards", "card_width": 4}


def test_in_a_league_only_the_learners_seats_are_agents_and_only_they_are_paid():
    rules = Rules.resolve("short")
    env = BatchedMultiAgentEnv({"rules": "short", "num_games": 12, "seed": 4, "opponents": LEAGUE, "model": SMALL_NET})
    rng = np.random.default_rng(1)
    kinds = set()
    for hand in range(6):
        if hand == 3:  # a past snapshot joins from the next hand on
            env.set_league([BlackoutRLModule(observation_space=env.observation_spaces["g0_s0"],
                                             action_space=env.action_spaces["g0_s0"],
                                             model_config=module_config(rules, [16], "cards", 4)).net.state_dict()])
        observations, _ = env.reset()
        learner = env.pool.learner_seats(np.arange(12))
        kinds.update(int(k) for k in np.sign(env.pool.opponent_id - len(env.pool.snapshots) + 0.5))
        acted = set()
        while True:
            for name in observations:
                game, seat = (int(part[1:]) for part in name.split("_"))
                assert learner[game, seat] and seat == env.engine.current_player[game]
            acted.update(observations)
            observations, rewards, terminated, _, _ = env.step(_random_legal(observations, rng))
            if terminated["__all__"]:
                break
        assert set(rewards) == acted == {agent_name(g, s) for g, s in zip(*np.nonzero(learner))}
        assert learner.sum() < 12 * rules.num_players  # some games seat bots or snapshots
    assert len(env.pool.networks) == 1 and kinds == {-1, 1}  # snapshots (or self-play) and bots both sat


def test_the_runner_hands_the_league_to_each_of_its_envs():
    from types import SimpleNamespace

    envs = [BatchedMultiAgentEnv({"rules": "short", "num_games": 2, "opponents": LEAGUE, "model": SMALL_NET})
            for _ in range(2)]
    runner = SimpleNamespace(env=SimpleNamespace(envs=[SimpleNamespace(unwrapped=env) for env in envs]))
    NumpyOnceEnvRunner.set_league(runner, [{}], 0.7)
    assert all(env._new_snapshots == [{}] and env._progress == 0.7 for env in envs)
    NumpyOnceEnvRunner.set_league(SimpleNamespace(env=None), [{}], 0.7)  # a runner without envs (the driver's)


@pytest.fixture(scope="module")
def league_run(tmp_path_factory):
    """Three RLlib updates of the tiny config against a league: a snapshot each update, heuristic bots."""
    out = tmp_path_factory.mktemp("rllib_league")
    code = main([
        "train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={out}",
        "--set", "ppo.total_steps=600", "--set", "rllib.num_env_runners=0", "--set", "eval.final_deals=0",
        "--set", "opponents.mode=pool", "--set", "opponents.bot_fraction=0.5", "--set", "opponents.bots=[heuristic]",
        "--set", "opponents.snapshot_every_updates=1", "--set", "opponents.pool_size=2",
    ])
    assert code == 0
    return out / "tiny"


def test_a_league_run_trains_keeps_its_newest_snapshots_and_resumes_with_them(league_run, tmp_path, capsys):
    rows = (league_run / "metrics.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 and rows[-1].startswith("3,")  # 600 decisions of the learner: 3 updates of 256
    assert 600 <= int(rows[-1].split(",")[1]) < 1000  # (RLlib's samples end on whole env steps)
    # lr anneals by the learner's decisions, 1e-3 to 2e-5 over 600: after the first 256, 1e-3 - 256/600 * 9.8e-4
    assert float(rows[1].split(",")[5]) == pytest.approx(1e-3 - 256 / 600 * 9.8e-4, rel=1e-3)
    league = torch.load(league_run / "rllib_checkpoint" / "blackout_league.pt", weights_only=True)
    final = torch.load(league_run / "checkpoint.pt", weights_only=False)["model_state"]
    assert len(league) == 2 and all(torch.equal(league[-1][key], final[key]) for key in final)
    run_dir = _copy_run(league_run, tmp_path)
    overrides = ["--set", "opponents.mode=pool", "--set", "opponents.bot_fraction=0.5",
                 "--set", "opponents.bots=[heuristic]", "--set", "opponents.snapshot_every_updates=1",
                 "--set", "opponents.pool_size=2"]
    (run_dir / "rllib_checkpoint" / "blackout_league.pt").write_bytes(b"not a league")
    assert _resume(run_dir, "--set", "ppo.total_steps=1000", *overrides) == 2
    assert "blackout_league.pt' is corrupt" in capsys.readouterr().err
    shutil.copy(league_run / "rllib_checkpoint" / "blackout_league.pt", run_dir / "rllib_checkpoint")
    assert _resume(run_dir, "--set", "ppo.total_steps=1000", *overrides) == 0
    resumed = torch.load(run_dir / "rllib_checkpoint" / "blackout_league.pt", weights_only=True)
    assert len(resumed) == 2 and all(torch.equal(resumed[0][key], league[1][key]) for key in final)


def test_the_shared_module_is_the_only_module(rllib_run):
    import yaml

    saved = yaml.safe_load((rllib_run / "config.yaml").read_text())
    assert saved["algo"] == "rllib_ppo"
    module_dir = rllib_run / "rllib_checkpoint" / "learner_group" / "learner" / "rl_module"
    assert [p.name for p in module_dir.iterdir() if p.is_dir()] == [MODULE_ID]


def test_the_ppo_settings_map_onto_rllibs():
    from blackout_training.ppo.config import load_config
    from blackout_training.rllib.backend import build_algorithm_config

    config = load_config(TINY, ["algo=rllib_ppo", "ppo.rollout_steps=0", "ppo.anneal_lr=false"])
    rules = Rules.resolve(config.env.rules)
    algo_config = build_algorithm_config(config, rules)
    match = rules.decisions_per_match  # decisions of one match
    assert algo_config.train_batch_size_per_learner == config.env.num_envs * match
    assert algo_config.minibatch_size == config.env.num_envs * match // config.ppo.num_minibatches
    assert algo_config.num_epochs == config.ppo.update_epochs
    assert (algo_config.lr, algo_config.gamma, algo_config.lambda_) == (config.ppo.lr, config.ppo.gamma,
                                                                        config.ppo.gae_lambda)
    assert (algo_config.clip_param, algo_config.entropy_coeff) == (config.ppo.clip_coef, config.ppo.ent_coef)
    assert algo_config.count_steps_by == "agent_steps" and not algo_config.use_kl_loss
    assert algo_config.policy_mapping_fn("g3_s1", None) == MODULE_ID
    # a runner slower than RLlib's 60 s default must not have its samples discarded (no update would ever train)
    assert algo_config.sample_timeout_s is None
    # RLlib 2.60's runner re-converts every episode done within a sample() call at each later step (quadratic):
    # ours converts each once, on return
    assert algo_config.episodes_to_numpy is False and algo_config.env_runner_cls is NumpyOnceEnvRunner
    annealed = build_algorithm_config(load_config(TINY, ["algo=rllib_ppo"]), rules)
    # scheduled by the learner's decisions (in a league an env step holds a varying number of them)
    assert annealed.lr == [[0, config.ppo.lr], [config.ppo.total_steps, config.ppo.lr * 0.02]]
    assert annealed.learner_class is DecisionScheduledPPOLearner


def test_a_folder_holding_something_else_is_refused_before_ray_starts(tmp_path, capsys):
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "notes.txt").write_text("mine")
    code = main(["train", "--config", TINY, "--set", "algo=rllib_ppo", "--set", f"run.out_dir={tmp_path}"])
    assert code == 2
    assert "is not empty and holds no run" in capsys.readouterr().err
    assert [p.name for p in (tmp_path / "tiny").iterdir()] == ["notes.txt"]
