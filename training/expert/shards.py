"""Expert iteration's data: ``ppo+search`` matches played into shards (:func:`generate`) and read back (:func:`load_shards`).

One compressed ``.npz`` shard per match, named by the run's seed and the match's index; the package
docstring (:mod:`blackout_training.expert`) says what the shards hold and how they are used.
"""

from __future__ import annotations

import json
import math
import os
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from blackout_env import BlackoutGame, Rules
from blackout_env.game.universal import UNIVERSAL_NUM_ACTIONS, universal_actions, universal_size

from ..agents.policy_net import SHIPPED_CHECKPOINT, CheckpointError, PolicyBot, load_checkpoint
from ..agents.rollout_policy import positive_int
from ..evaluation.tournament import single_threaded_torch
from ..ppo.tables import DRAWN_TABLES, draw_rules

__all__ = ["DECISIONS", "generate", "load_shards"]

DECISIONS = ("bids", "all")
"""What :func:`generate` searches and keeps, and what :func:`~blackout_training.expert.distill.distill` learns from: the bids only, or every decision."""

SHARD_KEYS = ("obs", "mask", "visits", "hand_size", "bidding", "meta")
HELD_OUT_EVERY = 20
"""Every this many shards (in name order) one is held out of training to measure agreement."""


def _check_decisions(decisions: str) -> str:
    if decisions not in DECISIONS:
        raise ValueError(f"decisions: must be one of {', '.join(DECISIONS)}, got {decisions!r}")
    return decisions


def _positive_float(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: must be a positive number, got {value!r}")
    return float(value)


def _universal_network(checkpoint: str | os.PathLike[str] | None) -> tuple[Any, Rules, dict[str, Any]]:
    """``load_checkpoint`` of ``checkpoint`` (default: the shipped ``ppo``), refusing a rules-sized network."""
    path = SHIPPED_CHECKPOINT if checkpoint is None else Path(checkpoint)
    model, trained_rules, payload = load_checkpoint(path)
    if model.observation != "universal":
        raise CheckpointError(
            f"checkpoint {str(path)!r} reads the rules-sized observation: expert iteration distils into a universal"
            ' network (observation="universal", e.g. the shipped ppo)'
        )
    return model, trained_rules, payload


# ------------------------------------------------------------------ generate
def _shard_path(folder: Path, seed: int, index: int) -> Path:
    return folder / f"seed{seed}-match{index:06d}.npz"


def match_rules(rules: Rules | str, seed: int, index: int) -> Rules:
    """The table of match ``index``: ``rules`` itself, or drawn from the family ``rules`` names (one of
    ``DRAWN_TABLES``) on the stream ``default_rng([seed, index])``, which never carries the held-out spawn key."""
    if isinstance(rules, Rules):
        return rules
    return draw_rules(rules, np.random.default_rng([seed, index]))


def _play_match(
    bot: PolicyBot, search: Any, rules: Rules, seed: int, index: int, decisions: str
) -> dict[str, np.ndarray]:
    """One match; the searched decisions' records (seeded by the run's seed and the match's index)."""
    match_seed = int(np.random.SeedSequence([seed, index]).generate_state(1)[0])
    search.seed(match_seed)
    game = BlackoutGame(rules, seed=match_seed)
    obs, masks, visits, hand_sizes, bidding = [], [], [], [], []
    while game.phase != "game_over":
        view = game.view(game.current_player)
        legal = view.legal_actions
        is_bid = view.phase == "bid"
        if len(legal) == 1:
            action = legal[0]
        elif decisions == "bids" and not is_bid:
            action = bot.act(view)
        else:
            values = search.action_values(view)
            actions = list(values)
            action = max(actions, key=lambda a: values[a])  # (visits, mean): as ISMCTSBot.act
            _, ob, mask = bot._network_inputs(view)
            counts = np.zeros(UNIVERSAL_NUM_ACTIONS, dtype=np.float32)
            counts[universal_actions(np.array(actions), view.rules)] = [values[a][0] for a in actions]
            obs.append(ob[0])
            masks.append(mask[0])
            visits.append(counts)
            hand_sizes.append(view.hand_size)
            bidding.append(is_bid)
        game.step(action)
    return {
        "obs": np.array(obs, dtype=np.float32).reshape(-1, universal_size()),
        "mask": np.array(masks, dtype=np.int8).reshape(-1, UNIVERSAL_NUM_ACTIONS),
        "visits": np.array(visits, dtype=np.float32).reshape(-1, UNIVERSAL_NUM_ACTIONS),
        "hand_size": np.array(hand_sizes, dtype=np.int16),
        "bidding": np.array(bidding, dtype=bool),
    }


_WORKER: dict[str, Any] = {}


def _setup_worker(
    rules: Rules | str, simulations: int, checkpoint: str | None, decisions: str, folder: str, seed: int
) -> None:
    from blackout_baselines import ISMCTSBot

    torch.set_num_threads(1)
    bot = PolicyBot(_universal_network(checkpoint)[0], match_rules(rules, seed, 0), name="ppo")  # universal: any table
    _WORKER.update(
        bot=bot,
        search=ISMCTSBot(simulations=simulations, prior=bot.action_probabilities),
        rules=rules,
        decisions=decisions,
        folder=Path(folder),
        seed=seed,
        meta={
            "simulations": simulations, "decisions": decisions, "seed": seed,
            "checkpoint": str(SHIPPED_CHECKPOINT if checkpoint is None else checkpoint),
            "drawn": None if isinstance(rules, Rules) else rules,
        },
    )


def _generate_one(index: int) -> int:
    w = _WORKER
    rules = match_rules(w["rules"], w["seed"], index)
    record = _play_match(w["bot"], w["search"], rules, w["seed"], index, w["decisions"])
    path = _shard_path(w["folder"], w["seed"], index)
    partial = path.with_name(path.stem + ".partial.npz")
    np.savez_compressed(partial, meta=np.array(json.dumps({"rules": rules.to_dict(), **w["meta"]})), **record)
    partial.replace(path)  # a shard is whole or absent
    return len(record["obs"])


def _check_same_table(folder: Path, rules: Rules | str) -> None:
    """Refuse a folder whose shards are of another table (or family) than ``rules``: distill reads one per folder."""
    shards = sorted(p for p in folder.glob("seed*-match*.npz") if not p.name.endswith(".partial.npz")) if folder.is_dir() else []
    if not shards:
        return
    try:
        with np.load(shards[0], allow_pickle=False) as shard:
            meta = json.loads(str(shard["meta"]))
        theirs = meta.get("drawn") or Rules.from_dict(meta["rules"])
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return  # an unreadable shard: distill names it
    if theirs != rules:
        mine = rules if isinstance(rules, str) else "these rules"
        raise ValueError(
            f"out: {str(folder)!r} holds shards of another table ({shards[0].name}: "
            f"{theirs if isinstance(theirs, str) else 'other rules'}) than {mine}; distill reads one table per "
            "folder: write these to another folder"
        )


def generate(
    out: str | os.PathLike[str],
    rules: Rules | str = "standard",
    matches: int = 100,
    minutes: float | None = None,
    simulations: int = 400,
    decisions: str = "bids",
    checkpoint: str | os.PathLike[str] | None = None,
    seed: int = 0,
    workers: int = 1,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Play ``matches`` matches (or as many as fit into ``minutes``) of ``ppo+search`` data into the folder ``out``.

    Args:
        out: the folder of shards (created; other runs' shards may be there).
        rules: the table the matches are played at, or one of ``DRAWN_TABLES`` (``"long-hands"``, ...): each
            match at a table drawn from that family (:func:`match_rules`), as the trainer's ``env.tables`` draws.
        matches: how many matches (with ``minutes``, at most this many).
        minutes: stop starting matches after this many minutes of wall time.
        simulations: the search's simulations per decision.
        decisions: ``"bids"`` (search and keep the bids; the network plays the cards) or ``"all"``.
        checkpoint: the universal network that guides the search and plays (default: the shipped ``ppo``).
        seed: the run's seed; a folder that already holds shards of this seed is refused.
        workers: processes playing matches in parallel.
        log: called with a line per finished match.

    Returns the number of matches and kept decisions and the seconds taken.
    """
    if not (isinstance(rules, str) and rules in DRAWN_TABLES):
        rules = Rules.resolve(rules)
    matches = positive_int("matches", matches)
    simulations = positive_int("simulations", simulations)
    workers = positive_int("workers", workers)
    decisions = _check_decisions(decisions)
    if minutes is not None:
        minutes = _positive_float("minutes", minutes)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: must be a whole number >= 0, got {seed!r}")
    seed = int(seed)
    _universal_network(checkpoint)  # a missing, corrupt or rules-sized checkpoint: refused before any match
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"out: {str(folder)!r} is a file, not a folder of shards")
    if folder.is_dir() and any(folder.glob(f"seed{seed}-match*.npz")):
        raise ValueError(
            f"out: {str(folder)!r} already holds shards of seed {seed}; a run with another seed adds different matches"
        )
    _check_same_table(folder, rules)
    folder.mkdir(parents=True, exist_ok=True)
    args = (rules, simulations, None if checkpoint is None else str(checkpoint), decisions, str(folder), seed)
    deadline = None if minutes is None else time.monotonic() + 60.0 * minutes
    start = time.monotonic()
    played = kept = 0

    def finished(count: int) -> None:
        nonlocal played, kept
        played += 1
        kept += count
        if log is not None:
            log(f"match {played}/{matches}: {count} decisions kept, {kept} in all, {time.monotonic() - start:.0f} s")

    if workers == 1:
        _setup_worker(*args)
        with single_threaded_torch():
            for index in range(matches):
                if deadline is not None and time.monotonic() > deadline:
                    break
                finished(_generate_one(index))
    else:
        import multiprocessing

        with multiprocessing.get_context().Pool(workers, initializer=_setup_worker, initargs=args) as pool:
            pending: list[Any] = []
            index = 0
            while index < matches or pending:
                while index < matches and len(pending) < 2 * workers and (deadline is None or time.monotonic() < deadline):
                    pending.append(pool.apply_async(_generate_one, (index,)))
                    index += 1
                if not pending:
                    break
                finished(pending.pop(0).get())
    return {"matches": played, "decisions": kept, "seconds": round(time.monotonic() - start, 1), "folder": str(folder)}


# ------------------------------------------------------------------ shards
def load_shards(folder: str | os.PathLike[str], decisions: str = "bids") -> dict[str, Any]:
    """The shards of ``folder`` as arrays (``decisions="bids"`` keeps the bids only), split into train and held out.

    Returns ``{"train": (obs, mask, visits), "held_out": (obs, mask, visits), "shards": n, "rules": table,
    "tables": [table, ...], "drawn_seeds": [seed, ...]}``: one table per folder, or the tables of runs that
    drew a table per match from one family (``rules`` is then None; ``drawn_seeds`` are those runs' ``--seed``,
    training seeds as :mod:`blackout_training.ppo.training_seeds` counts them). A shard that is
    not a readable :func:`generate` shard is a ValueError naming the file.
    """
    decisions = _check_decisions(decisions)
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"data: no folder {str(folder)!r} (write one with blackout expert generate)")
    paths = sorted(folder.glob("seed*-match*.npz"))
    paths = [p for p in paths if not p.name.endswith(".partial.npz")]
    if not paths:
        raise ValueError(f"data: {str(folder)!r} holds no shards (seed*-match*.npz from blackout expert generate)")
    parts: dict[str, list[list[np.ndarray]]] = {"train": [[], [], []], "held_out": [[], [], []]}
    tables: set[str] = set()
    drawn: set[str | None] = set()
    seeds: set[int] = set()
    for i, path in enumerate(paths):
        try:
            with np.load(path, allow_pickle=False) as shard:
                missing = [key for key in SHARD_KEYS if key not in shard.files]
                if missing:
                    raise ValueError(f"missing {', '.join(missing)}")
                obs, mask, visits, bidding = shard["obs"], shard["mask"], shard["visits"], shard["bidding"]
                meta = json.loads(str(shard["meta"]))
                tables.add(json.dumps(meta["rules"], sort_keys=True))
                drawn.add(meta.get("drawn"))
                if meta.get("drawn") is not None:
                    seeds.add(int(meta["seed"]))
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as error:
            # numpy reads bytes that are no .npz archive as a pickle, refused: say what they are not
            why = "not an .npz archive" if "allow_pickle" in str(error) else error
            raise ValueError(f"data: {str(path)!r} is not a shard of blackout expert generate: {why}") from None
        if obs.ndim == 0 or any(array.dtype.kind not in "biuf" for array in (obs, mask, visits)) or bidding.dtype != bool:
            raise ValueError(
                f"data: {str(path)!r} is not a shard of blackout expert generate: its obs, mask and visits are not "
                f"arrays of numbers, or its bidding not of booleans (dtypes {obs.dtype}, {mask.dtype}, {visits.dtype}, "
                f"{bidding.dtype})"
            )
        n = len(obs)
        if (
            obs.shape != (n, universal_size()) or mask.shape != (n, UNIVERSAL_NUM_ACTIONS)
            or visits.shape != (n, UNIVERSAL_NUM_ACTIONS) or bidding.shape != (n,)
        ):
            raise ValueError(
                f"data: {str(path)!r} has arrays of the wrong shapes for the universal observation"
                f" ({universal_size()} floats, {UNIVERSAL_NUM_ACTIONS} actions): obs {obs.shape}, mask {mask.shape},"
                f" visits {visits.shape}"
            )
        if n and (
            not np.isfinite(obs).all() or not np.isfinite(visits).all() or (visits < 0).any()
            or (visits[mask == 0] != 0).any() or (visits.sum(axis=1) <= 0).any() or not np.isin(mask, (0, 1)).all()
        ):
            raise ValueError(f"data: {str(path)!r} has visit counts that are negative, not finite, on illegal actions or "
                             "all 0, or a mask that is not 0 or 1")
        keep = bidding if decisions == "bids" else np.ones(n, dtype=bool)
        split = parts["held_out" if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else "train"]
        for column, array in zip(split, (obs, mask, visits)):
            column.append(array[keep])
    family = drawn.pop() if len(drawn) == 1 else None
    if len(tables) != 1 and family is None:
        raise ValueError(
            f"data: {str(folder)!r} mixes shards of {len(tables)} tables; keep one table per folder"
            " (or the shards of runs that each drew from one family, --rules long-hands)"
        )
    try:
        table_list = [Rules.resolve(json.loads(table)) for table in sorted(tables)]
    except ValueError as error:
        raise ValueError(f"data: {str(folder)!r}: a shard's rules are not valid rules ({error})") from None
    result: dict[str, Any] = {
        "shards": len(paths), "rules": table_list[0] if family is None else None, "tables": table_list,
        "drawn_seeds": sorted(seeds),
    }
    for name, (obs_parts, mask_parts, visit_parts) in parts.items():
        result[name] = tuple(
            np.concatenate(column) if column else np.zeros((0, size), dtype=dtype)
            for column, size, dtype in (
                (obs_parts, universal_size(), np.float32),
                (mask_parts, UNIVERSAL_NUM_ACTIONS, np.int8),
                (visit_parts, UNIVERSAL_NUM_ACTIONS, np.float32),
            )
        )
    if not len(result["train"][0]):
        raise ValueError(f"data: {str(folder)!r} holds no {'bid' if decisions == 'bids' else ''} decisions to learn from")
    return result
