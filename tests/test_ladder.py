"""The rating ladder: mixed tables, ratings in the expected order, resumable with nothing played twice, safe files."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from blackout_training.cli import main
from blackout_training.evaluation.ladder import (
    LADDER_SCHEMA,
    LadderError,
    checkpoint_sha256,
    create_ladder,
    open_ladder,
    play,
    play_pairwise,
    seating_of,
)

from blackout_env.game.rules import Rules

THREE = Rules.preset("short").replace(num_players=3)
AGENTS = ["random", "heuristic", "search:samples=4"]


def _ladder(path: Path, deals: int = 4, agents: list[str] = AGENTS, hands: bool = False):
    ladder = create_ladder(path, THREE, deals=deals, seed=0, hands=hands)
    for spec in agents:
        ladder.add_agent(spec)
    return ladder


def _games(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as db:
        return db.execute(
            "SELECT table_key, deal, rotation, seats, totals, actions FROM games ORDER BY table_key, deal, rotation"
        ).fetchall()


def _files(path: Path) -> dict[str, bytes]:
    """The folder's files and their bytes, but a WAL database's -shm: the index its readers keep, not data."""
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir()) if not p.name.endswith("-shm")}


def test_every_table_plays_each_deal_in_every_rotation_of_one_cyclic_order():
    table = (1, 2, 3, 4)
    orders = {tuple(seating_of(table, deal)) for deal in range(6)}
    assert len(orders) == 6  # (4 - 1)! cyclic orders over six deals: each neighbour on either side
    assert all(sorted(order) == list(table) for order in orders)


def test_a_tiny_ladder_rates_search_above_heuristic_above_random(tmp_path):
    with _ladder(tmp_path / "l.db", deals=12) as ladder:
        assert play(ladder) == 12 * 3
        standings = ladder.standings()
        assert [s.name for s in standings] == ["search:samples=4", "heuristic", "random"]
        assert standings[0].mu > standings[1].mu > standings[2].mu
        assert all(s.games == 36 and s.hands == 36 * 5 for s in standings)  # short: 5 hands a match
        # The margins over the table are zero-sum: each hand's margins add up to zero.
        assert sum(s.margin_per_hand for s in standings) == pytest.approx(0.0, abs=1e-9)


def test_each_agent_holds_each_seat_once_per_deal(tmp_path):
    with _ladder(tmp_path / "l.db", deals=2) as ladder:
        play(ladder)
    for deal in range(2):
        seats = [json.loads(row[3]) for row in _games(tmp_path / "l.db") if row[1] == deal]
        assert len(seats) == 3
        for seat in range(3):
            assert sorted(s[seat] for s in seats) == [1, 2, 3]


def test_an_interrupted_run_resumes_plays_nothing_twice_and_ends_as_an_uninterrupted_one(tmp_path):
    with _ladder(tmp_path / "whole.db") as ladder:
        play(ladder)

    def stop_after_two(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with _ladder(tmp_path / "resumed.db") as ladder:
        with pytest.raises(KeyboardInterrupt):
            play(ladder, on_unit=stop_after_two)
        assert ladder.games_played() == 2 * 3
        assert len(ladder.pending()) == 2
        assert play(ladder) == 2 * 3  # only the two units left
        runs = ladder.db.execute("SELECT games FROM runs ORDER BY id").fetchall()
        assert runs == [(6,), (6,)]
        assert play(ladder) == 0
    assert _games(tmp_path / "resumed.db") == _games(tmp_path / "whole.db")
    with open_ladder(tmp_path / "resumed.db") as resumed, open_ladder(tmp_path / "whole.db") as whole:
        assert resumed.ratings() == whole.ratings()


def test_a_killed_run_leaves_a_readable_ladder_that_resumes_without_replaying(tmp_path):
    path = tmp_path / "killed.db"
    command = [sys.executable, "-m", "blackout_training.cli", "ladder", "run", str(path), "--agents", *AGENTS,
               "--rules", "short", "--players", "3", "--deals", "40", "--no-progress"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        stored = 0
        while stored < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
            if path.exists():
                with open_ladder(path) as ladder:
                    stored = ladder.games_played()
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()
    with open_ladder(path) as ladder:
        before = ladder.games_played()
        assert 3 <= before < 40 * 3 and before % 3 == 0  # whole units only
        kept = _games(path)
        assert play(ladder) == 40 * 3 - before
    after = _games(path)
    assert len(after) == 40 * 3
    assert set(kept) <= set(after)


def test_add_plays_only_the_new_agents_tables_and_rates_everyone_again(tmp_path):
    path = tmp_path / "l.db"
    with _ladder(path, deals=3) as ladder:
        play(ladder)
        before_games = _games(path)
        before = ladder.ratings()
        newcomer = ladder.add_agent("search:samples=2")
        assert play(ladder, with_agent=newcomer.id) == 3 * 3 * 3  # three new tables of three, three deals each
        after = _games(path)
        assert set(before_games) <= set(after)
        added = set(after) - set(before_games)
        assert len(added) == 27
        assert all(str(newcomer.id) in key.split(",") for key, *_ in added)
        assert ladder.pending() == []
        ratings = ladder.ratings()
        assert ratings[newcomer.id][2] == 27
        assert all(ratings[agent][:2] != before[agent][:2] for agent in before)


def test_ratings_do_not_depend_on_the_number_of_workers(tmp_path):
    with _ladder(tmp_path / "one.db", deals=3) as ladder:
        play(ladder, workers=1)
    with _ladder(tmp_path / "two.db", deals=3) as ladder:
        play(ladder, workers=2)
    assert _games(tmp_path / "one.db") == _games(tmp_path / "two.db")


def test_a_unit_stored_by_another_process_is_not_written_twice(tmp_path):
    path = tmp_path / "l.db"
    with _ladder(path, deals=1) as ladder:
        play(ladder)
        games = _games(path)
        with open_ladder(path) as other:
            run = other.start_run("other")
            table, deal = (1, 2, 3), 0
            rows = [{"rotation": r, "seats": [1, 2, 3], "totals": [0, 0, 0], "actions": [], "bids": [], "tricks": [],
                     "scores": []} for r in range(3)]
            assert other.store_unit(run, table, deal, rows) is False
    assert _games(path) == games


def test_pairwise_matches_are_stored_and_kept(tmp_path):
    with _ladder(tmp_path / "l.db", deals=2) as ladder:
        play(ladder)
        assert play_pairwise(ladder, top=2, deals=2) == 2
        pairs = ladder.pairwise()
        first, second = (s.name for s in ladder.standings()[:2])
        assert {(p["a"], p["b"]) for p in pairs} == {(first, second), (second, first)}
        assert all(p["difference"] == pytest.approx(p["a_score"] - p["b_score"]) for p in pairs)
        assert play_pairwise(ladder, top=2, deals=2) == 0
        assert "one agent against 2 copies of another" in ladder.table()


def test_pairwise_matches_stop_when_the_sprt_decides(tmp_path):
    from blackout_training.evaluation.sequential import SPRT

    with _ladder(tmp_path / "l.db", deals=2, hands=True) as ladder:
        play(ladder)
        assert play_pairwise(ladder, top=3, deals=60, sprt=SPRT(0, 1)) == 6
        decided = [p for p in ladder.pairwise() if p["sprt"]["decision"] is not None]
        assert decided and all(p["deals"] == p["sprt"]["deals"] < 60 for p in decided)
        assert "(SPRT: " in ladder.table()
        undecided = 6 - len(decided)
        assert play_pairwise(ladder, top=3, deals=60, sprt=SPRT(0, 1)) == undecided
        assert play_pairwise(ladder, top=3, deals=60, sprt=SPRT(3, 4)) == 6  # other hypotheses: another question


def test_every_agent_gets_its_obvious_moves_score_once_per_suite(tmp_path):
    from blackout_training.evaluation.ladder import score_positions

    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "positions:\n- {id: ace, players: 3, dealer: 2, hands: [2C, 3C, AS], turned: 5S, actions: b1 b1, acceptable: b1,"
        " reason: the ace of trump takes the only trick}\n"
    )
    with _ladder(tmp_path / "l.db", deals=1) as ladder:
        assert score_positions(ladder, suite) == 3
        scores = {s.name: s.obvious for s in ladder.standings()}
        assert scores["heuristic"] == (1, 1) and scores["search:samples=4"] == (1, 1)
        assert scores["random"][1] == 1
        assert score_positions(ladder, suite) == 0
        assert "obvious" in ladder.table() and "1/1" in ladder.markdown()


# ------------------------------------------------------------------ bad files and bad input
def test_a_file_that_is_not_sqlite_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("my notes\n")
    before = _files(path)
    with pytest.raises(LadderError, match="not a ladder file .* left untouched"):
        open_ladder(path)
    assert _files(path) == before


def test_another_programs_database_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE customers (name TEXT)")
    before = _files(path)
    with pytest.raises(LadderError, match="another program"):
        open_ladder(path)
    assert main(["ladder", "run", str(path), "--no-progress"]) == 2
    assert _files(path) == before
    assert os.listdir(tmp_path) == ["other.db"]  # not even a -wal or -shm beside it


def test_a_corrupt_ladder_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / "l.db"
    with _ladder(path, deals=1) as ladder:
        play(ladder)
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    page = 4096
    data[page * 2 : page * 2 + 64] = b"\xff" * 64  # a torn page in the middle of the file
    path.write_bytes(bytes(data))
    before = _files(path)
    with pytest.raises(LadderError, match="corrupt|damaged"):
        open_ladder(path)
    assert _files(path) == before


def test_a_ladder_of_another_schema_version_is_refused(tmp_path):
    path = tmp_path / "l.db"
    _ladder(path, deals=1).close()
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(LADDER_SCHEMA + 1),))
    db.close()
    before = _files(path)
    with pytest.raises(LadderError, match=f"schema version {LADDER_SCHEMA + 1}"):
        open_ladder(path)
    assert _files(path) == before


def test_an_unknown_agent_creates_no_file(tmp_path, capsys):
    path = tmp_path / "l.db"
    assert main(["ladder", "run", str(path), "--agents", "random", "heuristic", "no-such-bot", "--players", "3"]) == 2
    assert "no-such-bot" in capsys.readouterr().err
    assert not path.exists()


def test_an_unknown_agent_is_not_added(tmp_path):
    path = tmp_path / "l.db"
    with _ladder(path, deals=1) as ladder:
        with pytest.raises(LadderError, match="no-such-bot"):
            ladder.add_agent("no-such-bot")
        assert [a.name for a in ladder.agents()] == AGENTS


def test_a_checkpoint_for_other_rules_is_refused(tmp_path):
    with _ladder(tmp_path / "l.db", deals=1) as ladder:
        with pytest.raises(LadderError, match="ppo-standard"):
            ladder.add_agent("ppo-standard")  # the 4-player specialist at a 3-player ladder
        assert len(ladder.agents()) == 3


def test_a_checkpoint_that_changed_since_it_joined_is_refused(tmp_path):
    from blackout_training.agents.policy_net import SHIPPED_CHECKPOINT

    checkpoint = tmp_path / "agent.pt"
    checkpoint.write_bytes(SHIPPED_CHECKPOINT.read_bytes())
    with _ladder(tmp_path / "l.db", deals=1) as ladder:
        ladder.add_agent(f"ppo:{checkpoint}", name="mine")
        checkpoint.write_bytes((SHIPPED_CHECKPOINT.parent / "ppo_generalist_bots.pt").read_bytes())
        with pytest.raises(LadderError, match="'mine': its checkpoint changed"):
            play(ladder)
        assert ladder.games_played() == 0


def test_resuming_with_other_settings_is_refused(tmp_path, capsys):
    path = tmp_path / "l.db"
    _ladder(path, deals=1).close()
    before = _files(path)
    assert main(["ladder", "run", str(path), "--seed", "5"]) == 2
    assert "--seed 5 differs" in capsys.readouterr().err
    assert main(["ladder", "run", str(path), "--agents", "random", "heuristic", "search"]) == 2
    assert "ladder add" in capsys.readouterr().err
    assert main(["ladder", "run", str(path), "--players", "4"]) == 2
    assert "differs from the ladder's rules" in capsys.readouterr().err
    assert _files(path) == before


def test_too_few_agents_for_a_table_is_refused(tmp_path, capsys):
    assert main(["ladder", "run", str(tmp_path / "l.db"), "--agents", "random", "heuristic", "search"]) == 2
    assert "needs at least 4 distinct agents" in capsys.readouterr().err
    assert not (tmp_path / "l.db").exists()


# ------------------------------------------------------------------ the command
def test_the_command_runs_adds_shows_and_exports(tmp_path, capsys):
    path = tmp_path / "l.db"
    assert main(["ladder", "run", str(path), "--agents", "random", "heuristic", "search:samples=2",
                 "--rules", "short", "--players", "3", "--deals", "2", "--hands", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "played 6 games" in out and "single hands" in out
    assert main(["ladder", "add", str(path), "search:samples=4", "--no-progress"]) == 0
    assert "played 18 games of search:samples=4's tables" in capsys.readouterr().out
    assert main(["ladder", "show", str(path)]) == 0
    shown = capsys.readouterr().out
    assert shown.count("\n") >= 6 and "search:samples=4" in shown
    assert main(["ladder", "export", str(path), "--out", str(tmp_path / "out")]) == 0
    exported = json.loads((tmp_path / "out" / "ladder.json").read_text())
    assert exported["games"] == 24 and len(exported["standings"]) == 4
    assert [s["rank"] for s in exported["standings"]] == [1, 2, 3, 4]
    markdown = (tmp_path / "out" / "ladder.md").read_text()
    assert markdown.count("| `") == 4
    # More deals resume: only the new deals are played.
    assert main(["ladder", "run", str(path), "--deals", "3", "--no-progress"]) == 0
    assert "played 12 games" in capsys.readouterr().out


def test_export_writes_both_files_or_neither(tmp_path, capsys):
    path = tmp_path / "l.db"
    with _ladder(path, deals=1) as ladder:
        play(ladder)
    out = tmp_path / "out"
    (out / "ladder.json").mkdir(parents=True)
    (out / "ladder.md").write_text("mine\n")
    assert main(["ladder", "export", str(path), "--out", str(out)]) == 2
    assert "ladder.json' is in the way: it is not a file; nothing was written" in capsys.readouterr().err
    assert (out / "ladder.md").read_text() == "mine\n"


def test_the_ladder_file_is_in_wal_mode(tmp_path):
    _ladder(tmp_path / "l.db", deals=1).close()
    with sqlite3.connect(tmp_path / "l.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_new_ladder_refuses_a_path_that_exists(tmp_path):
    path = tmp_path / "l.db"
    path.write_text("")
    with pytest.raises(LadderError, match="exists already"):
        create_ladder(path, THREE)
    assert path.read_text() == ""
    assert os.listdir(tmp_path) == ["l.db"]


@pytest.mark.parametrize(
    "edit, message",
    [("DELETE FROM meta WHERE key = 'seed'", "no setting 'seed'"),
     ("UPDATE meta SET value = 'abc' WHERE key = 'seed'", "its settings do not read"),
     ("UPDATE meta SET value = '{' WHERE key = 'rules'", "its settings do not read")],
)
def test_a_ladder_with_damaged_settings_is_refused_and_left_untouched(tmp_path, edit, message):
    path = tmp_path / "l.db"
    _ladder(path, deals=1).close()
    with sqlite3.connect(path) as db:
        db.execute(edit)
    before = _files(path)
    with pytest.raises(LadderError, match=f"damaged ladder \\({message}"):
        open_ladder(path)
    assert _files(path) == before


@pytest.mark.parametrize("edit", [
    "UPDATE games SET seats = 'not json' WHERE id = 1",
    "UPDATE games SET seats = '[1, 2, 99]' WHERE id = 1",  # an agent the ladder does not have
    "UPDATE games SET totals = '[1]' WHERE id = 1",
    "UPDATE games SET totals = '{}' WHERE id = 1",
])
def test_a_ladder_with_a_damaged_game_is_one_line_naming_it(tmp_path, capsys, edit):
    path = tmp_path / "l.db"
    with _ladder(path, deals=1) as ladder:
        play(ladder)
    with sqlite3.connect(path) as db:
        db.execute(edit)
    assert main(["ladder", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a damaged ladder: game 1's seats or totals are not 3 of its agents and 3 scores" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_ladder_under_a_file_is_refused_in_one_line_leaving_nothing(tmp_path, capsys):
    (tmp_path / "afile").write_text("x")
    path = tmp_path / "afile" / "l.db"
    with pytest.raises(LadderError, match="cannot be created: its folder cannot be made"):
        create_ladder(path, THREE)
    assert main(["ladder", "run", str(path), "--agents", *AGENTS, "--players", "3", "--deals", "1"]) == 2
    assert "cannot be created" in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["afile"]


@pytest.fixture
def ladder_with_a_lost_checkpoint(tmp_path):
    """A one-deal ladder (the three agents, a padded spec, and 'mine', whose checkpoint was deleted since it joined)."""
    from blackout_training.agents.policy_net import SHIPPED_CHECKPOINT

    checkpoint = tmp_path / "agent.pt"
    checkpoint.write_bytes(SHIPPED_CHECKPOINT.read_bytes())
    path = tmp_path / "ladder" / "l.db"
    path.parent.mkdir()
    with _ladder(path, deals=1) as ladder:
        ladder.add_agent(f"ppo:{checkpoint}", name="mine")
        assert ladder.add_agent(" random:seed=7").name == "random:seed=7"  # a padded spec is named stripped
    checkpoint.unlink()
    return path


def test_a_run_whose_agent_no_longer_loads_changes_nothing_its_deals_included(ladder_with_a_lost_checkpoint, capsys):
    path = ladder_with_a_lost_checkpoint
    before = _files(path)
    assert main(["ladder", "run", str(path), "--deals", "2"]) == 2
    err = capsys.readouterr().err
    assert "agent.pt" in err and "Traceback" not in err
    assert _files(path) == before
    with open_ladder(path, read_only=True) as ladder:
        assert ladder.deals == 1 and ladder.games_played() == 0
        with pytest.raises(LadderError, match="agent.pt"):
            play(ladder)


@pytest.mark.parametrize("name", ["", "  ", " mine"])
def test_a_blank_or_padded_agent_name_is_refused(tmp_path, name):
    with _ladder(tmp_path / "l.db", deals=1) as ladder:
        with pytest.raises(LadderError, match="agent name"):
            ladder.add_agent("random:seed=9", name=name)
        assert len(ladder.agents()) == 3


def test_add_with_an_agent_that_no_longer_loads_stores_nothing(ladder_with_a_lost_checkpoint, capsys):
    path = ladder_with_a_lost_checkpoint
    before = _files(path)
    assert main(["ladder", "add", str(path), "random:seed=8"]) == 2
    assert "agent.pt" in capsys.readouterr().err
    assert _files(path) == before


def test_a_new_ladders_agents_are_in_the_file_from_the_moment_it_appears(tmp_path):
    with create_ladder(tmp_path / "l.db", THREE, deals=1, agents=AGENTS) as ladder:
        assert [row.name for row in ladder.agents()] == AGENTS and ladder.games_played() == 0
    with pytest.raises(LadderError, match="agent 'nosuch'"):
        create_ladder(tmp_path / "m.db", THREE, agents=["random", "nosuch"])
    assert not [name for name in os.listdir(tmp_path) if "m.db" in name]  # nothing of it, no temporary file


def test_add_to_a_ladder_of_too_few_agents_stores_nothing(tmp_path, capsys):
    path = tmp_path / "l.db"
    create_ladder(path, THREE, deals=1, agents=["random"]).close()  # (a file made before agents came with it)
    before = _files(path)
    assert main(["ladder", "add", str(path), "heuristic", "--no-progress"]) == 2
    assert "would have 2: nothing was added" in capsys.readouterr().err
    assert _files(path) == before


def test_fewer_deals_than_the_ladders_are_refused(tmp_path, capsys):
    path = tmp_path / "l.db"
    _ladder(path, deals=2).close()
    before = _files(path)
    assert main(["ladder", "run", str(path), "--deals", "1", "--no-progress"]) == 2
    assert "deals 1 is fewer than the ladder's 2" in capsys.readouterr().err
    assert _files(path) == before


def test_a_relative_checkpoint_path_is_stored_absolute_and_the_ladder_runs_from_another_folder(tmp_path, monkeypatch):
    from blackout_training.agents.policy_net import SHIPPED_CHECKPOINT

    (tmp_path / "agent.pt").write_bytes(SHIPPED_CHECKPOINT.read_bytes())
    monkeypatch.chdir(tmp_path)
    with _ladder(tmp_path / "l.db", deals=1) as ladder:
        row = ladder.add_agent("ppo:agent.pt")
        assert row.spec == row.name == f"ppo:{tmp_path / 'agent.pt'}"
        assert ladder.add_agent("ppo:agent.pt") == row  # the same spec again is the same agent
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    with open_ladder(tmp_path / "l.db") as ladder:
        ladder.check_agents()


def test_a_ladder_that_cannot_be_written_is_one_line_and_leaves_no_file_beside_it(tmp_path, monkeypatch, capsys):
    path = tmp_path / "l.db"
    _ladder(path, deals=1).close()
    before = _files(path)
    monkeypatch.setattr(os, "access", lambda where, mode: Path(where) != path)  # as a read-only file reads
    assert main(["ladder", "run", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "cannot be written (its file is read-only)" in err and "Traceback" not in err
    assert _files(path) == before


def test_a_database_whose_meta_table_is_another_programs_is_refused_as_such(tmp_path):
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (id INTEGER, payload TEXT)")
    with pytest.raises(LadderError, match="an SQLite database of another program"):
        open_ladder(path)


def test_names_that_hold_markdown_stay_in_their_cell(tmp_path):
    with _ladder(tmp_path / "l.db", deals=1) as ladder:
        ladder.add_agent("random:seed=3", name="my|bot`x")
        line = next(line for line in ladder.markdown().splitlines() if "my" in line)
    assert "`` my\\|bot`x ``" in line and line.count(" | ") == 9


def test_an_agent_added_by_a_relative_spec_before_files_were_stored_absolute_is_found_again(tmp_path, monkeypatch):
    from blackout_training.agents.policy_net import SHIPPED_CHECKPOINT

    (tmp_path / "agent.pt").write_bytes(SHIPPED_CHECKPOINT.read_bytes())
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "l.db"
    _ladder(path, deals=1).close()
    with sqlite3.connect(path) as db:  # as an older version stored it: the spec as typed
        db.execute("INSERT INTO agents (name, spec, version, checkpoint_sha256, added) VALUES (?, ?, ?, ?, ?)",
                   ("ppo:agent.pt", "ppo:agent.pt", "0.1.0", checkpoint_sha256("ppo:agent.pt"), "then"))
    with open_ladder(path) as ladder:
        assert not ladder.is_new("ppo:agent.pt")
        assert ladder.add_agent("ppo:agent.pt").name == "ppo:agent.pt" and len(ladder.agents()) == 4


def test_two_specs_of_one_file_are_one_agent_twice(tmp_path, monkeypatch, capsys):
    from blackout_training.agents.policy_net import SHIPPED_CHECKPOINT

    (tmp_path / "agent.pt").write_bytes(SHIPPED_CHECKPOINT.read_bytes())
    monkeypatch.chdir(tmp_path)
    args = ["ladder", "run", "m.db", "--agents", "random", "heuristic", "ppo:agent.pt", "ppo:./agent.pt", "--rules", "short"]
    assert main(args) == 2
    assert "names an agent twice" in capsys.readouterr().err and not (tmp_path / "m.db").exists()


def test_remove_takes_an_agent_off_with_the_games_of_its_tables_and_nothing_else(tmp_path, capsys):
    path = tmp_path / "l.db"
    with _ladder(path, deals=2) as ladder:
        play(ladder)
        kept_games = _games(path)
        kept_ratings = ladder.ratings()
        newcomer = ladder.add_agent("search:samples=2")
        play(ladder, with_agent=newcomer.id)
        play_pairwise(ladder, 2, 2, 1, False)
    assert main(["ladder", "remove", str(path), "search:samples=2"]) == 0
    assert "removed search:samples=2 and the 18 games of its tables" in capsys.readouterr().out
    assert _games(path) == kept_games  # the three-agent ladder's games, as they were
    with open_ladder(path, read_only=True) as ladder:
        assert [row.name for row in ladder.agents()] == AGENTS
        assert ladder.ratings() == kept_ratings and ladder.pending() == []
        db = ladder.db
        assert db.execute("SELECT COUNT(*) FROM hands WHERE agent = ?", (newcomer.id,)).fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM pairwise WHERE a = ? OR b = ?", (newcomer.id,) * 2).fetchone() == (0,)
        assert db.execute("SELECT COUNT(*) FROM ratings WHERE agent = ?", (newcomer.id,)).fetchone() == (0,)
    # Now three agents for three seats: one more removal is refused, the file untouched.
    def data() -> dict[str, bytes]:  # (an empty WAL file that a reader left and a closing writer removed is no data)
        return {name: content for name, content in _files(path).items() if content or not name.endswith("-wal")}

    before = data()
    assert main(["ladder", "remove", str(path), "random"]) == 2
    assert "fewer than a table's 3 seats" in capsys.readouterr().err
    assert main(["ladder", "remove", str(path), "nobody"]) == 2
    assert "no agent 'nobody'" in capsys.readouterr().err
    assert data() == before


def test_an_agent_removed_while_a_run_plays_leaves_a_sound_ladder(tmp_path):
    path = tmp_path / "l.db"
    with _ladder(path, deals=1, agents=[*AGENTS, "random:seed=5"]) as runner:
        other = open_ladder(path)
        removed = []

        def remove_once(done, total):  # another process swaps an agent for a new one once the run has begun
            if not removed:
                removed.append(other.remove_agent("random:seed=5"))
                removed.append(other.add_agent("random:seed=9"))

        play(runner, on_unit=remove_once)
        other.close()
        assert [row.name for row in runner.agents()] == [*AGENTS, "random:seed=9"]
        assert removed[1].id != removed[0].id  # never a removed agent's id
        newcomer = str(removed[1].id)
        assert not runner.db.execute("SELECT COUNT(*) FROM games WHERE ',' || table_key || ',' LIKE ?",
                                     (f"%,{newcomer},%",)).fetchone()[0]  # the old agent's games not stored as its
        runner.standings()  # every stored game reads: none of the removed agent's was stored after it left
        assert len(runner.pending()) == 3  # the newcomer's tables, for a run of its own


def test_an_agent_whose_checkpoint_is_lost_can_be_removed_and_the_ladder_runs_again(ladder_with_a_lost_checkpoint, capsys):
    path = ladder_with_a_lost_checkpoint
    assert main(["ladder", "run", str(path), "--no-progress"]) == 2
    assert f"blackout ladder remove {path} mine" in capsys.readouterr().err
    assert main(["ladder", "remove", str(path), "mine"]) == 0
    assert main(["ladder", "run", str(path), "--no-progress"]) == 0
