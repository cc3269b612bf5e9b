"""The compiled core: one batched engine (numba kernels), every preset at every table size like the engine.

The numpy batched engine is retired (issue 29: two implementations of the game,
the engine and the compiled core); ``tests/test_batched_differential.py`` holds
the core equal to the engine on every preset and on random rule sets. Here the
core plays every preset at 3 to 7 players like the engine, and the ``compiled``
option of earlier versions is accepted (``"auto"``, True) or refused clearly
(False, anything else).
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import pytest
from test_batched_differential import play_lockstep

from blackout_env import Rules, RulesError, preset_names
from blackout_env.batched import BatchedBlackout
from blackout_env.batched import _compiled as compiled_module
from blackout_env.envs.vector_env import BlackoutVectorEnv

REWARDS = ("score", "zero_sum", "win")


def _rules(preset: str, players: int) -> Rules:
    """The preset at ``players`` seats (a hand too large for the deck is cut to the deck's share)."""
    rules = Rules.preset(preset)
    try:
        return rules.replace(num_players=players)
    except RulesError:
        return rules.replace(num_players=players, hand_sizes=[rules.deck_size // players])


@pytest.mark.slow
@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
@pytest.mark.parametrize("preset", preset_names())
def test_the_compiled_engine_plays_every_preset_at_every_table_size_like_the_engine(preset: str, players: int) -> None:
    index = preset_names().index(preset) + players
    # Each combination gets one reward mode and observation kind, so that across the grid every value of
    # each is run at every player count; single hands keep the run short.
    play_lockstep(
        _rules(preset, players),
        episode="hand",
        reward=REWARDS[index % 3],
        observation=("rules", "universal")[(index // 2) % 2],
        seed=index,
    )


@pytest.mark.parametrize("value", ["auto", True, False])
def test_the_retired_compiled_argument_is_an_unknown_argument(value: object) -> None:
    # (CHANGELOG.md: removed in issue 48; there is one engine, the compiled one)
    with pytest.raises(TypeError, match="compiled"):
        BatchedBlackout("standard", 2, compiled=value)
    with pytest.raises(TypeError, match="compiled"):
        BlackoutVectorEnv(2, rules="standard", compiled=value)
    assert not hasattr(BatchedBlackout("standard", 2, seed=0), "compiled")


def test_the_retired_compiled_option_of_the_search_bot_is_refused_naming_it() -> None:
    from blackout_env.agents.policies import load_policy

    with pytest.raises(ValueError, match=r"ismcts:compiled=0.*unknown option 'compiled'; its options: simulations, "):
        load_policy("ismcts:compiled=0")


def test_import_blackout_env_does_not_import_numba_and_the_first_compiled_encoder_does() -> None:
    code = (
        "import sys, blackout_env\n"
        "game = blackout_env.BlackoutGame('standard', seed=0); game.step(game.legal_actions()[0])\n"
        "assert 'numba' not in sys.modules, 'numba was imported by import blackout_env or the engine'\n"
        "blackout_env.env().reset(seed=0)\n"
        "assert 'numba' in sys.modules  # the AEC env observes through the compiled encoder\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_benchmarks_run_at_a_tiny_size(tmp_path) -> None:
    from blackout_training.bench.batched import main as bench_batched
    from blackout_training.bench.vector import main as bench_vector

    path = tmp_path / "batched.json"
    common = ["--games", "8", "--seconds", "0.02", "--repeats", "1", "--json", str(path)]
    assert bench_batched([*common, "--no-openspiel", "--scenarios", "hands"]) == 0
    rows = json.loads(path.read_text())["batched"]
    assert sorted(r["observations"] for r in rows) == [False, True]
    assert bench_vector([*common, "--clock", "cpu"]) == 0
    figures = json.loads(path.read_text())
    (row,) = figures["rows"]
    assert figures["clock"] == "cpu" and row["ratio"] > 0


def test_an_engine_where_numba_cannot_be_imported_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    env = BatchedBlackout("standard", 2, seed=0)
    env.reset()
    copy_elsewhere = pickle.loads(pickle.dumps(env))
    # as in a broken install: the kernels module cannot be imported
    monkeypatch.setattr(compiled_module, "_KERNELS", [])
    monkeypatch.setitem(sys.modules, "blackout_env.batched._kernels", None)
    with pytest.raises(ImportError, match=r"compiled with numba, which cannot be imported.*numba is a dependency"):
        copy_elsewhere.step(copy_elsewhere.random_actions())
