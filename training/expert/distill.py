"""Expert iteration's second step: fine-tune a universal network toward the search's choices (:func:`distill`).

Cross-entropy toward the shards' sharpened visit counts, a KL term holding the policy on the
reference tables (:func:`reference_tables`) and a squared error holding the value; the package
docstring (:mod:`blackout_training.expert`) gives the whole method.
"""

from __future__ import annotations

import copy
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
from blackout_env.game.universal import UNIVERSAL_NUM_ACTIONS

from ..agents.policy_net import SHIPPED_CHECKPOINT, PolicyBot, check_not_diverged, save_checkpoint
from ..agents.rollout_policy import positive_int
from ..cpu import parse_threads
from .shards import _check_decisions, _positive_float, _universal_network, load_shards

__all__ = ["distill", "reference_tables"]


def _targets(visits: np.ndarray, temperature: float) -> torch.Tensor:
    """Visit counts sharpened by the temperature, as probabilities (computed in float64: a small T overflows float32)."""
    v = visits.astype(np.float64)
    v = (v / v.max(axis=1, keepdims=True)) ** (1.0 / temperature)
    return torch.as_tensor((v / v.sum(axis=1, keepdims=True)).astype(np.float32))


# ------------------------------------------------------------------ reference
def reference_tables(exclude: Rules | Sequence[Rules] | None = None) -> list[Rules]:
    """The tables of the result table (``blackout bench generalist``'s rows: every preset at its default players,
    the standard rules at 3, 5, 6 and 7 players), less ``exclude`` (a table or several: the data's):
    where :func:`distill` holds the network's policy."""
    from ..evaluation.generalist import default_rows, row_rules

    excluded = [] if exclude is None else [exclude] if isinstance(exclude, Rules) else list(exclude)
    return [rules for rules in map(row_rules, default_rows()) if rules not in excluded]


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


def _load_folders(data: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], decisions: str) -> dict[str, Any]:
    """:func:`load_shards` of one folder or several (one table each), their arrays concatenated; ``tables`` lists the tables."""
    folders = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    if not folders:
        raise ValueError("data: give at least one folder of shards")
    loaded = [load_shards(folder, decisions) for folder in folders]
    merged: dict[str, Any] = {
        "shards": sum(part["shards"] for part in loaded), "tables": [t for part in loaded for t in part["tables"]],
        "drawn_seeds": sorted({seed for part in loaded for seed in part["drawn_seeds"]}),
    }
    for split in ("train", "held_out"):
        merged[split] = tuple(np.concatenate([part[split][k] for part in loaded]) for k in range(3))
    return merged


def distill(
    data: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
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
        data: a folder of :func:`~blackout_training.expert.shards.generate` shards, or several (one table each).
        out: the checkpoint to write (a ``ppo:PATH`` policy).
        checkpoint: the network to start from (default: the shipped ``ppo``); the data's own network is usual.
        decisions: learn from the bids only, or every decision the shards hold.
        epochs, lr, batch_size: Adam over the training shards, the rate decaying linearly to 0.
        temperature: targets are ``visits ** (1 / temperature)``, normalised.
        kl_weight: weight of KL(old || new) on the reference tables' states.
        reference_decisions: states per reference table (:func:`reference_tables`, less the data's tables).
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
    if lr > 1:
        raise ValueError(f"lr: must be a number in (0, 1], got {lr!r}")
    temperature = _positive_float("temperature", temperature)
    if isinstance(kl_weight, bool) or not isinstance(kl_weight, (int, float)) or not 0 <= kl_weight < math.inf:
        raise ValueError(f"kl_weight: must be a finite number >= 0, got {kl_weight!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: must be a whole number >= 0, got {seed!r}")
    if threads is not None:
        parse_threads(positive_int("threads", threads), "threads")
    out = Path(out)
    if out.is_dir():
        raise ValueError(f"out: {str(out)!r} is a folder; give the checkpoint file to write")
    shards = _load_folders(data, decisions)
    tables = shards["tables"]
    path = SHIPPED_CHECKPOINT if checkpoint is None else Path(checkpoint)
    old, trained_rules, payload = _universal_network(path)
    bot = PolicyBot(old, tables[0], name="ppo")
    if threads is not None:
        torch.set_num_threads(parse_threads(positive_int("threads", threads), "threads"))
    torch.manual_seed(seed)

    train_obs, train_mask = torch.as_tensor(shards["train"][0]), torch.as_tensor(shards["train"][1]) != 0
    train_target = _targets(shards["train"][2], temperature)
    held_obs, held_mask = torch.as_tensor(shards["held_out"][0]), torch.as_tensor(shards["held_out"][1]) != 0
    held_choice = torch.as_tensor(shards["held_out"][2]).argmax(dim=1)
    ref_obs, ref_mask = (torch.as_tensor(a) for a in reference_states(bot, reference_tables(tables), reference_decisions, seed))
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
    check_not_diverged(new, f"nothing was written; try a smaller lr than {lr:g}")
    after = measure(new)
    report = {
        "shards": shards["shards"], "train_decisions": n, "held_out_decisions": len(held_obs),
        "reference_decisions": len(ref_obs), "decisions": decisions, "epochs": epochs, "lr": lr,
        "temperature": temperature, "kl_weight": kl_weight, "seed": seed,
        "held_out_agreement_before": before["held_out_agreement"], "held_out_agreement_after": after["held_out_agreement"],
        "reference_kl": after["reference_kl"], "reference_same_choice": after["reference_same_choice"],
        "seconds": round(time.monotonic() - start, 1),
        "data": str(data) if isinstance(data, (str, os.PathLike)) else [str(folder) for folder in data],
        "started_from": str(path), "drawn_seeds": shards["drawn_seeds"],
    }
    kept = {key: payload.get("extra", {})[key] for key in ("global_step", "update", "config") if key in payload.get("extra", {})}
    save_checkpoint(out, new, trained_rules, extra={**kept, "distilled": report})
    return report
