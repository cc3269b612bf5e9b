"""numba's disk cache of the compiled core: an edit of the core's source reaches every kernel that inlines it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import blackout_env

# One IS-MCTS playout (the kernel of baselines/_ismcts_kernels.py, which inlines the core's step from
# blackout_env/batched/_kernels.py) on a 5-card hand; prints the tricks taken and whether the kernel came
# from the disk cache.
PLAYOUT = """
import json, random
import blackout_env
from blackout_env import BlackoutGame, Rules
from blackout_baselines import _ismcts_kernels
from blackout_baselines.ismcts import SimState

game = BlackoutGame(Rules(num_players=3, hand_sizes=[5]), seed=0)
state = SimState.from_view(game.view(game.current_player), game.hands)
state.rollout(random.Random(0).random)
stats = _ismcts_kernels.playout.stats
print(json.dumps({"core": blackout_env.__file__, "tricks": sum(state.tricks_won),
                  "loaded": sum(stats.cache_hits.values()), "compiled": sum(stats.cache_misses.values())}))
"""


def _play_out(copy: Path, cache: Path) -> dict:
    """PLAYOUT in a fresh process that imports ``blackout_env`` from ``copy``, with numba's cache in ``cache``."""
    env = dict(os.environ, PYTHONPATH=str(copy), NUMBA_CACHE_DIR=str(cache))
    # run from the copy's folder: ``python -c`` puts the working directory first on the path
    done = subprocess.run(
        [sys.executable, "-c", PLAYOUT], cwd=copy, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, f"{path.name} no longer holds {old!r}: update this test's edit"
    path.write_text(text.replace(old, new))


@pytest.mark.slow
def test_an_edit_of_the_core_recompiles_the_playouts_that_inline_it(tmp_path):
    copy = tmp_path / "src"
    shutil.copytree(Path(blackout_env.__file__).parent, copy / "blackout_env", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "numba_cache"

    first = _play_out(copy, cache)
    assert first["core"].startswith(str(copy))  # the copy is the core the kernels inline
    assert (first["tricks"], first["loaded"], first["compiled"]) == (5, 0, 1)
    again = _play_out(copy, cache)
    assert (again["tricks"], again["loaded"], again["compiled"]) == (5, 1, 0)  # the cache serves an unchanged core

    # The core's copy counts two tricks for each trick taken: the playouts' file is unchanged, yet
    # their cached kernel must not be loaded with the old step.
    _edit(copy / "blackout_env" / "batched" / "_kernels.py", "tricks_won[g, winner] += 1", "tricks_won[g, winner] += 2")
    edited = _play_out(copy, cache)
    assert (edited["tricks"], edited["loaded"], edited["compiled"]) == (10, 0, 1)

    # rules_logic.playable_bits is compiled into the step too: any edit there recompiles the playouts.
    _edit(copy / "blackout_env" / "game" / "rules_logic.py", "def playable_bits(", "# edited\ndef playable_bits(")
    after_rules = _play_out(copy, cache)
    assert (after_rules["tricks"], after_rules["loaded"], after_rules["compiled"]) == (10, 0, 1)
