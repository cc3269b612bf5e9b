"""Behaviour cloning with masks: a policy network that imitates a dataset's decisions.

The network is the trainer's :class:`~blackout_training.agents.policy_net.ActorCritic` (so the clone is a
``ppo:PATH`` checkpoint, and ``blackout train --init-dataset NAME`` starts PPO from it). Each decision is an
observation, the legal-action mask stored in its info and the action taken; the loss is the cross-entropy
of the action under the *masked* logits (illegal actions get no probability, so the network spends nothing
on learning what the mask already says). The value head is left as initialised: PPO fits it.

A tenth of the episodes (at least one, when there are two or more) is held out: the validation accuracy is
the share of their decisions where the clone's most probable legal action is the one the dataset took.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blackout_env.game.rules import Rules

from .store import dataset_metadata, read_episodes

__all__ = ["CloneResult", "clone", "check_init_dataset", "clone_for_run", "load_decisions"]


def load_decisions(dataset_id: str) -> tuple[Rules, str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """The dataset's rules, observation kind and, per episode, its decisions: (observations, masks, actions).

    The row after each episode's last action (no decision is taken there) is left out.
    """
    meta = dataset_metadata(dataset_id).get("blackout")
    if not meta or "rules" not in meta:
        raise ValueError(f"dataset {dataset_id!r} was not written by blackout dataset (no 'blackout' metadata)")
    rules = Rules.from_dict(meta["rules"])
    episodes = []
    for episode in read_episodes(dataset_id):
        steps = len(episode.actions)
        episodes.append((np.asarray(episode.observations[:steps], dtype=np.float32),
                         np.asarray(episode.infos["action_mask"][:steps], dtype=bool),
                         np.asarray(episode.actions, dtype=np.int64)))
    return rules, meta.get("observation", "rules"), episodes


@dataclass(frozen=True)
class CloneResult:
    """What :func:`clone` trained."""

    model: Any
    """The network (an ``ActorCritic``)."""
    rules: Rules
    decisions: int
    """Decisions trained on (the held-out episodes' excluded)."""
    validation_decisions: int
    train_accuracy: float
    """Share of the training decisions where the clone's most probable legal action is the dataset's."""
    validation_accuracy: float | None
    """The same on the held-out episodes (None with a single episode)."""
    seconds: float
    checkpoint: Path | None


def _accuracy(model: Any, obs: Any, mask: Any, actions: Any, batch_size: int) -> float:
    import torch

    if len(actions) == 0:
        return float("nan")
    right = 0
    with torch.inference_mode():
        for start in range(0, len(actions), batch_size):
            chosen = model.logits(obs[start:start + batch_size], mask[start:start + batch_size]).argmax(dim=-1)
            right += int((chosen == actions[start:start + batch_size]).sum())
    return right / len(actions)


def _check_out(path: Path) -> None:
    """Refuse, before any training, a checkpoint path that cannot be written (its folders may be made)."""
    if path.is_dir():
        raise ValueError(f"out {str(path)!r} is a folder; name the checkpoint file to write")
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise ValueError(f"out {str(path)!r} cannot be written: {str(folder)!r} is a file, not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"out {str(path)!r} cannot be written: the folder {str(folder)!r} is not writable")


def clone(
    dataset_id: str,
    hidden_sizes: Sequence[int] = (256, 256),
    arch: str = "mlp",
    card_width: int = 32,
    epochs: int = 3,
    lr: float = 1e-3,
    batch_size: int = 512,
    seed: int = 0,
    out: str | Path | None = None,
    log: Callable[[str], None] | None = None,
) -> CloneResult:
    """Train a network to take the dataset's actions (masked cross-entropy); write it to ``out`` when given.

    The network reads the dataset's observation (rules-sized or universal) for the dataset's rules.
    Raises ValueError for a dataset that is missing or not this package's, or a bad option.
    """
    import torch

    from ..agents.policy_net import check_not_diverged, make_model, save_checkpoint

    for name, value in (("epochs", epochs), ("batch_size", batch_size), ("card_width", card_width)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not 0 < lr <= 1:
        raise ValueError(f"lr must be a number in (0, 1], got {lr!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a whole number >= 0, got {seed!r}")
    if isinstance(hidden_sizes, (str, bytes)) or not hidden_sizes or any(
        isinstance(size, bool) or not isinstance(size, int) or size < 1 for size in hidden_sizes
    ):
        raise ValueError(f"hidden_sizes must be one or more whole numbers >= 1, got {hidden_sizes!r}")
    if out is not None:
        _check_out(Path(out))
    started = time.perf_counter()
    rules, observation, episodes = load_decisions(dataset_id)
    held = len(episodes) // 10 if len(episodes) >= 10 else (1 if len(episodes) >= 2 else 0)
    order = np.random.default_rng(seed).permutation(len(episodes))
    validation, training = [episodes[i] for i in order[:held]], [episodes[i] for i in order[held:]]

    def tensors(part: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> tuple[Any, Any, Any]:
        if not part:
            return torch.zeros(0), torch.zeros(0, dtype=torch.bool), torch.zeros(0, dtype=torch.long)
        return tuple(torch.as_tensor(np.concatenate([e[k] for e in part])) for k in range(3))

    obs, mask, actions = tensors(training)
    val_obs, val_mask, val_actions = tensors(validation)
    torch.manual_seed(seed)
    model = make_model(rules, hidden_sizes, arch, card_width, observation)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(seed)
    for epoch in range(epochs):
        model.train()
        total, count = 0.0, 0
        for rows in torch.randperm(len(actions), generator=generator).split(batch_size):
            loss = torch.nn.functional.cross_entropy(model.logits(obs[rows], mask[rows]), actions[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, count = total + loss.item() * len(rows), count + len(rows)
        if log is not None:
            log(f"epoch {epoch + 1}/{epochs}: masked cross-entropy {total / max(count, 1):.4f}")
    model.eval()
    check_not_diverged(model, f"nothing was written; try a smaller lr than {lr:g}")
    train_accuracy = _accuracy(model, obs, mask, actions, 4096)
    validation_accuracy = _accuracy(model, val_obs, val_mask, val_actions, 4096) if held else None
    checkpoint = None
    if out is not None:
        checkpoint = save_checkpoint(out, model, rules, extra={"cloned_from": dataset_id, "epochs": epochs, "lr": lr})
    return CloneResult(model, rules, len(actions), len(val_actions), train_accuracy, validation_accuracy,
                       time.perf_counter() - started, checkpoint)


def clone_for_run(config: Any, dataset_id: str, epochs: int = 3, log: Callable[[str], None] | None = None) -> CloneResult:
    """Clone ``dataset_id`` with a training run's network into ``run.out_dir/NAME-clone.pt`` (``--init-dataset``).

    The network is the run's (``model.hidden_sizes``, ``arch``, ``card_width``; seeded by ``run.seed``). The
    caller starts the run from it (``model.init_checkpoint``). Raises ValueError when the dataset's table
    (rules, observation layout) is not the run's, or the config already starts from a checkpoint.
    """
    check_init_dataset(config, dataset_id)
    out = Path(config.run.out_dir).expanduser() / f"{config.run.name}-clone.pt"
    return clone(dataset_id, config.model.hidden_sizes, config.model.arch, config.model.card_width,
                 epochs=epochs, seed=config.run.seed, out=out, log=log)


def check_init_dataset(config: Any, dataset_id: str) -> None:
    """Raise ValueError unless a run of ``config`` can start from a clone of ``dataset_id`` (same table, no checkpoint)."""
    if config.model.init_checkpoint:
        raise ValueError(f"--init-dataset: the config already starts from model.init_checkpoint {config.model.init_checkpoint!r}")
    if config.algo == "rllib_ppo":
        raise ValueError("--init-dataset: for the native PPO trainer (algo ppo or ppo_ray), not rllib_ppo")
    meta = dataset_metadata(dataset_id).get("blackout") or {}
    rules = Rules.resolve(config.env.rules)
    if "rules" not in meta or Rules.from_dict(meta["rules"]) != rules or meta.get("observation") != config.env.observation:
        raise ValueError(
            f"--init-dataset {dataset_id!r}: its table ({meta.get('rules_name')}, observation "
            f"{meta.get('observation')}) is not this run's (env.rules {config.env.rules}, env.observation "
            f"{config.env.observation})"
        )
