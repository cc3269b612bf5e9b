"""Datasets for offline RL and imitation: one seat's matches as Minari datasets (docs/datasets.md).

- :func:`create_dataset` plays a policy's matches through the registered Gym env (or, batched,
  on the vector env) and writes them with ``minari``: ``minari.load_dataset(name)`` reads them and
  ``recover_environment()`` gives the env they were played in;
- :func:`dataset_from_log` turns a ``blackout eval --game-log`` file into a dataset of one seat's games;
- :func:`list_datasets`, :func:`dataset_metadata`, :func:`delete_dataset` manage the local root
  (``MINARI_DATASETS_PATH``, else ``~/.minari/datasets``);
- :mod:`blackout_training.datasets.cloning`: behaviour cloning with masks from a dataset.

Needs the ``datasets`` extra (``pip install "blackout-rl[datasets]"``: ``minari[create,hdf5]``).
"""

from .create import (
    ENV_ID,
    INFO_KEYS,
    TERMINAL_OBSERVATION,
    DatasetConfig,
    DatasetResult,
    create_dataset,
    episode_decks,
    episode_seed,
    play_episodes,
)
from .store import (
    ROOT_VARIABLE,
    DatasetSummary,
    Episode,
    dataset_metadata,
    datasets_root,
    delete_dataset,
    list_datasets,
    load_dataset,
)

__all__ = [
    "ENV_ID",
    "INFO_KEYS",
    "ROOT_VARIABLE",
    "TERMINAL_OBSERVATION",
    "DatasetConfig",
    "DatasetResult",
    "DatasetSummary",
    "Episode",
    "create_dataset",
    "dataset_metadata",
    "datasets_root",
    "delete_dataset",
    "episode_decks",
    "episode_seed",
    "list_datasets",
    "load_dataset",
    "play_episodes",
]
