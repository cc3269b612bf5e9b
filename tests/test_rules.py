"""Rules: every option validated with a message naming the field, presets, schedules, YAML round trips."""

import numpy as np
import pytest

from blackout_env.game.rules import MATCH_LENGTHS, PATTERNS, Rules, RulesError, preset_names


def test_default_rules_are_the_standard_game():
    rules = Rules()
    assert rules.num_players == 4
    assert rules.hand_sizes == (10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
    assert rules.hook and rules.trump == "turned" and rules.lead_trump == "any"
    assert rules.hand_score(3, 3) == 13 and rules.hand_score(3, 2) == 0
    assert Rules.preset("standard") == rules


# ------------------------------------------------------------------ schedules
@pytest.mark.parametrize(
    "pattern, maximum, sizes",
    [
        ("down", 5, (5, 4, 3, 2, 1)),
        ("up", 5, (1, 2, 3, 4, 5)),
        ("up-down", 4, (1, 2, 3, 4, 3, 2, 1)),
        ("down-up", 4, (4, 3, 2, 1, 2, 3, 4)),
        ("down", 1, (1,)),
        ("up-down", 1, (1,)),
    ],
)
def test_patterns_run_to_the_maximum(pattern, maximum, sizes):
    assert Rules(hand_sizes=pattern, max_hand_size=maximum).hand_sizes == sizes


@pytest.mark.parametrize("players, full", [(3, 17), (4, 13), (5, 10), (6, 8), (7, 7)])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_full_deck_maximum_is_deck_size_over_players(players, full, pattern):
    rules = Rules(num_players=players, hand_sizes=pattern, max_hand_size="full")
    down = tuple(range(full, 0, -1))
    up = down[::-1]
    expected = {"down": down, "up": up, "up-down": up + down[1:], "down-up": down + up[1:]}[pattern]
    assert rules.hand_sizes == expected
    assert max(rules.hand_sizes) * players <= 52


@pytest.mark.parametrize("players", [3, 4, 5, 6, 7])
def test_named_match_lengths_for_every_table(players):
    assert Rules(num_players=players, hand_sizes="short").hand_sizes == (1, 2, 3, 2, 1)
    assert Rules(num_players=players, hand_sizes="standard").hand_sizes == (1, 2, 3, 4, 5, 4, 3, 2, 1)
    assert Rules(num_players=players, hand_sizes="long").hand_sizes == (1, 2, 3, 4, 5, 6, 7, 6, 5, 4, 3, 2, 1)
    assert set(MATCH_LENGTHS) == {"short", "standard", "long"}


def test_full_deck_with_jokers_counts_the_jokers():
    assert max(Rules(num_players=3, hand_sizes="down", max_hand_size="full", jokers=2).hand_sizes) == 18
    assert max(Rules(num_players=6, hand_sizes="down", max_hand_size="full", jokers=2).hand_sizes) == 9


def test_explicit_lists_are_kept_in_order_as_tuples():
    rules = Rules(hand_sizes=[3, 1, 3])
    assert rules.hand_sizes == (3, 1, 3) and rules.num_rounds == 3 and rules.max_bid == 3
    assert Rules(hand_sizes=np.array([2, 2])).hand_sizes == (2, 2)


def test_derived_sizes_of_the_action_space():
    assert Rules().num_actions == 52 + 11
    jokers = Rules(jokers=1)
    assert jokers.deck_size == 53 and jokers.num_cards == 54 and jokers.num_actions == 54 + 11


# ----------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "options, field, words",
    [
        (
            {"num_players": 6, "max_hand_size": 10},
            "max_hand_size",
            "6 players x 10 cards = 60 > 52 cards in the deck; use at most 8",
        ),
        ({"num_players": 6, "hand_sizes": [10]}, "hand_sizes", "6 players x 10 cards = 60 > 52"),
        ({"hand_sizes": [3, 0]}, "hand_sizes", "must be >= 1, got 0"),
        ({"num_players": 8}, "num_players", "must be in 3..7, got 8"),
        ({"num_players": 2}, "num_players", "must be in 3..7, got 2"),
        ({"hand_sizes": "sideways"}, "hand_sizes", "unknown pattern 'sideways'; allowed: down, up, up-down, down-up"),
        ({"hand_sizes": []}, "hand_sizes", "at least one hand"),
        ({"hand_sizes": 7}, "hand_sizes", "a pattern name or a list"),
        ({"max_hand_size": 20}, "max_hand_size", "4 players x 20 cards = 80 > 52"),
        ({"max_hand_size": "fulll"}, "max_hand_size", '"full"'),
        ({"max_hand_size": 0}, "max_hand_size", ">= 1"),
        ({"hook": "yes"}, "hook", "true or false"),
        ({"trump": "hearts"}, "trump", "turned, none, rotating"),
        ({"no_card_trump": "dealer"}, "no_card_trump", "none, dealer_last"),
        ({"lead_trump": "never"}, "lead_trump", "any, broken"),
        ({"jokers": 3}, "jokers", "0..2"),
        ({"miss_points": 1.5}, "miss_points", "an integer"),
        ({"points_per_trick": True}, "points_per_trick", "an integer"),
        ({"first_dealer": 4}, "first_dealer", '0..3, got 4 (or "random")'),
        ({"first_dealer": "left"}, "first_dealer", '"random"'),
        ({"exact_bonus": 2**31}, "exact_bonus", "-2147483647..2147483647, got 2147483648"),
        ({"miss_points": -(2**40)}, "miss_points", "-2147483647..2147483647"),
        ({"exact_bonus": 2**30}, "scoring", "exact_bonus=1073741824, points_per_bid=1 a match total can reach"),
        ({"hand_sizes": [1] * 128}, "hand_sizes", "at most 127 hands, got 128"),
    ],
)
def test_impossible_rules_are_rejected_naming_the_field(options, field, words):
    with pytest.raises(RulesError) as info:
        Rules(**options)
    message = str(info.value)
    assert message.startswith(field + ":"), message
    assert words in message


@pytest.mark.parametrize(("players", "jokers", "largest"), [(3, 0, 10), (5, 0, 10), (6, 0, 8), (7, 0, 7), (6, 2, 9)])
def test_the_default_largest_hand_is_ten_or_what_the_deck_allows(players, jokers, largest):
    rules = Rules(num_players=players, jokers=jokers)
    assert rules.max_hand_size == largest
    assert rules.hand_sizes == tuple(range(largest, 0, -1))
    assert Rules.preset("standard").replace(num_players=players, jokers=jokers).hand_sizes == rules.hand_sizes


def test_the_largest_match_total_bounds_every_score_and_fits_int32():
    rules = Rules(miss_points=-10, miss_points_per_trick=-2, points_per_trick=1)
    assert rules.largest_match_total() == sum(
        max(abs(rules.hand_score(bid, won)) for bid in range(size + 1) for won in range(size + 1))
        for size in rules.hand_sizes
    )
    # The largest scoring values allowed still fit the batched engine's int32 totals.
    edge = Rules(hand_sizes=[1], points_per_bid=0, exact_bonus=2**31 - 1)
    assert edge.largest_match_total() == 2**31 - 1


def test_a_rules_path_that_is_a_folder_or_not_text_names_the_file(tmp_path):
    with pytest.raises(RulesError, match=f"rules file '{tmp_path}' is a folder"):
        Rules.from_yaml(tmp_path)
    with pytest.raises(RulesError, match="is a folder"):
        Rules.resolve(str(tmp_path) + "/")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00num_players: 4")
    with pytest.raises(RulesError, match=f"rules file '{binary}' is not UTF-8 text"):
        Rules.resolve(str(binary))


def test_rules_error_is_a_value_error():
    assert issubclass(RulesError, ValueError)


def test_unknown_option_is_rejected_naming_it_and_the_known_ones():
    with pytest.raises(RulesError, match="unknown rules option 'hok'; known options: .*hook"):
        Rules.from_dict({"hok": True})


def test_unknown_yaml_key_names_the_file_and_the_key(tmp_path):
    path = tmp_path / "house.yaml"
    path.write_text("num_players: 5\ntrumps: none\n")
    with pytest.raises(RulesError) as info:
        Rules.from_yaml(path)
    assert str(path) in str(info.value) and "'trumps'" in str(info.value)


def test_yaml_that_is_not_a_mapping_or_not_yaml_is_a_clear_error(tmp_path):
    listed = tmp_path / "list.yaml"
    listed.write_text("- 1\n- 2\n")
    with pytest.raises(RulesError, match="expected a mapping"):
        Rules.from_yaml(listed)
    broken = tmp_path / "broken.yaml"
    broken.write_text("num_players: [4\n")
    with pytest.raises(RulesError, match="not valid YAML"):
        Rules.from_yaml(broken)
    with pytest.raises(RulesError, match="does not exist"):
        Rules.from_yaml(tmp_path / "missing.yaml")


def test_rules_are_frozen():
    with pytest.raises(AttributeError):
        Rules().num_players = 5  # type: ignore[misc]


# -------------------------------------------------------------------- presets
def test_every_preset_loads_and_names_what_it_is():
    names = preset_names()
    for required in ("standard", "up-and-down", "trump-must-break", "full-deck", "minus-scoring", "no-trump", "short", "long"):
        assert required in names
    for name in names:
        assert isinstance(Rules.preset(name), Rules)


def test_presets_hold_what_their_names_say():
    assert Rules.preset("no-trump").trump == "none"
    assert Rules.preset("trump-must-break").lead_trump == "broken"
    assert Rules.preset("full-deck").hand_sizes[0] == 13
    assert Rules.preset("full-deck-dealer-trump").no_card_trump == "dealer_last"
    assert Rules.preset("minus-scoring").hand_score(3, 2) == -10
    assert Rules.preset("miss-by-size").hand_score(3, 1) == -2
    assert Rules.preset("per-trick").hand_score(3, 3) == 13
    assert Rules.preset("per-trick").hand_score(3, 2) == 2
    assert Rules.preset("no-hook").hook is False
    assert Rules.preset("rotating-trump").trump == "rotating"
    assert Rules.preset("jokers").jokers == 2
    assert Rules.preset("up-and-down").hand_sizes == tuple(range(1, 11)) + tuple(range(9, 0, -1))
    assert Rules.preset("short").hand_sizes == (1, 2, 3, 2, 1)
    assert Rules.preset("single-hand").hand_sizes == (10,)


def test_unknown_preset_lists_the_presets():
    with pytest.raises(RulesError, match="unknown rules preset 'nope'; presets: .*standard"):
        Rules.preset("nope")


def test_resolve_takes_rules_names_paths_and_mappings(tmp_path):
    rules = Rules(num_players=5)
    assert Rules.resolve(rules) is rules
    assert Rules.resolve(None) == Rules()
    assert Rules.resolve("no-trump") == Rules.preset("no-trump")
    assert Rules.resolve({"num_players": 5}) == rules
    path = tmp_path / "five.yaml"
    rules.to_yaml(path)
    assert Rules.resolve(str(path)) == rules
    with pytest.raises(RulesError, match="expected a Rules"):
        Rules.resolve(5)  # type: ignore[arg-type]


# ------------------------------------------------------------- yaml round trip
@pytest.mark.parametrize("name", preset_names())
def test_every_preset_round_trips_through_yaml(name, tmp_path):
    rules = Rules.preset(name)
    path = tmp_path / "rules.yaml"
    text = rules.to_yaml(path)
    assert path.read_text() == text
    assert Rules.from_yaml(path) == rules
    assert Rules.from_dict(rules.to_dict()) == rules


def test_unusual_rules_round_trip_through_yaml(tmp_path):
    rules = Rules(
        num_players=6,
        hand_sizes=[1, 8, 2],
        hook=False,
        trump="rotating",
        no_card_trump="dealer_last",
        lead_trump="broken",
        exact_bonus=5,
        points_per_bid=2,
        miss_points=-3,
        miss_points_per_trick=-2,
        points_per_trick=1,
        jokers=2,
        first_dealer="random",
    )
    path = tmp_path / "odd.yaml"
    rules.to_yaml(path)
    assert Rules.from_yaml(path) == rules


def test_replace_keeps_a_pattern_for_another_table():
    full = Rules.preset("full-deck")
    assert full.replace(num_players=5).hand_sizes == tuple(range(10, 0, -1))
    assert full.replace(num_players=7).hand_sizes == tuple(range(7, 0, -1))
    assert Rules().replace(max_hand_size=5).hand_sizes == (5, 4, 3, 2, 1)
    assert Rules(hand_sizes=[2, 3]).replace(num_players=7).hand_sizes == (2, 3)
    assert Rules().replace(num_players=6).hand_sizes == tuple(range(8, 0, -1))
    assert Rules(num_players=7).replace(num_players=4).hand_sizes == tuple(range(10, 0, -1))
    with pytest.raises(RulesError, match="max_hand_size: 6 players x 10 cards"):
        Rules(max_hand_size=10).replace(num_players=6)
    with pytest.raises(RulesError, match="unknown rules option 'players'"):
        Rules().replace(players=5)


# ---------------------------------------------------------------- scoring
@pytest.mark.parametrize(
    "options, bid, taken, points",
    [
        ({}, 3, 3, 13),
        ({}, 0, 0, 10),
        ({}, 3, 2, 0),
        ({"miss_points": -10}, 3, 2, -10),
        ({"miss_points_per_trick": -1}, 3, 2, -1),
        ({"miss_points_per_trick": -1}, 1, 4, -3),
        ({"points_per_bid": 0, "points_per_trick": 1}, 3, 3, 13),
        ({"points_per_bid": 0, "points_per_trick": 1}, 3, 2, 2),
        ({"points_per_bid": 0, "points_per_trick": 1}, 0, 0, 10),
    ],
)
def test_hand_score_variants(options, bid, taken, points):
    assert Rules(**options).hand_score(bid, taken) == points


def test_rules_in_words_mention_every_house_rule():
    words = Rules(
        trump="turned", no_card_trump="dealer_last", lead_trump="broken", jokers=2, hook=False,
        miss_points=-10, points_per_trick=1, first_dealer="random",
    ).describe()
    for phrase in ("dealer's last card", "only once trump is broken", "Jokers", "off", "-10", "per trick", "random"):
        assert phrase in words, phrase
    assert "rotates by hand: hearts, diamonds, clubs, spades, no trump" in Rules(trump="rotating").describe()


def test_a_maximum_only_a_pattern_reads_is_checked_only_for_a_pattern():
    with pytest.raises(RulesError, match="max_hand_size: 7 players x 8 cards = 56 > 52"):
        Rules(num_players=7, hand_sizes="down", max_hand_size=8)
    short = Rules.from_dict(Rules.preset("short").to_dict())  # a rules file written at 4 players (max_hand_size 10)
    assert short.replace(num_players=7).hand_sizes == (1, 2, 3, 2, 1)
    assert Rules(num_players=7, hand_sizes=[1, 2], max_hand_size=10).hand_sizes == (1, 2)


def test_full_is_kept_as_the_number_used_and_followed_by_replace():
    full = Rules(hand_sizes="down", max_hand_size="full")
    assert full.max_hand_size == 13
    assert full == Rules(hand_sizes="down", max_hand_size=13) and hash(full) == hash(Rules(max_hand_size=13))
    assert full.to_dict()["max_hand_size"] == 13 and Rules.from_dict(full.to_dict()) == full
    assert full.replace(num_players=5).max_hand_size == 10  # "full" follows the table; 13 would not fit
    assert Rules(hand_sizes="down", max_hand_size=13).replace(hook=False).max_hand_size == 13


def test_rules_pickle_and_keep_their_pattern():
    import pickle

    rules = pickle.loads(pickle.dumps(Rules.preset("full-deck")))
    assert rules == Rules.preset("full-deck") and hash(rules) == hash(Rules.preset("full-deck"))
    assert rules.replace(num_players=6).hand_sizes[0] == 8


@pytest.mark.parametrize("text, message", [
    ("num_players: 3\nnum_players: 5\n", r"is not valid YAML: line 2, column 1: the key 'num_players' is given twice"),
    ("", r"holds no options \(it is empty or only comments\); write \{\} for the default rules"),
    ("# num_players: 3\n", r"holds no options"),
])
def test_a_rules_file_with_a_key_twice_or_no_options_is_refused_naming_it(tmp_path, text, message):
    # PyYAML keeps the last of two keys, and an empty (or cut) file read as the default rules, both unnoticed.
    path = tmp_path / "r.yaml"
    path.write_text(text)
    with pytest.raises(RulesError, match=f"rules file '{path}' {message}"):
        Rules.from_yaml(path)
    path.write_text("{}\n")
    assert Rules.from_yaml(path) == Rules()


def test_yaml_merge_keys_still_read_and_may_be_given_again(tmp_path):
    import yaml

    from blackout_env.game.rules import read_yaml_file

    path = tmp_path / "r.yaml"  # (PyYAML's `<<: *anchor`: a mapping's own key overrides the merged one)
    path.write_text("base: &b {a: 1, b: 2}\nx: {<<: *b, a: 3}\n")
    assert read_yaml_file(path, "f", "y", RulesError) == {"base": {"a": 1, "b": 2}, "x": {"a": 3, "b": 2}}
    path.write_text("b: &b {a: 1}\nc: &c {d: 2}\nx: {<<: [*b, *c], a: 3}\n=: 4\n")
    assert read_yaml_file(path, "f", "y", RulesError) == {"b": {"a": 1}, "c": {"d": 2}, "x": {"a": 3, "d": 2}, "=": 4}
    chained = "common: &c {lr: 1, clip: 2}\nppo: &p\n  <<: *c\n  lr: 3\nlong:\n  <<: *p\n"  # (an anchor that merges)
    path.write_text(chained)
    assert read_yaml_file(path, "f", "y", RulesError) == yaml.safe_load(chained)
    for text, twice in [("x: {<<: {p: 1, p: 2}}\n", "the key 'p'"), ("b: &b {a: 1}\nx: {<<: *b, <<: *b}\n", "'<<'"),
                        ("=: 1\n=: 2\n", "the key '='")]:
        path.write_text(text)  # a key twice in an inline merge source, or two merge keys: the first won silently
        with pytest.raises(RulesError, match=f"{twice} is given twice"):
            read_yaml_file(path, "f", "y", RulesError)


def test_a_yaml_value_pyyaml_cannot_build_is_an_invalid_yaml_error_naming_the_file(tmp_path):
    path = tmp_path / "dated.yaml"
    path.write_text("num_players: 2024-13-45\n")
    with pytest.raises(RulesError, match=f"rules file '{path}' is not valid YAML: month must be in 1..12"):
        Rules.from_yaml(path)
