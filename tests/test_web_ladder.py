"""The read-only Ladder page: the leaderboard from the file, escaped, never written, a bad file refused at start."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2", reason="Starlette's test client needs httpx2 (the dev extra)")

from blackout_training.evaluation.ladder import LadderError, create_ladder, play  # noqa: E402
from blackout_training.web.ladder_page import ladder_routes  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from blackout_env.game.rules import Rules  # noqa: E402


@pytest.fixture
def ladder_file(tmp_path):
    path = tmp_path / "l.db"
    with create_ladder(path, Rules.preset("short").replace(num_players=3), deals=2, seed=0, hands=True) as ladder:
        for spec in ("random", "heuristic"):
            ladder.add_agent(spec)
        ladder.add_agent("search:samples=2", name="<b>bold</b>")
        play(ladder)
    return path


def test_the_page_shows_the_leaderboard_with_every_name_escaped(ladder_file):
    before = ladder_file.read_bytes()
    with TestClient(Starlette(routes=ladder_routes(ladder_file))) as client:
        page = client.get("/ladder")
        assert page.status_code == 200
        assert "&lt;b&gt;bold&lt;/b&gt;" in page.text and "<b>bold</b>" not in page.text
        assert page.text.count("<tr>") == 1 + 3  # the header and one row per agent
        assert "<script" not in page.text
        data = client.get("/ladder.json").json()
        assert data["games"] == 6 and [s["rank"] for s in data["standings"]] == [1, 2, 3]
    assert ladder_file.read_bytes() == before


def test_a_file_that_is_not_a_ladder_stops_the_server_before_it_listens(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("notes")
    with pytest.raises(LadderError, match="not a ladder file"):
        ladder_routes(path)


def test_a_ladder_damaged_after_the_start_answers_503(ladder_file):
    routes = ladder_routes(ladder_file)
    for leftover in ladder_file.parent.glob("l.db*"):
        leftover.unlink()
    ladder_file.write_text("replaced")
    with TestClient(Starlette(routes=routes)) as client:
        assert client.get("/ladder").status_code == 503
        assert "not a ladder file" in client.get("/ladder.json").json()["error"]


def test_blackout_serve_mounts_the_ladder_beside_the_table_and_refuses_a_bad_file(ladder_file, tmp_path, monkeypatch,
                                                                                 capsys):
    import uvicorn
    from blackout_training.cli import main
    from blackout_training.web.server import create_app

    with TestClient(create_app(tmp_path / "saves", ladder=ladder_file), base_url="http://127.0.0.1:8000") as client:
        assert client.get("/ladder").status_code == 200 and client.get("/").status_code == 200
    started = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: started.append(app))
    monkeypatch.setattr("blackout_training.web.server.check_listen", lambda host, port: None)  # port 8000 may be taken
    assert main(["serve", "--saves", str(tmp_path / "saves"), "--ladder", str(ladder_file)]) == 0 and started
    notes = tmp_path / "notes.db"
    notes.write_text("notes")
    assert main(["serve", "--saves", str(tmp_path / "saves"), "--ladder", str(notes)]) == 2
    assert "not a ladder file" in capsys.readouterr().err and len(started) == 1
