"""The game loop of ``blackout play``: people at a keyboard against bots or trained policies.

:class:`PlaySession` runs one match. Input and output are streams passed in
(stdin/stdout by default), so tests drive a whole game with a script; what the
screen looks like is :mod:`blackout_training.play.screen`.

Saves: after every action the session writes itself (the engine's saved game,
who sits where, the bots' seed) to one JSON file, atomically: a temporary file
in the same folder, then ``os.replace``, so a crash leaves either the old save
or the new one, never half of one. Bots are reseeded before every decision
from the bots' seed, the seat and the number of actions so far, so a resumed
game continues exactly as the uninterrupted one would have.

Reasons (``--why``): a bot's decision is then made by
:func:`blackout_env.agents.policies.explain` instead of ``act`` (the same action), and
its reasons are printed under the narrated move (:func:`explanation_lines`):
all of them for a bid, whose actions are bids; for a card only the card and
the value estimate while a person plays, since a number per legal card would
show the bot's hand.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from blackout_env import BlackoutGame, IllegalActionError, PlayerView, Rules, SaveFileError
from blackout_env.agents.policies import ActionReason, Explanation, explain
from blackout_env.game.cards import card_to_str, parse_card
from blackout_env.game.scoresheet import score_sheet

from ..agents.policies import Policy, absolute_paths, load_policy, split_specs
from ..evaluation.tournament import single_threaded_torch
from ..files import write_text_atomically
from . import screen

__all__ = [
    "PLAY_SAVE_FORMAT",
    "PLAY_SAVE_VERSION",
    "PlaySession",
    "Seat",
    "decision_seed",
    "default_save_path",
    "explanation_lines",
    "new_session",
    "parse_save",
    "read_save",
    "write_save",
]

PLAY_SAVE_FORMAT = "blackout-play"
PLAY_SAVE_VERSION = 1
COMMANDS = {"s": "score", "l": "last", "h": "help", "?": "help", "q": "quit"}


PolicyLoader = Callable[[str, Rules, int], Policy]


@dataclass(frozen=True)
class Seat:
    """Who sits in a seat: a person, or a bot named by its policy spec ("heuristic", "ppo:PATH")."""

    name: str
    human: bool
    policy: str | None = None


def default_save_path() -> Path:
    """``$XDG_DATA_HOME/blackout/save.json``, or ``~/.local/share/blackout/save.json``."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "blackout" / "save.json"


@dataclass
class SavedSession:
    """The contents of a save file."""

    game: BlackoutGame
    seats: list[Seat]
    bot_seed: int
    hot_seat: bool
    web: dict[str, Any] | None = None
    """What ``blackout serve`` keeps beside the game (its table id, seat tokens' hashes, bot speed);
    the terminal ignores it, so a save moves between terminal and browser."""


def write_save(path: Path, saved: SavedSession) -> None:
    """Write a session to ``path`` atomically (temporary file in the same folder, then ``os.replace``)."""
    data = {
        "format": PLAY_SAVE_FORMAT,
        "version": PLAY_SAVE_VERSION,
        "game": json.loads(saved.game.to_json()),
        "seats": [{"name": s.name, "human": s.human, "policy": s.policy} for s in saved.seats],
        "bot_seed": saved.bot_seed,
        "hot_seat": saved.hot_seat,
    }
    if saved.web is not None:
        data["web"] = saved.web
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomically(path, json.dumps(data), mode=0o600)  # every seat's hand: its owner's to read


def read_save(path: Path) -> SavedSession:
    """Load a save file; raises SaveFileError naming the file and the problem (the file is not touched)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SaveFileError(f"there is no saved game at {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SaveFileError(f"cannot read the saved game {path}: {error}") from None
    return parse_save(text, str(path))


def parse_save(text: str, path: str = "the save") -> SavedSession:
    """A save file's text as a session; raises SaveFileError naming ``path`` and the problem."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:  # (RecursionError: JSON nested thousands deep)
        raise SaveFileError(f"{path} is not a saved game: it is not valid JSON ({error})") from None
    if not isinstance(data, dict) or data.get("format") != PLAY_SAVE_FORMAT:
        raise SaveFileError(f"{path} is not a saved game of blackout play (format {PLAY_SAVE_FORMAT!r} expected)")
    if type(data.get("version")) is not int or data["version"] != PLAY_SAVE_VERSION:
        raise SaveFileError(f"{path} has save version {data.get('version')!r}; this version reads {PLAY_SAVE_VERSION}")
    missing = [key for key in ("game", "seats", "bot_seed", "hot_seat") if key not in data]
    if missing:
        raise SaveFileError(f"{path} is damaged: it lacks {', '.join(missing)}")
    try:
        game = BlackoutGame.from_json(json.dumps(data["game"]))
    except SaveFileError as error:
        raise SaveFileError(f"{path} is damaged: {error}") from None
    seats = data["seats"]
    if not isinstance(seats, list) or len(seats) != game.num_players:
        raise SaveFileError(f"{path} is damaged: 'seats' must list the {game.num_players} seats")
    parsed = []
    for index, seat in enumerate(seats):
        if (
            not isinstance(seat, dict)
            or not isinstance(seat.get("name"), str)
            or not isinstance(seat.get("human"), bool)
            or not (seat["human"] or isinstance(seat.get("policy"), str))
        ):
            raise SaveFileError(f"{path} is damaged: seat {index} is {seat!r}")
        parsed.append(Seat(seat["name"], seat["human"], None if seat["human"] else seat["policy"]))
    bot_seed = data["bot_seed"]
    if isinstance(bot_seed, bool) or not isinstance(bot_seed, int) or bot_seed < 0:
        raise SaveFileError(f"{path} is damaged: bot_seed is {bot_seed!r}, not a whole number >= 0")
    if not isinstance(data["hot_seat"], bool):
        raise SaveFileError(f"{path} is damaged: hot_seat is {data['hot_seat']!r}, not true or false")
    web = data.get("web")
    if web is not None and not isinstance(web, dict):
        raise SaveFileError(f"{path} is damaged: 'web' is {web!r}, not an object")
    return SavedSession(game, parsed, bot_seed, data["hot_seat"], web)


def seat_names(num_players: int, humans: int, policies: Sequence[str]) -> list[Seat]:
    """Seats 0..humans-1 are people ("P0 you", or "P0 human" when several), the rest bots named by policy."""
    seats = []
    for seat in range(num_players):
        if seat < humans:
            seats.append(Seat(f"P{seat} {'you' if humans == 1 else 'human'}", True))
        else:
            spec = policies[seat - humans]
            label = spec.split(":", 1)[0]
            seats.append(Seat(f"P{seat} {label}", False, spec))
    return seats


def bot_policies(spec: str, bot_seats: int) -> list[str]:
    """One policy spec per bot seat from ``--bots``: a single spec for every seat, or one per seat.

    Specs are separated by commas; options of a spec (``search:samples=64,time_limit_ms=200``) stay with it.
    """
    names = split_specs(spec)
    if any(not name for name in names):
        raise ValueError(f"--bots: empty policy name in {spec!r} (write e.g. heuristic,search,ppo:PATH)")
    if len(names) == 1:
        return names * bot_seats
    if len(names) != bot_seats:
        raise ValueError(
            f"--bots: {bot_seats} bot seat{'s' if bot_seats != 1 else ''} need one policy for all "
            f"or one per seat, got {len(names)} ({spec})"
        )
    return names


def new_session(
    rules: Rules,
    humans: int = 1,
    bots: str = "heuristic",
    seed: int | None = None,
    hot_seat: bool = False,
) -> SavedSession:
    """A fresh match: the seats, the deal drawn from ``seed`` (random when None) and the bots' seed."""
    if isinstance(humans, bool) or not isinstance(humans, int) or not 0 <= humans <= rules.num_players:
        raise ValueError(f"--humans: must be 0..{rules.num_players} (the number of players), got {humans!r}")
    if seed is None:
        seed = int(np.random.default_rng().integers(2**31))
    if seed < 0:
        raise ValueError(f"--seed: must be a whole number >= 0, got {seed}")
    policies = bot_policies(bots, rules.num_players - humans) if humans < rules.num_players else []
    # A checkpoint named by a relative path is saved as an absolute one, so --resume works from any folder.
    policies = [absolute_paths(spec) for spec in policies]
    game = BlackoutGame(rules, seed=seed)
    return SavedSession(game, seat_names(rules.num_players, humans, policies), seed, hot_seat)


def decision_seed(bot_seed: int, seat: int, move: int) -> int:
    """The seed of a bot's decision: it depends only on the bots' seed, the seat and how far the game is
    (``move`` actions taken), so a resumed game (terminal or browser) continues as the uninterrupted one would."""
    return int(np.random.SeedSequence([bot_seed, seat, move]).generate_state(1)[0])


def _action_label(action: int, view: PlayerView) -> str:
    return str(action - view.num_cards) if action >= view.num_cards else card_to_str(action)


def _reason_text(reason: ActionReason, view: PlayerView) -> str:
    """``"2: n=120 0.53 40%"``: the action, then its visits, value and probability where given."""
    numbers = []
    if reason.visits is not None:
        numbers.append(f"n={reason.visits}")
    if reason.value is not None:
        numbers.append(f"{reason.value:.2f}")
    if reason.probability is not None:
        numbers.append(f"{reason.probability:.0%}")
    label = _action_label(reason.action, view)
    return f"{label}: {' '.join(numbers)}" if numbers else label


def _reasons_line(why: Explanation, view: PlayerView) -> str:
    """Every legal action with its numbers, the chosen one in brackets: ``0: 2.41, [1: 7.30], 2: 5.02``."""
    return ", ".join(
        f"[{_reason_text(reason, view)}]" if reason.action == why.action else _reason_text(reason, view)
        for reason in why.actions
    )


def explanation_lines(why: Explanation, view: PlayerView, every_action: bool) -> list[str]:
    """A bot's reasons, as printed under its move by ``blackout play --why``.

    ``every_action``: the numbers of every legal action and the note (for a bid, or when no person
    plays); else only the chosen card and the value estimate, which reveal nothing of the bot's hand.
    """
    value = "" if why.value is None else f"; value {why.value:.2f}"
    if not every_action:
        return [f"    why: {_action_label(why.action, view)}{value} ({why.kind}; the numbers of each card "
                "stay hidden while a person plays)"]
    return [f"    why ({why.kind}): {_reasons_line(why, view)}", f"    {why.note}{value}"]


class _EndOfInput(Exception):
    """The input stream ended: save and stop."""


class _Quit(Exception):
    """The player asked to save and quit."""


class PlaySession:
    """One match at the keyboard. :meth:`run` plays it to the end, or until ``q`` or the end of input.

    Args:
        saved: the match (a new one from :func:`new_session`, or :func:`read_save`).
        save_path: where to autosave after every action.
        policy_loader: ``(spec, rules, seed) -> policy`` for the bot seats
            (default ``blackout_training.agents.policies.load_policy``).
        suggest_bid: ``view -> bid`` shown as the suggested bid (None: no suggestion).
        why: print each bot decision's reasons under its move (:func:`explanation_lines`).
        explain_bid: ``view -> Explanation`` of a person's bid, whose numbers per bid are shown
            after the suggestion (None: not shown).
        input, output: text streams (default stdin and stdout); input that is not a
            terminal is echoed, so a scripted game reads like a played one.
        unicode: suit symbols and a struck-through forbidden bid (default: when the output encoding is UTF).
    """

    def __init__(
        self,
        saved: SavedSession,
        save_path: Path,
        policy_loader: PolicyLoader | None = None,
        suggest_bid: Callable[[PlayerView], int] | None = None,
        input: IO[str] | None = None,
        output: IO[str] | None = None,
        unicode: bool | None = None,
        why: bool = False,
        explain_bid: Callable[[PlayerView], Explanation] | None = None,
    ) -> None:
        self.saved = saved
        self.game = saved.game
        self.seats = saved.seats
        self.names = [seat.name for seat in self.seats]
        self.save_path = Path(save_path)
        self.input = input if input is not None else (sys.stdin or io.StringIO())  # (stdin closed: at its end)
        self.output = output if output is not None else sys.stdout
        self.echo = not getattr(self.input, "isatty", lambda: False)()
        if unicode is None:
            encoding = getattr(self.output, "encoding", None) or "utf-8"
            unicode = "utf" in encoding.lower()
        self.unicode = unicode
        self.suggest_bid = suggest_bid
        self.why = why
        self.explain_bid = explain_bid
        # A bot's card plays are explained in full only when nobody at the keyboard could learn its hand.
        self._show_every_card = not any(seat.human for seat in self.seats)
        self._reasons: dict[int, list[str]] = {}  # history index of a bot's move -> its reasons, not yet printed
        policy_loader = policy_loader or load_policy
        self.policies: dict[int, Policy] = {}
        for seat, s in enumerate(self.seats):
            if not s.human and s.policy is not None:
                try:
                    self.policies[seat] = policy_loader(s.policy, self.game.rules, self._decision_seed(seat))
                except ValueError as error:  # (a resumed save's bot: the seat is named)
                    raise ValueError(f"seat {seat} ({s.policy}): {error}") from None
        # The history events already narrated; a resumed game retells its current hand.
        deals = [i for i, event in enumerate(self.game.history) if event[0] == "deal"]
        self._narrated = deals[-1] if deals else 0
        self._shown_to: int | None = None  # hot seat: the person who can see the screen now

    # ------------------------------------------------------------------ output
    def say(self, text: str = "") -> None:
        """Write a line (or several) to the output."""
        self.output.write(text + "\n")
        self.output.flush()

    def _read(self, prompt: str) -> str:
        """A line of input, stripped; raises _EndOfInput at the end of the stream."""
        while True:
            self.output.write(prompt)
            self.output.flush()
            try:
                line = self.input.readline()
                line.encode("utf-8")  # undecodable bytes arrive as lone surrogates under some locales
            except UnicodeError:
                self.say("\nThat line could not be read as text; please type it again.")
                continue
            if line == "":
                self.say()
                raise _EndOfInput
            if self.echo:
                self.output.write(line if line.endswith("\n") else line + "\n")
            return line.strip()

    def _narrate(self) -> None:
        history = self.game.history
        game = self.game
        while self._narrated < len(history):
            event = history[self._narrated]
            if event[0] == "round_end":
                hand = event[1] - game.start_round
                self.say(
                    screen.render_hand_result(
                        game.round_bids[hand], game.round_tricks[hand], game.round_scores[hand], event[3], self.names
                    )
                )
            else:
                line = screen.describe_event(event, self.names, self.unicode)
                if line is not None:
                    self.say(line)
                for reason in self._reasons.pop(self._narrated, ()):
                    self.say(reason)
            self._narrated += 1

    # -------------------------------------------------------------------- loop
    def run(self) -> int:
        """Play until the match ends (0), ``q`` (0, saved) or the end of input (0, saved)."""
        game = self.game
        self.say(self._intro())
        self._save()
        try:
            while not game.is_over:
                seat = game.current_player
                assert seat is not None
                if self.seats[seat].human:
                    action = self._human_turn(seat)
                else:
                    action = self._bot_action(seat)
                game.step(action)
                self._save()
        except _Quit:
            self.say(f"Game saved to {self.save_path}. {self._resume_hint()}")
            return 0
        except _EndOfInput:
            self.say(f"End of input: game saved to {self.save_path}. {self._resume_hint()}")
            return 0
        except KeyboardInterrupt:
            self.say(f"\nInterrupted: game saved to {self.save_path}. {self._resume_hint()}")
            return 130
        self._narrate()
        self.say(screen.render_final(game, self.names))
        return 0

    def _intro(self) -> str:
        game = self.game
        sizes = "-".join(str(size) for size in game.rules.hand_sizes)
        seats = ", ".join(self.names)
        state = "Resuming" if game.actions else "New match"
        return (
            f"{state}: {game.num_players} players, {game.num_rounds} hands of {sizes} cards. Seats: {seats}.\n"
            f"Seed {self.saved.bot_seed}; the game saves itself to {self.save_path}. Type h for help."
        )

    def _resume_hint(self) -> str:
        where = "" if self.save_path == default_save_path() else f" --save {self.save_path}"
        return f"Continue with: blackout play --resume{where}"

    def _save(self) -> None:
        try:
            write_save(self.save_path, self.saved)
        except OSError as error:
            raise ValueError(f"cannot save the game to {self.save_path}: {error}") from None

    def _decision_seed(self, seat: int) -> int:
        return decision_seed(self.saved.bot_seed, seat, len(self.game.actions))

    def _bot_action(self, seat: int) -> int:
        policy = self.policies[seat]
        reseed = getattr(policy, "seed", None)
        if callable(reseed):
            reseed(self._decision_seed(seat))
        view = self.game.view(seat)
        with single_threaded_torch():  # one view: torch's thread pool only waits, and stalls beside a busy core
            if self.why:  # explain instead of act: the same action, with its reasons
                why = explain(policy, view)
                action = int(why.action)
                every_action = self._show_every_card or view.phase == "bid"
                # The move is the next history event; its reasons are printed when it is narrated.
                self._reasons[len(self.game.history)] = explanation_lines(why, view, every_action)
            else:
                action = int(policy.act(view))
        if action not in self.game.legal_actions():
            try:
                self.game.clone().step(action)
            except IllegalActionError as error:
                raise ValueError(f"the {policy.name} policy in seat {seat} chose an illegal action: {error}") from None
        return action

    # ------------------------------------------------------------------ people
    def _human_turn(self, seat: int) -> int:
        if self.saved.hot_seat and self._shown_to != seat:
            self._hide_screen()
            self._narrate()
            answer = self._read(f"Pass the keyboard to {self.names[seat]}. {self.names[seat]}, press Enter to see your hand: ")
            if answer.lower() == "q":
                raise _Quit
            self._shown_to = seat
        else:
            self._narrate()
        view = self.game.view(seat)
        suggestion = self.suggest_bid(view) if self.suggest_bid is not None and view.phase == "bid" else None
        self.say()
        self.say(screen.render_turn(view, self.names, suggestion, self.unicode))
        if view.phase == "bid":
            if self.explain_bid is not None:
                why = self.explain_bid(view)
                self.say(f"Expected score of each bid ({why.kind}): {_reasons_line(why, view)}")
            return self._ask_bid(view)
        return self._ask_card(view)

    def _hide_screen(self) -> None:
        if getattr(self.output, "isatty", lambda: False)():
            # clear the terminal, its scrollback too (3J), so the last hand shown is gone
            self.output.write("\033[2J\033[3J\033[H")
        else:
            self.say("\n" * 3 + "(screen cleared for the next player)")

    def _command(self, text: str) -> bool:
        """Run a command word (s, l, h, q); False when ``text`` is not one."""
        command = COMMANDS.get(text.lower())
        if command is None:
            return False
        if command == "score":
            self.say(score_sheet(self.game, self.names))
        elif command == "last":
            self.say(self._last_trick())
        elif command == "help":
            self.say(screen.HELP)
        else:
            raise _Quit
        return True

    def _last_trick(self) -> str:
        for event in reversed(self.game.history):
            if event[0] == "trick":
                return screen.render_last_trick(event[2], event[1], self.names)
        return "No trick has been played yet."

    def _ask_bid(self, view: PlayerView) -> int:
        top = view.hand_size
        while True:
            text = self._read(f"Your bid (0-{top}; s score, l last trick, h help, q quit): ")
            if self._command(text):
                continue
            if not text:
                self.say(f"Please type your bid, a number 0-{top} (h for help).")
                continue
            try:
                bid = int(text)
            except ValueError:
                self.say(f"{text!r} is not a bid or a command: type a number 0-{top}, or h for help.")
                continue
            if not 0 <= bid <= top:
                self.say(f"There is no bid of {bid} here: with {top} card{'s' if top != 1 else ''} bids run 0-{top}.")
                continue
            if bid == view.forbidden_bid:
                self.say(f"You cannot bid {bid}: {screen.forbidden_bid_reason(view)}.")
                nearest = self.game.nearest_permitted_bid(bid)
                if self._confirm(f"Bid {nearest} instead, the nearest permitted bid? [y/n] "):
                    return view.num_cards + nearest
                continue
            return view.num_cards + bid

    def _confirm(self, prompt: str) -> bool:
        while True:
            answer = self._read(prompt).lower()
            if answer in ("y", "yes"):
                return True
            if answer in ("n", "no"):
                return False
            if self._command(answer):  # s, l, h and q work at every prompt, this one too
                continue
            self.say("Please answer y or n (or s score, l last trick, h help, q quit).")

    def _ask_card(self, view: PlayerView) -> int:
        cards = screen.hand_order(view)
        top = len(cards)
        while True:
            text = self._read(f"Your card (1-{top} or a name like QS; s score, l last trick, h help, q quit): ")
            if self._command(text):
                continue
            if not text:
                self.say(f"Please choose a card: its number 1-{top} or its name, e.g. {_example(cards)} (h for help).")
                continue
            if text.isascii() and text.isdigit():  # ("²".isdigit() too, but int() refuses it)
                number = int(text) if len(text) <= 6 else 0  # (int() refuses thousands of digits)
                if not 1 <= number <= top:
                    self.say(f"There is no card {text:.8}: your cards are numbered 1-{top}.")
                    continue
                card = cards[number - 1]
            else:
                try:
                    card = parse_card(text)
                except ValueError:
                    self.say(
                        f"{text!r} is not a card or a command: type a number 1-{top}, a card such as "
                        f"{_example(cards)} or 10h, or h for help."
                    )
                    continue
            why = screen.explain_illegal_card(view, card)
            if why is not None:
                self.say(f"You cannot play {card_to_str(card)}: {why}.")
                continue
            return card


def _example(cards: Sequence[int]) -> str:
    return card_to_str(cards[0]) if cards else "QS"

