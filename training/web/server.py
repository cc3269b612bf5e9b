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
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from blackout_env import Rules, SaveFileError
from blackout_env.policies import LOADERS
from blackout_env.rules import RulesError, preset_names

from ..play.session import parse_save
from . import messages
from .table import MAX_BOT_DELAY_MS, Table, TableError, check_bot_delay, check_takeover

__all__ = ["LiveTable", "create_app", "serve"]

log = logging.getLogger("blackout.serve")
STATIC = Path(str(resources.files("blackout_training.web") / "static"))
MAX_MESSAGE_CHARS = 2_000_000
"""The largest message a client may send (a game log opened in the replay viewer)."""
VERSION = 1


@dataclass(eq=False)
class Connection:
    """One WebSocket: where it sits and what it asked to see."""

    websocket: WebSocket
    viewer: messages.Viewer = field(default_factory=messages.Viewer)
    table_id: str | None = None
    token: str | None = None
    replay: Any = None


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
                 policy_loader: Any = None, default_delay_ms: int = 600) -> None:
        self.saves = saves
        self.rules_files = dict(rules_files)
        self.aliases = dict(aliases)
        self.policy_loader = policy_loader
        self.default_delay_ms = default_delay_ms
        self.tables: dict[str, LiveTable] = {}
        self._tasks: set[asyncio.Task] = set()

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
                             "max_bot_delay_ms": MAX_BOT_DELAY_MS}}

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
        live = self.tables[table.table_id] = LiveTable(table)
        return live

    # ----------------------------------------------------------- messages
    async def handle(self, connection: Connection, text: str) -> None:
        try:
            if len(text) > MAX_MESSAGE_CHARS:
                raise TableError(f"message too long ({len(text)} characters; at most {MAX_MESSAGE_CHARS})")
            try:
                message = json.loads(text)
            except ValueError:
                raise TableError("a message is one JSON object, e.g. {\"type\": \"act\", \"action\": 53}") from None
            if not isinstance(message, dict) or not isinstance(message.get("type"), str):
                raise TableError("a message is a JSON object with a \"type\"")
            handler = getattr(self, f"on_{message['type']}", None)
            if handler is None or message["type"] not in TYPES:
                raise TableError(f"unknown message type {message['type'][:40]!r}; known: {', '.join(TYPES)}")
            await handler(connection, message)
        except TableError as error:
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
        rules = self.rules(message.get("rules", "standard"), message.get("players"), message.get("hook"))
        seats = message.get("seats")
        if seats is None:
            seats = ["you"] + ["heuristic"] * (rules.num_players - 1)
        seed = message.get("seed")
        table, token = Table.create(
            rules, message.get("rules", "standard"), seats,
            fill=message.get("fill", "heuristic"),
            bot_delay_ms=check_bot_delay(message.get("bot_delay_ms", self.default_delay_ms)),
            takeover_s=check_takeover(message.get("takeover_s")),
            seed=seed, saves=self.saves, policy_loader=self.policy_loader, aliases=self.aliases,
        )
        live = self.tables[table.table_id] = LiveTable(table)
        seat = next((i for i, s in enumerate(seats) if s == "you"), None)
        log.info("table %s: new, %s, %d players, seats %s", table.table_id, table.rules_name,
                 rules.num_players, [s.policy or s.kind for s in table.seats])
        await self._enter(connection, live, seat, token)

    async def on_join(self, connection: Connection, message: dict[str, Any]) -> None:
        live = self.live(message.get("table"))
        token = message.get("token")
        if token is not None and not isinstance(token, str):
            raise TableError(f"token: a string, got {type(token).__name__}")
        seat = live.table.seat_of(token)
        if seat is None and not live.table.is_host(token):
            taken = live.table.take_open_seat()
            seat, token = taken if taken is not None else (None, None)  # no free seat: a spectator
        await self._enter(connection, live, seat, token)

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
        reveal = message.get("reveal")
        if reveal is not None:
            if not isinstance(reveal, bool):
                raise TableError(f"reveal: true or false, got {reveal!r}")
            if reveal and table.has_people and not table.game.is_over:
                raise TableError("hands stay hidden while people play at this table", "forbidden")
            connection.viewer.reveal = reveal
        table_changes = {key: message[key] for key in ("paused", "step", "bot_delay_ms", "retry") if key in message}
        if table_changes:
            if not connection.viewer.host:
                raise TableError("only the host sets the bots' speed, pauses or steps them", "forbidden")
            if "bot_delay_ms" in table_changes:
                table.bot_delay_ms = check_bot_delay(table_changes["bot_delay_ms"])
            if "paused" in table_changes:
                if not isinstance(table_changes["paused"], bool):
                    raise TableError(f"paused: true or false, got {table_changes['paused']!r}")
                table.paused = table_changes["paused"]
            if table_changes.get("step"):
                live.step_once = True
            live.waiting = None  # a host's control also retries a bot that failed
            table.save()
            self.kick(live)
        if connection.replay is not None:
            await self._refresh(connection)
        else:
            await self.broadcast(live)

    async def on_list(self, connection: Connection, message: dict[str, Any]) -> None:
        games = []
        for path in sorted(self.saves.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)[:100]:
            try:
                saved = parse_save(path.read_text(encoding="utf-8"), path.name)
            except (SaveFileError, OSError):
                continue
            game = saved.game
            games.append({"id": path.stem, "players": game.num_players,
                          "rules": (saved.web or {}).get("rules_name", "saved"),
                          "round": game.round_index, "num_rounds": game.num_rounds, "over": game.is_over,
                          "updated": path.stat().st_mtime})
        await self.send(connection, {"type": "games", "games": games})

    async def on_replay(self, connection: Connection, message: dict[str, Any]) -> None:
        from .replay import Replay

        if "game" in message:
            live = self.live(message["game"])
            replay = Replay.from_table(live.table)
        elif "content" in message:
            replay = Replay.from_text(message["content"])
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
        if "index" in message:
            connection.replay.select(message["index"])
        connection.replay.seek(message.get("move", connection.replay.move))
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
            if table.bot_delay_ms and not live.step_once:
                await asyncio.sleep(table.bot_delay_ms / 1000.0)
                if table.paused or len(table.game.actions) != move:
                    continue
            live.step_once = False
            try:
                action, why, elapsed_ms = await asyncio.to_thread(table.decide, seat)
            except TableError as error:
                log.error("table %s: %s", table.table_id, error)
                live.waiting = {"seat": seat, "reason": f"{error} The game waits; the host can retry."}
                for connection in list(live.connections):
                    await self.error(connection, str(error), error.code)
                await self.broadcast(live)
                return
            if table.apply_bot(seat, action, why, move):
                table.last_decision_ms = elapsed_ms
                log.info("table %s: move %d, seat %d (%s) served in %.1f ms", table.table_id, move, seat,
                         table.seats[seat].policy or table.fill, elapsed_ms)
                await self.broadcast(live)


TYPES = ("new", "join", "start", "act", "why", "control", "replay", "seek", "list")


def create_app(
    saves: str | Path,
    rules_files: Mapping[str, Rules] | None = None,
    policies: Mapping[str, str] | None = None,
    policy_loader: Any = None,
    bot_delay_ms: int = 600,
) -> Starlette:
    """The app: ``/`` the page, ``/static/...`` its assets, ``/ws`` the WebSocket, ``/health`` a JSON status.

    Args:
        saves: the folder of saved games (created if missing); a client names a game by id, never by path.
        rules_files: extra rules the page offers, by name (``blackout serve --rules FILE.yaml``).
        policies: extra policies the page offers, by name (``--policy NAME=ppo:PATH``): a browser may not name a file.
        policy_loader: ``(spec, rules, seed) -> policy`` (default: the policy registry).
        bot_delay_ms: the default pause before each bot move.
    """
    saves = Path(saves)
    saves.mkdir(parents=True, exist_ok=True)
    server = Server(saves, rules_files or {}, policies or {}, policy_loader, check_bot_delay(bot_delay_ms))

    async def index(request: Any) -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    async def health(request: Any) -> JSONResponse:
        return JSONResponse({"ok": True, "tables": len(server.tables)})

    async def websocket_endpoint(websocket: WebSocket) -> None:
        await websocket.accept()
        connection = Connection(websocket)
        await server.send(connection, server.hello())
        try:
            while True:
                text = await websocket.receive_text()
                await server.handle(connection, text)
        except WebSocketDisconnect:
            pass
        except Exception:  # a bug must not leave the table's state half-changed without a trace
            log.exception("connection failed")
        finally:
            server._leave(connection)

    app = Starlette(routes=[
        Route("/", index),
        Route("/health", health),
        WebSocketRoute("/ws", websocket_endpoint),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ])
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
) -> None:
    """Run the server on uvicorn until interrupted."""
    import uvicorn

    saves = Path(saves) if saves is not None else default_saves()
    app = create_app(saves, rules_files, policies, bot_delay_ms=bot_delay_ms)
    url = f"http://{'localhost' if host in ('127.0.0.1', '::1', 'localhost') else host}:{port}/"
    print(f"blackout serve: {url} (saves in {saves})", flush=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(f"blackout serve: listening on {host}, not only this machine: anyone who reaches it can play here "
              "(there are no accounts)", flush=True)
    if open_browser:
        import threading
        import webbrowser

        threading.Timer(1.0, webbrowser.open, args=(url,)).start()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    uvicorn.run(app, host=host, port=port, log_level="info")


def default_saves() -> Path:
    """``$XDG_DATA_HOME/blackout/web``, or ``~/.local/share/blackout/web``."""
    from ..play.session import default_save_path

    return default_save_path().parent / "web"
