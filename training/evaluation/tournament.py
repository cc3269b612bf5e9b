"""Tournaments with duplicate deals: a fair ranking of policies despite card luck.

Duplicate deals
---------------
A *deal* is the set of deck orders of a whole match (or, with
``hands=True``, of a single hand). Every deal is played ``n`` times, once per
*rotation* of the seating: with the seating list ``S`` (one policy per seat),
rotation ``j`` seats ``S[(s + j) % n]`` at seat ``s``. Over the ``n`` rotations
each entry of ``S`` plays each seat of the deal exactly once, so every policy
holds every hand that any other policy held, and card luck cancels in the
comparison.

The seating list: ``k`` policies for ``n`` seats (``k <= n``) fill the seats in
the order given, and the remaining ``n - k`` seats are taken by copies of the
**last** policy (the field). So ``[agent, heuristic]`` at 4 players is one
agent against three heuristic bots, and ``[random, heuristic, search]`` is one
random, one heuristic and two search bots. Pass ``seating`` to choose
otherwise. A policy seated ``c`` times plays each seat ``c`` times per deal;
its figures average over all its seats.

Figures per policy
------------------
mean score per hand, with a 95% confidence interval over deals (the rotations
of one deal are correlated, so the deal is the unit: the per-deal mean score
per hand is the sample); bid-made rate overall and by hand size; mean match
score; match win rate (a tie shares the win equally); and for every pair of
policies the mean per-hand difference with its 95% interval, paired per deal.
Intervals use Student's t quantile (exact to three decimals up to 30
degrees of freedom, then 1.96 + 2.4/df, within 0.1% of it).

Game log
--------
With ``game_log=PATH`` every game played (each deal in each rotation) is written
to ``PATH``, one JSON line each, in deal and rotation order whatever the number
of workers: the workers return the lines and this process writes them, to a
file that appears complete when the tournament ends (:mod:`.game_log` holds the
line format and the reader that replays it).

Everything is reproducible from ``seed``: deal ``i`` draws its decks from
``default_rng([seed, i])`` and every policy is reseeded before each match,
so results do not depend on the number of worker processes.

This module imports no torch; a checkpoint policy imports it when loaded.
Games are played one decision at a time, so torch runs on one thread while
they are played (forked workers too): on a busy machine its thread pool only
waits, and made an evaluation of a network several times slower.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from blackout_env.game.engine import BlackoutGame
from blackout_env.game.rules import Rules
from blackout_env.game.rules_logic import dealer_of_round, win_shares

from ..agents.policies import Policy, load_policy
from ..files import replaced_atomically, write_text_atomically
from .game_log import GameLogWriter, LoggedGame, game_finished
from .sequential import SPRT

__all__ = [
    "EvalResult", "PolicyStats", "evaluate", "evaluate_against", "check_tournament", "seating_for", "rotations",
    "confidence_half_width", "single_threaded_torch", "Deal", "draw_deal", "play_game", "reseed",
]


# ---------------------------------------------------------------- seating
def seating_for(names: Sequence[str], num_players: int) -> list[str]:
    """The default seating: the policies in order, the remaining seats to copies of the last one."""
    if not names:
        raise ValueError("no policies to evaluate")
    if len(names) > num_players:
        raise ValueError(
            f"{len(names)} policies ({', '.join(names)}) but only {num_players} seats: "
            "at most one policy per seat"
        )
    return list(names) + [names[-1]] * (num_players - len(names))


def rotations(seating: Sequence[str]) -> list[list[str]]:
    """The ``n`` seat assignments of a deal: rotation ``j`` seats ``seating[(s + j) % n]`` at seat ``s``."""
    n = len(seating)
    return [[seating[(seat + j) % n] for seat in range(n)] for j in range(n)]


# Student's t 97.5% quantiles for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)


def confidence_half_width(samples: Sequence[float] | np.ndarray) -> float | None:
    """Half-width of the 95% confidence interval of the mean (None with fewer than two samples)."""
    values = np.asarray(samples, dtype=float)
    if len(values) < 2:
        return None
    df = len(values) - 1
    t = _T975[df - 1] if df <= len(_T975) else 1.96 + 2.4 / df
    return float(t * values.std(ddof=1) / math.sqrt(len(values)))


# ----------------------------------------------------------- playing deals
_WORKER: dict[str, Any] = {}


@contextmanager
def single_threaded_torch() -> Iterator[None]:
    """Torch on one thread inside the block, its setting restored after; nothing when torch is not loaded.

    One decision at a time gains nothing from threads; on a loaded 2-core machine
    torch's default pool made a standard evaluation of a network 6-10x slower.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _setup(
    entries: Sequence[tuple[str, Any]], rules: Rules, seating: Sequence[str], seed: int, hands: bool, log: bool = False
) -> None:
    """Load the policies (once per process) and remember the tournament settings."""
    policies = {name: load_policy(spec, rules, None) for name, spec in entries}
    _WORKER.update(policies=policies, rules=rules, seating=list(seating), seed=seed, hands=hands, log=log)


@dataclass(frozen=True)
class Deal:
    """The cards of deal ``index``: one deck order per round, the first dealer, and the round the game starts at."""

    index: int
    decks: list[list[int]]
    first_dealer: int
    start_round: int


def draw_deal(rules: Rules, seed: int, index: int, hands: bool) -> Deal:
    """Deal ``index`` of a tournament seeded ``seed`` (every rotation, every table and every run plays the same one).

    The decks come from ``default_rng([seed, index])``; with ``hands`` the deal is a
    single hand of round ``index % num_rounds``, whose dealer is the rules' first dealer.
    """
    n = rules.num_players
    rng = np.random.default_rng([seed, index])
    decks = rng.permuted(np.tile(np.arange(rules.deck_size), (rules.num_rounds, 1)), axis=1).tolist()
    first_dealer = int(rng.integers(n)) if rules.first_dealer == "random" else int(rules.first_dealer)
    start = index % rules.num_rounds if hands else 0
    if hands:
        first_dealer = dealer_of_round(first_dealer, -start, n)  # the hand's dealer is then the rules' first dealer
    return Deal(index, decks, first_dealer, start)


def play_game(rules: Rules, deal: Deal, seated: Sequence[Policy], hands: bool) -> BlackoutGame:
    """Play ``deal`` with ``seated[s]`` at seat ``s``: the finished game (its match, or with ``hands`` its hand)."""
    game = BlackoutGame(rules, decks=deal.decks, first_dealer=deal.first_dealer, start_round=deal.start_round)
    while not game_finished(game, hands):
        seat = game.current_player
        game.step(seated[seat].act(game.view(seat)))
    return game


def reseed(policy: Policy, *key: int) -> None:
    """Reseed a policy (one with ``seed(int)``) from ``key``: its choices then depend on the key only."""
    seed = getattr(policy, "seed", None)
    if callable(seed):
        seed(int(np.random.SeedSequence(list(key)).generate_state(1)[0]))


def _play_deal(deal: int) -> tuple[dict[str, Any], list[str]]:
    """Play every rotation of deal ``deal``: per policy, totals over its seats; the game log lines (when logging)."""
    rules: Rules = _WORKER["rules"]
    policies: dict[str, Policy] = _WORKER["policies"]
    seed: int = _WORKER["seed"]
    n = rules.num_players
    cards = draw_deal(rules, seed, deal, _WORKER["hands"])
    record: dict[str, Any] = {
        name: {"score": 0.0, "hands": 0, "made": {}, "match_score": 0.0, "wins": 0.0, "matches": 0}
        for name in policies
    }
    lines: list[str] = []
    for j, assignment in enumerate(rotations(_WORKER["seating"])):
        for k, name in enumerate(policies):
            reseed(policies[name], seed, deal, j, k)
        game = play_game(rules, cards, [policies[name] for name in assignment], _WORKER["hands"])
        if _WORKER["log"]:
            lines.append(LoggedGame.from_game(game, deal, j, assignment, _WORKER["hands"]).to_json())
        totals = [sum(s[seat] for s in game.round_scores) for seat in range(n)]
        shares = win_shares(totals)  # equal highest totals share the win
        for seat, name in enumerate(assignment):
            entry = record[name]
            for scores, bids, tricks in zip(game.round_scores, game.round_bids, game.round_tricks):
                size = sum(tricks)
                made, count = entry["made"].get(size, (0, 0))
                entry["made"][size] = (made + (bids[seat] == tricks[seat]), count + 1)
                entry["score"] += scores[seat]
                entry["hands"] += 1
            entry["match_score"] += totals[seat]
            entry["wins"] += float(shares[seat])
            entry["matches"] += 1
    return record, lines


# ------------------------------------------------------------------ results
@dataclass
class PolicyStats:
    """The figures of one policy in a tournament."""

    name: str
    spec: str
    hands: int
    mean_score_per_hand: float
    score_ci95: float | None
    """Half-width of the 95% interval of the mean score per hand (over deals)."""
    bid_made_rate: float
    bid_made_by_hand_size: dict[int, float]
    hands_by_hand_size: dict[int, int]
    mean_match_score: float
    match_win_rate: float
    matches: int


@dataclass
class EvalResult:
    """A finished tournament: settings, per-policy figures, pairwise differences, per-deal means."""

    rules: Rules
    deals: int
    seed: int
    hands_only: bool
    seating: list[str]
    policies: list[PolicyStats]
    pairwise: list[dict[str, Any]]
    per_deal: dict[str, list[float]] = field(repr=False)
    """Per policy, its mean score per hand in each deal (the samples of the intervals)."""
    sprt: dict[str, Any] | None = None
    """With ``sprt=``: the test's outcome (:meth:`.sequential.SPRT.report`); ``deals`` is then the deals it used."""

    def stats(self, name: str) -> PolicyStats:
        """The figures of the policy called ``name``."""
        for stats in self.policies:
            if stats.name == name:
                return stats
        raise KeyError(f"no policy {name!r} in this result; policies: {', '.join(s.name for s in self.policies)}")

    def difference(self, a: str, b: str) -> dict[str, Any]:
        """Mean per-hand score of ``a`` minus ``b`` with its 95% interval, paired per deal."""
        for pair in self.pairwise:
            if (pair["a"], pair["b"]) == (a, b):
                return pair
            if (pair["a"], pair["b"]) == (b, a):
                low, high = pair["low"], pair["high"]
                return {**pair, "a": a, "b": b, "mean": -pair["mean"],
                        "low": None if high is None else -high, "high": None if low is None else -low}
        raise KeyError(f"no pair {a!r}, {b!r} in this result")

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "rules": self.rules.to_dict(),
            "deals": self.deals,
            "seed": self.seed,
            "hands_only": self.hands_only,
            "seating": self.seating,
            "policies": [
                {
                    **stats.__dict__,
                    "bid_made_by_hand_size": {str(k): v for k, v in stats.bid_made_by_hand_size.items()},
                    "hands_by_hand_size": {str(k): v for k, v in stats.hands_by_hand_size.items()},
                }
                for stats in self.policies
            ],
            "pairwise": self.pairwise,
            "per_deal_mean_score_per_hand": self.per_deal,
            "sprt": self.sprt,
        }

    def table(self) -> str:
        """The results as text: one row per policy, the pairwise differences, bid-made rate by hand size."""
        unit = "hand" if self.hands_only else "match"
        width = max([20, *(len(s.name) for s in self.policies)])  # the name column fits the longest name
        lines = [
            f"{self.deals} deals x {len(self.seating)} rotations, {self.rules.num_players} players, "
            f"seating {' '.join(self.seating)} ({'single hands' if self.hands_only else 'whole matches'}), seed {self.seed}",
            "",
            f"{'policy':<{width}} {'score/hand (95% CI)':>22} {'bid made':>9} {unit + ' score':>12} {unit + ' wins':>11} {'hands':>8}",
        ]
        for s in self.policies:
            ci = f"± {s.score_ci95:.2f}" if s.score_ci95 is not None else "± n/a"
            lines.append(
                f"{s.name:<{width}} {s.mean_score_per_hand:>13.2f} {ci:>8} {s.bid_made_rate:>9.1%} "
                f"{s.mean_match_score:>12.1f} {s.match_win_rate:>11.1%} {s.hands:>8}"
            )
        if any(s.score_ci95 is None for s in self.policies):
            lines.append("(n/a: a 95% interval needs at least two deals)")
        if self.pairwise:
            lines += ["", "difference in score per hand (95% CI, paired per deal):"]
            for pair in self.pairwise:
                if pair["ci95"] is None:
                    lines.append(f"  {pair['a']} - {pair['b']}: {pair['mean']:+.2f} [n/a: one deal gives no interval]")
                    continue
                verdict = "significant" if pair["low"] > 0 or pair["high"] < 0 else "not significant"
                lines.append(
                    f"  {pair['a']} - {pair['b']}: {pair['mean']:+.2f} [{pair['low']:+.2f}, {pair['high']:+.2f}] {verdict}"
                )
        if self.sprt is not None:
            test = SPRT(self.sprt["low"], self.sprt["high"], self.sprt["alpha"], self.sprt["beta"])
            lines += ["", test.describe(self.sprt)]
        sizes = sorted({size for s in self.policies for size in s.bid_made_by_hand_size})
        lines += ["", "bid made by hand size:", f"{'policy':<{width}} " + " ".join(f"{size:>5}" for size in sizes)]
        for s in self.policies:
            cells = [s.bid_made_by_hand_size.get(size) for size in sizes]
            lines.append(f"{s.name:<{width}} " + " ".join(f"{c:>5.0%}" if c is not None else f"{'-':>5}" for c in cells))
        return "\n".join(lines)

    def save(self, out_dir: str | os.PathLike[str], plot: bool = True) -> dict[str, Path]:
        """Write ``results.json``, ``results.txt`` and (when matplotlib is installed) ``results.png``.

        Each file is written whole or not at all; a ``results.png`` of an earlier run is removed when no
        plot is written (it would show other results). ValueError naming the file that cannot be written.
        """
        out = Path(out_dir)
        paths = {name: out / file for name, file in RESULT_FILES.items()}
        try:
            check_result_files(out)
            # allow_nan=False: strict JSON (an undefined interval is null, never Infinity or NaN)
            write_text_atomically(paths["json"], json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n")
            write_text_atomically(paths["table"], self.table() + "\n")
            if plot:
                try:
                    self.plot(paths["plot"])
                except ImportError:
                    plot = False
            if not plot:
                paths.pop("plot").unlink(missing_ok=True)
        except OSError as error:
            raise ValueError(f"{os.fspath(out_dir)!r}: cannot write its results: {error.strerror or error}") from None
        return paths

    def plot(self, path: str | os.PathLike[str]) -> Path:
        """A PNG: mean score per hand with 95% intervals, and bid-made rate by hand size."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
        names = [s.name for s in self.policies]
        means = [s.mean_score_per_hand for s in self.policies]
        errors = [s.score_ci95 or 0.0 for s in self.policies]
        left.bar(names, means, yerr=errors, capsize=6, color="#4c72b0")
        left.set_ylabel("mean score per hand")
        left.set_title("score per hand (95% CI over deals)")
        for s in self.policies:
            sizes = sorted(s.bid_made_by_hand_size)
            right.plot(sizes, [s.bid_made_by_hand_size[k] for k in sizes], marker="o", label=s.name)
        right.set_xlabel("hand size")
        right.set_ylabel("bid made")
        right.set_ylim(0, 1)
        right.set_title("bid-made rate by hand size")
        right.legend()
        fig.suptitle(f"{self.rules.num_players} players, {self.deals} duplicate deals")
        fig.tight_layout()
        path = Path(path)
        try:
            with replaced_atomically(path, binary=True) as file:
                fig.savefig(file, dpi=110, format="png")
        finally:
            plt.close(fig)
        return path


RESULT_FILES = {"json": "results.json", "table": "results.txt", "plot": "results.png"}
"""The files :meth:`EvalResult.save` writes in its folder."""


def check_result_files(out_dir: str | os.PathLike[str]) -> None:
    """Make the results folder and refuse (ValueError) one whose result names are taken by something not a file."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ValueError(f"{os.fspath(out_dir)!r} is not a writable folder: {error.strerror or error}") from None
    for name in RESULT_FILES.values():
        if (out / name).exists() and not (out / name).is_file():
            raise ValueError(f"{os.fspath(out / name)!r} is in the way: it is not a file")


def _summarise(
    records: Iterable[dict[str, Any]], entries: Sequence[tuple[str, Any]], rules: Rules, deals: int, seed: int,
    hands: bool, seating: list[str], sprt: SPRT | None = None,
) -> EvalResult:
    names = [name for name, _ in entries]
    totals = {name: {"score": 0.0, "hands": 0, "made": {}, "match_score": 0.0, "wins": 0.0, "matches": 0} for name in names}
    per_deal: dict[str, list[float]] = {name: [] for name in names}
    for record in records:
        for name in names:
            entry, total = record[name], totals[name]
            per_deal[name].append(entry["score"] / entry["hands"])
            for key in ("score", "hands", "match_score", "wins", "matches"):
                total[key] += entry[key]
            for size, (made, count) in entry["made"].items():
                m, c = total["made"].get(size, (0, 0))
                total["made"][size] = (m + made, c + count)
    stats = []
    for name, spec in entries:
        t = totals[name]
        made_total = sum(m for m, _ in t["made"].values())
        stats.append(
            PolicyStats(
                name=name,
                spec=_policy_name(spec) or type(spec).__name__,
                hands=t["hands"],
                mean_score_per_hand=t["score"] / t["hands"],
                score_ci95=confidence_half_width(per_deal[name]),
                bid_made_rate=made_total / t["hands"],
                bid_made_by_hand_size={k: m / c for k, (m, c) in sorted(t["made"].items())},
                hands_by_hand_size={k: c for k, (_, c) in sorted(t["made"].items())},
                mean_match_score=t["match_score"] / t["matches"],
                match_win_rate=t["wins"] / t["matches"],
                matches=t["matches"],
            )
        )
    pairwise = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            diffs = np.subtract(per_deal[a], per_deal[b])
            half = confidence_half_width(diffs)
            mean = float(diffs.mean())
            # One deal gives no interval: None (null in JSON), not an infinite one.
            low, high = (mean - half, mean + half) if half is not None else (None, None)
            pairwise.append({"a": a, "b": b, "mean": mean, "ci95": half, "low": low, "high": high})
    report = None
    if sprt is not None:
        agent, opponent = names[0], names[-1]
        report = sprt.report(np.subtract(per_deal[agent], per_deal[opponent]), agent, opponent)
    return EvalResult(rules, deals, seed, hands, seating, stats, pairwise, per_deal, report)


def _policy_name(spec: Any) -> str | None:
    """A spec's own text, a policy's ``name``, or a plain function's ``__name__``."""
    if isinstance(spec, str):
        return spec
    name = getattr(spec, "name", None)
    if name is None and callable(spec) and not callable(getattr(spec, "act", None)):
        name = getattr(spec, "__name__", None)
    return name


def _entries(policies: Sequence[Any] | Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(name, spec or policy object) pairs, names unique."""
    if isinstance(policies, Mapping):
        items = [(str(name), spec) for name, spec in policies.items()]
    elif isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence):
        raise ValueError(f"policies: expected a list of names or a mapping name -> policy, got {policies!r}")
    else:
        items = []
        for spec in policies:
            name = _policy_name(spec)
            if not isinstance(name, str):
                raise ValueError(f"policies: {spec!r} has no name; pass a mapping name -> policy")
            items.append((name, spec))
    names = [name for name, _ in items]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ValueError(f"policies: the name {duplicates[0]!r} appears twice; give each policy its own name")
    return items


def check_tournament(
    policies: Sequence[Any] | Mapping[str, Any],
    rules: Rules | str | Mapping[str, Any] | None,
    deals: int,
    seed: int = 0,
    workers: int = 1,
    seating: Sequence[str] | None = None,
) -> tuple[Rules, list[tuple[str, Any]], list[str]]:
    """Validate a tournament's settings without playing: the rules, (name, spec) entries and the seating.

    Raises ValueError naming the problem: bad rules, deals < 1, an unknown
    policy or a checkpoint that does not load, more policies than seats.
    """
    rules = Rules.resolve(rules)
    if isinstance(deals, bool) or not isinstance(deals, (int, np.integer)) or deals < 1:
        raise ValueError(f"deals: must be a positive integer, got {deals!r}")
    if isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise ValueError(f"workers: must be a positive integer, got {workers!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed!r}")
    entries = _entries(policies)
    names = [name for name, _ in entries]
    if seating is None:
        seating = seating_for(names, rules.num_players)
    else:
        seating = list(seating)
        if len(seating) != rules.num_players:
            raise ValueError(f"seating: {len(seating)} seats given for {rules.num_players} players")
        unknown = [name for name in seating if name not in names]
        if unknown:
            raise ValueError(f"seating: {unknown[0]!r} is not one of the policies ({', '.join(names)})")
        missing = [name for name in names if name not in seating]
        if missing:
            raise ValueError(f"seating: policy {missing[0]!r} has no seat")
    # Loading here reports unknown names and bad checkpoints before any game is played.
    for _, spec in entries:
        load_policy(spec, rules, None)
    return rules, entries, list(seating)


def evaluate(
    policies: Sequence[Any] | Mapping[str, Any],
    rules: Rules | str | Mapping[str, Any] | None = "standard",
    deals: int = 100,
    seed: int = 0,
    workers: int = 1,
    hands: bool = False,
    seating: Sequence[str] | None = None,
    progress: bool = False,
    game_log: str | os.PathLike[str] | None = None,
    sprt: SPRT | str | tuple[float, float] | None = None,
) -> EvalResult:
    """Play a duplicate-deal tournament and return its figures.

    Args:
        policies: names / specs (``["heuristic", "search", "random"]``), or a
            mapping from a display name to a spec or a policy object.
        rules: a Rules, preset name, YAML path or mapping.
        deals: number of deals; each is played once per rotation of the seating.
        seed: makes the deals and every policy's random choices reproducible.
        workers: processes to play deals in parallel (``os.cpu_count()`` for every core); never more than ``deals``.
        hands: play single hands instead of whole matches; deal ``i`` is a
            hand of round ``i % num_rounds`` of the rules' schedule.
        seating: one policy name per seat; default :func:`seating_for`.
        progress: show a progress bar (tqdm, when installed).
        game_log: a file to write every game to, one JSON line per game (see
            :mod:`blackout_training.evaluation.game_log`; read it with ``read_game_log``).
        sprt: stop as soon as a sequential test decides (:class:`.sequential.SPRT`, ``"LOW,HIGH"`` or
            ``(low, high)`` in points per hand) on the difference first policy minus last policy;
            ``deals`` is then the most it plays, and the result holds the deals used.

    Every problem with the arguments (unknown policy, missing checkpoint, bad
    rules, more policies than seats, deals < 1, a game log that cannot be
    written) raises ValueError before any game is played.
    """
    rules, entries, seating = check_tournament(policies, rules, deals, seed, workers, seating)
    deals = int(deals)
    workers = min(int(workers), deals)  # (a process more than the deals would only start and load the policies)
    if sprt is not None:
        if not isinstance(sprt, SPRT):
            sprt = SPRT.parse(sprt) if isinstance(sprt, str) else SPRT(*sprt)
        if len(entries) < 2:
            raise ValueError("sprt: needs two policies (the agent first, its opponent last)")
    stop = None if sprt is None else _sprt_stop(sprt, entries[0][0], entries[-1][0])
    log = GameLogWriter(game_log, "game_log") if game_log is not None else None
    args = (entries, rules, seating, int(seed), bool(hands), log is not None)
    try:
        if workers == 1:
            _setup(*args)  # loads the policies (and torch, for a network)
            with single_threaded_torch():
                records = _collect(map(_play_deal, range(deals)), deals, progress, log, stop)
        else:
            import multiprocessing

            with multiprocessing.get_context().Pool(int(workers), initializer=_setup, initargs=args) as pool:
                chunk = max(1, min(16, deals // (4 * int(workers))))
                records = _collect(pool.imap(_play_deal, range(deals), chunksize=chunk), deals, progress, log, stop)
    except BaseException:
        if log is not None:
            log.discard()
        raise
    if log is not None:
        log.close()
    return _summarise(records, entries, rules, len(records), int(seed), bool(hands), seating, sprt)


def _sprt_stop(sprt: SPRT, agent: str, opponent: str) -> Any:
    """A predicate on the records so far: whether the test has decided (deals are taken in order)."""
    differences: list[float] = []

    def decided(record: dict[str, Any]) -> bool:
        mine, theirs = record[agent], record[opponent]
        differences.append(mine["score"] / mine["hands"] - theirs["score"] / theirs["hands"])
        return sprt.decision(differences) is not None

    return decided


def _collect(
    results: Iterable[tuple[dict[str, Any], list[str]]], deals: int, progress: bool, log: GameLogWriter | None,
    stop: Any = None,
) -> list[dict[str, Any]]:
    """The deals' records in deal order, up to the deal where ``stop(record)`` holds; their game log lines as they come."""
    records = []
    for record, lines in _progress(results, deals, progress):
        if log is not None:
            log.write(lines)
        records.append(record)
        if stop is not None and stop(record):
            break
    return records


def evaluate_against(
    policy: Any, opponent: str, rules: Rules, deals: int, seed: int, name: str = "ppo"
) -> dict[str, Any]:
    """``policy`` in one seat and ``opponent`` in the others over duplicate deals: the training run's evaluation.

    Returns the agent's and the opponents' mean score per hand, the 95% interval
    half-widths (0 when undefined, with one deal), the paired difference (agent
    minus opponent) and the agent's bid-made rate, rounded for the logs.
    """
    if name == opponent:  # the run's policy against the shipped one of the same name (eval.opponent: ppo)
        name = f"{name} (this run)"
    result = evaluate({name: policy, opponent: opponent}, rules=rules, deals=deals, seed=seed)
    agent, other = result.stats(name), result.stats(opponent)
    difference = result.difference(name, opponent)
    return {
        "deals": deals,
        "agent_score": round(agent.mean_score_per_hand, 4),
        "agent_ci": round(agent.score_ci95 or 0.0, 4),
        "opponent_score": round(other.mean_score_per_hand, 4),
        "difference": round(difference["mean"], 4),
        "difference_ci": round(difference["ci95"] or 0.0, 4),
        "agent_bid_made_rate": round(agent.bid_made_rate, 4),
    }


def _progress(iterable: Iterable[Any], total: int, enabled: bool) -> Iterable[Any]:
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, total=total, desc="deals", unit="deal")
