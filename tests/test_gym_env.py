"""The single-agent Gymnasium environment: check_env, masks, opponents, rewards, registration, MaskablePPO."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from env_configs import CONFIGS
from gymnasium.utils.env_checker import check_env

import blackout_env  # noqa: F401 - registers the ids
from blackout_env import BlackoutGymEnv, IllegalActionError, Rules
from blackout_env.game.encoding import encode, observation_size


def first_legal(view):
    """A deterministic opponent: the lowest legal action."""
    return view.legal_actions[0]


def play(environment, seed, rng_seed=0):
    """One episode with random legal learner actions; returns the rewards."""
    rng = np.random.default_rng(rng_seed)
    environment.reset(seed=seed)
    rewards, done = [], False
    while not done:
        action = int(rng.choice(np.flatnonzero(environment.action_masks())))
        _, reward, terminated, truncated, _ = environment.step(action)
        rewards.append(reward)
        done = terminated or truncated
    return rewards


@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_passes_gymnasium_check_env(kwargs):
    environment = BlackoutGymEnv(opponents=first_legal, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(environment, skip_render_check=True)


def test_passes_check_env_through_gym_make_with_rendering():
    environment = gym.make("blackout/Blackout-v0", opponents=first_legal, rules="short", render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(environment.unwrapped)
    assert "hand of player_0" in environment.unwrapped.render()


@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_masks_and_observations_are_the_learners_at_every_step(kwargs):
    environment = BlackoutGymEnv(opponents=first_legal, learner_seat="random", **kwargs)
    rng = np.random.default_rng(1)
    observation, info = environment.reset(seed=2)
    done = False
    while not done:
        game = environment.game
        seat = environment.learner_seat
        assert game.current_player == seat
        assert np.flatnonzero(environment.action_masks()).tolist() == game.legal_actions()
        assert np.array_equal(info["action_mask"].astype(bool), environment.action_masks())
        assert np.array_equal(observation, encode(game.view(seat)))
        action = int(rng.choice(game.legal_actions()))
        observation, _, done, _, info = environment.step(action)


def test_rewards_add_up_to_the_learners_match_total():
    environment = BlackoutGymEnv(rules="short", opponents=first_legal, learner_seat=2)
    rewards = play(environment, seed=4)
    assert sum(rewards) == environment.game.scores[2]


def test_win_reward_arrives_at_the_end_of_the_match():
    environment = BlackoutGymEnv(rules={"hand_sizes": [2, 1]}, opponents=first_legal, reward="win")
    rewards = play(environment, seed=4)
    winners = environment.game.winners()
    assert rewards[:-1] == [0.0] * (len(rewards) - 1)
    assert rewards[-1] == (1 / len(winners) if 0 in winners else 0.0)


def test_same_seed_same_episode_with_seeded_opponents():
    calls = []

    class CountingBot:
        name = "counting"

        def __init__(self):
            self.rng = np.random.default_rng(0)

        def seed(self, seed):
            calls.append(seed)
            self.rng = np.random.default_rng(seed)

        def act(self, view):
            return int(self.rng.choice(view.legal_actions))

    environment = BlackoutGymEnv(rules="short", opponents=CountingBot())
    first = play(environment, seed=11)
    history = environment.game.history
    second = play(environment, seed=11)
    assert first == second and environment.game.history == history and len(calls) == 6


def test_opponents_listed_per_seat_play_their_own_seats():
    seen = {}

    def recorder(name):
        def act(view):
            seen.setdefault(name, set()).add(view.player)
            return view.legal_actions[0]

        return act

    environment = BlackoutGymEnv(rules={"hand_sizes": [2]}, opponents=[recorder("a"), recorder("b"), recorder("c")], learner_seat=1)
    play(environment, seed=0)
    assert seen == {"a": {2}, "b": {3}, "c": {0}}  # clockwise from the learner


@pytest.mark.parametrize("name", ["random", "heuristic"])
def test_named_opponents_come_from_baselines(name):
    environment = BlackoutGymEnv(rules="short", opponents=name)
    rewards = play(environment, seed=3)
    assert environment.game.phase == "game_over" and sum(rewards) == environment.game.scores[0]


def test_blackout_env_imports_neither_baselines_nor_torch():
    code = "import blackout_env, sys; print('blackout_baselines' in sys.modules or 'blackout_training' in sys.modules, 'torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]


def test_gym_make_works_in_a_fresh_interpreter_without_an_import():
    code = (
        "import gymnasium as gym\n"
        "e = gym.make('blackout_env:blackout/Blackout-v0')\n"
        "obs, info = e.reset(seed=0)\n"
        "print(obs.shape[0], e.unwrapped.rules.num_players, sorted(i for i in gym.registry if i.startswith('blackout/')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split(maxsplit=2)[:2] == [str(observation_size(Rules())), "4"]
    assert "blackout/BlackoutHand-v0" in result.stdout


def test_penalized_illegal_action_ends_the_episode():
    environment = BlackoutGymEnv(opponents=first_legal, illegal_reward=-3)
    environment.reset(seed=0)
    _, reward, terminated, truncated, info = environment.step(0)  # a card while bidding
    assert (reward, terminated, truncated) == (-3.0, True, False) and info["illegal_action"] is True
    with pytest.raises(RuntimeError, match="call reset"):
        environment.step(52)


def test_stepping_before_reset_is_a_clear_error():
    environment = BlackoutGymEnv(opponents=first_legal)
    with pytest.raises(RuntimeError, match="call reset"):
        environment.step(52)
    with pytest.raises(RuntimeError, match="before reset"):
        environment.action_masks()


def test_raise_mode_leaves_the_episode_usable():
    environment = BlackoutGymEnv(opponents=first_legal, illegal_action="raise")
    environment.reset(seed=0)
    with pytest.raises(IllegalActionError, match="bidding is not over"):
        environment.step(0)
    environment.step(52 + 1)
    assert environment.game.bids[0] == 1


def test_an_opponent_that_cheats_is_named():
    environment = BlackoutGymEnv(opponents=lambda view: 0, learner_seat=0)
    with pytest.raises(IllegalActionError, match="opponent .* in seat 1 chose 0"):
        environment.reset(seed=0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"opponents": "grandmaster"}, "opponents: unknown policy 'grandmaster'"),
        ({"opponents": 42}, "opponents: expected a policy spec"),
        ({"opponents": [first_legal]}, "one opponent per other seat"),
        ({"learner_seat": 4}, "learner_seat"),
        ({"learner_seat": "left"}, "learner_seat"),
        ({"reward": "money"}, "reward: must be one of"),
    ],
)
def test_bad_arguments_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BlackoutGymEnv(**kwargs)


def test_maskable_ppo_trains_a_few_hundred_steps():
    import sb3_contrib  # the dev extra installs it; imported here because it imports torch
    environment = BlackoutGymEnv(rules={"hand_sizes": [3, 2, 1]}, opponents=first_legal, episode="hand")
    model = sb3_contrib.MaskablePPO("MlpPolicy", environment, n_steps=64, batch_size=32, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=256)
    observation, _ = environment.reset(seed=1)
    action, _ = model.predict(observation, action_masks=environment.action_masks(), deterministic=True)
    assert environment.action_masks()[int(action)]


def test_a_bad_deck_option_is_an_error_and_the_episode_goes_on():
    environment = BlackoutGymEnv(opponents=first_legal)
    environment.reset(seed=0)
    game = environment.game.to_json()
    with pytest.raises(ValueError, match="not a permutation"):
        environment.reset(options={"deck": [0] * 52})
    assert environment.game.to_json() == game
    environment.step(int(np.flatnonzero(environment.action_masks())[0]))


def test_a_refused_seeded_reset_leaves_the_random_stream_as_it_was():
    def make():
        return gym.make("blackout_env:blackout/Blackout-v0", learner_seat="random")

    reference, refused = make(), make()
    reference.reset(seed=0)
    refused.reset(seed=0)
    with pytest.raises(ValueError, match="unknown option"):
        refused.reset(seed=99, options={"dealer": 1})
    assert refused.unwrapped.np_random_seed == 0
    assert np.array_equal(refused.reset()[0], reference.reset()[0])
    assert np.array_equal(refused.reset(seed=np.int64(5))[0], reference.reset(seed=5)[0])  # a numpy integer seed too


def test_human_render_mode_draws_at_reset_and_after_every_step_once(capsys):
    environment = BlackoutGymEnv(rules="short", opponents="random", render_mode="human")
    _, info = environment.reset(seed=0)
    assert capsys.readouterr().out.count("bids total") == 1
    for _ in range(3):
        _, _, terminated, _, info = environment.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert capsys.readouterr().out.count("bids total") == 1  # the learner's table, not every opponent's move
        if terminated:
            break


def test_spectator_must_be_true_or_false():
    with pytest.raises(ValueError, match="spectator: expected True or False, got 'yes'"):
        BlackoutGymEnv(spectator="yes")


def test_an_opponent_that_fails_ends_the_episode_and_the_learners_next_action_is_never_played_in_its_seat():
    calls = {"n": 0}

    def flaky(view):
        calls["n"] += 1
        return 999 if calls["n"] == 1 else view.legal_actions[0]

    env = gym.make("blackout_env:blackout/Blackout-v0", opponents=flaky, learner_seat=3)
    with pytest.raises(IllegalActionError, match="chose 999"):
        env.reset(seed=0)
    aec = env.unwrapped.aec_env
    with pytest.raises(RuntimeError, match="an opponent failed"):
        env.step(52)
    assert all(aec.infos[agent]["bid"] == -1 for agent in aec.possible_agents[1:])  # nothing played for seat 1
    env.reset(seed=1)  # a new episode plays on
    assert env.unwrapped.learner_seat == 3


def test_hand_over_reports_every_hand_that_ends_during_a_step():
    for seat in range(4):
        env = gym.make("blackout_env:blackout/Blackout-v0", learner_seat=seat)
        _, info = env.reset(seed=seat)
        ended, terminated = 0, False
        while not terminated:
            _, _, terminated, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            ended += info["hand_over"]
        assert ended == len(env.unwrapped.rules.hand_sizes), seat
