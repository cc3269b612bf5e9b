"""``blackout bench vector`` runs end to end at a tiny size (figures are not checked: no timed tests)."""

from __future__ import annotations

import json

from blackout_training.cli import main


def test_bench_vector_prints_and_saves_the_ratio_to_the_raw_engine(tmp_path, capsys) -> None:
    out = tmp_path / "vector.json"
    code = main(["bench", "vector", "--games", "8", "--seconds", "0.05", "--repeats", "1", "--json", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "learner decisions/s" in printed and "ratio" in printed and "load average" in printed
    row = json.loads(out.read_text())["rows"][0]
    assert row["games"] == 8
    assert row["ratio"] == row["vector_learner_decisions_per_second"] / row["raw_decisions_per_second"]
    # Each learner decision carries the opponents' moves up to its next turn.
    assert row["vector_engine_moves_per_second"] > row["vector_learner_decisions_per_second"]
