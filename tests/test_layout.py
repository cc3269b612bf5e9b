"""The training package's parts import one way: agents, evaluation, the trainers, then the tools.

Every import counts, a lazy one inside a function included: a back-edge is a back-edge when it runs.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TRAINING = REPO / "training"

ALLOWED = {
    "cpu": {"cpu"},
    "agents": {"agents"},
    "evaluation": {"agents", "evaluation"},
    "datasets": {"agents", "evaluation", "datasets"},
    "ppo": {"cpu", "agents", "evaluation", "datasets", "ppo"},
    "expert": {"cpu", "agents", "evaluation", "ppo", "expert"},
    "rllib": {"cpu", "agents", "evaluation", "ppo", "rllib"},
    "play": {"agents", "evaluation", "play"},
    "web": {"agents", "evaluation", "play", "web"},
    "bench": {"cpu", "agents", "evaluation", "datasets", "ppo", "expert", "rllib", "play", "web", "bench"},
    "cli": {"cpu", "agents", "evaluation", "datasets", "ppo", "expert", "rllib", "play", "web", "bench", "cli"},
}
"""Each part of ``blackout_training`` and the parts it may import (its own included)."""
for _part_name in ALLOWED:
    ALLOWED[_part_name].add("cpu")  # the free cores (blackout_training.cpu) are below every part


def _part(path: Path) -> str:
    relative = path.relative_to(TRAINING)
    return relative.parts[0] if len(relative.parts) > 1 else relative.stem


def _imported_parts(path: Path) -> set[str]:
    """The parts of ``blackout_training`` that one module imports, anywhere in it."""
    package = ["blackout_training", *path.relative_to(TRAINING).parent.parts]
    parts = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = [*base, *(node.module.split(".") if node.module else [])]
                names = [[*target, alias.name] for alias in node.names] if len(target) == 1 else [target]
            else:
                names = [node.module.split(".")] if node.module else []
        elif isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
        else:
            continue
        parts.update(name[1] for name in names if name[0] == "blackout_training" and len(name) > 1)
    return parts


MODULES = sorted(path for path in TRAINING.rglob("*.py") if path.name != "__init__.py" or path.parent != TRAINING)


def test_every_part_has_its_place():
    assert {_part(path) for path in MODULES} == set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(TRAINING)))
def test_a_module_imports_only_the_parts_below_its_own(path):
    part = _part(path)
    assert _imported_parts(path) <= ALLOWED[part], f"{path.relative_to(REPO)} ({part}) imports beyond {sorted(ALLOWED[part])}"


def test_the_baselines_and_the_game_import_no_training():
    for folder in ("blackout_env", "baselines"):
        for path in (REPO / folder).rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    assert not node.module.startswith("blackout_training"), path
                elif isinstance(node, ast.Import):
                    assert not any(alias.name.startswith("blackout_training") for alias in node.names), path


def test_the_game_names_no_training_module():
    for path in (REPO / "blackout_env").rglob("*.py"):
        assert "blackout_training" not in path.read_text(encoding="utf-8"), path


def test_the_trained_agents_are_policy_names_through_the_entry_point_group():
    from blackout_env.agents.policies import LOADERS, policy_names

    assert {"ppo", "ppo-standard", "ppo+search", "ppo+rollout", "rllib"} <= set(policy_names())
    assert LOADERS["ppo"].target == "blackout_training.agents.policy_net:load_ppo_policy"
    assert LOADERS["ppo"].path_argument and LOADERS["rllib"].path_argument
    assert not LOADERS["ppo+search"].path_argument


def test_the_rllib_backend_shares_the_runs_parts_but_not_the_native_trainer():
    for path in (TRAINING / "rllib").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level and node.module:
                assert node.module != "ppo.trainer" and not (node.module == "ppo" and node.level == 2), path


def test_the_baselines_import_each_other_without_a_cycle():
    """Among the modules of ``blackout_baselines`` (lazy imports included), no module reaches itself again."""
    baselines = REPO / "baselines"
    edges: dict[str, set[str]] = {}
    for path in baselines.glob("*.py"):
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    targets.add(node.module.split(".")[0])
                else:
                    targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("blackout_baselines."):
                targets.add(node.module.split(".")[1])
        edges[path.stem] = targets - {path.stem}

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in edges.get(start, ()):
            if nxt == goal or (nxt not in seen and reaches(nxt, goal, seen | {nxt})):
                return True
        return False

    cycles = sorted(m for m in edges if m != "__init__" and reaches(m, m, {m}))
    assert not cycles, f"modules of blackout_baselines in an import cycle: {cycles}"
