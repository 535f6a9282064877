"""The commands' benchmark loading: flags are read only by the commands that use them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tempbench.cli import build_parser
from tempbench.commands._scoring import load_inputs
from tempbench_core.errors import InputError, MissingDataError


def _args(data: Path, *extra: str):
    return build_parser("repro").parse_args(["repro", "a", "b", "--data", str(data), *extra])


def test_flags_not_read_where_they_are_not_used(small_sample: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(small_sample / "benchmark", data / "benchmark")
    (data / "benchmark" / "functional_negatives.jsonl").write_text('{"id": "q1"}\n', encoding="utf-8")
    questions, flags, flags_path = load_inputs(_args(data), read_flags=False)
    assert questions and flags is None and flags_path is None
    with pytest.raises(InputError, match="functional_negatives.jsonl:1"):
        load_inputs(_args(data))  # read, it is refused


def test_a_flags_file_named_must_exist_even_unread(small_sample: Path, tmp_path: Path) -> None:
    with pytest.raises(MissingDataError, match="flags file not found"):
        load_inputs(_args(small_sample, "--flags", str(tmp_path / "missing.jsonl")), read_flags=False)
