"""Runs are checked against the data and the role they meet (issue 12, class 3), through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from reference.tiny import good_root

from tempbench.cli import main


@pytest.fixture()
def two_roots(tmp_path: Path) -> tuple[Path, Path]:
    a, b = good_root(tmp_path / "a"), good_root(tmp_path / "b")
    bench = b / "benchmark" / "benchmark_labelled.jsonl"
    bench.write_text(bench.read_text(encoding="utf-8").replace("?", " ?"), encoding="utf-8")  # same ids, other bytes
    return a, b


def test_scoring_a_run_on_other_data_is_refused_unless_forced(two_roots, tmp_path, capsys):
    a, b = two_roots
    run = tmp_path / "r.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(a), "--out", str(run), "--split", "all"]) == 0
    capsys.readouterr()
    assert main(["score", str(run), "--data", str(a)]) == 0
    capsys.readouterr()
    assert main(["score", str(run), "--data", str(b)]) == 2
    err = capsys.readouterr().err
    assert "was made on other data" in err and str(a / "benchmark") in err and str(b / "benchmark") in err
    assert main(["score", str(run), "--data", str(b), "--force"]) == 0
    assert "warning (--force)" in capsys.readouterr().err
    assert main(["compare", str(run), str(run), "--data", str(b)]) == 2
    assert main(["diff", str(run), str(run), "--data", str(b)]) == 2


def test_audit_runs_must_fill_their_role(two_roots, tmp_path, capsys):
    a, _ = two_roots
    runs = tmp_path / "runs"
    runs.mkdir()
    assert main(["run", "--config", "oracle", "--set", "k=5", "--data", str(a), "--out", str(runs / "oracle.jsonl")]) == 0
    capsys.readouterr()
    assert main(["audit", "--runs", str(runs), "--data", str(a), "--claim", "oracle."]) == 2
    err = capsys.readouterr().err
    assert "fills the role of 'oracle'" in err and "k=5" in err
    assert main(["audit", "--runs", str(runs), "--data", str(a), "--claim", "oracle.", "--force"]) == 0
    assert "warning:" in capsys.readouterr().err
