"""Where datasets live, and how one is written: whole or not at all.

Datasets are Minari datasets in Minari's local root: ``MINARI_DATASETS_PATH`` when it
is set, else ``~/.minari/datasets`` (Minari's own rule, read at every call). A dataset
is written under a hidden staging folder inside the root (Minari lists no hidden
folder) and moved to its place only once complete, so an interrupted or failed
run leaves nothing that ``minari.load_dataset`` or ``blackout dataset list`` would find.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "ROOT_VARIABLE",
    "DatasetSummary",
    "Episode",
    "check_target",
    "dataset_metadata",
    "datasets_root",
    "delete_dataset",
    "list_datasets",
    "load_dataset",
    "read_episodes",
    "write_dataset",
]

ROOT_VARIABLE = "MINARI_DATASETS_PATH"
"""The environment variable naming Minari's local root."""
CHUNK_EPISODES = 256
"""Episodes handed to Minari at once (a large dataset is never held in memory whole)."""
_NAMESPACE_FILE = "namespace_metadata.json"


@dataclass
class Episode:
    """One seat's episode, as Minari stores it.

    ``observations`` has one row more than ``actions`` (the observation after the last
    action); every array of ``infos`` has that many rows too (the reset's info, then one
    per step). The episode ends by termination at its last step.
    """

    seed: int | None
    observations: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    infos: dict[str, np.ndarray]

    def __len__(self) -> int:
        return len(self.actions)

    def buffer(self) -> Any:
        """The episode as a ``minari.data_collector.EpisodeBuffer``."""
        from minari.data_collector import EpisodeBuffer

        steps = len(self.actions)
        terminations = np.zeros(steps, dtype=bool)
        terminations[-1] = True
        return EpisodeBuffer(
            seed=self.seed, observations=self.observations, actions=self.actions, rewards=self.rewards,
            terminations=terminations, truncations=np.zeros(steps, dtype=bool), infos=self.infos,
        )


def datasets_root() -> Path:
    """Minari's local root: ``MINARI_DATASETS_PATH``, else ``~/.minari/datasets``."""
    path = os.environ.get(ROOT_VARIABLE)
    return Path(path).expanduser() if path else Path.home() / ".minari" / "datasets"


def check_dataset_id(dataset_id: Any) -> str:
    """Refuse a name Minari cannot store: ``(namespace/)name-vVERSION``, e.g. ``blackout/standard/heuristic-v0``."""
    from minari.dataset.minari_dataset import parse_dataset_id

    if not isinstance(dataset_id, str):
        raise ValueError(f"dataset name: expected text such as 'blackout/standard/heuristic-v0', got {dataset_id!r}")
    try:
        parse_dataset_id(dataset_id)
    except (TypeError, ValueError):  # (Minari 0.5.4 raises TypeError for a name without a version)
        raise ValueError(
            f"dataset name {dataset_id!r}: a Minari name is (namespace/)name-vVERSION, "
            "e.g. 'blackout/standard/heuristic-v0'"
        ) from None
    if any(part.startswith(".") for part in dataset_id.split("/")):
        raise ValueError(f"dataset name {dataset_id!r}: no part of it may start with '.'")
    return dataset_id


def _is_dataset(path: Path) -> bool:
    return (path / "data" / "metadata.json").is_file()


def check_target(dataset_id: str, overwrite: bool = False) -> Path:
    """The folder a new dataset ``dataset_id`` will take, after refusing what would fail later.

    Raises ValueError when the name is malformed, when a dataset (or anything else) is there and
    ``overwrite`` is false, or when the root cannot be written; nothing is written.
    """
    check_dataset_id(dataset_id)
    root = _readable_root()
    target = root / dataset_id
    for parent in target.relative_to(root).parents:
        if parent != Path(".") and _is_dataset(root / parent):
            raise ValueError(
                f"dataset name {dataset_id!r} is inside the dataset {parent.as_posix()!r}, which would hide it "
                f"(and deleting that dataset would delete it): choose a name outside it"
            )
    if target.exists():
        if not overwrite:
            raise ValueError(
                f"dataset {dataset_id!r} already exists ({target}); pass --overwrite (overwrite=True) to replace it"
            )
        if not _is_dataset(target):
            raise ValueError(f"{target} exists and is not a Minari dataset: it is left alone (choose another name)")
    try:
        root.mkdir(parents=True, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(dir=root, prefix=".blackout-write-test-"))
    except OSError as error:
        raise ValueError(
            f"the Minari root {str(root)!r} is not a writable folder ({error.strerror or error}); "
            f"set {ROOT_VARIABLE} to one"
        ) from None
    return target


@contextlib.contextmanager
def _minari_root(path: Path) -> Iterator[None]:
    """Point Minari at ``path`` for the block (it reads the variable at every call)."""
    saved = os.environ.get(ROOT_VARIABLE)
    os.environ[ROOT_VARIABLE] = str(path)
    try:
        yield
    finally:
        if saved is None:
            del os.environ[ROOT_VARIABLE]
        else:
            os.environ[ROOT_VARIABLE] = saved


def _chunks(episodes: Iterable[Episode]) -> Iterator[list[Episode]]:
    chunk: list[Episode] = []
    for episode in episodes:
        chunk.append(episode)
        if len(chunk) == CHUNK_EPISODES:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def write_dataset(
    dataset_id: str,
    episodes: Iterable[Episode],
    env_spec: Any,
    metadata: Mapping[str, Any],
    description: str,
    algorithm_name: str,
    overwrite: bool = False,
) -> Path:
    """Write ``episodes`` as Minari dataset ``dataset_id`` whose environment is ``env_spec``; returns its folder.

    ``metadata`` goes into the dataset's metadata under the key ``"blackout"``. The episodes are
    consumed as they come (generated while writing) and the dataset appears complete or not at all:
    an error anywhere (in generating an episode too) leaves the root as it was, an existing dataset
    of that name included.
    """
    import minari

    target = check_target(dataset_id, overwrite)
    root = datasets_root()
    staging = Path(tempfile.mkdtemp(dir=root, prefix=".blackout-staging-"))
    try:
        with _minari_root(staging), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Minari's advice to name an author e-mail and a permalink
            dataset = None
            for chunk in _chunks(episodes):
                buffers = [episode.buffer() for episode in chunk]
                if dataset is None:
                    dataset = minari.create_dataset_from_buffers(
                        dataset_id, buffers, env=env_spec, algorithm_name=algorithm_name, author="Blackout RL",
                        code_permalink="https://github.com/blackout-rl/blackout-rl", description=description,
                        data_format="hdf5",
                    )
                else:
                    dataset.update_dataset_from_buffer(buffers)
            if dataset is None:
                raise ValueError("a dataset needs at least one episode")
            dataset.storage.update_metadata({"blackout": dict(metadata)})
        _install(staging, root, dataset_id, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _install(staging: Path, root: Path, dataset_id: str, target: Path) -> None:
    """Move the finished dataset from ``staging`` to ``target`` (replacing one there), namespaces included."""
    parts = dataset_id.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        namespace = Path(*parts[:depth])
        (root / namespace).mkdir(exist_ok=True)
        made = staging / namespace / _NAMESPACE_FILE
        if made.is_file() and not (root / namespace / _NAMESPACE_FILE).exists():
            shutil.copyfile(made, root / namespace / _NAMESPACE_FILE)
    if target.exists():
        os.replace(target, staging / ".replaced")  # removed with the staging folder
    os.replace(staging / dataset_id, target)


# ------------------------------------------------------------------ reading
@dataclass(frozen=True)
class DatasetSummary:
    """One dataset of the local root, as ``blackout dataset list`` shows it."""

    dataset_id: str
    episodes: int
    steps: int
    blackout: dict[str, Any]
    """The ``"blackout"`` metadata (empty for a dataset this package did not write)."""

    def line(self) -> str:
        """``blackout/standard/heuristic-v0  100 episodes  6,500 steps  policy heuristic, standard, gym``."""
        info = self.blackout
        what = ""
        if info:
            what = f"  policy {info.get('policy')}, {info.get('rules_name')}, {info.get('path')}"
        return f"{self.dataset_id}  {self.episodes:,} episodes  {self.steps:,} steps{what}"


def list_datasets() -> list[DatasetSummary]:
    """Every dataset in the local root (``MINARI_DATASETS_PATH`` respected), sorted by name."""
    import minari

    root = _readable_root()
    if not root.exists():
        return []  # (Minari would make the folder)
    with _minari_root(root), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a misconfigured folder is skipped, as Minari does
        found = minari.list_local_datasets()
    return [
        DatasetSummary(name, int(meta.get("total_episodes", 0)), int(meta.get("total_steps", 0)),
                       dict(meta.get("blackout") or {}))
        for name, meta in found.items()
    ]


def unlisted_datasets(listed: Iterable[str]) -> list[str]:
    """The folders of the local root that hold a dataset's ``data`` folder but are not among ``listed``
    (:func:`list_datasets` skips a dataset Minari cannot read: a damaged metadata or HDF5 file)."""
    root = datasets_root()
    if not root.is_dir():
        return []
    names = set(listed)
    found = []
    for data in sorted(root.rglob("data")):
        folder = data.parent.relative_to(root)
        if data.is_dir() and folder.parts and not any(part.startswith(".") for part in folder.parts) \
                and folder.as_posix() not in names:
            found.append(folder.as_posix())
    return found


def _readable_root() -> Path:
    """The local root, refused in one line when something other than a folder is there."""
    root = datasets_root()
    existing = next((path for path in (root, *root.parents) if path.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "" if existing == root else f" ({str(existing)!r} is a file)"
        raise ValueError(f"the Minari root {str(root)!r} is not a folder{where}; set {ROOT_VARIABLE} to one")
    return root


def _existing(dataset_id: str) -> Path:
    check_dataset_id(dataset_id)
    path = _readable_root() / dataset_id
    if not _is_dataset(path):
        names = ", ".join(summary.dataset_id for summary in list_datasets()) or "none"
        raise ValueError(f"no dataset {dataset_id!r} in {datasets_root()} (datasets there: {names})")
    return path


def load_dataset(dataset_id: str) -> Any:
    """The ``minari.MinariDataset`` named ``dataset_id`` in the local root; ValueError naming it when absent."""
    import minari

    _existing(dataset_id)
    try:
        with _minari_root(datasets_root()):
            return minari.load_dataset(dataset_id)
    except (OSError, KeyError, ValueError, TypeError) as error:  # h5py's unreadable file, a key Minari needs
        raise ValueError(f"dataset {dataset_id!r} cannot be read ({type(error).__name__}: {error})") from None


def read_episodes(dataset_id: str) -> Iterator[Any]:
    """The episodes of ``dataset_id`` one by one (Minari's ``EpisodeData``); ValueError naming it when they cannot be read."""
    dataset = load_dataset(dataset_id)
    try:
        yield from dataset.iterate_episodes()
    except (OSError, KeyError, ValueError, TypeError) as error:
        raise ValueError(f"dataset {dataset_id!r}: its episodes cannot be read ({type(error).__name__}: {error})") from None


def dataset_metadata(dataset_id: str) -> dict[str, Any]:
    """The stored metadata of ``dataset_id`` (Minari's keys, and this package's under ``"blackout"``)."""
    import json

    path = _existing(dataset_id) / "data" / "metadata.json"
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(f"dataset {dataset_id!r}: its metadata {str(path)!r} cannot be read ({error})") from None
    if not isinstance(metadata, dict):
        raise ValueError(f"dataset {dataset_id!r}: its metadata {str(path)!r} is not a JSON object")
    return metadata


def delete_dataset(dataset_id: str) -> Path:
    """Delete dataset ``dataset_id`` from the local root; returns the folder removed."""
    path = _existing(dataset_id)
    shutil.rmtree(path)
    return path
