"""Fixtures shared by several test files."""

from __future__ import annotations

import pytest


@pytest.fixture
def diverging_adam(monkeypatch):
    """Every Adam step leaves NaN in its first parameter, as a too-large learning rate does."""
    torch = pytest.importorskip("torch")
    step = torch.optim.Adam.step

    def diverging(self, *args, **kwargs):
        result = step(self, *args, **kwargs)
        with torch.no_grad():
            self.param_groups[0]["params"][0].fill_(float("nan"))
        return result

    monkeypatch.setattr(torch.optim.Adam, "step", diverging)
