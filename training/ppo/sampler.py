"""The rollout half of PPO: a batch of games, their opponents, and the learner acting in them.

A :class:`Sampler` holds one batched engine of ``env.num_envs`` games (``vec_env`` or
``tables``), the opponents of every game (``opponents``) and the rollout's buffers. Its
:meth:`Sampler.collect` plays ``T`` batched steps with the learner's network, credits
each seat's hand scores and runs GAE (``blackout_training.ppo.returns``), and returns a
:class:`Rollout`: the learner's *trainable* decisions only, as flat arrays in
(step, game) order, with the statistics of the hands played.

The native trainer (:func:`blackout_training.ppo.trainer.train`, ``algo: ppo``) holds one
sampler in its own process; the distributed trainer (``algo: ppo_ray``,
:mod:`blackout_training.ppo.ray_samplers`) holds one in each of its Ray actors and
concatenates what they return. Both then run the same PPO update on a ``Rollout``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from blackout_env import Rules
from blackout_env.game.rules_logic import decisions_per_hand

from ..agents.policy_net import ActorCritic, SparseRows, sparse_rows
from .config import TrainConfig
from .opponents import OpponentPool
from .returns import hand_rewards, hand_scale, seat_returns
from .tables import TablesVecEnv
from .vec_env import VecEnv, make_vec_env

__all__ = ["Rollout", "Sampler", "SamplerLostError", "make_env", "rollout_length"]


class SamplerLostError(ValueError):
    """A sampler of a distributed run died or became unreachable mid-update (a ValueError, as every error
    ``blackout train`` reports in one line)."""


def make_env(config: TrainConfig, rules: Rules) -> VecEnv:
    """The games of a run: one batched engine of ``env.num_envs`` games, or a table distribution's engines."""
    if config.env.tables:  # one universal network over many tables (blackout_training.ppo.tables)
        return TablesVecEnv(config.env.tables, config.env.num_envs, config.env.table_groups, rules)
    return make_vec_env(rules, config.env.num_envs, config.env.backend, config.env.observation)


def rollout_length(config: TrainConfig, rules: Rules) -> int:
    """Batched steps per rollout: ``ppo.rollout_steps``, or 0 for one whole match (the bids and plays of every hand)."""
    n_players = TablesVecEnv.num_players if config.env.tables else rules.num_players
    return config.ppo.rollout_steps or sum(decisions_per_hand(n_players, size) for size in rules.hand_sizes)


@dataclass
class Rollout:
    """The learner's trainable decisions of one rollout, one row each, and what its hands scored.

    Observations are either ``sparse`` (on the CPU: :class:`~blackout_training.agents.policy_net.SparseRows`)
    or dense ``obs`` (on a GPU); ``card_inputs`` are the "cards" network's per-card inputs
    (:meth:`ActorCritic.card_inputs`), computed while acting.
    """

    sparse: SparseRows | None
    obs: torch.Tensor | None
    card_inputs: list[torch.Tensor] | None
    mask: torch.Tensor  # (n, num_actions) bool
    actions: torch.Tensor  # (n,) int64
    logprobs: torch.Tensor  # (n,) float32
    values: torch.Tensor  # (n,) float32
    advantages: torch.Tensor  # (n,) float32
    returns: torch.Tensor  # (n,) float32
    critic_inputs: torch.Tensor | None
    """(n, oracle inputs) uint8: the oracle critic's privileged inputs (``model.critic: oracle``), else None."""
    decisions: int
    """The learner's decisions played (trainable or not: open tails count)."""
    hand_score_sum: float
    hands: int
    bids_made: int
    seconds: float
    """The sampler's own time for the rollout (acting, stepping, GAE)."""

    def arrays(self) -> Rollout:
        """The same rollout as numpy arrays (Ray's object store hands them to the learner without a copy);
        sparse columns as int32, half the bytes."""

        def numpy(x: Any) -> Any:
            return x.cpu().numpy() if isinstance(x, torch.Tensor) else x

        sparse = None if self.sparse is None else (numpy(self.sparse.columns).astype(np.int32), numpy(self.sparse.values))
        card_inputs = None if self.card_inputs is None else [numpy(x) for x in self.card_inputs]
        tensors = {f.name: numpy(getattr(self, f.name)) for f in dataclasses.fields(self)}
        return dataclasses.replace(self, **{**tensors, "sparse": sparse, "card_inputs": card_inputs})

    @staticmethod
    def concat(parts: Sequence[Rollout], device: torch.device) -> Rollout:
        """One rollout of ``parts`` (tensors or :meth:`arrays`), in order, on ``device``; sparse rows padded to the
        widest part (padding is column 0, value 0: it adds nothing)."""

        def tensor(x: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
            x = torch.as_tensor(x)
            return x.to(device=device, dtype=dtype or x.dtype)

        def joined(name: str) -> torch.Tensor:
            return torch.cat([tensor(getattr(part, name)) for part in parts])

        first = parts[0]
        sparse = None
        if first.sparse is not None:
            width = max(part.sparse[0].shape[1] for part in parts)
            columns, values = [], []
            for part in parts:
                pad = width - part.sparse[0].shape[1]
                columns.append(torch.nn.functional.pad(tensor(part.sparse[0], torch.int64), (0, pad)))
                values.append(torch.nn.functional.pad(tensor(part.sparse[1]), (0, pad)))
            sparse = SparseRows(torch.cat(columns), torch.cat(values))
        card_inputs = None
        if first.card_inputs is not None:
            card_inputs = [torch.cat([tensor(part.card_inputs[k]) for part in parts]) for k in range(len(first.card_inputs))]
        return Rollout(
            sparse=sparse,
            obs=None if first.obs is None else joined("obs"),
            card_inputs=card_inputs,
            mask=joined("mask"),
            actions=joined("actions"),
            logprobs=joined("logprobs"),
            values=joined("values"),
            advantages=joined("advantages"),
            returns=joined("returns"),
            critic_inputs=None if first.critic_inputs is None else joined("critic_inputs"),
            decisions=sum(part.decisions for part in parts),
            hand_score_sum=sum(part.hand_score_sum for part in parts),
            hands=sum(part.hands for part in parts),
            bids_made=sum(part.bids_made for part in parts),
            seconds=max(part.seconds for part in parts),
        )


def _keep_sparse(buffers: list[torch.Tensor], rows: SparseRows, t: int, steps: int) -> list[torch.Tensor]:
    """Store step ``t``'s sparse observations in the rollout's (columns, values) buffers, widening them (their
    padding adds nothing) when this step has a row with more nonzero entries than they hold."""
    width = rows.columns.shape[1]
    if not buffers or buffers[0].shape[2] < width:
        wider = [torch.zeros((steps, *x.shape[:1], width + 8), dtype=x.dtype) for x in rows]
        if buffers:
            for new, old in zip(wider, buffers):
                new[:, :, : old.shape[2]] = old
        buffers = wider
    for buffer, x in zip(buffers, rows):
        buffer[t, :, :width] = x
        buffer[t, :, width:] = 0
    return buffers


class Sampler:
    """Plays rollouts of one batch of games with the learner's network (see the module docstring).

    Args:
        config: the run's config (``env``, ``ppo``, ``opponents``).
        rules: the run's rules.
        env: the games (:func:`make_env`).
        bots: the loaded ``opponents.bots``.
        new_model: makes an empty network like the learner's (for the league's snapshots).
        rng: every draw of the opponents comes from it.
        device: where the network acts (the CPU keeps observations sparse).
        reset_seed: seeds the first deals.
        league: the league's snapshots to start with (pool mode; a resumed run's).
        progress: the fraction of the run done (for ``opponents.bots_only_after``).
    """

    def __init__(
        self,
        config: TrainConfig,
        rules: Rules,
        env: VecEnv,
        bots: Sequence[Any],
        new_model: Callable[[], ActorCritic],
        rng: np.random.Generator,
        device: torch.device,
        reset_seed: int,
        league: Sequence[dict[str, torch.Tensor]] = (),
        progress: float = 0.0,
        on_step: Callable[[], None] | None = None,
    ) -> None:
        self.config, self.env, self.device = config, env, device
        self.on_step = on_step
        """Called before every step of a rollout (the trainer's thread count follows the free cores there)."""
        n_envs = env.num_envs
        n_players = TablesVecEnv.num_players if config.env.tables else rules.num_players  # per-seat columns
        # The seats at each game's table (fewer than n_players in a table distribution's smaller tables).
        self.table_players = (lambda games: env.players[games]) if config.env.tables else None
        # env.reward_norm "table": rewards are also divided by the table's hand scale; in a table distribution
        # that is each game's own (scale_buf, read before a step, which may seat the game at a new table).
        norm = config.env.reward_norm == "table"
        self.reward_scale = config.env.reward_scale / (hand_scale(rules) if norm else 1.0)
        self.per_game_scale = norm and bool(config.env.tables)
        self.T = T = rollout_length(config, rules)
        self.batch = env.reset(seed=reset_seed)
        self.opponents = OpponentPool(config.opponents, n_envs, n_players, bots, new_model, rng, self.table_players,
                                      universal=config.env.observation == "universal", rules=rules)
        self.games = np.arange(n_envs)
        self.set_league(league, progress)

        # --- rollout storage: one slot per (step, game); `recorded` marks the learner's decisions
        # On the CPU an observation is kept as its nonzero entries (policy_net.sparse_rows: about 5% of the vector),
        # and the network's first layer reads only those, when acting and in the update; on a GPU, the dense vector.
        obs_size, num_actions = self.batch.observation.shape[1], self.batch.action_mask.shape[1]
        self.sparse_obs = device.type == "cpu"
        self.obs_buf = None if self.sparse_obs else torch.zeros((T, n_envs, obs_size), device=device)
        self.sparse_buf: list[torch.Tensor] = []  # columns, values: (T, n_envs, width), widened when a step needs it
        self.mask_buf = torch.zeros((T, n_envs, num_actions), dtype=torch.bool, device=device)
        self.action_buf = torch.zeros((T, n_envs), dtype=torch.long, device=device)
        self.logprob_buf = torch.zeros((T, n_envs), device=device)
        self.value_buf = np.zeros((T, n_envs), dtype=np.float32)
        self.player_buf = np.zeros((T, n_envs), dtype=np.int64)  # the seat that acted
        self.hand_over_buf = np.zeros((T, n_envs), dtype=bool)  # the game's hand ended with this step
        self.hand_score_buf = np.zeros((T, n_envs, n_players), dtype=np.float32)  # ... and each seat's score for it
        self.players_buf = np.full((T, n_envs), n_players, dtype=np.int64)  # ... and the seats at its table
        self.scale_buf = np.ones((T, n_envs), dtype=np.float32)  # ... and its reward scale (env.reward_norm)
        self.recorded = np.zeros((T, n_envs), dtype=bool)
        # model.critic "oracle": every other seat's hand at each decision (training only; the actor never reads it)
        self.oracle_buf = None
        if config.model.critic == "oracle":
            width = env.hidden_hands(self.batch.current_player).shape[1]
            self.oracle_buf = torch.zeros((T, n_envs, width), dtype=torch.uint8, device=device)
        # The "cards" network's per-card inputs depend on the observation only: computed once when acting, kept for
        # the update's epochs (about 40 MB for the default run).
        self.cached_inputs: list[torch.Tensor] | None = None
        self.last_timing: dict[str, Any] = {"node": "driver", "decisions": 0, "seconds": 0.0}

    def set_league(self, league: Sequence[dict[str, torch.Tensor]], progress: float) -> None:
        """Seat the league's snapshots (pool mode) and redraw every game's opponents (snapshot indices moved)."""
        if league:
            self.opponents.load(league)
        self.opponents.draw(self.games, progress)

    def timings(self) -> list[dict[str, Any]]:
        """The last rollout's sampler time and decisions (one sampler, in this process)."""
        return [dict(self.last_timing)]

    def close(self) -> None:
        """Nothing to release (a distributed run's samplers stop their actors here)."""

    def collect(self, agent: ActorCritic, progress: Callable[[], float]) -> Rollout:
        """Play one rollout with ``agent``; per-seat rewards and GAE; the trainable decisions as a :class:`Rollout`.

        ``progress()``: the fraction of the run done, read when a hand ends (its opponents are drawn then).
        """
        config, env, device, opponents, T = self.config, self.env, self.device, self.opponents, self.T
        started = time.perf_counter()
        recorded, hand_score_buf, players_buf, batch = self.recorded, self.hand_score_buf, self.players_buf, self.batch
        recorded[:] = False
        hand_score_buf[:] = 0.0
        decisions, hand_score_sum, hands_seen, bids_made = 0, 0.0, 0, 0
        for t in range(T):
            if self.on_step is not None:
                self.on_step()
            obs_t = torch.from_numpy(batch.observation).to(device, non_blocking=True)
            mask_t = torch.from_numpy(batch.action_mask).to(device, non_blocking=True).bool()
            # The current learner plays its own seat, and every seat of a self-play game; all of those are data.
            learner = opponents.learner_acts(batch.current_player)
            sparse = sparse_rows(batch.observation) if self.sparse_obs else None
            hidden = None
            if self.oracle_buf is not None:
                self.oracle_buf[t] = torch.from_numpy(env.hidden_hands(batch.current_player))
                hidden = self.oracle_buf[t]
            with torch.inference_mode():
                inputs = agent.card_inputs(obs_t)
                action, logprob, value = agent.sample_action(obs_t, mask_t, inputs=inputs, sparse=sparse,
                                                             critic_inputs=hidden)
                opponents.act(action, obs_t, mask_t, learner, env, batch.current_player)  # the other seats' actions
            if inputs is not None:
                if self.cached_inputs is None:
                    self.cached_inputs = [torch.zeros((T, *x.shape), dtype=x.dtype, device=device) for x in inputs]
                for buffer, x in zip(self.cached_inputs, inputs):
                    buffer[t] = x
            if sparse is None:
                self.obs_buf[t] = obs_t
            else:
                self.sparse_buf = _keep_sparse(self.sparse_buf, sparse, t, T)
            self.mask_buf[t], self.action_buf[t], self.logprob_buf[t] = mask_t, action, logprob
            self.value_buf[t] = value.cpu().numpy()
            recorded[t] = learner
            self.player_buf[t] = batch.current_player
            decisions += int(learner.sum())

            if self.table_players is not None:  # (a step that ends a match may seat the game at a new table)
                players_buf[t] = self.table_players(self.games)
            if self.per_game_scale:
                self.scale_buf[t] = config.env.reward_scale / env.hand_scales
            batch = env.step(action.cpu().numpy())
            self.hand_over_buf[t] = batch.hand_over
            if batch.hand_over.any():
                ended = np.flatnonzero(batch.hand_over)
                hand_score_buf[t, ended] = batch.rewards[ended]
                # statistics of the hands the learner played (all seats of self-play games; a table of fewer
                # players than the batch's seat columns leaves the rest empty: not hands)
                played = opponents.learner_seats(ended) & (np.arange(hand_score_buf.shape[2]) < players_buf[t, ended, None])
                hand_score_sum += float(batch.rewards[ended][played].sum())
                hands_seen += int(played.sum())
                bids_made += int(batch.bid_made[ended][played].sum())
                opponents.draw(ended, progress())
        self.batch = batch

        # ----------------------------------------------- per-seat rewards and GAE
        # Each hand's reward goes to each seat's last decision of the hand; decisions still open at the
        # rollout's end bootstrap through their value but are not trained on (blackout_training.ppo.returns).
        scale = self.scale_buf if self.per_game_scale else self.reward_scale
        rewards = hand_rewards(hand_score_buf, config.env.reward, scale, players_buf)
        targets = seat_returns(self.player_buf, recorded, self.hand_over_buf, rewards, self.value_buf,
                               config.ppo.gamma, config.ppo.gae_lambda)

        # ---------------------------------------- the trainable decisions, (step, game) order
        flat = np.flatnonzero(targets.trainable.reshape(-1))
        rows = torch.from_numpy(flat).to(device)

        def pick(buffer: torch.Tensor) -> torch.Tensor:
            return buffer.flatten(0, 1).index_select(0, rows)

        def pick_numpy(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(array.reshape(-1)[flat]).to(device)

        seconds = time.perf_counter() - started
        self.last_timing.update(decisions=decisions, seconds=seconds)
        return Rollout(
            sparse=SparseRows(*(pick(x) for x in self.sparse_buf)) if self.sparse_buf else None,
            obs=None if self.obs_buf is None else pick(self.obs_buf),
            card_inputs=None if self.cached_inputs is None else [pick(x) for x in self.cached_inputs],
            mask=pick(self.mask_buf),
            actions=pick(self.action_buf),
            logprobs=pick(self.logprob_buf),
            values=pick_numpy(self.value_buf),
            advantages=pick_numpy(targets.advantages),
            returns=pick_numpy(targets.returns),
            critic_inputs=None if self.oracle_buf is None else pick(self.oracle_buf),
            decisions=decisions,
            hand_score_sum=hand_score_sum,
            hands=hands_seen,
            bids_made=bids_made,
            seconds=seconds,
        )
