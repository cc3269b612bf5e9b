"""The built wheel installs only names that start with ``blackout``, next to anyone's own code.

The repository keeps its folders ``baselines/`` and ``training/``; the wheel installs them as
``blackout_baselines`` and ``blackout_training`` (pyproject ``package-dir``), so a user's own
``training`` package and OpenAI Baselines' ``baselines`` keep working beside us.

The wheel is built once per module, offline (``--no-build-isolation``: setuptools and wheel come
from the dev extra), from a copy of the sources so the checkout gets no ``build/`` folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


# What the build reads: the project file, the README (the long description) and the three packages.
BUILD_INPUTS = ["pyproject.toml", "README.md", "blackout_env", "baselines", "training"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in BUILD_INPUTS:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(REPO / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out), str(source)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    (built,) = out.glob("blackout_rl-*.whl")
    return built


def _top_level_names(wheel_path: Path) -> set[str]:
    names = set()
    with zipfile.ZipFile(wheel_path) as archive:
        for member in archive.namelist():
            first = member.split("/")[0]
            if first.endswith((".dist-info", ".data")):
                continue
            names.add(first.removesuffix(".py"))
    return names


def test_wheel_installs_only_names_that_start_with_blackout(wheel):
    names = _top_level_names(wheel)
    assert names == {"blackout_env", "blackout_baselines", "blackout_training"}
    with zipfile.ZipFile(wheel) as archive:
        top_level = archive.read(f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info/top_level.txt")
    assert set(top_level.decode().split()) == names


def test_wheel_holds_the_rules_presets_and_the_shipped_policy(wheel):
    with zipfile.ZipFile(wheel) as archive:
        members = set(archive.namelist())
    presets = {Path(name).name for name in (REPO / "blackout_env" / "game" / "presets").glob("*.yaml")}
    assert presets and {f"blackout_env/game/presets/{name}" for name in presets} <= members
    assert "blackout_training/agents/checkpoints/ppo_standard_4p.pt" in members  # ppo-standard
    assert "blackout_training/agents/checkpoints/ppo_generalist.pt" in members  # ppo
    assert "blackout_baselines/bid_model.json" in members  # ismcts:belief=bids
    assert "blackout_baselines/play_model.json" in members  # ismcts:belief=play
    configs = {path.name for path in (REPO / "training" / "configs").glob("*.yaml")}
    assert "default.yaml" in configs and {f"blackout_training/configs/{name}" for name in configs} <= members  # train --config NAME
    assert not any(name.startswith(("training/", "baselines/", "tests/", "configs/")) for name in members)


def test_wheel_holds_every_module_of_the_three_packages(wheel):
    """A subpackage left out of pyproject's package list would install without its modules."""
    with zipfile.ZipFile(wheel) as archive:
        members = set(archive.namelist())
    for folder, name in (("blackout_env", "blackout_env"), ("baselines", "blackout_baselines"), ("training", "blackout_training")):
        modules = {f"{name}/{path.relative_to(REPO / folder).as_posix()}" for path in (REPO / folder).rglob("*.py")}
        assert modules and not modules - members, sorted(modules - members)


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A fresh venv with the wheel; the dependencies come from this interpreter's site folders."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=60)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip())
    # Plain path lines: the folders' own .pth files (this checkout's editable install) stay inactive.
    dependency_dirs = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    dependency_dirs |= {p for p in sys.path if p.endswith("site-packages")}
    (site / "zz_dependencies.pth").write_text("\n".join(sorted(dependency_dirs)) + "\n")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", str(wheel)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return venv


def _run_beside_user_training(venv: Path, tmp_path: Path, command: list[str]) -> subprocess.CompletedProcess:
    user = tmp_path / "user_code"
    (user / "training").mkdir(parents=True, exist_ok=True)
    (user / "training" / "__init__.py").write_text('OWNER = "the user"\n')
    env = {**os.environ, "PYTHONPATH": str(user)}
    env.pop("PYTHONHOME", None)
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_installed_wheel_runs_blackout_beside_a_user_training_package(installed, tmp_path):
    blackout = installed / ("Scripts/blackout.exe" if os.name == "nt" else "bin/blackout")
    shown = _run_beside_user_training(installed, tmp_path, [str(blackout), "--help"])
    assert shown.returncode == 0, shown.stderr
    assert "rules" in shown.stdout and "train" in shown.stdout
    rules = _run_beside_user_training(installed, tmp_path, [str(blackout), "rules", "standard"])
    assert rules.returncode == 0 and "Players: 4" in rules.stdout, rules.stderr  # the presets ship in the wheel


def test_user_training_package_and_blackout_training_import_side_by_side(installed, tmp_path):
    python = installed / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    code = (
        "import training, blackout_training, blackout_baselines, blackout_env\n"
        "assert training.OWNER == 'the user', training.__file__\n"
        "for module in (blackout_training, blackout_baselines, blackout_env):\n"
        f"    assert module.__file__.startswith({str(installed)!r}), module.__file__\n"
        "print('ok')\n"
    )
    result = _run_beside_user_training(installed, tmp_path, [str(python), "-c", code])
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stdout + result.stderr


def test_the_datasets_extra_installs_what_writing_an_hdf5_dataset_needs():
    # blackout dataset writes Minari's HDF5 format, which needs h5py: minari[create] alone does not bring it.
    tomllib = pytest.importorskip("tomllib")
    from packaging.requirements import Requirement

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (minari,) = [Requirement(line) for line in extras["datasets"] if Requirement(line).name == "minari"]
    assert "hdf5" in minari.extras
