"""`blackout serve` is safe to share (docs/web.md, Security and limits): each attack a shared server meets.

No message makes the server open a path; a page of another origin cannot open the WebSocket; a table is
listed only to the browsers that hold a seat there; every request is bounded and refused with a message,
the connection kept and the game unchanged; names are per viewer; a stale token says so; the log has one
line per event, never a traceback for an ordinary disconnect. A protocol fuzz test (Hypothesis) sends
messages of every shape to a live table.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2", reason="Starlette's test client needs httpx2 (the dev extra)")

from blackout_training.web.server import (  # noqa: E402
    TYPES,
    Limits,
    create_app,
    host_allowed,
    normalize_origin,
    origin_allowed,
)
from blackout_training.web.table import BOT_BUDGET_LIMITS, Table  # noqa: E402
from file_audit import files_opened  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402
from starlette.websockets import WebSocketDisconnect  # noqa: E402
from test_web import MACHINE_SPEED, Client, connect, new_game  # noqa: E402

from blackout_env import BlackoutGame, Rules  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture
def saves(tmp_path: Path) -> Path:
    return tmp_path / "saves"


@pytest.fixture
def app(saves: Path):
    with TestClient(create_app(saves, bot_delay_ms=0, limits=MACHINE_SPEED)) as client:
        yield client


def log_text(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(record.getMessage() for record in caplog.records)


# ------------------------------------------------------------------------------- no path from a client
def test_no_message_makes_the_server_open_a_path(app, saves, tmp_path):
    from blackout_training.evaluation.tournament import evaluate

    outside = tmp_path / "elsewhere.jsonl"  # a valid one-game log outside the saves folder
    evaluate(["random", "heuristic"], rules="short", deals=1, seed=1, game_log=outside, progress=False)
    outside.write_text(outside.read_text().splitlines()[0] + "\n")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    payloads = [str(outside), "/etc/passwd", "etc/passwd", "../../etc/passwd", "~/.bashrc", "/dev/zero",
                str(fifo), "saves/../elsewhere.jsonl", str(outside.relative_to(tmp_path))]
    with connect(app) as socket_:
        client = Client(socket_)
        client.send(type="replay", content="{warm up the imports")
        client.error()
        for payload in payloads:
            for message in ({"type": "replay", "content": payload}, {"type": "replay", "game": payload},
                            {"type": "join", "table": payload}):
                with files_opened() as opened:
                    client.send(**message)
                    error = client.error()
                assert error["code"] in ("bad_save", "no_table"), (message, error)
                assert "No such file" not in error["message"] and "root:" not in error["message"]
                assert not opened, f"{message} opened {opened}"


# ------------------------------------------------------------------------------------- the Origin check
@pytest.mark.parametrize("origin, host, allowed, verdict", [
    (None, "localhost:8000", (), True),                                   # not a browser
    ("http://localhost:8000", "localhost:8000", (), True),                # the page itself
    ("http://127.0.0.1:8000", "127.0.0.1:8000", (), True),
    ("http://[::1]:8000", "[::1]:8000", (), True),
    ("http://192.168.1.5:8000", "192.168.1.5:8000", (), True),            # on a LAN, by address
    ("http://evil.example", "localhost:8000", (), False),                 # another site
    ("http://localhost:9999", "localhost:8000", (), False),               # another port
    ("null", "localhost:8000", (), False),                                # a sandboxed frame, a file://
    ("http://rebound.example:8000", "rebound.example:8000", (), False),   # DNS rebinding: a name, not allowed
    ("https://cards.example.org", "cards.example.org", ("https://cards.example.org",), True),  # a proxy
    ("https://cards.example.org", "127.0.0.1:8000", ("https://cards.example.org",), True),
    ("http://cards.example.org", "cards.example.org", ("https://cards.example.org",), False),  # scheme differs
])
def test_only_the_pages_own_origin_or_an_allowed_one_may_connect(origin, host, allowed, verdict):
    assert origin_allowed(origin, host, frozenset(allowed)) is verdict


def test_a_foreign_origin_is_refused_before_any_message(saves, caplog):
    with TestClient(create_app(saves)) as client:
        for origin in ("http://evil.example", "http://testserver"):  # the test client's host is a name
            with pytest.raises(WebSocketDisconnect), client.websocket_connect("/ws", headers={"origin": origin}):
                pass
        assert "refused a WebSocket from the page of 'http://evil.example'" in log_text(caplog)
    with TestClient(create_app(saves, allow_origins=["http://testserver"])) as client:
        with client.websocket_connect("/ws", headers={"origin": "http://testserver"}) as socket_:
            assert socket_.receive_json()["type"] == "hello"


def test_http_answers_only_its_own_host_names_with_headers_that_keep_the_page_and_its_link_private(saves):
    with TestClient(create_app(saves, allow_origins=["https://cards.example.org"]), base_url="http://localhost") as client:
        for host in ("localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000", "cards.example.org"):
            page = client.get("/", headers={"host": host})
            assert page.status_code == 200, host
        for path in ("/", "/static/app.js", "/health"):
            headers = client.get(path).headers
            assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
            assert headers["referrer-policy"] == "no-referrer" and "frame-ancestors 'none'" in headers["content-security-policy"]
        assert client.get("/static/app.js").headers["cache-control"] == "no-cache"
        # A page of another site whose name resolves here (DNS rebinding) reads nothing, not even /health.
        refused = client.get("/health", headers={"host": "evil.example:8000", "origin": "http://evil.example:8000"})
        assert refused.status_code == 421 and "--allow-origin" in refused.text and '"tables"' not in refused.text
    assert oct(saves.stat().st_mode & 0o777) == oct(0o700)  # its file names are the tables' ids


@pytest.mark.parametrize("host, allowed, verdict", [
    ("cards.example.org", ["https://cards.example.org:8443"], True),  # a proxy that sends the name without its port
    ("cards.example.org:8443", ["https://cards.example.org:8443"], True),
    ("blackout:8000", ["http://blackout:8000"], True),  # a proxy in front of a container named blackout
    ("blackout:8000", [], False),
    ("[::1]:8000", [], True),
    ("[::1", [], False),  # malformed: refused, not a server error
    ("evil.example", ["https://cards.example.org"], False),
])
def test_the_hosts_http_answers(host, allowed, verdict):
    assert host_allowed(host, frozenset(normalize_origin(origin) for origin in allowed)) is verdict


def test_a_refused_start_makes_no_saves_folder(saves):
    with pytest.raises(ValueError, match="bot_delay_ms"):
        create_app(saves, bot_delay_ms=-1)
    assert not saves.exists()


def test_bad_allow_origins_are_refused(saves):
    for origin in ("cards.example.org", "ftp://x", "https://x/path", "https://x:99999"):
        with pytest.raises(ValueError, match="http\\(s\\)://host"):
            create_app(saves, allow_origins=[origin])


# ---------------------------------------------------------------------------------------- private tables
def test_a_table_is_listed_only_to_the_browsers_holding_a_seat_there(app):
    with connect(app) as a, connect(app) as b:
        host, joined = new_game(a, seats=["you", "open", "heuristic", "heuristic"])
        assert len(joined["table"]) >= 22  # 128 random bits, urlsafe
        stranger = Client(b)
        for tables in ([], [{"table": joined["table"], "token": "guessed"}]):
            stranger.send(type="list", tables=tables)
            assert stranger.until(lambda m: m["type"] == "games")["games"] == []
        host.send(type="list", tables=[{"table": joined["table"], "token": joined["token"]}])
        listed = host.until(lambda m: m["type"] == "games")["games"]
        assert [(g["id"], g["seat"], g["host"]) for g in listed] == [(joined["table"], 0, True)]
        stranger.send(type="list", tables="everything")
        assert stranger.error()["code"] == "bad_message"


def test_no_one_at_a_table_of_people_knows_its_deal(app, tmp_path):
    # The creator may not choose the seed of a table with open seats (it would know the guests' cards) ...
    with connect(app) as a:
        host = Client(a)
        host.send(type="new", rules="short", seed=12345, seats=["you", "open", "heuristic", "heuristic"])
        assert "seed: a table with open seats" in host.error()["message"]
    # ... and a drawn seed is too large to find by trying every one against the hand a player sees
    # (2**31 fell in minutes); the bots draw from a seed of their own.
    drawn = [Table.create(Rules.preset("short"), "short", ["you", "open", "random", "random"], saves=tmp_path)[0]
             for _ in range(2)]
    for table in drawn:
        assert table.game.decks != BlackoutGame(Rules.preset("short"), seed=table.bot_seed).decks
    assert drawn[0].game.decks != drawn[1].game.decks
    seeded, _ = Table.create(Rules.preset("short"), "short", ["you", "random", "random", "random"], saves=tmp_path, seed=7)
    assert seeded.game.decks == BlackoutGame(Rules.preset("short"), seed=7).decks and seeded.bot_seed == 7


def test_the_link_lets_a_friend_take_a_seat_until_the_host_closes_the_lobby(app):
    with connect(app) as a, connect(app) as b, connect(app) as c:
        host, joined = new_game(a, seats=["you", "open", "open", "heuristic"])
        friend = Client(b)
        friend.send(type="join", table=joined["table"], name="Bob")
        assert friend.until(lambda m: m["type"] == "joined")["seat"] == 1
        friend.send(type="control", lobby_open=False)
        assert friend.error()["code"] == "forbidden"  # the host closes it
        host.send(type="control", lobby_open=False)
        assert host.until(lambda m: m["type"] == "state" and m["lobby_open"] is False)
        late = Client(c)
        late.send(type="join", table=joined["table"])
        assert late.until(lambda m: m["type"] == "joined")["seat"] is None  # seat 2 stays open: a spectator
        host.send(type="start")
        started = host.until(lambda m: m["type"] == "state" and m["status"] != "lobby")
        assert [s["kind"] for s in started["seats"]] == ["person", "person", "bot", "bot"]


def test_a_stale_or_forged_token_says_the_seat_was_not_taken(app, saves):
    with connect(app) as a, connect(app) as b:
        _, joined = new_game(a, seats=["you", "open", "heuristic", "heuristic"])
        before = (saves / f"{joined['table']}.json").read_bytes()
        other = Client(b)
        other.send(type="join", table=joined["table"], token="forged-or-from-an-older-game")
        error = other.error()
        assert error["code"] == "bad_token" and "no seat was taken" in error["message"]
        assert "link again" in error["message"]
        other.send(type="act", action=52)
        assert other.error()["code"] == "no_table"  # not at the table at all
        assert (saves / f"{joined['table']}.json").read_bytes() == before


# ---------------------------------------------------------------------------------------- names per viewer
def test_each_seat_has_one_name_and_no_page_is_told_another_is_you(app):
    with connect(app) as a, connect(app) as b:
        host, joined = new_game(a, seats=["you", "open", "heuristic", "heuristic"], name="Ann")
        guest = Client(b)
        guest.send(type="join", table=joined["table"], name="Bob")
        guest.until(lambda m: m["type"] == "joined")
        guest.send(type="name", name="  Robert   the  Second ")
        renamed = host.until(lambda m: m["type"] == "state" and m["seats"][1]["name"] == "P1 Robert the Second")
        assert [s["name"] for s in renamed["seats"]] == ["P0 Ann", "P1 Robert the Second", "P2 heuristic",
                                                         "P3 heuristic"]
        for bad, words in (("x" * 25, "1 to 24 characters"), ("", "1 to 24"), ("a\x07b", "control"), (3, "text")):
            guest.send(type="name", name=bad)
            assert words in guest.error()["message"]
        host.send(type="start")
        host.until(lambda m: m["type"] == "state" and m["status"] == "playing")
        guest.send(type="name", name="Later")
        assert guest.error()["code"] == "forbidden"  # names are chosen in the lobby
        for client in (host, guest):
            names = {seat["name"] for message in client.received if message["type"] == "state"
                     for seat in message["seats"]}
            assert not any(name.endswith(" you") for name in names)


def test_an_older_save_that_calls_a_person_you_loads_with_a_neutral_name(saves):
    from blackout_training.play.session import new_session, write_save

    saves.mkdir(parents=True)
    write_save(saves / "fromterminal.json", new_session(Rules.preset("short"), humans=1, bots="heuristic", seed=4))
    table = Table.load("fromterminal", saves)
    assert [s.name for s in table.seats][0] == "P0 open"


def test_a_save_of_the_first_web_version_loads_with_neutral_names_and_an_open_lobby(saves):
    table, _ = Table.create(Rules.preset("short"), "short", ["you", "open", "heuristic", "heuristic"], saves=saves)
    path = saves / f"{table.table_id}.json"
    data = json.loads(path.read_text())
    del data["web"]["lobby_open"]  # what version 1 wrote: no lobby flag, the creator named "you"
    data["seats"][0]["name"], data["seats"][1]["name"] = "P0 you", "P1 open"
    path.write_text(json.dumps(data))
    loaded = Table.load(table.table_id, saves)
    assert [s.name for s in loaded.seats][:2] == ["P0 player", "P1 open"] and loaded.lobby_open
    assert loaded.game == table.game


# ------------------------------------------------------------------------------------------------- limits
def test_frames_too_long_too_deep_binary_or_empty_are_refused_and_the_socket_lives(app, saves):
    with connect(app) as socket_:
        client, joined = new_game(socket_, seats=["heuristic", "you", "heuristic", "heuristic"])
        state = client.until(lambda m: m["type"] == "state" and m["your_turn"])
        before = (saves / f"{joined['table']}.json").read_bytes()
        for frame, words in [
            ("[" * 100_000, "nest"), ("{\"a\":" * 5000 + "1" + "}" * 5000, "nest"),
            (json.dumps({"type": "list", "tables": [[[[[[[1]]]]]]]}), "nest"),
            ("x" * 2_000_001, "too long"), ("", "JSON object"), ("\ud800", "JSON object"),
        ]:
            socket_.send_text(frame)
            assert words in client.error()["message"]
        socket_.send_bytes(b"\x00\xff{\"type\": \"act\"}")
        assert "binary frames" in client.error()["message"]
        assert (saves / f"{joined['table']}.json").read_bytes() == before
        client.play_first_legal(state)
        assert client.until(lambda m: m["type"] == "state" and m["move"] > state["move"])


def test_a_flood_is_cut_to_the_rate_limit_and_the_connection_kept(saves, caplog):
    limits = Limits(messages_per_second=5, message_burst=10)
    with TestClient(create_app(saves, limits=limits)) as client, connect(client) as socket_:
        flooder = Client(socket_)
        for _ in range(40):
            flooder.send(type="list", tables=[])
        answers = [flooder.next() for _ in range(40)]  # every message is answered: games, or the refusal
        refused = [a for a in answers if a["type"] == "error" and a["code"] == "limit"]
        assert 25 <= len(refused) <= 30 and "at most 5 a second" in refused[0]["message"]
        time.sleep(0.5)
        flooder.send(type="list", tables=[])
        assert flooder.until(lambda m: m["type"] in ("games", "error"))["type"] == "games"
    assert sum("over 5 a second" in record.getMessage() for record in caplog.records) == 1  # once a second


def test_tables_are_bounded_per_connection_and_in_all(saves):
    limits = Limits(messages_per_second=1000, message_burst=1000, tables_per_connection=2, max_tables=2)
    with TestClient(create_app(saves, limits=limits)) as client:
        with connect(client) as a:
            first = Client(a)
            for _ in range(2):
                first.send(type="new", rules="short", seats=["you", "open", "random", "random"])
                first.until(lambda m: m["type"] == "joined")
            first.send(type="new", rules="short", seats=["you", "open", "random", "random"])
            assert "the most one may" in first.error()["message"]
            with connect(client) as b, connect(client) as c:
                second, third = Client(b), Client(c)
                second.send(type="new", rules="short", seats=["you", "open", "random", "random"])
                # Room is made by dropping the first table (nobody there now): the first's second table and this.
                second.until(lambda m: m["type"] == "joined")
                third.send(type="new", rules="short", seats=["you", "open", "random", "random"])
                assert "server is full" in third.error()["message"]
        with connect(client) as d:  # everybody left: their tables wait on disk, and room is made
            fourth = Client(d)
            fourth.send(type="new", rules="short", seats=["you", "open", "random", "random"])
            assert fourth.until(lambda m: m["type"] in ("joined", "error"))["type"] == "joined"


@pytest.mark.parametrize("spec", ["ismcts:simulations=1000000000", "ppo+search:simulations=2001",
                                  "ismcts:time_ms=60000", "search:samples=100000", "search:time_limit_ms=5000",
                                  "ppo+rollout:card_samples=9999", "ismcts:simulations=many",
                                  "ppo+search:endgame=8", "ismcts:bid_search=5", "search:samples=65",
                                  "search:bid_samples=257", "ppo+rollout:samples=65"])
def test_a_browser_may_not_ask_a_bot_for_unbounded_work(app, spec):
    with connect(app) as socket_:
        client = Client(socket_)
        client.send(type="new", rules="short", seats=["you", spec, "random", "random"])
        error = client.error()
    option = spec.split(":")[1].split("=")[0]
    assert error["code"] in ("limit", "bad_message") and option in error["message"]
    if error["code"] == "limit":
        assert f"at most {option}={BOT_BUDGET_LIMITS[option]:g}" in error["message"]


def test_the_servers_own_policies_may_go_beyond_the_browsers_ceiling(saves):
    with TestClient(create_app(saves, policies={"deep": "ismcts:simulations=5000"}, bot_delay_ms=0,
                               limits=MACHINE_SPEED)) as client, connect(client) as socket_:
        _, joined = new_game(socket_, seats=["you", "deep", "random", "random"])
    assert client.app.state.server.tables[joined["table"]].table.seats[1].policy == "ismcts:simulations=5000"


# ---------------------------------------------------------------------------------------------- the log
def test_the_log_has_one_line_per_event_and_no_traceback_for_a_client_that_leaves(saves, caplog):
    caplog.set_level(logging.INFO, logger="blackout.serve")
    with TestClient(create_app(saves, bot_delay_ms=0, limits=MACHINE_SPEED)) as client:
        for _ in range(3):  # leave while the bots are sending states
            with connect(client) as socket_:
                watcher, joined = new_game(socket_, seats=["random"] * 4)
                watcher.next()
        with connect(client) as socket_:
            Client(socket_).send(type="fly")
            time.sleep(0.2)
    records = [r for r in caplog.records if r.name == "blackout.serve"]
    assert not [r for r in records if r.exc_info or r.levelno >= logging.ERROR], [r.getMessage() for r in records]
    closed = [r for r in records if "a connection closed" in r.getMessage()]
    assert len(closed) == 4 and all(r.levelno == logging.INFO for r in closed)
    refused = [r for r in records if "refused 'fly'" in r.getMessage()]
    assert len(refused) == 1 and refused[0].levelno == logging.WARNING


# ------------------------------------------------------------------------------------- the protocol fuzz
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False),
                    st.text(max_size=30), st.sampled_from(["../x", "/etc/passwd", "~", "/dev/zero", "you", "open",
                                                           "heuristic", "ismcts:simulations=99999", "standard"]))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                                          max_size=4), max_leaves=12)
FIELDS = st.sampled_from(["rules", "players", "hook", "seats", "fill", "bot_delay_ms", "takeover_s", "seed", "table",
                          "token", "name", "action", "on", "paused", "step", "reveal", "retry", "lobby_open", "game",
                          "content", "index", "move", "tables"])
MESSAGES = st.fixed_dictionaries({"type": st.sampled_from([*TYPES, "fly", ""])},
                                 optional={"x": VALUES}).flatmap(
    lambda base: st.dictionaries(FIELDS, VALUES, max_size=4).map(lambda extra: {**extra, **base}))
FRAMES = st.one_of(MESSAGES.map(json.dumps), st.text(max_size=60), st.binary(max_size=60),
                   st.sampled_from(["[" * 3000, "{}", "[]", "null", "\"act\"", "{\"type\": 5}"]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frames=st.lists(FRAMES, min_size=1, max_size=6))
def test_fuzzed_frames_get_answers_never_a_traceback_and_leave_the_game_alone(frames, fuzz_table, caplog):
    client, socket_, save, before = fuzz_table
    caplog.clear()
    for frame in frames:
        if isinstance(frame, bytes):
            socket_.send_bytes(frame)
        else:
            socket_.send_text(frame)
    client.send(type="list", tables=[])  # answered in order: every frame before it was handled
    client.until(lambda m: m["type"] == "games")
    assert save.read_bytes() == before
    bad = [r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not bad, bad


@pytest.fixture(scope="module")
def fuzz_table(tmp_path_factory):
    """A table mid-hand, and a spectator's socket to it (the fuzzed frames come from the spectator, so no
    legal move of theirs can change the game)."""
    saves = tmp_path_factory.mktemp("fuzz-saves")
    with TestClient(create_app(saves, bot_delay_ms=0, limits=MACHINE_SPEED)) as client:
        with connect(client) as host_socket, connect(client) as socket_:
            host, joined = new_game(host_socket, seats=["heuristic", "you", "heuristic", "heuristic"])
            host.until(lambda m: m["type"] == "state" and m["your_turn"])
            spectator = Client(socket_)
            spectator.send(type="join", table=joined["table"])
            spectator.until(lambda m: m["type"] == "joined")
            save = saves / f"{joined['table']}.json"
            yield spectator, socket_, save, save.read_bytes()


# --------------------------------------------------------------- a shared server on another address
def _free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def handshake(host: str, port: int, headers: dict[str, str]) -> int:
    """The HTTP status a WebSocket handshake to ``/ws`` gets (101: open)."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = ["GET /ws HTTP/1.1", f"Host: {headers.pop('Host', f'{host}:{port}')}", "Upgrade: websocket",
             "Connection: Upgrade", f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13",
             *(f"{name}: {value}" for name, value in headers.items())]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        return int(sock.recv(4096).split(b"\r\n", 1)[0].split()[1])


def test_a_server_shared_on_another_address_keeps_origins_and_tables_private(tmp_path):
    pytest.importorskip("websockets")
    from websockets.sync.client import connect as ws_connect

    host = "127.0.0.2"  # not the loopback address the page of this machine uses: what a LAN address is
    port = _free_port(host)
    allowed = f"http://cards.test:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "blackout_training.cli", "serve", "--host", host, "--port", str(port),
         "--saves", str(tmp_path / "saves"), "--allow-origin", allowed, "--bot-delay-ms", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with socket.create_connection((host, port), timeout=1):
                    break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        own = f"http://{host}:{port}"
        assert handshake(host, port, {"Origin": own}) == 101
        assert handshake(host, port, {}) == 101  # a program, not a page
        assert handshake(host, port, {"Origin": "http://evil.example"}) == 403
        assert handshake(host, port, {"Origin": f"http://rebound.test:{port}", "Host": f"rebound.test:{port}"}) == 403
        assert handshake(host, port, {"Origin": allowed, "Host": f"cards.test:{port}"}) == 101

        url = f"ws://{host}:{port}/ws"
        with ws_connect(url, origin=own) as a, ws_connect(url, origin=own) as b:
            def until(ws, kind):
                while True:
                    message = json.loads(ws.recv(timeout=30))
                    if message["type"] in (kind, "error"):
                        return message
            until(a, "hello"), until(b, "hello")
            a.send(json.dumps({"type": "new", "rules": "short", "seats": ["you", "open", "random", "random"]}))
            joined = until(a, "joined")
            b.send(json.dumps({"type": "list", "tables": []}))
            assert until(b, "games")["games"] == []
            b.send(json.dumps({"type": "join", "table": joined["table"], "token": "guess"}))
            assert until(b, "joined")["code"] == "bad_token"
            b.send(json.dumps({"type": "join", "table": joined["table"], "name": "Bob"}))
            assert until(b, "joined")["seat"] == 1
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    assert "not only this machine" in output and "Traceback" not in output
    assert "refused a WebSocket from the page of 'http://evil.example'" in output



def test_a_browser_may_not_name_a_model_file_but_may_ask_for_the_shipped_ones():
    from blackout_training.web.table import TableError, check_policy_spec

    for spec in ["ismcts:belief=/etc/passwd.json", "ppo+search:belief=../model.json,simulations=10",
                 "ppo+search:belief=play,play_model=/etc/passwd.json", "ppo+search:belief=bids,bid_model=/etc/passwd.json"]:
        with pytest.raises(TableError, match="may not name a file") as caught:
            check_policy_spec(spec, "seats")
        assert caught.value.code == "forbidden"
    assert check_policy_spec("ppo+search:belief=bids", "seats") == "ppo+search:belief=bids"
    assert check_policy_spec("ppo+search:belief=bids+play", "seats") == "ppo+search:belief=bids+play"
    assert check_policy_spec("ismcts:belief=uniform,simulations=50", "seats") == "ismcts:belief=uniform,simulations=50"


def test_a_refused_control_changes_nothing(app):
    with connect(app) as socket_:
        host, _ = new_game(socket_, seats=["you", "open", "heuristic", "heuristic"], bot_delay_ms=600)
        before = host.state()
        for control in ({"bot_delay_ms": 0, "lobby_open": False, "paused": "yes"},
                        {"bot_delay_ms": 0, "lobby_open": True}, {"paused": True, "bot_delay_ms": -1},
                        {"reveal": "yes", "paused": True}):
            host.send(type="control", **control)
            assert host.error()["code"] == "bad_message", control
        host.send(type="why", on=False)  # any answer: the table as it is now
        now = host.until(lambda m: m["type"] == "state")
        assert (now["bot_delay_ms"], now["lobby_open"], now["paused"]) == (
            before["bot_delay_ms"], before["lobby_open"], before["paused"]) == (600, True, False)


def test_a_list_naming_one_table_many_times_reads_its_save_once(app, monkeypatch):
    with connect(app) as a:
        host, joined = new_game(a, seats=["you", "open", "heuristic", "heuristic"])
    loads = []
    real_load = Table.load.__func__
    monkeypatch.setattr(Table, "load", classmethod(lambda cls, *args, **kw: loads.append(args[0]) or real_load(cls, *args, **kw)))
    app.app.state.server.tables.clear()  # the table only on disk now
    with connect(app) as b:
        client = Client(b)
        client.send(type="list", tables=[{"table": joined["table"], "token": "wrong"}] * 50
                    + [{"table": joined["table"], "token": joined["token"]}])
        assert client.until(lambda m: m["type"] == "games")["games"] == []  # the first entry's token decides
    assert loads == [joined["table"]]


def test_the_page_is_never_told_a_servers_file(saves, tmp_path):
    from blackout_training.web.table import public_spec

    checkpoint = str(Path(__file__).resolve().parents[1] / "training/agents/checkpoints/ppo_generalist.pt")
    policies = {"mine": f"ppo:{checkpoint}", "deep": f"ppo+search:checkpoint={checkpoint},simulations=20"}
    with TestClient(create_app(saves, policies=policies, bot_delay_ms=0, limits=MACHINE_SPEED)) as client, \
            connect(client) as socket_:
        host, _ = new_game(socket_, seats=["you", "mine", "deep", "heuristic"], rules="standard")
        host.send(type="why", on=True)
        messages = [host.until(lambda m: m["type"] == "state" and m.get("why"))]
    text = json.dumps(host.received + messages)
    assert checkpoint not in text and "checkpoints" not in text
    assert [seat["policy"] for seat in messages[0]["seats"]][1:] == [
        "ppo", "ppo+search:checkpoint=...,simulations=20", "heuristic"]
    assert public_spec("ismcts:belief=/srv/m.json,simulations=9") == "ismcts:belief=...,simulations=9"
    assert public_spec("ppo+search:belief=bids,bid_model=/srv/b.json") == "ppo+search:belief=bids,bid_model=..."
    assert public_spec("search:samples=8") == "search:samples=8"
    assert public_spec("ppo+rollout:belief=0.5") == "ppo+rollout:belief=0.5"  # a number, not a file


def test_a_bot_that_fails_on_a_servers_checkpoint_does_not_name_it(saves, caplog):
    checkpoint = str(Path(__file__).resolve().parents[1] / "training/agents/checkpoints/ppo_standard_4p.pt")
    with TestClient(create_app(saves, policies={"mine": f"ppo:{checkpoint}"}, bot_delay_ms=0,
                               limits=MACHINE_SPEED)) as client, connect(client) as socket_:
        host = Client(socket_)  # the 4-player network at a 3-player table (watched): it cannot load there
        host.send(type="new", rules="standard", players=3, seats=["mine", "heuristic", "heuristic"], seed=1)
        error = host.until(lambda m: m["type"] == "error")
        waiting = host.until(lambda m: m["type"] == "state" and m["waiting"])
    assert error["code"] == "bot_failed" and "(ppo) failed" in error["message"]
    assert checkpoint not in json.dumps(host.received) and "checkpoints/" not in json.dumps(host.received)
    assert "The game waits" in waiting["waiting"]["reason"]
    assert checkpoint in log_text(caplog)  # the operator's log names it


def test_a_damaged_save_is_named_by_its_id_not_its_path(app, saves):
    saves.mkdir(exist_ok=True)
    (saves / "abcdefgh.json").write_text("{not json")
    with connect(app) as socket_:
        client = Client(socket_)
        client.send(type="join", table="abcdefgh")
        error = client.error()
    assert error["code"] == "bad_save" and "abcdefgh.json" in error["message"]
    assert str(saves) not in error["message"]


@pytest.mark.parametrize("damage", [
    lambda web: web["seats"].pop(),  # fewer seats than the game's
    lambda web: web.update(host=5),
    lambda web: web["seats"].__setitem__(0, "person"),
])
def test_a_save_whose_web_part_is_damaged_is_refused_with_a_message(app, saves, damage):
    table, _ = Table.create(Rules.preset("short"), "short", ["you", "open", "random", "random"], saves=saves)
    table.save()
    path = saves / f"{table.table_id}.json"
    data = json.loads(path.read_text())
    damage(data["web"])
    path.write_text(json.dumps(data))
    with connect(app) as socket_:
        client = Client(socket_)
        client.send(type="join", table=table.table_id)
        error = client.error()
        assert error["code"] == "bad_save" and "its 'web' part is damaged" in error["message"]
        client.send(type="list", tables=[{"table": table.table_id, "token": "x"}])  # the connection lives
        assert client.until(lambda m: m["type"] == "games")["games"] == []


def test_a_table_id_with_a_trailing_newline_names_no_save(app, saves):
    with connect(app) as a:
        _, joined = new_game(a, seats=["you", "open", "heuristic", "heuristic"])
    app.app.state.server.tables.clear()
    with connect(app) as b:
        client = Client(b)
        client.send(type="join", table=joined["table"] + "\n")
        error = client.error()
        assert error["code"] == "no_table" and "a table id is 6-40 letters" in error["message"]  # not looked for


def test_a_game_log_too_long_for_the_viewer_is_refused_before_it_is_replayed(saves, tmp_path, monkeypatch):
    from blackout_training.evaluation.tournament import evaluate
    from blackout_training.web import replay

    log = tmp_path / "games.jsonl"
    evaluate(["random", "heuristic"], rules="short", deals=1, seed=1, game_log=log, progress=False)
    moves = sum(len(json.loads(line)["actions"]) for line in log.read_text().splitlines())
    limits = Limits(messages_per_second=1000, message_burst=1000, max_replay_moves=moves - 1)
    with TestClient(create_app(saves, limits=limits)) as client, connect(client) as socket_:
        viewer = Client(socket_)
        monkeypatch.setattr(replay, "parse_game_log", lambda text: pytest.fail("replayed"))
        viewer.send(type="replay", content=log.read_text())
        error = viewer.error()
    assert error["code"] == "limit" and f"more than {moves - 1:,} moves" in error["message"]
