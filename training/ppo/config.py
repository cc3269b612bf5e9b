"""Training-run configuration: typed dataclasses, loaded from YAML with ``--set`` overrides.

A run is configured by one YAML file (``configs/train/*.yaml``) whose sections
mirror the dataclasses below; every field documents itself in a docstring.
Command-line overrides use dotted keys, ``--set ppo.lr=3e-4``; the value is
read as YAML (so ``true``, ``[256, 256]`` and ``null`` work).

Validation. Every value is checked before a run writes anything, and a bad one
is a :class:`ConfigError` naming the key: an unknown key, a value of the wrong
type, a number that is NaN or infinite (any float field), and each field's
range as :meth:`TrainConfig.validate` states it (e.g. ``run.seed`` in
0..2**32-1, ``ppo.lr`` in (0, 1], ``env.reward_scale`` > 0, ``eval.deals`` >= 1,
``ppo.target_kl`` > 0 or null, ``run.name`` one folder name, never a path that
leaves ``run.out_dir``). Checks that need the rules, a checkpoint or the file
system run when training starts, still before the run folder is touched
(``blackout_training.ppo.trainer.train``).
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import yaml

from blackout_env import Rules
from blackout_env.game.rules import read_yaml_file

from ..cpu import MAX_THREADS
from .tables import check_table

__all__ = [
    "ConfigError",
    "EnvConfig",
    "EvalConfig",
    "ModelConfig",
    "OpponentsConfig",
    "PPOConfig",
    "RLlibConfig",
    "RayConfig",
    "RunConfig",
    "TrainConfig",
    "load_config",
    "apply_overrides",
    "config_from_dict",
    "config_to_dict",
]


class ConfigError(ValueError):
    """A training config with an unknown key, a value of the wrong type, or an impossible value."""


@dataclass
class RunConfig:
    """Where a run writes and how long it may take."""

    name: str = "default"
    """Run name: the run folder is ``out_dir/name`` (one folder name: no ``/``, not ``..``)."""
    out_dir: str = "runs"
    """Parent folder of run folders."""
    seed: int = 1
    """Seeds the deals, the network's initial weights and action sampling (0..2**32-1)."""
    device: str = "auto"
    """"auto" (CUDA when present, else CPU), "cpu", "cuda" or "cuda:N"."""
    threads: int | str = "auto"
    """Torch CPU threads: a number, or "auto": the cores other processes leave free, measured at the start and
    every half second during the run (``blackout_training.cpu``), so that a busy core costs its share of speed
    instead of stalling every parallel region of torch's thread pool."""
    time_limit_minutes: float = 30.0
    """Stop (with a final checkpoint and evaluation) after this much wall time; 0 = no limit."""
    checkpoint_every_updates: int = 20
    """Write ``checkpoint.pt`` every this many PPO updates (and always at the end)."""
    checkpoint_minutes: list[float] = field(default_factory=list)
    """Also keep the network as it was at these minutes of training: ``checkpoint-{M}min.pt``, written at the end
    of the first update past ``M`` minutes (``blackout bench strength-curve`` evaluates them). Empty: none."""
    progress_bar: bool = True
    """Show a tqdm progress bar (steps, steps/s, latest evaluation)."""


@dataclass
class EnvConfig:
    """The game the learner plays, stepped on the batched engine."""

    rules: str = "standard"
    """A rules preset name or a YAML rules file."""
    num_envs: int = 512
    """Games stepped together (one batched network call per step)."""
    reward: str = "score"
    """The env's reward mode, paid when each hand ends: "score" (the hand score) or "zero_sum" (the hand
    score minus the mean of the other seats'). The match-end "win" mode does not fit this trainer, which
    cuts each seat's stream at the hand's end."""
    reward_scale: float = 0.1
    """Rewards are multiplied by this (> 0) before they reach PPO (10 + bid -> about 1)."""
    reward_norm: str = "none"
    """"none": rewards are hand scores times ``reward_scale``; "table": each hand's reward is also divided by
    its table's hand scale (``blackout_training.ppo.returns.hand_scale``: the largest absolute hand score,
    averaged over the match's hands), so that every table of a distribution weighs alike in the advantages
    (a table scoring up to 100 a hand would otherwise drown one scoring up to 10)."""
    backend: str = "auto"
    """"batched" (the numpy batched engine), "engine" (Python games, slow, exact) or "auto" (batched if present)."""
    observation: str = "rules"
    """"rules" (the rules-sized observation: a network for this table only) or "universal" (one size for every
    rule set, with the rules in it: a network that plays every table; ``blackout_env.game.universal``)."""
    tables: list[str] = field(default_factory=list)
    """Train over a distribution of tables (``blackout_training.ppo.tables``; needs observation "universal"): each
    entry a preset name or rules YAML file, "preset" (a preset per match, at 3..7 players where it fits) or
    "random" (a random valid rule set per match), "wide" (one over every option's whole range, a quarter of
    them per-trick tables: the held-out tables' function on training's stream), "per-trick" (that family
    only) or "long-hands" (one with a hand of 11 cards or more, at 3 or 4 players, half of them per-trick).
    Empty: ``rules`` only. ``rules`` stays the run's reference (checkpoint metadata, default evaluation)."""
    table_groups: int = 8
    """With ``tables``: the games are split into this many batched engines, each playing one table at a time
    (group i draws from entry i mod len(tables)); ``num_envs`` must be a multiple of it."""


@dataclass
class ModelConfig:
    """The actor-critic network (see ``blackout_training.agents.policy_net.ActorCritic``)."""

    hidden_sizes: list[int] = field(default_factory=lambda: [256, 256])
    """Widths of the shared MLP trunk's hidden layers."""
    arch: str = "mlp"
    """"mlp" (one MLP on the observation) or "cards" (also scores each card action from that card's own
    features, with one small network shared by all cards; see ``blackout_training.agents.policy_net.ActorCritic``)."""
    card_width: int = 32
    """"cards": width of the per-card embedding."""
    critic: str = "view"
    """The value that PPO's advantages use: "view" (the value head on the seat's view) or "oracle" (a second
    head that also reads every other seat's hidden hand, for training only: lower-variance advantages; the
    actor and the view head still read the view alone, and ``export_policy`` leaves the oracle head out).
    Its inputs follow ``env.observation``: the rules-sized table's other hands, or with the universal observation
    (and ``env.tables``) the same hands padded to 7 seats and 54 cards, one layout for every table
    (``blackout_training.agents.policy_net.oracle_size``)."""
    init_checkpoint: str | None = None
    """Start from this checkpoint's weights (same rules and hidden sizes) instead of random ones: fine-tuning.
    A rules-sized checkpoint of ``env.rules`` also starts a universal network (``env.observation: universal``),
    which then acts exactly as the checkpoint does at that table (``blackout_training.ppo.transfer``)."""
    reset_bid_head: bool = False
    """With ``init_checkpoint``: re-initialise the bid logits (``ActorCritic.reset_bid_head``: near-uniform bids),
    so that fine-tuning samples every bid again; the card play and the value head are kept."""


@dataclass
class PPOConfig:
    """Proximal policy optimisation with generalised advantage estimation."""

    total_steps: int = 50_000_000
    """Decisions (all seats, all games) to train for; the time limit may stop the run earlier."""
    rollout_steps: int = 0
    """Batched-engine steps per rollout (a rollout holds ``num_envs * rollout_steps`` decisions);
    0 = the decisions of one whole match. Every game's hands have the same lengths in the same
    order, so the games stay in step; a rollout of one match then holds every hand size equally."""
    lr: float = 3e-4
    """Adam learning rate, in (0, 1]."""
    anneal_lr: bool = True
    """Decay the learning rate linearly over ``total_steps`` (or the time limit), to 2% of ``lr`` at the end."""
    gamma: float = 1.0
    """Discount between one seat's decisions; hands are independent, so 1.0 scores a hand undiscounted."""
    gae_lambda: float = 0.95
    """GAE lambda: 1.0 is Monte-Carlo returns, lower trades variance for bias."""
    update_epochs: int = 2
    """Passes over each rollout."""
    num_minibatches: int = 4
    """Minibatches per pass."""
    clip_coef: float = 0.2
    """PPO ratio clip."""
    clip_vloss: bool = False
    """Clip the value loss as in the original PPO code."""
    ent_coef: float = 0.01
    """Entropy bonus weight (keeps bids and plays exploring early)."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Global gradient-norm clip."""
    norm_adv: bool = True
    """Normalise advantages per minibatch."""
    target_kl: float | None = None
    """Stop an update's epochs early when the approximate KL exceeds this (null = never)."""


@dataclass
class OpponentsConfig:
    """Who sits in the other seats while the learner trains.

    In "pool" mode every game draws, at every hand, who plays the seats other
    than its learner seat: the current learner (a self-play game, where every
    seat's decisions are training data), a past snapshot of the learner, or a
    baseline bot (only the learner seat's decisions are data in those games).
    """

    mode: str = "self_play"
    """"self_play": every seat of every game is the learner; "pool": the mix described above."""
    latest_fraction: float = 0.5
    """Pool mode: share of games played in self-play by the current learner."""
    bot_fraction: float = 0.0
    """Pool mode: share of games whose other seats are baseline bots (the rest: past snapshots)."""
    bots: list[str] = field(default_factory=list)
    """Pool mode: policies to draw from, as specs ("random", "heuristic", "search:samples=8", "ppo:PATH");
    needed when bot_fraction > 0."""
    bots_only_after: float = 1.0
    """Pool mode: from this fraction of the run on (by steps or by the time limit, whichever is further),
    every game seats the learner against the bots (1.0 = never): self-play first, then fine-tuning
    against the baselines."""
    learner_seats: list[int] = field(default_factory=lambda: [1])
    """Pool mode: how many seats the learner takes in a game against past snapshots or bots, drawn
    uniformly from this list at every hand (the seats themselves at random). [1] is the evaluation's
    setting, one learner against the rest; more learner seats give more training data per bot
    decision, which is what limits the speed of games against bots."""
    pool_size: int = 5
    """Pool mode: past snapshots kept (the oldest is dropped)."""
    snapshot_every_updates: int = 50
    """Pool mode: add the learner to the pool every this many updates."""


@dataclass
class EvalConfig:
    """Periodic and final duplicate-deal evaluation (``blackout_training.evaluation.tournament``)."""

    opponent: str = "heuristic"
    """The policy in the other seats: any policy spec ("random", "heuristic", "search:samples=32", "ppo:PATH")."""
    every_updates: int = 100
    """Evaluate every this many PPO updates (0 = only at the end)."""
    deals: int = 100
    """Duplicate deals per periodic evaluation (each replayed with the seats rotated); at least 1."""
    final_deals: int = 500
    """Duplicate deals for the final evaluation (0 = skip)."""
    hands: str = "match"
    """"match": whole matches under the run's rules."""
    rules: list[str] = field(default_factory=list)
    """Evaluate on each of these rules (preset names or YAML files), one learning curve each; empty: the run's
    ``env.rules``. Rules other than ``env.rules`` need ``env.observation: universal``."""


@dataclass
class RLlibConfig:
    """Ray RLlib (``algo: rllib_ppo``, see docs/rllib.md): where it runs and how it samples."""

    address: str | None = None
    """An existing Ray cluster to join ("HOST:PORT", as ``ray start --head`` prints; "auto": the one started
    on this machine), or null: start Ray on this machine for the run. ``blackout train --ray-address`` sets it."""
    num_cpus: int = 2
    """CPUs of the Ray instance started on this machine (with ``address: null``)."""
    num_env_runners: int = 1
    """RLlib env runners (sampling processes); 0 samples in the driver. Each runs ``env.num_envs`` games."""
    env: str = "batched"
    """"batched": each runner steps a batched engine of ``env.num_envs`` games, every (game, seat) an agent;
    "aec": RLlib's PettingZooEnv over the plain AEC env, one decision per step (slow, for comparison)."""


@dataclass
class RayConfig:
    """Distributed native PPO (``algo: ppo_ray``, docs/rllib.md): the rollouts in Ray actors, the update here.

    Each sampler (a Ray actor) plays ``env.num_envs`` games with a CPU copy of the network, pulls the
    weights from Ray's object store at every update and returns the trainable decisions as arrays; this
    process (the learner, on ``run.device`` with ``run.threads``) concatenates them and runs the update.
    One update trains on ``num_samplers x env.num_envs`` games' rollouts.
    """

    address: str | None = None
    """An existing Ray cluster to join ("HOST:PORT", as ``ray start --head`` prints; "auto": the one started
    on this machine), or null: start Ray on this machine for the run. ``blackout train --ray-address`` sets it."""
    num_cpus: int = 2
    """CPUs of the Ray instance started on this machine (with ``address: null``)."""
    num_samplers: int = 2
    """Sampler actors, spread over the cluster's nodes; each plays ``env.num_envs`` games."""
    sampler_cpus: float = 1.0
    """CPUs Ray reserves for each sampler (``num_samplers x sampler_cpus`` must be free in the cluster)."""
    sampler_threads: int = 1
    """Torch threads of each sampler's network."""
    start_timeout_s: float = 120.0
    """Give up, with a message, when the samplers are not all running after this many seconds."""


ALGOS = ("ppo", "rllib_ppo", "ppo_ray")


@dataclass
class TrainConfig:
    """Everything a ``blackout train`` run needs; the sections of the YAML file."""

    algo: str = "ppo"
    """"ppo": the native PPO trainer (``blackout_training.ppo.trainer``); "ppo_ray": the same trainer with its rollouts in
    Ray actors (``blackout_training.ppo.ray_samplers``, the ``ray`` section); "rllib_ppo": PPO on Ray RLlib
    (``blackout_training.rllib.backend``, the ``rllib`` section); docs/rllib.md."""
    run: RunConfig = field(default_factory=RunConfig)
    env: EnvConfig = field(default_factory=EnvConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    ppo: PPOConfig = field(default_factory=PPOConfig)
    opponents: OpponentsConfig = field(default_factory=OpponentsConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    rllib: RLlibConfig = field(default_factory=RLlibConfig)
    ray: RayConfig = field(default_factory=RayConfig)

    def validate(self) -> None:
        """Check every value the types alone do not: ranges, finite numbers, known modes, a safe run name.

        Raises :class:`ConfigError` naming the key. The checks that need the rules, a
        checkpoint or the file system (players per learner seat, ``eval.opponent``,
        ``opponents.bots``, ``model.init_checkpoint``, the run folder) run when training
        starts, still before anything is written (``blackout_training.ppo.trainer.train``).
        """
        run, env, model, ppo, opponents, evaluation = self.run, self.env, self.model, self.ppo, self.opponents, self.eval
        # run
        _check_run_name(run.name)
        _require("run.out_dir", run.out_dir, bool(run.out_dir.strip()), "a folder name, not empty")
        _require("run.seed", run.seed, 0 <= run.seed < 2**32, f"a whole number in 0..{2**32 - 1}")
        device = run.device
        _require("run.device", device, device in ("auto", "cpu", "cuda") or _is_cuda_index(device),
                 "'auto', 'cpu', 'cuda' or 'cuda:N'")
        _require("run.threads", run.threads,
                 run.threads == "auto" or (isinstance(run.threads, int) and 1 <= run.threads <= MAX_THREADS),
                 f"a whole number of threads 1..{MAX_THREADS}, or auto (the free cores)")
        _require("run.time_limit_minutes", run.time_limit_minutes, run.time_limit_minutes >= 0, ">= 0 (0 = no limit)")
        _require("run.checkpoint_every_updates", run.checkpoint_every_updates, run.checkpoint_every_updates >= 1,
                 "at least 1")
        for i, minutes in enumerate(run.checkpoint_minutes):
            _require(f"run.checkpoint_minutes[{i}]", minutes, minutes > 0, "a positive number of minutes")
        # env
        _require("env.rules", env.rules, bool(env.rules.strip()), "a rules preset name or a YAML file")
        _require("env.num_envs", env.num_envs, env.num_envs >= 1, "positive")
        _require("env.reward", env.reward, env.reward in ("score", "zero_sum"), "'score' or 'zero_sum'")
        _require("env.reward_scale", env.reward_scale, env.reward_scale > 0, "a positive number")
        _require("env.reward_norm", env.reward_norm, env.reward_norm in ("none", "table"), "'none' or 'table'")
        _require("env.backend", env.backend, env.backend in ("auto", "batched", "engine"),
                 "'auto', 'batched' or 'engine'")
        # model
        _require("model.hidden_sizes", model.hidden_sizes,
                 bool(model.hidden_sizes) and all(width >= 1 for width in model.hidden_sizes), "positive widths")
        _require("model.arch", model.arch, model.arch in ("mlp", "cards"), "'mlp' or 'cards'")
        _require("model.card_width", model.card_width, model.card_width >= 1, "positive")
        _require("model.critic", model.critic, model.critic in ("view", "oracle"), "'view' or 'oracle'")
        if model.reset_bid_head and model.init_checkpoint is None:
            raise ConfigError("model.reset_bid_head: re-initialises the bids of model.init_checkpoint, which is null")
        if model.reset_bid_head and model.arch != "cards":
            raise ConfigError(f"model.reset_bid_head: needs model.arch 'cards' (a bid head of its own), got {model.arch!r}")
        if model.init_checkpoint is not None:
            _require("model.init_checkpoint", model.init_checkpoint, bool(model.init_checkpoint.strip()),
                     "a checkpoint path or null")
        # ppo
        _require("ppo.total_steps", ppo.total_steps, ppo.total_steps >= 1, "positive")
        _require("ppo.rollout_steps", ppo.rollout_steps, ppo.rollout_steps >= 0, ">= 0 (0 = one whole match)")
        # Adam moves each weight by about lr per step: above 1 the network diverges at once.
        _require("ppo.lr", ppo.lr, 0 < ppo.lr <= 1, "in (0, 1]")
        _require("ppo.gamma", ppo.gamma, 0 <= ppo.gamma <= 1, "in 0..1")
        _require("ppo.gae_lambda", ppo.gae_lambda, 0 <= ppo.gae_lambda <= 1, "in 0..1")
        _require("ppo.update_epochs", ppo.update_epochs, ppo.update_epochs >= 1, "positive")
        _require("ppo.num_minibatches", ppo.num_minibatches, ppo.num_minibatches >= 1, "positive")
        _require("ppo.clip_coef", ppo.clip_coef, ppo.clip_coef > 0, "positive")
        _require("ppo.ent_coef", ppo.ent_coef, ppo.ent_coef >= 0, ">= 0")
        _require("ppo.vf_coef", ppo.vf_coef, ppo.vf_coef >= 0, ">= 0")
        _require("ppo.max_grad_norm", ppo.max_grad_norm, ppo.max_grad_norm > 0, "positive")
        if ppo.target_kl is not None:
            _require("ppo.target_kl", ppo.target_kl, ppo.target_kl > 0, "positive, or null for no early stop")
        # opponents
        _require("opponents.mode", opponents.mode, opponents.mode in ("self_play", "pool"), "'self_play' or 'pool'")
        for key in ("latest_fraction", "bot_fraction", "bots_only_after"):
            value = getattr(opponents, key)
            _require(f"opponents.{key}", value, 0 <= value <= 1, "in 0..1")
        if opponents.latest_fraction + opponents.bot_fraction > 1:
            raise ConfigError("opponents.latest_fraction + opponents.bot_fraction: must be at most 1")
        if (opponents.bot_fraction > 0 or opponents.bots_only_after < 1) and not opponents.bots:
            raise ConfigError(
                "opponents.bots: name at least one bot when opponents.bot_fraction > 0 or bots_only_after < 1"
            )
        for name in opponents.bots:  # (each is loaded, naming its problem, when training starts)
            _require("opponents.bots", name, bool(name.strip()), "policy specs such as 'heuristic', not empty")
        if not opponents.learner_seats:
            raise ConfigError("opponents.learner_seats: name at least one seat count, e.g. [1]")
        for count in opponents.learner_seats:  # (the upper bound, fewer than the rules' players, needs the rules)
            _require("opponents.learner_seats", count, count >= 1, "counts of at least 1")
        _require("opponents.pool_size", opponents.pool_size, opponents.pool_size >= 1, "positive")
        _require("opponents.snapshot_every_updates", opponents.snapshot_every_updates,
                 opponents.snapshot_every_updates >= 1, "positive")
        # eval
        _require("eval.opponent", evaluation.opponent, bool(evaluation.opponent.strip()), "a policy spec")
        _require("eval.every_updates", evaluation.every_updates, evaluation.every_updates >= 0,
                 ">= 0 (0 = only at the end)")
        _require("eval.deals", evaluation.deals, evaluation.deals >= 1,
                 "at least 1 (eval.every_updates=0 turns periodic evaluation off)")
        _require("eval.final_deals", evaluation.final_deals, evaluation.final_deals >= 0, ">= 0 (0 = skip)")
        _require("eval.hands", evaluation.hands, evaluation.hands == "match", "'match' (the only mode)")
        # rllib
        _require("algo", self.algo, self.algo in ALGOS, f"one of {', '.join(ALGOS)}")
        rllib = self.rllib
        _require("rllib.num_cpus", rllib.num_cpus, rllib.num_cpus >= 1, "positive")
        _require("rllib.num_env_runners", rllib.num_env_runners, rllib.num_env_runners >= 0,
                 ">= 0 (0 = sample in the driver)")
        _require("rllib.env", rllib.env, rllib.env in ("batched", "aec"), "'batched' or 'aec'")
        if rllib.address is not None:
            _require("rllib.address", rllib.address, bool(rllib.address.strip()),
                     "HOST:PORT of a Ray cluster, 'auto', or null to start Ray here")
        # ray (algo ppo_ray)
        ray = self.ray
        _require("ray.num_cpus", ray.num_cpus, ray.num_cpus >= 1, "positive")
        _require("ray.num_samplers", ray.num_samplers, ray.num_samplers >= 1, "at least 1")
        _require("ray.sampler_cpus", ray.sampler_cpus, ray.sampler_cpus > 0, "positive")
        _require("ray.sampler_threads", ray.sampler_threads, 1 <= ray.sampler_threads <= MAX_THREADS,
                 f"1..{MAX_THREADS}")
        _require("ray.start_timeout_s", ray.start_timeout_s, ray.start_timeout_s > 0, "positive")
        if ray.address is not None:
            _require("ray.address", ray.address, bool(ray.address.strip()),
                     "HOST:PORT of a Ray cluster, 'auto', or null to start Ray here")
        # one table or many
        _require("env.observation", env.observation, env.observation in ("rules", "universal"), "'rules' or 'universal'")
        if env.tables:
            if env.observation != "universal":
                raise ConfigError("env.tables: a network for several tables needs env.observation: universal")
            if self.ppo.rollout_steps <= 0:
                raise ConfigError("ppo.rollout_steps: with env.tables the matches differ in length; give a number of steps")
            _require("env.table_groups", env.table_groups, env.table_groups > 0 and env.num_envs % env.table_groups == 0,
                     f"positive and divide env.num_envs ({env.num_envs})")
            for table in env.tables:
                try:
                    check_table(table)
                except ValueError as error:
                    raise ConfigError(f"env.tables: {error}") from None
        for rules in evaluation.rules:
            try:
                Rules.resolve(rules)
            except ValueError as error:
                raise ConfigError(f"eval.rules: {error}") from None
            if rules != env.rules and env.observation != "universal":
                raise ConfigError(
                    f"eval.rules: {rules!r} differs from env.rules ({env.rules!r}); a network that plays "
                    "other tables needs env.observation: universal"
                )
        if self.algo == "rllib_ppo" and env.reward_norm != "none":
            raise ConfigError(f"env.reward_norm: {env.reward_norm!r} trains with algo: ppo or ppo_ray, not {self.algo} "
                              "(which pays the env's own reward)")
        if self.algo == "rllib_ppo" and model.critic != "view":
            raise ConfigError(f"model.critic: {model.critic!r} trains with algo: ppo or ppo_ray, not {self.algo} "
                              "(RLlib's module has the view critic only)")
        if self.algo == "rllib_ppo" and (env.tables or env.observation != "rules"):
            raise ConfigError(f"env.observation / env.tables: the universal observation trains with algo: ppo or ppo_ray, "
                              f"not {self.algo}")


def check_learner_seats(opponents: OpponentsConfig, fewest_players: int) -> None:
    """``opponents.learner_seats``' upper bound, which needs the rules: the learner leaves a seat to its opponents."""
    if max(opponents.learner_seats) >= fewest_players:
        raise ConfigError(
            f"opponents.learner_seats: each count must be 1..{fewest_players - 1} with {fewest_players} "
            f"players (the learner leaves at least one seat to its opponents), got {opponents.learner_seats}"
        )


def _require(key: str, value: Any, ok: bool, requirement: str) -> None:
    if not ok:
        raise ConfigError(f"{key}: must be {requirement}, got {value!r}")


def _is_cuda_index(device: str) -> bool:
    prefix, _, index = device.partition(":")
    return prefix == "cuda" and index.isdigit()


def _check_run_name(name: str) -> None:
    """A run name is one folder name inside ``run.out_dir``: never a path that leaves it."""
    problem = None
    if not name or not name.strip():
        problem = "empty"
    elif "/" in name or "\\" in name or Path(name).is_absolute():
        problem = "a path (use run.out_dir for the parent folder)"
    elif name in (".", ".."):
        problem = "'.' or '..'"
    elif any(ord(c) < 32 for c in name):
        problem = "holding control characters"
    if problem:
        raise ConfigError(f"run.name: must be one folder name inside run.out_dir, got {name!r}: {problem}")


# ----------------------------------------------------------------- conversion
def _type_name(tp: Any) -> str:
    return getattr(tp, "__name__", str(tp))


def _coerce(key: str, value: Any, tp: Any) -> Any:
    """``value`` checked against the annotation ``tp``; ints are accepted for floats."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _coerce(key, value, option)
            except ConfigError as error:
                errors.append(str(error))
        raise ConfigError(errors[0] if errors else f"{key}: unexpected value {value!r}")
    if origin is list:
        (item_type,) = typing.get_args(tp)
        if not isinstance(value, Sequence) or isinstance(value, str):
            raise ConfigError(f"{key}: expected a list of {_type_name(item_type)}, got {value!r}")
        return [_coerce(f"{key}[{i}]", item, item_type) for i, item in enumerate(value)]
    if tp is float:
        if isinstance(value, str) and _looks_like_float(value):
            value = float(value)  # PyYAML (YAML 1.1) reads "3e-4" as a string; users mean a number
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{key}: expected a number, got {value!r}")
        try:
            number = float(value)
        except OverflowError:  # an integer beyond float range
            number = math.inf
        if not math.isfinite(number):  # NaN or infinity would reach the network as NaN logits
            raise ConfigError(f"{key}: must be a finite number, got {value!r}")
        return number
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key}: expected an integer, got {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{key}: expected true or false, got {value!r}")
        return value
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{key}: expected a string, got {value!r}")
        return value
    raise ConfigError(f"{key}: unsupported field type {tp!r}")  # pragma: no cover - a bug in this module


def _build(cls: type, data: Any, prefix: str) -> Any:
    if data is None and prefix:  # "run:" with every key commented out: an empty section, all its defaults
        data = {}
    if not isinstance(data, Mapping):
        where = prefix.rstrip(".") or "config"
        raise ConfigError(f"{where}: expected a mapping of options, got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [k for k in data if k not in fields]
    if unknown:
        key = f"{prefix}{unknown[0]}"
        raise ConfigError(f"unknown config key {key!r}; known keys here: {', '.join(sorted(fields))}")
    values = {}
    for name, value in data.items():
        tp = hints[name]
        if dataclasses.is_dataclass(tp):
            values[name] = _build(tp, value, f"{prefix}{name}.")
        else:
            values[name] = _coerce(f"{prefix}{name}", value, tp)
    return cls(**values)


def config_from_dict(data: Mapping[str, Any] | None) -> TrainConfig:
    """A validated :class:`TrainConfig` from nested plain data (missing keys keep their defaults)."""
    config = _build(TrainConfig, data or {}, "")
    config.validate()
    return config


def config_to_dict(config: TrainConfig) -> dict[str, Any]:
    """Nested plain data, loadable by :func:`config_from_dict`."""
    return dataclasses.asdict(config)


def apply_overrides(data: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply ``section.key=value`` overrides (values read as YAML) to nested plain data, in place."""
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"override {item!r}: expected KEY=VALUE, e.g. ppo.lr=3e-4")
        key, text = item.split("=", 1)
        key = key.strip()
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ConfigError(f"override {key}: cannot read value {text!r}: {error}") from None
        parts = key.split(".")
        node = data
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if child is None:  # an empty section in the file
                child = node[part] = {}
            if not isinstance(child, dict):
                raise ConfigError(f"override {key}: {'.'.join(parts[: depth + 1])} is not a section")
            node = child
        node[parts[-1]] = value
    return data


def _looks_like_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


SHIPPED_CONFIGS = Path(__file__).resolve().parents[1] / "configs"
"""The run configs that ship with the package (``configs/train/`` of a checkout links here)."""


def shipped_configs() -> list[str]:
    """The names of the shipped run configs (``default``, ``tiny``, ``generalist``...)."""
    return sorted(path.stem for path in SHIPPED_CONFIGS.glob("*.yaml"))


def config_path(name: str | Path) -> Path:
    """The file a ``--config`` names: a path as given when something is there, else a shipped config's
    name (``default``, ``tiny.yaml``), so that an installed package trains from any folder."""
    path = Path(name).expanduser()
    if path.exists() or len(path.parts) != 1:
        return path
    shipped = SHIPPED_CONFIGS / (path.name if path.suffix == ".yaml" else f"{path.name}.yaml")
    return shipped if shipped.is_file() else path


def load_config(path: str | Path | None, overrides: Sequence[str] = ()) -> TrainConfig:
    """The config of a YAML file or a shipped config's name (None: all defaults), ``KEY=VALUE`` overrides applied."""
    data: dict[str, Any] = {}
    if path is not None:
        path = config_path(path)
        if not path.exists():
            raise ConfigError(f"config file {str(path)!r} does not exist (the shipped configs, by name: "
                              f"{', '.join(shipped_configs())})")
        loaded = read_yaml_file(path, "config file", "a YAML file of training settings", ConfigError)
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"config file {str(path)!r}: expected a mapping of sections, got {loaded!r}")
        data = loaded
    apply_overrides(data, overrides)
    try:
        return config_from_dict(data)
    except ConfigError as error:
        if path is not None:
            raise ConfigError(f"{path}: {error}") from None
        raise
