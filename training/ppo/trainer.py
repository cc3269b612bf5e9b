"""PPO self-play with action masks on the batched engine, in one file (after CleanRL's ``ppo.py``).

Read it top to bottom: every check before anything is written, the run folder
and seeding, the environment and the network, then the training loop: a
rollout of ``rollout_steps`` batched steps with per-seat rewards and generalised
advantage estimation (``blackout_training.ppo.sampler``, over ``blackout_training.ppo.returns``),
the clipped PPO update (:func:`ppo_update`, below :func:`train`), logging, checkpoints and
duplicate-deal evaluation against a baseline policy.

Where the rollout runs: ``algo: ppo``, in this process (one
:class:`~blackout_training.ppo.sampler.Sampler`); ``algo: ppo_ray``, in Ray actors on this
machine or a cluster (``blackout_training.ppo.ray_samplers``), each returning its
trainable decisions as arrays. Everything else, the update included, is this file.

Multi-agent bookkeeping. At every step one seat acts in each game. Each
(game, seat) pair is its own stream of decisions: a decision's reward is the
hand score that seat receives before its next decision, and a hand's end cuts
the stream. The last decision of a stream still open when the rollout ends
bootstraps the decisions before it and is left out of the update. The pure
function :func:`blackout_training.ppo.returns.seat_returns` does all of it.

Opponents (``blackout_training.ppo.opponents``): ``self_play``, every seat is the
learner; ``pool``, the other seats are played by the learner, past snapshots
or baseline policies, redrawn at every hand.

The modules around it: ``config`` (the run's settings, validated), ``run_folder``
(checked, then written), ``logs`` (CSV and the learning-curve plot),
``policy_net`` (the network and checkpoints), ``sampler`` (the rollout),
``vec_env`` (the games), ``evaluate`` (duplicate deals).
"""

from __future__ import annotations

import copy
import json
import math
import random
import time
from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn

import numpy as np
import torch
from torch import nn

from blackout_env import Rules
from blackout_env.game.universal import observation_kind

from ..agents.policies import load_policy
from ..agents.policy_net import (
    ActorCritic,
    PolicyBot,
    SparseRows,
    check_not_diverged,
    load_checkpoint,
    make_model,
    save_checkpoint,
)
from ..cpu import TorchThreads
from ..evaluation.tournament import evaluate_against
from ..files import write_text_atomically
from .config import ConfigError, TrainConfig, check_learner_seats, config_to_dict
from .logs import EVAL_FIELDS, METRIC_FIELDS, RUN_DIVERGED, CsvLog, end_superseded, plot_learning_curve
from .run_folder import RunFolderError, TrainResult, check_run_folder
from .sampler import Sampler, SamplerLostError, make_env
from .transfer import universal_from_rules
from .vec_env import VecEnv

__all__ = [
    "RunFolderError", "SamplerLostError", "TrainResult", "UpdateStats", "minute_checkpoint", "ppo_update",
    "resolve_device", "train",
]


def minute_checkpoint(run_dir: Any, minutes: float) -> Any:
    """Where ``run.checkpoint_minutes`` keeps the network as it was at ``minutes`` of training."""
    return run_dir / f"checkpoint-{minutes:g}min.pt"


def resolve_device(name: str) -> torch.device:
    """``auto``: CUDA when present, else the CPU; otherwise the named device (checked)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"run.device: {name!r} asked, but torch sees no CUDA device")
    return device


def _load_named(key: str, spec: str, rules: Rules, seed: int | None = None) -> Any:
    try:
        return load_policy(spec, rules, seed)
    except ValueError as error:
        raise ConfigError(f"{key}: {error}") from None


RESUME_STATE = ("optimizer_state", "update", "global_step", "elapsed_s", "numpy_rng_state", "torch_rng_state")


def _check_resumable(path: Any, resumed: tuple[ActorCritic, Rules, dict[str, Any]], wanted: dict[str, Any]) -> None:
    """Refuse a run folder's checkpoint that is not this run's training checkpoint (before anything is written)."""
    extra = resumed[2].get("extra")
    missing = [key for key in RESUME_STATE if not isinstance(extra, dict) or key not in extra]
    if missing:
        raise ConfigError(
            f"--resume: {path} holds no training state ({', '.join(missing)} missing): a weights-only export or a "
            f"checkpoint-*min.pt copy, not the run's checkpoint.pt; start a new run with model.init_checkpoint instead"
        )
    if resumed[0].spec() != wanted:
        raise ConfigError(
            f"--resume: {path} is a network {resumed[0].spec()}, this run's config asks for {wanted}: "
            f"another run's checkpoint"
        )


def _check_training_state(path: Any, extra: dict[str, Any], new_model: Callable[[], ActorCritic]) -> None:
    """Refuse a checkpoint whose training state would not resume (damaged or edited), by trying each part
    on throwaway objects, before anything is written."""

    def refuse(what: str, error: Any = None) -> NoReturn:
        first = str(error).splitlines()[0] if error is not None and str(error) else ""  # (torch lists every tensor)
        detail = f" ({first})" if first else ""
        raise ConfigError(f"--resume: {path} is damaged: its {what}{detail}; the run folder was left as it was")

    for key in ("update", "global_step"):
        value = extra[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            refuse(f"{key} is {value!r}, not a count")
    elapsed = extra["elapsed_s"]
    if isinstance(elapsed, bool) or not isinstance(elapsed, (int, float)) or not (math.isfinite(elapsed) and elapsed >= 0):
        refuse(f"elapsed_s is {elapsed!r}, not a number of seconds")
    model = new_model()
    try:
        torch.optim.Adam(model.parameters(), lr=1e-3).load_state_dict(copy.deepcopy(extra["optimizer_state"]))
    except (AttributeError, KeyError, IndexError, TypeError, ValueError, RuntimeError) as error:
        refuse("optimizer state does not fit this run's network", error)
    try:
        np.random.default_rng().bit_generator.state = extra["numpy_rng_state"]
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        refuse("numpy generator state does not load", error)
    state = extra["torch_rng_state"]
    if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8 or state.shape != torch.get_rng_state().shape:
        refuse("torch generator state is not one (a uint8 tensor of torch's size)")
    pool = extra.get("pool", [])
    if not isinstance(pool, list):
        refuse(f"pool of past snapshots is a {type(pool).__name__}, not a list")
    for index, snapshot in enumerate(pool):
        try:
            model.load_state_dict(snapshot)
        except (AttributeError, KeyError, TypeError, ValueError, RuntimeError) as error:
            refuse(f"past snapshot {index} does not fit this run's network", error)


def train(
    config: TrainConfig,
    resume: bool = False,
    force: bool = False,
    vec_env: VecEnv | None = None,
    log: Any = print,
    on_update: Callable[[dict[str, Any]], None] | None = None,
) -> TrainResult:
    """Run (or continue) one PPO training run as configured; returns where it wrote and how it did.

    Every check (the rules, the device, the opponents, the evaluation policy, any
    checkpoint to start or resume from, the run folder) runs before the run
    folder is touched: a start that fails leaves nothing behind.
    """
    from torch.utils.tensorboard import SummaryWriter

    # --- every check, before anything is written
    try:
        rules = Rules.resolve(config.env.rules)
    except ValueError as error:
        raise ConfigError(f"env.rules: {error}") from None
    fewest_players = 3 if config.env.tables else rules.num_players  # a table distribution may seat 3
    check_learner_seats(config.opponents, fewest_players)
    device = resolve_device(config.run.device)
    model_cfg, ppo, opp_cfg = config.model, config.ppo, config.opponents
    eval_opponent = config.eval.opponent
    for name in config.eval.rules or [config.env.rules]:  # it plays every table of the evaluation
        try:
            table = Rules.resolve(name)
        except ValueError as error:
            raise ConfigError(f"eval.rules: {error}") from None
        _load_named("eval.opponent", eval_opponent, table)
    bots = [_load_named("opponents.bots", spec, rules, config.run.seed + j) for j, spec in enumerate(opp_cfg.bots)]

    def new_model() -> ActorCritic:
        return make_model(rules, model_cfg.hidden_sizes, model_cfg.arch, model_cfg.card_width,
                          config.env.observation, oracle=model_cfg.critic == "oracle").to(device)

    folder = check_run_folder(config, resume, force)
    run_dir, resuming, checkpoint_path = folder.path, folder.resuming, folder.checkpoint
    start = None  # a fine-tuning start: missing, corrupt, or another network fails here (a resume does not read it)
    if model_cfg.init_checkpoint and not resuming:
        start, _, _ = load_checkpoint(model_cfg.init_checkpoint, rules)
        if start.observation == "rules" and observation_kind(config.env.observation) == "universal":
            start = universal_from_rules(start, rules)  # the specialist's play, read from the universal vector
        wanted = new_model().spec()
        wanted.pop("oracle_size", None)  # (an oracle critic is training-only: a fresh one joins a checkpoint's network)
        if {key: value for key, value in start.spec().items() if key != "oracle_size"} != wanted:
            raise ConfigError(
                f"model.init_checkpoint: {model_cfg.init_checkpoint!r} is a network {start.spec()}, "
                f"the config asks for {wanted}"
            )
    resumed = load_checkpoint(checkpoint_path, rules) if resuming else None  # a corrupt one fails here
    if resumed is not None:
        _check_resumable(checkpoint_path, resumed, new_model().spec())
        _check_training_state(checkpoint_path, resumed[2]["extra"], new_model)
    distributed = config.algo == "ppo_ray"
    cluster = None
    if distributed:  # Ray joined or started, and the samplers known to fit, before anything is written
        if vec_env is not None:
            raise ConfigError("algo ppo_ray: each sampler makes its own games; a vec_env cannot be passed in")
        from .ray_samplers import RayCluster

        cluster = RayCluster.connect(config)
        env = None
    else:
        env = vec_env if vec_env is not None else make_env(config, rules)

    # --- the run folder: written from here on
    try:
        folder.create(config)
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    if folder.restart_note:
        log(folder.restart_note)

    # --- torch's threads: run.threads, or (auto) the cores other processes leave free, followed during the run
    threads = TorchThreads(config.run.threads)
    started_threads = threads.start()
    log(f"torch threads: {started_threads}" + (" (auto: the free cores, followed during the run)"
                                               if threads.fixed is None else ""))

    # --- seeding: one visible block; a resumed run reseeds from its saved generator states
    random.seed(config.run.seed)
    np.random.seed(config.run.seed)
    torch.manual_seed(config.run.seed)
    rng = np.random.default_rng(config.run.seed)

    # --- the network and its optimiser
    agent = new_model()
    optimizer = torch.optim.Adam(agent.parameters(), lr=ppo.lr, eps=1e-5)
    update, global_step, elapsed_before = 0, 0, 0.0
    if start is not None and not resuming:
        own = agent.state_dict()  # (the oracle critic's weights: the checkpoint's when it has one, else fresh)
        agent.load_state_dict({**own, **{k: v for k, v in start.state_dict().items() if k in own}})
        log(f"starting from the weights of {model_cfg.init_checkpoint}")
        if model_cfg.reset_bid_head:
            agent.reset_bid_head()
            log("bid head re-initialised (model.reset_bid_head)")
    saved = resumed[2]["extra"] if resumed is not None else None
    if resumed is not None:
        agent.load_state_dict(resumed[0].state_dict())
        optimizer.load_state_dict(saved["optimizer_state"])
        update, global_step, elapsed_before = saved["update"], saved["global_step"], saved["elapsed_s"]
        rng.bit_generator.state = saved["numpy_rng_state"]
        torch.set_rng_state(saved["torch_rng_state"])
        log(f"resuming {run_dir} at update {update}, {global_step:,} decisions")
    keep = update if resuming else None
    metrics_log = CsvLog(run_dir / "metrics.csv", METRIC_FIELDS, keep)
    eval_log = CsvLog(run_dir / "eval.csv", EVAL_FIELDS, keep)
    writer = SummaryWriter(str(run_dir / "tensorboard"), purge_step=global_step if resuming else None)

    last_eval = "-"
    progress = None
    if config.run.progress_bar:
        from tqdm import tqdm

        progress = tqdm(total=ppo.total_steps, initial=min(global_step, ppo.total_steps), unit="step",
                        dynamic_ncols=True, desc="train")
    time_limit_s = config.run.time_limit_minutes * 60.0
    started = time.perf_counter()
    steps_per_s = 0.0

    def elapsed() -> float:
        return elapsed_before + time.perf_counter() - started

    def progress_fraction() -> float:
        by_time = elapsed() / time_limit_s if time_limit_s > 0 else 0.0
        return min(1.0, max(global_step / ppo.total_steps, by_time))

    # --- the games and their opponents (blackout_training.ppo.sampler): in this process, or one sampler per Ray actor
    # (blackout_training.ppo.ray_samplers). Fresh deals on every (re)start, seeded by the run seed and the update reached.
    deal_seed = int(rng.integers(2**31))
    league: list[dict[str, torch.Tensor]] = list(saved.get("pool", [])) if saved is not None else []  # past snapshots
    if cluster is not None:
        samplers: Any = cluster.start_samplers(config, deal_seed, league, progress_fraction(), update, device, log)
    else:
        samplers = Sampler(config, rules, env, bots, new_model, rng, device, deal_seed, league, progress_fraction(),
                           on_step=threads.tick)
    started = time.perf_counter()  # (the samplers' start-up, seconds on a cluster, is not training time)

    def save(final: bool = False) -> None:
        save_checkpoint(
            checkpoint_path,
            agent,
            rules,
            extra={
                "update": update,
                "global_step": global_step,
                "elapsed_s": elapsed(),
                "optimizer_state": optimizer.state_dict(),
                "pool": league,
                "numpy_rng_state": rng.bit_generator.state,
                "torch_rng_state": torch.get_rng_state(),
                "config": config_to_dict(config),
                "final": final,
            },
        )

    eval_rules = config.eval.rules or [config.env.rules]

    def run_eval(deals: int, seed: int) -> dict[str, dict[str, Any]]:
        """One evaluation per rules of ``eval.rules`` (a universal network plays each)."""
        bot = PolicyBot(copy.deepcopy(agent).cpu(), rules, name="ppo", greedy=True)
        return {name: evaluate_against(bot, eval_opponent, Rules.resolve(name), deals, seed) for name in eval_rules}

    def record_eval(results: dict[str, dict[str, Any]], final: bool = False) -> None:
        nonlocal last_eval
        if final:
            eval_log.drop_final()  # (a resumed run's end replaces the one it had)
        for name, result in results.items():
            row = {"update": update, "global_step": global_step, "final": int(final), "rules": name,
                   "opponent": eval_opponent, **result}
            eval_log.append({k: row[k] for k in EVAL_FIELDS})
            tag = "eval" if len(results) == 1 else f"eval/{name}"
            writer.add_scalar(f"{tag}/agent_score_per_hand", result["agent_score"], global_step)
            writer.add_scalar(f"{tag}/opponent_score_per_hand", result["opponent_score"], global_step)
            writer.add_scalar(f"{tag}/difference", result["difference"], global_step)
            writer.add_scalar(f"{tag}/agent_bid_made_rate", result["agent_bid_made_rate"], global_step)
        last_eval = " ".join(f"{r['difference']:+.2f}±{r['difference_ci']:.2f}" for r in results.values())
        plot_learning_curve(eval_log.rows, run_dir / "learning_curve.png", eval_opponent)

    reported_changes = 0
    # (a resumed run keeps the marks it had not reached when it stopped)
    minute_marks = [m for m in sorted(set(config.run.checkpoint_minutes)) if m * 60.0 > elapsed_before]
    try:
        while global_step < ppo.total_steps and not (time_limit_s > 0 and elapsed() >= time_limit_s):
            lr_now = ppo.lr * (1.0 - progress_fraction()) if ppo.anneal_lr else ppo.lr
            optimizer.param_groups[0]["lr"] = max(lr_now, ppo.lr * 0.02)
            rollout_start = time.perf_counter()

            # -------------------------------- rollout, per-seat rewards and GAE (blackout_training.ppo.sampler)
            rollout = samplers.collect(agent, progress_fraction)
            update += 1
            if keep is not None and update == keep + 1:
                end_superseded(eval_log)
            global_step += rollout.decisions
            rollout_time = time.perf_counter() - rollout_start

            # ------------------------------------------------------------ PPO update
            stats = ppo_update(agent, optimizer, rollout, ppo, rng, device, tick=threads.tick)
            check_not_diverged(agent, RUN_DIVERGED, f"update {update}")  # (NaN weights would sample nonsense, then be saved)

            # --------------------------------------------------------------- logging
            update_time = time.perf_counter() - rollout_start
            decisions, hands_seen = rollout.decisions, rollout.hands
            steps_per_s = decisions / max(update_time, 1e-9)
            y_pred, y_true = rollout.values.cpu().numpy(), rollout.returns.cpu().numpy()
            var_y = np.var(y_true)
            explained = float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)
            row = {
                "update": update,
                "global_step": global_step,
                "elapsed_s": round(elapsed(), 2),
                "steps_per_s": round(steps_per_s, 1),
                "rollout_steps_per_s": round(decisions / max(rollout_time, 1e-9), 1),
                "lr": optimizer.param_groups[0]["lr"],
                "policy_loss": round(stats.policy_loss, 5),
                "value_loss": round(stats.value_loss, 5),
                "entropy": round(stats.entropy, 5),
                "approx_kl": round(stats.approx_kl, 6),
                "clip_fraction": round(stats.clip_fraction, 4),
                "explained_variance": round(explained, 4),
                "hands": hands_seen,
                "hand_score": round(rollout.hand_score_sum / hands_seen, 4) if hands_seen else "",
                "bid_made_rate": round(rollout.bids_made / hands_seen, 4) if hands_seen else "",
            }
            metrics_log.append(row)
            for key in METRIC_FIELDS[3:]:
                if row[key] != "" and key != "hands":
                    writer.add_scalar(f"train/{key}", float(row[key]), global_step)
            if on_update is not None:
                on_update({"update": update, "decisions": decisions, "rollout_s": rollout_time,
                           "update_s": update_time, "samplers": samplers.timings(), "threads": torch.get_num_threads()})
            while reported_changes < len(threads.changes):
                at, count = threads.changes[reported_changes]
                reported_changes += 1
                log(f"torch threads: {count} at {at:.0f} s (the cores other processes leave free changed)")

            if opp_cfg.mode == "pool" and update % opp_cfg.snapshot_every_updates == 0:
                league = [*league, {k: v.detach().cpu().clone() for k, v in agent.state_dict().items()}]
                league = league[-opp_cfg.pool_size :]
                samplers.set_league(league, progress_fraction())  # snapshot indices moved: every game redraws
            if config.eval.every_updates and update % config.eval.every_updates == 0:
                record_eval(run_eval(config.eval.deals, seed=config.run.seed + update))
            if update % config.run.checkpoint_every_updates == 0:
                save()
            while minute_marks and elapsed() >= minute_marks[0] * 60.0:  # the network as it was at M minutes
                save_checkpoint(minute_checkpoint(run_dir, minute_marks.pop(0)), agent, rules,
                                extra={"update": update, "global_step": global_step, "elapsed_s": elapsed(),
                                       "config": config_to_dict(config)})
            if progress is not None:
                progress.update(min(global_step, ppo.total_steps) - progress.n)
                progress.set_postfix_str(f"{steps_per_s:,.0f} steps/s, eval {last_eval}", refresh=False)
    except SamplerLostError as error:  # every finished update is kept: --resume goes on from the last one
        save()
        raise SamplerLostError(
            f"{error}. The run stopped after update {update} ({global_step:,} decisions), saved in "
            f"{checkpoint_path}: continue it with the same command and --resume"
        ) from None
    finally:
        samplers.close()
        if progress is not None:
            progress.close()

    # ------------------------------------------------------------------ the end
    save(final=True)
    final_eval = None
    if config.eval.final_deals:
        log(f"final evaluation: {config.eval.final_deals} duplicate deals against {eval_opponent}")
        per_rules = run_eval(config.eval.final_deals, seed=10_000_019 + config.run.seed)
        record_eval(per_rules, final=True)
        final_eval = dict(per_rules[eval_rules[0]])  # the first rules' result; every rules' under "per_rules"
        if len(eval_rules) > 1:
            final_eval["per_rules"] = per_rules
        write_text_atomically(run_dir / "final_eval.json", json.dumps({"opponent": eval_opponent, **final_eval}, indent=2))
    writer.close()
    return TrainResult(run_dir, checkpoint_path, global_step, update, steps_per_s, final_eval)


class UpdateStats(NamedTuple):
    """The last minibatch's losses and KL of an update, and the clip fraction over all its minibatches."""

    policy_loss: float
    value_loss: float
    entropy: float
    approx_kl: float
    clip_fraction: float


def ppo_update(
    agent: ActorCritic, optimizer: torch.optim.Optimizer, rollout: Any, ppo: Any, rng: np.random.Generator,
    device: torch.device, tick: Callable[[], None] | None = None,
) -> UpdateStats:
    """The clipped PPO update (CleanRL's) on one rollout's trainable decisions: ``update_epochs`` passes of
    ``num_minibatches`` shuffled minibatches, stopping early past ``target_kl``. ``tick`` is called before each
    minibatch (the thread count follows the free cores there)."""
    n_rows = len(rollout.actions)
    b_adv, b_returns, b_values = rollout.advantages, rollout.returns, rollout.values
    minibatch = max(1, math.ceil(n_rows / ppo.num_minibatches))
    clip_fracs: list[float] = []
    pg_loss = v_loss = entropy_loss = approx_kl = torch.tensor(0.0)
    for _epoch in range(ppo.update_epochs):
        order = torch.from_numpy(rng.permutation(n_rows)).to(device)
        for mb_start in range(0, n_rows, minibatch):
            if tick is not None:
                tick()
            idx = order[mb_start : mb_start + minibatch]
            # (index_select: the same rows as x[idx], gathered in half the time)
            mb_inputs = None if rollout.card_inputs is None else [x.index_select(0, idx) for x in rollout.card_inputs]
            mb_obs = None if rollout.obs is None else rollout.obs.index_select(0, idx)
            mb_sparse = None if rollout.sparse is None else SparseRows(*(x.index_select(0, idx) for x in rollout.sparse))
            mb_hidden = None if rollout.critic_inputs is None else rollout.critic_inputs.index_select(0, idx)
            _, new_logprob, entropy, new_value = agent.get_action_and_value(
                mb_obs, rollout.mask.index_select(0, idx), rollout.actions[idx], inputs=mb_inputs, sparse=mb_sparse,
                critic_inputs=mb_hidden,
            )
            if new_value.dim() == 2:  # an oracle critic and the view critic: both fit the same returns
                new_value, view_value = new_value[:, 0], new_value[:, 1]
                view_loss = 0.5 * ((view_value - b_returns[idx]) ** 2).mean()
            else:
                view_loss = 0.0
            log_ratio = new_logprob - rollout.logprobs[idx]
            ratio = log_ratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean()
                clip_fracs.append(((ratio - 1.0).abs() > ppo.clip_coef).float().mean().item())
            mb_adv = b_adv[idx]
            if ppo.norm_adv and len(idx) > 1:
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
            pg_loss = torch.max(-mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - ppo.clip_coef, 1 + ppo.clip_coef)).mean()
            if ppo.clip_vloss:
                v_clipped = b_values[idx] + torch.clamp(new_value - b_values[idx], -ppo.clip_coef, ppo.clip_coef)
                v_loss = 0.5 * torch.max((new_value - b_returns[idx]) ** 2, (v_clipped - b_returns[idx]) ** 2).mean()
            else:
                v_loss = 0.5 * ((new_value - b_returns[idx]) ** 2).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ppo.ent_coef * entropy_loss + ppo.vf_coef * (v_loss + view_loss)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), ppo.max_grad_norm)
            optimizer.step()
        if ppo.target_kl is not None and approx_kl.item() > ppo.target_kl:
            break
    clip_fraction = float(np.mean(clip_fracs)) if clip_fracs else 0.0
    return UpdateStats(pg_loss.item(), v_loss.item(), entropy_loss.item(), approx_kl.item(), clip_fraction)
