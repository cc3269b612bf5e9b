"""The server of ``blackout serve``: a Starlette app with one page and one WebSocket.

:func:`create_app` builds the app (the tests drive it with Starlette's test
client); :func:`serve` runs it on uvicorn. The page (``static/``) ships in the
package and loads nothing from another host.

Each table in memory is a :class:`LiveTable`: the :class:`~blackout_training.web.table.Table`,
the connections watching it, and one task that plays the bots' moves one at a
time, at the table's speed. A bot decides in a worker thread (a search bot may
think for seconds) on its own seat's view, and its move is applied only if the
game is still where it was. Every change is saved before it is sent, so a
reload, a second tab or a restarted server finds the same game at the same move.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import ipaddress
import json
import logging
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from blackout_env import Rules
from blackout_env.agents.policies import LOADERS
from blackout_env.game.rules import RulesError, preset_names

from . import messages
from .table import (
    BOT_BUDGET_LIMITS,
    MAX_BOT_DELAY_MS,
    MAX_NAME_CHARS,
    Table,
    TableError,
    check_bot_delay,
    check_takeover,
)

__all__ = ["Limits", "LiveTable", "create_app", "origin_allowed", "serve"]

log = logging.getLogger("blackout.serve")
STATIC = Path(str(resources.files("blackout_training.web") / "static"))
VERSION = 2
"""The protocol's version (``hello``); docs/web.md lists what changed from version 1."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Limits:
    """What one client may ask of the server. Each request beyond a limit is refused with an ``error``
    (code ``limit``) that names it; the connection stays open and no game changes (docs/web.md, Limits)."""

    max_message_chars: int = 2_000_000
    """The longest text message (a game log's text sent to the replay viewer is the longest one)."""
    max_frame_bytes: int = 4 * 2**20
    """A frame above this closes the connection (code 1009, the WebSocket library's own check, before any
    parsing); between ``max_message_chars`` and this, the message is refused with an error."""
    max_replay_moves: int = 20_000
    """Actions in all the games of one game log sent to the replay viewer (a standard match has 260): each
    is replayed to check it, and the games are kept while the viewer is open."""
    max_json_depth: int = 6
    """Nesting of arrays and objects in a message (the protocol's deepest message has 3)."""
    messages_per_second: float = 20.0
    message_burst: int = 60
    """Messages a connection may send at once before the rate applies (a token bucket)."""
    tables_per_connection: int = 20
    max_tables: int = 200
    """Tables in memory: tables nobody is connected to are dropped from memory first (they stay saved)."""
    max_listed: int = 100
    """Tables a ``list`` may ask about (the page keeps the tokens of its last 50 tables)."""

    def __post_init__(self) -> None:
        for name, value in self.__dict__.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"Limits.{name}: must be a number above 0, got {value!r}")


def normalize_origin(origin: str) -> str:
    """``"HTTPS://Example.com:8443/"`` -> ``"https://example.com:8443"``; ValueError for anything else than
    ``http(s)://host[:port]``."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"an origin is http(s)://host[:port], e.g. https://cards.example.org, got {origin!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"an origin is http(s)://host[:port], got {origin!r} (bad port)") from None
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    return f"{parts.scheme}://{host}" + ("" if port is None else f":{port}")


def origin_allowed(origin: str | None, host: str | None, allowed: frozenset[str]) -> bool:
    """Whether a WebSocket handshake with this ``Origin`` and ``Host`` may open.

    A browser always sends ``Origin``; a client without one is a program, not a page another site serves, so it
    may connect (it could forge any header anyway). A browser may connect from an origin named with
    ``--allow-origin``, or from the page's own origin (the Origin's host:port is the Host it asked for) when that
    host is an IP address or ``localhost``: a page under another site's name that resolves to this server (DNS
    rebinding) is refused unless the name was allowed.
    """
    if origin is None:
        return True
    try:
        normalized = normalize_origin(origin)
    except ValueError:
        return False  # "null" (a sandboxed frame, a file://), or garbage
    if normalized in allowed:
        return True
    if host is None or urlsplit(normalized).netloc != host.strip().lower():
        return False
    return _names_this_machine(urlsplit(normalized).hostname or "")


def _names_this_machine(hostname: str) -> bool:
    """``localhost`` or an IP address: a name no other site's page can take (DNS rebinding needs a name)."""
    if hostname == "localhost":
        return True
    try:
        ipaddress.ip_address(hostname)
    except ValueError:
        return False
    return True


def host_allowed(host: str | None, allowed: frozenset[str]) -> bool:
    """Whether an HTTP request's ``Host`` is this server's: an IP address or ``localhost`` (any port), or the
    host of an origin named with ``--allow-origin``. A page under another site's name that resolves to this
    server (DNS rebinding) could otherwise read ``/health`` and ``/ladder.json``. No ``Host``: a program."""
    if host is None:
        return True
    try:
        hostname = urlsplit(f"//{host.strip().lower()}").hostname or ""
    except ValueError:  # ("[::1" and the like)
        return False
    if hostname in {urlsplit(origin).hostname for origin in allowed}:  # (a proxy may drop the port)
        return True
    return _names_this_machine(hostname)


SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),  # no other site may frame the page (a framed link would take a seat)
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"referrer-policy", b"no-referrer"),  # a table's link is its key: never sent on to another site
]


class _Guard:
    """ASGI middleware for HTTP: refuse a request for another host name (421), and send every answer with
    :data:`SECURITY_HEADERS` (and ``Cache-Control: no-cache`` for the page's assets, so an upgraded server's
    script is never run beside an old page). WebSockets check their Origin themselves."""

    def __init__(self, app: Any, allowed: frozenset[str]) -> None:
        self.app, self.allowed = app, allowed

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host")
        if not host_allowed(None if host is None else host.decode("latin-1"), self.allowed):
            body = (b"this server answers to its IP address or localhost; name another host with --allow-origin "
                    b"(its origin, e.g. https://cards.example.org)\n")
            await send({"type": "http.response.start", "status": 421,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]})
            await send({"type": "http.response.body", "body": body})
            return
        static = scope.get("path", "").startswith("/static/")

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                extra = list(SECURITY_HEADERS)
                if static:
                    extra.append((b"cache-control", b"no-cache"))
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


def json_depth(value: Any) -> int:
    """How deeply arrays and objects nest in a decoded JSON value (a scalar is 0)."""
    depth, level = 0, [(value, 1)]
    while level:
        item, at = level.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            depth = max(depth, at)
            level.extend((child, at + 1) for child in item)
    return depth


@dataclass(eq=False)
class Connection:
    """One WebSocket: where it sits and what it asked to see."""

    websocket: WebSocket
    viewer: messages.Viewer = field(default_factory=messages.Viewer)
    table_id: str | None = None
    token: str | None = None
    replay: Any = None
    tables_created: int = 0
    allowance: float = 0.0
    """Messages it may still send now (a token bucket refilled at the rate limit)."""
    checked_at: float = field(default_factory=time.monotonic)
    dropped: int = 0
    """Messages dropped by the rate limit since the last WARNING about it."""
    drop_logged_at: float = float("-inf")

    def take_message(self, limits: Limits) -> bool:
        """Whether one more message is within the rate limit now (and count it)."""
        now = time.monotonic()
        self.allowance = min(limits.message_burst,
                             self.allowance + (now - self.checked_at) * limits.messages_per_second)
        self.checked_at = now
        if self.allowance < 1.0:
            return False
        self.allowance -= 1.0
        return True


@dataclass(eq=False)
class LiveTable:
    """A table in memory with its connections and its bots' task."""

    table: Table
    connections: set[Connection] = field(default_factory=set)
    runner: asyncio.Task | None = None
    waiting: dict[str, Any] | None = None
    left_at: dict[int, float] = field(default_factory=dict)
    step_once: bool = False
    loaded_at: float = field(default_factory=time.monotonic)

    def connected(self, seat: int) -> bool:
        return any(c.viewer.seat == seat for c in self.connections)

    def away_seats(self) -> set[int]:
        return {s for s, seat in enumerate(self.table.seats) if seat.kind != "bot" and not self.connected(s)}

    def takeover_left(self, seat: int) -> float | None:
        """Seconds until a bot takes over ``seat`` (0: now), or None when it never will or the person is here."""
        table = self.table
        if table.takeover_s is None or table.seats[seat].kind == "bot" or self.connected(seat):
            return None
        left = self.left_at.get(seat, self.loaded_at)
        return max(0.0, left + table.takeover_s - time.monotonic())


class Server:
    """The tables in memory and the handling of every message."""

    def __init__(self, saves: Path, rules_files: Mapping[str, Rules], aliases: Mapping[str, str],
                 policy_loader: Any = None, default_delay_ms: int = 600, limits: Limits | None = None) -> None:
        self.saves = saves
        self.rules_files = dict(rules_files)
        self.aliases = dict(aliases)
        self.policy_loader = policy_loader
        self.default_delay_ms = default_delay_ms
        self.limits = limits or Limits()
        self.tables: dict[str, LiveTable] = {}
        self._tasks: set[asyncio.Task] = set()
        self.bot_threads = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(2, os.cpu_count() or 1), thread_name_prefix="blackout-bot"
        )
        """Where bots decide: apart from the default pool that reads saves and replays for everybody."""

    # ----------------------------------------------------------- helpers
    def hello(self) -> dict[str, Any]:
        presets = []
        for name in [*preset_names(), *self.rules_files]:
            rules = self.rules(name)
            presets.append({"name": name, "players": rules.num_players, "hand_sizes": list(rules.hand_sizes),
                            "hook": rules.hook, "summary": rules.describe().split("\n")[1]})
        return {"type": "hello", "version": VERSION, "presets": presets,
                "policies": [*(n for n in LOADERS if n != "rllib"), *self.aliases],
                "defaults": {"rules": "standard", "players": 4, "bot_delay_ms": self.default_delay_ms,
                             "max_bot_delay_ms": MAX_BOT_DELAY_MS},
                "limits": {"max_message_chars": self.limits.max_message_chars,
                           "messages_per_second": self.limits.messages_per_second,
                           "max_name_chars": MAX_NAME_CHARS, "bot_budget": dict(BOT_BUDGET_LIMITS)}}

    def rules(self, name: Any, players: Any = None, hook: Any = None) -> Rules:
        if not isinstance(name, str):
            raise TableError(f"rules: a preset name, got {name!r}")
        if name in self.rules_files:
            rules = self.rules_files[name]
        elif name in preset_names():
            rules = Rules.preset(name)
        else:
            raise TableError(f"rules: unknown rules {name!r}; known: {', '.join([*preset_names(), *self.rules_files])}")
        changes: dict[str, Any] = {}
        if players is not None:
            changes["num_players"] = players
        if hook is not None:
            if not isinstance(hook, bool):
                raise TableError(f"hook: true or false, got {hook!r}")
            changes["hook"] = hook
        try:
            return rules.replace(**changes) if changes else rules
        except RulesError as error:
            raise TableError(str(error)) from None

    async def send(self, connection: Connection, message: dict[str, Any]) -> None:
        try:
            await connection.websocket.send_text(json.dumps(message))
        except Exception:  # a closed socket: its own loop removes it
            pass

    async def error(self, connection: Connection, message: str, code: str = "bad_message") -> None:
        await self.send(connection, {"type": "error", "message": message, "code": code})

    def state_for(self, live: LiveTable, connection: Connection) -> dict[str, Any]:
        waiting = live.waiting
        table = live.table
        if waiting is None and table.status == "playing" and not table.game.is_over:
            seat = table.game.current_player
            if table.seats[seat].kind != "bot" and not live.connected(seat):
                left = live.takeover_left(seat)
                who = table.seats[seat].name
                reason = f"{who} is away; the table waits for them" if left is None else \
                    f"{who} is away; a bot plays for them in {left:.0f} s"
                if table.seats[seat].kind == "open":
                    reason = f"seat {seat} is free: the table waits for a person to take it"
                waiting = {"seat": seat, "reason": reason}
        return messages.state_message(table, connection.viewer, live.away_seats(), waiting)

    async def broadcast(self, live: LiveTable) -> None:
        for connection in list(live.connections):
            await self.send(connection, self.state_for(live, connection))

    def live(self, table_id: Any) -> LiveTable:
        if isinstance(table_id, str) and table_id in self.tables:
            return self.tables[table_id]
        table = Table.load(table_id, self.saves, self.policy_loader, self.default_delay_ms)
        self._make_room()
        live = self.tables[table.table_id] = LiveTable(table)
        return live

    def _make_room(self) -> None:
        """Room for one more table in memory: drop the tables nobody is connected to (saved, they load again
        when someone comes back); refuse when every table is in use."""
        for table_id, live in list(self.tables.items()):
            if not live.connections and (live.runner is None or live.runner.done()):
                del self.tables[table_id]
        if len(self.tables) >= self.limits.max_tables:
            raise TableError(f"this server is full: {len(self.tables)} tables are in use (at most "
                             f"{self.limits.max_tables}); try again later", "limit")

    # ----------------------------------------------------------- messages
    def decode(self, text: str) -> dict[str, Any]:
        """A client's text as a message, within the size and depth limits; TableError naming the problem."""
        limit = self.limits.max_message_chars
        if len(text) > limit:
            raise TableError(f"message too long ({len(text)} characters; at most {limit})", "limit")
        try:
            message = json.loads(text)
        except RecursionError:
            raise TableError(f"a message may nest arrays and objects at most {self.limits.max_json_depth} deep",
                             "limit") from None
        except ValueError:
            raise TableError("a message is one JSON object, e.g. {\"type\": \"act\", \"action\": 53}") from None
        if json_depth(message) > self.limits.max_json_depth:
            raise TableError(f"a message may nest arrays and objects at most {self.limits.max_json_depth} deep",
                             "limit")
        if not isinstance(message, dict) or not isinstance(message.get("type"), str):
            raise TableError("a message is a JSON object with a \"type\"")
        return message

    async def handle(self, connection: Connection, text: str | None) -> None:
        """One frame from a client (``text`` None: a binary frame): answered, or refused with an ``error``."""
        if not connection.take_message(self.limits):
            # A flood is logged once a second at most, with the count dropped meanwhile.
            connection.dropped += 1
            now = time.monotonic()
            if now - connection.drop_logged_at >= 1.0:
                log.warning("table %s: refused %d message(s) of one connection: over %g a second",
                            connection.table_id or "-", connection.dropped, self.limits.messages_per_second)
                connection.dropped, connection.drop_logged_at = 0, now
            await self.error(connection, f"too many messages: at most {self.limits.messages_per_second:g} a "
                             "second; this one was dropped", "limit")
            return
        kind = "a message"
        try:
            if text is None:
                raise TableError("binary frames are not part of the protocol: send JSON text")
            message = self.decode(text)
            kind = repr(message["type"][:40])
            handler = getattr(self, f"on_{message['type']}", None)
            if handler is None or message["type"] not in TYPES:
                raise TableError(f"unknown message type {kind}; known: {', '.join(TYPES)}")
            await handler(connection, message)
        except TableError as error:
            log.warning("table %s: refused %s: %s", connection.table_id or "-", kind, error)
            await self.error(connection, str(error), error.code)

    def _leave(self, connection: Connection) -> None:
        if connection.table_id in self.tables:
            live = self.tables[connection.table_id]
            live.connections.discard(connection)
            if connection.viewer.seat is not None and not live.connected(connection.viewer.seat):
                live.left_at[connection.viewer.seat] = time.monotonic()
                self.kick(live)
                # The others see the seat "away" now, not at the next move.
                task = asyncio.get_running_loop().create_task(self.broadcast(live))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        connection.table_id, connection.token, connection.replay = None, None, None
        connection.viewer = messages.Viewer(why=connection.viewer.why)

    async def _enter(self, connection: Connection, live: LiveTable, seat: int | None, token: str | None) -> None:
        self._leave(connection)
        connection.table_id = live.table.table_id
        connection.token = token
        connection.viewer = messages.Viewer(seat=seat, host=live.table.is_host(token), why=connection.viewer.why)
        live.connections.add(connection)
        await self.send(connection, {"type": "joined", "table": live.table.table_id, "seat": seat,
                                     "token": token, "host": connection.viewer.host})
        await self.broadcast(live)
        self.kick(live)

    async def on_new(self, connection: Connection, message: dict[str, Any]) -> None:
        if connection.tables_created >= self.limits.tables_per_connection:
            raise TableError(f"this connection has created {connection.tables_created} tables, the most one may "
                             "(reload the page to start more)", "limit")
        rules = self.rules(message.get("rules", "standard"), message.get("players"), message.get("hook"))
        seats = message.get("seats")
        if seats is None:
            seats = ["you"] + ["heuristic"] * (rules.num_players - 1)
        seed = message.get("seed")
        self._make_room()
        table, token = Table.create(
            rules, message.get("rules", "standard"), seats,
            fill=message.get("fill", "heuristic"),
            bot_delay_ms=check_bot_delay(message.get("bot_delay_ms", self.default_delay_ms)),
            takeover_s=check_takeover(message.get("takeover_s")),
            seed=seed, saves=self.saves, policy_loader=self.policy_loader, aliases=self.aliases,
            name=message.get("name"),
        )
        connection.tables_created += 1
        live = self.tables[table.table_id] = LiveTable(table)
        seat = next((i for i, s in enumerate(seats) if s == "you"), None)
        log.info("table %s: new, %s, %d players, seats %s", table.table_id, table.rules_name,
                 rules.num_players, [s.policy or s.kind for s in table.seats])
        await self._enter(connection, live, seat, token)

    async def on_join(self, connection: Connection, message: dict[str, Any]) -> None:
        token = message.get("token")
        if token is not None and not isinstance(token, str):
            raise TableError(f"token: a string, got {type(token).__name__}")
        live = self.live(message.get("table"))
        table = live.table
        if token is not None:
            seat = table.seat_of(token)
            if seat is None and not table.is_host(token):
                raise TableError(
                    f"this browser's seat at table {table.table_id} is not valid there (its token is unknown: "
                    "from an older game of that id, or changed by hand), so no seat was taken. Open the table's "
                    "link again to join as a new player, or to watch when no seat is free", "bad_token")
        else:
            taken = table.take_open_seat(message.get("name"))
            seat, token = taken if taken is not None else (None, None)  # no free seat: a spectator
        await self._enter(connection, live, seat, token)

    async def on_name(self, connection: Connection, message: dict[str, Any]) -> None:
        live = self._table(connection)
        live.table.rename(connection.viewer.seat, message.get("name"))
        await self.broadcast(live)

    def _table(self, connection: Connection) -> LiveTable:
        if connection.table_id is None or connection.table_id not in self.tables:
            raise TableError("join or create a table first", "no_table")
        return self.tables[connection.table_id]

    async def on_start(self, connection: Connection, message: dict[str, Any]) -> None:
        live = self._table(connection)
        live.table.start(connection.token)
        await self.broadcast(live)
        self.kick(live)

    async def on_act(self, connection: Connection, message: dict[str, Any]) -> None:
        if connection.replay is not None:
            raise TableError("this is the replay viewer: nothing can be played here", "forbidden")
        live = self._table(connection)
        live.table.act(connection.viewer.seat, message.get("action"))
        live.waiting = None
        await self.broadcast(live)
        self.kick(live)

    async def on_why(self, connection: Connection, message: dict[str, Any]) -> None:
        on = message.get("on")
        if not isinstance(on, bool):
            raise TableError(f"why: 'on' must be true or false, got {on!r}")
        connection.viewer.why = on
        await self._refresh(connection)

    async def on_control(self, connection: Connection, message: dict[str, Any]) -> None:
        live = self._table(connection)
        table = live.table
        # Every field is checked before any is applied: a refused control changes nothing.
        reveal = message.get("reveal")
        if reveal is not None:
            if not isinstance(reveal, bool):
                raise TableError(f"reveal: true or false, got {reveal!r}")
            if reveal and table.has_people and not table.game.is_over:
                raise TableError("hands stay hidden while people play at this table", "forbidden")
        table_changes = {key: message[key] for key in ("paused", "step", "bot_delay_ms", "retry", "lobby_open")
                         if key in message}
        if table_changes:
            if not connection.viewer.host:
                raise TableError("only the host sets the bots' speed, pauses or steps them, or closes the lobby",
                                 "forbidden")
            if table_changes.get("lobby_open", False) is not False:
                raise TableError(f"lobby_open: false closes the lobby, got {table_changes['lobby_open']!r}")
            delay = check_bot_delay(table_changes["bot_delay_ms"]) if "bot_delay_ms" in table_changes else None
            if not isinstance(table_changes.get("paused", False), bool):
                raise TableError(f"paused: true or false, got {table_changes['paused']!r}")
            if "lobby_open" in table_changes:
                table.close_lobby(connection.token)
            if delay is not None:
                table.bot_delay_ms = delay
            if "paused" in table_changes:
                table.paused = table_changes["paused"]
            if table_changes.get("step"):
                live.step_once = True
            live.waiting = None  # a host's control also retries a bot that failed
            table.save()
            self.kick(live)
        if reveal is not None:
            connection.viewer.reveal = reveal
        if connection.replay is not None:
            await self._refresh(connection)
        else:
            await self.broadcast(live)

    async def on_list(self, connection: Connection, message: dict[str, Any]) -> None:
        """The games this browser holds a seat (or the host's) token for: ``tables`` is its
        ``[{"table": id, "token": token}]``. Nobody else's table is ever listed."""
        held = message.get("tables", [])
        if not isinstance(held, list) or len(held) > self.limits.max_listed or not all(
                isinstance(entry, dict) and isinstance(entry.get("table"), str) and isinstance(entry.get("token"), str)
                for entry in held):
            raise TableError(f"list: 'tables' is a list of at most {self.limits.max_listed} "
                             "{\"table\": ID, \"token\": TOKEN} of this browser's tables")
        # Saves are read (and their games replayed) in a worker thread: the event loop serves the other tables.
        # One entry a table (the first): a list that names one save many times reads it once.
        first: dict[str, dict[str, str]] = {}
        for entry in held:
            first.setdefault(entry["table"], entry)
        held = list(first.values())
        on_disk = await asyncio.to_thread(self._load_saved, [e["table"] for e in held if e["table"] not in self.tables])
        games = []
        for entry in held:
            table_id, token = entry["table"], entry["token"]
            table = self.tables[table_id].table if table_id in self.tables else on_disk.get(table_id)
            if table is None or not table.holds(token) or table.save_path is None or not table.save_path.is_file():
                continue  # gone, never there, or not this browser's
            game = table.game
            games.append({"id": table_id, "players": game.num_players, "rules": table.rules_name,
                          "round": game.round_index, "num_rounds": game.num_rounds, "over": game.is_over,
                          "seat": table.seat_of(token), "host": table.is_host(token),
                          "names": [seat.name for seat in table.seats],
                          "updated": table.save_path.stat().st_mtime})
        games.sort(key=lambda game: game["updated"], reverse=True)
        await self.send(connection, {"type": "games", "games": games})

    def _load_saved(self, table_ids: list[str]) -> dict[str, Table]:
        tables = {}
        for table_id in table_ids:
            try:
                tables[table_id] = Table.load(table_id, self.saves)
            except TableError:
                continue
        return tables

    async def on_replay(self, connection: Connection, message: dict[str, Any]) -> None:
        from .replay import Replay

        if "game" in message:
            live = self.live(message["game"])
            replay = Replay.from_table(live.table)
        elif "content" in message:
            # Up to a second of replaying for the longest log: in a worker thread, not in the event loop.
            replay = await asyncio.to_thread(Replay.from_text, message["content"], self.limits.max_replay_moves)
        else:
            raise TableError("replay: give 'game' (a saved game's id) or 'content' (a save or game log's text)")
        index = message.get("index", 0)
        replay.select(index)
        self._leave(connection)
        connection.replay = replay
        await self._refresh(connection)

    async def on_seek(self, connection: Connection, message: dict[str, Any]) -> None:
        if connection.replay is None:
            raise TableError("seek works in the replay viewer: open a replay first")
        connection.replay.go(message.get("index"), message.get("move"))  # both checked before either changes
        await self._refresh(connection)

    async def _refresh(self, connection: Connection) -> None:
        if connection.replay is not None:
            await self.send(connection, connection.replay.state(connection.viewer))
        elif connection.table_id in self.tables:
            await self.send(connection, self.state_for(self.tables[connection.table_id], connection))

    # ------------------------------------------------------------- bots
    def kick(self, live: LiveTable) -> None:
        """Start the table's bot task unless it runs."""
        if live.runner is None or live.runner.done():
            live.runner = asyncio.get_running_loop().create_task(self.run_bots(live))

    async def run_bots(self, live: LiveTable) -> None:
        """Play the bots' moves (and away people's, after the takeover time) one at a time, at the table's speed."""
        table = live.table
        while live.waiting is None:
            if table.paused and not live.step_once:
                return
            if not live.connections:  # nobody at the table: it waits, saved, until someone comes back
                return
            seat = table.bot_seat(away=lambda s: live.takeover_left(s) == 0.0)
            if seat is None:
                current = table.game.current_player
                if table.status == "playing" and current is not None and live.takeover_left(current):
                    await asyncio.sleep(min(1.0, live.takeover_left(current) or 0.0) + 0.01)
                    await self.broadcast(live)  # the countdown in the page
                    continue
                return
            move = len(table.game.actions)
            step, live.step_once = live.step_once, False  # (a step the host asks for while this one is decided counts)
            loop = asyncio.get_running_loop()
            started = loop.time()
            try:
                # In the bots' own threads (a few busy tables do not stall list and replay), and before the delay:
                # the move comes when the delay is over whatever the decision took, so its arrival does not tell
                # a quick decision (one legal card) from a long one.
                action, why, elapsed_ms = await loop.run_in_executor(self.bot_threads, table.decide, seat)
            except TableError as error:  # (the page's text hides the server's files; the log has them)
                live.step_once = live.step_once or step  # (the host's retry plays the step asked for)
                cause = f" ({type(error.__cause__).__name__}: {error.__cause__})" if error.__cause__ else ""
                log.warning("table %s: %s%s", table.table_id, error, cause)
                live.waiting = {"seat": seat, "reason": f"{error} The game waits; the host can retry."}
                for connection in list(live.connections):
                    await self.error(connection, str(error), error.code)
                await self.broadcast(live)
                continue  # (the loop ends while the table waits; a retry sent during the sends above goes on)
            if table.bot_delay_ms and not step:
                # the delay as it is now: a host who speeds the bots up (or pauses them) is followed at once
                while not table.paused and (left := started + table.bot_delay_ms / 1000.0 - loop.time()) > 0:
                    await asyncio.sleep(min(left, 0.05))
                if table.paused or len(table.game.actions) != move:
                    continue  # (decided again when the bots go on; a seeded bot decides the same, its seed is the move's)
            if table.apply_bot(seat, action, why, move):
                table.last_decision_ms = elapsed_ms
                log.info("table %s: move %d, seat %d (%s) served in %.1f ms", table.table_id, move, seat,
                         table.seats[seat].policy or table.fill, elapsed_ms)
                await self.broadcast(live)


TYPES = ("new", "join", "name", "start", "act", "why", "control", "replay", "seek", "list")


def create_app(
    saves: str | Path,
    rules_files: Mapping[str, Rules] | None = None,
    policies: Mapping[str, str] | None = None,
    policy_loader: Any = None,
    bot_delay_ms: int = 600,
    allow_origins: Sequence[str] = (),
    limits: Limits | None = None,
    ladder: str | Path | None = None,
) -> Starlette:
    """The app: ``/`` the page, ``/static/...`` its assets, ``/ws`` the WebSocket, ``/health`` a JSON status.

    Args:
        saves: the folder of saved games (created if missing); a client names a game by id, never by path.
        rules_files: extra rules the page offers, by name (``blackout serve --rules FILE.yaml``).
        policies: extra policies the page offers, by name (``--policy NAME=ppo:PATH``): a browser may not name a file.
        policy_loader: ``(spec, rules, seed) -> policy`` (default: the policy registry).
        bot_delay_ms: the default pause before each bot move.
        allow_origins: origins besides the page's own whose pages may open the WebSocket
            (``--allow-origin https://cards.example.org``, e.g. behind a reverse proxy): see :func:`origin_allowed`.
        limits: what a client may ask (default :class:`Limits`).
        ladder: a ladder file (``blackout ladder``) whose leaderboard ``/ladder`` and ``/ladder.json`` show,
            read-only; a file that is not a ladder is refused here, before the server listens.
    """
    saves = Path(saves)
    allowed = frozenset(normalize_origin(origin) for origin in allow_origins)
    bot_delay_ms = check_bot_delay(bot_delay_ms)
    extra_routes = []
    if ladder is not None:  # (checked before the saves folder is made: a refused start leaves nothing)
        from .ladder_page import ladder_routes

        extra_routes = ladder_routes(ladder)
    try:
        # Only its owner may list it: the files' names are the tables' ids, which let one in.
        saves.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise ValueError(f"saves: {str(saves)!r} is not a folder that can be made or written ({error.strerror or error})") from None
    server = Server(saves, rules_files or {}, policies or {}, policy_loader, bot_delay_ms, limits)

    async def index(request: Any) -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def health(request: Any) -> JSONResponse:
        return JSONResponse({"ok": True, "tables": len(server.tables)})

    async def websocket_endpoint(websocket: WebSocket) -> None:
        origin, host = websocket.headers.get("origin"), websocket.headers.get("host")
        if not origin_allowed(origin, host, allowed):
            # Refused before anything is read: the handshake gets HTTP 403.
            log.warning("refused a WebSocket from the page of %r (host %r): not this server's page; "
                        "name it with --allow-origin to allow it", origin, host)
            await websocket.close(code=1008)
            return
        await websocket.accept()
        connection = Connection(websocket, allowance=float(server.limits.message_burst))
        await server.send(connection, server.hello())
        try:
            while True:
                frame = await websocket.receive()
                if frame["type"] == "websocket.disconnect":
                    log.info("table %s: a connection closed (code %s)", connection.table_id or "-", frame.get("code"))
                    break
                await server.handle(connection, frame.get("text"))
        except Exception:  # a bug must not leave the table's state half-changed without a trace
            log.exception("table %s: connection failed", connection.table_id or "-")
        finally:
            server._leave(connection)

    routes = [
        Route("/", index),
        Route("/health", health),
        WebSocketRoute("/ws", websocket_endpoint),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    routes[:0] = extra_routes
    app = Starlette(routes=routes, middleware=[Middleware(_Guard, allowed=allowed)])
    app.state.server = server
    return app


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    saves: str | Path | None = None,
    open_browser: bool = False,
    rules_files: Mapping[str, Rules] | None = None,
    policies: Mapping[str, str] | None = None,
    bot_delay_ms: int = 600,
    allow_origins: Sequence[str] = (),
    ladder: str | Path | None = None,
) -> None:
    """Run the server on uvicorn until interrupted."""
    import uvicorn

    saves = Path(saves) if saves is not None else default_saves()
    check_listen(host, port)
    limits = Limits()
    app = create_app(saves, rules_files, policies, bot_delay_ms=bot_delay_ms, allow_origins=allow_origins,
                     limits=limits, ladder=ladder)
    url = f"http://{'localhost' if host in LOOPBACK_HOSTS else host}:{port}/"
    print(f"blackout serve: {url} (saves in {saves})", flush=True)
    if ladder is not None:
        print(f"blackout serve: the leaderboard of {ladder} at {url}ladder", flush=True)
    if host not in LOOPBACK_HOSTS:
        print(f"blackout serve: listening on {host}, not only this machine: anyone who reaches it and has a "
              "table's link can play there (there are no accounts); see docs/web.md, Play with friends", flush=True)
    if open_browser:
        import threading
        import webbrowser

        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    uvicorn.run(app, host=host, port=port, log_level="info", ws_max_size=limits.max_frame_bytes)


def check_listen(host: str, port: int) -> None:
    """ValueError in one line, before anything is printed, when ``host:port`` cannot be listened on
    (an address in use, a host name that does not resolve); the socket tried is closed at once."""
    import socket

    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, kind, protocol, _, address in addresses:  # IPv4 and IPv6 alike, as uvicorn's asyncio binds
            with socket.socket(family, kind, protocol) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                probe.bind(address)
    except OSError as error:  # socket.gaierror included
        raise ValueError(f"cannot listen on --host {host} --port {port}: {error.strerror or error}") from None


def default_saves() -> Path:
    """``$XDG_DATA_HOME/blackout/web``, or ``~/.local/share/blackout/web``."""
    from ..play.session import default_save_path

    return default_save_path().parent / "web"
