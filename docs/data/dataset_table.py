"""The reference datasets' row of docs/datasets.md: what a dataset's seat scored and how often its bids were made.

    python docs/data/dataset_table.py blackout/standard/heuristic-v0 blackout/standard/ppo-v0 ...

Reads each dataset from the local Minari root (``MINARI_DATASETS_PATH``) and prints episodes, decisions,
the seat's score per hand (its rewards are the hand scores, once per hand) and the share of its bids made.
The bids are counted from the rewards, so only under scoring where a hand scores more than zero exactly
when its bid is made (no points per trick taken, nothing for a miss, a bonus for an exact bid): the
standard table's, as the docs' datasets are; other scoring is refused.
"""

from __future__ import annotations

import sys

import numpy as np


def summary(name: str) -> dict[str, float]:
    from blackout_training.datasets import dataset_metadata, load_dataset

    from blackout_env.game.rules import Rules

    rules = Rules.from_dict(dataset_metadata(name)["blackout"]["rules"])
    if rules.points_per_trick or rules.miss_points or rules.miss_points_per_trick or rules.exact_bonus <= 0:
        raise SystemExit(f"{name}: its scoring does not tell a made bid from the hand score alone")
    hands = made = 0
    total = 0.0
    episodes = decisions = 0
    for episode in load_dataset(name).iterate_episodes():
        rewards = np.asarray(episode.rewards, dtype=float)
        episodes, decisions = episodes + 1, decisions + len(episode.actions)
        hands += len(rules.hand_sizes)
        made += int((rewards > 0).sum())
        total += float(rewards.sum())
    return {"episodes": episodes, "decisions": decisions, "score_per_hand": total / hands, "bids_made": made / hands}


def main(names: list[str]) -> None:
    print(f"{'dataset':<40} {'episodes':>9} {'decisions':>10} {'score/hand':>11} {'bids made':>10}")
    for name in names:
        row = summary(name)
        print(f"{name:<40} {row['episodes']:>9,} {row['decisions']:>10,} {row['score_per_hand']:>11.2f} "
              f"{row['bids_made']:>10.1%}")


if __name__ == "__main__":
    main(sys.argv[1:])
