"""Obvious positions: each proved by exhaustive search when loaded, a wrong one refused, agents scored in words."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
import yaml
from blackout_training.cli import main
from blackout_training.evaluation.positions import (
    MAX_LAYOUTS,
    SUITE_PATH,
    Position,
    PositionError,
    _layouts,
    count_layouts,
    judge,
    layout_count,
    load_positions,
    run_suite,
    search,
    verify,
)

from blackout_env import BlackoutGame, Rules

# The dealer (seat 2) holds the ace of trump (spades, the turned card is the 5) in a one-card hand at 3 players;
# the others bid 1 each, so the hook forbids nothing: bid 1 takes the trick whatever the others hold.
DEALER_ACE = {
    "id": "dealer-holds-the-ace-of-trump", "players": 3, "dealer": 2, "hands": ["2C", "3C", "AS"], "turned": "5S",
    "actions": "b1 b1", "acceptable": "b1", "reason": "the ace of trump takes the only trick",
}


@pytest.fixture(scope="module")
def suite() -> list[Position]:
    return load_positions()


def _suite_data() -> list[dict]:
    return yaml.safe_load(SUITE_PATH.read_text(encoding="utf-8"))["positions"]


def test_the_shipped_suite_loads_and_every_position_is_proved(suite):
    assert len(suite) >= 60
    assert len({p.id for p in suite}) == len(suite)
    assert {p.rules.num_players for p in suite} == {3, 4, 5, 6, 7}
    assert any(p.game().phase == "bid" for p in suite) and any(p.game().phase == "play" for p in suite)
    for position in suite:
        assert position.lows_highs, position.id  # searched
        assert all(position.reason.strip() for position in suite)


def test_a_hand_written_obvious_bid_is_proved():
    position = verify(Position.from_dict(DEALER_ACE))
    assert position.seat == 2
    assert len(position.lows_highs[position.acceptable[0]]) == 50 * 49  # every card for each of the two others


def test_the_layouts_are_counted_suit_by_suit_without_the_suits_a_seat_is_void_in():
    clubs, hearts = [0, 1], [26, 27]  # 2C 3C, 2H 3H
    assert count_layouts(clubs + hearts, [1, 1], [set(), set()]) == 4 * 3
    assert count_layouts(clubs + hearts, [1, 1], [{0}, set()]) == 2 * 3  # the first seat has shown no clubs
    assert count_layouts(clubs + hearts, [2, 1], [{0}, {2}]) == 1 * 2  # both hearts, then a club
    assert count_layouts(clubs + hearts, [1, 1], [{0, 2}, set()]) == 0
    assert count_layouts(clubs + hearts + [52], [1, 1], [{0, 2}, set()]) == 1 * 4  # a joker belongs to no suit


def test_the_count_is_the_number_of_layouts_searched(suite):
    sevens = [p for p in suite if p.rules.num_players == 7]
    searched = 0
    for position in suite[::5] + sevens:
        game = position.game()
        unseen, others, _, _ = _layouts(game, game.current_player)
        voids = [game.view(game.current_player).voids[s] for s in others]
        sizes = [len(game.hands[s]) - (game.turned_card in game.hands[s]) for s in others]
        count = count_layouts(unseen, sizes, voids)
        if count > MAX_LAYOUTS:  # the one-card bids at 4 and 7 players: searched by kinds of trick (below)
            assert game.hand_size == 1 and game.phase == "bid", position.id
            continue
        assert count == len(position.lows_highs[position.acceptable[0]]), position.id
        searched += 1
    assert searched >= 30


def _outcome_kinds(outcomes):
    """Per layout, the (worst, best) of every legal action: what the judgement reads, as a set of layouts."""
    legal = sorted(outcomes)
    return legal, {tuple(outcomes[a][i] for a in legal) for i in range(len(outcomes[legal[0]]))}


def test_a_one_card_bid_searched_by_kinds_of_trick_finds_the_outcomes_of_every_layout(suite):
    """The kinds of :func:`trick_kinds` (used past the bound: bids at 7 players) against every layout, at 3 players."""
    rng = np.random.default_rng(5)
    positions = [p for p in suite if p.rules.num_players == 3 and p.rules.hand_sizes == (1,)]
    rules = Rules.preset("standard").replace(num_players=3, hand_sizes=[1])
    for number in range(4):  # and some not chosen as obvious: every bid searched alike
        deck, dealer = rng.permutation(52).tolist(), int(rng.integers(3))
        hands = [list(hand) for hand in BlackoutGame(rules, decks=[deck], first_dealer=dealer).hands]
        positions.append(Position(f"random-{number}", rules, dealer, hands, deck[3], [], [], ""))
    for position in positions:
        every_layout = search(position)
        by_kinds = search(position, max_layouts=100)  # past this bound, one layout of each kind is searched
        assert len(by_kinds[position.game().legal_actions()[0]]) < len(every_layout[position.game().legal_actions()[0]])
        assert _outcome_kinds(by_kinds) == _outcome_kinds(every_layout), position.id


def test_the_seven_player_bids_are_searched_by_kinds_of_trick(suite):
    sevens = [p for p in suite if p.rules.num_players == 7 and p.game().phase == "bid"]
    assert len(sevens) >= 4
    for position in sevens:
        assert layout_count(position) == 50 * 49 * 48 * 47 * 46 * 45  # every unseen card for each of six others
        assert len(position.lows_highs[position.acceptable[0]]) <= 2_000


def test_a_planted_wrong_answer_is_rejected():
    wrong = {**DEALER_ACE, "acceptable": "b0"}
    with pytest.raises(PositionError, match="bid 1 can score 11 where bid 0 may score only 0"):
        verify(Position.from_dict(wrong))


def test_shipped_positions_with_their_answer_swapped_are_rejected(suite):
    for position in suite[::7]:
        others = [a for a in position.game().legal_actions() if a not in position.acceptable]
        with pytest.raises(PositionError, match="not sure|as much as the acceptable"):
            verify(dataclasses.replace(position, acceptable=others[:1], lows_highs={}))


def test_the_judgement_on_hand_computed_scores():
    # Two layouts; per action (worst, best) hand score in each.
    sure = {1: [(11, 11), (11, 11)], 2: [(0, 11), (0, 0)], 3: [(0, 0), (0, 0)]}
    assert judge(sure, [1]) is None
    assert "2 can score 11 where 1 may score only 0" in judge({**sure, 1: [(0, 11), (11, 11)]}, [1])
    assert "3 scores as much as the acceptable actions in every layout" in judge(
        {1: [(11, 11), (0, 0)], 3: [(11, 11), (0, 0)]}, [1]
    )
    assert judge({1: [(11, 11), (0, 0)], 3: [(11, 11), (0, 0)], 2: [(0, 0), (0, 0)]}, [1, 3]) is None


def test_positions_that_the_search_cannot_settle_are_refused():
    big_bid = {**DEALER_ACE, "id": "two-cards", "hands": ["2C 4C", "3C 5C", "AS KS"], "actions": "b1 b1",
               "acceptable": "b2"}
    with pytest.raises(PositionError, match="only in a hand of one card"):
        verify(Position.from_dict(big_bid))


@pytest.mark.parametrize(
    "change, message",
    [
        ({"actions": "b1 b1 b1"}, "hand is over|not the|must|bid"),
        ({"hands": ["2C", "2C", "AS"]}, "dealt twice"),
        ({"hands": ["2C", "3C"]}, "2 hands for 3 players"),
        ({"acceptable": "AS"}, "not legal here"),
        ({"acceptable": "b0 b1"}, "not none or all"),
        ({"colour": "red"}, "unknown field 'colour'"),
        ({"players": "abc"}, "players must be a whole number, got 'abc'"),
        ({"players": 3.7}, "players must be a whole number, got 3.7"),
        ({"dealer": 1.9}, "dealer must be a whole number, got 1.9"),
        ({"hands": "2H"}, "hands must be a list of one hand per seat"),
    ],
)
def test_an_inconsistent_position_is_refused_with_its_name(change, message):
    with pytest.raises(PositionError, match=message):
        verify(Position.from_dict({**DEALER_ACE, **change}))


def test_a_suite_file_with_a_wrong_position_does_not_load(tmp_path):
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"positions": [DEALER_ACE, {**DEALER_ACE, "id": "planted", "acceptable": "b0"}]}))
    with pytest.raises(PositionError, match=f"^{re.escape(str(path))}: position 'planted'"):  # the file, then the position
        load_positions(path)
    path.write_text(yaml.safe_dump({"positions": [DEALER_ACE, DEALER_ACE]}))
    with pytest.raises(PositionError, match="appears twice"):
        load_positions(path)
    path.write_text("positions: [")
    with pytest.raises(PositionError, match=r"positions file '.*suite.yaml' is not valid YAML: line 1, column 13: expected"):
        load_positions(path)
    path.write_bytes(b"\xff\xfe positions")
    with pytest.raises(PositionError, match="is not UTF-8 text"):
        load_positions(path)
    with pytest.raises(PositionError, match="is a folder, not a YAML file of positions"):
        load_positions(tmp_path)


def test_agents_are_scored_and_their_failures_told_in_words(suite):
    random = run_suite("random", suite)
    heuristic = run_suite("heuristic", suite)
    assert random.total == heuristic.total == len(suite)
    assert heuristic.passed > random.passed
    assert len(random.failures) == random.total - random.passed
    assert "It played" in random.failures[0] and "right:" in random.failures[0]


def test_a_specialist_is_not_counted_on_rules_it_refuses(suite):
    result = run_suite("ppo-standard", suite[:3])
    assert result.skipped + result.total == 3


# The last hand (round 9: one card) of a standard 4-player match: seat 1 deals and holds the ace of trump.
LAST_HAND = {
    "id": "last-hand-ace-of-trump", "players": 4, "round": 9, "dealer": 1, "hands": ["2C", "AS", "3D", "4H"],
    "turned": "5S", "actions": "b0 b1 b1", "acceptable": "b1", "reason": "the ace of trump takes the only trick",
}


def test_a_position_of_a_matchs_hand_is_that_hand_under_the_rules_own_schedule():
    position = verify(Position.from_dict(LAST_HAND))
    game = position.game()
    assert position.rules == Rules.preset("standard")  # the whole 10-to-1 schedule, so ppo-standard can be asked
    assert (game.round_index, game.dealer, game.hand_size, game.scores) == (9, 1, 1, [0, 0, 0, 0])
    assert position.seat == 1 and "hand 10 of a 10-hand match" in position.describe()
    assert Position.from_dict(position.to_dict()).to_dict() == position.to_dict() and position.to_dict()["round"] == 9
    result = run_suite("ppo-standard", [position])
    assert (result.total, result.skipped) == (1, 0)
    with pytest.raises(PositionError, match="not sure"):  # a wrong answer there is refused as anywhere
        verify(Position.from_dict({**LAST_HAND, "acceptable": "b0"}))


def test_positions_are_written_back_as_they_were_read():
    for entry in _suite_data():
        assert Position.from_dict(entry).to_dict() == entry, entry["id"]
    # a hand of a match under a schedule of its own keeps the schedule; without a round it is replaced
    own = {**LAST_HAND, "id": "own-schedule", "round": 2, "rules": {"hand_sizes": [3, 2, 1]}}
    assert Position.from_dict(Position.from_dict(own).to_dict()).rules.hand_sizes == (3, 2, 1)
    one = Position.from_dict({**DEALER_ACE, "rules": {"hand_sizes": [5, 4]}})
    assert one.rules.hand_sizes == (1,) and "rules" not in one.to_dict()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"round": 8}, "hands of 1 cards, but round 8 of the schedule deals 2"),
        ({"round": 10}, "round must be a hand 0..9"),
        ({"round": "last"}, "round must be a hand 0..9"),
    ],
)
def test_a_bad_round_is_refused_with_its_name(change, message):
    with pytest.raises(PositionError, match=f"'last-hand-ace-of-trump': {message}"):
        Position.from_dict({**LAST_HAND, **change})


def test_the_shipped_suite_asks_ppo_standard_the_last_hands_of_its_match(suite):
    of_match = [p for p in suite if p.round is not None]
    assert len(of_match) >= 10 and all(p.rules == Rules.preset("standard") for p in of_match)
    result = run_suite("ppo-standard", suite)
    assert result.total == len(of_match) and result.skipped == len(suite) - len(of_match)


def test_the_command_prints_scores_and_failures(tmp_path, capsys):
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump({"positions": [DEALER_ACE]}))
    assert main(["positions", "--file", str(path), "--agents", "random", "heuristic"]) == 0
    out = capsys.readouterr().out
    assert "1 positions, each proved by exhaustive search" in out
    assert "heuristic" in out and "1/1" in out
    path.write_text(yaml.safe_dump({"positions": [{**DEALER_ACE, "acceptable": "b0"}]}))
    assert main(["positions", "--file", str(path)]) == 2
    assert "not sure" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--agents"], "--agents: name at least one policy spec"),
    (["--failures", "-5"], "--failures must be -1 (all), 0 (none) or a count, got -5"),
])
def test_the_command_refuses_no_agents_and_a_negative_failure_count(argv, message, capsys):
    from blackout_training.cli import main

    assert main(["positions", *argv]) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_an_empty_suite_is_refused_and_an_unknown_agent_is_named_before_the_suite_is_proved(tmp_path, capsys, monkeypatch):
    empty = tmp_path / "empty.yaml"
    empty.write_text("positions: []\n")
    assert main(["positions", "--file", str(empty), "--agents", "heuristic"]) == 2
    assert "its 'positions' list is empty" in capsys.readouterr().err
    import blackout_training.evaluation.positions as suite

    monkeypatch.setattr(suite, "load_positions", lambda path=None: pytest.fail("the suite was proved first"))
    assert main(["positions", "--agents", "heuristic", "nosuch"]) == 2
    assert "nosuch" in capsys.readouterr().err


def test_a_damaged_checkpoint_in_a_folder_named_rules_is_an_error_not_a_skip(tmp_path, suite):
    from blackout_training.evaluation.positions import run_suite

    damaged = tmp_path / "rules" / "mine.pt"
    damaged.parent.mkdir()
    damaged.write_text("not a checkpoint")
    with pytest.raises(ValueError, match="is not a torch checkpoint"):
        run_suite(f"ppo:{damaged}", suite[:1])
