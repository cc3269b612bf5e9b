"""The README and the docs/ pages say only what is true today.

- Every ```python block runs as written, top to bottom, one namespace per page (in a scratch
  folder). A block after a line ``<!-- printed by the block above -->`` is what the python block
  above it prints. A block right after a line ``<!-- no-run: reason -->`` is left out (and only such a
  block: the reason is shown to the reader too).
- Every ``blackout ...`` command in a ```bash or ```console block is parsed by the real command
  line parser (``blackout_training.cli.build_parser``; a benchmark's options by that benchmark's
  own parser; a training config and its ``--set`` keys by the config loader), so each
  subcommand, flag and key shown exists.
- A ```console block shows commands after ``$ ``; when output lines follow a command, the command
  is run and its output compared line by line. A line ``...`` stands for any number of lines.
  After a line ``<!-- typed input -->``, the text after a prompt (``...): `` or ``[y/n] ``) in the
  shown output is what the reader typed: it is fed to the command's standard input (and echoed).
- Relative links between pages resolve, to a file and to a heading in it.
- No sentence of prose is written twice (the README summarises and links, the pages hold the text).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
README = REPO / "README.md"

# The reference pages this branch writes: each must exist and be linked from docs/index.md.
PAGES = [
    "index.md", "engine.md", "environments.md", "batched.md", "baselines.md",
    "evaluation.md", "ladder.md", "positions.md", "training.md", "play.md", "web.md", "benchmarks.md", "development.md", "generalist.md",
]
# Pages that other parts of the project add (speed, library recipes, ISMCTS, RLlib). The index
# and the README link them already; a link to one of these names is accepted while the page is
# absent from a checkout, and checked like any other link once it is there.
PAGES_ADDED_ELSEWHERE = ["performance.md", "libraries.md", "ismcts.md", "rllib.md"]


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def _page_id(page: Path) -> str:
    return str(page.relative_to(REPO))


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    skip_reason: str | None
    marker: str  # the line before the block, e.g. <!-- typed input -->

    @property
    def where(self) -> str:
        return f"{_page_id(self.page)}:{self.line}"


FENCE = re.compile(r"^```(\S*)\s*$")
NO_RUN = re.compile(r"^<!-- no-run: (.+\S) -->$")


def code_blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, index = [], 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        before = next((lines[k].strip() for k in range(index - 1, -1, -1) if lines[k].strip()), "")
        no_run = NO_RUN.match(before)
        end = index + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        assert end < len(lines), f"{_page_id(page)}:{index + 1}: code block never closed"
        blocks.append(Block(page, index + 1, opening.group(1), "\n".join(lines[index + 1:end]) + "\n",
                            no_run.group(1) if no_run else None, before))
        index = end + 1
    return blocks


def _blocks(lang: set[str]) -> list[Block]:
    return [block for page in _pages() for block in code_blocks(page) if block.lang in lang]


def _prose_lines(page: Path) -> list[str]:
    """Lines outside code blocks, tables, headings and HTML comments."""
    prose, inside = [], False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line) or line.rstrip() == "```":
            inside = not inside
            continue
        stripped = line.strip()
        if inside or not stripped or stripped.startswith(("|", "#", "<!--")):
            continue
        prose.append(stripped)
    return prose


# ---------------------------------------------------------------------------------------------
# the pages are there and linked


def test_every_reference_page_exists_and_the_index_links_them_all():
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    for name in PAGES + PAGES_ADDED_ELSEWHERE:
        if name != "index.md":
            assert f"]({name})" in index, f"docs/index.md does not link {name}"
    for name in PAGES:
        assert (DOCS / name).is_file(), f"docs/{name} is missing"
    for page in DOCS.glob("*.md"):
        assert page.name in PAGES + PAGES_ADDED_ELSEWHERE or f"]({page.name})" in index, (
            f"docs/{page.name} is not linked from docs/index.md"
        )


def test_readme_is_a_short_front_page_that_links_the_docs():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300, f"README.md has {len(text.splitlines())} lines; the reference goes to docs/"
    assert "](docs/index.md)" in text
    for marker in ("<!-- main-command -->", "<!-- test-command -->"):
        assert text.count(marker) == 1, f"README.md needs exactly one {marker}"


def test_ci_finds_the_readme_test_command():
    """.ci/run runs the line of the code block after <!-- test-command -->; it must be the install and pytest."""
    text = README.read_text(encoding="utf-8")
    marker_line = text[: text.index("<!-- test-command -->")].count("\n") + 1
    block = next(b for b in code_blocks(README) if b.line > marker_line)
    command = block.text.strip()
    assert "\n" not in command
    assert command == 'pip install torch==2.13.0 -e ".[dev,train,rllib,web,bench,datasets]" && python -m pytest -q'


def test_readme_installs_the_cpu_torch_from_pytorchs_index_outside_the_ci_command():
    """torch==2.13.0 from PyPI is the CUDA build; CI here has PyPI only, so the index stays out of CI's line."""
    install = [c for b in code_blocks(README) if b.lang == "bash" for c in _shell_commands(b)]
    assert "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in install
    assert not any("index-url" in c and "pytest" in c for c in install)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors, inside = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line) or line.rstrip() == "```":
            inside = not inside
        elif not inside and line.startswith("#"):
            anchors.add(_slug(line.lstrip("#")))
    return anchors


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


@pytest.mark.parametrize("page", _pages(), ids=_page_id)
def test_relative_links_resolve(page):
    text = "\n".join(_prose_lines(page) + [line for line in page.read_text().splitlines() if line.startswith("|")])
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.exists():
            assert resolved.parent == DOCS and resolved.name in PAGES_ADDED_ELSEWHERE, (
                f"{_page_id(page)}: link {target!r} points to nothing"
            )
            continue
        if anchor and resolved.suffix == ".md":
            assert anchor in _anchors(resolved), f"{_page_id(page)}: link {target!r}: no such heading"


def test_no_prose_is_written_twice():
    seen: dict[str, str] = {}
    for page in _pages():
        for line in _prose_lines(page):
            if len(line) < 60:
                continue
            assert line not in seen or seen[line] == _page_id(page), (
                f"written twice ({seen.get(line)} and {_page_id(page)}): {line!r}"
            )
            seen[line] = _page_id(page)


# ---------------------------------------------------------------------------------------------
# python blocks run


def _pages_with_python() -> list[Path]:
    return [page for page in _pages() if any(b.lang == "python" and not b.skip_reason for b in code_blocks(page))]


@pytest.mark.parametrize("page", _pages_with_python(), ids=_page_id)
def test_python_blocks_run(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples write results/ and runs/ here; configs/ is the checkout's
    (tmp_path / "configs").symlink_to(REPO / "configs", target_is_directory=True)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("MINARI_DATASETS_PATH", str(tmp_path / "minari"))  # docs/datasets.md: never the reader's root
    namespace: dict = {"__name__": "__docs__"}
    ran, printed = 0, None
    for block in code_blocks(page):
        if block.marker == PRINTED_ABOVE:
            assert printed is not None, f"{block.where}: no python block above to have printed it"
            assert _lines_match(block.text.splitlines(), printed.splitlines()), (
                f"{block.where}: the block above printed something else:\n{printed}"
            )
            continue
        if block.lang != "python" or block.skip_reason:
            continue
        captured = io.StringIO()
        try:
            with contextlib.redirect_stdout(captured):
                exec(compile(block.text, block.where, "exec"), namespace)  # noqa: S102 - the docs' own examples
        except Exception as error:  # noqa: BLE001 - report which block failed and why
            pytest.fail(f"{block.where}: the example fails: {type(error).__name__}: {error}")
        ran, printed = ran + 1, captured.getvalue()
    assert ran > 0


def test_python_blocks_left_out_still_compile():
    for block in _blocks({"python"}):
        if block.skip_reason:
            compile(block.text, block.where, "exec")


# ---------------------------------------------------------------------------------------------
# blackout commands parse


def _shell_commands(block: Block) -> list[str]:
    """The command lines of a bash/console block (continuations joined, comments dropped)."""
    lines = block.text.splitlines()
    if block.lang == "console":
        lines = [line[2:] for line in lines if line.startswith("$ ")]
    commands, pending = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        command = (pending + line).strip()
        pending = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def _blackout_invocations(command: str) -> list[list[str]]:
    """The argument lists of every ``blackout`` in a shell line (``a && blackout x | tail``)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    invocations, segment = [], []
    for token in [*tokens, ";"]:
        if token in ("&&", "||", "|", ";", "&"):
            if segment and segment[0] == "blackout":
                invocations.append(segment[1:])
            segment = []
        else:
            segment.append(token)
    return invocations


def _parse_blackout(argv: list[str]) -> str | None:
    """None when the real parser accepts ``blackout ARGV``, else its error message."""
    from blackout_training.cli import build_parser

    shown = io.StringIO()
    try:
        with contextlib.redirect_stdout(shown), contextlib.redirect_stderr(shown):
            args = build_parser().parse_args(argv)
            if args.command == "bench":
                bench = argparse.ArgumentParser(prog=f"blackout bench {args.name}")
                importlib.import_module(f"blackout_training.bench.{args.name.replace('-', '_')}").add_arguments(bench)
                bench.parse_args(args.options)
    except SystemExit as exit_:
        if exit_.code == 0 and ("--help" in argv or "-h" in argv):
            return None
        return shown.getvalue().strip() or f"exit {exit_.code}"
    if args.command == "train":  # the config and every --set key must load, as the command loads them
        from blackout_training.ppo.config import load_config

        try:
            config = args.config or "configs/train/default.yaml"
            in_checkout = REPO / config  # (as run from the checkout's root; else a shipped config's name)
            load_config(in_checkout if in_checkout.exists() else config, list(args.overrides))
        except ValueError as error:
            return str(error)
    return None


def _command_blocks() -> list[Block]:
    return [block for block in _blocks({"bash", "console", "sh", "shell"}) if not block.skip_reason]


def test_docs_show_blackout_commands():
    assert sum(len(_blackout_invocations(c)) for b in _command_blocks() for c in _shell_commands(b)) >= 30


@pytest.mark.parametrize("block", _command_blocks(), ids=lambda b: b.where)
def test_blackout_commands_parse(block):
    for command in _shell_commands(block):
        for argv in _blackout_invocations(command):
            problem = _parse_blackout(argv)
            assert problem is None, f"{block.where}: `blackout {shlex.join(argv)}` does not parse:\n{problem}"


def test_the_parse_check_refuses_a_flag_that_does_not_exist():
    assert _parse_blackout(["eval", "--policies", "random", "--no-such-flag"]) is not None
    assert _parse_blackout(["bench", "batched", "--no-such-flag"]) is not None
    assert _parse_blackout(["rules", "--list"]) is None
    assert "run.nam" in _parse_blackout(["train", "--config", "configs/train/tiny.yaml", "--set", "run.nam=x"])


# ---------------------------------------------------------------------------------------------
# shown output is what the command prints


@dataclass
class Shown:
    block: Block
    command: str
    expected: list[str]


def _shown_outputs() -> list[Shown]:
    shown = []
    for block in _blocks({"console"}):
        if block.skip_reason:
            continue
        command, expected = None, []
        for line in [*block.text.splitlines(), "$ "]:
            if line.startswith("$ ") or line == "$":
                if command and expected:
                    shown.append(Shown(block, command, expected))
                command, expected = line[2:].strip(), []
            elif command:
                expected.append(line)
    return shown


TYPED_INPUT = "<!-- typed input -->"
PRINTED_ABOVE = "<!-- printed by the block above -->"
PROMPT = re.compile(r"^(?P<prompt>.*(?:\): |\[y/n\] ))(?P<typed>\S.*)$")


def _trimmed(lines: list[str]) -> list[str]:
    lines = [line.rstrip() for line in lines]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _lines_match(expected: list[str], actual: list[str]) -> bool:
    """Line by line, where an expected line "..." stands for any number of actual lines.

    Trailing spaces and trailing blank lines do not count."""
    expected, actual = _trimmed(expected), _trimmed(actual)
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(expected):
                result = j == len(actual)
            elif expected[i].strip() == "...":
                result = match(i + 1, j) or (j < len(actual) and match(i, j + 1))
            else:
                result = j < len(actual) and expected[i].rstrip() == actual[j].rstrip() and match(i + 1, j + 1)
            memo[i, j] = result
        return memo[i, j]

    return match(0, 0)


def test_elision_matches_any_number_of_lines_and_nothing_else():
    assert _lines_match(["a", "...", "d"], ["a", "b", "c", "d"])
    assert _lines_match(["a", "...", "b"], ["a", "b"])
    assert not _lines_match(["a", "...", "d"], ["a", "b", "c"])
    assert not _lines_match(["a", "b"], ["a", "b", "c"])


@pytest.mark.parametrize("shown", _shown_outputs(), ids=lambda s: f"{s.block.where}:{s.command[:40]}")
def test_shown_output_is_what_the_command_prints(shown, tmp_path):
    typed = []
    if shown.block.marker == TYPED_INPUT:
        typed = [m.group("typed") for m in map(PROMPT.match, shown.expected) if m]
        assert typed, f"{shown.block.where}: typed input announced but no prompt shown"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_DATA_HOME": str(tmp_path),  # `blackout play` saves here, never in the reader's home
        "PYTHONIOENCODING": "utf-8",
        "LC_ALL": "C.UTF-8",
        "COLUMNS": "100",
    }
    result = subprocess.run(
        ["bash", "-c", shown.command], cwd=REPO, env=env, input="".join(t + "\n" for t in typed),
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 0, f"{shown.block.where}: `{shown.command}` failed:\n{result.stderr}"
    output = result.stdout  # `blackout play` echoes what it reads from a pipe, as a terminal would
    actual = output.splitlines()
    assert _lines_match(shown.expected, actual), (
        f"{shown.block.where}: `{shown.command}` printed something else:\n" + "\n".join(actual)
    )


def test_docs_compare_the_output_of_the_cheap_commands():
    commands = " ".join(s.command for s in _shown_outputs())
    for command in ("blackout rules standard", "blackout demo", "blackout play --rules short --humans 0 --seed 1"):
        assert command in commands, f"no page shows the output of `{command}`"


# ---------------------------------------------------------------------------------------------
# files named and the slow mark


REPO_PATH = re.compile(r"`((?:blackout_env|baselines|training|configs|tests|docs|\.ci)/[\w./-]*\w)`")


@pytest.mark.parametrize("page", _pages(), ids=_page_id)
def test_files_the_pages_name_exist(page):
    for name in REPO_PATH.findall(page.read_text(encoding="utf-8")):
        if "*" in name or re.search(r"[A-Z]{4}", name):  # a pattern or a placeholder (NAME)
            continue
        assert (REPO / name).exists(), f"{_page_id(page)} names `{name}`, which is not in the repository"


# docs/development.md: `pytest -m "not slow"` leaves out these longer checks (CI runs them too).
SLOW_TESTS = [
    ("tests/test_batched_differential.py", "test_random_rules_play_like_the_engine"),
    ("tests/test_batched_compiled.py", "test_the_compiled_engine_plays_every_preset_at_every_table_size_like_the_engine"),
    ("tests/test_train.py", "test_tiny_run_trains_checkpoints_resumes_and_evaluates"),
]


def _decorators(path: Path, function: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function)
    return [ast.unparse(decorator) for decorator in node.decorator_list]


@pytest.mark.parametrize("path, function", SLOW_TESTS)
def test_the_longer_checks_are_marked_slow(path, function):
    assert "pytest.mark.slow" in _decorators(REPO / path, function)
    assert 'pytest -q -m "not slow"' in (DOCS / "development.md").read_text(encoding="utf-8")
