"""The library recipes of docs/libraries.md: each docs/examples/*.py runs as a user would run it, and the page shows them verbatim."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
PAGE = ROOT / "docs" / "libraries.md"
RECIPES = sorted(path.name for path in EXAMPLES.glob("*.py"))
NEEDS = {
    "sb3_maskable_ppo.py": ["sb3_contrib"],
    "tianshou_multiagent.py": ["tianshou", "torch"],
    "torchrl_pettingzoo.py": ["torchrl", "torch"],
}
"""Recipe -> the libraries it needs (installed by the dev extra; a missing one skips the recipe)."""
PRINTS = {
    "gymnasium_make_vec.py": "gymnasium make_vec vector_entry_point",
    "pettingzoo_parallel.py": "pettingzoo parallel: one match",
    "sb3_maskable_ppo.py": "sb3: MaskablePPO trained",
    "tianshou_multiagent.py": "tianshou: 300 steps",
    "torchrl_pettingzoo.py": "torchrl: check_env_specs passed",
}


def test_every_recipe_is_known() -> None:
    assert RECIPES == sorted(PRINTS), "a recipe without its expected output (or the reverse)"


@pytest.mark.slow
@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_runs(recipe: str) -> None:
    for module in NEEDS.get(recipe, []):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / recipe)], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert PRINTS[recipe] in result.stdout


def _page_blocks() -> dict[str, str]:
    """File name -> the code block that the page shows for it (after its no-run marker)."""
    text = PAGE.read_text(encoding="utf-8")
    pattern = r"<!-- no-run: docs/examples/(\S+\.py), run by tests/test_recipes.py -->\n```python\n(.*?)```"
    return {name: code for name, code in re.findall(pattern, text, flags=re.S)}


def test_the_docs_page_shows_every_recipe_verbatim() -> None:
    blocks = _page_blocks()
    assert sorted(blocks) == RECIPES
    for name, code in blocks.items():
        assert code == (EXAMPLES / name).read_text(encoding="utf-8"), f"docs/libraries.md differs from docs/examples/{name}"


@pytest.mark.slow
def test_the_seeded_tianshou_recipe_prints_the_same_twice() -> None:
    """Its DQN's exploration and the random opponents draw from numpy's global generator: seeded too."""
    for module in NEEDS["tianshou_multiagent.py"]:
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")
    runs = [subprocess.run([sys.executable, str(EXAMPLES / "tianshou_multiagent.py")], capture_output=True, text=True,
                           timeout=600, cwd=ROOT).stdout for _ in range(2)]
    assert runs[0] == runs[1] and PRINTS["tianshou_multiagent.py"] in runs[0]
