"""Kill-and-resume (issue 7 part 3, SPEC §6.1): a run SIGKILLed part-way leaves no run
file that looks done, and ``tempbench run --resume`` finishes it byte-identically.

The run is a real ``python -m tempbench.cli run`` subprocess on the small
generated sample, with tiny shards (``--shard-size``) so that the retrieval
phase lasts long enough to be interrupted between two shards.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tempbench_core.runfile import meta_path

ROOT = Path(__file__).resolve().parents[2]
SHARD = re.compile(r"^[0-9a-f]{16}-\d{5}\.jsonl$")
POLL_TIMEOUT_S = 120.0


def _command(data: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tempbench.cli", "run", "--config", "nonoracle", "--split", "all",
            "--data", str(data), "--out", str(out), "--cache-dir", str(cache), *extra]


def _complete_shards(parts: Path) -> list[Path]:
    """Shards whose records file and stats file are both in place (what a resume may reuse)."""
    if not parts.is_dir():
        return []
    return sorted(p for p in parts.iterdir()
                  if SHARD.match(p.name) and p.with_name(p.name[: -len(".jsonl")] + ".stats.json").exists())


def _run_and_kill(data: Path, out: Path, cache: Path, shard_size: int) -> bool:
    """Start a run, SIGKILL it once a shard is complete; True when it was killed before finishing."""
    parts = out.with_name(out.name + ".parts")
    proc = subprocess.Popen(_command(data, out, cache, "--shard-size", str(shard_size)), cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONHASHSEED": "7"})
    deadline = time.monotonic() + POLL_TIMEOUT_S
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if _complete_shards(parts) and not out.exists():
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.001)
    finally:
        if proc.poll() is None and time.monotonic() >= deadline:
            proc.kill()
        proc.wait(timeout=60)
    return proc.returncode == -signal.SIGKILL and not out.exists()


def test_sigkill_then_resume_is_byte_identical(small_sample, tmp_path):
    cache = tmp_path / "cache"
    reference = tmp_path / "uninterrupted.jsonl"
    done = subprocess.run(_command(small_sample, reference, cache), cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr

    for shard_size in (4, 1):
        out = tmp_path / f"killed-{shard_size}" / "nonoracle.jsonl"
        out.parent.mkdir()
        if _run_and_kill(small_sample, out, cache, shard_size):
            break
    else:
        pytest.skip("the run finished before it could be killed, even with one question per shard "
                    "(machine too fast for the polling loop)")

    parts = out.with_name(out.name + ".parts")
    assert not out.exists() and not meta_path(out).exists()  # nothing that looks done
    finished = len(_complete_shards(parts))
    assert finished >= 1

    resumed = subprocess.run(_command(small_sample, out, cache, "--shard-size", str(shard_size), "--resume"),
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert out.read_bytes() == reference.read_bytes()
    meta = json.loads(meta_path(out).read_text(encoding="utf-8"))
    # every shard complete at the kill was reused, and the rest was computed
    assert meta["resumed_shards"] == finished < meta["shards"]
    assert meta["counts"] == json.loads(meta_path(reference).read_text(encoding="utf-8"))["counts"]
    assert not parts.exists()


def test_resume_without_parts_recomputes_everything(small_sample, tmp_path):
    # --resume with nothing to resume is an ordinary run (different shard size, same bytes)
    cache = tmp_path / "cache"
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for out, extra in ((a, ()), (b, ("--shard-size", "7", "--resume"))):
        proc = subprocess.run(_command(small_sample, out, cache, *extra), cwd=ROOT, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
    assert a.read_bytes() == b.read_bytes()
    assert json.loads(meta_path(b).read_text(encoding="utf-8"))["resumed_shards"] == 0


def test_shard_size_must_be_positive(small_sample, tmp_path):
    proc = subprocess.run(_command(small_sample, tmp_path / "x.jsonl", tmp_path / "cache", "--shard-size", "0"),
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--shard-size" in proc.stderr and "Traceback" not in proc.stderr
