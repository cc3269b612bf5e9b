"""The replay viewer of ``blackout serve``: a finished game, stepped forward and backward, every hand shown.

A replay is opened from a saved game (by its id in the saves folder) or from a
file's text sent by the page: a save of ``blackout play`` / ``blackout serve``,
or a game log of ``blackout eval --game-log`` (one game per line; the viewer
picks one by index). Only finished games are replayed: a game still being
played stays hidden from everybody but its seats.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from blackout_env import BlackoutGame, SaveFileError

from ..evaluation.game_log import parse_game_log
from ..play.session import PLAY_SAVE_FORMAT, parse_save
from . import messages
from .table import Table, TableError

__all__ = ["Replay"]


@dataclass
class _Game:
    label: str
    names: list[str]
    final: BlackoutGame
    finished: bool
    """The match is over, or (a game log of ``blackout eval --hands``) its single hand is."""


def _prefix(game: BlackoutGame, move: int) -> BlackoutGame:
    """The game after its first ``move`` actions, replayed from its decks."""
    replayed = BlackoutGame(game.rules, decks=game.decks, first_dealer=game.first_dealer, start_round=game.start_round)
    for action in game.actions[:move]:
        replayed.step(action)
    return replayed


def _single_hand(entry: Any) -> BlackoutGame:
    """A game of ``blackout eval --hands``, replayed as a match that ends with its hand: the engine would deal
    the next hand after the last card, which was never played. The hand keeps its round (its trump, dealer
    and size); the match has no hand after it."""
    last = entry.start_round + 1
    rules = entry.rules.replace(hand_sizes=list(entry.rules.hand_sizes[:last]))
    game = BlackoutGame(rules, decks=entry.decks[:last], first_dealer=entry.first_dealer, start_round=entry.start_round)
    for action in entry.actions:
        game.step(action)
    return game


class Replay:
    """Games to step through; :meth:`state` is the ``state`` message at the current move."""

    def __init__(self, games: list[_Game]) -> None:
        if not games:
            raise TableError("there is no game to replay", "bad_save")
        unfinished = [g.label for g in games if not g.finished]
        if unfinished:
            raise TableError(f"{unfinished[0]} is not over yet: only finished games are replayed (resume it instead)",
                             "forbidden")
        self.games = games
        self.index = 0
        self.move = 0
        self._game = _prefix(games[0].final, 0)

    @classmethod
    def from_table(cls, table: Table) -> Replay:
        names = [seat.name for seat in table.seats]
        return cls([_Game(f"table {table.table_id}", names, table.game, table.game.is_over)])

    @classmethod
    def from_text(cls, text: Any, max_moves: int | None = None) -> Replay:
        """From a file's text: a save (``"format": "blackout-play"``) or a game log of ``blackout eval``.

        A game log of more than ``max_moves`` actions in all is refused (code ``limit``) before any is replayed.
        """
        if not isinstance(text, str) or not text.strip():
            raise TableError("replay: 'content' is the text of a save or of a game log, got nothing", "bad_save")
        if max_moves is not None:
            _check_moves(text, max_moves)
        try:  # a save is one JSON object; a game log is one per line (a one-game log is one object too)
            whole = json.loads(text)
        except (ValueError, RecursionError):
            whole = None
        is_save = isinstance(whole, dict) and whole.get("format") == PLAY_SAVE_FORMAT
        try:
            if is_save:
                saved = parse_save(text, "the file")
                return cls([_Game("saved game", [seat.name for seat in saved.seats], saved.game, saved.game.is_over)])
            logged = parse_game_log(text)  # text only: a client never makes the server open a path
        except (SaveFileError, ValueError) as error:
            raise TableError(f"this file cannot be replayed: {error}", "bad_save") from None
        games = []
        for entry in logged:
            names = [f"P{seat} {name}" for seat, name in enumerate(entry.seats)]
            final = _single_hand(entry) if entry.hands else entry.replay()
            games.append(_Game(entry.label, names, final, True))  # the reader checked it ran to its end
        return cls(games)

    def select(self, index: Any) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.games):
            raise TableError(f"index: a game 0..{len(self.games) - 1} of this file, got {index!r}")
        if index != self.index:
            self.index = index
            self.move = 0
            self._game = _prefix(self.games[index].final, 0)

    def go(self, index: Any = None, move: Any = None) -> None:
        """Select game ``index`` (None: this one) at ``move`` (None: its start when the game changes, else where
        it is); both are checked before either changes (a refused ``seek`` changes nothing)."""
        target = self.index if index is None else index
        if isinstance(target, bool) or not isinstance(target, int) or not 0 <= target < len(self.games):
            raise TableError(f"index: a game 0..{len(self.games) - 1} of this file, got {target!r}")
        if move is not None:
            moves = len(self.games[target].final.actions)
            if isinstance(move, bool) or not isinstance(move, int) or not 0 <= move <= moves:
                raise TableError(f"move: 0..{moves} (the actions of this game), got {move!r}")
        self.select(target)
        if move is not None:
            self.seek(move)

    def seek(self, move: Any) -> None:
        final = self.games[self.index].final
        moves = len(final.actions)
        if isinstance(move, bool) or not isinstance(move, int) or not 0 <= move <= moves:
            raise TableError(f"move: 0..{moves} (the actions of this game), got {move!r}")
        if move < self.move:
            self._game = _prefix(final, move)
        else:
            for action in final.actions[self.move:move]:
                self._game.step(action)
        self.move = move

    def state(self, viewer: messages.Viewer) -> dict[str, Any]:
        chosen = self.games[self.index]
        game = self._game
        spectator = messages.Viewer(why=viewer.why)
        state = messages.game_state(game, chosen.names, spectator, set(range(game.num_players)))
        for entry in state["seats"]:
            entry.update(kind="bot", policy=None, connected=True)
        state.update(
            type="state", table=None, mode="replay",
            status="over" if self.move == len(chosen.final.actions) else "playing", you=None,
            host=False, rules=messages.rules_summary(game.rules, "replay"),
            why=None, waiting=None, paused=True, bot_delay_ms=0, reveal=True, can_reveal=True, takeover_s=None,
            lobby_open=False,
            decision_ms=None,
            replay={"move": self.move, "moves": len(chosen.final.actions), "index": self.index,
                    "games": [g.label for g in self.games], "label": chosen.label},
        )
        return state


def _check_moves(text: str, max_moves: int) -> None:
    """Refuse a game log whose games hold more than ``max_moves`` actions in all, counted without replaying
    them (a line that is not a game is left to the reader, which names it)."""
    moves = 0
    for line in text.splitlines():
        try:
            data = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            return
        actions = data.get("actions") if isinstance(data, dict) else None
        moves += len(actions) if isinstance(actions, list) else 0
        if moves > max_moves:
            raise TableError(f"this game log holds more than {max_moves:,} moves, more than the replay viewer takes "
                             "at once: replay fewer games (blackout eval --deals N --game-log FILE)", "limit")
