"""The compiled core's state: one field list lays out the batch, the AEC env's game and the search's, by name."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from blackout_env.batched import BatchedBlackout
from blackout_env.batched._compiled import kernels

k = kernels()


@pytest.mark.parametrize("words", [False, True])
def test_a_fresh_state_holds_every_field_with_its_shape_type_and_fill(words):
    state = k.new_state(games=3, seats=4, tricks=10, moves=44, words=words)
    views = k.state_views(state)
    assert views._fields == tuple(field.name for field in k.GAME_FIELDS)
    sizes = {"seats": 4, "tricks": 10, "moves": 44}
    for field, view in zip(k.GAME_FIELDS, views):
        assert view.shape == (3, *(sizes[dim] for dim in field.dims)), field.name
        if words:  # every field a 64-bit word; bitsets unsigned
            assert view.dtype == (np.uint64 if field.dtype is np.uint64 else np.int64), field.name
        else:
            assert view.dtype == field.dtype, field.name
        assert (view == field.fill).all(), field.name
        assert np.shares_memory(view, state), field.name


@pytest.mark.parametrize("words", [False, True])
def test_no_two_fields_share_memory(words):
    views = k.state_views(k.new_state(games=2, seats=5, tricks=3, moves=20, words=words))
    for i, view in enumerate(views):
        for other, name in zip(views[i + 1 :], views._fields[i + 1 :]):
            assert not np.shares_memory(view, other), (views._fields[i], name)


def test_field_starts_name_the_items_of_one_game_of_words():
    state = k.one_game(seats=4, tricks=11)
    at = k.field_starts(state)
    views = k.state_views(state)
    state[at.bids + 2] = 7
    state[at.current_player] = 3
    assert views.bids[0, 2] == 7 and views.current_player[0] == 3
    assert at.tricks_won == at.bids + 4  # the search reads the bids and the tricks won in one slice


def test_the_batched_engine_keeps_every_game_in_one_state_its_attributes_views_of_it():
    env = BatchedBlackout("standard", num_envs=4, seed=0)
    env.reset()
    env.step(env.random_actions(np.random.default_rng(0)))
    views = k.state_views(env._state)
    for name in views._fields:
        attribute = getattr(env, f"_{name}" if name in ("legal_cards", "forbidden_bid") else name)
        assert np.shares_memory(attribute, env._state), name
        assert np.array_equal(attribute, getattr(views, name)), name


@pytest.mark.parametrize("duplicate", [copy.deepcopy, lambda env: pickle.loads(pickle.dumps(env))])
def test_a_copied_batched_engine_steps_its_own_state(duplicate):
    env = BatchedBlackout("standard", num_envs=4, seed=0)
    env.reset()
    twin = duplicate(env)
    assert np.shares_memory(twin.hands, twin._state) and not np.shares_memory(twin._state, env._state)
    actions = env.random_actions(np.random.default_rng(1))
    env.step(actions)
    twin.step(actions)
    for name in k.GameState._fields:
        attribute = f"_{name}" if name in ("legal_cards", "forbidden_bid") else name
        assert np.array_equal(getattr(env, attribute), getattr(twin, attribute)), name


def test_the_instruction_counting_script_runs_each_of_its_targets():
    import importlib.util
    import pathlib
    import subprocess
    import sys

    path = pathlib.Path(__file__).parents[1] / "docs" / "data" / "core_instructions.py"
    spec = importlib.util.spec_from_file_location("core_instructions", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for target in script.TARGETS:  # what each counted process runs, without valgrind
        step, decisions, warm_up = script._loop(target)
        step()
        assert decisions == script._DECISIONS[target] and warm_up >= 1
    refused = subprocess.run([sys.executable, str(path), "--steps", "0"], capture_output=True, text=True)
    assert refused.returncode == 2 and "--steps: must be at least 1, got 0" in refused.stderr


@pytest.mark.parametrize("preset", ["standard", "jokers"])
def test_the_rules_tables_are_one_read_only_array_of_the_batched_engines_tables(preset):
    from blackout_env.batched.engine import _Tables, game_tables
    from blackout_env.game.rules import Rules

    rules = Rules.resolve(preset)
    tables = game_tables(rules)
    assert not tables.flags.writeable and game_tables(rules) is tables  # built once per rules value, shared
    views = k.TABLES.views(tables)
    built = _Tables(rules)
    for name in views._fields:
        if name in ("num_players", "num_cards", "max_bid", "must_break"):
            continue
        assert np.array_equal(getattr(views, name).ravel(), np.asarray(getattr(built, name)).ravel()), name
    assert (views.num_players[0], views.num_cards[0], views.max_bid[0]) == (
        rules.num_players, rules.num_cards, rules.max_bid)
    assert views.must_break[0] == (rules.lead_trump == "broken")
