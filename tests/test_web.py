"""The WebSocket protocol of ``blackout serve``, played through Starlette's test client (docs/web.md).

Every message a connection receives is kept and checked for hidden cards: a
message to a seat may name only that seat's own cards, cards already played or
shown to all, and (once the match is over) anything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx2", reason="Starlette's test client needs httpx2 (the dev extra)")

from blackout_training.web.server import Limits, create_app  # noqa: E402
from blackout_training.web.table import Table, TableError  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from blackout_env import BlackoutGame, Rules  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MACHINE_SPEED = Limits(messages_per_second=10_000, message_burst=10_000)
"""The test clients act as fast as the machine can, not at a person's pace: the rate limit has its own tests."""


class Client:
    """One WebSocket: sends messages and keeps every message received."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.received: list[dict[str, Any]] = []
        self.latest: dict[str, Any] | None = None
        self.hello = self.next()
        assert self.hello["type"] == "hello"

    def next(self) -> dict[str, Any]:
        message = self.socket.receive_json()
        self.received.append(message)
        if message["type"] == "state":
            self.latest = message
        return message

    def send(self, **message: Any) -> None:
        self.socket.send_json(message)

    def until(self, predicate, limit: int = 5000) -> dict[str, Any]:
        for _ in range(limit):
            message = self.next()
            if predicate(message):
                return message
        raise AssertionError("the expected message never came")

    def at_move(self, move: int) -> dict[str, Any]:
        """The state after ``move`` actions (the newest one received, or the next to come)."""
        def wanted(message: dict[str, Any]) -> bool:
            return message["type"] == "state" and message["move"] == move and message["status"] != "lobby"

        if self.latest is not None and wanted(self.latest):
            return self.latest
        return self.until(wanted)

    def state(self) -> dict[str, Any]:
        return self.until(lambda m: m["type"] == "state")

    def error(self) -> dict[str, Any]:
        return self.until(lambda m: m["type"] == "error")

    def play_first_legal(self, state: dict[str, Any]) -> None:
        """Bid the first permitted bid, or play the first legal card."""
        if state["bidding"]:
            option = next(o for o in state["bidding"]["options"] if not o["forbidden"])
            self.send(type="act", action=option["action"])
        else:
            self.send(type="act", action=next(c["card"] for c in state["hand"] if c["legal"]))

    def play_to_end(self) -> dict[str, Any]:
        """Play every turn of this seat until the match is over; the final state."""
        while True:
            state = self.state()
            if state["status"] == "over":
                return state
            if state["your_turn"]:
                self.play_first_legal(state)


@pytest.fixture
def saves(tmp_path: Path) -> Path:
    return tmp_path / "saves"


@pytest.fixture
def client_app(saves: Path):
    with TestClient(create_app(saves, bot_delay_ms=0, limits=MACHINE_SPEED), base_url="http://localhost") as client:
        yield client


def connect(client_app: TestClient) -> Any:
    return client_app.websocket_connect("/ws")


def new_game(socket: Any, **message: Any) -> tuple[Client, dict[str, Any]]:
    client = Client(socket)
    defaults = {"rules": "short", "bot_delay_ms": 0}
    if "open" not in message.get("seats", []):  # (a table with open seats is dealt from a seed no one knows)
        defaults["seed"] = 3
    client.send(type="new", **{**defaults, **message})
    joined = client.until(lambda m: m["type"] in ("joined", "error"))
    assert joined["type"] == "joined", joined
    return client, joined


# ----------------------------------------------------------------- hidden cards
def cards_named(message: Any) -> set[int]:
    """Every card a message names: objects with a "card" key, and card actions of a "why"."""
    found: set[int] = set()
    if isinstance(message, dict):
        if isinstance(message.get("card"), int):
            found.add(message["card"])
        for value in message.values():
            found |= cards_named(value)
    elif isinstance(message, list):
        for value in message:
            found |= cards_named(value)
    return found


def public_cards(game: BlackoutGame) -> set[int]:
    """Cards shown to everybody so far: played and turned cards."""
    shown = set()
    for event in game.history:
        if event[0] == "play":
            shown.add(event[2])
        elif event[0] == "deal" and event[4] is not None:
            shown.add(event[4])
    return shown


def assert_no_hidden_card(messages: list[dict[str, Any]], final: BlackoutGame, seat: int | None) -> int:
    """Each state names only cards its seat may know at that move; returns how many states were checked."""
    checked = 0
    for message in messages:
        if message["type"] != "state" or message.get("mode") == "replay" or message["status"] == "over":
            continue
        game = BlackoutGame(final.rules, decks=final.decks, first_dealer=final.first_dealer)
        for action in final.actions[: message["move"]]:
            game.step(action)
        allowed = public_cards(game)
        if seat is not None:
            allowed |= set(game.hands[seat])
        leaked = cards_named(message) - allowed
        assert not leaked, f"move {message['move']}: seat {seat} was sent hidden cards {sorted(leaked)}"
        checked += 1
    return checked


def saved_game(saves: Path, table: str) -> BlackoutGame:
    return Table.load(table, saves).game


# ------------------------------------------------------------------------ tests
def test_a_whole_match_through_the_socket_ends_at_the_score_sheet(client_app, saves):
    with connect(client_app) as socket:
        client, joined = new_game(socket, seats=["you", "heuristic", "heuristic", "heuristic"])
        assert joined["seat"] == 0 and joined["host"] and joined["token"]
        final = client.play_to_end()
    game = saved_game(saves, joined["table"])
    assert game.is_over
    sheet = final["score_sheet"]
    assert len(sheet["rows"]) == 5 and sheet["current"] is None
    assert sheet["totals"] == game.scores
    assert final["winners"] == game.winners()
    for row, points in zip(sheet["rows"], game.round_scores):
        assert [cell["points"] for cell in row["cells"]] == points
        assert all(cell["made"] == (cell["bid"] == cell["taken"]) for cell in row["cells"])
    assert assert_no_hidden_card(client.received, game, 0) > 20


def test_the_dealer_sees_the_forbidden_bid_and_its_reason(client_app):
    with connect(client_app) as socket:
        # Seat 0 deals the first hand and bids last.
        client, _ = new_game(socket, seats=["you", "heuristic", "heuristic", "heuristic"], seed=5)
        state = client.until(lambda m: m["type"] == "state" and m["your_turn"])
    bidding = state["bidding"]
    assert state["dealer"] == 0 and state["phase"] == "bid"
    forbidden = [o["bid"] for o in bidding["options"] if o["forbidden"]]
    others = sum(s["bid"] for s in state["seats"] if s["bid"] is not None)
    assert forbidden == ([state["hand_size"] - others] if others <= state["hand_size"] else [])
    if forbidden:
        assert "dealer's hook" in bidding["forbidden_reason"]
    assert sum(o["suggested"] for o in bidding["options"]) == 1
    assert bidding["suggestion"] not in forbidden


def test_illegal_cards_are_dimmed_with_the_engines_reason(client_app):
    with connect(client_app) as socket:
        client, _ = new_game(socket, rules="standard", seats=["heuristic", "you", "heuristic", "heuristic"], seed=2)
        while True:
            state = client.state()
            if state["your_turn"] and state["phase"] == "play" and any(not c["legal"] for c in state["hand"]):
                break
            if state["your_turn"]:
                client.play_first_legal(state)
        illegal = [c for c in state["hand"] if not c["legal"]]
        assert all(c["reason"].startswith(("you must follow suit", "trump")) for c in illegal)
        client.send(type="act", action=illegal[0]["card"])
        error = client.error()
    assert error["code"] == "illegal_action" and "must follow suit" in error["message"]


def test_two_people_at_one_table_neither_acts_for_nor_sees_the_other(client_app, saves):
    with connect(client_app) as host_socket, connect(client_app) as guest_socket:
        host, joined = new_game(host_socket, seats=["you", "open", "heuristic", "open"], fill="random")
        lobby = host.state()
        assert lobby["status"] == "lobby" and [s["kind"] for s in lobby["seats"]] == ["person", "open", "bot", "open"]
        guest = Client(guest_socket)
        guest.send(type="join", table=joined["table"])
        guest_joined = guest.until(lambda m: m["type"] == "joined")
        assert guest_joined["seat"] == 1 and not guest_joined["host"] and guest_joined["token"] != joined["token"]
        guest.send(type="start")
        assert guest.error()["code"] == "forbidden"  # only the host starts
        host.send(type="start")
        started = host.until(lambda m: m["type"] == "state" and m["status"] != "lobby")
        assert [s["kind"] for s in started["seats"]] == ["person", "person", "bot", "bot"]
        assert started["seats"][3]["policy"] == "random"
        # Each person plays their own turns only; acting on the other's turn is refused.
        game = client_app.app.state.server.tables[joined["table"]].table.game
        clients = {0: host, 1: guest}
        refused = 0
        while not game.is_over:
            seat = game.current_player
            if seat not in clients:
                host.state()  # a bot moves: every change sends every connection a state
                continue
            move = len(game.actions)
            state = clients[seat].at_move(move)
            assert state["your_turn"]
            other = clients[1 - seat]
            other.send(type="act", action=state["bidding"]["options"][0]["action"] if state["bidding"]
                       else state["hand"][0]["card"])
            assert other.error()["code"] == "not_your_turn"
            refused += 1
            clients[seat].play_first_legal(state)
            clients[seat].until(lambda m, move=move: m["type"] == "state" and m["move"] > move)
        assert refused > 5
    game = saved_game(saves, joined["table"])
    assert game.is_over
    assert assert_no_hidden_card(host.received, game, 0) > 10
    assert assert_no_hidden_card(guest.received, game, 1) > 10


def test_no_message_to_any_seat_or_spectator_names_a_hidden_card(client_app, saves):
    """Several games, every seat a person (one socket each) or watching, every message checked."""
    for _ in range(2):  # (two deals no one at the table knows: an open seat refuses a seed)
        with connect(client_app) as a, connect(client_app) as b, connect(client_app) as watcher_socket:
            first, joined = new_game(a, rules="jokers", players=3, seats=["you", "open", "heuristic"])
            second = Client(b)
            second.send(type="join", table=joined["table"])
            second.until(lambda m: m["type"] == "joined")
            first.send(type="start")
            watcher = Client(watcher_socket)
            watcher.send(type="join", table=joined["table"])
            assert watcher.until(lambda m: m["type"] == "joined")["seat"] is None
            watcher.send(type="why", on=True)
            watcher.send(type="control", reveal=True)
            assert watcher.error()["code"] == "forbidden"  # people play here: no reveal
            first.send(type="why", on=True)
            second.send(type="why", on=True)
            players = [first, second]
            while True:
                done = False
                for client in players:
                    state = client.state()
                    if state["status"] == "over":
                        done = True
                    elif state["your_turn"]:
                        client.play_first_legal(state)
                if done:
                    break
        game = saved_game(saves, joined["table"])
        for seat, client in enumerate(players):
            assert assert_no_hidden_card(client.received, game, seat) > 10
        assert assert_no_hidden_card(watcher.received, game, None) > 0


def test_garbage_illegal_and_out_of_turn_messages_are_refused_and_the_socket_lives(client_app, saves):
    with connect(client_app) as socket, connect(client_app) as spectator_socket:
        client, joined = new_game(socket, seats=["heuristic", "you", "heuristic", "heuristic"], bot_delay_ms=0)
        state = client.until(lambda m: m["type"] == "state" and m["your_turn"])
        move = state["move"]
        bad = [
            "not json", "[1, 2]", '{"no": "type"}', '{"type": "fly"}', '{"type": "act"}',
            '{"type": "act", "action": "53"}', '{"type": "act", "action": true}', '{"type": "act", "action": 9999}',
            '{"type": "act", "action": 0.5}', '{"type": "why", "on": "yes"}', '{"type": "control", "bot_delay_ms": -1}',
            '{"type": "seek", "move": 3}', '{"type": "join", "table": "../../etc/passwd"}',
            '{"type": "new", "rules": "nope"}', '{"type": "new", "players": 9}',
            '{"type": "new", "seats": ["you", "ppo:/etc/passwd", "heuristic", "heuristic"]}',
            '{"type": "new", "seats": ["you", "ppo+search:checkpoint=/x.pt", "heuristic", "heuristic"]}',
            '{"type": "replay", "content": "{broken"}', '{"type": "replay", "game": "zzzzzzzz"}',
        ]
        for text in bad:
            socket.send_text(text)
            error = client.error()
            assert error["message"], text
        # A card this seat does not hold, a bid out of range, and the bid of another phase: illegal, named.
        client.send(type="act", action=state["bidding"]["options"][-1]["action"] + 1)
        assert client.error()["code"] == "illegal_action"
        spectator = Client(spectator_socket)
        spectator.send(type="join", table=joined["table"])
        spectator.until(lambda m: m["type"] == "joined")
        spectator.send(type="act", action=state["bidding"]["options"][0]["action"])
        assert spectator.error()["code"] == "forbidden"
        # The socket still answers, and the game has not moved.
        client.send(type="list", tables=[{"table": joined["table"], "token": joined["token"]}])
        assert [g["id"] for g in client.until(lambda m: m["type"] == "games")["games"]] == [joined["table"]]
        assert saved_game(saves, joined["table"]).actions.__len__() == move
        client.play_first_legal(state)
        assert client.until(lambda m: m["type"] == "state" and m["move"] > move)


def test_a_person_who_leaves_comes_back_to_the_same_seat_and_move(client_app):
    with connect(client_app) as socket:
        client, joined = new_game(socket, rules="standard", seats=["you", "heuristic", "heuristic", "heuristic"])
        state = client.until(lambda m: m["type"] == "state" and m["your_turn"])
        client.play_first_legal(state)
        before = client.until(lambda m: m["type"] == "state" and m["your_turn"])
    with connect(client_app) as socket:
        client = Client(socket)
        client.send(type="join", table=joined["table"], token=joined["token"])
        back = client.until(lambda m: m["type"] == "joined")
        state = client.state()
    assert back["seat"] == 0 and back["host"]
    assert state["move"] == before["move"] and state["hand"] == before["hand"] and state["your_turn"]


def test_a_second_tab_sees_the_same_state(client_app):
    with connect(client_app) as one, connect(client_app) as two:
        first, joined = new_game(one, seats=["you", "heuristic", "heuristic", "heuristic"])
        state = first.until(lambda m: m["type"] == "state" and m["your_turn"])
        second = Client(two)
        second.send(type="join", table=joined["table"], token=joined["token"])
        second.until(lambda m: m["type"] == "joined")
        mirrored = second.state()
        assert mirrored["hand"] == state["hand"] and mirrored["move"] == state["move"]
        second.play_first_legal(mirrored)
        after = first.until(lambda m: m["type"] == "state" and m["move"] > state["move"])
        assert after["seats"][0]["bid"] is not None


def test_a_restarted_server_resumes_the_game_from_its_saves(saves):
    with TestClient(create_app(saves, bot_delay_ms=0, limits=MACHINE_SPEED)) as app, connect(app) as socket:
        client, joined = new_game(socket, rules="standard", seats=["you", "search:samples=4", "heuristic", "ppo"])
        for _ in range(2):
            state = client.until(lambda m: m["type"] == "state" and m["your_turn"])
            client.play_first_legal(state)
        before = client.until(lambda m: m["type"] == "state" and m["your_turn"])
    with TestClient(create_app(saves, bot_delay_ms=0, limits=MACHINE_SPEED)) as app, connect(app) as socket:
        client = Client(socket)
        client.send(type="join", table=joined["table"], token=joined["token"])
        client.until(lambda m: m["type"] == "joined")
        state = client.state()
        assert (state["move"], state["hand"], state["seats"]) == (before["move"], before["hand"], before["seats"])
        client.play_first_legal(state)
        assert client.until(lambda m: m["type"] == "state" and m["move"] > state["move"])


def test_a_corrupt_or_foreign_save_is_refused_with_a_message_and_left_untouched(client_app, saves):
    saves.mkdir(parents=True, exist_ok=True)
    contents = {
        "brokenjson": b"{not json",
        "otherversion": json.dumps({"format": "blackout-play", "version": 99}).encode(),
        "notasave1": json.dumps({"hello": "world"}).encode(),
    }
    for name, data in contents.items():
        (saves / f"{name}.json").write_bytes(data)
    with connect(client_app) as socket:
        client = Client(socket)
        for name, data in contents.items():
            client.send(type="join", table=name)
            error = client.error()
            assert error["code"] == "bad_save" and name in error["message"]
            assert (saves / f"{name}.json").read_bytes() == data
        client.send(type="join", table="nosuchtable")
        assert client.error()["code"] == "no_table"


def test_a_terminal_save_is_played_on_in_the_browser(saves):
    from blackout_training.play.session import new_session, write_save

    saved = new_session(Rules.preset("short"), humans=1, bots="heuristic", seed=4)
    saves.mkdir(parents=True)
    write_save(saves / "fromterminal.json", saved)
    with TestClient(create_app(saves, bot_delay_ms=0, limits=MACHINE_SPEED)) as app, connect(app) as socket:
        client = Client(socket)
        client.send(type="join", table="fromterminal")
        assert client.until(lambda m: m["type"] == "joined")["seat"] == 0
        final = client.play_to_end()
    assert final["winners"] == saved_game(saves, "fromterminal").winners()


def test_a_failing_bot_is_reported_and_the_game_waits_until_the_host_retries(saves, caplog):
    calls = {"count": 0}

    class Flaky:
        name = "flaky"

        def __init__(self, inner):
            self.inner = inner

        def act(self, view):
            calls["count"] += 1
            if calls["count"] == 3:
                raise RuntimeError("the bot tripped")
            return self.inner.act(view)

    def loader(spec, rules, seed):
        from blackout_env.agents.policies import load_policy

        return Flaky(load_policy(spec, rules, seed))

    with TestClient(create_app(saves, policy_loader=loader, bot_delay_ms=0, limits=MACHINE_SPEED)) as app, connect(app) as socket:
        client, joined = new_game(socket, seats=["heuristic", "heuristic", "heuristic", "heuristic"])
        error = client.error()
        assert error["code"] == "bot_failed" and "the bot tripped" in error["message"]
        waiting = client.until(lambda m: m["type"] == "state" and m["status"] == "waiting")
        assert "tripped" in waiting["waiting"]["reason"] and waiting["move"] == 2
        client.send(type="control", step=True)
        assert client.until(lambda m: m["type"] == "state" and m["move"] == 3)["status"] == "playing"
    failures = [r for r in caplog.records if "the bot tripped" in r.getMessage()]
    assert len(failures) == 1 and failures[0].levelname == "WARNING" and joined["table"] in failures[0].getMessage()
    assert not failures[0].exc_info


def test_bots_decide_in_their_own_threads_and_their_time_is_withheld_from_people(client_app, monkeypatch):
    import threading

    from blackout_training.web.table import Table

    threads = set()
    decide = Table.decide

    def recorded(self, seat):
        threads.add(threading.current_thread().name)
        return decide(self, seat)

    monkeypatch.setattr(Table, "decide", recorded)
    with connect(client_app) as a, connect(client_app) as b:
        watching, _ = new_game(a, seats=["heuristic"] * 4)
        watched = watching.until(lambda m: m["type"] == "state" and m["move"] >= 4)
        assert isinstance(watched["decision_ms"], (int, float))  # watching bots: how long they think
        playing, _ = new_game(b, seats=["heuristic", "you", "heuristic", "heuristic"])
        state = playing.state()
        while state["move"] < 3:  # (the person bids first here)
            if state["your_turn"]:
                playing.play_first_legal(state)
            state = playing.state()
        # (a bot with one legal card answers at once: the time would tell a person so)
        assert state["status"] != "over" and state["decision_ms"] is None
    assert threads and all(name.startswith("blackout-bot") for name in threads), threads


def test_a_bot_takes_over_an_away_seat_after_the_hosts_timeout(client_app, saves):
    with connect(client_app) as socket:
        client, joined = new_game(socket, seats=["heuristic", "you", "heuristic", "heuristic"], takeover_s=0.2)
        client.until(lambda m: m["type"] == "state" and m["your_turn"])
    with connect(client_app) as socket:
        client = Client(socket)
        client.send(type="join", table=joined["table"])  # no token: a spectator, seat 1 stays away
        assert client.until(lambda m: m["type"] == "joined")["seat"] is None
        state = client.until(lambda m: m["type"] == "state" and m["move"] >= 4)
    assert state["seats"][1]["bid"] is not None  # the fill bot bid for the person who left


def test_a_watched_table_reveals_hands_pauses_steps_and_explains(client_app):
    with connect(client_app) as socket:
        client, joined = new_game(socket, seats=["ppo", "heuristic", "search:samples=4", "random"], bot_delay_ms=0)
        assert joined["seat"] is None and joined["host"]
        client.send(type="control", paused=True)
        paused = client.until(lambda m: m["type"] == "state" and m["paused"])
        client.send(type="control", reveal=True)
        client.send(type="why", on=True)
        shown = client.until(lambda m: m["type"] == "state" and m["reveal"] and m["why"] is not None)
        assert all(seat["hand"] for seat in shown["seats"]) and shown["mode"] == "watch"
        client.send(type="control", step=True)
        stepped = client.until(lambda m: m["type"] == "state" and m["move"] == shown["move"] + 1)
        why = stepped["why"]
        actor = why["seat"]
        assert why["chosen"]["action"] in [a["action"] for a in why["actions"]]
        assert stepped["paused"] and stepped["move"] <= paused["move"] + 2
        if stepped["seats"][actor]["policy"] == "ppo":
            assert why["kind"] == "policy" and why["value"] is not None
            assert sum(a["probability"] for a in why["actions"]) == pytest.approx(1.0, abs=1e-5)


def test_a_step_asked_while_a_bot_decides_is_not_lost(saves):
    import threading

    gate, deciding = threading.Event(), threading.Event()

    class Gated:
        name = "gated"

        def __init__(self, inner):
            self.inner = inner

        def act(self, view):
            deciding.set()
            assert gate.wait(30), "the test never opened the gate"
            return self.inner.act(view)

    def loader(spec, rules, seed):
        from blackout_env.agents.policies import load_policy

        return Gated(load_policy(spec, rules, seed))

    with TestClient(create_app(saves, policy_loader=loader, bot_delay_ms=0, limits=MACHINE_SPEED)) as app, connect(app) as socket:
        client, _ = new_game(socket, seats=["heuristic", "you", "heuristic", "heuristic"])  # (seat 1 bids first)
        client.send(type="control", paused=True)
        state = client.until(lambda m: m["type"] == "state" and m["paused"])
        assert state["your_turn"] and state["move"] == 0
        client.play_first_legal(state)
        client.until(lambda m: m["type"] == "state" and m["move"] == 1)
        client.send(type="control", step=True)
        assert deciding.wait(30)  # seat 2 decides ...
        client.send(type="control", step=True)  # ... when the host asks for one more
        client.until(lambda m: m["type"] in ("state", "error"))
        gate.set()
        stepped = client.until(lambda m: m["type"] == "state" and m["move"] >= 3)
        assert stepped["move"] == 3 and stepped["paused"]


def test_a_step_whose_bot_failed_is_played_when_the_host_retries(saves):
    failed = []

    class FailsOnce:
        name = "fails-once"

        def __init__(self, inner):
            self.inner = inner

        def act(self, view):
            if not failed:
                failed.append(1)
                raise RuntimeError("the bot tripped")
            return self.inner.act(view)

    def loader(spec, rules, seed):
        from blackout_env.agents.policies import load_policy

        policy = load_policy(spec, rules, seed)
        return FailsOnce(policy) if spec == "random" else policy

    with TestClient(create_app(saves, policy_loader=loader, bot_delay_ms=0, limits=MACHINE_SPEED)) as app, connect(app) as socket:
        client, _ = new_game(socket, seats=["heuristic", "you", "random", "heuristic"])  # (seat 1 bids first)
        client.send(type="control", paused=True)
        state = client.until(lambda m: m["type"] == "state" and m["paused"])
        client.play_first_legal(state)
        client.until(lambda m: m["type"] == "state" and m["move"] == 1)
        client.send(type="control", step=True)  # seat 2's bot trips
        assert client.error()["code"] == "bot_failed"
        client.send(type="control", bot_delay_ms=0)  # any control of the host retries (sent at once: no wait)
        stepped = client.until(lambda m: m["type"] == "state" and m["move"] >= 2)
        assert stepped["move"] == 2 and stepped["paused"] and stepped["waiting"] is None


def test_why_shows_a_person_the_suggestion_and_never_a_bots_cards(client_app):
    with connect(client_app) as socket:
        client, _ = new_game(socket, rules="standard", seats=["heuristic", "heuristic", "you", "heuristic"])
        client.send(type="why", on=True)
        state = client.until(lambda m: m["type"] == "state" and m["your_turn"] and m["why"] is not None)
        assert state["why"]["seat"] == 2 and state["why"]["chosen"]["action"] - 52 == state["bidding"]["suggestion"]
        client.play_first_legal(state)
        later = client.until(lambda m: m["type"] == "state" and m["move"] > state["move"] + 1)
        assert later["why"] is None or later["why"]["seat"] == 2


def test_replay_of_an_eval_game_log_has_the_evaluations_scores(client_app, tmp_path):
    from blackout_training.evaluation.tournament import evaluate

    log = tmp_path / "games.jsonl"
    evaluate(["random", "heuristic"], rules="short", deals=2, seed=1, game_log=log)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    with connect(client_app) as socket:
        client = Client(socket)
        client.send(type="replay", content=log.read_text())
        first = client.state()
        assert first["mode"] == "replay" and first["replay"]["move"] == 0
        assert len(first["replay"]["games"]) == len(lines) == 8
        for index, line in enumerate(lines):
            client.send(type="seek", index=index, move=len(line["actions"]))
            end = client.state()
            assert end["status"] == "over" and end["score_sheet"]["totals"] == line["scores"]
        client.send(type="seek", move=5)
        back = client.state()
        assert back["move"] == 5 and all(seat["hand"] is not None for seat in back["seats"])
        client.send(type="act", action=0)
        assert client.error()["code"] in ("forbidden", "no_table")


def test_a_game_still_being_played_cannot_be_replayed(client_app):
    with connect(client_app) as socket:
        client, joined = new_game(socket, seats=["you", "heuristic", "heuristic", "heuristic"])
        client.send(type="replay", game=joined["table"])
        assert client.error()["code"] == "forbidden"


def test_table_options_are_checked_before_anything_is_created(saves):
    rules = Rules.preset("short")
    for seats, words in [
        (["you", "you", "heuristic", "heuristic"], "at most one"),
        (["you", "heuristic"], "one entry per seat"),
        (["you", "nosuchbot", "heuristic", "heuristic"], "unknown policy"),
        (["you", "ppo:/tmp/x.pt", "heuristic", "heuristic"], "may not name a file"),
    ]:
        with pytest.raises(TableError, match=words):
            Table.create(rules, "short", seats, saves=saves)
    with pytest.raises(TableError, match="bot_delay_ms"):
        Table.create(rules, "short", ["you", "random", "random", "random"], bot_delay_ms=10**6, saves=saves)
    with pytest.raises(TableError, match="takeover_s"):
        Table.create(rules, "short", ["you", "random", "random", "random"], takeover_s=-1, saves=saves)
    assert not saves.exists() or not list(saves.iterdir())


def test_the_server_names_its_policies_and_a_browser_chooses_them_by_name(saves, tmp_path):
    from blackout_training.agents.policy_net import SHIPPED_CHECKPOINT

    with TestClient(create_app(saves, policies={"mine": f"ppo:{SHIPPED_CHECKPOINT}"}, bot_delay_ms=0, limits=MACHINE_SPEED)) as app:
        with connect(app) as socket:
            client, _ = new_game(socket, seats=["you", "mine", "heuristic", "heuristic"])
            assert "mine" in client.hello["policies"]
            state = client.state()
            assert state["seats"][1]["name"] == "P1 mine"


def test_the_page_and_its_assets_ship_in_the_package_and_load_nothing_from_elsewhere(client_app):
    page = client_app.get("/")
    assert page.status_code == 200 and "<html" in page.text.lower()
    static = Path(__file__).resolve().parents[1] / "training" / "web" / "static"
    total = sum(path.stat().st_size for path in static.iterdir())
    assert total < 300_000, f"the page and its assets weigh {total} bytes"
    for path in static.iterdir():
        text = path.read_text(encoding="utf-8")
        assert "http://" not in text and "https://" not in text, f"{path.name} names another host"
        assert client_app.get(f"/static/{path.name}").status_code == 200


# ------------------------------------------------------------------ the command
def test_blackout_serve_listens_on_this_machine_only_unless_told_and_says_so(monkeypatch, tmp_path, capsys):
    import uvicorn
    from blackout_training.cli import main

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: calls.append(kwargs))
    monkeypatch.setattr("blackout_training.web.server.check_listen", lambda host, port: None)  # 8000 may be taken
    assert main(["serve", "--saves", str(tmp_path)]) == 0
    assert calls[-1]["host"] == "127.0.0.1" and calls[-1]["port"] == 8000
    assert "not only this machine" not in capsys.readouterr().out
    assert main(["serve", "--saves", str(tmp_path), "--host", "0.0.0.0", "--port", "8123"]) == 0
    assert calls[-1]["host"] == "0.0.0.0" and "not only this machine" in capsys.readouterr().out


@pytest.mark.parametrize("argv, words", [
    (["--port", "0"], "--port"),
    (["--policy", "mine"], "NAME=SPEC"),
    (["--policy", "mine=nosuch"], "unknown policy"),
    (["--rules", "/no/such/file.yaml"], "no such file"),
    (["--policy", "mine=ppo:/no/such/checkpoint.pt"], "--policy mine=ppo:/no/such/checkpoint.pt: checkpoint"),
    (["--policy", "mine=ismcts:simulations=-5"], "--policy mine=ismcts:simulations=-5: "),
    (["--policy", "mine=heuristic", "--policy", "mine=random"], "the name 'mine' is given twice"),
    (["--policy", "heuristic=random"], "'heuristic' is a built-in policy's name"),
    (["--rules", "{tmp}/a/house.yaml", "--rules", "{tmp}/b/house.yaml"], "two files are named 'house'"),
    (["--rules", "{tmp}/a/standard.yaml"], "'standard' is a preset's name"),
])
def test_blackout_serve_refuses_bad_options_before_starting(argv, words, tmp_path, capsys, monkeypatch):
    import uvicorn
    from blackout_training.cli import main

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        for name in ("house", "standard"):
            (tmp_path / folder / f"{name}.yaml").write_text("num_players: 3\n")
    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: pytest.fail("the server started"))
    assert main(["serve", "--saves", str(tmp_path / "saves"), *[arg.format(tmp=tmp_path) for arg in argv]]) == 2
    assert words in capsys.readouterr().err


def test_blackout_serve_refuses_a_port_in_use_and_saves_that_are_a_file_before_printing(tmp_path, capsys, monkeypatch):
    import socket

    import uvicorn
    from blackout_training.cli import main
    from blackout_training.web.server import check_listen

    monkeypatch.setattr(uvicorn, "run", lambda app, **kwargs: pytest.fail("the server started"))
    check_listen("127.0.0.1", 0)  # a free port, in each family the host resolves to
    if socket.has_ipv6:
        try:
            check_listen("::1", 0)
        except ValueError as error:  # a machine without IPv6 loopback
            assert "cannot listen on --host ::1" in str(error)
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        assert main(["serve", "--saves", str(tmp_path), "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert f"cannot listen on --host 127.0.0.1 --port {port}" in captured.err and captured.out == ""
    (tmp_path / "afile").write_text("x")
    assert main(["serve", "--saves", str(tmp_path / "afile"), "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert "saves: " in captured.err and "is not a folder" in captured.err and "Traceback" not in captured.err

    def unresolved(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unresolved)
    assert main(["serve", "--saves", str(tmp_path), "--host", "no-such-host.invalid"]) == 2
    assert "cannot listen on --host no-such-host.invalid --port 8000: Name or service not known" in capsys.readouterr().err


def test_bench_web_times_moves_and_load_on_loopback(tmp_path):
    from blackout_training.bench.web import main

    out = tmp_path / "web.json"
    assert main(["--policies", "heuristic", "--moves", "5", "--tables", "3", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["moves"]["heuristic"]["moves"] == 5 and figures["server_ms"]["heuristic"]["decisions"] >= 5
    assert figures["load"]["tables"] == 3 and figures["load"]["slowdown"] > 0


def test_replay_of_single_hands_of_an_evaluation_ends_each_hand(client_app, tmp_path):
    from blackout_training.evaluation.tournament import evaluate

    log = tmp_path / "hands.jsonl"
    evaluate(["random", "heuristic"], rules="standard", deals=1, seed=2, hands=True, game_log=log)
    line = json.loads(log.read_text().splitlines()[0])
    with connect(client_app) as socket:
        client = Client(socket)
        client.send(type="replay", content=log.read_text())
        client.state()
        client.send(type="seek", move=len(line["actions"]))
        end = client.state()
    assert end["status"] == "over" and end["score_sheet"]["totals"] == line["scores"]
    # the hand that was played, over: not the next one dealt (the engine deals it after the last card)
    assert end["round"] == line["start_round"] and end["winners"] is not None
    assert not any(seat.get("hand") for seat in end["seats"])


def test_a_refused_seek_changes_neither_the_game_nor_the_move(client_app, tmp_path):
    from blackout_training.evaluation.tournament import evaluate

    log = tmp_path / "games.jsonl"
    evaluate(["random", "heuristic"], rules="short", deals=1, seed=2, game_log=log)
    with connect(client_app) as socket:
        client = Client(socket)
        client.send(type="replay", content=log.read_text())
        client.state()
        client.send(type="seek", move=3)
        client.state()
        client.send(type="seek", index=2, move=9999)
        client.error()
        client.send(type="seek")
        again = client.state()
    assert again["replay"]["index"] == 0 and again["replay"]["move"] == 3


def test_a_pause_is_saved_with_the_table(tmp_path):
    table, _ = Table.create(Rules.preset("short"), "short", ["heuristic"] * 4, saves=tmp_path, seed=0)
    table.paused = True
    table.save()
    assert Table.load(table.table_id, tmp_path).paused
    table.paused = False
    table.save()
    assert not Table.load(table.table_id, tmp_path).paused
