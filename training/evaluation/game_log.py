"""Game logs: every game of a ``blackout eval`` run, one JSON line each, and a reader that replays them.

``evaluate(..., game_log=PATH)`` (``blackout eval --game-log PATH``) writes one line per
game played, deal by deal and, within a deal, rotation by rotation, whatever the number
of workers. A line holds what replays the game exactly in the engine: the rules, the
first dealer, the round the game starts at, every round's deck order and every action,
plus the seating and the scores the evaluation counted::

    {"format": "blackout-game-log", "version": 1, "deal": 0, "rotation": 1,
     "seats": ["random", "random", "random", "heuristic"], "rules": {...Rules.to_dict()...},
     "first_dealer": 0, "start_round": 0, "hands": false,
     "decks": [[...deck order of round 0...], ...], "actions": [53, 52, ...],
     "scores": [21, 13, 0, 24], "round_scores": [[11, 0, 0, 11], ...]}

``first_dealer`` is the dealer the game really had (a random first dealer is drawn
once, and stored). ``hands`` is true for a single hand (``hands=True``): the game is
round ``start_round`` only, ``scores`` equal its one row of ``round_scores``.

:func:`read_game_log` reads a file and :func:`parse_game_log` a file's text (the browser sends
file contents; the text is never taken for a path); both replay every line and check it, so a :class:`LoggedGame` it returns always replays.
Every problem raises :class:`GameLogError` (a ``blackout_env.SaveFileError``, so a
``ValueError``) whose message starts with the line number.
"""

from __future__ import annotations

import json
import numbers
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blackout_env.game.engine import BlackoutGame, IllegalActionError, SaveFileError
from blackout_env.game.rules import Rules

__all__ = [
    "GAME_LOG_FORMAT", "GAME_LOG_VERSION", "GameLogError", "GameLogWriter", "LoggedGame", "check_game_log_path",
    "game_finished", "parse_game_log", "read_game_log",
]

GAME_LOG_FORMAT = "blackout-game-log"
GAME_LOG_VERSION = 1
_FIELDS = (
    "deal", "rotation", "seats", "rules", "first_dealer", "start_round", "hands", "decks", "actions", "scores",
    "round_scores",
)


class GameLogError(SaveFileError):
    """A game log that cannot be read: the message names the line and the problem."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message if line is None else f"line {line}: {message}")
        self.line = line


def game_finished(game: BlackoutGame, hands: bool) -> bool:
    """Whether an evaluation's game is over: the whole match, or with ``hands`` its single hand."""
    return game.is_over or (hands and game.round_index != game.start_round)


# ------------------------------------------------------------------ one game
@dataclass(eq=False)
class LoggedGame:
    """One game of a game log: who sat where, and what replays it.

    Read them with :func:`read_game_log`; :meth:`replay` gives the finished game and
    :meth:`game_at` the game after any number of actions (for stepping through it).
    """

    deal: int
    rotation: int
    seats: list[str]
    """The policy name at each seat."""
    rules: Rules
    first_dealer: int
    start_round: int
    hands: bool
    """True for a single hand (round ``start_round`` only), False for a whole match."""
    decks: list[list[int]] = field(repr=False)
    actions: list[int] = field(repr=False)
    scores: list[int]
    """The final total per seat, as the evaluation counted it."""
    round_scores: list[list[int]] = field(repr=False)
    line: int | None = None
    """The line of the file it was read from."""
    _cursor: BlackoutGame | None = field(default=None, init=False, repr=False)

    @property
    def label(self) -> str:
        """``"deal 3, rotation 1: ppo, heuristic, heuristic, heuristic"``."""
        return f"deal {self.deal}, rotation {self.rotation}: {', '.join(self.seats)}"

    @property
    def moves(self) -> int:
        """The number of actions (bids and cards) in the game."""
        return len(self.actions)

    def start(self) -> BlackoutGame:
        """The game as dealt, before any action."""
        return BlackoutGame(self.rules, decks=self.decks, first_dealer=self.first_dealer, start_round=self.start_round)

    def replay(self) -> BlackoutGame:
        """The finished game, re-stepped from the decks (a new game at each call)."""
        return self.game_at(self.moves)

    def game_at(self, move: int) -> BlackoutGame:
        """The game after the first ``move`` actions (0..moves), a copy of its own.

        The last position asked for is kept, so stepping forward or back one
        move at a time replays one action (forward) or one game (back) at most.
        """
        if isinstance(move, bool) or not isinstance(move, numbers.Integral) or not 0 <= move <= self.moves:
            raise ValueError(f"move: must be 0..{self.moves}, got {move!r}")
        move = int(move)
        game = self._cursor
        if game is None or len(game.actions) > move:
            game = self.start()
        for action in self.actions[len(game.actions) : move]:
            game.step(action)
        self._cursor = game
        return game.clone()

    # ------------------------------------------------------------- the line
    @classmethod
    def from_game(cls, game: BlackoutGame, deal: int, rotation: int, seats: Iterable[str], hands: bool) -> LoggedGame:
        """The log entry of a game the evaluation played."""
        return cls(
            deal=int(deal), rotation=int(rotation), seats=list(seats), rules=game.rules,
            first_dealer=game.first_dealer, start_round=game.start_round, hands=bool(hands),
            decks=[list(deck) for deck in game.decks], actions=list(game.actions), scores=list(game.scores),
            round_scores=[list(row) for row in game.round_scores],
        )

    def to_dict(self) -> dict[str, Any]:
        """The line as plain data."""
        return {
            "format": GAME_LOG_FORMAT, "version": GAME_LOG_VERSION, "deal": self.deal, "rotation": self.rotation,
            "seats": self.seats, "rules": self.rules.to_dict(), "first_dealer": self.first_dealer,
            "start_round": self.start_round, "hands": self.hands, "decks": self.decks, "actions": self.actions,
            "scores": self.scores, "round_scores": self.round_scores,
        }

    def to_json(self) -> str:
        """The line as compact JSON text (no newline)."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Any, line: int | None = None) -> LoggedGame:
        """A line's data, checked by replaying it; GameLogError (naming ``line``) when anything is wrong."""
        def fail(message: str) -> GameLogError:
            return GameLogError(message, line)

        if not isinstance(data, Mapping):
            raise fail(f"expected a JSON object, got {type(data).__name__}")
        if data.get("format") != GAME_LOG_FORMAT:
            raise fail(f"not a Blackout game log line (format {data.get('format')!r}, expected {GAME_LOG_FORMAT!r})")
        if data.get("version") != GAME_LOG_VERSION:
            raise fail(f"game log version {data.get('version')!r}; this version reads {GAME_LOG_VERSION}")
        missing = [name for name in _FIELDS if name not in data]
        if missing:
            raise fail(f"missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        try:
            rules = Rules.from_dict(data["rules"])
        except (TypeError, ValueError) as error:
            raise fail(f"rules: {error}") from None
        n = rules.num_players

        def integers(name: str, value: Any, length: int | None = None) -> list[int]:
            if not isinstance(value, list) or not all(_is_int(v) for v in value):
                raise fail(f"{name}: expected a list of integers, got {value!r:.80}")
            if length is not None and len(value) != length:
                raise fail(f"{name}: expected {length} entries (one per seat), got {len(value)}")
            return list(value)

        for name in ("deal", "rotation", "first_dealer", "start_round"):
            if not _is_int(data[name]) or data[name] < 0:
                raise fail(f"{name}: expected a non-negative integer, got {data[name]!r}")
        if data["rotation"] >= n:
            raise fail(f"rotation: {data['rotation']} is not a rotation of {n} seats (0..{n - 1})")
        if not isinstance(data["hands"], bool):
            raise fail(f"hands: expected true or false, got {data['hands']!r}")
        seats = data["seats"]
        if not isinstance(seats, list) or len(seats) != n or not all(isinstance(s, str) for s in seats):
            raise fail(f"seats: expected {n} policy names (one per seat), got {seats!r:.120}")
        decks = data["decks"]
        # Every deck must be in the line: a missing one would be shuffled afresh, a different game.
        if not isinstance(decks, list) or len(decks) != rules.num_rounds:
            raise fail(f"decks: expected one deck order for each of the {rules.num_rounds} rounds")
        decks = [integers(f"decks[{r}]", deck) for r, deck in enumerate(decks)]
        actions = integers("actions", data["actions"])
        scores = integers("scores", data["scores"], n)
        rows = data["round_scores"]
        if not isinstance(rows, list):
            raise fail(f"round_scores: expected a list of rows (one per hand), got {rows!r:.80}")
        round_scores = [integers(f"round_scores[{r}]", row, n) for r, row in enumerate(rows)]
        logged = cls(
            deal=data["deal"], rotation=data["rotation"], seats=list(seats), rules=rules,
            first_dealer=data["first_dealer"], start_round=data["start_round"], hands=data["hands"],
            decks=decks, actions=actions, scores=scores, round_scores=round_scores, line=line,
        )
        logged._check_replay(fail)
        return logged

    def _check_replay(self, fail: Any) -> None:
        """Replay every action: each must be legal, the game must end with the last one, with the logged scores."""
        try:
            game = self.start()
        except ValueError as error:
            raise fail(f"the game cannot be set up: {error}") from None
        for index, action in enumerate(self.actions):
            if game_finished(game, self.hands):
                raise fail(f"action #{index} ({action}) comes after the game ended ({len(self.actions)} actions logged)")
            try:
                game.step(action)
            except IllegalActionError as error:
                raise fail(f"action #{index} ({action}) is illegal: {error}") from None
        if not game_finished(game, self.hands):
            what = "hand" if self.hands else "match"
            raise fail(
                f"the actions stop before the {what} ends (round {game.round_index}, {game.phase} phase, "
                f"{len(self.actions)} actions)"
            )
        if game.scores != self.scores:
            raise fail(f"the logged scores {self.scores} differ from the replay's {game.scores}")
        if game.round_scores != self.round_scores:
            raise fail(f"the logged round scores {self.round_scores} differ from the replay's {game.round_scores}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# ------------------------------------------------------------------ reading
def read_game_log(path: str | os.PathLike[str]) -> list[LoggedGame]:
    """Every game of the game log file at ``path``, in file order, each replayed and checked.

    ``path`` is always a file's path (the text of a log goes to :func:`parse_game_log`, which never opens a
    file). Raises GameLogError when the file cannot be read, or as :func:`parse_game_log` does.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise GameLogError(f"read_game_log: expected a file's path, got {type(path).__name__} "
                           "(the text of a game log goes to parse_game_log)")
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise GameLogError(f"cannot read the game log {os.fspath(path)!r}: {error.strerror or error}") from None
    try:
        return parse_game_log(text)
    except GameLogError as error:  # named by its file, as a command reads it
        named = GameLogError(f"game log {os.fspath(path)!r}, {error}")
        named.line = error.line
        raise named from None


def parse_game_log(text: str | bytes) -> list[LoggedGame]:
    """Every game of a game log's text (one JSON object a line), in order, each replayed and checked.

    Only text: this function never opens a file, whatever the text says (the browser's replay viewer sends
    a file's contents, and a client must never make the server open a path). Raises GameLogError naming the
    line: not JSON, another format or version, a missing or malformed field, an illegal action, actions that
    stop early or go on after the end, scores that differ from the replay's; or when the text holds no game.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        raise GameLogError(f"parse_game_log: expected the text of a game log, got {type(text).__name__}")
    games = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as error:
            raise GameLogError(f"not JSON: {error}", number) from None
        games.append(LoggedGame.from_dict(data, number))
    if not games:
        raise GameLogError("the game log is empty: it holds no game")
    return games


# ------------------------------------------------------------------ writing
class GameLogWriter:
    """Writes a game log whole or not at all: lines go to a hidden file beside ``path``, moved onto it at the end.

    Opening it refuses a path that cannot be written (ValueError naming ``option``);
    use it as a context manager: it commits when the block ends normally and
    removes the partial file when the block raises.
    """

    def __init__(self, path: str | os.PathLike[str], option: str = "game_log") -> None:
        self.path = Path(os.path.realpath(path))  # a link's target is written (the link stays a link)
        self.games = 0
        if self.path.is_dir():
            raise ValueError(f"{option}: {os.fspath(path)!r} is a folder; give a file name such as games.jsonl")
        if self.path.exists() and not self.path.is_file():
            raise ValueError(f"{option}: {os.fspath(path)!r} is not a regular file (a device, a pipe...): the log is "
                             "written whole and moved into place, so it needs a file name such as games.jsonl")
        above = next((p for p in self.path.parents if p.exists()), None)
        if above is not None and not above.is_dir():
            raise ValueError(f"{option}: {os.fspath(path)!r}: {os.fspath(above)!r} is a file, not a folder")
        self._temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self._temp, "w", encoding="utf-8", newline="\n")  # noqa: SIM115 - closed by close/discard
        except OSError as error:
            where = f" ({error.filename})" if error.filename and error.filename != os.fspath(self._temp) else ""
            raise ValueError(f"{option}: cannot write {os.fspath(path)!r}: {error.strerror or error}{where}") from None

    def write(self, lines: Iterable[str]) -> None:
        """Append lines (each one game's JSON text, from :meth:`LoggedGame.to_json`)."""
        for line in lines:
            self._file.write(line + "\n")
            self.games += 1

    def close(self) -> Path:
        """Finish the file: it appears at ``path`` complete."""
        self._file.close()
        os.replace(self._temp, self.path)
        return self.path

    def discard(self) -> None:
        """Drop what was written; ``path`` is left as it was."""
        self._file.close()
        self._temp.unlink(missing_ok=True)

    def __enter__(self) -> GameLogWriter:
        return self

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        if kind is None:
            self.close()
        else:
            self.discard()


def check_game_log_path(path: str | os.PathLike[str], option: str = "game_log") -> Path:
    """Refuse (ValueError naming ``option``) a game log path that cannot be written, writing nothing there."""
    GameLogWriter(path, option).discard()
    return Path(path)
