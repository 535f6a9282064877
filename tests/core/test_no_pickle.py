"""No pickle anywhere: a cache or input file must never be able to run code."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = [
    re.compile(r"^\s*(import|from)\s+(c?pickle|dill|joblib|shelve)\b", re.M),
    re.compile(r"allow_pickle\s*=\s*True"),
    re.compile(r"\.to_pickle\(|read_pickle\("),
]


def source_files() -> list[Path]:
    files = []
    for folder in ("retriever", "eval", "scripts"):
        files.extend(sorted((ROOT / folder).rglob("*.py")))
    return files


def test_no_pickle_in_project_sources() -> None:
    offenders = []
    for path in source_files():
        text = path.read_text(encoding="utf-8")
        for pattern in FORBIDDEN:
            if pattern.search(text):
                offenders.append(f"{path.relative_to(ROOT)}: {pattern.pattern}")
    assert not offenders, offenders


def test_every_np_load_refuses_pickles() -> None:
    offenders = []
    for path in source_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "np.load(" in line and "allow_pickle=False" not in line:
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert not offenders, offenders
