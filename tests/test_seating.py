"""One way to seat a policy at a table (blackout_env.agents.seating.Seat), for the Gym env, the vector env and the league."""

from __future__ import annotations

import numpy as np
import pytest
from blackout_baselines.heuristic import HeuristicBot
from blackout_baselines.heuristic_batch import BatchedHeuristic

from blackout_env import BlackoutGymEnv, Rules
from blackout_env.agents.seating import Seat
from blackout_env.batched import BatchedBlackout
from blackout_env.envs.vector_env import BlackoutVectorEnv

RULES = Rules.preset("standard")


class FirstLegalInBatch:
    """A policy with only act_batch: the first legal action of every row."""

    name = "first-legal"

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return mask.argmax(axis=1)


def test_a_seat_acts_as_its_policy_can_in_a_batch_and_by_view_in_one_game():
    assert Seat("random", RULES).kind == "random"
    assert Seat("heuristic", RULES).kind == "engine"
    assert Seat("heuristic:seed=3", RULES).kind == "engine"  # any HeuristicBot decides from the engine's arrays
    assert Seat(FirstLegalInBatch(), RULES).kind == "batch"
    assert Seat(lambda view: view.legal_actions[0], RULES).kind == "view"
    # one game: every seat acts from the view
    assert {Seat(spec, RULES, batched=False).kind for spec in ("random", "heuristic", FirstLegalInBatch())} == {"view"}


def test_a_subclass_of_the_heuristic_is_asked_by_view_since_the_batched_version_would_not_follow_it():
    class Contrarian(HeuristicBot):
        def act(self, view):
            return view.legal_actions[-1]

    assert Seat(Contrarian(), RULES).kind == "view"
    assert isinstance(HeuristicBot().batched(RULES), BatchedHeuristic)


def test_engine_and_batch_seats_choose_what_their_policy_chooses_view_by_view():
    engine = BatchedBlackout(RULES, 8)
    rng = np.random.default_rng(0)
    out = engine.reset(seed=1)
    games = np.arange(8)
    for _ in range(60):
        seats = out.current_player.astype(np.int64)
        views = [engine.view(g, s) for g, s in zip(games.tolist(), seats.tolist())]
        for spec, expected in (("heuristic", [HeuristicBot().act(v) for v in views]),
                               (FirstLegalInBatch(), [v.legal_actions[0] for v in views])):
            seat = Seat(spec, RULES)
            chosen = seat.act_games(engine, games, seats, lambda: (engine.observe(), engine.action_mask()), rng)
            assert chosen.tolist() == expected
        out = engine.step(engine.random_actions(rng))


def test_a_batch_only_policy_plays_one_game_through_its_encoded_view():
    env = BlackoutGymEnv(opponents=FirstLegalInBatch())
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        obs, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert done


def test_what_names_no_policy_or_cannot_play_here_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"opponents: expected a policy spec .*; 42 names no policy"):
        Seat(42, RULES)
    with pytest.raises(ValueError, match=r"opponents: unknown policy 'nobody'"):
        Seat("nobody", RULES)

    class RulesSizedOnly(FirstLegalInBatch):
        observation = "rules"

    with pytest.raises(ValueError, match=r"reads the rules-sized observation and has no act\(view\)"):
        BlackoutVectorEnv(2, opponents=RulesSizedOnly(), observation="universal")


def test_a_batch_policy_that_answers_the_wrong_shape_is_named():
    class Short(FirstLegalInBatch):
        def act_batch(self, obs, mask):
            return mask.argmax(axis=1)[:1]

    envs = BlackoutVectorEnv(4, opponents=Short(), seed=0)
    with pytest.raises(ValueError, match=r"opponent 'first-legal': act_batch returned int64 \(1,\); expected \d+ int"):
        envs.reset(seed=0)
