"""Hostile but realistic input through the real CLI (issue 12, classes 4 and 5): exit 2, the user's path, nothing left."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from reference.tiny import good_root

from tempbench.cli import main


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return good_root(tmp_path / "data")


def _fails(argv: list[str], capsys, *expected: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and ".part" not in err, err
    for text in expected:
        assert text in err, err
    return err


def _bench_with(root: Path, **changes) -> Path:
    path = root / "benchmark" / "benchmark_labelled.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first.update(changes)
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_non_finite_t_query_is_an_error_naming_the_line(root, tmp_path, capsys):
    bench = root / "benchmark" / "benchmark_labelled.jsonl"
    bench.write_text(bench.read_text(encoding="utf-8").replace('"t_query": 1850.0', '"t_query": NaN', 1), encoding="utf-8")
    if "NaN" not in bench.read_text(encoding="utf-8"):
        _bench_with(root, t_query=float("nan"))
    _fails(["run", "--config", "oracle", "--data", str(root), "--out", str(tmp_path / "r.jsonl")], capsys,
           f"{bench}:1", "t_query")
    assert not (tmp_path / "r.jsonl").exists()


def test_a_fifo_and_dev_stdin_as_input(root, tmp_path, capsys):
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    _fails(["score", str(fifo), "--data", str(root)], capsys, str(fifo), "not a regular file")
    _fails(["score", "/dev/stdin", "--data", str(root)], capsys, "/dev/stdin")


@pytest.mark.parametrize("encoding", ["utf-16", "latin-1"])
def test_a_baseline_in_another_encoding(root, tmp_path, capsys, encoding):
    run = tmp_path / "r.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(root), "--out", str(run), "--split", "all"]) == 0
    capsys.readouterr()
    baseline = tmp_path / f"b-{encoding}.jsonl"
    baseline.write_bytes('{"id": "q1", "evidence": ["Ådä | x | y | 1850"]}\n'.encode(encoding))
    _fails(["diff", str(run), str(baseline), "--data", str(root)], capsys, str(baseline))
    table = tmp_path / f"t-{encoding}.csv"
    table.write_bytes("metric,slice,value\nTRP,all,0.2\nCCR,Zürich,0.1\n".encode(encoding))
    _fails(["diff", str(run), str(table), "--data", str(root)], capsys, str(table), "UTF-8")


def test_a_paper_numbers_file_that_is_not_utf8(root, tmp_path, capsys):
    bad = tmp_path / "numbers.toml"
    bad.write_bytes('title = "Zürich"\n'.encode("latin-1"))
    _fails(["audit", "--data", str(root), "--paper-numbers", str(bad)], capsys, str(bad))


def test_an_unencodable_label_is_exit_2_and_nothing_half_written(root, tmp_path, capsys):
    labels = root / "labels.tsv"
    labels.unlink()
    (root / "labels.json").write_text('{"Q1": "Ada \\ud800 Lovelace"}', encoding="utf-8")  # a lone surrogate escape
    out = tmp_path / "labels-out.tsv"
    err = _fails(["labels", "--data", str(root), "--merge", "--out", str(out)], capsys)
    assert str(out) in err or "labels" in err
    assert not out.exists() and not list(tmp_path.glob(".labels-out.tsv.*"))
