"""Honest game counts: a sequential probability ratio test that stops a match as soon as the deals decide.

SPRT
----
``SPRT(low, high)`` tests, on the per-deal differences ``x_i`` of an agent's score per
hand minus its opponents' (duplicate deals: each ``x_i`` averages every rotation of
deal ``i``), the hypothesis H0 "the mean difference is ``low``" against H1 "it is
``high``" (points per hand). After each deal the log-likelihood ratio of the two, for
normal samples with the variance estimated from the deals so far (the GSPRT that
fishtest uses for chess engines),

    LLR = n (high - low) (2 mean(x) - low - high) / (2 var(x)),

is compared with Wald's bounds ``log(beta / (1 - alpha))`` and ``log((1 - beta) / alpha)``
(``-2.94`` and ``+2.94`` at the default 5% error rates): at or below the lower bound the
test accepts H0 (the difference is at most about ``low``), at or above the upper one H1
(at least about ``high``); in between it plays on, up to the tournament's deal count.
No decision is taken before ``min_deals`` deals (20): with the variance estimated from
fewer, the test errs more often than ``alpha`` says (docs/evaluation.md has the simulation). When every difference so far is the same number (a deterministic
agent against a copy of itself gives 0 on every deal) the variance is zero and the
side of the midpoint ``(low + high) / 2`` decides.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["SPRT"]


@dataclass(frozen=True)
class SPRT:
    """A sequential test of H0 "difference = low" against H1 "difference = high" (points per hand)."""

    low: float
    high: float
    alpha: float = 0.05
    """The chance of accepting H1 when H0 holds."""
    beta: float = 0.05
    """The chance of accepting H0 when H1 holds."""
    min_deals: int = 20

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"sprt: {name} must be a finite number of points per hand, got {value!r}")
        if not self.low < self.high:
            raise ValueError(f"sprt: LOW must be below HIGH, got LOW {self.low} and HIGH {self.high}")
        for name in ("alpha", "beta"):
            value = getattr(self, name)
            if not 0 < value < 0.5:
                raise ValueError(f"sprt: {name} must be between 0 and 0.5, got {value!r}")
        if isinstance(self.min_deals, bool) or not isinstance(self.min_deals, int) or self.min_deals < 2:
            raise ValueError(f"sprt: min_deals must be an integer of at least 2, got {self.min_deals!r}")

    @classmethod
    def parse(cls, text: str) -> SPRT:
        """``"LOW,HIGH"`` (as ``--sprt`` takes it), e.g. ``"0,0.5"``."""
        parts = str(text).split(",")
        if len(parts) != 2:
            raise ValueError(f"--sprt: expected LOW,HIGH in points per hand (such as 0,0.5), got {text!r}")
        try:
            low, high = (float(part) for part in parts)
        except ValueError:
            raise ValueError(f"--sprt: expected two numbers LOW,HIGH (such as 0,0.5), got {text!r}") from None
        return cls(low, high)

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's bounds on the log-likelihood ratio: (accept H0 at or below, accept H1 at or above)."""
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, differences: Sequence[float] | np.ndarray) -> float:
        """The log-likelihood ratio of H1 against H0 after these per-deal differences (nan with fewer than two)."""
        x = np.asarray(differences, dtype=float)
        if len(x) < 2:
            return math.nan
        side = 2 * x.mean() - self.low - self.high
        variance = x.var(ddof=1)
        if variance == 0:
            return 0.0 if side == 0 else math.copysign(math.inf, side)
        return float(len(x) * (self.high - self.low) * side / (2 * variance))

    def decision(self, differences: Sequence[float] | np.ndarray) -> str | None:
        """"H1", "H0", or None (play on) after these per-deal differences."""
        if len(differences) < self.min_deals:
            return None
        llr = self.llr(differences)
        lower, upper = self.bounds
        if llr >= upper:
            return "H1"
        if llr <= lower:
            return "H0"
        return None

    def report(self, differences: Sequence[float] | np.ndarray, agent: str, field: str) -> dict[str, Any]:
        """The test's outcome as plain data: the hypotheses, the decision, the deals used and the final LLR."""
        llr = self.llr(differences)
        return {
            "agent": agent, "field": field, "low": self.low, "high": self.high, "alpha": self.alpha, "beta": self.beta,
            "decision": self.decision(differences), "deals": len(differences),
            # strict JSON has no infinity: an infinite ratio (every difference equal) is written as null
            "llr": llr if math.isfinite(llr) else None,
            "bounds": list(self.bounds),
        }

    def describe(self, report: dict[str, Any]) -> str:
        """One line for a table: what the test decided, after how many deals."""
        what = f"SPRT {report['agent']} - {report['field']}: H0 {self.low:+g} against H1 {self.high:+g} per hand"
        decided = {
            "H1": f"accepted H1 (the difference is at least about {self.high:+g})",
            "H0": f"accepted H0 (the difference is at most about {self.low:+g})",
            None: "undecided",
        }[report["decision"]]
        llr = report["llr"]
        llr_text = "infinite: every difference equal" if llr is None and report["deals"] > 1 else (
            "n/a" if llr is None else f"{llr:+.2f}")
        lower, upper = self.bounds
        return f"{what}: {decided} after {report['deals']} deals (LLR {llr_text}, bounds {lower:+.2f} / {upper:+.2f})"
