"""A rating ladder: every agent against every other at mixed tables, stored in one SQLite file.

Tables
------
A ladder has ``k`` agents (any policy specs) and tables of ``n`` seats (the rules'
players). Each *table* seats ``n`` distinct agents: every combination of ``n``
agents is a table, so every agent meets every other equally often. Each table
plays the ladder's deals ``0..deals-1`` (the same deals at every table, drawn as
:func:`~.tournament.draw_deal` draws them), and each deal in ``n`` seatings: the
``n`` rotations of one cyclic order of the table's agents, so each agent holds each
seat's cards once and card and seat luck cancel. The cyclic order changes from
deal to deal (deal ``d`` takes the ``d mod (n-1)!``-th order), so over the deals each
agent also sits beside each other on either side. One (table, deal) is a *unit*:
its ``n`` games are played together and stored in one transaction.

Adding an agent adds the tables it sits at and nothing else: the games already
played stay as they are, and :func:`play` plays only the missing units. Removing
one (:meth:`Ladder.remove_agent`) deletes the games of its tables and nothing else.

Ratings
-------
OpenSkill's Plackett-Luce model (``openskill``), one update per game over its final
ranking (the places of :func:`~blackout_env.game.rules_logic.match_places`: equal totals
share a place). The ratings are recomputed from every stored game in one fixed order
(deal, table, rotation), so they depend on the games alone: not on the order the units
were played in, on the number of workers, on interruptions, or on when an agent was
added. The leaderboard orders agents by the conservative rating ``mu - 3 sigma``.

Alongside: each agent's mean score per hand and its margin over its table (its score
minus the mean of the other seats, per hand), each with a 95% interval whose samples
are the per-deal means (the deal is the independent unit: all the tables play it),
and its bid-made rate.

Storage
-------
One SQLite file in WAL mode: ``meta`` (format, schema version, rules, seed, hands,
deals, the ids of removed agents), ``agents`` (name, spec, package version, the checkpoint's SHA-256),
``deals`` (deck orders), ``games`` (table, deal, rotation, seats, totals, actions;
unique per table, deal and rotation), ``hands`` (per game, round and seat: the bid,
tricks and score), ``pairwise`` (agent A against copies of agent B:
:func:`play_pairwise`), ``positions`` (each agent's score on the suite of obvious positions:
:func:`score_positions`), ``runs`` and ``ratings`` (the ratings after each run: their
history). A unit already stored is never played again, and a unit that another
process stored first is dropped, not written twice. A file that is not a ladder (not
SQLite, corrupt, another program's database, another schema version) is refused
before anything is written to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import shlex
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blackout_env import __version__
from blackout_env.agents.policies import absolute_paths, parse_options, parse_spec
from blackout_env.game.rules import Rules
from blackout_env.game.rules_logic import match_places

from ..agents.policies import Policy, load_policy
from ..files import write_text_atomically
from .sequential import SPRT
from .tournament import confidence_half_width, draw_deal, play_game, reseed, single_threaded_torch

__all__ = [
    "LADDER_FORMAT", "LADDER_SCHEMA", "AgentRow", "Ladder", "LadderError", "Standing", "checkpoint_sha256",
    "create_ladder", "obvious_text", "open_ladder", "play", "play_pairwise", "score_positions",
]

LADDER_FORMAT = "blackout-ladder"
LADDER_SCHEMA = 1
SQLITE_HEADER = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE agents (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, spec TEXT NOT NULL, version TEXT NOT NULL,
    checkpoint_sha256 TEXT, added TEXT NOT NULL
);
CREATE TABLE deals (deal INTEGER PRIMARY KEY, first_dealer INTEGER NOT NULL, start_round INTEGER NOT NULL,
    decks TEXT NOT NULL);
CREATE TABLE runs (id INTEGER PRIMARY KEY, command TEXT NOT NULL, started TEXT NOT NULL, finished TEXT,
    games INTEGER NOT NULL DEFAULT 0);
CREATE TABLE games (
    id INTEGER PRIMARY KEY, table_key TEXT NOT NULL, deal INTEGER NOT NULL REFERENCES deals(deal),
    rotation INTEGER NOT NULL, seats TEXT NOT NULL, totals TEXT NOT NULL, actions TEXT NOT NULL,
    run INTEGER NOT NULL REFERENCES runs(id), UNIQUE (table_key, deal, rotation)
);
CREATE TABLE hands (
    game INTEGER NOT NULL REFERENCES games(id), round INTEGER NOT NULL, seat INTEGER NOT NULL,
    agent INTEGER NOT NULL REFERENCES agents(id), bid INTEGER NOT NULL, tricks INTEGER NOT NULL,
    score REAL NOT NULL, PRIMARY KEY (game, round, seat)
);
CREATE INDEX hands_by_agent ON hands(agent);
CREATE TABLE pairwise (
    a INTEGER NOT NULL REFERENCES agents(id), b INTEGER NOT NULL REFERENCES agents(id), deals INTEGER NOT NULL,
    a_score REAL NOT NULL, b_score REAL NOT NULL, difference REAL NOT NULL, ci95 REAL, sprt TEXT, PRIMARY KEY (a, b)
);
CREATE TABLE positions (
    agent INTEGER NOT NULL REFERENCES agents(id), suite TEXT NOT NULL, passed INTEGER NOT NULL, total INTEGER NOT NULL,
    PRIMARY KEY (agent, suite)
);
CREATE TABLE ratings (
    run INTEGER NOT NULL REFERENCES runs(id), agent INTEGER NOT NULL REFERENCES agents(id),
    mu REAL NOT NULL, sigma REAL NOT NULL, games INTEGER NOT NULL, PRIMARY KEY (run, agent)
);
"""
_TABLES = ("meta", "agents", "deals", "runs", "games", "hands", "pairwise", "positions", "ratings")


class LadderError(ValueError):
    """A ladder file or request that cannot be used: the message names the file and the problem."""


def checkpoint_sha256(spec: str) -> str | None:
    """The SHA-256 of the checkpoint file a spec plays (``ppo``, ``ppo:PATH``, ``checkpoint=PATH``), else None.

    Stored with the agent, so a ladder notices a checkpoint that changed under the same spec.
    """
    name, argument = parse_spec(spec)
    path: str | os.PathLike[str] | None = None
    if name in ("ppo", "ppo-standard", "ppo+search", "ppo+search-deep", "ppo+rollout"):
        from ..agents.policy_net import SHIPPED_CHECKPOINT, SPECIALIST_CHECKPOINT

        if name == "ppo" and argument:
            path = argument
        elif name == "ppo-standard":
            path = SPECIALIST_CHECKPOINT
        else:
            options = parse_options(argument, spec) if name != "ppo" else {}
            path = options.get("checkpoint", SHIPPED_CHECKPOINT)
    elif argument and name not in ("rllib",):
        path = parse_options(argument, spec).get("checkpoint") if "=" in argument else None
    if path is None or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@dataclass(frozen=True)
class AgentRow:
    """An agent of a ladder as stored: its id, display name, spec, the package version and checkpoint hash."""

    id: int
    name: str
    spec: str
    version: str
    checkpoint_sha256: str | None


@dataclass(frozen=True)
class Standing:
    """One row of the leaderboard."""

    rank: int
    name: str
    spec: str
    conservative: float
    """``mu - 3 sigma``: the rating the leaderboard sorts by."""
    mu: float
    sigma: float
    games: int
    hands: int
    score_per_hand: float
    score_ci95: float | None
    margin_per_hand: float
    """Score per hand minus the mean of the other seats of the same hand."""
    margin_ci95: float | None
    bid_made_rate: float
    obvious: tuple[int, int] | None = None
    """(right, asked) on the shipped suite of obvious positions (:func:`score_positions`), when scored."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return dict(self.__dict__)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _table_key(agent_ids: Iterable[int]) -> str:
    return ",".join(str(agent) for agent in sorted(agent_ids))


def seating_of(table: Sequence[int], deal: int) -> list[int]:
    """The cyclic order in which ``table``'s agents sit for ``deal`` (rotation 0); see the module's Tables."""
    first, *rest = sorted(table)
    orders = list(itertools.permutations(rest))
    return [first, *orders[deal % len(orders)]]


class Ladder:
    """An open ladder file. Make one with :func:`create_ladder` or :func:`open_ladder`; close it when done."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self.db = connection
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        try:
            self.rules = Rules.from_dict(json.loads(meta["rules"]))
            self.seed = int(meta["seed"])
            self.hands_only = {"1": True, "0": False}[meta["hands"]]
            if self.seed < 0 or int(meta["deals"]) < 1:
                raise ValueError("a negative seed or no deals")
        except KeyError as error:
            connection.close()
            raise LadderError(f"{path}: a damaged ladder (no setting {error.args[0]!r}); it was left untouched") from None
        except (ValueError, TypeError) as error:  # json.JSONDecodeError and RulesError are ValueErrors
            connection.close()
            raise LadderError(f"{path}: a damaged ladder (its settings do not read: {error}); it was left untouched") from None

    # ----------------------------------------------------------- settings
    @property
    def deals(self) -> int:
        """Deals per table (each played in every rotation)."""
        return int(self.db.execute("SELECT value FROM meta WHERE key = 'deals'").fetchone()[0])

    def set_deals(self, deals: int) -> None:
        """Play ``deals`` deals per table from now on (more deals: the next run plays the new ones)."""
        if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
            raise LadderError(f"deals: must be a positive integer, got {deals!r}")
        if deals < self.deals:
            raise LadderError(
                f"{self.path}: deals {deals} is fewer than the ladder's {self.deals}: every table plays the same "
                f"deals, and its tables played or will play {self.deals} (a ladder's deals only grow)"
            )
        with self.db:
            self.db.execute("UPDATE meta SET value = ? WHERE key = 'deals'", (str(deals),))

    def agents(self) -> list[AgentRow]:
        """The agents, in the order they joined."""
        rows = self.db.execute("SELECT id, name, spec, version, checkpoint_sha256 FROM agents ORDER BY id")
        return [AgentRow(*row) for row in rows]

    def agent(self, name: str) -> AgentRow:
        """The agent called ``name``."""
        for row in self.agents():
            if row.name == name:
                return row
        raise LadderError(f"{self.path}: no agent {name!r}; agents: {', '.join(a.name for a in self.agents())}")

    def check_agent(self, spec: str) -> str | None:
        """Load ``spec`` under the ladder's rules (an unknown spec or a checkpoint for other rules raises); its hash."""
        return _checked_agent(spec, self.rules)

    def add_agent(self, spec: str, name: str | None = None) -> AgentRow:
        """Register an agent (checked by loading it) and return it; the same name and spec again returns the stored row.

        The same name with another spec, or a checkpoint whose contents changed, is refused.
        """
        if not isinstance(spec, str) or not spec.strip():
            raise LadderError(f"agent spec: expected a policy spec such as 'heuristic', got {spec!r}")
        spec = absolute_paths(spec.strip())  # a file it names loads from any folder the ladder is run in
        named = name is not None
        name = spec if name is None else name
        if not isinstance(name, str) or not name.strip() or name != name.strip():
            raise LadderError(f"agent name: expected a name without spaces at its ends, such as 'mine', got {name!r}")
        digest = self.check_agent(spec)
        for row in self.agents():
            if self._is_named(row, name, named):
                if row.spec != spec and absolute_paths(row.spec) != spec:
                    raise LadderError(f"{self.path}: agent {name!r} is already in the ladder as {row.spec!r}, not {spec!r}")
                self.check_unchanged(row, digest)
                return row
        self.db.execute("BEGIN IMMEDIATE")  # (the id chosen and taken in one transaction, whoever else adds one)
        try:
            # Never an id a removed agent had (SQLite would reuse the highest): a run that began before the removal
            # would store that agent's games under the new one.
            taken = [row.id for row in self.agents()] + self._removed_ids()
            cursor = self.db.execute(
                "INSERT INTO agents (id, name, spec, version, checkpoint_sha256, added) VALUES (?, ?, ?, ?, ?, ?)",
                (max(taken, default=0) + 1, name, spec, __version__, digest, _now()),
            )
            self.db.commit()
        except sqlite3.IntegrityError:  # the same name, added by another process meanwhile
            self.db.rollback()
            raise LadderError(f"{self.path}: an agent named {name!r} was added meanwhile; run the command again") from None
        except BaseException:
            self.db.rollback()
            raise
        return AgentRow(int(cursor.lastrowid), name, spec, __version__, digest)

    def _removed_ids(self) -> list[int]:
        """The ids of the agents removed from the ladder (kept in ``meta``, never given again)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'removed_agents'").fetchone()
        try:
            ids = json.loads(row[0]) if row else []
        except ValueError:
            ids = []
        return [i for i in ids if type(i) is int] if isinstance(ids, list) else []

    @staticmethod
    def _is_named(row: AgentRow, name: str, named: bool) -> bool:
        """Whether ``row`` is the agent called ``name``; an unnamed spec also matches a row named by the same
        spec as it was typed (ladders written before files were stored absolute: ``ppo:agent.pt``)."""
        return row.name == name or (not named and absolute_paths(row.name) == name)

    def is_new(self, spec: str, name: str | None = None) -> bool:
        """Whether :meth:`add_agent` with these arguments would add an agent (rather than find it)."""
        spec = absolute_paths(spec.strip())
        return not any(self._is_named(row, spec if name is None else name, name is not None) for row in self.agents())

    def remove_agent(self, name: str, command: str = "remove") -> AgentRow:
        """Take agent ``name`` off the ladder with every game it sat in (and its pairwise and positions
        rows); the others' ratings are recomputed from the games left, and stored as a run of ``command``.

        Its checkpoint is not loaded: this is how an agent whose file changed or was lost leaves. A
        ladder is left with at least one table's worth of agents (else refused, nothing changed).
        """
        row = self.agent(name)
        left = len(self.agents()) - 1
        if left < self.rules.num_players:
            raise LadderError(
                f"{self.path}: without {name!r} the ladder would have {left} agents, fewer than a table's "
                f"{self.rules.num_players} seats: add another agent first; nothing was removed"
            )
        self.db.execute("BEGIN IMMEDIATE")
        try:
            games = [(game,) for (game,) in self.db.execute("SELECT DISTINCT game FROM hands WHERE agent = ?", (row.id,))]
            self.db.executemany("DELETE FROM hands WHERE game = ?", games)
            self.db.executemany("DELETE FROM games WHERE id = ?", games)
            self.db.execute("DELETE FROM pairwise WHERE a = ? OR b = ?", (row.id, row.id))
            for table in ("positions", "ratings"):
                self.db.execute(f"DELETE FROM {table} WHERE agent = ?", (row.id,))
            self.db.execute("DELETE FROM agents WHERE id = ?", (row.id,))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('removed_agents', ?)",
                            (json.dumps(sorted({*self._removed_ids(), row.id})),))
            self.db.commit()
        except BaseException:
            self.db.rollback()
            raise
        self.finish_run(self.start_run(command))
        return row

    def check_agents(self) -> None:
        """Load every agent under the ladder's rules and check its checkpoint is the one it was rated with.

        Called before anything is written for a run, so that a spec that no longer loads (a
        checkpoint moved or changed) stops it with the file as it was.
        """
        for row in self.agents():
            try:
                digest = self.check_agent(row.spec)
            except LadderError as error:
                raise LadderError(
                    f"{self.path}: {error} (put its file back, or take it off with its games: "
                    f"{self._remove_command(row)})"
                ) from None
            self.check_unchanged(row, digest)

    def _remove_command(self, row: AgentRow) -> str:
        return f"blackout ladder remove {shlex.quote(str(self.path))} {shlex.quote(row.name)}"

    def check_unchanged(self, row: AgentRow, digest: str | None = None) -> None:
        """Refuse to play an agent whose checkpoint differs from the one it was rated with."""
        digest = checkpoint_sha256(row.spec) if digest is None else digest
        if row.checkpoint_sha256 is not None and digest != row.checkpoint_sha256:
            raise LadderError(
                f"{self.path}: agent {row.name!r}: its checkpoint changed since it joined the ladder "
                f"(SHA-256 {row.checkpoint_sha256[:12]}..., now {str(digest)[:12]}...): its games were played by the "
                f"checkpoint it joined with; put that file back to go on, or take the agent off with its games "
                f"({self._remove_command(row)}) and add the new one"
            )

    # -------------------------------------------------------------- schedule
    def tables(self, with_agent: int | None = None) -> list[tuple[int, ...]]:
        """Every table (a combination of distinct agent ids), or only those where agent ``with_agent`` sits."""
        ids = [row.id for row in self.agents()]
        tables = list(itertools.combinations(ids, self.rules.num_players))
        return [table for table in tables if with_agent is None or with_agent in table]

    def pending(self, with_agent: int | None = None) -> list[tuple[tuple[int, ...], int]]:
        """The units (table, deal) not yet stored, deal by deal."""
        played = {(key, deal) for key, deal in self.db.execute("SELECT DISTINCT table_key, deal FROM games")}
        tables = self.tables(with_agent)
        return [
            (table, deal) for deal in range(self.deals) for table in tables if (_table_key(table), deal) not in played
        ]

    # ------------------------------------------------------------- writing
    def start_run(self, command: str) -> int:
        """Open a run (one ``run`` or ``add`` command) and return its id."""
        with self.db:
            cursor = self.db.execute("INSERT INTO runs (command, started) VALUES (?, ?)", (command, _now()))
        return int(cursor.lastrowid)

    def store_unit(self, run: int, table: Sequence[int], deal: int, games: Sequence[dict[str, Any]]) -> bool:
        """Store the games of one unit in one transaction; False (nothing written) when it is stored already, or
        one of its agents left the ladder meanwhile."""
        key = _table_key(table)
        self.db.execute("BEGIN IMMEDIATE")  # one writer at a time, so the check below holds until the commit
        try:
            if self.db.execute("SELECT 1 FROM games WHERE table_key = ? AND deal = ?", (key, deal)).fetchone():
                self.db.rollback()
                return False
            agents = set(table)
            marks = ",".join("?" * len(agents))
            if self.db.execute(f"SELECT COUNT(*) FROM agents WHERE id IN ({marks})", tuple(agents)).fetchone()[0] != len(agents):
                self.db.rollback()  # an agent was removed (blackout ladder remove) while this unit was played
                return False
            if not self.db.execute("SELECT 1 FROM deals WHERE deal = ?", (deal,)).fetchone():
                cards = draw_deal(self.rules, self.seed, deal, self.hands_only)
                self.db.execute(
                    "INSERT INTO deals VALUES (?, ?, ?, ?)",
                    (deal, cards.first_dealer, cards.start_round, json.dumps(cards.decks, separators=(",", ":"))),
                )
            for game in games:
                cursor = self.db.execute(
                    "INSERT INTO games (table_key, deal, rotation, seats, totals, actions, run) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (key, deal, game["rotation"], json.dumps(game["seats"]), json.dumps(game["totals"]),
                     json.dumps(game["actions"], separators=(",", ":")), run),
                )
                game_id = cursor.lastrowid
                self.db.executemany(
                    "INSERT INTO hands VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (game_id, r, seat, game["seats"][seat], bids[seat], tricks[seat], scores[seat])
                        for r, (bids, tricks, scores) in enumerate(zip(game["bids"], game["tricks"], game["scores"]))
                        for seat in range(len(game["seats"]))
                    ],
                )
            self.db.execute("UPDATE runs SET games = games + ? WHERE id = ?", (len(games), run))
            self.db.commit()
        except BaseException:
            self.db.rollback()
            raise
        return True

    def finish_run(self, run: int) -> None:
        """Close a run: its end time, and everyone's ratings after it (the ratings history)."""
        ratings = self.ratings()
        with self.db:
            self.db.execute("UPDATE runs SET finished = ? WHERE id = ?", (_now(), run))
            self.db.executemany(
                "INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?)",
                [(run, agent, mu, sigma, games) for agent, (mu, sigma, games) in ratings.items()],
            )

    # -------------------------------------------------------------- figures
    def games_played(self) -> int:
        """The number of games stored."""
        return int(self.db.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def ratings(self) -> dict[int, tuple[float, float, int]]:
        """Per agent id: (mu, sigma, games), recomputed from every stored game in (deal, table, rotation) order."""
        from openskill.models import PlackettLuce

        model = PlackettLuce()
        ratings = {row.id: model.rating() for row in self.agents()}
        games = dict.fromkeys(ratings, 0)
        rows = self.db.execute("SELECT id, seats, totals FROM games ORDER BY deal, table_key, rotation")
        for game, seats_text, totals_text in rows:
            seats, totals = self._game_row(game, seats_text, totals_text, ratings)
            teams = model.rate([[ratings[agent]] for agent in seats], ranks=match_places(totals))
            for agent, (rating,) in zip(seats, teams):
                ratings[agent] = rating
                games[agent] += 1
        return {agent: (float(r.mu), float(r.sigma), games[agent]) for agent, r in ratings.items()}

    def _game_row(self, game: int, seats_text: Any, totals_text: Any, agents: Any) -> tuple[list[int], list[float]]:
        """A stored game's seats (agent ids) and match totals, LadderError naming the game when they do not read."""
        n = self.rules.num_players
        try:
            seats, totals = json.loads(seats_text), json.loads(totals_text)
        except (TypeError, ValueError):
            seats = totals = None
        if not (isinstance(seats, list) and len(seats) == n and all(type(a) is int and a in agents for a in seats)
                and isinstance(totals, list) and len(totals) == n
                and all(type(t) in (int, float) and math.isfinite(t) for t in totals)):
            raise LadderError(
                f"{self.path}: a damaged ladder: game {game}'s seats or totals are not {n} of its agents and {n} "
                f"scores ({str(seats_text)[:40]!r}, {str(totals_text)[:40]!r}); it was left untouched"
            )
        return seats, totals

    def standings(self) -> list[Standing]:
        """The leaderboard: agents by conservative rating ``mu - 3 sigma``, best first."""
        ratings = self.ratings()
        per_deal = self.db.execute(
            """
            SELECT h.agent, g.deal, COUNT(*), SUM(h.score), SUM(h.bid = h.tricks),
                   SUM(h.score - (t.total - h.score) / (t.seats - 1))
            FROM hands h JOIN games g ON g.id = h.game
            JOIN (SELECT game, round, SUM(score) AS total, COUNT(*) AS seats FROM hands GROUP BY game, round) t
              ON t.game = h.game AND t.round = h.round
            GROUP BY h.agent, g.deal
            """
        ).fetchall()
        samples: dict[int, dict[str, list[float]]] = {}
        for agent, _deal, hands, score, made, margin in per_deal:
            entry = samples.setdefault(agent, {"hands": [], "score": [], "made": [], "margin": []})
            entry["hands"].append(hands)
            entry["score"].append(score)
            entry["made"].append(made)
            entry["margin"].append(margin)
        rows = []
        for agent in self.agents():
            mu, sigma, games = ratings[agent.id]
            entry = samples.get(agent.id)
            if entry is None:
                hands, score, score_ci, margin, margin_ci, made = 0, math.nan, None, math.nan, None, math.nan
            else:
                counts = np.asarray(entry["hands"], dtype=float)
                hands = int(counts.sum())
                score = float(np.sum(entry["score"]) / hands)
                margin = float(np.sum(entry["margin"]) / hands)
                made = float(np.sum(entry["made"]) / hands)
                score_ci = confidence_half_width(np.asarray(entry["score"]) / counts)
                margin_ci = confidence_half_width(np.asarray(entry["margin"]) / counts)
            rows.append((mu - 3 * sigma, mu, sigma, games, hands, score, score_ci, margin, margin_ci, made, agent))
        rows.sort(key=lambda row: (-row[0], row[-1].id))
        obvious = self.obvious_scores()
        return [
            Standing(rank, agent.name, agent.spec, cons, mu, sigma, games, hands, score, score_ci, margin, margin_ci, made,
                     obvious.get(agent.id))
            for rank, (cons, mu, sigma, games, hands, score, score_ci, margin, margin_ci, made, agent) in enumerate(rows, 1)
        ]

    def obvious_scores(self) -> dict[int, tuple[int, int]]:
        """Per agent id, (right, asked) on the newest suite of obvious positions it was scored on."""
        rows = self.db.execute("SELECT agent, passed, total FROM positions ORDER BY rowid")
        return {agent: (passed, total) for agent, passed, total in rows}

    def pairwise(self) -> list[dict[str, Any]]:
        """The stored pairwise matches: agent ``a`` against copies of ``b``, the difference per hand with its interval."""
        names = {row.id: row.name for row in self.agents()}
        rows = self.db.execute("SELECT a, b, deals, a_score, b_score, difference, ci95, sprt FROM pairwise ORDER BY a, b")
        return [
            {"a": names[a], "b": names[b], "deals": deals, "a_score": a_score, "b_score": b_score,
             "difference": difference, "ci95": ci95, "sprt": None if sprt is None else json.loads(sprt)}
            for a, b, deals, a_score, b_score, difference, ci95, sprt in rows
        ]

    def _pairwise_lines(self, markdown: bool) -> list[str]:
        pairs = self.pairwise()
        if not pairs:
            return []
        n = self.rules.num_players
        title = f"one agent against {n - 1} copies of another (duplicate deals; difference in score per hand, 95% CI):"
        if markdown:
            lines = ["", title, "", "| agent | against | deals | agent's score/hand | theirs | difference (95% CI) |",
                     "|---|---|---:|---:|---:|---:|"]
            row = "| {a} | {b} | {deals} | {a_score:.2f} | {b_score:.2f} | {diff} |"
        else:
            lines = ["", title]
            row = "  {a} vs {b}: {deals} deals, {a_score:.2f} against {b_score:.2f}, difference {diff}"
        for pair in pairs:
            diff = _with_ci(pair["difference"], pair["ci95"], "+")
            if pair["sprt"] is not None:
                decided = {"H1": f">= {pair['sprt']['high']:+g}", "H0": f"<= {pair['sprt']['low']:+g}", None: "undecided"}
                diff += f" (SPRT: {decided[pair['sprt']['decision']]})"
            names = {"a": _code(pair["a"]), "b": _code(pair["b"])} if markdown else {}
            lines.append(row.format(**{**pair, **names}, diff=diff))
        return lines

    def table(self) -> str:
        """The leaderboard as text."""
        standings = self.standings()
        width = max([12, *(len(s.name) for s in standings)])
        n = self.rules.num_players
        lines = [
            f"{self.path.name}: {len(standings)} agents, tables of {n} ({len(self.tables())} tables x {self.deals} deals "
            f"x {n} rotations), {'single hands' if self.hands_only else 'whole matches'}, seed {self.seed}; "
            f"{self.games_played()} games played",
            "",
            f"{'rank':>4} {'agent':<{width}} {'mu-3sigma':>9} {'mu':>6} {'sigma':>6} {'games':>6} "
            f"{'score/hand (95% CI)':>20} {'vs table (95% CI)':>19} {'bid made':>8} {'obvious':>8}",
        ]
        for s in standings:
            lines.append(
                f"{s.rank:>4} {s.name:<{width}} {s.conservative:>9.2f} {s.mu:>6.2f} {s.sigma:>6.2f} {s.games:>6} "
                f"{_with_ci(s.score_per_hand, s.score_ci95):>20} {_with_ci(s.margin_per_hand, s.margin_ci95, '+'):>19} "
                f"{_percent(s.bid_made_rate):>8} {obvious_text(s.obvious):>8}"
            )
        return "\n".join(lines + self._pairwise_lines(markdown=False))

    def to_dict(self) -> dict[str, Any]:
        """The ladder's settings, agents and leaderboard as plain data (the JSON export)."""
        return {
            "format": LADDER_FORMAT, "schema": LADDER_SCHEMA, "rules": self.rules.to_dict(), "seed": self.seed,
            "hands_only": self.hands_only, "deals": self.deals, "tables": len(self.tables()),
            "games": self.games_played(),
            "agents": [row.__dict__ for row in self.agents()],
            "standings": [_finite(s.to_dict()) for s in self.standings()],
            "pairwise": self.pairwise(),
        }

    def markdown(self) -> str:
        """The leaderboard as a Markdown table."""
        n = self.rules.num_players
        lines = [
            f"{len(self.agents())} agents, tables of {n}: {len(self.tables())} tables x {self.deals} deals x {n} rotations "
            f"({'single hands' if self.hands_only else 'whole matches'}, seed {self.seed}), {self.games_played()} games.",
            "",
            "| rank | agent | mu - 3 sigma | mu | sigma | games | score/hand (95% CI) | vs table (95% CI) | bid made | obvious moves |",
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for s in self.standings():
            lines.append(
                f"| {s.rank} | {_code(s.name)} | {s.conservative:.2f} | {s.mu:.2f} | {s.sigma:.2f} | {s.games} | "
                f"{_with_ci(s.score_per_hand, s.score_ci95)} | {_with_ci(s.margin_per_hand, s.margin_ci95, '+')} | "
                f"{_percent(s.bid_made_rate)} | {obvious_text(s.obvious)} |"
            )
        return "\n".join(lines + self._pairwise_lines(markdown=True))

    def export(self, out_dir: str | os.PathLike[str]) -> dict[str, Path]:
        """Write ``ladder.md`` and ``ladder.json`` to ``out_dir``."""
        out = Path(out_dir)
        paths = {"markdown": out / "ladder.md", "json": out / "ladder.json"}
        texts = {"markdown": self.markdown() + "\n", "json": json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n"}
        try:
            out.mkdir(parents=True, exist_ok=True)
            for path in paths.values():  # (both checked first: neither is written when the other cannot be)
                if path.exists() and not path.is_file():
                    raise LadderError(f"export: {os.fspath(path)!r} is in the way: it is not a file; nothing was written")
            for key, path in paths.items():
                write_text_atomically(path, texts[key])
        except OSError as error:
            raise LadderError(f"export: cannot write to {os.fspath(out_dir)!r}: {error.strerror or error}") from None
        return paths

    def close(self) -> None:
        """Close the file."""
        self.db.close()

    def __enter__(self) -> Ladder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _checked_agent(spec: str, rules: Rules) -> str | None:
    """Load ``spec`` under ``rules`` (LadderError naming it when it does not load); its checkpoint's hash."""
    try:
        load_policy(spec, rules, None)
    except ValueError as error:
        raise LadderError(f"agent {spec!r}: {error}") from None
    return checkpoint_sha256(spec)


def _code(name: str) -> str:
    """An agent's name as Markdown code in a table cell, whatever characters it holds."""
    name = " ".join(name.split()).replace("|", "\\|")  # a line break or a bar would end the cell
    fence = "``" if "`" in name else "`"
    return f"{fence} {name} {fence}" if fence == "``" else f"`{name}`"


def _with_ci(value: float, half: float | None, sign: str = "") -> str:
    if math.isnan(value):
        return "-"
    text = f"{value:{sign}.2f}"
    return f"{text} ± {half:.2f}" if half is not None else f"{text} ± n/a"


def obvious_text(score: tuple[int, int] | None) -> str:
    """Right/asked; "n/a" for an agent asked none (a specialist for rules no position has)."""
    if score is None:
        return "-"
    return "n/a" if score[1] == 0 else f"{score[0]}/{score[1]}"


def _percent(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1%}"


def _finite(data: dict[str, Any]) -> dict[str, Any]:
    """NaN (an agent with no game yet) as null: strict JSON."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in data.items()}


# ---------------------------------------------------------------- opening
def _connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    """A connection to ``path``; read-only ones create no file beside it (no -wal, no -shm) when it has no log."""
    mode = "rw"
    if read_only:
        # A reader of a WAL database makes its -wal and -shm files; with no -wal there is nothing to read
        # in one, and "immutable" reads the file alone (a foreign file stays exactly as it was).
        mode = "ro" if Path(f"{path}-wal").exists() else "ro&immutable=1"
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode={mode}", uri=True, timeout=60)


def _check_file(path: Path) -> None:
    """Refuse a file that is not a ladder of this schema, reading it only (nothing is written to it)."""
    if path.is_dir():
        raise LadderError(f"{path}: is a folder, not a ladder file")
    try:
        with path.open("rb") as file:
            header = file.read(len(SQLITE_HEADER))
    except OSError as error:
        raise LadderError(f"{path}: cannot be read: {error.strerror or error}") from None
    if header != SQLITE_HEADER:
        raise LadderError(f"{path}: not a ladder file (not an SQLite database); it was left untouched")
    try:
        connection = _connect(path, read_only=True)
        try:
            names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            columns = [row[1] for row in connection.execute("PRAGMA table_info(meta)")]
            if "meta" not in names or columns[:2] != ["key", "value"]:
                raise LadderError(f"{path}: an SQLite database of another program (no ladder tables); it was left untouched")
            meta = dict(connection.execute("SELECT key, value FROM meta"))
            if meta.get("format") != LADDER_FORMAT:
                raise LadderError(f"{path}: an SQLite database of another program (format {meta.get('format')!r}); it was left untouched")
            if meta.get("schema") != str(LADDER_SCHEMA):
                raise LadderError(
                    f"{path}: a ladder of schema version {meta.get('schema')}, this version reads {LADDER_SCHEMA}; "
                    "it was left untouched"
                )
            missing = [name for name in _TABLES if name not in names]
            if missing:
                raise LadderError(f"{path}: a damaged ladder (no table {missing[0]!r}); it was left untouched")
            problem = connection.execute("PRAGMA quick_check").fetchone()[0]
            if problem != "ok":
                raise LadderError(f"{path}: a corrupt database ({problem}); it was left untouched")
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise LadderError(f"{path}: a corrupt database ({error}); it was left untouched") from None


def open_ladder(path: str | os.PathLike[str], read_only: bool = False) -> Ladder:
    """Open an existing ladder file, after checking that it is one (LadderError otherwise, the file untouched).

    ``read_only``: a connection that cannot write (a viewer's: ``show``, ``export``, the web page).
    """
    path = Path(path)
    if not path.exists():
        raise LadderError(f"{path}: no such ladder file (create one with `blackout ladder run FILE --agents ...`)")
    _check_file(path)
    if read_only:
        return Ladder(path, _connect(path, read_only=True))
    # SQLite would open a file it cannot write read-only, fail at the first write and leave -wal and -shm
    # files behind; its log files are made beside it, so the folder must be writable too.
    for what, where in (("file", path), ("folder", path.parent.resolve())):
        if not os.access(where, os.W_OK):
            raise LadderError(
                f"{path}: cannot be written (its {what} is read-only); `blackout ladder show` and `export` read it"
            )
    connection = _connect(path)
    connection.execute("PRAGMA journal_mode = WAL")
    return Ladder(path, connection)


def create_ladder(
    path: str | os.PathLike[str], rules: Rules | str | Any = "standard", deals: int = 100, seed: int = 0,
    hands: bool = False, agents: Sequence[str] = (),
) -> Ladder:
    """Create a new ladder file (refusing a path that exists) with these settings and ``agents`` (specs, each
    loaded first and named by its spec), all in the file from the moment it appears: an interrupted
    creation leaves no file."""
    path = Path(path)
    rules = Rules.resolve(rules)
    specs = [absolute_paths(spec.strip()) for spec in agents]
    rows = [(spec, spec, __version__, _checked_agent(spec, rules), _now()) for spec in specs]
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 1:
        raise LadderError(f"deals: must be a positive integer, got {deals!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise LadderError(f"seed: must be a non-negative integer, got {seed!r}")
    if path.exists():
        raise LadderError(f"{path}: exists already; open it instead of creating it")
    # Built under a temporary name and linked into place whole: a reader (or a run killed while
    # creating) never meets a half-made file at ``path``, and a file that appears meanwhile is kept.
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise LadderError(f"{path}: cannot be created: its folder cannot be made ({error.strerror or error})") from None
    try:
        connection = sqlite3.connect(temp)
        try:
            connection.execute("PRAGMA journal_mode = WAL")
            with connection:
                connection.executescript(_SCHEMA)
                connection.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("format", LADDER_FORMAT), ("schema", str(LADDER_SCHEMA)), ("created_by", __version__),
                     ("rules", json.dumps(rules.to_dict())), ("seed", str(seed)), ("hands", "1" if hands else "0"),
                     ("deals", str(deals))],
                )
                connection.executemany(
                    "INSERT INTO agents (name, spec, version, checkpoint_sha256, added) VALUES (?, ?, ?, ?, ?)", rows
                )
        finally:
            connection.close()
        os.link(temp, path)
    except FileExistsError:
        raise LadderError(f"{path}: exists already; open it instead of creating it") from None
    except (OSError, sqlite3.Error) as error:
        raise LadderError(f"{path}: cannot be created: {error}") from None
    finally:
        for leftover in (temp, Path(f"{temp}-wal"), Path(f"{temp}-shm")):
            with contextlib.suppress(OSError):
                leftover.unlink(missing_ok=True)
    return open_ladder(path)


# ----------------------------------------------------------------- playing
_WORKER: dict[str, Any] = {}


def _setup(agents: Sequence[tuple[int, str]], rules: Rules, seed: int, hands: bool) -> None:
    """Load the agents (once per process) and remember the ladder's settings."""
    policies = {agent: load_policy(spec, rules, None) for agent, spec in agents}
    _WORKER.update(policies=policies, rules=rules, seed=seed, hands=hands)


def _play_unit(unit: tuple[tuple[int, ...], int]) -> tuple[tuple[int, ...], int, list[dict[str, Any]]]:
    """Play one table's deal in every rotation of its seating: the games as plain data."""
    table, deal = unit
    rules: Rules = _WORKER["rules"]
    policies: dict[int, Policy] = _WORKER["policies"]
    seed, hands = _WORKER["seed"], _WORKER["hands"]
    cards = draw_deal(rules, seed, deal, hands)
    order = seating_of(table, deal)
    n = len(order)
    games = []
    for rotation in range(n):
        seats = [order[(seat + rotation) % n] for seat in range(n)]
        for agent in table:
            reseed(policies[agent], seed, deal, rotation, *sorted(table), agent)
        game = play_game(rules, cards, [policies[agent] for agent in seats], hands)
        games.append({
            "rotation": rotation, "seats": seats, "totals": [int(sum(row[s] for row in game.round_scores)) for s in range(n)],
            "actions": [int(a) for a in game.actions], "bids": game.round_bids, "tricks": game.round_tricks,
            "scores": game.round_scores,
        })
    return table, deal, games


def play(
    ladder: Ladder, command: str = "run", with_agent: int | None = None, workers: int = 1,
    on_unit: Callable[[int, int], None] | None = None, checked: bool = False,
) -> int:
    """Play the ladder's missing units (only those of agent ``with_agent`` when given); the number of games stored.

    Every agent is loaded and its checkpoint checked first (:meth:`Ladder.check_agents`), so a run
    that cannot play writes nothing; ``checked``: the caller has just done so.

    ``on_unit(done, total)`` is called after each unit is stored (a progress bar; raising
    KeyboardInterrupt there stops the run, as Ctrl-C does: the units stored so far stay).
    Units are played in deal order by ``workers`` processes and stored by this one.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise LadderError(f"workers: must be a positive integer, got {workers!r}")
    agents = ladder.agents()
    if len(agents) < ladder.rules.num_players:
        raise LadderError(
            f"{ladder.path}: a table of {ladder.rules.num_players} seats needs {ladder.rules.num_players} distinct agents; "
            f"the ladder has {len(agents)} ({', '.join(a.name for a in agents) or 'none'})"
        )
    if not checked:
        ladder.check_agents()
    units = ladder.pending(with_agent)
    run = ladder.start_run(command)
    stored = 0
    args = ([(row.id, row.spec) for row in agents], ladder.rules, ladder.seed, ladder.hands_only)
    try:
        if workers == 1 or len(units) <= 1:
            _setup(*args)
            with single_threaded_torch():
                for done, (table, deal, games) in enumerate(map(_play_unit, units), 1):
                    stored += len(games) * ladder.store_unit(run, table, deal, games)
                    if on_unit is not None:
                        on_unit(done, len(units))
        else:
            import multiprocessing

            with multiprocessing.get_context().Pool(workers, initializer=_setup, initargs=args) as pool:
                for done, (table, deal, games) in enumerate(pool.imap_unordered(_play_unit, units), 1):
                    stored += len(games) * ladder.store_unit(run, table, deal, games)
                    if on_unit is not None:
                        on_unit(done, len(units))
    finally:
        ladder.finish_run(run)
    return stored


def play_pairwise(
    ladder: Ladder, top: int, deals: int, workers: int = 1, progress: bool = False, sprt: SPRT | None = None
) -> int:
    """Each of the ``top`` best agents against copies of each other one (``blackout eval``'s duplicate deals).

    A pair already stored with at least ``deals`` deals (or, with ``sprt``, stored with a
    decision of the same test) is kept; the others are played (with the ladder's rules, seed and hands; with
    ``sprt``, until the test decides or ``deals`` are played) and stored. Returns the number of pairs played.
    """
    from .tournament import evaluate

    for name, value in (("top", top), ("deals", deals), ("workers", workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise LadderError(f"pairwise {name}: must be a positive integer, got {value!r}")
    specs = {row.id: row for row in ladder.agents()}
    by_name = {row.name: row.id for row in specs.values()}
    best = [by_name[s.name] for s in ladder.standings()[:top]]
    stored = {(a, b): (n, test) for a, b, n, test in ladder.db.execute("SELECT a, b, deals, sprt FROM pairwise")}
    played = 0
    for a, b in itertools.permutations(best, 2):
        count, test = stored.get((a, b), (0, None))
        decided = None if test is None else json.loads(test)
        if count >= deals or (sprt is not None and decided is not None and decided["decision"] is not None
                              and (decided["low"], decided["high"]) == (sprt.low, sprt.high)):
            continue  # (a decision of other hypotheses answers another question: played again)
        agent, field = specs[a], specs[b]
        result = evaluate(
            {agent.name: agent.spec, field.name: field.spec}, ladder.rules, deals=deals, seed=ladder.seed,
            workers=workers, hands=ladder.hands_only, progress=progress, sprt=sprt,
        )
        gap = result.difference(agent.name, field.name)
        with ladder.db:
            ladder.db.execute(
                "INSERT OR REPLACE INTO pairwise VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (a, b, result.deals, result.stats(agent.name).mean_score_per_hand,
                 result.stats(field.name).mean_score_per_hand, gap["mean"], gap["ci95"],
                 None if result.sprt is None else json.dumps(result.sprt)),
            )
        played += 1
    return played


def score_positions(ladder: Ladder, path: str | os.PathLike[str] | None = None) -> int:
    """Score every agent not yet scored on the suite of obvious positions (default: the shipped one); how many were.

    An agent is asked the positions under rules it plays (a specialist checkpoint skips the others).
    """
    from .positions import load_positions, run_suite, suite_digest

    positions = load_positions(path)
    digest = suite_digest(positions)
    done = {agent for (agent,) in ladder.db.execute("SELECT agent FROM positions WHERE suite = ?", (digest,))}
    scored = 0
    for row in ladder.agents():
        if row.id in done:
            continue
        result = run_suite(row.spec, positions, seed=ladder.seed, name=row.name)
        with ladder.db:
            ladder.db.execute("DELETE FROM positions WHERE agent = ?", (row.id,))
            ladder.db.execute("INSERT INTO positions VALUES (?, ?, ?, ?)", (row.id, digest, result.passed, result.total))
        scored += 1
    return scored
