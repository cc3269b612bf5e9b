"""The seeds training drew its tables with, which a held-out seed must not be (``blackout bench generalist``).

A *training seed* is the ``run.seed`` of a run that drew tables (``env.tables`` holding
``preset`` or ``random``), as recorded in the run configs of the checkout
(``configs/train/*.yaml``), in the configs kept inside the shipped checkpoints
(``training/agents/checkpoints/*.pt``) and inside the checkpoint of the policy under test
(``ppo:PATH``, or ``checkpoint=PATH``), following each checkpoint's
``model.init_checkpoint`` back as far as the files are at hand; and the ``--seed`` of every
``blackout expert generate`` run that drew its tables from a family (``--rules long-hands``)
and was distilled into one of those checkpoints (recorded in the checkpoint, which is
followed back to the network the distillation started from). Why the held-out draw is
another stream anyway: :mod:`blackout_training.evaluation.held_out`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from blackout_env.agents.policies import parse_options, parse_spec

from ..evaluation.held_out import DEFAULT_HELD_OUT_SEED
from .tables import DRAWN_TABLES

__all__ = ["check_held_out_seed", "training_seeds"]

_REPOSITORY = Path(__file__).resolve().parents[2]
_TRAIN_CONFIGS = Path(__file__).resolve().parents[1] / "configs"  # (configs/train/ of a checkout links here)
_SHIPPED = Path(__file__).resolve().parents[1] / "agents" / "checkpoints"


def _checkpoint_extra(path: Path) -> tuple[dict, dict]:
    """The run config and the distillation report kept in a checkpoint (empty where it has none)."""
    from ..agents.policy_net import read_checkpoint  # torch, only when a seed is checked

    extra = read_checkpoint(path).get("extra", {})
    config, distilled = extra.get("config"), extra.get("distilled")
    return (config if isinstance(config, dict) else {}), (distilled if isinstance(distilled, dict) else {})


def _policy_checkpoints(policy: str | None) -> list[Path]:
    """The checkpoint file a policy spec names (``ppo:PATH``, ``...:checkpoint=PATH``), if any."""
    if not policy:
        return []
    name, argument = parse_spec(policy)
    if name == "ppo" and argument:
        return [Path(argument)]
    try:
        path = parse_options(argument, policy).get("checkpoint")
    except ValueError:
        return []  # not options: the policy's own loader says what is wrong
    return [Path(str(path))] if path else []


def _found(path: Path) -> Path | None:
    for candidate in (path, _REPOSITORY / path):
        if candidate.is_file():
            return candidate
    return None


def _shown(path: Path) -> str:
    """A path as the reader knows it: relative to the repository when inside it."""
    resolved = path.resolve()
    return str(resolved.relative_to(_REPOSITORY)) if resolved.is_relative_to(_REPOSITORY) else str(path)


def training_seeds(policy: str | None = None) -> dict[int, list[str]]:
    """Every training seed (see the module) -> where it is recorded."""
    from ..ppo.config import load_config

    seeds: dict[int, list[str]] = {}

    def record(seed: object, tables: Iterable[object], where: str) -> None:
        if isinstance(seed, int) and any(table in DRAWN_TABLES for table in tables or ()):
            seeds.setdefault(seed, []).append(where)

    if _TRAIN_CONFIGS.is_dir():
        for path in sorted(_TRAIN_CONFIGS.glob("*.yaml")):
            config = load_config(path)
            record(config.run.seed, config.env.tables, f"run.seed of configs/train/{path.name}")
    todo = [*sorted(_SHIPPED.glob("*.pt")), *_policy_checkpoints(policy)]
    seen: set[Path] = set()
    while todo:
        path = _found(todo.pop())
        if path is None or path.resolve() in seen:
            continue
        seen.add(path.resolve())
        config, distilled = _checkpoint_extra(path)
        run, env, model = (config.get(key) or {} for key in ("run", "env", "model"))
        record(run.get("seed"), env.get("tables"), f"run.seed recorded in {_shown(path)}")
        for seed in distilled.get("drawn_seeds") or ():
            record(seed, DRAWN_TABLES, f"blackout expert generate --seed of data distilled into {_shown(path)}")
        if model.get("init_checkpoint"):
            todo.append(Path(model["init_checkpoint"]))
        if distilled.get("started_from"):
            todo.append(Path(distilled["started_from"]))
    return seeds


def check_held_out_seed(seed: int, policy: str | None = None) -> None:
    """Refuse a held-out seed that is negative or a training seed (see the module), naming ``--held-out-seed``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"--held-out-seed must be a whole number >= 0, got {seed!r}")
    sources = training_seeds(policy).get(int(seed))
    if sources:
        raise ValueError(
            f"--held-out-seed {seed} is a training seed, the seed of a run that drew its tables "
            f"({'; '.join(sources)}): held-out tables need a seed no training run uses (default {DEFAULT_HELD_OUT_SEED})"
        )
