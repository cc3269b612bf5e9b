"""Training's heuristic opponents on the batched engine decide in one call, exactly as HeuristicBot.act."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from blackout_baselines.heuristic import HeuristicBot
from blackout_baselines.heuristic_batch import BatchedHeuristic
from blackout_baselines.random_bot import RandomBot
from blackout_training.ppo.config import OpponentsConfig
from blackout_training.ppo.opponents import OpponentPool
from blackout_training.ppo.tables import TablesVecEnv
from blackout_training.ppo.vec_env import BatchedVecEnv, EngineVecEnv

from blackout_env import BlackoutGame, Rules
from blackout_env.game.universal import MAX_PLAYERS


def _bot_actions(env, bots, decks, steps: int = 40) -> list[list[int]]:
    """Every seat of every game played by the pool's bots (game i by bots[i % 2]) for ``steps`` steps."""
    n = env.rules.num_players
    pool = OpponentPool(OpponentsConfig(mode="pool"), env.num_envs, n, bots, lambda: None, np.random.default_rng(0),
                        rules=env.rules)
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


def first_legal(view) -> int:
    return view.legal_actions[0]


def test_heuristic_opponents_on_the_batched_engine_act_as_on_the_engine(monkeypatch):
    rules = Rules.preset("standard")
    decks = np.array([BlackoutGame(rules, seed=seed).decks for seed in range(12)])
    expected = _bot_actions(EngineVecEnv(rules, 12), [HeuristicBot(), first_legal], decks)

    def refuse(self, view):
        raise AssertionError("HeuristicBot.act called one game at a time on the batched engine")

    monkeypatch.setattr(HeuristicBot, "act", refuse)
    assert _bot_actions(BatchedVecEnv(rules, 12), [HeuristicBot(), first_legal], decks) == expected


def test_a_bot_that_acts_in_batch_is_asked_once_per_step_for_all_its_games():
    rules = Rules.preset("standard")
    env = BatchedVecEnv(rules, 12)
    bot = RandomBot(seed=1)
    calls = []
    act_batch = bot.act_batch
    bot.act_batch = lambda obs, mask: calls.append(len(obs)) or act_batch(obs, mask)
    pool = OpponentPool(OpponentsConfig(mode="pool"), env.num_envs, rules.num_players, [bot, first_legal],
                        lambda: None, np.random.default_rng(0), rules=rules)
    assert [seat.kind for seat in pool.bots] == ["batch", "view"]
    pool.opponent_id[:] = np.arange(env.num_envs) % 2
    pool.learner_at[:] = False
    batch = env.reset(seed=5)
    for _ in range(30):
        action = torch.full((env.num_envs,), -1, dtype=torch.long)
        obs = torch.as_tensor(batch.observation)
        pool.act(action, obs, None, np.zeros(env.num_envs, dtype=bool), env, batch.current_player)
        assert (action >= 0).all()
        batch = env.step(action.numpy())
    assert calls == [6] * 30  # the six games of the batched bot, in one call per step


def test_heuristic_opponents_on_a_table_distribution_decide_per_engine_as_one_view_at_a_time(monkeypatch):
    """Universal games over several tables (one batched engine per group): the batched heuristic of each
    group's rules, translated to universal actions, equals HeuristicBot's universal actions view by view."""

    def played(batched: bool) -> list[list[int]]:
        env = TablesVecEnv(["standard", "preset", "random", "jokers"], 16, 4, Rules.preset("standard"))
        pool = OpponentPool(OpponentsConfig(mode="pool"), env.num_envs, MAX_PLAYERS, [HeuristicBot()], lambda: None,
                            np.random.default_rng(0), table_players=lambda g: env.players[g], universal=True,
                            rules=env.rules)
        pool.opponent_id[:] = 0
        pool.learner_at[:] = False
        if not batched:
            monkeypatch.setattr(env, "engines", lambda: [])
        batch = env.reset(seed=3)
        actions = []
        for _ in range(60):
            action = torch.full((env.num_envs,), -1, dtype=torch.long)
            pool.act(action, None, None, np.zeros(env.num_envs, dtype=bool), env, batch.current_player)
            actions.append(action.tolist())
            batch = env.step(action.numpy())
        return actions

    expected = played(batched=False)
    calls = []
    real = BatchedHeuristic.act
    monkeypatch.setattr(BatchedHeuristic, "act", lambda self, engine, games=None: calls.append(1) or real(self, engine, games))
    monkeypatch.setattr(HeuristicBot, "act", lambda self, view: pytest.fail("HeuristicBot.act called one view at a time"))
    assert played(batched=True) == expected
    assert len(calls) >= 60 * 4  # every group's games in one call per step
