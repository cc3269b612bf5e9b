"""The batched engine's API: shapes and dtypes, rewards, episodes, auto-reset, seeding, bad input."""

from __future__ import annotations

import copy
import json
import pickle

import numpy as np
import pytest

from blackout_env import BlackoutGame, IllegalActionError, Rules
from blackout_env.batched import BatchedBlackout, BatchStep
from blackout_env.game.encoding import encode, observation_size
from blackout_env.game.engine import deck_order


def random_actions(out: BatchStep, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per game."""
    return (rng.random(out.action_mask.shape) * out.action_mask).argmax(axis=1)


def snapshot(env: BatchedBlackout) -> dict[str, np.ndarray]:
    return {name: value.copy() for name, value in vars(env).items() if isinstance(value, np.ndarray)}


def assert_unchanged(env: BatchedBlackout, before: dict[str, np.ndarray]) -> None:
    for name, value in before.items():
        np.testing.assert_array_equal(getattr(env, name), value, err_msg=name)


def test_reset_returns_one_row_per_game_with_documented_dtypes() -> None:
    rules = Rules.preset("standard")
    env = BatchedBlackout(rules, 8, seed=0)
    out = env.reset()
    assert out.current_player.shape == (8,) and out.current_player.dtype == np.int8
    assert out.observation.shape == (8, observation_size(rules)) and out.observation.dtype == np.float32
    assert out.action_mask.shape == (8, rules.num_actions) and out.action_mask.dtype == np.int8
    assert out.rewards.shape == (8, 4) and out.rewards.dtype == np.float32
    assert out.done.shape == (8,) and out.done.dtype == bool
    assert not out.rewards.any() and not out.done.any()
    # The first hand of the standard match: the dealer's left bids first, 0..10.
    assert (out.current_player == (env.first_dealer + 1) % 4).all()
    assert (out.action_mask[:, rules.num_cards :].sum(axis=1) == 11).all()


def test_observations_can_be_skipped_for_fast_rollouts() -> None:
    env = BatchedBlackout("standard", 4, observations=False, seed=0)
    out = env.reset()
    assert out.observation is None
    out = env.step(random_actions(out, np.random.default_rng(0)))
    assert out.observation is None


def test_copy_false_reuses_the_observation_buffer_and_copy_true_does_not() -> None:
    rng = np.random.default_rng(0)
    reused = BatchedBlackout("standard", 4, copy=False, seed=0)
    first = reused.reset().observation
    second = reused.step(random_actions(reused.reset(), rng)).observation
    assert np.shares_memory(first, second) and not second.flags.writeable
    fresh = BatchedBlackout("standard", 4, seed=0)
    out = fresh.reset()
    kept = out.observation.copy()
    fresh.step(random_actions(out, rng))
    np.testing.assert_array_equal(out.observation, kept)


def test_the_same_seed_plays_the_same_games() -> None:
    def trajectory(seed: int) -> list[np.ndarray]:
        env = BatchedBlackout("short", 6, seed=seed)
        out = env.reset()
        rng = np.random.default_rng(1)
        seen = [out.observation.copy()]
        for _ in range(40):
            out = env.step(random_actions(out, rng))
            seen.append(out.observation.copy())
        return seen

    same = trajectory(5)
    for a, b in zip(same, trajectory(5)):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(same, trajectory(6)))


def test_reset_seed_reseeds_the_decks() -> None:
    env = BatchedBlackout("standard", 3, seed=0)
    env.reset(seed=11)
    decks = env.decks.copy()
    env.reset(seed=11)
    np.testing.assert_array_equal(env.decks, decks)


def test_a_random_first_dealer_is_drawn_per_game() -> None:
    env = BatchedBlackout(Rules(first_dealer="random"), 200, seed=0)
    env.reset()
    assert set(env.first_dealer.tolist()) == {0, 1, 2, 3}
    assert (env.dealer == env.first_dealer).all()


def test_hand_scores_are_paid_when_each_hand_ends() -> None:
    env = BatchedBlackout("short", 16, seed=3)
    out = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(60):
        before_scores, before_round = env.scores.copy(), env.round_index.copy()
        out = env.step(random_actions(out, rng))
        next_hand = (env.round_index == before_round + 1) & ~out.done
        # Moving to the next hand pays exactly the hand score that the totals grew by...
        np.testing.assert_array_equal(out.rewards[next_hand], env.scores[next_hand] - before_scores[next_hand])
        # ...and a step inside a hand pays nothing.
        inside = (env.round_index == before_round) & ~out.done
        assert not out.rewards[inside].any()


def test_zero_sum_rewards_sum_to_zero_and_scale_applies() -> None:
    env = BatchedBlackout("short", 32, reward="zero_sum", reward_scale=0.1, seed=2)
    scored = BatchedBlackout("short", 32, reward="score", seed=2)
    out, ref = env.reset(), scored.reset()
    rng = np.random.default_rng(4)
    for _ in range(30):
        actions = random_actions(out, rng)
        out, ref = env.step(actions), scored.step(actions)
        np.testing.assert_allclose(out.rewards.sum(axis=1), 0, atol=1e-5)
        mean_of_others = (ref.rewards.sum(axis=1, keepdims=True) - ref.rewards) / 3
        np.testing.assert_allclose(out.rewards, 0.1 * (ref.rewards - mean_of_others), rtol=1e-5, atol=1e-6)


def test_win_reward_shares_one_among_the_match_winners_only_at_the_end() -> None:
    env = BatchedBlackout("short", 64, reward="win", seed=5)
    out = env.reset()
    rng = np.random.default_rng(5)
    ended = 0
    while ended < 64:
        out = env.step(random_actions(out, rng))
        not_done = ~out.done
        assert not out.rewards[not_done].any()
        for game in np.flatnonzero(out.done):
            ended += 1
            np.testing.assert_allclose(out.rewards[game].sum(), 1.0, rtol=1e-6)
            winners = out.rewards[game] > 0
            # Every winner gets the same share; a seat behind the leaders before the last hand may still win.
            assert len(set(out.rewards[game][winners].tolist())) == 1


def test_hand_episodes_play_one_hand_drawn_from_the_match_with_scores_from_zero() -> None:
    rules = Rules.preset("standard")
    env = BatchedBlackout(rules, 64, episode="hand", seed=0)
    out = env.reset()
    first_hands = env.round_index.copy()
    assert len(set(first_hands.tolist())) > 3  # hands of every size get played
    assert (env.hand_size == np.array(rules.hand_sizes)[first_hands]).all()
    assert (env.dealer == (env.first_dealer + first_hands) % 4).all() and not env.scores.any()
    rng = np.random.default_rng(0)
    episodes = 0
    while episodes < 64:
        round_before = env.round_index.copy()
        out = env.step(random_actions(out, rng))
        # A game only ever leaves its hand by ending the episode.
        assert (env.round_index[~out.done] == round_before[~out.done]).all()
        assert not env.scores[out.done].any()
        episodes += int(out.done.sum())


def test_rounds_fix_the_hand_of_hand_episodes() -> None:
    env = BatchedBlackout("standard", 3, episode="hand", seed=0)
    env.reset(rounds=[0, 4, 9])
    assert env.hand_size.tolist() == [10, 6, 1]
    with pytest.raises(ValueError, match="game 1 asks for round 10"):
        env.reset(rounds=[0, 10, 9])
    with pytest.raises(ValueError, match="episode='hand'"):
        BatchedBlackout("standard", 3, seed=0).reset(rounds=[0, 1, 2])


def test_a_finished_match_is_reset_at_once_and_its_rewards_still_reported() -> None:
    env = BatchedBlackout("single-hand", 2, seed=9)
    out = env.reset()
    rng = np.random.default_rng(9)
    while not out.done.any():
        before = [env.to_game(g) for g in range(2)]
        actions = random_actions(out, rng)
        out = env.step(actions)
    game = int(np.flatnonzero(out.done)[0])
    finished = before[game]
    finished.step(int(actions[game]))
    assert finished.is_over
    # The rewards are the finished match's last hand scores...
    assert out.rewards[game].tolist() == finished.round_scores[-1]
    # ...while what comes back for that game is already the new match: its first bid.
    assert env.round_index[game] == 0 and env.phase[game] == 0 and not env.scores[game].any()
    assert out.current_player[game] == (env.dealer[game] + 1) % 4
    fresh = BlackoutGame(env.rules, decks=env.decks[game].tolist(), first_dealer=int(env.first_dealer[game]))
    assert env.view(game, int(out.current_player[game])) == fresh.view(fresh.current_player)


def test_to_game_replays_the_match_so_far() -> None:
    env = BatchedBlackout("standard", 3, seed=1)
    out = env.reset()
    rng = np.random.default_rng(1)
    for _ in range(60):
        out = env.step(random_actions(out, rng))
    for game in range(3):
        replay = env.to_game(game)
        assert replay.round_index == env.round_index[game]
        assert replay.current_player == out.current_player[game]
        assert replay.scores == env.scores[game].tolist()


# ------------------------------------------------------------------ bad input
def test_actions_of_the_wrong_shape_are_refused_and_nothing_moves() -> None:
    env = BatchedBlackout("standard", 4, seed=0)
    out = env.reset()
    before = snapshot(env)
    with pytest.raises(ValueError, match=r"actions: expected shape \(4,\)"):
        env.step(random_actions(out, np.random.default_rng(0))[:3])
    with pytest.raises(ValueError, match="expected shape"):
        env.step(5)
    assert_unchanged(env, before)


@pytest.mark.parametrize("bad", [np.zeros(4, dtype=np.float32), np.zeros(4, dtype=bool), ["a"] * 4])
def test_actions_that_are_not_integers_are_refused(bad: object) -> None:
    env = BatchedBlackout("standard", 4, seed=0)
    env.reset()
    before = snapshot(env)
    with pytest.raises(ValueError, match="expected integer actions"):
        env.step(bad)
    assert_unchanged(env, before)


def test_an_illegal_action_in_one_game_names_it_and_advances_no_game() -> None:
    rules = Rules.preset("standard")
    env = BatchedBlackout(rules, 4, seed=0)
    out = env.reset()
    actions = random_actions(out, np.random.default_rng(0))
    actions[2] = 0  # play the two of clubs while bidding
    before = snapshot(env)
    with pytest.raises(IllegalActionError, match=r"game 2: action 0: player \d cannot play 2C: bidding is not over"):
        env.step(actions)
    assert_unchanged(env, before)
    actions[2] = rules.num_actions + 3
    with pytest.raises(IllegalActionError, match=f"game 2: action {rules.num_actions + 3}"):
        env.step(actions)
    assert_unchanged(env, before)
    # The legal actions still work afterwards.
    env.step(random_actions(out, np.random.default_rng(0)))


def test_the_dealers_forbidden_bid_is_refused() -> None:
    rules = Rules(hand_sizes=[3])
    env = BatchedBlackout(rules, 1, seed=0)
    env.reset()
    for _ in range(3):
        env.step(np.array([rules.num_cards + 1]))  # three players bid 1
    assert env.current_player[0] == env.dealer[0]
    with pytest.raises(IllegalActionError, match="hook"):
        env.step(np.array([rules.num_cards + 0]))  # 1 + 1 + 1 + 0 = 3 tricks: forbidden


def test_a_deck_that_is_not_a_permutation_is_refused_naming_game_and_round() -> None:
    rules = Rules.preset("short")
    env = BatchedBlackout(rules, 3, seed=0)
    env.reset()
    before = snapshot(env)
    decks = np.tile(np.arange(52), (3, rules.num_rounds, 1))
    decks[1, 2, 5] = 7
    with pytest.raises(
        ValueError, match=r"game 1, round 2 is not a permutation.*card 7 appears 2 times.*card 5 is missing"
    ):
        env.reset(decks=decks)
    with pytest.raises(ValueError, match=r"decks: expected shape \(3, 5, 52\)"):
        env.reset(decks=decks[:, :2])
    assert_unchanged(env, before)


def test_a_deck_order_built_for_another_dealer_is_refused_as_the_engine_refuses_it() -> None:
    rules = Rules(num_players=4, hand_sizes=[2, 1])
    hands = [[0, 1], [2, 3], [4, 5], [6, 7]]
    plain = list(range(52))
    env = BatchedBlackout(rules, 2, seed=0)
    env.reset(decks=[[deck_order(hands, dealer=0, turned_card=8), plain], [plain, plain]])
    assert [sorted(env.view(0, seat).hand) for seat in range(4)] == hands  # each seat the hand built for it
    before = snapshot(env)
    with pytest.raises(ValueError, match="decks: game 1, round 1: .*for dealer 3, but round 1 is dealt by seat 1"):
        env.reset(decks=[[plain, plain], [plain, deck_order(hands, dealer=3, turned_card=8)]])
    assert_unchanged(env, before)
    shuffled = BatchedBlackout(rules.replace(first_dealer="random"), 2, seed=0)
    with pytest.raises(ValueError, match="first_dealer 'random' draws each game's dealers"):
        shuffled.reset(decks=[[deck_order(hands, dealer=0, turned_card=8), plain], [plain, plain]])


def test_step_before_reset_is_an_error() -> None:
    env = BatchedBlackout("standard", 2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, dtype=np.int64))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"num_envs": 0}, "num_envs"),
        ({"episode": "set"}, "episode"),
        ({"reward": "money"}, "reward"),
        ({"reward_scale": "big"}, "reward_scale"),
    ],
)
def test_bad_options_are_refused(kwargs: dict, message: str) -> None:
    options = {"num_envs": 2} | kwargs
    with pytest.raises(ValueError, match=message):
        BatchedBlackout("standard", **options)


def test_random_actions_are_legal_and_cover_every_legal_action() -> None:
    rules = Rules(num_players=3, hand_sizes=[4, 2], jokers=2, lead_trump="broken")
    env = BatchedBlackout(rules, 64, observations=False, seed=0)
    out = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(50):
        actions = env.random_actions(rng)
        assert out.action_mask[np.arange(64), actions].all()
        out = env.step(actions)
    # In one fixed position every legal action comes up, each about equally often.
    legal = np.flatnonzero(out.action_mask[0])
    draws = np.array([env.random_actions(rng)[0] for _ in range(3000)])
    values, counts = np.unique(draws, return_counts=True)
    assert values.tolist() == legal.tolist()
    assert counts.min() > 0.7 * 3000 / len(legal)


def test_random_actions_never_pick_the_dealers_forbidden_bid() -> None:
    rules = Rules(hand_sizes=[2])
    env = BatchedBlackout(rules, 1, observations=False, seed=0)
    env.reset()
    for _ in range(3):
        env.step(np.array([rules.num_cards + 0]))  # three players bid 0: the dealer may not bid 2
    draws = {int(env.random_actions()[0]) - rules.num_cards for _ in range(300)}
    assert draws == {0, 1}


def test_legal_cards_and_forbidden_bid_are_the_action_mask_as_bits_and_read_only() -> None:
    rules = Rules.preset("standard")
    env = BatchedBlackout(rules, 16, observations=False, seed=4)
    rng = np.random.default_rng(4)
    out = env.reset()
    seen_hook = False
    for _ in range(200):
        cards = env.legal_cards
        forbidden = env.forbidden_bid
        assert cards.dtype == np.uint64 and forbidden.dtype == np.int8
        bits = ((cards[:, None] >> np.arange(rules.num_cards, dtype=np.uint64)) & np.uint64(1)).astype(bool)
        np.testing.assert_array_equal(bits, out.action_mask[:, : rules.num_cards] != 0)
        bidding = env.phase == 0
        assert not cards[bidding].any()
        hooked = forbidden != -1
        assert not hooked[~bidding].any()
        rows = np.flatnonzero(hooked)
        assert not out.action_mask[rows, rules.num_cards + forbidden[rows]].any()
        seen_hook |= bool(rows.size)
        with pytest.raises(ValueError):
            cards[0] = 0
        with pytest.raises(ValueError):
            forbidden[0] = 0
        out = env.step(random_actions(out, rng))
    assert seen_hook


def test_the_benchmark_runs_and_reports_every_configuration(tmp_path, capsys) -> None:
    from blackout_training.bench.batched import main

    path = tmp_path / "bench.json"
    assert main(["--games", "8", "--seconds", "0.02", "--repeats", "1", "--no-openspiel", "--json", str(path)]) == 0
    figures = json.loads(path.read_text())
    assert figures["clock"] == "cpu"  # CPU time by default: a busy machine's waits do not count
    assert figures["copy"] is True  # the engine's default settings
    rows = figures["batched"]
    assert {(r["scenario"], r["observations"]) for r in rows} == {
        ("hands", False),
        ("hands", True),
        ("matches", False),
        ("matches", True),
    }
    assert all(r["decisions_per_second"] > 0 and r["peak_memory_mb"] > 0 for r in rows)
    assert "decisions/s" in capsys.readouterr().out
    assert main(["--games", "4", "--seconds", "0.01", "--repeats", "1", "--no-openspiel", "--scenarios", "hands",
                 "--no-copy", "--clock", "wall", "--json", str(path)]) == 0
    figures = json.loads(path.read_text())
    assert figures["copy"] is False and figures["clock"] == "wall"


def test_new_decks_are_permutations_and_deal_every_card_equally_often() -> None:
    rules = Rules.preset("standard")
    env = BatchedBlackout(rules, 2000, observations=False, seed=0)
    env.reset()
    assert (np.sort(env.decks, axis=2) == np.arange(52)).all()
    # The first card dealt, and the turned card of the one-card hand, are uniform over the deck.
    for position, round_index in ((0, 0), (4, 9)):
        counts = np.bincount(env.decks[:, round_index, position], minlength=52)
        assert counts.min() > 15 and counts.max() < 65  # mean 38.5; a fixed or skewed draw fails


def test_kept_observations_are_never_overwritten_by_later_steps() -> None:
    env = BatchedBlackout("short", 8, seed=0)
    out = env.reset()
    kept = []
    for step in range(40):
        if step % 3 == 0:  # keep some, drop the others (their arrays may be reused)
            kept.append((out.observation, out.observation.copy()))
        out = env.step(env.random_actions())
    for observation, snapshot_of_it in kept:
        np.testing.assert_array_equal(observation, snapshot_of_it)


def test_a_copy_or_pickle_of_an_engine_mid_game_steps_exactly_like_the_original() -> None:
    for keep_copies in (True, False):
        env = BatchedBlackout("standard", 16, copy=keep_copies, seed=0)
        env.reset()
        rng = np.random.default_rng(1)
        for _ in range(30):
            env.step(env.random_actions(rng))
        twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
        for _ in range(40):
            actions = env.random_actions(rng)
            expected = env.step(actions)
            for twin in twins:
                out = twin.step(actions)
                np.testing.assert_array_equal(out.observation, expected.observation)
                np.testing.assert_array_equal(out.action_mask, expected.action_mask)


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("copy_observations", [True, False])
def test_a_copy_mid_episode_plays_on_exactly_like_the_original_and_independently(how, copy_observations) -> None:
    rules = Rules(num_players=3, hand_sizes=[3, 2], jokers=1)
    env = BatchedBlackout(rules, 8, seed=5, copy=copy_observations)
    out = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(7):
        out = env.step(random_actions(out, rng))
    twin = copy.deepcopy(env) if how == "deepcopy" else pickle.loads(pickle.dumps(env))
    assert_unchanged(twin, snapshot(env))
    twin_out = out
    for _ in range(60):  # across hand ends, match ends and automatic resets
        actions = random_actions(out, rng)
        out, twin_out = env.step(actions), twin.step(actions)
        for field in BatchStep._fields:
            np.testing.assert_array_equal(getattr(twin_out, field), getattr(out, field), err_msg=field)
        for game in range(env.num_envs):
            seat = int(out.current_player[game])
            np.testing.assert_array_equal(twin_out.observation[game], encode(twin.view(game, seat)), err_msg=str(game))
        assert_unchanged(twin, snapshot(env))
    # Independent: stepping the copy alone leaves the original where it was.
    before = snapshot(env)
    twin.step(random_actions(twin_out, rng))
    assert_unchanged(env, before)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -float("inf")])
def test_a_reward_scale_that_is_not_finite_is_refused(scale) -> None:
    with pytest.raises(ValueError, match="reward_scale: expected a finite number"):
        BatchedBlackout("standard", 2, reward_scale=scale)


def test_a_batch_too_large_for_memory_is_refused_up_front_with_the_figure() -> None:
    from blackout_env.batched import bytes_per_game

    with pytest.raises(ValueError, match=r"num_envs: 2,147,483,648 games need about [\d,.]+ GiB .* bytes per game"):
        BatchedBlackout("standard", 2**31)
    # The estimate covers what the engine really holds per game.
    env = BatchedBlackout("standard", 256, seed=0)
    out = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(5):
        out = env.step(random_actions(out, rng))
    held = sum(v.nbytes for obj in (env, env._encoder) for v in vars(obj).values() if isinstance(v, np.ndarray))
    assert held / env.num_envs < bytes_per_game(env.rules)


def test_the_batched_package_keeps_every_public_name_of_the_batched_module() -> None:
    # blackout_env.batched was one module (its __all__ below) before it became the compiled core's package.
    import blackout_env.batched as batched

    for name in ("BatchedBlackout", "BatchStep", "EPISODES", "REWARDS", "numba_available"):
        assert name in batched.__all__ and hasattr(batched, name), name
