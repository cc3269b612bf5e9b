"""``algo: rllib_ppo``: PPO self-play on Ray RLlib, with the native trainer's run folder, logs and evaluation.

``blackout train --config configs/train/rllib.yaml`` runs this instead of
:mod:`blackout_training.ppo.trainer`. What is the same: the config file and ``--set``
overrides, the run folder ``run.out_dir/run.name`` (``config.yaml``,
``metrics.csv``, ``eval.csv``, ``learning_curve.png``, ``final_eval.json``,
``checkpoint.pt``), the network (``model``), the PPO settings (``ppo``) and the
duplicate-deal evaluation against a baseline bot (``eval``). What RLlib adds:
the sampling runs in ``rllib.num_env_runners`` Ray processes, on this machine
(Ray is started for the run) or on a cluster (``--ray-address``), and the run
folder also holds RLlib's own checkpoint (``rllib_checkpoint/``), from which
``blackout train --resume`` continues a stopped run: the learner's weights and
optimizer, RLlib's step counters, and the run's update, decision count (the
annealed ``lr`` goes on from it) and elapsed time; the deals are new ones.

Every seat of every game maps to one shared RLModule
(:class:`blackout_training.rllib.module.BlackoutRLModule`, the native network with
action masking): self-play. Each runner steps a
:class:`blackout_training.rllib.env.BatchedMultiAgentEnv` of ``env.num_envs`` games
(or, with ``rllib.env: aec``, RLlib's PettingZooEnv over the plain AEC env).

The PPO settings map onto RLlib's: one update trains on ``env.num_envs x
ppo.rollout_steps`` decisions (0: one whole match of every game, as the native
trainer), in ``ppo.num_minibatches`` minibatches for ``ppo.update_epochs`` epochs;
``lr`` (annealed linearly to 2% of it over ``ppo.total_steps`` decisions of the
learner with ``anneal_lr``, by :class:`~blackout_training.rllib.module.DecisionScheduledPPOLearner`), ``gamma``, ``gae_lambda``, ``clip_coef``, ``ent_coef``,
``vf_coef`` and ``max_grad_norm`` carry over; RLlib always normalises advantages
(over the whole batch, not per minibatch), has no KL early stop (``target_kl``
must be null) and no ``clip_vloss``. Not supported here yet: ``model.init_checkpoint``;
it is refused.

A league (``opponents.mode: pool``, the native trainer's settings): the other seats of each
game are drawn at every hand from the current learner, its past snapshots and
``opponents.bots``, and played inside the batched env (only the learner's seats are RLlib
agents). The driver takes a snapshot every ``opponents.snapshot_every_updates`` updates
and sends the newest ``opponents.pool_size`` to the runners; they are saved with the
RLlib checkpoint (``blackout_league.pt``) and come back on ``--resume``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
import time
from pathlib import Path
from typing import Any

from blackout_env import Rules

from ..files import write_text_atomically
from ..ppo.config import ConfigError, TrainConfig, check_learner_seats, config_to_dict
from ..ppo.ray_cluster import connect_ray, free_cpus_for, import_rllib

__all__ = ["load_rllib_policy", "train"]

PROGRESS_NAME = "blackout_progress.json"
"""Inside ``rllib_checkpoint/``: the run's update, decisions and elapsed seconds at that checkpoint."""
PROGRESS_KEYS = ("update", "global_step", "elapsed_s")
LEAGUE_NAME = "blackout_league.pt"
"""The league's past snapshots (pool mode), saved beside the progress in the RLlib checkpoint."""


def load_rllib_policy(argument: str | None, rules: Rules | None, seed: int | None) -> Any:
    """The policy spec "rllib:PATH" (``blackout_training.agents.policies``): the install hint when Ray is missing."""
    import_rllib("the policy rllib:PATH")
    from .module import load_rllib_policy as load

    return load(argument, rules, seed)


load_rllib_policy.path_argument = True  # "rllib:PATH" names a run folder or checkpoint


def _check_supported(config: TrainConfig) -> None:
    refused = {
        "opponents.mode: pool with rllib.env: aec (the league plays inside the batched env)":
            config.opponents.mode == "pool" and config.rllib.env != "batched",
        "model.init_checkpoint": bool(config.model.init_checkpoint),
        "ppo.target_kl (RLlib has no KL early stop; set it to null)": config.ppo.target_kl is not None,
        "ppo.clip_vloss": config.ppo.clip_vloss,
        "ppo.norm_adv: false (RLlib's PPO always normalises the advantages)": not config.ppo.norm_adv,
        "run.checkpoint_minutes (the run keeps its latest checkpoint only)": bool(config.run.checkpoint_minutes),
        "env.reward other than score and zero_sum": config.env.reward not in ("score", "zero_sum"),
    }
    for what, used in refused.items():
        if used:
            raise ConfigError(f"algo rllib_ppo does not support {what} yet")


def save_rllib_checkpoint(algo: Any, directory: Path, progress: dict[str, float], league: list | None = None) -> None:
    """RLlib's checkpoint of the whole algorithm plus the run's counters (and the league's snapshots, in pool
    mode), replacing the previous one.

    Written to ``NAME.tmp`` first and swapped in by renames, so a run killed mid-save keeps a
    whole checkpoint (:func:`read_progress` finishes an interrupted swap).
    """
    temp, old = directory.with_name(directory.name + ".tmp"), directory.with_name(directory.name + ".old")
    for stale in (temp, old):
        shutil.rmtree(stale, ignore_errors=True)
    algo.save_to_path(str(temp.resolve()))
    (temp / PROGRESS_NAME).write_text(json.dumps(progress), encoding="utf-8")
    if league is not None:
        import torch

        torch.save(league, temp / LEAGUE_NAME)
    if directory.exists():
        directory.rename(old)
    temp.rename(directory)
    shutil.rmtree(old, ignore_errors=True)


def read_league(run_dir: Path) -> list:
    """The league's past snapshots saved with the run's RLlib checkpoint (pool mode), for ``--resume``."""
    import torch

    from ..ppo.run_folder import RunFolderError
    from .module import RLLIB_CHECKPOINT_DIR

    path = run_dir / RLLIB_CHECKPOINT_DIR / LEAGUE_NAME
    try:
        league = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(league, list) or not all(isinstance(weights, dict) for weights in league):
            raise ValueError("not a list of state dicts")
    except FileNotFoundError:
        raise RunFolderError(f"cannot resume {str(run_dir)!r}: the league's snapshots ({str(path)!r}) are missing; "
                             "start over with --force") from None
    except Exception as error:  # torch.load raises many kinds on a damaged file
        raise RunFolderError(f"cannot resume {str(run_dir)!r}: {str(path)!r} is corrupt ({error})") from None
    return league


def read_progress(run_dir: Path) -> dict[str, float]:
    """The counters of the run's RLlib checkpoint, for ``--resume``; a RunFolderError names what is wrong."""
    from ..ppo.run_folder import RunFolderError
    from .module import RLLIB_CHECKPOINT_DIR

    directory = run_dir / RLLIB_CHECKPOINT_DIR
    if not directory.exists():  # killed between the two renames of a save: the new one is whole, else the old
        temp, old = directory.with_name(directory.name + ".tmp"), directory.with_name(directory.name + ".old")
        for candidate in (temp, old):
            if (candidate / PROGRESS_NAME).is_file():
                candidate.rename(directory)
                break
    path = directory / PROGRESS_NAME
    try:
        progress = json.loads(path.read_text(encoding="utf-8"))
        values = {key: progress[key] for key in PROGRESS_KEYS}
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 for v in values.values()):
            raise ValueError(f"counters must be numbers >= 0, got {values}")
    except FileNotFoundError:
        raise RunFolderError(
            f"cannot resume {str(run_dir)!r}: it holds no RLlib checkpoint ({str(path)!r} is missing); "
            "start over with --force"
        ) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise RunFolderError(f"cannot resume {str(run_dir)!r}: {str(path)!r} is corrupt ({error})") from None
    return {"update": int(values["update"]), "global_step": int(values["global_step"]),
            "elapsed_s": float(values["elapsed_s"])}


def decisions_per_update(config: TrainConfig, rules: Rules) -> int:
    """Decisions per PPO update: ``env.num_envs x ppo.rollout_steps`` (0: one whole match of every game)."""
    steps = config.ppo.rollout_steps or rules.decisions_per_match
    return config.env.num_envs * steps


def build_algorithm_config(config: TrainConfig, rules: Rules, seed_offset: int = 0) -> Any:
    """The RLlib ``PPOConfig`` of a training config (see the module docstring for the mapping).

    ``seed_offset`` moves the deals' seed (a resumed run plays new deals, not the first ones again).
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from .env import BatchedMultiAgentEnv, NumpyOnceEnvRunner, make_aec_env
    from .module import MODULE_ID, BlackoutRLModule, DecisionScheduledPPOLearner, module_config

    ppo, model = config.ppo, config.model
    batch = decisions_per_update(config, rules)
    rules_data = rules.to_dict()
    if config.rllib.env == "batched":
        env: Any = BatchedMultiAgentEnv
        env_config = {"rules": rules_data, "num_games": config.env.num_envs, "reward": config.env.reward,
                      "reward_scale": config.env.reward_scale, "seed": config.run.seed + seed_offset}
        if config.opponents.mode == "pool":  # the league plays inside the env
            env_config["opponents"] = dataclasses.asdict(config.opponents)
            env_config["model"] = {"hidden_sizes": list(model.hidden_sizes), "arch": model.arch,
                                   "card_width": model.card_width}
    else:
        from ray.tune.registry import register_env

        register_env("blackout_aec", make_aec_env)
        env, env_config = "blackout_aec", {"rules": rules_data, "reward": config.env.reward}
    lr: Any = ppo.lr
    if ppo.anneal_lr:  # by the learner's decisions (DecisionScheduledPPOLearner), as the native trainer
        lr = [[0, ppo.lr], [max(1, ppo.total_steps), ppo.lr * 0.02]]
    spec = RLModuleSpec(module_class=BlackoutRLModule,
                        model_config=module_config(rules, model.hidden_sizes, model.arch, model.card_width))
    return (
        PPOConfig()
        .environment(env, env_config=env_config, disable_env_checking=True)  # its checker steps unmasked actions
        .framework("torch")
        # sample_timeout_s=None: PPO waits for its batch. RLlib's default (60 s) discards a runner's samples that
        # take longer, so on a slow or busy machine every update came back empty and the run never advanced.
        # Episodes converted to numpy once per sample() call, not after every env step (NumpyOnceEnvRunner).
        .env_runners(num_env_runners=config.rllib.num_env_runners, num_cpus_per_env_runner=1, sample_timeout_s=None,
                     episodes_to_numpy=False, env_runner_cls=NumpyOnceEnvRunner)
        .learners(num_learners=0)
        .multi_agent(policies={MODULE_ID}, policy_mapping_fn=lambda agent_id, episode, **kwargs: MODULE_ID,
                     count_steps_by="agent_steps")
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE_ID: spec}))
        .training(
            learner_class=DecisionScheduledPPOLearner,
            train_batch_size_per_learner=batch, minibatch_size=max(1, batch // ppo.num_minibatches),
            num_epochs=ppo.update_epochs, lr=lr, gamma=ppo.gamma, lambda_=ppo.gae_lambda,
            clip_param=ppo.clip_coef, vf_clip_param=float("inf"), entropy_coeff=ppo.ent_coef,
            vf_loss_coeff=ppo.vf_coef, grad_clip=ppo.max_grad_norm, grad_clip_by="global_norm",
            use_kl_loss=False,
        )
        .debugging(seed=config.run.seed, log_sys_usage=False)  # (a psutil thread polling the driver's machine)
    )


def _learner_network(algo: Any) -> Any:
    """The shared module's network with the learner's current weights (a CPU copy)."""
    from .module import MODULE_ID

    module = algo.get_module(MODULE_ID)  # the local runner's copy: structure
    net = copy.deepcopy(module.net).cpu()
    state = algo.learner_group.get_state(components=f"learner/rl_module/{MODULE_ID}")
    weights = state["learner"]["rl_module"][MODULE_ID]
    import torch

    net.load_state_dict({key[len("net."):]: torch.as_tensor(value) for key, value in weights.items()})
    return net.eval()


def train(
    config: TrainConfig,
    resume: bool = False,
    force: bool = False,
    log: Any = print,
) -> Any:
    """Run one RLlib PPO training run as configured; returns a :class:`blackout_training.ppo.run_folder.TrainResult`."""
    ray = import_rllib()  # first: without Ray, the install hint (rllib_module imports ray)
    from blackout_env.agents.policies import load_policy

    from ..agents.policy_net import load_checkpoint
    from ..evaluation.tournament import evaluate_against
    from ..ppo.logs import EVAL_FIELDS, METRIC_FIELDS, RUN_DIVERGED, CsvLog, end_superseded, plot_learning_curve
    from ..ppo.run_folder import CHECKPOINT_NAME, TrainResult, check_run_folder
    from .module import RLLIB_CHECKPOINT_DIR

    # --- every check, before Ray starts and before anything is written
    _check_supported(config)
    try:
        rules = Rules.resolve(config.env.rules)
    except ValueError as error:
        raise ConfigError(f"env.rules: {error}") from None
    pool_bots = config.opponents.bots if config.opponents.mode == "pool" else []
    if config.opponents.mode == "pool":
        check_learner_seats(config.opponents, rules.num_players)
    if config.run.device.startswith("cuda"):
        raise ConfigError("algo rllib_ppo: run.device cuda is not wired yet; use auto or cpu (the learner runs on the CPU)")
    for key, spec in [("eval.opponent", config.eval.opponent)] + [("opponents.bots", bot) for bot in pool_bots]:
        try:
            load_policy(spec, rules)
        except ValueError as error:
            raise ConfigError(f"{key}: {error}") from None
    folder = check_run_folder(config, resume, force)
    run_dir = folder.path
    resumed_at = {key: 0 for key in PROGRESS_KEYS}
    league: list | None = [] if config.opponents.mode == "pool" else None  # past snapshots' weights
    if folder.resuming:  # a missing or corrupt checkpoint fails here, before Ray starts
        resumed_at = read_progress(run_dir)
        if league is not None:
            league = read_league(run_dir)
        load_checkpoint(folder.checkpoint, rules)
    started_ray = connect_ray(config.rllib.address, config.rllib.num_cpus)
    try:
        # one CPU per env runner (RLlib would wait for ever for runners it cannot place), before the folder is made
        runners = config.rllib.num_env_runners
        free_cpus_for(runners, config.rllib.address, started_ray, f"rllib.num_env_runners: {runners} env runners",
                      "use fewer env runners, or more CPUs (rllib.num_cpus here)")
        from torch.utils.tensorboard import SummaryWriter

        from ..agents.policy_net import PolicyBot, check_not_diverged, save_checkpoint
        from .module import MODULE_ID

        update, global_step = int(resumed_at["update"]), int(resumed_at["global_step"])
        algo_config = build_algorithm_config(config, rules, seed_offset=1_000_003 * update)  # resumed: new deals
        folder.create(config)
        if folder.restart_note:
            log(folder.restart_note)
        from ..cpu import TorchThreads

        log(f"learner torch threads: {TorchThreads(config.run.threads).start()}")
        algo = algo_config.build_algo()
        if folder.resuming:
            # The learner's weights and optimizer and RLlib's counters (the lr schedule reads them);
            # then the runners sample with the restored weights.
            algo.restore_from_path(str((run_dir / RLLIB_CHECKPOINT_DIR).resolve()))
            algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)
            log(f"resuming {run_dir} at update {update}, {global_step:,} decisions")

        def run_fraction() -> float:  # as the native trainer: by steps or by the time limit, whichever is further
            by_time = (time.perf_counter() - started) / time_limit_s if time_limit_s > 0 else 0.0
            return min(1.0, max(global_step / max(config.ppo.total_steps, 1), by_time))

        def send_league(snapshots: list | None) -> None:  # to every runner's envs; used from their next hand
            fraction = run_fraction()
            algo.env_runner_group.foreach_env_runner(lambda runner: runner.set_league(snapshots, fraction))
        keep = update if folder.resuming else None
        metrics_log = CsvLog(run_dir / "metrics.csv", METRIC_FIELDS, keep)
        eval_log = CsvLog(run_dir / "eval.csv", EVAL_FIELDS, keep)
        writer = SummaryWriter(str(run_dir / "tensorboard"), purge_step=global_step if folder.resuming else None)
        checkpoint_path = run_dir / CHECKPOINT_NAME
        eval_opponent = config.eval.opponent
        time_limit_s = config.run.time_limit_minutes * 60.0
        steps_per_s = 0.0
        started = time.perf_counter() - resumed_at["elapsed_s"]
        progress = None
        if config.run.progress_bar:
            from tqdm import tqdm

            progress = tqdm(total=config.ppo.total_steps, unit="step", dynamic_ncols=True, desc="train (rllib)")
        last_eval = "-"
        if league:
            send_league(league)

        def save() -> None:
            counters = {"update": update, "global_step": global_step, "elapsed_s": time.perf_counter() - started}
            network = _learner_network(algo)
            check_not_diverged(network, RUN_DIVERGED, f"update {update}")  # (before either checkpoint is replaced)
            save_rllib_checkpoint(algo, run_dir / RLLIB_CHECKPOINT_DIR, counters, league)
            save_checkpoint(checkpoint_path, network, rules, extra={
                **counters, "config": config_to_dict(config), "algo": "rllib_ppo",
            })

        def run_eval(deals: int, seed: int, final: bool = False) -> dict[str, Any]:
            nonlocal last_eval
            bot = PolicyBot(_learner_network(algo), rules, name="ppo", greedy=True)
            result = evaluate_against(bot, eval_opponent, rules, deals, seed)
            row = {"update": update, "global_step": global_step, "final": int(final), "rules": config.env.rules,
                   "opponent": eval_opponent, **result}
            if final:
                eval_log.drop_final()  # (a resumed run's end replaces the one it had)
            eval_log.append({k: row[k] for k in EVAL_FIELDS})
            for key in ("agent_score", "opponent_score", "difference", "agent_bid_made_rate"):
                writer.add_scalar(f"eval/{key}", result[key], global_step)
            last_eval = f"{result['difference']:+.2f}±{result['difference_ci']:.2f}"
            plot_learning_curve(eval_log.rows, run_dir / "learning_curve.png", eval_opponent)
            return result

        while global_step < config.ppo.total_steps and not (
            time_limit_s > 0 and time.perf_counter() - started >= time_limit_s
        ):
            update += 1
            if keep is not None and update == keep + 1:
                end_superseded(eval_log)
            iteration_start = time.perf_counter()
            sampled = global_step + decisions_per_update(config, rules)  # the learner's schedules read it
            algo.learner_group.foreach_learner(lambda learner, n=sampled: setattr(learner, "decisions", n))
            result = algo.train()
            iteration_time = time.perf_counter() - iteration_start
            runners, learner = result.get("env_runners", {}), result.get("learners", {}).get(MODULE_ID, {})
            decisions = int(runners.get("num_module_steps_sampled", {}).get(MODULE_ID, 0))
            global_step += decisions
            steps_per_s = decisions / max(iteration_time, 1e-9)
            sample_time = result.get("timers", {}).get("env_runner_sampling_timer")  # (RLlib's smoothed timer)
            hand_score: Any = ""
            returns = runners.get("module_episode_returns_mean", {})
            if config.rllib.env == "batched" and config.env.reward == "score" and isinstance(returns, dict) \
                    and MODULE_ID in returns and config.env.reward_scale and league is None:
                seats = config.env.num_envs * rules.num_players  # one episode: one hand of every seat of every game
                hand_score = round(float(returns[MODULE_ID]) / seats / config.env.reward_scale, 4)
            row = {
                "update": update,
                "global_step": global_step,
                "elapsed_s": round(time.perf_counter() - started, 2),
                "steps_per_s": round(steps_per_s, 1),
                "rollout_steps_per_s": round(decisions / sample_time, 1) if sample_time else "",
                "lr": learner.get("default_optimizer_learning_rate", ""),
                "policy_loss": _rounded(learner.get("policy_loss")),
                "value_loss": _rounded(learner.get("vf_loss_unclipped", learner.get("vf_loss"))),
                "entropy": _rounded(learner.get("entropy")),
                "approx_kl": _rounded(learner.get("mean_kl_loss"), 6),
                "clip_fraction": "",
                "explained_variance": _rounded(learner.get("vf_explained_var"), 4),
                "hands": "",
                "hand_score": hand_score,
                "bid_made_rate": "",
            }
            metrics_log.append(row)
            if league is not None:  # pool mode: a new snapshot every snapshot_every_updates; the run's progress
                new_snapshot = update % config.opponents.snapshot_every_updates == 0
                if new_snapshot:
                    weights = {k: v.detach().clone() for k, v in _learner_network(algo).state_dict().items()}
                    league = [*league, weights][-config.opponents.pool_size:]
                if new_snapshot or config.opponents.bots_only_after < 1:
                    send_league(league if new_snapshot else None)
            for key in METRIC_FIELDS[3:]:
                if row[key] != "":
                    writer.add_scalar(f"train/{key}", float(row[key]), global_step)
            if config.eval.every_updates and update % config.eval.every_updates == 0 and config.eval.deals:
                run_eval(config.eval.deals, seed=config.run.seed + update)
            if update % config.run.checkpoint_every_updates == 0:
                save()
            if progress is not None:
                progress.update(min(global_step, config.ppo.total_steps) - progress.n)
                progress.set_postfix_str(f"{steps_per_s:,.0f} steps/s, eval {last_eval}", refresh=False)

        if progress is not None:
            progress.close()
        save()
        final_eval = None
        if config.eval.final_deals:
            log(f"final evaluation: {config.eval.final_deals} duplicate deals against {eval_opponent}")
            final_eval = run_eval(config.eval.final_deals, seed=10_000_019 + config.run.seed, final=True)
            write_text_atomically(run_dir / "final_eval.json",
                                  json.dumps({"opponent": eval_opponent, **final_eval}, indent=2))
        writer.close()
        algo.stop()
        return TrainResult(Path(run_dir), checkpoint_path, global_step, update, steps_per_s, final_eval)
    finally:
        if started_ray:
            ray.shutdown()


def _rounded(value: Any, digits: int = 5) -> Any:
    return "" if value is None else round(float(value), digits)
