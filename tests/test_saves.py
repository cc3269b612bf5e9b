"""Saves: JSON that round-trips any state, and clear errors for corrupt or impossible files."""

import json

import pytest

from blackout_env import BlackoutGame, Rules, SaveFileError
from blackout_env.game.engine import SAVE_FORMAT, SAVE_VERSION


def midhand_game(rules=None, seed=4, steps=23):
    game = BlackoutGame(rules or Rules(), seed=seed)
    for _ in range(steps):
        game.step(game.legal_actions()[0])
    return game


def edited(game, change):
    data = json.loads(game.to_json())
    change(data)
    return json.dumps(data)


def test_a_mid_hand_save_loads_to_an_equal_game():
    game = midhand_game()
    assert game.phase == "play" and game.current_trick  # mid-trick, mid-hand
    loaded = BlackoutGame.from_json(game.to_json())
    assert loaded == game
    assert loaded.hands == game.hands and loaded.current_trick == game.current_trick
    assert loaded.history == game.history
    assert [loaded.view(p) for p in range(4)] == [game.view(p) for p in range(4)]


def test_a_save_holds_format_version_rules_decks_and_actions():
    data = json.loads(midhand_game().to_json())
    assert data["format"] == SAVE_FORMAT and data["version"] == SAVE_VERSION
    assert Rules.from_dict(data["rules"]) == Rules()
    assert len(data["decks"]) == 10 and len(data["actions"]) == 23


def test_house_rules_and_a_random_first_dealer_survive_a_save():
    rules = Rules.preset("jokers").replace(first_dealer="random", lead_trump="broken", hand_sizes=[3, 5])
    game = midhand_game(rules, seed=9, steps=12)
    loaded = BlackoutGame.from_json(game.to_json())
    assert loaded == game and loaded.rules == rules and loaded.dealer == game.dealer


def test_a_finished_game_and_a_single_hand_start_round_round_trip():
    game = BlackoutGame(seed=1, start_round=8)
    while not game.is_over:
        game.step(game.legal_actions()[-1])
    loaded = BlackoutGame.from_json(game.to_json().encode())
    assert loaded == game and loaded.is_over and loaded.winners() == game.winners()


@pytest.mark.parametrize(
    "text, words",
    [
        ("{not json", "saved game is not valid JSON"),
        ("", "saved game is not valid JSON"),
        ("[1, 2]", "not a saved Blackout game"),
        ('{"format": "chess"}', "not a saved Blackout game (expected format 'blackout-game')"),
        ('{"format": "blackout-game", "version": 99}', "format version 99; this version reads 1"),
        ('{"format": "blackout-game", "version": true}', "format version True; this version reads 1"),
        ('{"format": "blackout-game", "version": 1, "rules": {}}', "saved game lacks first_dealer, decks, actions, state"),
        ("[" * 100_000, "its JSON nests too deeply"),
    ],
)
def test_corrupt_or_foreign_files_are_refused(text, words):
    with pytest.raises(SaveFileError) as info:
        BlackoutGame.from_json(text)
    assert words in str(info.value)


def test_a_card_duplicated_in_a_deck_is_refused():
    game = midhand_game()

    def duplicate(data):
        data["decks"][3][5] = data["decks"][3][6]

    with pytest.raises(SaveFileError, match=r"saved game is impossible: decks\[3\] is not a permutation .* appears 2 times"):
        BlackoutGame.from_json(edited(game, duplicate))


def test_a_missing_deck_is_refused_rather_than_reshuffled():
    game = midhand_game()
    with pytest.raises(SaveFileError, match="one deck order for each of the 10 rounds"):
        BlackoutGame.from_json(edited(game, lambda d: d["decks"].pop()))
    with pytest.raises(SaveFileError, match="one deck order for each of the 10 rounds"):
        BlackoutGame.from_json(edited(game, lambda d: d["decks"].__setitem__(2, None)))


def test_an_illegal_action_in_the_file_is_refused_naming_it():
    game = midhand_game()

    def cheat(data):
        data["actions"][0] = 0  # a card played during bidding

    with pytest.raises(SaveFileError) as info:
        BlackoutGame.from_json(edited(game, cheat))
    message = str(info.value)
    assert "saved game is impossible: action #0" in message and "bidding is not over yet" in message


def test_a_non_integer_action_is_refused():
    game = midhand_game()
    with pytest.raises(SaveFileError, match="action #2 is '55', not an int"):
        BlackoutGame.from_json(edited(game, lambda d: d["actions"].__setitem__(2, "55")))
    with pytest.raises(SaveFileError, match="'actions' must be a list"):
        BlackoutGame.from_json(edited(game, lambda d: d.__setitem__("actions", 5)))


@pytest.mark.parametrize(
    "field, value",
    [("scores", [99, 0, 0, 0]), ("round_index", 3), ("phase", "bid"), ("current_player", 7)],
)
def test_edited_scores_or_state_are_refused(field, value):
    game = midhand_game(steps=60)

    def tamper(data):
        data["state"][field] = value

    with pytest.raises(SaveFileError, match="saved game is inconsistent: its recorded state"):
        BlackoutGame.from_json(edited(game, tamper))


def test_impossible_rules_or_seats_in_the_file_are_refused():
    game = midhand_game()
    with pytest.raises(SaveFileError, match="saved game is impossible: num_players: must be in 3..7, got 9"):
        BlackoutGame.from_json(edited(game, lambda d: d["rules"].__setitem__("num_players", 9)))
    with pytest.raises(SaveFileError, match="unknown rules option 'colour'"):
        BlackoutGame.from_json(edited(game, lambda d: d["rules"].__setitem__("colour", "red")))
    with pytest.raises(SaveFileError, match="first_dealer: must be a seat 0..3"):
        BlackoutGame.from_json(edited(game, lambda d: d.__setitem__("first_dealer", 4)))


def test_save_file_error_is_a_value_error():
    assert issubclass(SaveFileError, ValueError)
