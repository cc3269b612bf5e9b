"""A table of ``blackout serve``: one match, who sits where, and its save file.

A :class:`Table` is the server's state of one game, without any networking, so
it is tested as plain Python: people hold seats by secret tokens, bots by
policy specs; every action goes through the engine (:class:`BlackoutGame`),
which checks it; after every change the table writes itself to its save file
in the format of ``blackout play`` (:func:`~blackout_training.play.session.write_save`),
with what only the browser needs under the save's ``"web"`` key. What each
connection is sent is :mod:`blackout_training.web.messages`; when bots move is
:mod:`blackout_training.web.server`.

Seat tokens are kept as SHA-256 hashes, so a save file lets nobody take a seat.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blackout_env import BlackoutGame, IllegalActionError, PlayerView, Rules, SaveFileError
from blackout_env.agents.policies import Explanation, explain, names_file, parse_options, parse_spec, spec_files

from ..evaluation.tournament import single_threaded_torch
from ..play.session import SavedSession, Seat, decision_seed, read_save, write_save

__all__ = [
    "BOT_BUDGET_LIMITS",
    "MAX_BOT_DELAY_MS",
    "MAX_NAME_CHARS",
    "MAX_TAKEOVER_S",
    "TABLE_ID",
    "Table",
    "TableError",
    "WebSeat",
    "check_display_name",
    "check_policy_spec",
]

TABLE_ID = re.compile(r"\A[A-Za-z0-9_-]{6,40}\Z")
"""What a table id looks like: it names a file in the saves folder, so it may hold nothing else."""
MAX_BOT_DELAY_MS = 5000
MAX_TAKEOVER_S = 3600
MAX_NAME_CHARS = 24
"""The longest display name a person may choose."""
DEFAULT_PERSON_NAME = "player"
WEB_SAVE_VERSION = 1

BOT_BUDGET_LIMITS: dict[str, float] = {
    "simulations": 2000,     # ismcts, ppo+search(-deep): tree simulations per decision
    "time_ms": 1000,         # ismcts, ppo+search(-deep): milliseconds per decision
    "time_limit_ms": 1000,   # search: milliseconds per decision
    "samples": 64,           # search, ppo+rollout: sampled deals per decision (4x search's default, 2x ppo+rollout's)
    "bid_samples": 256,      # search: sampled deals per bid (4 x samples unless given: 4 x 64)
    "card_samples": 64,      # ppo+rollout: sampled deals per card decision
    "endgame": 4,            # ismcts, ppo+search(-deep): tricks left solved exactly in every simulation
    "bid_search": 4,         # ismcts, ppo+search(-deep): tricks solved exactly in every playout of a bid
}
"""The most work per decision a browser may ask of a bot, by the policy option that sets it.

A spec named on the server's command line (``blackout serve --policy NAME=SPEC``) is the operator's choice
and may go beyond these; every spec a browser writes itself is checked against them (docs/web.md, Limits)."""


class TableError(ValueError):
    """A request the table refuses; ``code`` says which kind (the protocol's error codes)."""

    def __init__(self, message: str, code: str = "bad_message") -> None:
        super().__init__(message)
        self.code = code


PolicyLoader = Callable[[str, Rules, int], Any]


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_table_id() -> str:
    """A fresh, unguessable table id (also the save file's name): 128 random bits.

    The id is what a table's link carries, and knowing it is what lets a person join: it is never listed
    to anybody who does not hold a seat there (docs/web.md, Private tables)."""
    return secrets.token_urlsafe(16)


def seat_label(index: int, name: str) -> str:
    """What every connection calls seat ``index``: "P2 Ann", "P1 heuristic"."""
    return f"P{index} {name}"


def check_display_name(name: Any) -> str:
    """A person's display name, checked: 1..MAX_NAME_CHARS printable characters (spaces collapsed)."""
    if name is None:
        return DEFAULT_PERSON_NAME
    if not isinstance(name, str):
        raise TableError(f"name: a short text, got {type(name).__name__}")
    text = " ".join(name.split())
    if not text or len(text) > MAX_NAME_CHARS:
        raise TableError(f"name: 1 to {MAX_NAME_CHARS} characters, got {len(text)}")
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise TableError("name: letters, digits, spaces and punctuation only (no control characters)")
    return text


@dataclass
class WebSeat:
    """A seat as the server sees it: a person (by token), a bot (by policy spec), or open (in the lobby)."""

    kind: str
    """"person", "bot" or "open"."""
    name: str
    policy: str | None = None
    token_hash: str | None = None


@dataclass
class Table:
    """One match at the server. Create with :meth:`create` or :meth:`load`; act with :meth:`act`.

    Attributes:
        table_id: the table's id (the save file is ``saves/<table_id>.json``).
        game: the engine.
        seats: who holds each seat.
        status: "lobby" (waiting for people and the host's start), "playing" or "over".
        host_hash: the hash of the host's token (the host starts the game and sets the bots' speed).
        fill: the policy spec that takes open seats left at the start, and plays for a person
            who is away longer than ``takeover_s``.
    """

    table_id: str
    game: BlackoutGame
    seats: list[WebSeat]
    bot_seed: int
    rules_name: str
    status: str = "lobby"
    host_hash: str | None = None
    fill: str = "heuristic"
    bot_delay_ms: int = 600
    takeover_s: float | None = None
    saves: Path | None = None
    policy_loader: PolicyLoader | None = None
    paused: bool = False
    lobby_open: bool = True
    """Whether a person with the link may still take an open seat (the host may close the lobby)."""
    last_why: dict[int, tuple[int, Explanation]] = field(default_factory=dict)
    """Per seat, the move number and the reasons of its last bot decision (for the "why" overlay)."""
    last_decision_ms: float | None = None
    _policies: dict[tuple[int, str], Any] = field(default_factory=dict)
    _suggester: Any = None

    # ------------------------------------------------------------ creation
    @classmethod
    def create(
        cls,
        rules: Rules,
        rules_name: str,
        seats: Sequence[str],
        *,
        fill: str = "heuristic",
        bot_delay_ms: int = 600,
        takeover_s: float | None = None,
        seed: int | None = None,
        saves: Path | None = None,
        policy_loader: PolicyLoader | None = None,
        table_id: str | None = None,
        aliases: Mapping[str, str] | None = None,
        name: str | None = None,
    ) -> tuple[Table, str]:
        """A new table and the creator's token (the creator hosts it, and sits in the ``"you"`` seat if any).

        ``seats`` has one entry per seat: ``"you"`` (at most one), ``"open"`` (a seat for another person)
        or a policy spec (or a name in ``aliases``, the server's own policies). With no open seat the game
        starts at once. ``name`` is the creator's display name (default "player"): a seat's name is the
        same for every connection, and each page marks its own seat as "you" itself.
        """
        if not isinstance(seats, (list, tuple)) or len(seats) != rules.num_players:
            raise TableError(f"seats: give one entry per seat ({rules.num_players}), got {seats!r}")
        if any(not isinstance(entry, str) or not entry.strip() for entry in seats):
            raise TableError(f"seats: each entry is 'you', 'open' or a policy spec, got {list(seats)!r}")
        seats = [entry.strip() for entry in seats]
        if seats.count("you") > 1:
            raise TableError("seats: at most one seat is 'you'")
        fill = check_policy_spec(fill, "fill", aliases)
        name = check_display_name(name)
        bot_delay_ms = check_bot_delay(bot_delay_ms)
        takeover_s = check_takeover(takeover_s)
        if seed is None:
            # 128 random bits: a player who sees one hand cannot find the seed, and from it every hand, by trying
            # them all (2**31 seeds fell in minutes). The bots draw from a seed of their own.
            seed, bot_seed = secrets.randbits(128), secrets.randbits(31)
        else:
            if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
                raise TableError(f"seed: must be a whole number >= 0, got {seed!r}")
            if "open" in seats:
                raise TableError(
                    "seed: a table with open seats is dealt from a seed no one at it knows (the creator would know "
                    "the other players' cards); leave seed out"
                )
            bot_seed = seed  # (a table of you and bots replays from its seed alone)
        token = secrets.token_urlsafe(24)
        web_seats = []
        for index, entry in enumerate(seats):
            if entry == "you":
                web_seats.append(WebSeat("person", seat_label(index, name), token_hash=_hash(token)))
            elif entry == "open":
                web_seats.append(WebSeat("open", seat_label(index, "open")))
            else:
                spec = check_policy_spec(entry, f"seat {index}", aliases)
                label = entry if aliases and entry in aliases else parse_spec(entry)[0]
                web_seats.append(WebSeat("bot", seat_label(index, label), policy=spec))
        table = cls(
            table_id=table_id or new_table_id(),
            game=BlackoutGame(rules, seed=seed),
            seats=web_seats,
            bot_seed=bot_seed,
            rules_name=rules_name,
            status="lobby" if "open" in seats else "playing",
            host_hash=_hash(token),
            fill=fill,
            bot_delay_ms=bot_delay_ms,
            takeover_s=takeover_s,
            saves=saves,
            policy_loader=policy_loader,
        )
        table.save()
        return table, token

    @classmethod
    def load(cls, table_id: str, saves: Path, policy_loader: PolicyLoader | None = None,
             bot_delay_ms: int = 600) -> Table:
        """The table saved as ``saves/<table_id>.json``: a save of ``blackout serve`` or of ``blackout play``
        (whose bots get ``bot_delay_ms``).

        Raises TableError (code ``no_table`` or ``bad_save``) naming the problem; the file is left untouched.
        """
        if not isinstance(table_id, str) or not TABLE_ID.fullmatch(table_id):
            raise TableError(f"there is no table {str(table_id)[:60]!r}: a table id is 6-40 letters, digits, - or _",
                             "no_table")
        path = saves / f"{table_id}.json"
        if not path.is_file():
            raise TableError(f"there is no table {table_id!r} on this server", "no_table")
        try:
            saved = read_save(path)
        except SaveFileError as error:  # (named by its id: a client is never told the saves folder)
            reason = str(error).replace(str(path), f"{table_id}.json")
            raise TableError(f"the saved game {table_id!r} cannot be loaded: {reason}", "bad_save") from None
        web = saved.web or {}
        try:
            return cls._from_saved(table_id, saved, web, saves, policy_loader, bot_delay_ms)
        except (KeyError, TypeError, ValueError) as error:
            raise TableError(f"the saved game {table_id!r} cannot be loaded: its 'web' part is damaged ({error})",
                             "bad_save") from None

    @classmethod
    def _from_saved(cls, table_id: str, saved: SavedSession, web: dict[str, Any], saves: Path,
                    policy_loader: PolicyLoader | None, bot_delay_ms: int) -> Table:
        if web and web.get("version") != WEB_SAVE_VERSION:
            raise ValueError(f"web save version {web.get('version')!r}; this server reads {WEB_SAVE_VERSION}")
        game = saved.game
        if not isinstance(web, dict):
            raise ValueError(f"it is a {type(web).__name__}, not an object")
        web_seats = web.get("seats")
        if web_seats is not None and (not isinstance(web_seats, list) or len(web_seats) != len(saved.seats)):
            raise ValueError(f"'seats' is not a list of the game's {len(saved.seats)} seats")
        host = web.get("host")
        if host is not None and not isinstance(host, str):
            raise ValueError(f"the host's token is {host!r}")
        seats = []
        for index, seat in enumerate(saved.seats):
            if web_seats is not None:
                entry = web_seats[index]
                if not isinstance(entry, dict):
                    raise ValueError(f"seat {index} is {entry!r}")
                kind = entry["kind"]
                if kind not in ("person", "bot", "open"):
                    raise ValueError(f"seat {index} is of kind {kind!r}")
                token_hash = entry.get("token")
                if token_hash is not None and not isinstance(token_hash, str):
                    raise ValueError(f"seat {index}'s token is {token_hash!r}")
            else:  # a save of `blackout play`: its people may claim their seats once, in order
                kind, token_hash = ("open" if seat.human else "bot"), None
            # Saves written before names were per viewer (and terminal saves) call a person "P0 you": that
            # word belongs to the page of the seat's own person, not to everybody's.
            name = seat.name
            if kind != "bot" and name.split(" ", 1)[-1] in ("you", "human", "person"):
                name = seat_label(index, DEFAULT_PERSON_NAME if kind == "person" else "open")
            seats.append(WebSeat(kind, name, seat.policy, token_hash))
        status = "over" if game.is_over else web.get("status", "playing")
        if status not in ("lobby", "playing", "over"):
            raise ValueError(f"status {status!r}")
        delay = check_bot_delay(web.get("bot_delay_ms", bot_delay_ms))
        lobby_open = web.get("lobby_open", True)
        if not isinstance(lobby_open, bool):
            raise ValueError(f"lobby_open {lobby_open!r}")
        paused = web.get("paused", False)  # (saves before 2026-12-08 kept no pause: not paused)
        if not isinstance(paused, bool):
            raise ValueError(f"paused {paused!r}")
        table = cls(
            table_id=table_id,
            game=game,
            seats=seats,
            bot_seed=saved.bot_seed,
            rules_name=str(web.get("rules_name", "saved")),
            status=status,
            host_hash=host,
            fill=str(web.get("fill", "heuristic")),
            bot_delay_ms=delay,
            takeover_s=check_takeover(web.get("takeover_s")),
            saves=saves,
            policy_loader=policy_loader,
            lobby_open=lobby_open,
        )
        table.paused = paused
        return table

    # ---------------------------------------------------------------- saves
    @property
    def save_path(self) -> Path | None:
        return None if self.saves is None else self.saves / f"{self.table_id}.json"

    def to_saved(self) -> SavedSession:
        """The table as a save of ``blackout play`` (people and open seats are its human seats)."""
        seats = [Seat(seat.name, seat.kind != "bot", seat.policy if seat.kind == "bot" else None) for seat in self.seats]
        web = {
            "version": WEB_SAVE_VERSION,
            "table": self.table_id,
            "status": self.status,
            "host": self.host_hash,
            "seats": [{"kind": seat.kind, "token": seat.token_hash} for seat in self.seats],
            "fill": self.fill,
            "bot_delay_ms": self.bot_delay_ms,
            "takeover_s": self.takeover_s,
            "rules_name": self.rules_name,
            "lobby_open": self.lobby_open,
            "paused": self.paused,
        }
        return SavedSession(self.game, seats, self.bot_seed, False, web)

    def save(self) -> None:
        """Write the table to its save file (atomically); nothing when the table has no saves folder."""
        path = self.save_path
        if path is not None:
            write_save(path, self.to_saved())

    # --------------------------------------------------------------- people
    def is_host(self, token: str | None) -> bool:
        return token is not None and self.host_hash is not None and secrets.compare_digest(_hash(token), self.host_hash)

    def seat_of(self, token: str | None) -> int | None:
        """The seat a token holds, or None."""
        if not isinstance(token, str) or not token:
            return None
        digest = _hash(token)
        for index, seat in enumerate(self.seats):
            if seat.token_hash is not None and secrets.compare_digest(seat.token_hash, digest):
                return index
        return None

    def holds(self, token: str | None) -> bool:
        """Whether ``token`` is this table's host token or one of its seat tokens."""
        return self.is_host(token) or self.seat_of(token) is not None

    def take_open_seat(self, name: str | None = None) -> tuple[int, str] | None:
        """Give the first open seat to a person named ``name``, with a new token; None when no seat is open
        or the host closed the lobby."""
        if not self.lobby_open:
            return None
        name = check_display_name(name)
        for index, seat in enumerate(self.seats):
            if seat.kind == "open":
                token = secrets.token_urlsafe(24)
                self.seats[index] = WebSeat("person", seat_label(index, name), token_hash=_hash(token))
                self.save()
                return index, token
        return None

    def rename(self, seat: int | None, name: Any) -> None:
        """A person names their own seat (in the lobby); raises TableError and changes nothing otherwise."""
        if seat is None or self.seats[seat].kind != "person":
            raise TableError("name: only a person holding a seat names it", "forbidden")
        if self.status != "lobby":
            raise TableError("name: names are chosen in the lobby, before the game starts", "forbidden")
        label = seat_label(seat, check_display_name(name))
        self.seats[seat] = WebSeat("person", label, token_hash=self.seats[seat].token_hash)
        self.save()

    def close_lobby(self, token: str | None) -> None:
        """The host closes the lobby: nobody else may take an open seat (they are filled at the start)."""
        if not self.is_host(token):
            raise TableError("only the host of the table can close the lobby", "forbidden")
        self.lobby_open = False
        self.save()

    def start(self, token: str | None) -> None:
        """The host starts a lobby's game: open seats get the ``fill`` policy."""
        if not self.is_host(token):
            raise TableError("only the host of the table can start the game", "forbidden")
        if self.status != "lobby":
            raise TableError("the game has already started", "bad_message")
        for index, seat in enumerate(self.seats):
            if seat.kind == "open":
                self.seats[index] = WebSeat("bot", seat_label(index, parse_spec(self.fill)[0]), policy=self.fill)
        self.status = "playing"
        self.save()

    @property
    def has_people(self) -> bool:
        """Whether a person holds (or may take) a seat: then no spectator may see hidden hands before the end."""
        return any(seat.kind in ("person", "open") for seat in self.seats)

    # ---------------------------------------------------------------- moves
    def act(self, seat: int | None, action: Any) -> None:
        """A person's action in ``seat``; raises TableError (and changes nothing) if it is not theirs to take."""
        if self.status == "lobby":
            raise TableError("the game has not started yet: the host starts it", "not_your_turn")
        if self.game.is_over:
            raise TableError("the game is over", "not_your_turn")
        if seat is None:
            raise TableError("you watch this table: you hold no seat", "forbidden")
        if self.game.current_player != seat:
            raise TableError(f"it is not your turn: {self.seats[self.game.current_player].name} is to act",
                             "not_your_turn")
        if isinstance(action, bool) or not isinstance(action, int):
            raise TableError(f"action: must be a whole number (a card id, or {self.game.num_cards} + bid), "
                             f"got {action!r}")
        self._step(action)

    def _step(self, action: int) -> None:
        try:
            self.game.step(action)
        except IllegalActionError as error:
            raise TableError(str(error), "illegal_action") from None
        if self.game.is_over:
            self.status = "over"
        self.save()

    def bot_seat(self, away: Callable[[int], bool] = lambda seat: False) -> int | None:
        """The seat a bot must act for now: a bot's turn, or an away person's (``away(seat)``); else None."""
        if self.status != "playing" or self.game.is_over:
            return None
        seat = self.game.current_player
        if self.seats[seat].kind == "bot" or away(seat):
            return seat
        return None

    def policy_for(self, seat: int) -> Any:
        """The policy playing ``seat`` (its own, or the fill policy for a person who is away), loaded once."""
        spec = self.seats[seat].policy if self.seats[seat].kind == "bot" else self.fill
        key = (seat, spec)
        if key not in self._policies:
            loader = self.policy_loader or _default_loader
            self._policies[key] = loader(spec, self.game.rules, self.bot_seed)
        return self._policies[key]

    def decide(self, seat: int) -> tuple[int, Explanation, float]:
        """The bot's decision for ``seat`` (action, explanation, milliseconds), not yet applied.

        Reads only the seat's view. The policy is reseeded from the bots' seed, the seat and the move
        number, as in ``blackout play``, so a resumed game continues as the uninterrupted one would.
        Raises TableError (code ``bot_failed``) when the policy cannot load, fails, or picks an illegal action.
        """
        started = time.perf_counter()
        try:
            policy = self.policy_for(seat)
            reseed = getattr(policy, "seed", None)
            if callable(reseed):
                reseed(decision_seed(self.bot_seed, seat, len(self.game.actions)))
            view = self.game.view(seat)
            # One view at a time gains nothing from torch's threads, and they stall when a core is busy.
            with single_threaded_torch():
                why = explain(policy, view)
        except Exception as error:  # a bot that crashes must not take the server with it
            spec = self.seats[seat].policy or self.fill
            raise TableError(f"the bot in seat {seat} ({public_spec(spec)}) failed: "
                             f"{type(error).__name__}: {_without_files(str(error), spec)}", "bot_failed") from error
        if why.action not in view.legal_actions:
            raise TableError(f"the bot in seat {seat} chose action {why.action}, which is not legal now",
                             "bot_failed")
        return why.action, why, (time.perf_counter() - started) * 1000.0

    def apply_bot(self, seat: int, action: int, why: Explanation, move: int) -> bool:
        """Apply a decision made by :meth:`decide` if the game is still where it was (``move``); True if applied."""
        if len(self.game.actions) != move or self.game.current_player != seat or self.status != "playing":
            return False
        self.last_why[seat] = (move, why)
        self._step(action)
        return True

    def suggestion(self, view: PlayerView) -> tuple[int, Explanation] | None:
        """The heuristic bot's bid for a person's view, and its reasons (the same bid ``blackout play`` suggests)."""
        if view.phase != "bid" or not view.is_my_turn:
            return None
        if self._suggester is None:
            from blackout_baselines import make_bot

            self._suggester = make_bot("heuristic", seed=self.bot_seed)
        self._suggester.seed(self.bot_seed)  # the same view always gets the same suggestion
        why = explain(self._suggester, view)
        return why.action - view.num_cards, why


def _default_loader(spec: str, rules: Rules, seed: int) -> Any:
    from ..agents.policies import load_policy

    return load_policy(spec, rules, seed)


def check_policy_spec(spec: Any, field_name: str, aliases: Mapping[str, str] | None = None) -> str:
    """The policy spec a client named, checked: a known name, or a name the server was given (``aliases``).

    A client may not name a file (``ppo:PATH`` or an option naming one, :func:`~blackout_env.agents.policies.names_file`): checkpoints are named on the server's
    command line (``blackout serve --policy NAME=ppo:PATH``) and chosen by that name. Loading the policy,
    which may take a while, is the caller's.
    """
    from blackout_env.agents.policies import LOADERS

    if not isinstance(spec, str) or not spec.strip():
        raise TableError(f"{field_name}: a policy spec such as 'heuristic' or 'ppo', got {spec!r}")
    spec = spec.strip()
    if aliases and spec in aliases:
        return aliases[spec]
    name, argument = parse_spec(spec)
    if name not in LOADERS:
        known = [*LOADERS, *(aliases or {})]
        raise TableError(f"{field_name}: unknown policy {spec!r}; known: {', '.join(known)}")
    if argument is not None and (getattr(LOADERS[name], "path_argument", False) or "checkpoint" in argument):
        raise TableError(f"{field_name}: a browser may not name a file ({spec!r}); start the server with "
                         f"--policy NAME={spec} and choose NAME", "forbidden")
    try:
        options = parse_options(argument, spec)
    except ValueError as error:
        raise TableError(f"{field_name}: {error}") from None
    if any(names_file(option, value) for option, value in options.items()):
        raise TableError(f"{field_name}: a browser may not name a file ({spec!r}); start the server with "
                         f"--policy NAME={spec} and choose NAME", "forbidden")
    for option, value in options.items():
        ceiling = BOT_BUDGET_LIMITS.get(option)
        if ceiling is not None and isinstance(value, str):
            raise TableError(f"{field_name}: {option} must be a number, got {value!r}")
        if ceiling is not None and value > ceiling:
            raise TableError(f"{field_name}: {option}={value} asks more of a bot than a browser may "
                             f"(at most {option}={ceiling:g} per decision); start the server with "
                             f"--policy NAME={spec} to offer it", "limit")
    return spec


def public_spec(spec: str) -> str:
    """A policy spec as the page shows it: no file of the server's (``ppo:/srv/x.pt`` -> ``ppo``,
    ``ppo+search:checkpoint=/srv/x.pt,simulations=800`` -> ``ppo+search:checkpoint=...,simulations=800``)."""
    from blackout_env.agents.policies import LOADERS

    name, argument = parse_spec(spec)
    if argument is not None and getattr(LOADERS.get(name), "path_argument", False):
        return name
    return _without_files(spec, spec)


def _without_files(text: str, spec: str) -> str:
    """``text`` (an error of the policy ``spec``) with every file the spec names shown as ``...``."""
    for file in sorted(set(spec_files(spec)), key=len, reverse=True):
        text = text.replace(file, "...")
    return text


def check_bot_delay(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_BOT_DELAY_MS:
        raise TableError(f"bot_delay_ms: must be a number of milliseconds 0..{MAX_BOT_DELAY_MS}, got {value!r}")
    return int(value)


def check_takeover(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_TAKEOVER_S:
        raise TableError(f"takeover_s: must be a number of seconds above 0, at most {MAX_TAKEOVER_S}, "
                         f"or null (the table waits), got {value!r}")
    return float(value)
