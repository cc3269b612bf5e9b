"""The exact endgame solver of the IS-MCTS bot: max-n on the compiled core, checked against a plain search."""

import json
import random

import numpy as np
import pytest
from blackout_baselines import ISMCTSBot, RandomBot, make_bot
from blackout_baselines.deals import sample_hands
from blackout_baselines.ismcts import Endgame, SimState
from blackout_baselines.search import determinize

from blackout_env import BlackoutGame, Rules, preset_names
from blackout_env.game.cards import NUM_STANDARD_CARDS

PRESETS = preset_names()


def endgames(rules: Rules, count: int, tricks_left: int, seed: int):
    """Engine games of random play stopped in the play phase with at most ``tricks_left`` tricks to go."""
    rng = random.Random(seed)
    made = 0
    index = 0
    while made < count:
        index += 1
        sizes = [r for r in range(rules.num_rounds) if rules.hand_sizes[r] >= 1]
        start = rng.choice(sizes)
        game = BlackoutGame(rules, seed=seed * 1000 + index, start_round=start)
        bot = RandomBot(index)
        size = rules.hand_sizes[start]
        # every bid, the tricks before the last ``tricks_left``, and a random part of the next trick
        moves = rules.num_players + rules.num_players * max(0, size - tricks_left) + rng.randrange(rules.num_players)
        for _ in range(moves):
            game.step(bot.act(game.view(game.current_player)))
        if game.phase != "play":
            continue
        made += 1
        yield game


def reference_max_n(state: SimState, scores) -> tuple[int, ...]:
    """Max-n by plain recursion on the simulator's copies (no table), with the solver's conventions: cards tried
    lowest first, a card skipped when the next live card of its suit above it is also legal for the seat (or
    the other joker is held), the first strictly best card kept, and the search of a seat stopped at the best
    score it can still reach."""
    if state.phase == "over":
        return tuple(state.tricks_won)
    seat = state.current
    bid, won = state.bids[seat], state.tricks_won[seat]
    left = state.hand_size - state.tricks_done
    reach = max(scores[bid][won + more] for more in range(left + 1))
    v, at, n = state.v, state.at, state.n
    live = 0
    for other in range(n):
        live |= int(v[at.hands + other])
        card = int(v[at.trick_cards + other])
        if card >= 0:
            live |= 1 << card
    legal = state.legal_actions()
    best, best_score = None, None
    for card in legal:  # ascending
        if card >= NUM_STANDARD_CARDS:
            if card + 1 in legal:
                continue
        else:
            suit = card // 13
            above = [c for c in range(card + 1, 13 * suit + 13) if live >> c & 1]
            if above and above[0] in legal:
                continue
        child = state.copy()
        child.step(card)
        value = reference_max_n(child, scores)
        score = scores[bid][value[seat]]
        if best_score is None or score > best_score:
            best, best_score = value, score
            if score == reach:
                break
    return best


@pytest.mark.parametrize("preset", PRESETS)
def test_the_solver_finds_the_max_n_value_of_every_position(preset):
    rules = Rules.preset(preset)
    checked = 0
    scratch = None
    for game in endgames(rules, 6, 3, seed=PRESETS.index(preset)):
        state = SimState.from_view(game.view(game.current_player), game.hands)
        scores = [[rules.hand_score(b, w) for w in range(state.hand_size + 1)] for b in range(state.hand_size + 1)]
        expected = reference_max_n(state.copy(), scores)
        solved = state.copy()
        solved.solve()
        assert tuple(solved.tricks_won) == expected
        assert solved.phase == "over"
        # again with one table for all of them (as a search keeps it): the same answers
        if scratch is None or scratch.stack.shape[1] != state.v.size:
            scratch = Endgame(state.v.size, state.n * state.hand_size)
        again = state.copy()
        again.solve(scratch)
        assert tuple(again.tricks_won) == expected
        checked += 1
    assert checked == 6


def test_a_seat_holding_the_top_trumps_takes_every_trick_it_bid():
    rules = Rules(num_players=3, hand_sizes=[3])
    game = next(BlackoutGame(rules, seed=seed) for seed in range(50) if BlackoutGame(rules, seed=seed).trump is not None)
    top = [13 * game.trump + rank for rank in (12, 11, 10)]  # the ace, king and queen of trump
    rest = [c for c in range(NUM_STANDARD_CARDS) if c not in top and c != game.turned_card][:6]
    state = SimState.from_view(game.view(game.current_player), [top, rest[:3], rest[3:]])
    while state.phase == "bid":  # seat 0 bids 3, the others as low as they may
        bids = [action - rules.num_cards for action in state.legal_actions()]
        want = 3 if state.current == 0 else 0
        state.step(rules.num_cards + (want if want in bids else bids[0]))
    state.solve()
    assert state.tricks_won == [3, 0, 0]


def test_a_hand_that_is_over_or_still_bidding_is_refused():
    game = BlackoutGame(Rules(num_players=4, hand_sizes=[3]), seed=0)
    state = SimState.from_view(game.view(game.current_player), game.hands)
    with pytest.raises(ValueError, match="play phase"):
        state.solve()


def test_playouts_with_the_endgame_are_legal_hands_scored_as_the_solver_says():
    rules = Rules.preset("standard")
    pick = random.Random(3)
    for game in endgames(rules, 6, 4, seed=9):
        state = SimState.from_view(game.view(game.current_player), game.hands)
        solved = state.copy()
        solved.solve()
        played = state.copy()
        played.rollout(pick.random, endgame=4)
        assert played.tricks_won == solved.tricks_won


@pytest.mark.parametrize("endgame", [-1, 9, 2.5, True, "3"])
def test_a_bad_endgame_is_refused(endgame):
    with pytest.raises(ValueError, match="endgame"):
        ISMCTSBot(endgame=endgame)
    with pytest.raises(ValueError, match="endgame"):
        make_bot("ismcts", endgame=endgame)


def test_with_the_endgame_the_decision_depends_on_the_view_only():
    rules = Rules(num_players=4, hand_sizes=[5])
    rng = np.random.default_rng(2)
    checked = 0
    for game in endgames(rules, 6, 3, seed=4):
        player = game.current_player
        view = game.view(player)
        other = determinize(view, sample_hands(view, rng))
        assert other.view(player) == view
        first = ISMCTSBot(seed=3, simulations=40, endgame=3).act(view)
        second = ISMCTSBot(seed=3, simulations=40, endgame=3).act(other.view(player))
        assert first == second
        checked += 1
    assert checked == 6


def test_the_search_solves_its_endgames():
    rules = Rules(num_players=4, hand_sizes=[4])
    bot = ISMCTSBot(seed=0, simulations=30, endgame=2)
    off = ISMCTSBot(seed=0, simulations=30)
    for game in endgames(rules, 3, 2, seed=8):
        view = game.view(game.current_player)
        if len(view.legal_actions) == 1:
            continue
        assert bot.act(view) in view.legal_actions
        assert bot.last_solved > 0
        off.act(view)
        assert off.last_solved == 0


def test_bench_endgame_prints_and_saves_its_figures(tmp_path, capsys):
    from blackout_training.bench import benchmark_names
    from blackout_training.cli import main

    assert "endgame" in benchmark_names()
    out_file = tmp_path / "endgame.json"
    assert main(["bench", "endgame", "--tricks", "2", "3", "--positions", "4", "--json", str(out_file)]) == 0
    assert "positions/s" in capsys.readouterr().out
    figures = json.loads(out_file.read_text())
    assert set(figures["tricks"]) == {"2", "3"}
    for row in figures["tricks"].values():
        assert row["positions_per_s"] > 0 and row["playouts_per_s"] > 0 and 0 < row["share"] < 1
        assert row["searched_max"] >= row["searched_mean"] >= 1


def test_bench_endgame_refuses_more_tricks_than_a_hand_has(capsys):
    from blackout_training.cli import main

    assert main(["bench", "endgame", "--tricks", "11", "--positions", "1"]) == 2
    assert "--tricks 11: the rules' largest hand has 10 cards" in capsys.readouterr().err
