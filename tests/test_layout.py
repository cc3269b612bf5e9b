"""The packages' parts import one way.

``blackout_env``: the reference game, then the compiled core and the agents' interface (each over the game
only), then the environments over all three. ``blackout_training``: agents, evaluation, the trainers, then
the tools. Every import counts, a lazy one inside a function included: a back-edge is a back-edge when it
runs. Only an import for type hints (under ``if TYPE_CHECKING:``), which never runs, is listed apart.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TRAINING = REPO / "training"

ALLOWED = {
    "cpu": {"cpu"},
    "files": {"files"},
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
    if _part_name != "cpu":
        ALLOWED[_part_name].add("files")  # and so are the files written whole (blackout_training.files)


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


GAME = REPO / "blackout_env"

GAME_ALLOWED = {
    "game": {"game"},
    "batched": {"game", "batched"},
    "agents": {"game", "agents"},
    "envs": {"game", "batched", "agents", "envs"},
}
"""Each subpackage of ``blackout_env`` and the subpackages it may import (its own included): the reference game
(``game``), the compiled core (``batched``), the agents' interface (``agents``), the environments (``envs``)."""
GAME_HELPERS = {"_checks"}
"""The private helpers at the top of ``blackout_env``: below every subpackage, importing none."""
GAME_TYPE_HINTS = {"agents": {"batched"}}
"""Imports for type hints only, beyond ``GAME_ALLOWED``: a seat that plays a batch is handed the batched engine."""


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imported_game_parts(path: Path) -> tuple[set[str], set[str]]:
    """The top-level names of ``blackout_env`` that one module imports: (when run, for type hints only)."""
    package = ["blackout_env", *path.relative_to(GAME).parent.parts]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    hinted = {id(inner) for node in ast.walk(tree) if _is_type_checking(node) for inner in ast.walk(node)}
    run, hints = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                target = [*package[: len(package) - node.level + 1], *(node.module.split(".") if node.module else [])]
            else:
                target = node.module.split(".") if node.module else []
            names = [[*target, alias.name] for alias in node.names] if target == ["blackout_env"] else [target]
        elif isinstance(node, ast.Import):
            names = [alias.name.split(".") for alias in node.names]
        else:
            continue
        found = {name[1] if len(name) > 1 else "blackout_env" for name in names if name[0] == "blackout_env"}
        (hints if id(node) in hinted else run).update(found)
    return run, hints


GAME_MODULES = sorted(path for path in GAME.rglob("*.py") if path.parent != GAME)


def test_every_module_of_the_game_is_in_a_subpackage_or_a_helper():
    top = {path.stem for path in GAME.glob("*.py")} | {path.name for path in GAME.iterdir() if path.is_dir()}
    assert top - {"__pycache__"} == {"__init__"} | GAME_HELPERS | set(GAME_ALLOWED)


@pytest.mark.parametrize("path", GAME_MODULES, ids=lambda path: str(path.relative_to(GAME)))
def test_a_module_of_the_game_imports_only_the_layers_below_its_own(path):
    part = path.relative_to(GAME).parts[0]
    run, hints = _imported_game_parts(path)
    allowed = GAME_ALLOWED[part] | GAME_HELPERS
    assert run <= allowed, f"{path.relative_to(REPO)} ({part}) imports {sorted(run - allowed)}"
    assert hints <= allowed | GAME_TYPE_HINTS.get(part, set()), f"{path.relative_to(REPO)} ({part}) hints {hints}"


def test_the_game_helpers_import_nothing_of_the_game():
    for name in GAME_HELPERS:
        assert _imported_game_parts(GAME / f"{name}.py") == (set(), set())


def test_the_game_imports_neither_the_baselines_nor_training_nor_torch():
    for path in GAME.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                modules = [node.module or ""] if not node.level else []
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            for module in modules:
                assert module.split(".")[0] not in {"blackout_baselines", "blackout_training", "torch"}, path


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

    assert {"ppo", "ppo-standard", "ppo+search", "ppo+search-deep", "ppo+rollout", "rllib"} <= set(policy_names())
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
