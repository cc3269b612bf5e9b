"""``blackout bench generalist``: the result table of a policy, one duplicate evaluation per table."""

import json

import pytest
from blackout_training.bench import benchmark_names
from blackout_training.cli import main
from blackout_training.evaluation.generalist import default_rows, row_rules
from blackout_training.evaluation.tournament import confidence_half_width

from blackout_env import Rules
from blackout_env.game.rules import preset_names


def test_the_default_rows_are_every_preset_and_standard_at_3_5_6_and_7_players():
    rows = default_rows()
    assert rows == [*preset_names(), "standard-3p", "standard-5p", "standard-6p", "standard-7p"]
    assert row_rules("standard-7p").num_players == 7 and row_rules("short").num_players == 4


def test_bench_generalist_writes_one_row_per_table_and_per_versus_policy(tmp_path, capsys):
    assert "generalist" in benchmark_names()
    out_json, out_md = tmp_path / "table.json", tmp_path / "table.md"
    code = main(["bench", "generalist", "--policy", "random", "--rows", "short,short-3p", "--deals", "2",
                 "--row-deals", "short-3p=3", "--versus", "random", "heuristic", "--versus-deals", "1",
                 "--row-deals", "standard-vs-heuristic=2",
                 "--json", str(out_json), "--markdown", str(out_md)])
    assert code == 0
    rows = json.loads(out_json.read_text())["rows"]
    assert [(r["row"], r["players"], r["deals"], r["opponent"]) for r in rows] == [
        ("short", 4, 2, "heuristic"), ("short-3p", 3, 3, "heuristic"), ("standard-vs-random", 4, 1, "random"),
        ("standard-vs-heuristic", 4, 2, "heuristic"),
    ]
    assert rows[0]["half_width"] == pytest.approx((rows[0]["high"] - rows[0]["low"]) / 2)
    assert rows[2]["half_width"] is None  # one deal gives no interval
    assert all(0 <= r["agent_bid_made"] <= 1 for r in rows)
    table = out_md.read_text()
    assert table.startswith("| table | players | deals | random per hand |") and "| short-3p | 3 | 3 |" in table
    assert table in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--rows", "nope"], "unknown row 'nope'"),
        (["--rows", "standard-9p"], "has 9 players; the engine plays 3 to 7"),
        (["--rows", "short", "--row-deals", "standard=5"], "'standard' is not one of the rows"),
        (["--rows", "short", "--row-deals", "short=0"], "the deals must be a positive whole number"),
        (["--deals", "0"], "--deals must be positive"),
        (["--rows", "short", "--versus", "nobody"], "unknown policy 'nobody'"),
    ],
)
def test_bench_generalist_refuses_bad_input_before_playing(argv, message, capsys):
    assert main(["bench", "generalist", *argv]) == 2
    assert message in capsys.readouterr().err


def test_runs_with_other_seeds_pool_into_one_row_of_all_their_deals(tmp_path, capsys):
    """A slow row can be played over several sittings: --pool concatenates the per-deal differences."""
    files = []
    for seed, deals in ((0, 2), (1, 3)):
        files.append(tmp_path / f"seed{seed}.json")
        assert main(["bench", "generalist", "--policy", "random", "--rows", "short", "--deals", str(deals),
                     "--seed", str(seed), "--json", str(files[-1])]) == 0
    parts = [json.loads(f.read_text())["rows"][0] for f in files]
    assert [len(p["per_deal_differences"]) for p in parts] == [2, 3]
    assert parts[1]["difference"] == pytest.approx(sum(parts[1]["per_deal_differences"]) / 3)
    pooled_json = tmp_path / "pooled.json"
    assert main(["bench", "generalist", "--pool", *map(str, files), "--json", str(pooled_json)]) == 0
    pooled = json.loads(pooled_json.read_text())
    assert pooled["seed"] is None  # the seeds are the rows' own
    (row,) = pooled["rows"]
    differences = parts[0]["per_deal_differences"] + parts[1]["per_deal_differences"]
    assert row["deals"] == 5 and row["seeds"] == [0, 1] and row["per_deal_differences"] == differences
    assert row["difference"] == pytest.approx(sum(differences) / 5)
    assert row["agent_per_hand"] == pytest.approx((2 * parts[0]["agent_per_hand"] + 3 * parts[1]["agent_per_hand"]) / 5)
    assert row["half_width"] == pytest.approx(confidence_half_width(differences))
    assert "| short | 4 | 5 |" in capsys.readouterr().out


def test_pool_refuses_the_same_deals_twice_and_files_it_cannot_read(tmp_path, capsys):
    run = tmp_path / "run.json"
    assert main(["bench", "generalist", "--policy", "random", "--rows", "short", "--deals", "1", "--json", str(run)]) == 0
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    capsys.readouterr()
    for files, message in (([run, run], "seed 0 is pooled already"), ([run, broken], "broken.json: not a")):
        assert main(["bench", "generalist", "--pool", *map(str, files)]) != 0
        assert message in capsys.readouterr().err


def test_pool_compares_rows_rules_as_games(tmp_path, capsys):
    from blackout_training.evaluation.generalist import _same_rules

    full = Rules.preset("full-deck").to_dict()
    assert _same_rules({**full, "max_hand_size": "full"}, full)  # files before 2026-12-08 kept "full" as a word
    assert not _same_rules(full, {**full, "hook": False})
    run, other = tmp_path / "run.json", tmp_path / "other.json"
    assert main(["bench", "generalist", "--policy", "random", "--rows", "short", "--deals", "1", "--json", str(run)]) == 0
    figures = json.loads(run.read_text())
    figures["rows"][0]["seed"] = 1
    figures["rows"][0]["rules"]["hook"] = not figures["rows"][0]["rules"]["hook"]
    other.write_text(json.dumps(figures))
    capsys.readouterr()
    assert main(["bench", "generalist", "--pool", str(run), str(other)]) != 0
    assert "row 'short' has other rules than in the files before" in capsys.readouterr().err
