"""A full disk during ``tempbench run`` (issue 25): exit 2 naming the run file, nothing left behind.

The disk is made full by a file handle whose ``write`` raises ``ENOSPC`` once
it is asked to write to the chosen kind of file (a shard's records, a shard's
stats, the run file, its ``.meta.json``). ``os.fdopen`` is where every atomic
output (``tempbench_core.atomic``) gets its handle, and forked workers inherit
the patch, so the case is the same with several workers.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest
from reference.tiny import good_root

from retriever import (
    Retriever,
    RunSetup,
    finish_run,
    load_benchmark,
    load_config,
    load_index,
    retrieve_shard,
    run_to_file,
)
from tempbench.cli import main
from tempbench.data import resolve_data
from tempbench_core.errors import OutputError
from tempbench_core.schema import select_split

_FDOPEN = os.fdopen


class _FullDisk:
    """A file handle that fails its first ``write`` as a full disk would."""

    def __init__(self, handle):
        self._handle = handle

    def write(self, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self._handle, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._handle.__exit__(*exc)


def _fill_disk(monkeypatch, which) -> None:
    """Every atomic output whose temporary file's name satisfies ``which`` hits a full disk."""

    def fdopen(fd, *args, **kwargs):
        handle = _FDOPEN(fd, *args, **kwargs)
        name = os.readlink(f"/proc/self/fd/{fd}")
        return _FullDisk(handle) if which(name) else handle

    monkeypatch.setattr(os, "fdopen", fdopen)


#: Which write fails: a shard's records, a shard's stats, the run file, its metadata.
TARGETS = {
    "shard records": lambda name: ".parts/" in name and ".stats.json." not in name,
    "shard stats": lambda name: ".parts/" in name and ".stats.json." in name,
    "run file": lambda name: "/.r.jsonl." in name,
    "metadata": lambda name: "/.r.meta.json." in name,
}


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    # four questions (the corpus's one under four ids): with --shard-size 1, four shards for two workers
    root = good_root(tmp_path / "data")
    bench = root / "benchmark" / "benchmark_labelled.jsonl"
    line = bench.read_text(encoding="utf-8").strip()
    assert '"id": "q1"' in line
    bench.write_text("".join(line.replace('"id": "q1"', f'"id": "q{i}"') + "\n" for i in range(1, 5)), encoding="utf-8")
    return root


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to name an open file")
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("target", list(TARGETS))
def test_a_full_disk_names_the_run_file_and_leaves_nothing(data, tmp_path, capsys, monkeypatch, target, workers):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "mine.txt").write_text("the user's own file\n", encoding="utf-8")
    run = out_dir / "r.jsonl"
    _fill_disk(monkeypatch, TARGETS[target])
    code = main(["run", "--config", "oracle", "--data", str(data), "--out", str(run), "--split", "all",
                 "--shard-size", "1", "--workers", str(workers)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert f"error: cannot write {run}: No space left on device" in err, err
    assert ".parts" not in err, err
    # nothing of the run is left: no shard folder, no temporary file, no run file without its metadata
    assert sorted(p.name for p in out_dir.iterdir()) == ["mine.txt"]


def test_a_full_disk_keeps_the_run_file_of_before(data, tmp_path, capsys, monkeypatch):
    # a rerun that fails leaves the complete run (and its metadata) of the run before, not half of a new one
    run = tmp_path / "r.jsonl"
    argv = ["run", "--config", "oracle", "--data", str(data), "--out", str(run), "--split", "all", "--shard-size", "1"]
    assert main(argv) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    capsys.readouterr()
    _fill_disk(monkeypatch, TARGETS["run file"])
    assert main(argv) == 2
    assert "No space left on device" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before


def test_the_cases_above_have_shards_for_two_workers(data, tmp_path, capsys):
    run = tmp_path / "r.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(data), "--out", str(run), "--split", "all",
                 "--shard-size", "1", "--workers", "2"]) == 0
    meta = json.loads((tmp_path / "r.meta.json").read_text(encoding="utf-8"))
    assert (meta["shards"], meta["workers"], meta["counts"]["questions"]) == (4, 2, 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "r.jsonl", "r.meta.json"]


def test_finish_run_leaves_no_run_file_without_its_metadata(data, tmp_path, monkeypatch):
    # what `reproduce` writes from shards in memory: the run file and its .meta.json both, or neither
    paths = resolve_data(data=data)
    index = load_index(paths.kg, paths.labels, benchmark_dir=paths.benchmark)
    questions = select_split(load_benchmark(paths.benchmark, paths.benchmark_ids), "all")
    cfg = load_config("oracle")
    out = tmp_path / "r.jsonl"
    run_to_file(cfg, paths, split="all", out_path=out, show_progress=False)  # the run of before
    shard = retrieve_shard(Retriever(index, cfg), questions, 0, len(questions))
    _fill_disk(monkeypatch, TARGETS["metadata"])
    with pytest.raises(OutputError, match="No space left on device"):
        finish_run(out, cfg, paths, index, "all", [shard.text], [shard.stats], RunSetup(workers=1, shard_size=4))
    assert not out.exists() and not (tmp_path / "r.meta.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]
