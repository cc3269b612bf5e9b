"""The PettingZoo AEC environment: PettingZoo's own tests, masks, rewards, fixed deals and bad input."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pettingzoo
import pytest
from env_configs import CONFIGS
from pettingzoo.test import api_test, render_test, seed_test

import blackout_env
from blackout_env import BlackoutGame, IllegalActionError, Rules, RulesError, env, raw_env
from blackout_env.game.encoding import block_slices, encode, observation_size


def legal_from(observation):
    return np.flatnonzero(observation["action_mask"])


def play_random(environment, seed, check=None):
    """Play one episode with random legal actions; ``check(environment, agent)`` runs before each action."""
    rng = np.random.default_rng(seed)
    environment.reset(seed=seed)
    for agent in environment.agent_iter():
        observation, _, terminated, truncated, _ = environment.last()
        if terminated or truncated:
            environment.step(None)
            continue
        if check is not None:
            check(environment, agent)
        environment.step(int(rng.choice(legal_from(observation))))


# ---------------------------------------------------------------- PettingZoo's tests
@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_passes_pettingzoo_api_test(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test warns about Dict observations and its own reset options
        api_test(env(**kwargs), num_cycles=60)


@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_passes_pettingzoo_seed_test(kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(lambda: env(**kwargs), num_cycles=40)


@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_passes_pettingzoo_render_test(kwargs):
    render_test(lambda render_mode: env(render_mode=render_mode, **kwargs))


@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_pickle_round_trip_keeps_the_configuration(kwargs):
    original = env(**kwargs)
    copy = pickle.loads(pickle.dumps(original))
    assert copy.unwrapped.rules == original.unwrapped.rules and copy.unwrapped.episode == original.unwrapped.episode
    original.reset(seed=3)
    copy.reset(seed=3)
    for _ in range(6):
        a, b = original.last()[0], copy.last()[0]
        assert np.array_equal(a["observation"], b["observation"])
        action = int(legal_from(a)[-1])
        original.step(action)
        copy.step(action)


# ---------------------------------------------------------------- spaces and metadata
def test_metadata_agents_and_cached_spaces():
    e = env()
    assert e.metadata["name"] == "blackout_v0" and e.metadata["is_parallelizable"] is False
    assert "render_fps" in e.metadata
    e.reset(seed=0)
    assert e.agents == ["player_0", "player_1", "player_2", "player_3"]
    assert e.observation_space("player_1") is e.observation_space("player_1")
    assert e.action_space("player_2") is e.action_space("player_2")
    space = e.observation_space("player_0")
    assert space["observation"].shape == (observation_size(Rules()),) and space["action_mask"].dtype == np.int8
    assert e.action_space("player_0").n == Rules().num_actions == 63
    assert isinstance(e.unwrapped.game, BlackoutGame)


@pytest.mark.skipif(not hasattr(pettingzoo, "make"), reason="PettingZoo < 1.27 has no registry")
def test_registered_with_pettingzoo_make():
    e = pettingzoo.make("aec", "blackout/Blackout-v0", rules={"num_players": 5, "hand_sizes": [3]})
    e.reset(seed=1)
    assert e.num_agents == 5 and e.unwrapped.rules.hand_sizes == (3,)
    assert blackout_env.raw_env is raw_env


# ---------------------------------------------------------------- observations and masks
@pytest.mark.parametrize("kwargs", CONFIGS.values(), ids=CONFIGS.keys())
def test_masks_equal_the_engine_legal_actions_and_observations_equal_the_encoder(kwargs):
    def check(environment, agent):
        game = environment.unwrapped.game
        for other in environment.agents:
            observation = environment.observe(other)
            seat = int(other.split("_")[1])
            expected = game.legal_actions() if seat == game.current_player else []
            assert observation["action_mask"].dtype == np.int8
            assert legal_from(observation).tolist() == expected
            assert np.array_equal(observation["observation"], encode(game.view(seat)))

    play_random(raw_env(**kwargs), seed=4, check=check)


def test_observations_are_fresh_arrays():
    e = raw_env()
    e.reset(seed=0)
    first = e.observe("player_1")
    first["observation"][:] = 9
    first["action_mask"][:] = 0
    again = e.observe("player_1")
    assert again["observation"].max() <= 1 and again["action_mask"].sum() > 0


# ---------------------------------------------------------------- fixed deals
def test_fixed_deal_reset_reproduces_a_game_exactly():
    e = raw_env(rules={"hand_sizes": [4, 3, 2]})
    rewards = []
    play_random(e, seed=8)
    first = e.unwrapped.game
    e.reset(seed=99, options={"decks": first.decks, "first_dealer": first.first_dealer})
    for action in first.actions:
        e.step(action)
        rewards.append(dict(e.rewards))
    assert e.unwrapped.game.history == first.history and e.unwrapped.game.scores == first.scores
    assert all(e.terminations.values())


def test_the_game_is_the_episode_replayed_by_the_engine_and_a_copy():
    # The env plays on the compiled core; env.game is a new engine at each read, replayed from the decks.
    e = raw_env(rules={"hand_sizes": [3, 2]})
    e.reset(seed=3)
    kept = e.game
    taken = []
    rng = np.random.default_rng(3)
    for _ in range(18):  # into the second hand
        action = int(rng.choice(legal_from(e.observe(e.agent_selection))))
        e.step(action)
        taken.append(action)
    assert len(kept.actions) == 0  # a game read earlier is as it was
    game = e.game
    assert game is not kept and game.actions == taken and game.round_index == 1
    replay = BlackoutGame(e.rules, decks=kept.decks, first_dealer=kept.first_dealer)
    for action in taken:
        replay.step(action)
    assert replay.history == game.history
    assert e.agent_selection == f"player_{game.current_player}"
    assert [e.infos[agent]["score"] for agent in e.possible_agents] == game.scores
    game.step(game.legal_actions()[0])  # stepping the copy leaves the env as it was
    assert e.game.actions == taken


def test_same_seed_same_deals_and_a_deck_option_fixes_the_first_hand():
    a, b = raw_env(), raw_env()
    a.reset(seed=5)
    b.reset(seed=5)
    assert a.game.hands == b.game.hands
    deck = list(range(52))
    a.reset(options={"deck": deck})
    assert a.game.hands[1] == list(range(0, 40, 4))  # seat 1, left of dealer 0, gets cards 0, 4, 8, ...


def test_a_deck_that_is_not_a_permutation_is_rejected_and_the_episode_goes_on():
    e = raw_env()
    e.reset(seed=0)
    before = e.game.to_json()
    with pytest.raises(ValueError, match="not a permutation"):
        e.reset(options={"decks": [[0] * 52]})
    with pytest.raises(ValueError, match="round 12 does not exist"):
        e.reset(options={"decks": {12: list(range(52))}})
    assert e.game.to_json() == before
    e.step(int(legal_from(e.observe(e.agent_selection))[0]))


# ---------------------------------------------------------------- rewards and infos
def test_score_rewards_collected_through_last_add_up_to_the_match_totals():
    e = env(rules="short")
    e.reset(seed=2)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        observation, reward, terminated, truncated, _ = e.last()
        totals[agent] += reward
        e.step(None if terminated or truncated else int(legal_from(observation)[0]))
    game = e.unwrapped.game
    assert game.phase == "game_over"
    assert [totals[agent] for agent in e.possible_agents] == game.scores


def test_zero_sum_rewards_sum_to_zero_every_hand_and_scale_applies():
    e = raw_env(rules={"hand_sizes": [3, 2]}, reward="zero_sum", reward_scale=0.5)
    e.reset(seed=1)
    seen = 0
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent]:
            e.step(None)
            continue
        e.step(int(legal_from(e.observe(agent))[0]))
        if any(e.rewards.values()):
            seen += 1
            assert sum(e.rewards.values()) == pytest.approx(0.0)
            hand = e.game.round_scores[-1]
            assert e.rewards["player_0"] == pytest.approx(0.5 * (hand[0] - sum(hand[1:]) / 3))
    assert seen >= 1


def test_win_reward_shares_one_among_the_winners_at_the_end_only():
    e = raw_env(rules={"hand_sizes": [2, 1]}, reward="win")
    e.reset(seed=6)
    while not all(e.terminations.values()):
        e.step(int(legal_from(e.observe(e.agent_selection))[0]))
        if not all(e.terminations.values()):
            assert not any(e.rewards.values())
    winners = e.game.winners()
    assert [e.rewards[a] for a in e.possible_agents] == [1 / len(winners) if s in winners else 0 for s in range(4)]


def test_infos_carry_public_facts_and_the_finished_hand():
    e = raw_env(rules={"hand_sizes": [2, 1]})
    e.reset(seed=0)
    first = e.agent_selection
    e.step(52 + 1)
    assert e.infos[first]["bid"] == 1 and e.infos[first]["hand_size"] == 2
    while e.game.round_index == 0:
        e.step(int(legal_from(e.observe(e.agent_selection))[0]))
    game = e.game
    for seat, agent in enumerate(e.possible_agents):
        info = e.infos[agent]
        assert info["hand_over"] is True and info["round"] == 1 and info["bid"] == -1
        assert (info["last_hand_round"], info["last_hand_bid"], info["last_hand_tricks"], info["last_hand_score"]) == (
            0, game.round_bids[0][seat], game.round_tricks[0][seat], game.round_scores[0][seat],
        )
    e.step(int(legal_from(e.observe(e.agent_selection))[0]))
    assert e.infos["player_0"]["hand_over"] is False


# ---------------------------------------------------------------- one-hand episodes
def test_hand_episode_ends_after_one_hand_and_shows_the_finished_hand():
    e = raw_env(episode="hand", render_mode="ansi")
    e.reset(seed=3, options={"round": 7})  # the 3-card hand of the standard match
    assert e.game.hand_size == 3 and e.game.dealer == 3
    steps = 0
    while not all(e.terminations.values()):
        e.step(int(legal_from(e.observe(e.agent_selection))[0]))
        steps += 1
    assert steps == 4 + 4 * 3
    game = e.game
    assert [e.rewards[a] for a in e.possible_agents] == list(game.round_scores[0])
    obs = e.observe("player_0")
    assert obs["action_mask"].all()  # the terminal-mask convention
    assert obs["observation"][block_slices(Rules())["phase"]].tolist() == [0, 0, 1]
    view = e.view("player_0")
    assert view.phase == "game_over" and view.hand == () and sum(view.tricks_won) == 3
    assert "won by" in e.render()


def test_hand_episodes_draw_their_hand_from_the_match():
    e = raw_env(episode="hand")
    sizes = set()
    for seed in range(12):
        e.reset(seed=seed)
        sizes.add(e.game.hand_size)
    assert len(sizes) > 3


# ---------------------------------------------------------------- illegal actions and bad input
def test_illegal_action_raises_names_it_and_changes_nothing():
    e = env()
    e.reset(seed=0)
    agent = e.agent_selection
    observation = e.observe(agent)["observation"]
    # The hook: everyone bids 0 in a 10-card hand; then the dealer may not bid 10.
    for _ in range(3):
        e.step(52 + 0)
    dealer = e.agent_selection
    with pytest.raises(IllegalActionError, match="hook"):
        e.step(52 + 10)
    assert e.agent_selection == dealer == "player_0" and e.unwrapped.game.bids == [None, 0, 0, 0]
    e.step(52 + 1)  # still usable
    assert e.unwrapped.game.phase == "play"
    with pytest.raises(IllegalActionError, match="do not hold"):
        held = e.unwrapped.game.hands[e.unwrapped.game.current_player]
        e.step(next(c for c in range(52) if c not in held))
    assert observation.shape == (observation_size(Rules()),)


def test_penalize_ends_the_episode_and_charges_the_offender():
    e = env(illegal_action="penalize", illegal_reward=-5)
    e.reset(seed=0)
    offender = e.agent_selection
    e.step(0)  # a card during the bidding
    assert all(e.terminations.values())
    assert e.rewards[offender] == -5 and all(r == 0 for a, r in e.rewards.items() if a != offender)
    assert e.infos[offender]["illegal_action"] is True
    for _ in e.agent_iter():
        e.step(None)
    assert not e.agents


@pytest.mark.parametrize(
    "action, message",
    [(-1, "actions run 0..62"), (63, "actions run 0..62"), ("3", "an action is an int"), (1.0, "an action is an int"), (None, "must act")],
)
def test_a_bad_action_is_a_clear_error_in_every_mode(action, message):
    for mode in ("raise", "penalize"):
        e = env(illegal_action=mode)
        e.reset(seed=0)
        with pytest.raises(IllegalActionError, match=message):
            e.step(action)
        assert not any(e.unwrapped.terminations.values())
        e.step(np.int64(52 + 1))  # numpy ints are fine


def test_stepping_after_the_episode_ended():
    e = raw_env(rules={"hand_sizes": [1]})
    e.reset(seed=0)
    while not all(e.terminations.values()):
        e.step(int(legal_from(e.observe(e.agent_selection))[0]))
    with pytest.raises(ValueError, match="only valid action is None"):
        e.step(0)
    while e.agents:
        e.step(None)
    with pytest.raises(IllegalActionError, match="episode is over"):
        e.step(None)
    with pytest.raises(RuntimeError, match="before reset"):
        raw_env().step(0)


def test_the_wrapped_env_warns_when_stepped_after_the_episode():
    from pettingzoo.utils.env_logger import EnvLogger

    e = env(rules={"hand_sizes": [1]})
    e.reset(seed=0)
    for _agent in e.agent_iter():
        observation, _, terminated, truncated, _ = e.last()
        e.step(None if terminated or truncated else int(legal_from(observation)[0]))
    history = list(e.unwrapped.game.history)
    EnvLogger.mqueue.clear()
    e.step(0)  # PettingZoo's OrderEnforcingWrapper answers with a warning and does nothing
    assert any("Should reset() first" in message for message in EnvLogger.mqueue)
    assert e.unwrapped.game.history == history


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"colour": "red"}, TypeError, "colour"),
        ({"rules": "no-such-preset"}, RulesError, "unknown rules preset 'no-such-preset'"),
        ({"rules": {"num_players": 9}}, RulesError, "num_players"),
        ({"episode": "round"}, ValueError, "episode: must be one of"),
        ({"reward": "points"}, ValueError, "reward: must be one of"),
        ({"illegal_action": "ignore"}, ValueError, "illegal_action: must be one of"),
        ({"reward_scale": "big"}, ValueError, "reward_scale"),
        ({"render_mode": "video"}, ValueError, "render_mode"),
        ({"render_seat": 4}, ValueError, "render_seat"),
    ],
)
def test_bad_arguments_are_clear_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        env(**kwargs)


def test_bad_reset_options():
    e = raw_env()
    with pytest.raises(ValueError, match="'round' is for episode='hand'"):
        e.reset(options={"round": 2})
    with pytest.raises(ValueError, match="not both"):
        e.reset(options={"deck": list(range(52)), "decks": [list(range(52))]})
    with pytest.raises(ValueError, match="first_dealer"):
        e.reset(options={"first_dealer": 7})
    with pytest.raises(ValueError, match="unknown option\\(s\\) 'shuffle'; options: 'decks', 'deck', 'round', 'first_dealer'"):
        e.reset(options={"shuffle": True})
    with pytest.raises(ValueError, match="reset: option 'deck' is not a permutation"):
        e.reset(options={"deck": [0] * 52})
    order = blackout_env.deck_order([["AS"], ["KS"], ["2C"], ["3D"]], dealer=2, turned_card="5H")
    with pytest.raises(ValueError, match=r"^reset: option 'deck': the deck was built by deck_order for dealer 2"):
        raw_env(rules="single-hand").reset(options={"deck": order, "first_dealer": 0})
    e.reset(seed=0, options={"options": 1})  # PettingZoo api_test's placeholder is taken
    hand = raw_env(episode="hand")
    with pytest.raises(ValueError, match="'round' must be a hand of the match, 0..9, got 10"):
        hand.reset(seed=1, options={"round": 10})


@pytest.mark.parametrize("seed", [-5, 1.5, "1", True])
def test_a_bad_seed_is_refused_naming_the_parameter_and_nothing_changes(seed):
    e = raw_env()
    e.reset(seed=1)
    e.step(int(legal_from(e.observe(e.agent_selection))[0]))
    before = e.game.to_json()
    with pytest.raises(ValueError, match=f"seed: expected an int >= 0 or None, got {seed!r}"):
        e.reset(seed=seed)
    assert e.game.to_json() == before
    with pytest.raises(ValueError, match="seed: expected an int >= 0, a numpy Generator or None"):
        BlackoutGame(Rules(), seed=seed)


def test_spectator_must_be_true_or_false():
    with pytest.raises(ValueError, match="spectator: expected True or False, got 'yes'"):
        raw_env(spectator="yes")


def test_human_render_mode_draws_on_reset_and_on_every_step(capsys):
    e = env(render_mode="human", rules="short")
    e.reset(seed=0)
    assert "bids total" in capsys.readouterr().out
    for _ in range(3):
        e.step(int(legal_from(e.observe(e.agent_selection))[0]))
        assert "bids total" in capsys.readouterr().out


def test_a_failed_reset_leaves_the_random_stream_as_it_was():
    a, b = raw_env(), raw_env()
    a.reset(seed=4)
    b.reset(seed=4)
    with pytest.raises(ValueError):
        a.reset(options={"deck": [1, 2, 3]})
    a.reset()
    b.reset()
    assert a.game.hands == b.game.hands


def test_a_numpy_integer_seed_deals_as_the_same_python_int():
    a, b = raw_env(), raw_env()
    a.reset(seed=np.int64(7))
    b.reset(seed=7)
    assert a.game.hands == b.game.hands


# ---------------------------------------------------------------- the benchmark
def test_bench_aec_runs_every_target_and_writes_json(tmp_path, capsys):
    import json

    from blackout_training.bench import aec as bench

    out = tmp_path / "aec.json"
    assert bench.main(["--steps", "300", "--repeats", "1", "--players", "3", "--skip", "openspiel", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())["decisions_per_second"]
    assert set(figures) == {"engine", "raw_env", "env()", "gym", "trivial env()"}
    assert all(value > 0 for value in figures.values())
    assert "runs at" in capsys.readouterr().out


def test_bench_aec_takes_turns_on_the_wall_clock_and_prints_the_ratio_to_the_trivial_env(capsys):
    from blackout_training.bench import aec as bench

    args = ["--steps", "200", "--repeats", "2", "--clock", "wall", "--skip", "openspiel", "gym", "engine", "raw_env"]
    assert bench.main(args) == 0
    out = capsys.readouterr().out
    assert "wall time" in out and "of an env that does nothing" in out


def test_bench_aec_refuses_an_unknown_skip_target_before_measuring(capsys):
    from blackout_training.cli import main

    for target in ("nosuch", ""):
        assert main(["bench", "aec", "--steps", "50", "--repeats", "1", "--skip", target]) == 2
        captured = capsys.readouterr()
        assert f"--skip: unknown target {target!r}" in captured.err and "decisions per second" not in captured.out


def test_bench_aec_puts_its_do_nothing_env_behind_the_wrappers_of_env():
    from blackout_training.bench import aec as bench

    def wrapper_types(environment):
        types = []
        while hasattr(environment, "env"):
            types.append(type(environment))
            environment = environment.env
        return types

    rules = Rules.resolve("standard")
    assert wrapper_types(bench.trivial_env(rules)) == wrapper_types(env(rules=rules)) != []


def test_the_instruction_counting_script_runs_each_target_and_refuses_a_bad_count():
    import importlib.util
    import pathlib
    import random
    import subprocess
    import sys

    from blackout_training.bench.aec import aec_loop, trivial_env

    path = pathlib.Path(__file__).parents[1] / "docs" / "data" / "aec_instructions.py"
    spec = importlib.util.spec_from_file_location("aec_instructions", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for target in script.TARGETS:  # what each counted process runs, without valgrind
        environment = script._make(target)
        environment.reset(seed=0)
        assert aec_loop(environment, 30, random.Random(0).random) >= 30
    wrapped = script._make("trivial env()")
    assert type(wrapped) is type(trivial_env(Rules.resolve("standard")))
    refused = subprocess.run([sys.executable, str(path), "--decisions", "0"], capture_output=True, text=True)
    assert refused.returncode == 2 and "--decisions: must be at least 1, got 0" in refused.stderr
