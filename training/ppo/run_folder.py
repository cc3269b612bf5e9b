"""The run folder of a training run: checked first, written only once every check has passed.

A run writes into ``run.out_dir/run.name``: ``config.yaml`` (the resolved
config), ``checkpoint.pt``, ``metrics.csv``, ``eval.csv``, ``learning_curve.png``,
``final_eval.json`` and ``tensorboard/``.

Starting. :func:`check_run_folder` only looks: it refuses a folder that
already holds a run (unless ``--resume`` or ``--force``), a non-empty folder
that holds no run (never deleted), an ``out_dir`` or run folder that is a
file, and a parent that cannot take a new folder. :meth:`RunFolder.create`
then writes: it deletes the old run (``--force``), makes the folder, removes
temporary files left by a run killed while writing (``.checkpoint.pt.*.tmp``
and the like) and writes ``config.yaml``. ``blackout_training.ppo.trainer.train`` calls
it only after the config, the rules, the opponents and any checkpoint to
start from have been checked, so a failed start leaves nothing behind.

Resuming (``--resume``). The config must equal the saved one, except the keys
in :data:`RESUMABLE_CHANGES`. A run folder with ``config.yaml`` but no
checkpoint (the run was stopped before its first checkpoint) is resumed from
update 0, and the trainer says so in one line (``resuming ...: no checkpoint
yet ... starting from update 0``); its partial logs are replaced.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import write_text_atomically
from .config import TrainConfig, config_from_dict, config_to_dict

__all__ = [
    "CHECKPOINT_NAME",
    "CONFIG_NAME",
    "RESUMABLE_CHANGES",
    "RunFolder",
    "RunFolderError",
    "TEMP_PATTERNS",
    "check_run_folder",
]

CHECKPOINT_NAME = "checkpoint.pt"
CONFIG_NAME = "config.yaml"
# Keys a resumed run may change: how long and where it runs, not what it learns. The folder that the new
# run.out_dir and run.name name is the run (a run folder may be moved or copied, e.g. to another machine).
RESUMABLE_CHANGES = {
    "ray.address",  # where Ray runs (a cluster's head may come back at another address), not what is learned
    "ray.num_cpus",
    "rllib.address",
    "rllib.num_cpus",
    "run.out_dir",
    "run.name",
    "run.time_limit_minutes",
    "run.device",
    "run.threads",
    "run.checkpoint_minutes",
    "run.progress_bar",
    "ppo.total_steps",
    "eval.final_deals",
}
TEMP_PATTERNS = (f".{CHECKPOINT_NAME}.*.tmp", ".checkpoint-*min.pt.*.tmp", f".{CONFIG_NAME}*.tmp", ".final_eval.json*.tmp",
                 ".*.tmp.png")
"""Temporary files a run writes and renames; one killed mid-write leaves them, and the next start removes them."""


@dataclass
class TrainResult:
    """What a finished (or time-limited) run reports."""

    run_dir: Path
    checkpoint: Path
    global_step: int
    updates: int
    steps_per_s: float
    final_eval: dict[str, Any] | None


class RunFolderError(ValueError):
    """A run folder that holds another run, nothing to resume, or cannot be written."""


@dataclass
class RunFolder:
    """A checked run folder (see :func:`check_run_folder`); nothing is written until :meth:`create`."""

    path: Path
    resuming: bool
    """A checkpoint is there to continue from."""
    replace: bool
    """``--force`` on a folder that holds a run: delete it first."""
    resume_without_checkpoint: bool = False
    """``--resume`` of a run stopped before its first checkpoint: it starts from update 0."""

    @property
    def checkpoint(self) -> Path:
        return self.path / CHECKPOINT_NAME

    @property
    def restart_note(self) -> str | None:
        """The line a trainer prints when ``--resume`` finds no checkpoint yet; None otherwise."""
        if not self.resume_without_checkpoint:
            return None
        return f"resuming {self.path}: no checkpoint yet (the run stopped before its first one); starting from update 0"

    def create(self, config: TrainConfig) -> None:
        """Write: delete the old run (``--force``), make the folder, remove stale temporary files, save the config."""
        try:
            if self.replace:
                shutil.rmtree(self.path)
            self.path.mkdir(parents=True, exist_ok=True)
            for stale in _temp_files(self.path):
                stale.unlink(missing_ok=True)
            write_config(self.path, config)
        except OSError as error:
            raise RunFolderError(f"cannot write the run folder {str(self.path)!r}: {error.strerror or error}") from None


def _temp_files(folder: Path) -> list[Path]:
    return [path for pattern in TEMP_PATTERNS for path in folder.glob(pattern) if path.is_file()]


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _check_writable_parent(out_dir: Path) -> None:
    """``out_dir`` (made if missing) must be a folder, below an existing folder that takes new entries."""
    if out_dir.exists() and not out_dir.is_dir():
        raise RunFolderError(f"run.out_dir {str(out_dir)!r} is a file, not a folder")
    existing = out_dir
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise RunFolderError(f"run.out_dir {str(out_dir)!r} cannot be made: {str(existing)!r} is a file")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise RunFolderError(f"run.out_dir {str(out_dir)!r} cannot be written: no permission in {str(existing)!r}")


def check_run_folder(config: TrainConfig, resume: bool, force: bool) -> RunFolder:
    """The run folder, checked without writing anything.

    A folder that already holds a run is refused unless ``resume`` (same config,
    up to :data:`RESUMABLE_CHANGES`) or ``force`` (the old run is deleted by
    :meth:`RunFolder.create`). A non-empty folder that is not a run folder is never deleted.
    """
    import yaml

    out_dir = Path(config.run.out_dir).expanduser()  # "~/runs" is the home folder's, as in a shell
    run_dir = out_dir / config.run.name
    if resume and force:
        raise RunFolderError("--resume and --force contradict each other: continue the run, or start it over")
    _check_writable_parent(out_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise RunFolderError(f"run folder {str(run_dir)!r} is a file")
    saved_config = run_dir / CONFIG_NAME
    holds_run = saved_config.is_file()
    if resume:
        if not holds_run:
            raise RunFolderError(f"nothing to resume: {str(run_dir)!r} holds no run ({CONFIG_NAME} missing)")
        try:
            data = yaml.safe_load(saved_config.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError(f"it holds {'nothing' if data is None else type(data).__name__}, not the run's settings")
            saved = config_from_dict(data)
        except (ValueError, yaml.YAMLError) as error:
            raise RunFolderError(f"cannot resume {str(run_dir)!r}: its {CONFIG_NAME} is invalid: {error}") from None
        old, new = _flatten(config_to_dict(saved)), _flatten(config_to_dict(config))
        changed = [key for key in sorted(old) if old[key] != new.get(key) and key not in RESUMABLE_CHANGES]
        if changed:
            key = changed[0]
            raise RunFolderError(
                f"cannot resume {str(run_dir)!r} with another config: {key} was {old[key]!r}, now {new[key]!r} "
                f"(only {', '.join(sorted(RESUMABLE_CHANGES))} may change)"
            )
        logged = _last_logged_update(run_dir)
        checkpoint = run_dir / CHECKPOINT_NAME
        if checkpoint.exists() and not checkpoint.is_file():
            raise RunFolderError(f"cannot resume {str(run_dir)!r}: its {CHECKPOINT_NAME} is a folder, not a checkpoint")
        has_checkpoint = checkpoint.is_file()
        if not has_checkpoint and logged >= saved.run.checkpoint_every_updates:
            raise RunFolderError(
                f"cannot resume {str(run_dir)!r}: its {CHECKPOINT_NAME} is missing, though metrics.csv logs update {logged} "
                f"(a checkpoint every {saved.run.checkpoint_every_updates}): put it back, or start the run over "
                f"with --force"
            )
        return RunFolder(run_dir, resuming=has_checkpoint, replace=False, resume_without_checkpoint=not has_checkpoint)
    temp = set(_temp_files(run_dir)) if run_dir.is_dir() else set()
    if run_dir.is_dir() and any(path not in temp for path in run_dir.iterdir()):
        if not holds_run:
            raise RunFolderError(f"{str(run_dir)!r} is not empty and holds no run; choose another run.name or out_dir")
        if not force:
            raise RunFolderError(
                f"{str(run_dir)!r} already holds a run; pass --resume to continue it or --force to start over"
            )
        return RunFolder(run_dir, resuming=False, replace=True)
    return RunFolder(run_dir, resuming=False, replace=False)


def _last_logged_update(run_dir: Path) -> int:
    """The last update that ``metrics.csv`` logs (0: none, or no file), after reading it and ``eval.csv``
    whole: a RunFolderError names a log that does not read (a resume keeps their rows)."""
    import csv

    last = {}
    for name in ("metrics.csv", "eval.csv"):
        last[name] = 0
        path = run_dir / name
        if not path.exists():
            continue
        try:
            with path.open(newline="", encoding="utf-8") as file:
                for number, row in enumerate(csv.DictReader(file), start=2):
                    if row.get("update") is None or not str(row["update"]).strip().isdigit():
                        raise ValueError(f"line {number}: update {row.get('update')!r} is not a count")
                    last[name] = max(last[name], int(row["update"]))
        except (OSError, UnicodeDecodeError, csv.Error, ValueError) as error:
            raise RunFolderError(
                f"cannot resume {str(run_dir)!r}: its {name} is damaged ({error}); put the good one back, or move "
                f"it away to resume without its rows"
            ) from None
    return last["metrics.csv"]


def write_config(run_dir: Path, config: TrainConfig) -> None:
    """``config.yaml``: the resolved config, written atomically."""
    import yaml

    text = "# The resolved config of this run (defaults and --set overrides applied).\n"
    text += yaml.safe_dump(config_to_dict(config), sort_keys=False)
    write_text_atomically(run_dir / CONFIG_NAME, text)
