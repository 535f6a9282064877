"""A run is checked against what its ``.meta.json`` says it is for, by every command that computes on it.

One test per way a run made for other data, another split or other records
used to be computed on without a word: ``explain`` and ``show`` on other data,
a ``baselines/`` file of ``reproduce``, a ``.meta.json`` that is no JSON object,
the ``.meta.json`` of a gzipped run, a truncated run, a run of another split.
Each is exit 2 naming the file and what is wrong; ``--force`` proceeds with a
warning where a command has it. Through the CLI, as a user types it.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from reference.tiny import good_root

from tempbench.cli import main
from tempbench_core.errors import RunMismatchError
from tempbench_core.runfile import meta_path, write_meta

FORCE_WARNING = "warning (--force)"


@pytest.fixture()
def two_roots(tmp_path: Path) -> tuple[Path, Path]:
    """Two data roots with the same question ids and other benchmark bytes (as ``test_run_checks.two_roots``)."""
    a, b = good_root(tmp_path / "a"), good_root(tmp_path / "b")
    bench = b / "benchmark" / "benchmark_labelled.jsonl"
    bench.write_text(bench.read_text(encoding="utf-8").replace("?", " ?"), encoding="utf-8")
    return a, b


@pytest.fixture()
def run_a(two_roots, tmp_path, capsys) -> Path:
    """An oracle run of every question of root ``a``, with its ``.meta.json``."""
    a, _ = two_roots
    run = tmp_path / "r.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(a), "--out", str(run), "--split", "all"]) == 0
    capsys.readouterr()
    return run


@pytest.fixture(scope="module")
def test_run(small_sample, tmp_path_factory) -> Path:
    """An oracle run of the small sample's test split (300 questions), with its ``.meta.json``."""
    run = tmp_path_factory.mktemp("meta-checks") / "oracle.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(small_sample), "--out", str(run)]) == 0
    return run


def _refused(capsys, argv: list[str], *words: str) -> str:
    """Exit 2 with every word in the message and no traceback; the message."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, (word, err)
    return err


def _forced(capsys, argv: list[str]) -> str:
    """``--force`` proceeds (exit 0) with a warning; stderr."""
    code = main([*argv, "--force"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert FORCE_WARNING in err
    return err


def test_explain_and_show_refuse_a_run_of_other_data(two_roots, run_a, capsys):
    _, b = two_roots
    for argv in (["explain", str(run_a), "--data", str(b)], ["show", "q1", "--run", str(run_a), "--data", str(b)]):
        _refused(capsys, argv, str(run_a), "was made on other data", str(b / "benchmark"), "--force")
        _forced(capsys, argv)


def test_reproduce_refuses_a_baseline_of_other_data_before_the_work(two_roots, run_a, tmp_path, capsys):
    _, b = two_roots
    baselines = b / "baselines"
    baselines.mkdir()
    shutil.copy(run_a, baselines / "oracle.jsonl")
    shutil.copy(meta_path(run_a), baselines / "oracle.meta.json")
    out = tmp_path / "out"
    argv = ["reproduce", "--data", str(b), "--out", str(out), "--workers", "1", "--boot", "10"]
    _refused(capsys, argv, str(baselines / "oracle.jsonl"), "was made on other data", "take the file out of baselines/")
    assert not (out / "runs").exists()  # refused before anything was run
    # the published form (no .meta.json) is diffed as before
    (baselines / "oracle.meta.json").unlink()
    assert main(argv) == 0
    assert "baselines/oracle.jsonl vs oracle: exact match 1 of 1" in capsys.readouterr().err


@pytest.mark.parametrize(("content", "problem"), [
    ("{not json", "is not valid JSON"),
    ("", "is an empty file"),
    ("[1, 2]", "is a JSON array, not an object"),
    ("{}", "is an empty object"),
])
def test_a_meta_json_that_is_no_object_is_an_error(two_roots, run_a, capsys, content, problem):
    a, _ = two_roots
    meta = meta_path(run_a)
    meta.write_text(content, encoding="utf-8")
    for argv in (["score", str(run_a), "--data", str(a)], ["explain", str(run_a), "--data", str(a), "--config", "oracle"],
                 ["diff", str(run_a), str(run_a), "--data", str(a)]):
        _refused(capsys, argv, str(meta), problem, "expected a JSON object as `tempbench run` writes it",
                 "fix the file or delete it")
    # not a mismatch to proceed through: nothing can be checked against it
    _refused(capsys, ["score", str(run_a), "--data", str(a), "--force"], str(meta), problem)
    meta.unlink()  # no .meta.json at all: nothing to check, as before
    assert main(["score", str(run_a), "--data", str(a)]) == 0


def test_the_meta_json_of_a_gzipped_run_is_found(two_roots, run_a, tmp_path, capsys):
    a, b = two_roots
    assert meta_path(tmp_path / "r.jsonl") == tmp_path / "r.meta.json"  # what `run` writes is unchanged
    assert write_meta(tmp_path / "w.jsonl", {"split": "all"}) == tmp_path / "w.meta.json"
    folder = tmp_path / "gz"
    folder.mkdir()
    for name in ("r.jsonl.gz", "r.json.gz"):
        packed = folder / name
        packed.write_bytes(gzip.compress(run_a.read_bytes()))
        shutil.copy(meta_path(run_a), folder / "r.meta.json")
        assert meta_path(packed) == folder / "r.meta.json"
        argv = ["score", str(packed), "--data", str(b)]
        _refused(capsys, argv, str(packed), "was made on other data", "--force")
        _forced(capsys, argv)
        assert main(["score", str(packed), "--data", str(a)]) == 0
        capsys.readouterr()
        packed.unlink()


def test_a_truncated_run_is_refused(test_run, small_sample, tmp_path, capsys):
    cut = tmp_path / "oracle.jsonl"
    cut.write_bytes(b"".join(test_run.read_bytes().splitlines(keepends=True)[:100]))  # head -100
    shutil.copy(meta_path(test_run), meta_path(cut))
    trec = tmp_path / "trec"
    trec.mkdir()
    data = ["--data", str(small_sample)]
    for argv in (["score", str(cut), *data], ["compare", str(cut), str(test_run), "--split", "test", *data],
                 ["export-trec", str(cut), "--out", str(trec), *data], ["diff", str(cut), str(test_run), *data],
                 ["explain", str(cut), *data], ["show", "q01200", "--run", str(cut), *data]):
        _refused(capsys, argv, f"{cut} has 100 records, its oracle.meta.json says 300", "truncated or edited?",
                 "--force")
    err = _forced(capsys, ["score", str(cut), *data, "--boot", "10"])
    assert "has 100 records" in err
    assert main(["score", str(test_run), *data, "--boot", "10"]) == 0  # the whole run is fine


def test_a_run_of_another_split_is_refused(test_run, small_sample, tmp_path, capsys):
    data = ["--data", str(small_sample)]
    trec = tmp_path / "trec"
    trec.mkdir()
    for argv in (["score", str(test_run), "--split", "dev", *data],
                 ["compare", str(test_run), str(test_run), "--split", "dev", *data],
                 ["export-trec", str(test_run), "--split", "dev", "--out", str(trec), *data]):
        _refused(capsys, argv, f"{test_run} was made on the 'test' split", "not on --split dev", "--force")
    _forced(capsys, ["score", str(test_run), "--split", "dev", "--boot", "10", *data])
    assert main(["score", str(test_run), "--split", "test", "--boot", "10", *data]) == 0  # its own split
    # without a .meta.json: refused when none of its questions is of the split
    bare = tmp_path / "bare.jsonl"
    shutil.copy(test_run, bare)
    _refused(capsys, ["score", str(bare), "--split", "dev", *data], f"none of the 300 questions of {bare}",
             "--split dev", "--force")
    assert main(["score", str(bare), "--split", "test", "--boot", "10", *data]) == 0
    # audit --runs DIR --split test with a dev run in DIR
    runs = tmp_path / "runs"
    runs.mkdir()
    dev = runs / "oracle.jsonl"
    assert main(["run", "--config", "oracle", "--split", "dev", "--out", str(dev), *data]) == 0
    capsys.readouterr()
    argv = ["audit", "--runs", str(runs), "--split", "test", "--claim", "oracle.", *data]
    _refused(capsys, argv, f"{dev} was made on the 'dev' split", "not on --split test", "--force")
    _forced(capsys, argv)


def test_a_run_of_the_size_its_meta_records_is_not_counted_again(test_run, tmp_path, monkeypatch):
    """``tempbench run`` records the run file's size: a file of that size is taken from one stat; any other size
    (a line cut, a line added, an edit) is counted, and refused when its records differ."""
    from tempbench_core import runchecks

    meta = json.loads(meta_path(test_run).read_text(encoding="utf-8"))
    assert meta["run_bytes"] == test_run.stat().st_size
    counted = []
    monkeypatch.setattr(runchecks, "count_records", lambda path: counted.append(path) or 0)
    assert runchecks.check_run_count(test_run) == [] and counted == []
    grown = tmp_path / "oracle.jsonl"
    grown.write_bytes(test_run.read_bytes() + b"\n")  # one byte more: counted (and here refused, as counted is 0)
    shutil.copy(meta_path(test_run), meta_path(grown))
    monkeypatch.setattr(runchecks, "exact_count", lambda path: 0)
    with pytest.raises(RunMismatchError):
        runchecks.check_run_count(grown)
    assert counted == [grown]
