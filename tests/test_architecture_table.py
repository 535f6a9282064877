"""ARCHITECTURE.md's one-line-per-module table matches the tree, so that it cannot drift.

The section "One line per module" holds one table per folder: the folder is the
first code span of the table's ``###`` heading (``tempbench_core``,
``eval/report``, ...), and the first cell of each row names the folder's
modules as code spans (``kg.py``, or several: ``console.py``, ``progress.py``).
Every ``.py`` file of the four packages is listed exactly once, under its own
folder, and nothing is listed that does not exist.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("tempbench_core", "retriever", "eval", "tempbench")
SECTION = "## One line per module"
_CODE = re.compile(r"`([^`]+)`")


def parse_table(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """The entries ``(folder, name)`` of the section's tables, in order, and the section's problems.

    ``name`` is a code span of a row's first cell; a row before any folder
    heading, a heading without a code span or a row naming nothing is a
    problem.
    """
    start = text.index(SECTION) + len(SECTION)
    end = text.find("\n## ", start)
    section = text[start:] if end < 0 else text[start:end]
    entries: list[tuple[str, str]] = []
    problems: list[str] = []
    folder: str | None = None
    for line in section.splitlines():
        if line.startswith("### "):
            spans = _CODE.findall(line)
            folder = spans[0].strip("/") if spans else None
            if folder is None:
                problems.append(f"heading names no folder: {line!r}")
            continue
        if not line.startswith("|"):
            continue
        first = line.strip("|").split("|", 1)[0].strip()
        if first in ("module", "---") or set(first) <= {"-", ":"}:
            continue  # the header and separator rows
        names = _CODE.findall(first)
        if folder is None or not names:
            problems.append(f"row outside a folder's table or naming no module: {line[:80]!r}")
            continue
        rest = line.strip("|").split("|", 1)[1].strip() if "|" in line.strip("|") else ""
        if not rest:
            problems.append(f"row without a concept: {line[:80]!r}")
        entries.extend((folder, name) for name in names)
    return entries, problems


def tree_modules(root: Path = REPO) -> set[str]:
    """Every ``.py`` file of the packages, relative to the repository."""
    return {p.relative_to(root).as_posix() for pkg in PACKAGES for p in (root / pkg).rglob("*.py")
            if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def table() -> tuple[list[tuple[str, str]], list[str]]:
    return parse_table((REPO / "ARCHITECTURE.md").read_text(encoding="utf-8"))


def test_the_section_is_well_formed(table):
    entries, problems = table
    assert entries, f"no table found under {SECTION!r}"
    assert problems == []


def test_every_module_is_listed_once_and_only_modules_that_exist(table):
    entries, _ = table
    listed = Counter(f"{folder}/{name}" for folder, name in entries if name.endswith(".py"))
    modules = tree_modules()
    assert sorted(m for m, n in listed.items() if n > 1) == [], "listed more than once"
    assert sorted(modules - set(listed)) == [], "modules missing from ARCHITECTURE.md"
    assert sorted(set(listed) - modules) == [], "rows for modules that do not exist"


def test_other_entries_exist(table):
    """A row may name a data file or folder beside the modules (``relations.toml``, ``assets/``): it must exist."""
    entries, _ = table
    others = [f"{folder}/{name}" for folder, name in entries if not name.endswith(".py")]
    assert [o for o in others if "*" in o or not (REPO / o).exists()] == []


def test_the_parser_sees_a_missing_and_an_extra_module(tmp_path):
    """The comparison is not vacuous: a made-up tree differs from a made-up table both ways."""
    (tmp_path / "eval").mkdir()
    for name in ("a.py", "b.py"):
        (tmp_path / "eval" / name).write_text("")
    text = f"{SECTION}\n\n### `eval`\n| module | concept |\n|---|---|\n| `a.py`, `c.py` | two |\n\n## Next\n"
    entries, problems = parse_table(text)
    assert problems == []
    listed = {f"{f}/{n}" for f, n in entries}
    modules = {p for p in tree_modules(tmp_path)}
    assert modules - listed == {"eval/b.py"} and listed - modules == {"eval/c.py"}
