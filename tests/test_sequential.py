"""Honest game counts: the SPRT stops when the deals decide, errs as rarely as it says, and finds self-play at zero."""

from __future__ import annotations

import math

import numpy as np
import pytest
from blackout_training.cli import main
from blackout_training.evaluation.sequential import SPRT
from blackout_training.evaluation.tournament import evaluate


def test_the_log_likelihood_ratio_is_the_normal_one_with_the_sample_variance():
    # n = 3, mean 2, variance 1: 3 * (1 - 0) * (2 * 2 - 0 - 1) / (2 * 1)
    assert SPRT(0, 1).llr([1, 2, 3]) == pytest.approx(4.5)
    assert SPRT(0, 1).llr([1]) != SPRT(0, 1).llr([1])  # nan: one deal has no variance
    lower, upper = SPRT(0, 1).bounds
    assert lower == pytest.approx(math.log(0.05 / 0.95)) and upper == pytest.approx(-lower)


def test_equal_differences_decide_by_the_side_of_the_midpoint():
    assert SPRT(0, 1).decision([0.0] * 20) == "H0"
    assert SPRT(0, 1).decision([0.7] * 20) == "H1"
    assert SPRT(0, 1).decision([0.5] * 20) is None
    assert SPRT(0, 1).decision([0.0] * 19) is None  # not before min_deals


def test_the_sprt_errs_about_as_often_as_its_alpha_says():
    rng = np.random.default_rng(0)
    test = SPRT(0.0, 0.5)

    def run(mean: float) -> str | None:
        samples: list[float] = []
        for _ in range(2000):
            samples.append(rng.normal(mean, 2.0))
            decision = test.decision(samples)
            if decision is not None:
                return decision
        return None

    under_h0 = [run(0.0) for _ in range(200)]
    under_h1 = [run(0.5) for _ in range(200)]
    assert under_h0.count("H1") / 200 <= 0.10  # alpha 5%, with room for 200 runs and the estimated variance
    assert under_h1.count("H0") / 200 <= 0.10
    assert under_h0.count(None) == under_h1.count(None) == 0


@pytest.mark.parametrize("text", ["1,0", "0.5,0.5", "abc", "1", "0,nan"])
def test_bounds_that_are_not_low_then_high_are_refused(text):
    with pytest.raises(ValueError, match="sprt"):
        SPRT.parse(text)


def test_eval_refuses_bounds_in_the_wrong_order_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "results"
    assert main(["eval", "--policies", "heuristic", "random", "--sprt", "1,0", "--out", str(out), "--no-progress"]) == 2
    assert "LOW must be below HIGH" in capsys.readouterr().err
    assert not out.exists()


def test_a_clear_difference_stops_early_and_says_so():
    result = evaluate(["heuristic", "random"], "short", deals=300, seed=0, sprt=(0, 1))
    assert result.sprt["decision"] == "H1"
    assert result.deals == result.sprt["deals"] == len(result.per_deal["heuristic"]) < 300
    assert "accepted H1" in result.table()


def test_self_play_sits_at_zero_between_the_two_sides():
    # A policy against copies of itself: "at most about 0" against +1, "at least about 0" against -1.
    players = {"a": "random:seed=1", "b": "random:seed=2"}
    assert evaluate(players, "short", deals=400, seed=0, sprt=(0, 1)).sprt["decision"] == "H0"
    assert evaluate(players, "short", deals=400, seed=0, sprt=(-1, 0)).sprt["decision"] == "H1"


def test_the_stop_does_not_depend_on_the_number_of_workers():
    one = evaluate(["heuristic", "random"], "short", deals=100, seed=3, sprt="0,2")
    two = evaluate(["heuristic", "random"], "short", deals=100, seed=3, sprt="0,2", workers=2)
    assert one.deals == two.deals and one.per_deal == two.per_deal and one.sprt == two.sprt
