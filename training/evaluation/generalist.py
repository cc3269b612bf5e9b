"""The generalist table: one policy against the heuristic on every table, by duplicate evaluation.

The rows (every preset at its default players, then ``standard`` at 3, 5, 6 and 7 players; held-out
tables, drawn or named, come from :mod:`blackout_training.evaluation.held_out`), one row's game
(:func:`blackout_training.evaluation.tournament.evaluate`, duplicate deals, the interval over deals),
the pooling of runs with other seeds into one interval, and the Markdown tables.
``blackout bench generalist`` (:mod:`blackout_training.bench.generalist`) is the command over these;
expert iteration (:mod:`blackout_training.expert`) trains on the same rows.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from blackout_env import Rules, RulesError
from blackout_env.game.rules import preset_names

from .held_out import NAMED_TABLES, rules_line
from .tournament import confidence_half_width, evaluate

EXTRA_PLAYERS = (3, 5, 6, 7)
"""The standard table is also played at these numbers of players (every preset at its own default)."""

OPPONENT = "heuristic"
VERSUS_TABLE = "standard"


def default_rows() -> list[str]:
    """Every preset at its default players, then ``standard`` at 3, 5, 6 and 7 players."""
    return [*preset_names(), *(f"{VERSUS_TABLE}-{players}p" for players in EXTRA_PLAYERS)]


def row_rules(row: str) -> Rules:
    """The rules of a row name: ``PRESET`` (its default players) or ``PRESET-Np`` (N players).

    A named held-out table (:data:`~blackout_training.evaluation.held_out.NAMED_TABLES`) is a row too,
    also as ``NAME-Np``; rules the engine refuses at N players are an error naming the option.
    """
    named = {**{name: None for name in preset_names()}, **NAMED_TABLES}
    match = re.fullmatch(r"(.+)-([0-9]+)p", row)
    name, players = (match.group(1), int(match.group(2))) if match and match.group(1) in named else (row, None)
    if name not in named:
        raise ValueError(f"--rows: unknown row {row!r}; a row is PRESET or PRESET-Np, presets: {', '.join(preset_names())}"
                         f" (held-out tables: {', '.join(NAMED_TABLES)})")
    rules = named[name] or Rules.preset(name)
    if players is not None:
        if not 3 <= players <= 7:
            raise ValueError(f"--rows: {row!r} has {players} players; the engine plays 3 to 7")
        try:
            rules = rules.replace(num_players=players)
        except RulesError as error:
            raise ValueError(f"--rows: {row!r}: {error}") from None
    return rules


def play_row(row: str, rules: Rules, policy: str, opponent: str, deals: int, seed: int, workers: int,
             family: str | None = None) -> dict[str, Any]:
    """One row of the table: ``policy`` in one seat, ``opponent`` in the others, whole matches.

    A held-out table's row (``family`` given: ``"general"`` or ``"per-trick"``) also keeps its family
    and its rules in one line (:func:`~blackout_training.evaluation.held_out.rules_line`).
    """
    start = time.perf_counter()
    result = evaluate({"agent": policy, "opponent": opponent}, rules=rules, deals=deals, seed=seed, workers=workers)
    seconds = time.perf_counter() - start
    agent, other = result.stats("agent"), result.stats("opponent")
    difference = result.difference("agent", "opponent")
    per_deal = [a - b for a, b in zip(result.per_deal["agent"], result.per_deal["opponent"])]
    return {
        "row": row, "rules": rules.to_dict(), "players": rules.num_players, "opponent": opponent, "deals": deals,
        "seed": seed, "agent_per_hand": agent.mean_score_per_hand, "opponent_per_hand": other.mean_score_per_hand,
        "difference": difference["mean"], "low": difference["low"], "high": difference["high"],
        "half_width": difference["ci95"], "agent_bid_made": agent.bid_made_rate,
        "opponent_bid_made": other.bid_made_rate, "seconds": seconds, "per_deal_differences": per_deal,
        **({"family": family, "rules_line": rules_line(rules)} if family is not None else {}),
    }


def pool_rows(files: list[str]) -> tuple[str, list[dict[str, Any]]]:
    """The policy and the rows of several ``--json`` files, each row's deals pooled over the files.

    Rows are matched by name and rules; a row's per-deal differences are
    concatenated, and the per-hand means and bid-made rates are weighted by deals
    (every deal of a row is the same number of hands). A file without per-deal
    differences, another policy, or a seed already pooled for that row is refused,
    naming the file.
    """
    policy = None
    pooled: dict[str, list[dict[str, Any]]] = {}
    for path in files:
        try:
            with open(path, encoding="utf-8") as handle:
                figures = json.load(handle)
            rows = figures["rows"]
            name = figures["policy"]
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise ValueError(f"--pool {path}: not a 'blackout bench generalist --json' file ({error})") from None
        if policy is not None and name != policy:
            raise ValueError(f"--pool {path}: its policy is {name!r}, the other files' {policy!r}")
        policy = name
        for row in rows:
            if not isinstance(row, dict) or "per_deal_differences" not in row or "seed" not in row:
                raise ValueError(f"--pool {path}: a row without its seed and per-deal differences "
                                 "(written before they were kept, or a pooled table)")
            parts = pooled.setdefault(row["row"], [])
            if parts and not _same_rules(parts[0]["rules"], row["rules"]):
                raise ValueError(f"--pool {path}: row {row['row']!r} has other rules than in the files before")
            if any(part["seed"] == row["seed"] for part in parts):
                raise ValueError(f"--pool {path}: row {row['row']!r} with seed {row['seed']} is pooled already "
                                 "(the same seed plays the same deals)")
            parts.append(row)
    return str(policy), [_pooled_row(parts) for parts in pooled.values()]


def _same_rules(first: Any, second: Any) -> bool:
    """Two rows' rules the same game: compared as Rules (files written before 2026-12-08 kept "full" as a word)."""
    try:
        return Rules.from_dict(first) == Rules.from_dict(second)
    except (ValueError, TypeError):
        return first == second


def _pooled_row(parts: list[dict[str, Any]]) -> dict[str, Any]:
    differences = [d for part in parts for d in part["per_deal_differences"]]
    deals = len(differences)

    def weighted(key: str) -> float:
        return sum(part[key] * part["deals"] for part in parts) / deals

    mean = sum(differences) / deals
    half = confidence_half_width(differences)
    low, high = (mean - half, mean + half) if half is not None else (None, None)
    first = parts[0]
    return {
        "row": first["row"], "rules": first["rules"], "players": first["players"], "opponent": first["opponent"],
        "deals": deals, "seeds": [part["seed"] for part in parts],
        "agent_per_hand": weighted("agent_per_hand"), "opponent_per_hand": weighted("opponent_per_hand"),
        "difference": mean, "low": low, "high": high, "half_width": half,
        "agent_bid_made": weighted("agent_bid_made"), "opponent_bid_made": weighted("opponent_bid_made"),
        "seconds": sum(part["seconds"] for part in parts), "per_deal_differences": differences,
        **{key: first[key] for key in ("family", "rules_line") if key in first},  # a held-out row's
    }


def _interval(r: dict[str, Any]) -> tuple[str, str]:
    if r["half_width"] is None:
        return f"{r['difference']:+.2f} [n/a]", "n/a"
    return f"{r['difference']:+.2f} [{r['low']:+.2f}, {r['high']:+.2f}]", f"{r['half_width']:.2f}"


def markdown_table(policy: str, rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table; held-out rows (with a ``family``) as a second one, with both bid-made rates and the rules."""
    tables = []
    named = [r for r in rows if "family" not in r]
    if named:
        lines = [
            f"| table | players | deals | {policy} per hand | opponent | opponent per hand "
            "| difference [95% CI] | ± | bid made | seconds |",
            "|---|---:|---:|---:|---|---:|---|---:|---:|---:|",
        ]
        for r in named:
            interval, width = _interval(r)
            lines.append(
                f"| {r['row']} | {r['players']} | {r['deals']} | {r['agent_per_hand']:.2f} | {r['opponent']} "
                f"| {r['opponent_per_hand']:.2f} | {interval} | {width} | {r['agent_bid_made']:.1%} | {r['seconds']:.0f} |"
            )
        tables.append("\n".join(lines))
    held_out = [r for r in rows if "family" in r]
    if held_out:
        opponent = held_out[0]["opponent"]  # the heuristic: held-out rows have no versus
        lines = [
            f"| held-out table | deals | {policy} − {opponent} [95% CI] | ± | bid made: {policy} / {opponent} "
            "| seconds | rules |",
            "|---|---:|---|---:|---:|---:|---|",
        ]
        for r in held_out:
            interval, width = _interval(r)
            lines.append(
                f"| {r['row']} | {r['deals']} | {interval} | {width} "
                f"| {r['agent_bid_made']:.1%} / {r['opponent_bid_made']:.1%} | {r['seconds']:.0f} | {r['rules_line']} |"
            )
        tables.append("\n".join(lines))
    return "\n\n".join(tables)
