"""Expert iteration: distil ``ppo+search`` into a universal ``ppo`` network.

``ppo+search`` (IS-MCTS guided by the network, :mod:`blackout_training.agents.search_policy`)
plays far better than the network alone; distillation moves the network toward
the search's choices so that it keeps some of that strength at one forward pass
per decision. Two steps, each a function here and a ``blackout expert`` command:

1. :func:`generate` plays whole matches and, at each decision it searches that
   has more than one legal action, keeps the universal observation, the
   universal mask and the search's root visit counts (the search's choice is the
   most visited action). With ``decisions="bids"`` only the bids are searched
   and kept, and the network plays the cards (greedy): the states are those the
   network itself meets, and a match costs a fraction of a searched one. One
   compressed ``.npz`` shard per match in a folder, named by the run's seed and
   the match's index, so runs with different seeds add to the same folder and
   every shard can be played again alone.
2. :func:`distill` fine-tunes the network: cross-entropy toward the visit
   counts sharpened by a temperature (``visits ** (1 / T)``; a small T is the
   search's choice with its near-ties kept soft), while a KL term holds its
   policy on the other tables (the network's own states, sampled in self-play,
   every preset and the standard rules at 3, 5, 6 and 7 players) and a squared
   error holds its value everywhere. Held-out shards (every 20th) measure how
   often the network picks the search's choice before and after.

The result is a checkpoint like any universal one (``ppo:PATH``).
"""

from __future__ import annotations

import copy
import json
import math
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from blackout_env import BlackoutGame, Rules
from blackout_env.universal import UNIVERSAL_NUM_ACTIONS, universal_actions, universal_size

from .agents.policy_net import SHIPPED_CHECKPOINT, CheckpointError, PolicyBot, load_checkpoint, save_checkpoint
from .agents.rollout_policy import positive_int
from .evaluation.tournament import single_threaded_torch

__all__ = ["DECISIONS", "distill", "generate", "load_shards", "reference_tables"]

DECISIONS = ("bids", "all")
"""What :func:`generate` searches and keeps, and what :func:`distill` learns from: the bids only, or every decision."""

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


def _setup_worker(rules: Rules, simulations: int, checkpoint: str | None, decisions: str, folder: str, seed: int) -> None:
    from blackout_baselines import ISMCTSBot

    torch.set_num_threads(1)
    bot = PolicyBot(_universal_network(checkpoint)[0], rules, name="ppo")
    _WORKER.update(
        bot=bot,
        search=ISMCTSBot(simulations=simulations, prior=bot.action_probabilities),
        rules=rules,
        decisions=decisions,
        folder=Path(folder),
        seed=seed,
        meta=json.dumps({
            "rules": rules.to_dict(), "simulations": simulations, "decisions": decisions, "seed": seed,
            "checkpoint": str(SHIPPED_CHECKPOINT if checkpoint is None else checkpoint),
        }),
    )


def _generate_one(index: int) -> int:
    w = _WORKER
    record = _play_match(w["bot"], w["search"], w["rules"], w["seed"], index, w["decisions"])
    path = _shard_path(w["folder"], w["seed"], index)
    partial = path.with_name(path.stem + ".partial.npz")
    np.savez_compressed(partial, meta=np.array(w["meta"]), **record)
    partial.replace(path)  # a shard is whole or absent
    return len(record["obs"])


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
        rules: the table the matches are played at.
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

    Returns ``{"train": (obs, mask, visits), "held_out": (obs, mask, visits), "shards": n, "rules": table}``
    (one table per folder). A shard that is
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
    for i, path in enumerate(paths):
        try:
            with np.load(path, allow_pickle=False) as shard:
                missing = [key for key in SHARD_KEYS if key not in shard.files]
                if missing:
                    raise ValueError(f"missing {', '.join(missing)}")
                obs, mask, visits, bidding = shard["obs"], shard["mask"], shard["visits"], shard["bidding"]
                tables.add(json.dumps(json.loads(str(shard["meta"]))["rules"], sort_keys=True))
        except (OSError, ValueError, KeyError, TypeError, EOFError) as error:
            raise ValueError(f"data: {str(path)!r} is not a shard of blackout expert generate: {error}") from None
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
            or (visits[mask == 0] != 0).any() or (visits.sum(axis=1) <= 0).any()
        ):
            raise ValueError(f"data: {str(path)!r} has visit counts that are negative, not finite, on illegal actions or all 0")
        keep = bidding if decisions == "bids" else np.ones(n, dtype=bool)
        split = parts["held_out" if i % HELD_OUT_EVERY == HELD_OUT_EVERY - 1 else "train"]
        for column, array in zip(split, (obs, mask, visits)):
            column.append(array[keep])
    if len(tables) != 1:
        raise ValueError(f"data: {str(folder)!r} mixes shards of {len(tables)} tables; keep one table per folder")
    result: dict[str, Any] = {"shards": len(paths), "rules": Rules.resolve(json.loads(tables.pop()))}
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


def _targets(visits: np.ndarray, temperature: float) -> torch.Tensor:
    """Visit counts sharpened by the temperature, as probabilities (computed in float64: a small T overflows float32)."""
    v = visits.astype(np.float64)
    v = (v / v.max(axis=1, keepdims=True)) ** (1.0 / temperature)
    return torch.as_tensor((v / v.sum(axis=1, keepdims=True)).astype(np.float32))


# ------------------------------------------------------------------ reference
def reference_tables(exclude: Rules | None = None) -> list[Rules]:
    """The tables of the result table (``blackout bench generalist``'s rows: every preset at its default players,
    the standard rules at 3, 5, 6 and 7 players), less ``exclude``: where :func:`distill` holds the network's policy."""
    from .evaluation.generalist import default_rows, row_rules

    return [rules for rules in map(row_rules, default_rows()) if rules != exclude]


def reference_states(
    bot: PolicyBot, tables: Sequence[Rules], per_table: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """``per_table`` decisions (more than one legal action) of each table, from the network sampled in self-play."""
    sampler = PolicyBot(bot.model, bot.rules, name=bot.name, greedy=False, seed=seed)
    obs, masks = [], []
    for t, rules in enumerate(tables):
        count = match = 0
        while count < per_table:
            game = BlackoutGame(rules, seed=int(np.random.SeedSequence([seed, t, match]).generate_state(1)[0]))
            while game.phase != "game_over" and count < per_table:
                view = game.view(game.current_player)
                if len(view.legal_actions) > 1:
                    _, ob, mask = sampler._network_inputs(view)
                    obs.append(ob[0])
                    masks.append(mask[0])
                    count += 1
                game.step(sampler.act(view))
            match += 1
    return np.array(obs, dtype=np.float32), np.array(masks, dtype=np.int8)


# ------------------------------------------------------------------ distill
def _log_policy(model: Any, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    logits, state = model._forward(obs)
    return F.log_softmax(logits.masked_fill(~mask, -1e9), dim=-1), model.critic(state).squeeze(-1)


def _in_chunks(model: Any, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    with torch.inference_mode():
        parts = [_log_policy(model, obs[i : i + 4096], mask[i : i + 4096]) for i in range(0, len(obs), 4096)]
    if not parts:
        return torch.zeros(0, UNIVERSAL_NUM_ACTIONS), torch.zeros(0)
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


def _kl(old_log: torch.Tensor, new_log: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """KL(old || new) per row, over the legal actions."""
    return (old_log.exp() * (old_log - new_log).masked_fill(~mask, 0.0)).sum(dim=-1)


def distill(
    data: str | os.PathLike[str],
    out: str | os.PathLike[str],
    checkpoint: str | os.PathLike[str] | None = None,
    decisions: str = "bids",
    epochs: int = 6,
    lr: float = 1e-3,
    temperature: float = 0.1,
    kl_weight: float = 1.0,
    reference_decisions: int = 3000,
    batch_size: int = 512,
    seed: int = 0,
    threads: int | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Fine-tune a universal network toward the search's choices in the shards of ``data``; write ``out``.

    Args:
        data: a folder of :func:`generate` shards.
        out: the checkpoint to write (a ``ppo:PATH`` policy).
        checkpoint: the network to start from (default: the shipped ``ppo``); the data's own network is usual.
        decisions: learn from the bids only, or every decision the shards hold.
        epochs, lr, batch_size: Adam over the training shards, the rate decaying linearly to 0.
        temperature: targets are ``visits ** (1 / temperature)``, normalised.
        kl_weight: weight of KL(old || new) on the reference tables' states.
        reference_decisions: states per reference table (:func:`reference_tables`, less the data's table).
        seed: seeds the reference states and the minibatches.
        threads: torch threads (default: torch's own setting).
        log: called with a line per epoch.

    Returns the held-out agreement with the search's choice before and after (None with fewer than 20 shards), the reference tables' KL and share
    of unchanged choices after, and the sizes; the same figures are kept in the checkpoint (``distilled``).
    """
    decisions = _check_decisions(decisions)
    epochs = positive_int("epochs", epochs)
    batch_size = positive_int("batch_size", batch_size)
    reference_decisions = positive_int("reference_decisions", reference_decisions)
    lr = _positive_float("lr", lr)
    temperature = _positive_float("temperature", temperature)
    if isinstance(kl_weight, bool) or not isinstance(kl_weight, (int, float)) or not kl_weight >= 0:
        raise ValueError(f"kl_weight: must be a number >= 0, got {kl_weight!r}")
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"out: {str(out)!r} is a folder; give the checkpoint file to write")
    shards = load_shards(data, decisions)
    table = shards["rules"]
    path = SHIPPED_CHECKPOINT if checkpoint is None else Path(checkpoint)
    old, trained_rules, payload = _universal_network(path)
    bot = PolicyBot(old, table, name="ppo")
    if threads is not None:
        torch.set_num_threads(positive_int("threads", threads))
    torch.manual_seed(seed)

    train_obs, train_mask = torch.as_tensor(shards["train"][0]), torch.as_tensor(shards["train"][1]) != 0
    train_target = _targets(shards["train"][2], temperature)
    held_obs, held_mask = torch.as_tensor(shards["held_out"][0]), torch.as_tensor(shards["held_out"][1]) != 0
    held_choice = torch.as_tensor(shards["held_out"][2]).argmax(dim=1)
    ref_obs, ref_mask = (torch.as_tensor(a) for a in reference_states(bot, reference_tables(table), reference_decisions, seed))
    ref_mask = ref_mask != 0
    old_train_value = _in_chunks(old, train_obs, train_mask)[1]
    old_ref_log, old_ref_value = _in_chunks(old, ref_obs, ref_mask)

    def measure(model: Any) -> dict[str, float | None]:
        model.eval()
        held_log = _in_chunks(model, held_obs, held_mask)[0]
        ref_log = _in_chunks(model, ref_obs, ref_mask)[0]
        model.train()
        return {
            "held_out_agreement": (
                round(float((held_log.argmax(1) == held_choice).float().mean()), 4) if len(held_obs) else None
            ),
            "reference_kl": round(float(_kl(old_ref_log, ref_log, ref_mask).mean()), 4),
            "reference_same_choice": round(float((ref_log.argmax(1) == old_ref_log.argmax(1)).float().mean()), 4),
        }

    before = measure(old)
    new = copy.deepcopy(old).train()
    optimiser = torch.optim.Adam(new.parameters(), lr=lr)
    n = len(train_obs)
    steps_per_epoch = max(1, n // batch_size)
    total = epochs * steps_per_epoch
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda step: 1.0 - step / total)
    generator = torch.Generator().manual_seed(seed)
    start = time.monotonic()
    for epoch in range(epochs):
        order = torch.randperm(n, generator=generator)
        for step in range(steps_per_epoch):
            rows = order[step * batch_size : (step + 1) * batch_size]
            ref_rows = torch.randint(0, len(ref_obs), (len(rows),), generator=generator)
            log_p, value = _log_policy(new, train_obs[rows], train_mask[rows])
            ref_log, ref_value = _log_policy(new, ref_obs[ref_rows], ref_mask[ref_rows])
            imitation = -(train_target[rows] * log_p.clamp_min(-1e4)).sum(dim=1).mean()
            hold = _kl(old_ref_log[ref_rows], ref_log, ref_mask[ref_rows]).mean()
            values = F.mse_loss(value, old_train_value[rows]) + F.mse_loss(ref_value, old_ref_value[ref_rows])
            loss = imitation + kl_weight * hold + values
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(new.parameters(), 0.5)
            optimiser.step()
            schedule.step()
        if log is not None:
            figures = measure(new)
            log(f"epoch {epoch + 1}/{epochs} ({time.monotonic() - start:.0f} s): " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    new.eval()
    after = measure(new)
    report = {
        "shards": shards["shards"], "train_decisions": n, "held_out_decisions": len(held_obs),
        "reference_decisions": len(ref_obs), "decisions": decisions, "epochs": epochs, "lr": lr,
        "temperature": temperature, "kl_weight": kl_weight, "seed": seed,
        "held_out_agreement_before": before["held_out_agreement"], "held_out_agreement_after": after["held_out_agreement"],
        "reference_kl": after["reference_kl"], "reference_same_choice": after["reference_same_choice"],
        "seconds": round(time.monotonic() - start, 1), "data": str(data), "started_from": str(path),
    }
    kept = {key: payload.get("extra", {})[key] for key in ("global_step", "update", "config") if key in payload.get("extra", {})}
    save_checkpoint(out, new, trained_rules, extra={**kept, "distilled": report})
    return report

