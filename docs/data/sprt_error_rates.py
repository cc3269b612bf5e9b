"""How often `--sprt` errs, by its minimum deal count: simulated deals with a known difference (docs/evaluation.md).

Each run draws per-deal differences from a normal law (sd 2 points per hand, about what
one deal of `blackout eval` gives between two close agents at whole standard matches)
until SPRT(0, 0.5) decides; under H0 the true difference is 0, under H1 it is 0.5.
Usage: python docs/data/sprt_error_rates.py [RUNS]
"""

from __future__ import annotations

import sys

import numpy as np
from blackout_training.evaluation.sequential import SPRT


def error_rates(min_deals: int, runs: int, seed: int = 0) -> tuple[float, float, float]:
    """(share of H0 runs accepting H1, share of H1 runs accepting H0, mean deals used) for one minimum."""
    rng = np.random.default_rng(seed)
    test = SPRT(0.0, 0.5, min_deals=min_deals)
    wrong = {0.0: 0, 0.5: 0}
    deals = []
    for mean, mistake in ((0.0, "H1"), (0.5, "H0")):
        for _ in range(runs):
            samples: list[float] = []
            decision = None
            while decision is None and len(samples) < 5000:
                samples.append(rng.normal(mean, 2.0))
                decision = test.decision(samples)
            wrong[mean] += decision == mistake
            deals.append(len(samples))
    return wrong[0.0] / runs, wrong[0.5] / runs, float(np.mean(deals))


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 400
    print(f"{'min deals':>9} {'false H1':>9} {'false H0':>9} {'mean deals':>11}   ({runs} runs each way, alpha = beta = 5%)")
    for min_deals in (10, 20, 30, 50):
        h1, h0, mean = error_rates(min_deals, runs)
        print(f"{min_deals:>9} {h1:>9.1%} {h0:>9.1%} {mean:>11.1f}")
