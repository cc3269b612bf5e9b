"""Training's heuristic opponents on the batched engine decide in one call, exactly as HeuristicBot.act."""

from __future__ import annotations

import numpy as np
import torch
from blackout_baselines.heuristic import HeuristicBot
from blackout_baselines.random_bot import RandomBot
from blackout_training.config import OpponentsConfig
from blackout_training.opponents import OpponentPool
from blackout_training.vec_env import BatchedVecEnv, EngineVecEnv

from blackout_env import BlackoutGame, Rules


def _bot_actions(env, bots, decks, steps: int = 40) -> list[list[int]]:
    """Every seat of every game played by the pool's bots (game i by bots[i % 2]) for ``steps`` steps."""
    n = env.rules.num_players
    pool = OpponentPool(OpponentsConfig(mode="pool"), env.num_envs, n, bots, lambda: None, np.random.default_rng(0))
    pool.opponent_id[:] = np.arange(env.num_envs) % len(bots)  # no snapshots: bot j is opponent id j
    pool.learner_at[:] = False
    batch = env.reset(seed=5, decks=decks)
    played = []
    for _ in range(steps):
        action = torch.full((env.num_envs,), -1, dtype=torch.long)
        learner = np.zeros(env.num_envs, dtype=bool)
        pool.act(action, None, None, learner, env, batch.current_player)
        played.append(action.tolist())
        batch = env.step(action.numpy())
    return played


def test_heuristic_opponents_on_the_batched_engine_act_as_on_the_engine(monkeypatch):
    rules = Rules.preset("standard")
    decks = np.array([BlackoutGame(rules, seed=seed).decks for seed in range(12)])
    expected = _bot_actions(EngineVecEnv(rules, 12), [HeuristicBot(), RandomBot(seed=1)], decks)

    def refuse(self, view):
        raise AssertionError("HeuristicBot.act called one game at a time on the batched engine")

    monkeypatch.setattr(HeuristicBot, "act", refuse)
    assert _bot_actions(BatchedVecEnv(rules, 12), [HeuristicBot(), RandomBot(seed=1)], decks) == expected
