"""The compiled batched engine (``compiled=True``, numba) is the numpy one, bit for bit.

Two engines, one numpy-only (the reference) and one compiled, are built alike
and stepped in lockstep with the same actions and the same random streams:
full and partial steps (``active=mask``), unobserved steps followed by
``observe()`` / ``action_mask()``, the vector env's random fast path, the
engine's own generator, automatic resets, and copies and pickles midway. After
every step every field of the two ``BatchStep`` values (observations compared
as bits), every state array and the random generator's state must be equal: for
every preset at 3 to 7 players, rules-sized and universal observations, both
episode kinds and every reward mode.

The tests that run the compiled engine need numba (the ``dev`` and ``fast``
extras); without it they are skipped, saying so. The option's own checks run
either way.
"""

from __future__ import annotations

import copy
import json
import pickle
import subprocess
import sys

import numpy as np
import pytest

from blackout_env import IllegalActionError, Rules, RulesError, preset_names
from blackout_env import _compiled as compiled_module
from blackout_env import batched as batched_module
from blackout_env.batched import BatchedBlackout, BatchStep

needs_numba = pytest.mark.skipif(
    not batched_module.numba_available(),
    reason="numba is not installed (the dev and fast extras): the compiled batched engine cannot be tested",
)

REWARDS = ("score", "zero_sum", "win")


def _rules(preset: str, players: int) -> Rules:
    """The preset at ``players`` seats (a hand too large for the deck is cut to the deck's share)."""
    rules = Rules.preset(preset)
    try:
        return rules.replace(num_players=players)
    except RulesError:
        return rules.replace(num_players=players, hand_sizes=[rules.deck_size // players])


def _state(env: BatchedBlackout) -> dict[str, np.ndarray]:
    return {name: value for name, value in vars(env).items() if isinstance(value, np.ndarray)}


def _assert_same_step(numpy_out: BatchStep, compiled_out: BatchStep, where: str) -> None:
    for field in BatchStep._fields:
        expected, got = getattr(numpy_out, field), getattr(compiled_out, field)
        if expected is None:
            assert got is None, f"{where}: {field}"
            continue
        assert got.dtype == expected.dtype and got.shape == expected.shape, f"{where}: {field}"
        if expected.dtype.kind == "f":  # bit for bit (a -0.0 or a NaN payload would differ here)
            expected, got = expected.view(f"u{expected.itemsize}"), got.view(f"u{got.itemsize}")
        np.testing.assert_array_equal(got, expected, err_msg=f"{where}: {field}")


def _assert_same_state(reference: BatchedBlackout, compiled: BatchedBlackout, where: str) -> None:
    expected, got = _state(reference), _state(compiled)
    assert expected.keys() == got.keys(), where
    for name, value in expected.items():
        assert got[name].dtype == value.dtype, f"{where}: {name}"
        np.testing.assert_array_equal(got[name], value, err_msg=f"{where}: {name}")
    assert compiled._rng.bit_generator.state == reference._rng.bit_generator.state, f"{where}: random stream"


def play_both(rules: Rules, *, episode: str, reward: str, observation: str, copy_out: bool, steps: int, seed: int) -> int:
    """Step a numpy and a compiled engine in lockstep; returns how many episodes ended."""
    kwargs = dict(episode=episode, reward=reward, observation=observation, copy=copy_out, seed=seed)
    reference = BatchedBlackout(rules, 5, compiled=False, **kwargs)
    compiled = BatchedBlackout(rules, 5, compiled=True, **kwargs)
    assert not reference.compiled and compiled.compiled
    _assert_same_step(reference.reset(), compiled.reset(), "reset")
    rng = np.random.default_rng(seed)
    streams = [np.random.default_rng(seed + 1), np.random.default_rng(seed + 1)]
    ended = 0
    for step in range(steps):
        where = f"{rules.num_players} players, step {step}"
        kind = rng.random()
        if kind < 0.15:  # the vector env's fast path: random moves in the moving games, unobserved
            moving = np.flatnonzero(rng.random(5) < 0.6)
            outs = [env._random_step(moving, stream) for env, stream in zip((reference, compiled), streams)]
        elif kind < 0.3:  # the engine's own generator (shared with the deck shuffles)
            actions = [reference.random_actions(), compiled.random_actions()]
            np.testing.assert_array_equal(actions[1], actions[0], err_msg=where)
            outs = [reference.step(actions[0]), compiled.step(actions[1])]
        else:
            actions = [env.random_actions(stream) for env, stream in zip((reference, compiled), streams)]
            np.testing.assert_array_equal(actions[1], actions[0], err_msg=where)
            active = rng.random(5) < 0.7 if kind < 0.65 else None
            observe = bool(rng.random() < 0.8)
            outs = [env.step(actions[0], active=active, observe=observe) for env in (reference, compiled)]
        _assert_same_step(outs[0], outs[1], where)
        if outs[0].observation is None and rng.random() < 0.5:
            _assert_same_step(
                BatchStep(reference.current_player, reference.observe(), reference.action_mask(), outs[0].rewards, outs[0].done),
                BatchStep(compiled.current_player, compiled.observe(), compiled.action_mask(), outs[1].rewards, outs[1].done),
                f"{where}, observed later",
            )
        _assert_same_state(reference, compiled, where)
        ended += int(outs[0].done.sum())
        if step == steps // 2:  # go on with copies: a pickle of the compiled engine, a deep copy of the other
            reference = copy.deepcopy(reference)
            compiled = pickle.loads(pickle.dumps(compiled))
            assert compiled.compiled
    return ended


@pytest.mark.slow
@needs_numba
@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("preset", preset_names())
def test_the_compiled_engine_steps_every_preset_like_numpy(preset: str, players: int) -> None:
    index = preset_names().index(preset) + players
    # Each combination gets one episode kind, reward mode, observation kind and copy setting, so that
    # across the grid every value of each is run at every player count.
    episode = ("hand", "match")[index % 2]
    ended = play_both(
        _rules(preset, players),
        episode=episode,
        reward=REWARDS[index % 3],
        observation=("rules", "universal")[(index // 2) % 2],
        copy_out=bool(index % 5),
        steps=200,
        seed=index,
    )
    if episode == "hand":
        assert ended > 0, "the test should cross automatic resets"


@pytest.mark.slow
@needs_numba
@pytest.mark.parametrize("preset", ["short", "jokers", "trump-must-break"])
def test_the_compiled_engine_follows_numpy_across_whole_matches(preset: str) -> None:
    assert play_both(
        Rules.preset(preset), episode="match", reward="win", observation="rules", copy_out=True, steps=700, seed=7
    ) > 0


@needs_numba
@pytest.mark.parametrize("bad", [0, -1, 200])
def test_an_illegal_action_is_refused_by_the_compiled_engine_as_by_numpy(bad: int) -> None:
    errors = []
    for compiled in (False, True):
        env = BatchedBlackout("standard", 3, compiled=compiled, seed=1)
        out = env.reset()
        actions = env.random_actions(np.random.default_rng(1))
        actions[1] = bad  # game 1 is bidding: card 0 is illegal, -1 and 200 are no action at all
        before = {name: value.copy() for name, value in _state(env).items()}
        with pytest.raises(IllegalActionError) as error:
            env.step(actions)
        errors.append(str(error.value))
        for name, value in before.items():
            np.testing.assert_array_equal(getattr(env, name), value, err_msg=name)
        # a game outside the mask may hold anything: then the step goes through
        active = np.array([True, False, True])
        assert env.step(actions, active=active).current_player.shape == out.current_player.shape
    assert errors[0] == errors[1] and errors[0].startswith("game 1: action ")


@needs_numba
def test_auto_uses_numba_when_it_is_installed() -> None:
    assert BatchedBlackout("standard", 2).compiled
    assert BatchedBlackout("standard", 2, compiled="auto").compiled


def test_compiled_true_without_numba_names_the_fast_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batched_module, "numba_available", lambda: False)
    with pytest.raises(ImportError, match=r"compiled=True: numba is not installed; install the fast extra"):
        BatchedBlackout("standard", 2, compiled=True)
    assert not BatchedBlackout("standard", 2, compiled="auto").compiled


@pytest.mark.parametrize("bad", ["yes", 1, None, "numba"])
def test_a_bad_compiled_value_is_refused_naming_the_option(bad: object) -> None:
    with pytest.raises(ValueError, match=r"^compiled: must be 'auto', True or False; got "):
        BatchedBlackout("standard", 2, compiled=bad)


def test_blackout_env_and_the_numpy_engine_do_not_import_numba() -> None:
    code = (
        "import sys, blackout_env\n"
        "from blackout_env.batched import BatchedBlackout\n"
        "BatchedBlackout('standard', 2, compiled=False).reset()\n"
        "assert 'numba' not in sys.modules, 'numba was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@needs_numba
def test_the_vector_env_plays_the_same_games_compiled_or_not() -> None:
    from blackout_env.vector_env import BlackoutVectorEnv

    envs = [
        BlackoutVectorEnv(6, rules="short", opponents="random", learner_seat="random", seed=3, compiled=compiled)
        for compiled in (False, True)
    ]
    assert [env.engine.compiled for env in envs] == [False, True]
    results = [env.reset(seed=3) for env in envs]
    rng = np.random.default_rng(3)
    for _ in range(60):
        mask = envs[0].action_masks()
        np.testing.assert_array_equal(envs[1].action_masks(), mask)
        actions = np.array([rng.choice(np.flatnonzero(row)) for row in mask])
        results = [env.step(actions) for env in envs]
        (obs, rewards, terminated, _, infos), (obs_c, rewards_c, terminated_c, _, infos_c) = results
        np.testing.assert_array_equal(obs_c.view(np.uint32), obs.view(np.uint32))
        np.testing.assert_array_equal(rewards_c, rewards)
        np.testing.assert_array_equal(terminated_c, terminated)
        for key, value in infos.items():
            np.testing.assert_array_equal(infos_c[key], value, err_msg=key)


@needs_numba
def test_the_benchmarks_time_both_engines_in_one_run(tmp_path) -> None:
    from blackout_training.bench.batched import main as bench_batched
    from blackout_training.bench.vector import main as bench_vector

    path = tmp_path / "batched.json"
    common = ["--games", "8", "--seconds", "0.02", "--repeats", "1", "--json", str(path)]
    assert bench_batched([*common, "--no-openspiel", "--scenarios", "hands"]) == 0
    rows = json.loads(path.read_text())["batched"]
    assert sorted((r["observations"], r["engine"]) for r in rows) == [
        (False, "compiled"), (False, "numpy"), (True, "compiled"), (True, "numpy")
    ]
    assert bench_vector([*common, "--engines", "compiled", "--clock", "cpu"]) == 0
    figures = json.loads(path.read_text())
    (row,) = figures["rows"]
    assert figures["clock"] == "cpu" and row["engine"] == "compiled" and row["ratio"] > 0


@needs_numba
def test_a_compiled_engine_where_numba_cannot_be_imported_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    env = BatchedBlackout("standard", 2, compiled=True, seed=0)
    env.reset()
    copy_elsewhere = pickle.loads(pickle.dumps(env))
    # as on a machine without numba: the kernels module cannot be imported
    monkeypatch.setattr(compiled_module, "_KERNELS", [])
    monkeypatch.setitem(sys.modules, "blackout_env._batched_kernels", None)
    with pytest.raises(ImportError, match=r"runs compiled \(compiled=True\) but numba cannot be imported.*fast extra"):
        copy_elsewhere.step(copy_elsewhere.random_actions())
