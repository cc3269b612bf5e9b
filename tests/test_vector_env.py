"""The Gymnasium vector env on the batched engine: make_vec, lockstep with the single-agent env, infos, bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from env_configs import CONFIGS
from test_batched import assert_unchanged, snapshot

import blackout_env  # noqa: F401 - registers the ids
from blackout_env import BlackoutGymEnv, IllegalActionError, Rules
from blackout_env.envs.vector_env import INFO_KEYS, BlackoutVectorEnv
from blackout_env.game.encoding import encode


def first_legal(view):
    """A deterministic opponent: the lowest legal action."""
    return view.legal_actions[0]


class FirstLegalBatch:
    """The same opponent, batched: the lowest legal action of every row of the mask."""

    name = "first-legal-batch"

    def __init__(self) -> None:
        self.calls = 0

    def act_batch(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        assert obs.shape[0] == mask.shape[0] and obs.dtype == np.float32
        self.calls += 1
        return mask.argmax(axis=1)


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return (rng.random(mask.shape) * mask).argmax(axis=1)


def assert_at_learner_decisions(envs: BlackoutVectorEnv, obs: np.ndarray, info: dict) -> None:
    """Every game waits for its learner; the observation and mask are the learner's, from the engine's view."""
    engine = envs.engine
    np.testing.assert_array_equal(engine.current_player, info["learner_seat"])
    for game in range(envs.num_envs):
        view = engine.view(game, int(info["learner_seat"][game]))
        np.testing.assert_array_equal(obs[game], encode(view), err_msg=f"game {game}")
        legal = np.zeros(envs.rules.num_actions, dtype=np.int8)
        legal[list(view.legal_actions)] = 1
        np.testing.assert_array_equal(info["action_mask"][game], legal, err_msg=f"game {game}")


def test_make_vec_with_the_vector_entry_point_builds_the_batched_env() -> None:
    envs = gym.make_vec(
        "blackout_env:blackout/Blackout-v0", num_envs=16, vectorization_mode="vector_entry_point", opponents="random"
    )
    assert isinstance(envs.unwrapped, BlackoutVectorEnv)
    assert envs.num_envs == 16
    assert envs.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    assert envs.single_action_space == gym.spaces.Discrete(63)
    assert envs.single_observation_space.shape == (838,)
    assert envs.observation_space.shape == (16, 838)
    assert envs.action_space.shape == (16,)
    obs, info = envs.reset(seed=0)
    assert obs.shape == (16, 838) and obs.dtype == np.float32
    assert envs.single_observation_space.contains(obs[0])
    # The registered defaults of an id carry over: BlackoutHand-v0 plays one hand per episode.
    hands = gym.make_vec("blackout_env:blackout/BlackoutHand-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert hands.unwrapped.engine.episode == "hand"


@pytest.mark.parametrize("learner_seat", [0, 2])
@pytest.mark.parametrize("batched", [False, True], ids=["view opponents", "act_batch opponents"])
@pytest.mark.parametrize("name", ["standard", "3 players", "jokers", "episode = hand"])
def test_each_game_plays_exactly_like_the_single_agent_env(name: str, batched: bool, learner_seat: int) -> None:
    kwargs = CONFIGS[name]
    rules = Rules.resolve(kwargs.get("rules"))
    num_envs = 3
    opponent = FirstLegalBatch() if batched else first_legal
    envs = BlackoutVectorEnv(num_envs, opponents=opponent, learner_seat=learner_seat, **kwargs)
    singles = [BlackoutGymEnv(opponents=first_legal, learner_seat=learner_seat, **kwargs) for _ in range(num_envs)]
    rng = np.random.default_rng(1)
    decks = rng.permuted(np.tile(np.arange(rules.deck_size), (num_envs, rules.num_rounds, 1)), axis=2)
    options = {"decks": decks}
    single_options = [{"decks": decks[g].tolist()} for g in range(num_envs)]
    if kwargs.get("episode") == "hand":
        rounds = np.array([0, rules.num_rounds - 1, 1])
        options["rounds"] = rounds
        for g in range(num_envs):
            single_options[g]["round"] = int(rounds[g])
    obs, info = envs.reset(seed=0, options=options)
    single_obs = [env.reset(seed=0, options=o)[0] for env, o in zip(singles, single_options)]
    np.testing.assert_array_equal(obs, np.stack(single_obs))
    over = np.zeros(num_envs, dtype=bool)
    returns = np.zeros(num_envs)
    while not over.all():
        actions = random_legal(info["action_mask"], rng)
        obs, rewards, terminated, truncated, info = envs.step(actions)
        assert not truncated.any()
        for g, env in enumerate(singles):
            if over[g]:
                continue
            single = env.step(int(actions[g]))
            assert rewards[g] == pytest.approx(single[1]), f"game {g}"
            assert terminated[g] == single[2], f"game {g}"
            returns[g] += rewards[g]
            if single[2]:
                over[g] = True
                assert info["final_score"][g] == env.game.scores[learner_seat]
                assert returns[g] == pytest.approx(env.game.scores[learner_seat])  # "score" rewards: the total
                continue
            np.testing.assert_array_equal(obs[g], single[0], err_msg=f"game {g}")
            np.testing.assert_array_equal(info["action_mask"][g], single[4]["action_mask"], err_msg=f"game {g}")
            assert info["score"][g] == env.game.scores[learner_seat]
    if batched:
        assert opponent.calls > 0


def test_random_learner_seats_vary_and_every_step_ends_at_a_learner_decision() -> None:
    envs = BlackoutVectorEnv(8, rules="short", opponents="random", learner_seat="random", seed=3)
    obs, info = envs.reset(seed=3)
    assert_at_learner_decisions(envs, obs, info)
    seats_seen = {int(s) for s in info["learner_seat"]}
    rng = np.random.default_rng(3)
    returns = np.zeros(8)
    hand_scores = np.zeros(8)
    episodes = 0
    for _ in range(120):
        obs, rewards, terminated, _, info = envs.step(random_legal(info["action_mask"], rng))
        assert_at_learner_decisions(envs, obs, info)
        returns += rewards
        hand_scores += info["last_hand_score"]
        assert (info["last_hand_bid"] >= 0).tolist() == info["hand_over"].tolist()
        for g in np.flatnonzero(terminated):
            # "score" rewards: the learner's return is its match total, and the sum of its hand scores.
            assert returns[g] == info["final_score"][g] == hand_scores[g]
            returns[g] = hand_scores[g] = 0
            episodes += 1
        seats_seen |= {int(s) for s in info["learner_seat"]}
        np.testing.assert_array_equal(envs.action_masks(), info["action_mask"].astype(bool))
    assert episodes > 8 and seats_seen == {0, 1, 2, 3}


def test_infos_hold_the_same_numeric_keys_shapes_and_dtypes_at_every_step() -> None:
    envs = BlackoutVectorEnv(4, rules={"hand_sizes": [2, 1]}, opponents="random", seed=0)
    obs, info = envs.reset(seed=0)
    expected = {key: (value.dtype, value.shape) for key, value in info.items()}
    assert tuple(info) == INFO_KEYS
    assert all(value.dtype.kind in "biuf" for value in info.values())
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(40):
        obs, _, terminated, _, info = envs.step(random_legal(info["action_mask"], rng))
        assert {key: (value.dtype, value.shape) for key, value in info.items()} == expected
        assert info["action_mask"].sum(axis=1).min() > 0  # never an all-zero mask
        ended += int(terminated.sum())
    assert ended > 0


def test_copy_false_hands_out_a_read_only_buffer_with_the_same_values() -> None:
    copied = BlackoutVectorEnv(4, opponents="random", seed=2)
    shared = BlackoutVectorEnv(4, opponents="random", seed=2, copy=False)
    obs, info = copied.reset(seed=2)
    buffer, _ = shared.reset(seed=2)
    rng = np.random.default_rng(2)
    for _ in range(5):
        actions = random_legal(info["action_mask"], rng)
        obs, *_, info = copied.step(actions)
        buffer, *_ = shared.step(actions)
        np.testing.assert_array_equal(buffer, obs)
    assert not buffer.flags.writeable and obs.flags.writeable


def test_the_same_seed_plays_the_same_games() -> None:
    def run(seed: int) -> list[np.ndarray]:
        envs = BlackoutVectorEnv(4, opponents="random", learner_seat="random")
        obs, info = envs.reset(seed=seed)
        rng = np.random.default_rng(0)
        seen = [obs]
        for _ in range(10):
            obs, *_, info = envs.step(random_legal(info["action_mask"], rng))
            seen.append(obs)
        return seen

    first, again, other = run(5), run(5), run(6)
    assert all((a == b).all() for a, b in zip(first, again))
    assert not all((a == b).all() for a, b in zip(first, other))


def test_named_rule_bots_and_a_trained_policy_play_as_opponents() -> None:
    pytest.importorskip("torch")
    from blackout_training.agents.policy_net import PolicyBot, make_model

    rules = Rules.preset("standard")
    policy = PolicyBot(make_model(rules), rules)
    calls = []
    act_batch = policy.act_batch
    policy.act_batch = lambda obs, mask: calls.append(len(obs)) or act_batch(obs, mask)
    envs = BlackoutVectorEnv(6, opponents=["heuristic:seed=1", policy, "random"], seed=0)
    assert [o.kind for o in envs._opponents] == ["engine", "batch", "random"]  # any HeuristicBot decides in batch
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(12):
        obs, *_, info = envs.step(random_legal(info["action_mask"], rng))
        assert_at_learner_decisions(envs, obs, info)
    assert calls and max(calls) <= 6  # one call per opponent move, for every game where it acts
    assert BlackoutVectorEnv(2, opponents="ppo")._opponents[0].kind == "batch"  # the shipped checkpoint, by name
    assert BlackoutVectorEnv(2, opponents=lambda view: view.legal_actions[0])._opponents[0].kind == "view"


def test_heuristic_opponents_decide_in_batch_exactly_as_the_single_agent_envs_bots() -> None:
    rules = Rules.preset("short")
    num_envs = 4
    envs = BlackoutVectorEnv(num_envs, rules=rules, opponents="heuristic", learner_seat=2)
    assert envs._opponents[0].kind == "engine"
    singles = [BlackoutGymEnv(rules=rules, opponents="heuristic", learner_seat=2) for _ in range(num_envs)]
    rng = np.random.default_rng(8)
    decks = rng.permuted(np.tile(np.arange(rules.deck_size), (num_envs, rules.num_rounds, 1)), axis=2)
    obs, info = envs.reset(seed=0, options={"decks": decks})
    np.testing.assert_array_equal(obs, [env.reset(options={"decks": decks[g].tolist()})[0] for g, env in enumerate(singles)])
    over = np.zeros(num_envs, dtype=bool)
    while not over.all():
        actions = random_legal(info["action_mask"], rng)
        obs, rewards, terminated, _, info = envs.step(actions)
        for g, env in enumerate(singles):
            if over[g]:
                continue
            single_obs, single_reward, single_terminated, *_ = env.step(int(actions[g]))
            assert (rewards[g], terminated[g]) == (single_reward, single_terminated), f"game {g}"
            over[g] = single_terminated
            if not single_terminated:
                np.testing.assert_array_equal(obs[g], single_obs, err_msg=f"game {g}")


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("num_envs", [0, -3, 2.5, True, "8"])
def test_a_num_envs_below_one_is_refused(num_envs: object) -> None:
    with pytest.raises(ValueError, match="num_envs: expected a positive int"):
        BlackoutVectorEnv(num_envs, opponents="random")
    with pytest.raises(ValueError, match="num_envs"):
        gym.make_vec("blackout_env:blackout/Blackout-v0", num_envs=num_envs, vectorization_mode="vector_entry_point")


@pytest.mark.parametrize(
    "opponents, message",
    [
        ("nobody", r"opponents: unknown policy 'nobody'; known policies: random, heuristic, "),
        ("search:depth=3", r"opponents: .*depth"),
        (42, r"42 names no policy"),
        (None, r"None names no policy"),
        (["random", "random"], r"one opponent per other seat \(3\), got 2"),
    ],
)
def test_opponent_specs_that_name_no_policy_are_refused(opponents: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BlackoutVectorEnv(4, opponents=opponents)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"learner_seat": 4}, "learner_seat"),
        ({"illegal_action": "penalize"}, "only 'raise'"),
        ({"render_mode": "human"}, "does not render"),
        ({"episode": "set"}, "episode"),
        ({"illegal_reward": -5.0}, "illegal_reward: the vector env raises"),
        ({"spectator": True}, "spectator: the vector env does not render"),
    ],
)
def test_bad_options_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BlackoutVectorEnv(2, opponents="random", **kwargs)
    with pytest.raises(ValueError, match=message):  # gym.make_vec passes them on as given
        gym.make_vec("blackout_env:blackout/Blackout-v0", num_envs=2, vectorization_mode="vector_entry_point",
                     opponents="random", **kwargs)


def test_an_illegal_learner_action_names_game_seat_and_action_and_steps_nothing() -> None:
    rules = Rules.preset("standard")
    envs = BlackoutVectorEnv(3, opponents="random", learner_seat=1, seed=0)
    obs, info = envs.reset(seed=0)
    actions = random_legal(info["action_mask"], np.random.default_rng(0))
    actions[2] = 0  # a card while bidding
    before = snapshot(envs.engine)
    with pytest.raises(IllegalActionError, match=r"game 2, seat 1: the learner chose action 0 \(play 2C\), which is not legal"):
        envs.step(actions)
    actions[2] = rules.num_actions
    with pytest.raises(IllegalActionError, match=r"game 2, seat 1: the learner chose action 63 \(outside 0..62\)"):
        envs.step(actions)
    with pytest.raises(ValueError, match=r"expected shape \(3,\)"):
        envs.step(actions[:2])
    with pytest.raises(ValueError, match="integer actions"):
        envs.step(actions.astype(np.float32))
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(envs.engine, name), value, err_msg=name)
    envs.step(random_legal(info["action_mask"], np.random.default_rng(0)))  # still usable


class Cheater:
    """A heuristic-free opponent: the lowest legal action, or, once armed, a card it may not play."""

    name = "cheater"

    def __init__(self) -> None:
        self.armed = False

    def act(self, view):
        if self.armed and view.phase == "play":
            return next(card for card in range(52) if card not in view.legal_actions)
        return view.legal_actions[0]


@pytest.mark.parametrize("with_random", [False, True], ids=["one opponent", "beside random opponents"])
def test_an_opponent_returning_an_illegal_action_is_named_and_the_step_undone(with_random: bool) -> None:
    cheater = Cheater()
    opponents = [cheater, "random", "random"] if with_random else cheater
    envs = BlackoutVectorEnv(3, opponents=opponents, seed=1)
    twin = BlackoutVectorEnv(3, opponents=[first_legal, "random", "random"] if with_random else first_legal, seed=1)
    obs, info = envs.reset(seed=1)
    twin.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(6):  # into the first hand's play
        actions = random_legal(info["action_mask"], rng)
        obs, *_, info = envs.step(actions)
        twin.step(actions)
    before = snapshot(envs.engine)
    actions = random_legal(info["action_mask"], rng)
    cheater.armed = True
    with pytest.raises(
        IllegalActionError, match=r"game \d, seat 1: opponent 'cheater' chose action \d+ \(play \w+\), which is not legal.*No game was stepped"
    ):
        envs.step(actions)
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(envs.engine, name), value, err_msg=name)
    np.testing.assert_array_equal(envs.action_masks(), info["action_mask"].astype(bool))
    # Disarmed, the same step plays exactly as in a twin env that never saw the cheat.
    cheater.armed = False
    mine, twins = envs.step(actions), twin.step(actions)
    for a, b in zip(mine[:4], twins[:4]):
        np.testing.assert_array_equal(a, b)


def test_an_opponent_failing_in_reset_leaves_the_env_unstarted() -> None:
    def cheater(view):
        return 0 if view.phase == "bid" else view.legal_actions[0]  # plays 2C while bidding

    envs = BlackoutVectorEnv(2, opponents=cheater, seed=0)
    with pytest.raises(
        IllegalActionError, match=r"game 0, seat 1: opponent 'cheater' chose action 0 \(play 2C\), which is not legal"
    ):
        envs.reset(seed=0)
    assert (envs.engine.bids[:, 1] == -1).all()  # the illegal bid was not made
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, dtype=np.int64))


def test_step_before_reset_is_an_error() -> None:
    envs = BlackoutVectorEnv(2, opponents="random")
    with pytest.raises(RuntimeError, match="reset"):
        envs.step(np.zeros(2, dtype=np.int64))
    with pytest.raises(RuntimeError, match="reset"):
        envs.action_masks()


def test_bad_reset_options_are_refused_and_change_nothing() -> None:
    envs = BlackoutVectorEnv(2, opponents="random", seed=4)
    obs, _ = envs.reset(seed=4)
    before = snapshot(envs.engine)
    with pytest.raises(ValueError, match="unknown option"):
        envs.reset(options={"deck": []})
    with pytest.raises(ValueError, match="decks: expected shape"):
        envs.reset(options={"decks": np.zeros((2, 3), dtype=np.int64)})
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(envs.engine, name), value, err_msg=name)
    # The random stream is untouched too: the next reset is the one a fresh env of the same seed makes.
    fresh = BlackoutVectorEnv(2, opponents="random", seed=4)
    fresh.reset(seed=4)
    np.testing.assert_array_equal(envs.reset()[0], fresh.reset()[0])


def test_gymnasium_episode_statistics_see_each_finished_match_with_its_score() -> None:
    envs = gym.make_vec(
        "blackout_env:blackout/BlackoutVsRandom-v0",
        num_envs=8,
        vectorization_mode="vector_entry_point",
        rules={"hand_sizes": [2, 1]},
    )
    envs = gym.wrappers.vector.RecordEpisodeStatistics(envs)
    obs, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(30):
        obs, _, terminated, _, info = envs.step(random_legal(info["action_mask"], rng))
        if terminated.any():
            np.testing.assert_array_equal(info["_episode"], terminated)
            np.testing.assert_array_equal(info["episode"]["r"][terminated], info["final_score"][terminated])
            seen += int(terminated.sum())
    assert seen >= 8


def test_the_action_mask_in_the_infos_is_the_callers_to_change():
    env = BlackoutVectorEnv(num_envs=4, opponents="random", seed=0)
    _, infos = env.reset(seed=0)
    infos["action_mask"][:] = 1  # every action "legal" in the caller's copy
    before = snapshot(env.engine)
    with pytest.raises(IllegalActionError, match="play 2C"):
        env.step(np.zeros(4, dtype=np.int64))  # a card while every game is still bidding
    assert_unchanged(env.engine, before)


@pytest.mark.parametrize("seed", [[1, 2], (1, 2, 3, 4), np.arange(4), -1, "3"])
def test_a_seed_that_is_not_one_int_is_refused_and_changes_nothing(seed):
    env = BlackoutVectorEnv(num_envs=4, opponents="random", seed=0)
    twin = BlackoutVectorEnv(num_envs=4, opponents="random", seed=0)
    env.reset(), twin.reset()
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=seed)
    assert np.array_equal(env.reset()[0], twin.reset()[0])
