"""What a training run records: ``metrics.csv`` and ``eval.csv`` (append-only CSV) and ``learning_curve.png``.

``metrics.csv`` holds one row per PPO update (:data:`METRIC_FIELDS`: losses,
entropy, KL, clip fraction, explained variance, decisions per second, the
learner's hand score and bid-made rate); ``eval.csv`` one row per duplicate-deal
evaluation (:data:`EVAL_FIELDS`). A resumed run drops the rows after its
checkpoint's update, so the logs always match the weights. TensorBoard gets the
same figures (``tensorboard/``).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["EVAL_FIELDS", "METRIC_FIELDS", "CsvLog", "plot_learning_curve"]

METRIC_FIELDS = [
    "update", "global_step", "elapsed_s", "steps_per_s", "rollout_steps_per_s", "lr", "policy_loss", "value_loss", "entropy",
    "approx_kl", "clip_fraction", "explained_variance", "hands", "hand_score", "bid_made_rate",
]  # fmt: skip
EVAL_FIELDS = [
    "update", "global_step", "final", "rules", "opponent", "deals", "agent_score", "agent_ci", "opponent_score",
    "difference", "difference_ci", "agent_bid_made_rate",
]  # fmt: skip


RUN_DIVERGED = ("the run's checkpoints were left at their last save: start over with a smaller ppo.lr (--force), "
                "or --resume from it")
"""The advice of a training run stopped by non-finite weights (``check_not_diverged``)."""


class CsvLog:
    """An append-only CSV file; on resume, rows after the checkpoint's update are dropped."""

    def __init__(self, path: Path, fields: list[str], keep_through_update: int | None) -> None:
        self.path, self.fields = path, fields
        rows: list[dict[str, str]] = []
        if keep_through_update is not None and path.is_file():
            with path.open(newline="", encoding="utf-8") as file:
                # (the columns this version writes: a file of another version keeps its rows, not its other columns)
                rows = [{field: row.get(field) or "" for field in fields}
                        for row in csv.DictReader(file) if int(row["update"]) <= keep_through_update]
        self._write(rows)

    def _write(self, rows: list[dict[str, str]]) -> None:
        with self.path.open("w", newline="", encoding="utf-8") as file:
            writer = csv.DictWriter(file, fieldnames=self.fields)
            writer.writeheader()
            writer.writerows(rows)
        self.rows = rows

    def drop_final(self) -> None:
        """Remove the final rows (``final`` 1) of an earlier end of the run: a resumed run's new final evaluation
        replaces them (called just before it is recorded)."""
        if any(row.get("final") == "1" for row in self.rows):
            self._write([row for row in self.rows if row.get("final") != "1"])

    def append(self, row: dict[str, Any]) -> None:
        with self.path.open("a", newline="", encoding="utf-8") as file:
            csv.DictWriter(file, fieldnames=self.fields).writerow(row)
        self.rows.append({k: str(v) for k, v in row.items()})


def plot_learning_curve(rows: list[dict[str, str]], path: Path, opponent: str) -> None:
    """Score per hand of the agent and of the opponent bots over training, with 95% intervals (per rules)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def column(selected: list[dict[str, str]], key: str) -> np.ndarray:
        return np.array([float(r[key]) for r in selected])

    fig, ax = plt.subplots(figsize=(7, 4))
    tables = list(dict.fromkeys(r.get("rules", "") for r in rows))  # one curve per evaluated rules
    for k, table in enumerate(tables):
        mine = [r for r in rows if r.get("rules", "") == table]
        periodic = [r for r in mine if r.get("final") != "1"]
        final = [r for r in mine if r.get("final") == "1"]
        where = f" ({table})" if len(tables) > 1 else ""
        agent_color, opponent_color = (f"C{k}", f"C{k}") if len(tables) > 1 else ("C0", "C1")
        steps, agent = column(periodic, "global_step"), column(periodic, "agent_score")
        agent_ci = column(periodic, "agent_ci")
        ax.plot(steps, agent, marker="o", color=agent_color, label=f"PPO agent{where}")
        ax.fill_between(steps, agent - agent_ci, agent + agent_ci, alpha=0.2, color=agent_color)
        ax.plot(steps, column(periodic, "opponent_score"), marker="s", linestyle="--" if where else "-",
                color=opponent_color, label=f"{opponent} (the other seats){where}")
        if final:
            ax.errorbar(column(final, "global_step"), column(final, "agent_score"), yerr=column(final, "agent_ci"),
                        fmt="*", markersize=12, color=agent_color, label=f"PPO agent, final evaluation{where}")
            ax.plot(column(final, "global_step"), column(final, "opponent_score"), "*", markersize=12,
                    color=opponent_color)
    ax.set_xlabel("training decisions")
    ax.set_ylabel("score per hand (duplicate deals)")
    ax.set_title(f"Learning curve: 1 agent vs {opponent} bots")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    temp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(temp, dpi=100)
    plt.close(fig)
    os.replace(temp, path)


def end_superseded(eval_log: CsvLog) -> None:
    """A resumed run trains past an earlier end: that end's final rows and ``final_eval.json`` (beside the log)
    no longer mark the run's end (the new end writes its own)."""
    eval_log.drop_final()
    (eval_log.path.parent / "final_eval.json").unlink(missing_ok=True)
