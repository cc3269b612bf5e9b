"""Held-out tables: random valid rule sets over every option's range, drawn from a stream training never uses."""

import json
from collections import Counter

import numpy as np
import pytest
from blackout_training.cli import main
from blackout_training.evaluation.generalist import row_rules
from blackout_training.evaluation.held_out import (
    DEFAULT_HELD_OUT_SEED,
    LONG_KEY,
    MAX_LISTED_HANDS,
    NAMED_TABLES,
    held_out_generator,
    held_out_rows,
    held_out_rules,
    rules_line,
)
from blackout_training.ppo.tables import (
    TablesVecEnv,
    check_table,
    long_hand_rules,
    per_trick_rules,
    random_rules,
    wide_rules,
)
from blackout_training.ppo.training_seeds import check_held_out_seed, training_seeds

from blackout_env import Rules
from blackout_env.game.rules import MATCH_LENGTHS, PATTERNS, hand_schedule

DRAWS = held_out_rules(DEFAULT_HELD_OUT_SEED, 1000)


def _kind(rules: Rules) -> str:
    for name, sizes in MATCH_LENGTHS.items():
        if rules.hand_sizes == sizes:
            return name
    for pattern in PATTERNS:
        if len(rules.hand_sizes) > 1 and rules.hand_sizes == hand_schedule(pattern, rules.max_bid):
            return pattern
    return "list"


def test_every_held_out_table_is_a_valid_rule_set():
    for _, rules in DRAWS:
        assert Rules.from_dict(rules.to_dict()) == rules
        # A made bid outscores a miss of the same hand: bidding matters at every held-out table.
        assert rules.exact_bonus > rules.miss_points + rules.miss_points_per_trick


def test_the_held_out_draw_covers_every_option_over_its_documented_range():
    tables = [rules for _, rules in DRAWS]
    assert {r.num_players for r in tables} == {3, 4, 5, 6, 7}
    assert {r.jokers for r in tables} == {0, 1, 2}
    assert {r.trump for r in tables} == {"turned", "none", "rotating"}
    assert {r.no_card_trump for r in tables} == {"none", "dealer_last"}
    assert {r.lead_trump for r in tables} == {"any", "broken"}
    assert {r.hook for r in tables} == {True, False}
    assert {r.first_dealer for r in tables} == {"random", 0, 1, 2, 3, 4, 5, 6}
    assert {_kind(r) for r in tables} == {*PATTERNS, *MATCH_LENGTHS, "list"}
    for players in range(3, 8):  # every table size reaches the most cards its deck deals each player
        for jokers in (0, 2):
            assert max(r.max_bid for r in tables if (r.num_players, r.jokers) == (players, jokers)) == (52 + jokers) // players
    assert max(r.max_bid for r in tables if (r.num_players, r.jokers) == (3, 0)) == 17
    assert max(len(r.hand_sizes) for r in tables if _kind(r) == "list") == MAX_LISTED_HANDS
    general = [r for family, r in DRAWS if family == "general"]
    assert {r.exact_bonus for r in general} == set(range(0, 21))
    assert {r.points_per_bid for r in general} == set(range(0, 4))
    assert {r.points_per_trick for r in general} == set(range(0, 3))
    assert {r.miss_points for r in general} == set(range(-10, 1))
    assert {r.miss_points_per_trick for r in general} == set(range(-10, 1))


def test_one_table_in_four_is_from_the_per_trick_family_where_trick_points_outweigh_the_bid():
    families = Counter(family for family, _ in DRAWS)
    assert families["per-trick"] == len(DRAWS) // 4
    for family, rules in DRAWS:
        if family == "per-trick":
            assert rules.points_per_trick in (1, 2) and rules.points_per_bid == 0
            assert 0 <= rules.exact_bonus <= 5 * rules.points_per_trick
    assert {r.exact_bonus for f, r in DRAWS if f == "per-trick"} == set(range(0, 11))


def test_the_house_table_3_players_12_8_4_1_is_a_named_per_trick_row():
    rules = row_rules("held-out-12-8-4-1")
    assert rules == NAMED_TABLES["held-out-12-8-4-1"]
    assert (rules.num_players, rules.hand_sizes, rules.lead_trump, rules.first_dealer) == (3, (12, 8, 4, 1), "broken", "random")
    assert rules.hand_score(2, 2) == 5 + 2 and rules.hand_score(2, 3) == 3  # 5 for an exact bid, 1 per trick
    # Within the per-trick family's ranges: a list of at most six hands, no points per bid, a bonus of at most 5 tricks.
    assert len(rules.hand_sizes) <= MAX_LISTED_HANDS and rules.points_per_bid == 0
    assert rules.exact_bonus <= 5 * rules.points_per_trick
    assert rules_line(rules) == (
        "3p, hands 12-8-4-1, 0 jokers, turned trump (else none), trump must break, hook on, exact 5 + 0/bid, "
        "miss 0 +0/trick missed, 1/trick taken, first dealer random"
    )


def test_the_held_out_stream_is_never_trainings_for_the_same_integer_seed():
    for seed in [*range(20), 1009, 2**31 - 1]:
        training = np.random.default_rng(seed)  # how TablesVecEnv.reset seeds its table draws
        held_out = held_out_generator(seed, 0)
        assert held_out.bit_generator.state["state"] != training.bit_generator.state["state"]
        assert not np.array_equal(held_out.integers(2**62, size=4), training.integers(2**62, size=4))
        training = np.random.default_rng(seed)
        trained_tables = [random_rules(training) for _ in range(8)] + [wide_rules(training) for _ in range(8)]
        trained_tables += [per_trick_rules(training) for _ in range(8)]
        assert not any(rules in trained_tables for _, rules in held_out_rules(seed, 8))


def test_wide_training_tables_cover_the_held_out_range_on_trainings_stream():
    check_table("wide")
    rng = np.random.default_rng(5)
    tables = [wide_rules(rng) for _ in range(300)]
    per_trick = [r for r in tables if r.points_per_bid == 0 and r.points_per_trick and r.exact_bonus <= 5 * r.points_per_trick]
    assert 0.15 < len(per_trick) / len(tables) < 0.45  # a quarter drawn from the family (some general ones fit it too)
    assert max(r.max_bid for r in tables) > 13 and {r.num_players for r in tables} == {3, 4, 5, 6, 7}
    assert min(r.miss_points_per_trick for r in tables) < -2 and max(r.exact_bonus for r in tables) == 20
    env = TablesVecEnv(["wide"], 4, 2, Rules.preset("standard"))  # a "wide" group plays its drawn table
    env.reset(seed=5)
    assert env.table_rules()[0] == wide_rules(np.random.default_rng(5))


def test_per_trick_training_tables_are_all_of_that_family():
    check_table("per-trick")
    rng = np.random.default_rng(7)
    tables = [per_trick_rules(rng) for _ in range(200)]
    assert all(r.points_per_bid == 0 and r.points_per_trick in (1, 2) for r in tables)
    assert all(r.miss_points + r.miss_points_per_trick < r.exact_bonus <= 5 * r.points_per_trick for r in tables)
    assert max(r.max_bid for r in tables) > 13 and {r.num_players for r in tables} == {3, 4, 5, 6, 7}
    env = TablesVecEnv(["per-trick"], 4, 2, Rules.preset("standard"))
    env.reset(seed=7)
    assert env.table_rules()[0] == per_trick_rules(np.random.default_rng(7))


def test_long_hand_training_tables_deal_a_hand_longer_than_any_presets():
    check_table("long-hands")
    rng = np.random.default_rng(9)
    tables = [long_hand_rules(rng) for _ in range(200)]
    assert all(max(r.hand_sizes) >= 11 for r in tables) and {r.num_players for r in tables} == {3, 4}
    assert max(max(r.hand_sizes) for r in tables) == 18 and any(r.jokers for r in tables)  # 54 cards // 3
    per_trick = [r for r in tables if r.points_per_bid == 0 and r.points_per_trick and r.exact_bonus <= 5 * r.points_per_trick]
    assert 0.35 < len(per_trick) / len(tables) < 0.75  # half drawn from the family (some general ones fit it too)
    env = TablesVecEnv(["long-hands"], 4, 2, Rules.preset("standard"))
    env.reset(seed=9)
    assert env.table_rules()[0] == long_hand_rules(np.random.default_rng(9))


def test_a_held_out_table_is_the_same_whatever_the_count_and_seeds_differ():
    assert held_out_rows(7, 3) == held_out_rows(7, 10)[:3]
    assert [name for name, *_ in held_out_rows(7, 3)] == ["held-out-7-1", "held-out-7-2-per-trick", "held-out-7-3"]
    assert held_out_rules(7, 5) != held_out_rules(8, 5)


def test_the_training_seeds_are_the_run_seeds_of_every_run_that_drew_tables():
    seeds = training_seeds("ppo")
    assert "run.seed of configs/train/generalist.yaml" in seeds[1]
    assert "run.seed recorded in training/agents/checkpoints/ppo_generalist_bots.pt" in seeds[3]
    assert "run.seed of configs/train/generalist-wide.yaml" in seeds[5]
    assert "run.seed recorded in training/agents/checkpoints/ppo_generalist_wide.pt" in seeds[5]
    assert "run.seed of configs/train/generalist-per-trick.yaml" in seeds[7]
    assert "run.seed recorded in training/agents/checkpoints/ppo_generalist_per_trick.pt" in seeds[7]
    distilled = "blackout expert generate --seed of data distilled into training/agents/checkpoints/ppo_generalist.pt"
    assert all(distilled in seeds[seed] for seed in (0, 1, 2))  # stage 5's three rounds
    assert DEFAULT_HELD_OUT_SEED not in seeds
    check_held_out_seed(DEFAULT_HELD_OUT_SEED, "ppo")
    with pytest.raises(ValueError, match="--held-out-seed 1 is a training seed"):
        check_held_out_seed(1)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--held-out", "2", "--held-out-seed", "3"],
         "--held-out-seed 3 is a training seed, the seed of a run that drew its tables (run.seed of configs/train/generalist-bots.yaml"),
        (["--held-out", "2", "--held-out-seed", "-1"], "--held-out-seed must be a whole number >= 0"),
        (["--held-out", "-1"], "--held-out must be 0 or more"),
        (["--held-out-seed", "5"], "--held-out-seed 5: give --held-out N or --held-out-long N too"),
        (["--held-out-long", "-1"], "--held-out-long must be 0 or more"),
        (["--held-out-long", "1", "--held-out-seed", "3"], "--held-out-seed 3 is a training seed"),
        (["--rows", "held-out-long-1009-2"],
         "'held-out-long-1009-2': held-out table 2 of seed 1009 is 'held-out-long-1009-2-per-trick'"),
        (["--rows", "held-out-12-8-4-1-5p"], "'held-out-12-8-4-1-5p': hand_sizes: 5 players x 12 cards = 60 > 52"),
        (["--rows", "held-out-1009-2"], "'held-out-1009-2': held-out table 2 of seed 1009 is 'held-out-1009-2-per-trick'"),
        (["--rows", "standard,held-out-1009-0"], "'held-out-1009-0': held-out tables count from 1"),
        (["--rows", "held-out-3-1"], "--held-out-seed 3 is a training seed"),
        (["--policy", "ppo-standard", "--held-out", "1"],
         "row 'held-out-1009-1' (5p, hands 1-2-3-4-5, 1 joker"),
    ],
)
def test_bad_held_out_input_is_refused_naming_the_option_and_nothing_runs(argv, message, tmp_path, capsys):
    out_json = tmp_path / "table.json"
    assert main(["bench", "generalist", "--rows", "", *argv, "--deals", "1", "--json", str(out_json)]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert not out_json.exists() and "duplicate deals" not in captured.out


def test_bench_generalist_plays_one_row_per_held_out_table_with_its_rules_in_one_line(tmp_path, capsys):
    out_json, out_md = tmp_path / "table.json", tmp_path / "table.md"
    assert main(["bench", "generalist", "--policy", "random", "--rows", "", "--held-out", "2", "--deals", "2",
                 "--json", str(out_json), "--markdown", str(out_md)]) == 0
    figures = json.loads(out_json.read_text())
    assert figures["held_out_seed"] == DEFAULT_HELD_OUT_SEED
    expected = held_out_rows(DEFAULT_HELD_OUT_SEED, 2)
    assert [(r["row"], r["family"], r["deals"], r["opponent"]) for r in figures["rows"]] == [
        (name, family, 2, "heuristic") for name, family, _ in expected
    ]
    for row, (_, _, rules) in zip(figures["rows"], expected):
        assert Rules.from_dict(row["rules"]) == rules and row["rules_line"] == rules_line(rules)
        assert 0 <= row["agent_bid_made"] <= 1 and 0 <= row["opponent_bid_made"] <= 1
    table = out_md.read_text()
    assert table.startswith("| held-out table | deals | random − heuristic [95% CI] | ± | bid made: random / heuristic |")
    assert f"| {rules_line(expected[1][2])} |" in table and table in capsys.readouterr().out


def test_rows_may_name_held_out_tables_one_by_one(tmp_path):
    out_json = tmp_path / "table.json"
    assert main(["bench", "generalist", "--policy", "random", "--rows", "held-out-1009-8,held-out-1009-50-per-trick",
                 "--deals", "1", "--json", str(out_json)]) == 0
    figures = json.loads(out_json.read_text())
    assert figures["held_out_seed"] == DEFAULT_HELD_OUT_SEED
    drawn = held_out_rows(DEFAULT_HELD_OUT_SEED, 50)
    assert [(r["row"], r["family"], Rules.from_dict(r["rules"])) for r in figures["rows"]] == [drawn[7], drawn[49]]


LONG = held_out_rows(DEFAULT_HELD_OUT_SEED, 400, long=True)


def test_long_hands_tables_deal_a_long_hand_at_three_or_four_players_in_both_families():
    counts = Counter()
    for index, (name, family, rules) in enumerate(LONG):
        per_trick = index % 4 == 1
        assert family == ("long-per-trick" if per_trick else "long")
        assert name == f"held-out-long-{DEFAULT_HELD_OUT_SEED}-{index + 1}" + ("-per-trick" if per_trick else "")
        check_table(rules)
        assert rules.exact_bonus > rules.miss_points + rules.miss_points_per_trick
        longest = max(rules.hand_sizes)
        assert (rules.num_players, longest in range(14, 18)) == (3, True) or (rules.num_players, longest) == (4, 13)
        if per_trick:
            assert rules.points_per_bid == 0 and rules.points_per_trick in (1, 2)
        counts[rules.num_players, longest, _kind(rules)] += 1
    assert {players for players, *_ in counts} == {3, 4}
    assert {longest for players, longest, _ in counts if players == 3} == {14, 15, 16, 17}
    assert {kind for *_, kind in counts} == {*PATTERNS, "list"}


def test_a_long_hands_list_holds_no_hand_longer_than_its_longest():
    # Two jokers at 3 players deal up to 18 cards a hand: a list's other hands stay within the table's longest.
    for _, _, rules in held_out_rows(DEFAULT_HELD_OUT_SEED, 1000, long=True):
        longest = max(rules.hand_sizes)
        assert longest in (range(14, 18) if rules.num_players == 3 else (13,)), (rules.num_players, rules.hand_sizes)


def test_long_hands_tables_have_their_own_stream_the_same_whatever_the_count():
    assert held_out_rows(7, 3, long=True) == held_out_rows(7, 10, long=True)[:3]
    assert held_out_generator(7, 0, LONG_KEY).integers(2**62) != held_out_generator(7, 0).integers(2**62)
    general = {rules for _, rules in held_out_rules(DEFAULT_HELD_OUT_SEED, 400)}
    assert not any(rules in general for _, _, rules in LONG)
    assert held_out_rows(7, 3) == held_out_rows(7, 3, long=False)  # the general draw is unchanged by the option


def test_bench_generalist_plays_long_hands_rows(tmp_path):
    out_json = tmp_path / "table.json"
    assert main(["bench", "generalist", "--policy", "random", "--rows", "held-out-long-1009-5", "--held-out-long", "1",
                 "--deals", "1", "--json", str(out_json)]) == 0
    figures = json.loads(out_json.read_text())
    assert [(r["row"], r["family"]) for r in figures["rows"]] == [(n, f) for n, f, _ in [LONG[0], LONG[4]]]
