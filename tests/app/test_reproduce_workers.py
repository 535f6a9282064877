"""``tempbench reproduce``: the same bytes for one worker and several, and under any hash seed (issue 15).

With several workers the runs are computed in worker processes and parsed
back from their shards, and each configuration's loss attribution and browser
part are made in forked processes and merged; with one worker everything
happens in one process. Every output file must be the same, byte for byte
(PNG files and the ``timings``/``workers`` of ``.meta.json`` aside); the
per-user sample is the session's small one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _reproduce(out: Path, workers: int, seed: str) -> None:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.run([sys.executable, "-m", "tempbench.cli", "reproduce", "--split", "all", "--workers", str(workers),
                           "--out", str(out)], cwd=out.parent, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix != ".png":
            data = path.read_bytes().replace(str(root).encode(), b"@OUT@")
            if path.name.endswith(".meta.json"):
                meta = json.loads(data)
                meta.pop("timings")
                meta.pop("workers")
                data = json.dumps(meta).encode()
            out[str(path.relative_to(root))] = data
    return out


def test_one_and_several_workers_write_the_same_bytes(small_sample, tmp_path):
    _reproduce(tmp_path / "one", 1, "0")
    _reproduce(tmp_path / "three", 3, "12345")
    one, three = _files(tmp_path / "one"), _files(tmp_path / "three")
    assert sorted(one) == sorted(three) and "report.html" in one and "explain/oracle.json" in one
    assert [name for name in one if one[name] != three[name]] == []


def test_the_attribution_of_reproduce_is_the_explain_commands(small_sample, tmp_path):
    """reproduce derives explain/<config>.json from the browser's slices; ``tempbench explain`` from the run file."""
    out = tmp_path / "out"
    _reproduce(out, 2, "0")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for name in ("oracle", "stale_blind", "hop3_k25"):
        target = tmp_path / f"{name}.explain.json"
        proc = subprocess.run([sys.executable, "-m", "tempbench.cli", "explain", str(out / "runs" / f"{name}.jsonl"),
                               "--json", str(target)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        by_command = json.loads(target.read_text(encoding="utf-8"))
        assert by_command["summary"].pop("run") == str(out / "runs" / f"{name}.jsonl")  # the command names its input
        assert by_command.pop("provenance")["command"].startswith("tempbench explain ")  # and itself
        assert by_command == json.loads((out / "explain" / f"{name}.json").read_text(encoding="utf-8"))


def test_a_failing_worker_stops_the_job_and_every_process(small_sample, tmp_path, monkeypatch):
    """An error in a scoring worker reaches the caller, and no worker process is left behind (the finisher waiting
    for the scores included)."""
    import multiprocessing

    import pytest

    import tempbench.reproduce as job
    import tempbench.reproduce.tasks as tasks
    from tempbench.data import resolve_data
    from tempbench_core.errors import EvidenceError

    def broken(*_args, **_kwargs):
        raise EvidenceError("scoring broke on purpose")

    # forked workers inherit the patches (a run is scored from its parts, else from its records)
    monkeypatch.setattr(tasks, "evaluate_parts", broken)
    monkeypatch.setattr(tasks, "evaluate", broken)
    with pytest.raises(EvidenceError, match="on purpose"):
        job.reproduce(resolve_data(data=small_sample), out=tmp_path / "out", split="test", workers=2, n_boot=5)
    assert multiprocessing.active_children() == []


def test_runs_are_scored_from_their_parts_and_from_their_files_alike(small_sample, tmp_path, monkeypatch):
    """reproduce scores each run from the table parts its shards made (the run files are never scored); when a
    part is missing it scores the records: the same scores."""
    import tempbench.reproduce as job
    import tempbench.reproduce.tasks as tasks
    from tempbench.data import resolve_data

    data = resolve_data(data=small_sample)

    def never(*_args, **_kwargs):
        raise AssertionError("a run file was scored although its parts sufficed")

    with monkeypatch.context() as patch:
        patch.setattr(tasks, "evaluate", never)  # the records' (or the file's) evaluation
        from_parts = job.reproduce(data, out=tmp_path / "parts", split="all", workers=1, n_boot=20).scores
    with monkeypatch.context() as patch:
        patch.setattr(tasks, "make_part", lambda *_args: None)
        from_files = job.reproduce(data, out=tmp_path / "files", split="all", workers=1, n_boot=20).scores
    assert json.dumps(from_parts, sort_keys=True) == json.dumps(from_files, sort_keys=True)
    for name in from_parts:
        assert (tmp_path / "parts" / "scores" / f"{name}.json").read_bytes() == \
            (tmp_path / "files" / "scores" / f"{name}.json").read_bytes()


def test_the_shards_texts_leave_nothing_behind(small_sample, tmp_path, monkeypatch):
    """The workers leave each shard's run-file text in a private folder of the output: gone after a run (its bytes
    copied into the run files), and gone when a worker fails, with the output folder the job made."""
    import multiprocessing

    import pytest

    import tempbench.reproduce as job
    import tempbench.reproduce.tasks as tasks
    from tempbench.data import resolve_data
    from tempbench_core.errors import EvidenceError

    data = resolve_data(data=small_sample)
    made = job.reproduce(data, out=tmp_path / "ok", split="all", workers=2, n_boot=5)
    assert not [p for p in made.out.rglob(".*") if p.name != ".tempbench-output.json"]
    one = job.reproduce(data, out=tmp_path / "one", split="all", workers=1, n_boot=5)
    for name in made.scores:
        assert (made.out / "runs" / f"{name}.jsonl").read_bytes() == (one.out / "runs" / f"{name}.jsonl").read_bytes()

    seen = []
    real = tasks.table_of

    def broken(*args, **kwargs):
        # the shards retrieved so far have left their texts: the folder is there to be removed
        seen.extend(p.name for p in (tmp_path / "failed").glob(".shard-texts-*/*"))
        if seen:
            raise EvidenceError("a shard broke on purpose")
        return real(*args, **kwargs)

    monkeypatch.setattr(tasks, "table_of", broken)  # forked workers inherit the patch
    with pytest.raises(EvidenceError, match="on purpose"):
        job.reproduce(data, out=tmp_path / "failed", split="all", workers=2, n_boot=5)
    assert multiprocessing.active_children() == []
    assert not (tmp_path / "failed").exists()


def test_the_folder_of_the_shards_texts(tmp_path):
    """Made in the output (made too, and removed again when left empty), removed in every case; a folder that cannot
    be made is an output error naming the output."""
    import pytest

    from tempbench.reproduce import text_folder
    from tempbench_core.errors import OutputError

    out = tmp_path / "new" / "out"
    with pytest.raises(KeyError), text_folder(out) as folder:
        (folder / "0.0.part").write_bytes(b"{}\n")
        assert folder.parent == out and folder.name.startswith(".")
        raise KeyError("stopped")
    assert not out.exists() and (tmp_path / "new").is_dir()
    out.mkdir()
    (out / "mine.txt").write_text("kept\n", encoding="utf-8")
    with text_folder(out) as folder:
        (folder / "0.0.part").write_bytes(b"{}\n")
    assert [p.name for p in out.iterdir()] == ["mine.txt"]
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    with pytest.raises(OutputError, match="a-file"), text_folder(tmp_path / "a-file" / "out"):
        pass


def test_one_at_a_time_runs_the_step_in_one_process_at_a_time(tmp_path):
    """The drawing processes' initializer (tempbench_core.workers.OneAtATime): forked processes run the step in turn,
    never two at once, and each runs it."""
    import multiprocessing
    import os
    import time

    from tempbench_core.workers import OneAtATime

    log = tmp_path / "log"

    def step() -> None:
        with open(log, "a") as handle:
            handle.write(f"start {os.getpid()} {time.monotonic()}\n")
        time.sleep(0.2)
        with open(log, "a") as handle:
            handle.write(f"end {os.getpid()} {time.monotonic()}\n")

    serial = OneAtATime(step)
    processes = [multiprocessing.get_context("fork").Process(target=serial) for _ in range(3)]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
    assert all(p.exitcode == 0 for p in processes)
    events = [line.split() for line in log.read_text().splitlines()]
    assert [e[0] for e in events] == ["start", "end"] * 3  # each step ends before the next starts
    assert len({e[1] for e in events}) == 3 and all(a[1] == b[1] for a, b in zip(events[::2], events[1::2], strict=True))
