"""PPO self-play with action masks on the batched engine, in one file (after CleanRL's ``ppo.py``).

Read it top to bottom: the run folder and seeding, the environment and the
network, then the training loop: a rollout of ``rollout_steps`` batched steps,
generalised advantage estimation per seat, the clipped PPO update, logging,
checkpoints and duplicate-deal evaluation against a baseline bot.

Multi-agent bookkeeping. At every step one seat acts in each game. Each
(game, seat) pair is its own stream of decisions: a decision's reward is the
hand score that seat receives before its next decision, and a hand's end cuts
the stream (hands are scored independently, so the value of a decision is the
score of its own hand; ``gamma`` only discounts within a hand). The last
decision of a stream still open when the rollout ends has no successor yet; it
bootstraps the decisions before it through its value and is itself left out
of the update (it is never trained on: its reward is not known yet).

Opponents. ``self_play``: every seat is the learner and every decision is
training data. ``pool``: one seat per game is the learner; each other seat is
played by the current learner or by a past snapshot from the pool (sampled,
not greedy), redrawn at every hand; only the learner's decisions are data.
"""

from __future__ import annotations

import copy
import csv
import json
import math
import os
import random
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from blackout_baselines import make_bot
from torch import nn

from blackout_env import Rules, encoding

from .config import ConfigError, TrainConfig, config_from_dict, config_to_dict
from .policy_net import ActorCritic, PolicyBot, load_checkpoint, make_model, save_checkpoint
from .returns import hand_rewards, seat_returns
from .vec_env import VecEnv, make_vec_env

__all__ = ["RunFolderError", "TrainResult", "resolve_device", "train"]

CHECKPOINT_NAME = "checkpoint.pt"
CONFIG_NAME = "config.yaml"
# Keys a resumed run may change: how long and where it runs, not what it learns.
RESUMABLE_CHANGES = {
    "run.time_limit_minutes",
    "run.device",
    "run.threads",
    "run.progress_bar",
    "ppo.total_steps",
    "eval.final_deals",
}
METRIC_FIELDS = [
    "update", "global_step", "elapsed_s", "steps_per_s", "rollout_steps_per_s", "lr", "policy_loss", "value_loss", "entropy",
    "approx_kl", "clip_fraction", "explained_variance", "hands", "hand_score", "bid_made_rate",
]  # fmt: skip
EVAL_FIELDS = [
    "update", "global_step", "final", "opponent", "deals", "agent_score", "agent_ci", "opponent_score",
    "difference", "difference_ci", "agent_bid_made_rate",
]  # fmt: skip


class RunFolderError(ValueError):
    """A run folder that holds another run, or nothing to resume."""


@dataclass
class TrainResult:
    """What a finished (or time-limited) run reports."""

    run_dir: Path
    checkpoint: Path
    global_step: int
    updates: int
    steps_per_s: float
    final_eval: dict[str, Any] | None


def resolve_device(name: str) -> torch.device:
    """``auto``: CUDA when present, else the CPU; otherwise the named device (checked)."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(f"run.device: {name!r} asked, but torch sees no CUDA device")
    return device


# ------------------------------------------------------------------ run folder
def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def prepare_run_folder(config: TrainConfig, resume: bool, force: bool) -> tuple[Path, bool]:
    """The run folder, checked: returns ``(folder, resuming)``.

    A folder that already holds a run is refused unless ``resume`` (same config,
    up to :data:`RESUMABLE_CHANGES`) or ``force`` (the old run is deleted).
    A non-empty folder that is not a run folder is never deleted.
    """
    import yaml

    run_dir = Path(config.run.out_dir) / config.run.name
    saved_config = run_dir / CONFIG_NAME
    holds_run = saved_config.is_file()
    if resume and force:
        raise RunFolderError("--resume and --force contradict each other: continue the run, or start it over")
    if run_dir.exists() and not run_dir.is_dir():
        raise RunFolderError(f"run folder {str(run_dir)!r} is a file")
    if resume:
        if not holds_run:
            raise RunFolderError(f"nothing to resume: {str(run_dir)!r} holds no run ({CONFIG_NAME} missing)")
        try:
            saved = config_from_dict(yaml.safe_load(saved_config.read_text(encoding="utf-8")))
        except (ValueError, yaml.YAMLError) as error:
            raise RunFolderError(f"cannot resume {str(run_dir)!r}: its {CONFIG_NAME} is invalid: {error}") from None
        old, new = _flatten(config_to_dict(saved)), _flatten(config_to_dict(config))
        changed = [key for key in sorted(old) if old[key] != new.get(key) and key not in RESUMABLE_CHANGES]
        if changed:
            key = changed[0]
            raise RunFolderError(
                f"cannot resume {str(run_dir)!r} with another config: {key} was {old[key]!r}, now {new[key]!r} "
                f"(only {', '.join(sorted(RESUMABLE_CHANGES))} may change)"
            )
        return run_dir, (run_dir / CHECKPOINT_NAME).is_file()
    if run_dir.is_dir() and any(run_dir.iterdir()):
        if not holds_run:
            raise RunFolderError(f"{str(run_dir)!r} is not empty and holds no run; choose another run.name or out_dir")
        if not force:
            raise RunFolderError(
                f"{str(run_dir)!r} already holds a run; pass --resume to continue it or --force to start over"
            )
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir, False


def _write_config(run_dir: Path, config: TrainConfig) -> None:
    import yaml

    text = "# The resolved config of this run (defaults and --set overrides applied).\n"
    text += yaml.safe_dump(config_to_dict(config), sort_keys=False)
    temp = run_dir / f".{CONFIG_NAME}.tmp"
    temp.write_text(text, encoding="utf-8")
    os.replace(temp, run_dir / CONFIG_NAME)


class CsvLog:
    """An append-only CSV file; on resume, rows after the checkpoint's update are dropped."""

    def __init__(self, path: Path, fields: list[str], keep_through_update: int | None) -> None:
        self.path, self.fields = path, fields
        rows: list[dict[str, str]] = []
        if keep_through_update is not None and path.is_file():
            with path.open(newline="", encoding="utf-8") as file:
                rows = [row for row in csv.DictReader(file) if int(row["update"]) <= keep_through_update]
        with path.open("w", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
        self.rows = rows

    def append(self, row: dict[str, Any]) -> None:
        with self.path.open("a", newline="", encoding="utf-8") as file:
            csv.DictWriter(file, fieldnames=self.fields).writerow(row)
        self.rows.append({k: str(v) for k, v in row.items()})


# ------------------------------------------------------------------ evaluation
def evaluate_against(bot: PolicyBot, opponent: str, rules: Rules, deals: int, seed: int) -> dict[str, Any]:
    """Duplicate-deal evaluation (``blackout_training.evaluate``): ``bot`` in one seat, ``opponent`` bots in the others.

    Returns the agent's and the opponents' mean score per hand, the 95% interval
    half-widths, the paired difference (agent minus opponent) and the agent's bid-made rate.
    """
    from .evaluate import evaluate

    result = evaluate({"ppo": bot, opponent: opponent}, rules=rules, deals=deals, seed=seed)
    agent, other = result.stats("ppo"), result.stats(opponent)
    difference = result.difference("ppo", opponent)
    return {
        "deals": deals,
        "agent_score": round(agent.mean_score_per_hand, 4),
        "agent_ci": round(agent.score_ci95 or 0.0, 4),
        "opponent_score": round(other.mean_score_per_hand, 4),
        "difference": round(difference["mean"], 4),
        "difference_ci": round(difference["ci95"] or 0.0, 4),
        "agent_bid_made_rate": round(agent.bid_made_rate, 4),
    }


def plot_learning_curve(rows: list[dict[str, str]], path: Path, opponent: str) -> None:
    """Score per hand of the agent and of the opponent bots over training, with 95% intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    periodic = [r for r in rows if r.get("final") != "1"]
    final = [r for r in rows if r.get("final") == "1"]

    def column(selected: list[dict[str, str]], key: str) -> np.ndarray:
        return np.array([float(r[key]) for r in selected])

    fig, ax = plt.subplots(figsize=(7, 4))
    steps, agent, agent_ci = column(periodic, "global_step"), column(periodic, "agent_score"), column(periodic, "agent_ci")
    ax.plot(steps, agent, marker="o", label="PPO agent")
    ax.fill_between(steps, agent - agent_ci, agent + agent_ci, alpha=0.2)
    ax.plot(steps, column(periodic, "opponent_score"), marker="s", label=f"{opponent} (the other seats)")
    if final:
        ax.errorbar(column(final, "global_step"), column(final, "agent_score"), yerr=column(final, "agent_ci"),
                    fmt="*", markersize=12, color="C0", label="PPO agent, final evaluation")
        ax.plot(column(final, "global_step"), column(final, "opponent_score"), "*", markersize=12, color="C1")
    ax.set_xlabel("training decisions")
    ax.set_ylabel("score per hand (duplicate deals)")
    ax.set_title(f"Learning curve: 1 agent vs {opponent} bots")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    temp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(temp, dpi=100)
    plt.close(fig)
    os.replace(temp, path)


# ------------------------------------------------------------------ training
def train(
    config: TrainConfig,
    resume: bool = False,
    force: bool = False,
    vec_env: VecEnv | None = None,
    log: Any = print,
) -> TrainResult:
    """Run (or continue) one PPO training run as configured; returns where it wrote and how it did."""
    from torch.utils.tensorboard import SummaryWriter

    rules = Rules.resolve(config.env.rules)
    if max(config.opponents.learner_seats) >= rules.num_players:
        raise ConfigError(
            f"opponents.learner_seats: each count must be 1..{rules.num_players - 1} with {rules.num_players} "
            f"players (the learner leaves at least one seat to its opponents), got {config.opponents.learner_seats}"
        )
    device = resolve_device(config.run.device)
    model_cfg = config.model

    def new_model() -> ActorCritic:
        return make_model(rules, model_cfg.hidden_sizes, model_cfg.arch, model_cfg.card_width).to(device)

    # A fine-tuning start that is missing, corrupt, or another network fails here, before the run folder is made.
    start = None
    if model_cfg.init_checkpoint:
        start, _, _ = load_checkpoint(model_cfg.init_checkpoint, rules)
        wanted = make_model(rules, model_cfg.hidden_sizes, model_cfg.arch, model_cfg.card_width).spec()
        if start.spec() != wanted:
            raise ConfigError(
                f"model.init_checkpoint: {model_cfg.init_checkpoint!r} is a network {start.spec()}, "
                f"the config asks for {wanted}"
            )
    run_dir, resuming = prepare_run_folder(config, resume, force)
    _write_config(run_dir, config)
    checkpoint_path = run_dir / CHECKPOINT_NAME
    ppo, opp_cfg = config.ppo, config.opponents
    n_envs, n_players = config.env.num_envs, rules.num_players
    # 0: one whole match per rollout (the bids and plays of every hand), so each update sees every hand size
    T = ppo.rollout_steps or sum(n_players * (1 + size) for size in rules.hand_sizes)

    # --- seeding: one visible block; a resumed run reseeds from its saved generator states
    torch.set_num_threads(config.run.threads)
    random.seed(config.run.seed)
    np.random.seed(config.run.seed)
    torch.manual_seed(config.run.seed)
    rng = np.random.default_rng(config.run.seed)

    # --- the network and its optimiser
    obs_size, num_actions = encoding.observation_size(rules), rules.num_actions
    agent = new_model()
    optimizer = torch.optim.Adam(agent.parameters(), lr=ppo.lr, eps=1e-5)
    pool: list[dict[str, torch.Tensor]] = []  # past snapshots' weights (pool mode)
    update, global_step, elapsed_before = 0, 0, 0.0
    if start is not None and not resuming:
        agent.load_state_dict(start.state_dict())
        log(f"starting from the weights of {model_cfg.init_checkpoint}")
    if resuming:
        model, _, payload = load_checkpoint(checkpoint_path, rules)
        state = payload["extra"]
        agent.load_state_dict(model.state_dict())
        optimizer.load_state_dict(state["optimizer_state"])
        update, global_step, elapsed_before = state["update"], state["global_step"], state["elapsed_s"]
        pool = list(state["pool"])
        rng.bit_generator.state = state["numpy_rng_state"]
        torch.set_rng_state(state["torch_rng_state"])
        log(f"resuming {run_dir} at update {update}, {global_step:,} decisions")
    keep = update if resuming else None
    metrics_log = CsvLog(run_dir / "metrics.csv", METRIC_FIELDS, keep)
    eval_log = CsvLog(run_dir / "eval.csv", EVAL_FIELDS, keep)
    writer = SummaryWriter(str(run_dir / "tensorboard"), purge_step=global_step if resuming else None)

    # --- the games: fresh deals on every (re)start, seeded by the run seed and the update reached
    env = vec_env if vec_env is not None else make_vec_env(rules, n_envs, config.env.backend)
    n_envs = env.num_envs
    batch = env.reset(seed=int(rng.integers(2**31)))
    # Pool mode: the learner's seats in each game (redrawn with the opponents at every hand).
    learner_at = np.arange(n_players) == (np.arange(n_envs) % n_players)[:, None]
    # Who plays the other seats of each game: -1 the current learner (self-play), 0..K-1 pool[k], K + j bots[j].
    opponent_id = np.full(n_envs, -1)
    opponents: list[ActorCritic] = []
    bots = [make_bot(name, seed=config.run.seed + j) for j, name in enumerate(opp_cfg.bots)]

    def refresh_opponents() -> None:
        opponents.clear()
        for weights in pool:
            net = new_model()
            net.load_state_dict(weights)
            opponents.append(net.eval())

    def draw_opponents(games: np.ndarray) -> None:
        if opp_cfg.mode == "self_play" or len(games) == 0:
            return
        u = rng.random(len(games))
        bot_fraction = 1.0 if progress_fraction() >= opp_cfg.bots_only_after else opp_cfg.bot_fraction
        is_bot = u >= 1.0 - bot_fraction
        is_past = ~is_bot & (u >= opp_cfg.latest_fraction) & (len(pool) > 0)
        choice = np.full(len(games), -1)
        choice[is_past] = rng.integers(max(len(pool), 1), size=int(is_past.sum()))
        if bots:
            choice[is_bot] = len(pool) + rng.integers(len(bots), size=int(is_bot.sum()))
        opponent_id[games] = choice
        # k learner seats per game, k drawn from learner_seats: the seats with the k smallest random keys
        counts = np.asarray(opp_cfg.learner_seats)[rng.integers(len(opp_cfg.learner_seats), size=len(games))]
        keys = rng.random((len(games), n_players))
        ranks = keys.argsort(axis=1).argsort(axis=1)
        learner_at[games] = ranks < counts[:, None]

    # --- rollout storage: one slot per (step, game); `recorded` marks the learner's decisions
    obs_buf = torch.zeros((T, n_envs, obs_size), device=device)
    mask_buf = torch.zeros((T, n_envs, num_actions), dtype=torch.bool, device=device)
    action_buf = torch.zeros((T, n_envs), dtype=torch.long, device=device)
    logprob_buf = torch.zeros((T, n_envs), device=device)
    value_buf = np.zeros((T, n_envs), dtype=np.float32)
    player_buf = np.zeros((T, n_envs), dtype=np.int64)  # the seat that acted
    hand_over_buf = np.zeros((T, n_envs), dtype=bool)  # the game's hand ended with this step
    hand_score_buf = np.zeros((T, n_envs, n_players), dtype=np.float32)  # ... and each seat's score for it
    recorded = np.zeros((T, n_envs), dtype=bool)
    # The "cards" network's per-card inputs depend on the observation only: computed once when acting, kept for
    # the update's epochs (about 40 MB for the default run).
    cached_inputs: list[torch.Tensor] | None = None

    eval_opponent = config.eval.opponent
    last_eval = "-"
    progress = None
    if config.run.progress_bar:
        from tqdm import tqdm

        progress = tqdm(total=ppo.total_steps, initial=min(global_step, ppo.total_steps), unit="step",
                        dynamic_ncols=True, desc="train")
    time_limit_s = config.run.time_limit_minutes * 60.0
    started = time.perf_counter()
    steps_per_s = 0.0
    hand_score_sum, hands_seen, bids_made = 0.0, 0, 0
    games = np.arange(n_envs)

    def elapsed() -> float:
        return elapsed_before + time.perf_counter() - started

    def progress_fraction() -> float:
        by_time = elapsed() / time_limit_s if time_limit_s > 0 else 0.0
        return min(1.0, max(global_step / ppo.total_steps, by_time))

    refresh_opponents()
    draw_opponents(games)

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
                "pool": pool,
                "numpy_rng_state": rng.bit_generator.state,
                "torch_rng_state": torch.get_rng_state(),
                "config": config_to_dict(config),
                "final": final,
            },
        )

    def run_eval(deals: int, seed: int) -> dict[str, Any]:
        bot = PolicyBot(copy.deepcopy(agent).cpu(), rules, name="ppo", greedy=True)
        return evaluate_against(bot, eval_opponent, rules, deals, seed)

    def record_eval(result: dict[str, Any], final: bool = False) -> None:
        nonlocal last_eval
        row = {"update": update, "global_step": global_step, "final": int(final), "opponent": eval_opponent, **result}
        eval_log.append({k: row[k] for k in EVAL_FIELDS})
        writer.add_scalar("eval/agent_score_per_hand", result["agent_score"], global_step)
        writer.add_scalar("eval/opponent_score_per_hand", result["opponent_score"], global_step)
        writer.add_scalar("eval/difference", result["difference"], global_step)
        writer.add_scalar("eval/agent_bid_made_rate", result["agent_bid_made_rate"], global_step)
        last_eval = f"{result['difference']:+.2f}±{result['difference_ci']:.2f}"
        plot_learning_curve(eval_log.rows, run_dir / "learning_curve.png", eval_opponent)

    while global_step < ppo.total_steps and not (time_limit_s > 0 and elapsed() >= time_limit_s):
        update += 1
        lr_now = ppo.lr * (1.0 - progress_fraction()) if ppo.anneal_lr else ppo.lr
        optimizer.param_groups[0]["lr"] = max(lr_now, ppo.lr * 0.02)
        rollout_start = time.perf_counter()

        # ---------------------------------------------------------------- rollout
        recorded[:] = False
        hand_score_buf[:] = 0.0
        decisions = 0
        for t in range(T):
            obs_t = torch.from_numpy(batch.obs).to(device, non_blocking=True)
            mask_t = torch.from_numpy(batch.mask).to(device, non_blocking=True).bool()
            # The current learner plays its own seat, and every seat of a self-play game; all of those are data.
            learner = (opponent_id < 0) | learner_at[games, batch.player]
            with torch.no_grad():
                inputs = agent.card_inputs(obs_t)
                action, logprob, _, value = agent.get_action_and_value(obs_t, mask_t, inputs=inputs)
                for k, net in enumerate(opponents):  # past snapshots play their seats, sampling
                    rows = np.flatnonzero(~learner & (opponent_id == k))
                    if len(rows):
                        rows_t = torch.from_numpy(rows).to(device)
                        action[rows_t] = net.get_action_and_value(obs_t[rows_t], mask_t[rows_t])[0]
            if inputs is not None:
                if cached_inputs is None:
                    cached_inputs = [torch.zeros((T, *x.shape), dtype=x.dtype, device=device) for x in inputs]
                for buffer, x in zip(cached_inputs, inputs):
                    buffer[t] = x
            bot_rows = np.flatnonzero(~learner & (opponent_id >= len(pool)))
            if len(bot_rows):  # baseline bots act one game at a time, from the seat's view
                bot_actions = [
                    bots[opponent_id[i] - len(pool)].act(env.view(int(i), int(batch.player[i]))) for i in bot_rows
                ]
                action[torch.from_numpy(bot_rows).to(device)] = torch.tensor(bot_actions, device=device)
            data = learner
            obs_buf[t], mask_buf[t], action_buf[t], logprob_buf[t] = obs_t, mask_t, action, logprob
            value_buf[t] = value.cpu().numpy()
            recorded[t] = data
            player_buf[t] = batch.player
            decisions += int(data.sum())

            batch = env.step(action.cpu().numpy())
            hand_over_buf[t] = batch.hand_over
            if batch.hand_over.any():
                ended = np.flatnonzero(batch.hand_over)
                hand_score_buf[t, ended] = batch.hand_scores[ended]
                # statistics of the hands the learner played (all seats of self-play games)
                played = (opponent_id[ended, None] < 0) | learner_at[ended]
                hand_score_sum += float(batch.hand_scores[ended][played].sum())
                hands_seen += int(played.sum())
                bids_made += int(batch.bid_made[ended][played].sum())
                draw_opponents(ended)
        global_step += decisions
        rollout_time = time.perf_counter() - rollout_start

        # ----------------------------------------------- per-seat rewards and GAE
        # blackout_training.returns: each hand's reward to each seat's last decision of the hand; decisions
        # still open at the rollout's end bootstrap through their value but are not trained on.
        rewards = hand_rewards(hand_score_buf, config.env.reward, config.env.reward_scale)
        targets = seat_returns(player_buf, recorded, hand_over_buf, rewards, value_buf, ppo.gamma, ppo.gae_lambda)
        advantages, returns, trainable = targets.advantages, targets.returns, targets.trainable

        # ------------------------------------------------------------ PPO update
        flat = np.flatnonzero(trainable.reshape(-1))
        b_obs = obs_buf.reshape(T * n_envs, obs_size)
        b_mask = mask_buf.reshape(T * n_envs, num_actions)
        b_actions = action_buf.reshape(-1)
        b_logprobs = logprob_buf.reshape(-1)
        b_adv = torch.from_numpy(advantages.reshape(-1)).to(device)
        b_returns = torch.from_numpy(returns.reshape(-1)).to(device)
        b_values = torch.from_numpy(value_buf.reshape(-1)).to(device)
        minibatch = max(1, math.ceil(len(flat) / ppo.num_minibatches))
        clip_fracs: list[float] = []
        pg_loss = v_loss = entropy_loss = approx_kl = torch.tensor(0.0)
        for _epoch in range(ppo.update_epochs):
            order = torch.from_numpy(rng.permutation(flat)).to(device)
            for start in range(0, len(flat), minibatch):
                idx = order[start : start + minibatch]
                mb_inputs = None if cached_inputs is None else [b.flatten(0, 1)[idx] for b in cached_inputs]
                _, new_logprob, entropy, new_value = agent.get_action_and_value(
                    b_obs[idx], b_mask[idx], b_actions[idx], inputs=mb_inputs
                )
                log_ratio = new_logprob - b_logprobs[idx]
                ratio = log_ratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - log_ratio).mean()
                    clip_fracs.append(((ratio - 1.0).abs() > ppo.clip_coef).float().mean().item())
                mb_adv = b_adv[idx]
                if ppo.norm_adv and len(idx) > 1:
                    mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std() + 1e-8)
                pg_loss = torch.max(
                    -mb_adv * ratio, -mb_adv * torch.clamp(ratio, 1 - ppo.clip_coef, 1 + ppo.clip_coef)
                ).mean()
                if ppo.clip_vloss:
                    v_clipped = b_values[idx] + torch.clamp(new_value - b_values[idx], -ppo.clip_coef, ppo.clip_coef)
                    v_loss = 0.5 * torch.max((new_value - b_returns[idx]) ** 2, (v_clipped - b_returns[idx]) ** 2).mean()
                else:
                    v_loss = 0.5 * ((new_value - b_returns[idx]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = pg_loss - ppo.ent_coef * entropy_loss + ppo.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), ppo.max_grad_norm)
                optimizer.step()
            if ppo.target_kl is not None and approx_kl.item() > ppo.target_kl:
                break

        # --------------------------------------------------------------- logging
        update_time = time.perf_counter() - rollout_start
        steps_per_s = decisions / max(update_time, 1e-9)
        y_pred, y_true = value_buf.reshape(-1)[flat], returns.reshape(-1)[flat]
        var_y = np.var(y_true)
        explained = float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)
        row = {
            "update": update,
            "global_step": global_step,
            "elapsed_s": round(elapsed(), 2),
            "steps_per_s": round(steps_per_s, 1),
            "rollout_steps_per_s": round(decisions / max(rollout_time, 1e-9), 1),
            "lr": optimizer.param_groups[0]["lr"],
            "policy_loss": round(pg_loss.item(), 5),
            "value_loss": round(v_loss.item(), 5),
            "entropy": round(entropy_loss.item(), 5),
            "approx_kl": round(approx_kl.item(), 6),
            "clip_fraction": round(float(np.mean(clip_fracs)) if clip_fracs else 0.0, 4),
            "explained_variance": round(explained, 4),
            "hands": hands_seen,
            "hand_score": round(hand_score_sum / hands_seen, 4) if hands_seen else "",
            "bid_made_rate": round(bids_made / hands_seen, 4) if hands_seen else "",
        }
        metrics_log.append(row)
        for key in METRIC_FIELDS[3:]:
            if row[key] != "" and key != "hands":
                writer.add_scalar(f"train/{key}", float(row[key]), global_step)
        hand_score_sum, hands_seen, bids_made = 0.0, 0, 0

        if opp_cfg.mode == "pool" and update % opp_cfg.snapshot_every_updates == 0:
            pool.append({k: v.detach().cpu().clone() for k, v in agent.state_dict().items()})
            del pool[: -opp_cfg.pool_size]
            refresh_opponents()
            draw_opponents(games)  # pool indices moved: redraw every game's opponents
        if config.eval.every_updates and update % config.eval.every_updates == 0 and config.eval.deals:
            record_eval(run_eval(config.eval.deals, seed=config.run.seed + update))
        if update % config.run.checkpoint_every_updates == 0:
            save()
        if progress is not None:
            progress.update(min(global_step, ppo.total_steps) - progress.n)
            progress.set_postfix_str(f"{steps_per_s:,.0f} steps/s, eval {last_eval}", refresh=False)

    # ------------------------------------------------------------------ the end
    if progress is not None:
        progress.close()
    save(final=True)
    final_eval = None
    if config.eval.final_deals:
        log(f"final evaluation: {config.eval.final_deals} duplicate deals against {eval_opponent}")
        final_eval = run_eval(config.eval.final_deals, seed=10_000_019 + config.run.seed)
        record_eval(final_eval, final=True)
        temp = run_dir / ".final_eval.json.tmp"
        temp.write_text(json.dumps({"opponent": eval_opponent, **final_eval}, indent=2), encoding="utf-8")
        os.replace(temp, run_dir / "final_eval.json")
    writer.close()
    return TrainResult(run_dir, checkpoint_path, global_step, update, steps_per_s, final_eval)
