"""Who plays the seats the learner does not, in each game of a training batch (``opponents.mode``).

``self_play``: every seat of every game is the current learner, and every
decision is training data. ``pool``: every game draws, at every hand, who plays
it: the current learner (a self-play game), a past snapshot of the learner
(sampled, not greedy), or a baseline policy from ``opponents.bots``; in the
last two cases the learner holds ``k`` seats (``k`` drawn from
``opponents.learner_seats``, the seats at random) and only those seats'
decisions are data. The shares are ``opponents.latest_fraction`` (self-play)
and ``opponents.bot_fraction`` (bots); from ``opponents.bots_only_after`` of
the run on, every game plays against the bots.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from blackout_env import Rules
from blackout_env.agents.seating import Seat
from blackout_env.game.universal import universal_actions

from ..agents.policy_net import ActorCritic
from .config import OpponentsConfig
from .vec_env import VecEnv

__all__ = ["OpponentPool"]


class OpponentPool:
    """The opponents of every game: past snapshots of the learner and baseline policies.

    Args:
        config: the ``opponents`` section.
        num_envs, num_players: the batch's shape.
        bots: the loaded ``opponents.bots`` policies (or their seats).
        new_model: makes an empty network like the learner's (for snapshots).
        rng: the trainer's generator (every draw comes from it, so a resumed run continues the stream).
        table_players: with a table distribution, the seats at each game's table (games -> counts): the
            learner's seats are drawn among those.
        universal: the learner acts in the universal action space: the bots' actions are translated to it.
        rules: the run's rules (of the reference table, with a table distribution).
    """

    def __init__(
        self,
        config: OpponentsConfig,
        num_envs: int,
        num_players: int,
        bots: Sequence[Any],
        new_model: Callable[[], ActorCritic],
        rng: np.random.Generator,
        table_players: Callable[[np.ndarray], np.ndarray] | None = None,
        universal: bool = False,
        *,
        rules: Rules,
    ) -> None:
        self.table_players, self.universal = table_players, universal
        self.config, self.num_players, self.new_model, self.rng = config, num_players, new_model, rng
        observation = "universal" if universal else "rules"
        self.bots = [bot if isinstance(bot, Seat) else Seat(bot, rules, observation) for bot in bots]
        """The ``opponents.bots``, seated as the envs seat their opponents (:class:`~blackout_env.agents.seating.Seat`)."""
        self.snapshots: list[dict[str, torch.Tensor]] = []
        """Past snapshots' weights (saved in checkpoints), oldest first."""
        self.networks: list[ActorCritic] = []
        self.games = np.arange(num_envs)
        # The learner's seats in each game (pool mode; redrawn with the opponents at every hand).
        self.learner_at = np.arange(num_players) == (np.arange(num_envs) % num_players)[:, None]
        # Who plays the other seats of each game: -1 the current learner (self-play), k < K snapshots[k],
        # K + j bots[j] (K snapshots).
        self.opponent_id = np.full(num_envs, -1)

    def load(self, snapshots: Sequence[dict[str, torch.Tensor]]) -> None:
        """Replace the snapshots (a resumed run's) and rebuild their networks."""
        self.snapshots = list(snapshots)
        self.networks = []
        for weights in self.snapshots:
            net = self.new_model()
            net.load_state_dict(weights)
            self.networks.append(net.eval())

    def add_snapshot(self, agent: ActorCritic) -> None:
        """Add the learner's current weights; the oldest snapshot beyond ``pool_size`` is dropped."""
        snapshots = [*self.snapshots, {k: v.detach().cpu().clone() for k, v in agent.state_dict().items()}]
        self.load(snapshots[-self.config.pool_size :])

    def draw(self, games: np.ndarray, progress: float) -> None:
        """Draw the opponents and the learner's seats of ``games`` (pool mode; self-play draws nothing).

        ``progress`` is the fraction of the run done (for ``bots_only_after``).
        """
        config, rng = self.config, self.rng
        if config.mode == "self_play" or len(games) == 0:
            return
        u = rng.random(len(games))
        bot_fraction = 1.0 if progress >= config.bots_only_after else config.bot_fraction
        is_bot = u >= 1.0 - bot_fraction
        is_past = ~is_bot & (u >= config.latest_fraction) & (len(self.snapshots) > 0)
        choice = np.full(len(games), -1)
        choice[is_past] = rng.integers(max(len(self.snapshots), 1), size=int(is_past.sum()))
        if self.bots:
            choice[is_bot] = len(self.snapshots) + rng.integers(len(self.bots), size=int(is_bot.sum()))
        self.opponent_id[games] = choice
        # k learner seats per game, k drawn from learner_seats: the seats with the k smallest random keys
        counts = np.asarray(config.learner_seats)[rng.integers(len(config.learner_seats), size=len(games))]
        keys = rng.random((len(games), self.num_players))
        if self.table_players is not None:  # a seat that is not at the table is never the learner's
            keys[np.arange(self.num_players) >= self.table_players(games)[:, None]] = 2.0
        ranks = keys.argsort(axis=1).argsort(axis=1)
        self.learner_at[games] = ranks < counts[:, None]

    def learner_acts(self, players: np.ndarray) -> np.ndarray:
        """(num_envs,) bool: the current learner plays the seat to act (its own seat, or any seat of self-play)."""
        return (self.opponent_id < 0) | self.learner_at[self.games, players]

    def learner_seats(self, games: np.ndarray) -> np.ndarray:
        """(len(games), num_players) bool: the seats the current learner played in ``games``."""
        return (self.opponent_id[games, None] < 0) | self.learner_at[games]

    def act(
        self, action: torch.Tensor, obs: torch.Tensor, mask: torch.Tensor, learner: np.ndarray, env: VecEnv,
        players: np.ndarray,
    ) -> None:
        """Overwrite ``action`` where an opponent acts: snapshots sample from their policy, bots as they are seated.

        A bot that can decide in batch (the heuristic from the engine's arrays, a network from observation
        rows: :meth:`~blackout_env.agents.seating.Seat.act_games`) decides all its games of each batched engine (one
        engine, or one per table group) in one call; any other acts one game at a time from the seat's view.
        """
        device = action.device
        with torch.no_grad():
            for k, net in enumerate(self.networks):
                rows = np.flatnonzero(~learner & (self.opponent_id == k))
                if len(rows):
                    rows_t = torch.from_numpy(rows).to(device)
                    action[rows_t] = net.get_action_and_value(obs[rows_t], mask[rows_t])[0]
        first_bot = len(self.snapshots)
        engines = env.engines()  # the batched engines behind the games (none: one view at a time)
        for j, seat in enumerate(self.bots):
            rows = np.flatnonzero(~learner & (self.opponent_id == first_bot + j))
            if not len(rows):
                continue
            bot_actions = np.zeros(len(rows), dtype=np.int64)
            one_by_one = np.ones(len(rows), dtype=bool)
            if seat.kind != "view":  # decided for every game of an engine at once (Seat.act_games)
                for start, engine in engines:
                    inside = (rows >= start) & (rows < start + engine.num_envs)
                    if not inside.any():
                        continue
                    here = rows[inside]
                    games = here - start

                    def observe(here=here, games=games, engine=engine) -> tuple[np.ndarray, np.ndarray]:
                        return obs[torch.from_numpy(here).to(device)].cpu().numpy(), engine.action_mask()[games]

                    chosen = seat.act_games(engine, games, players[here], observe, self.rng)
                    bot_actions[inside] = universal_actions(chosen, engine.rules) if self.universal else chosen
                    one_by_one &= ~inside
            for k in np.flatnonzero(one_by_one):  # the others act one game at a time, from the seat's view
                i = int(rows[k])
                view = env.view(i, int(players[i]))
                chosen = seat.act(view)
                bot_actions[k] = universal_actions(chosen, view.rules) if self.universal else chosen
            action[torch.from_numpy(rows).to(device)] = torch.from_numpy(bot_actions).to(device)
