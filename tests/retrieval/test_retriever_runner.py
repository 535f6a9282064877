"""Run files (SPEC §6.1): byte-identical across workers, hash seeds and resumes; metadata."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from retriever import runner
from retriever.config import load_config
from tempbench_core.runfile import meta_path, read_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data(small_sample):
    from tempbench.data import resolve_data

    return resolve_data(data=small_sample)


@pytest.fixture()
def small_shards(monkeypatch):
    monkeypatch.setattr(runner, "SHARD_SIZE", 64)


def _run(data, tmp_path, name, cfg="nonoracle", **kwargs):
    out = tmp_path / f"{name}.jsonl"
    meta = runner.run_to_file(load_config(cfg), data, out_path=out, show_progress=False, **kwargs)
    return out, meta


def test_workers_give_identical_bytes(data, tmp_path, small_shards):
    one, meta1 = _run(data, tmp_path, "one", split="all")
    two, meta2 = _run(data, tmp_path, "two", split="all", workers=2)
    assert one.read_bytes() == two.read_bytes()
    assert meta1["counts"] == meta2["counts"] and meta1["shards"] > 2
    assert not (tmp_path / "one.jsonl.parts").exists()


def test_meta_and_records(data, tmp_path):
    out, meta = _run(data, tmp_path, "run", cfg="oracle", split="test")
    records = list(read_run(out).values())
    written = json.loads(meta_path(out).read_text(encoding="utf-8"))
    assert written["config"] == load_config("oracle").to_dict()
    for key in ("kg", "labels", "benchmark"):
        path = getattr(data, key)
        assert written["inputs"][key]["sha256"] == hashlib.sha256(Path(path).read_bytes()).hexdigest()
    assert written["counts"]["questions"] == len(records) > 0
    assert all(r["split"] == "test" for r in records)
    assert written["coverage"] == sum(bool(r["evidence"]) for r in records) / len(records)
    assert written["anchor_recall"] == 1.0  # the oracle anchor is the gold subject
    item = records[0]["evidence"][0]
    assert list(item) == ["s", "r", "o", "s_id", "r_id", "o_id", "t_start", "t_end", "score", "line"]
    assert list(records[0]) == ["id", "split", "anchor", "evidence", "cutoff_ties"]
    assert written["package"]["version"] and written["timings"]["retrieve_s"] >= 0


def test_resume_after_interruption_is_byte_identical(data, tmp_path, small_shards, monkeypatch):
    full, _ = _run(data, tmp_path / "a", "nonoracle", split="all")
    calls = []
    real = runner._write_shard

    def flaky(ctx, i):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(i)
        return real(ctx, i)

    monkeypatch.setattr(runner, "_write_shard", flaky)
    out = tmp_path / "b" / "nonoracle.jsonl"
    with pytest.raises(KeyboardInterrupt):
        runner.run_to_file(load_config("nonoracle"), data, split="all", out_path=out, show_progress=False)
    assert not out.exists() and len(list((tmp_path / "b" / "nonoracle.jsonl.parts").glob("*.jsonl"))) == 3
    monkeypatch.setattr(runner, "_write_shard", real)
    meta = runner.run_to_file(load_config("nonoracle"), data, split="all", out_path=out, resume=True, show_progress=False)
    assert meta["resumed_shards"] == 3 and out.read_bytes() == full.read_bytes()
    assert meta["counts"] == json.loads(meta_path(full).read_text())["counts"]


def test_resume_ignores_shards_of_another_config(data, tmp_path, small_shards, monkeypatch):
    out = tmp_path / "x.jsonl"
    real = runner._write_shard

    def stop_after_one(ctx, i):
        if i > 0:
            raise KeyboardInterrupt
        return real(ctx, i)

    monkeypatch.setattr(runner, "_write_shard", stop_after_one)
    with pytest.raises(KeyboardInterrupt):
        runner.run_to_file(load_config("oracle"), data, split="all", out_path=out, show_progress=False)
    monkeypatch.setattr(runner, "_write_shard", real)
    meta = runner.run_to_file(load_config("oracle", ["k=3"]), data, split="all", out_path=out, resume=True, show_progress=False)
    assert meta["resumed_shards"] == 0
    assert all(len(r["evidence"]) <= 3 for r in read_run(out).values())


def _cli_run(tmp_path, data, seed, extra=()):
    out = tmp_path / f"seed{seed}.jsonl"
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    proc = subprocess.run(
        [sys.executable, "-m", "tempbench.cli", "run", "--config", "nonoracle", "--split", "all", "--data", str(data.root),
         "--out", str(out), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def test_byte_identical_across_hash_seeds_and_workers(data, tmp_path):
    a = _cli_run(tmp_path, data, 0)
    b = _cli_run(tmp_path, data, 12345, ["--workers", "2"])
    assert a.read_bytes() == b.read_bytes()
    assert "anchor recall" in _cli_summary(tmp_path, data)


def _cli_summary(tmp_path, data):
    proc = subprocess.run(
        [sys.executable, "-m", "tempbench.cli", "run", "--config", "oracle", "--data", str(data.root),
         "--out", str(tmp_path / "summary.jsonl")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cli_config_errors_exit_2(data, tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "tempbench.cli", "run", "--config", "oracle", "--set", "hop=3", "--data", str(data.root),
         "--out", str(tmp_path / "e.jsonl")],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2 and "unknown config key 'hop'" in proc.stderr and "Traceback" not in proc.stderr
    assert "valid keys" in proc.stderr


def test_an_edited_shard_is_recomputed_on_resume(data, tmp_path, small_shards, monkeypatch):
    full, _ = _run(data, tmp_path / "a", "oracle", cfg="oracle", split="all")
    real = runner._write_shard

    def stop_after_two(ctx, i):
        if i >= 2:
            raise KeyboardInterrupt
        return real(ctx, i)

    monkeypatch.setattr(runner, "_write_shard", stop_after_two)
    out = tmp_path / "b" / "oracle.jsonl"
    with pytest.raises(KeyboardInterrupt):
        runner.run_to_file(load_config("oracle"), data, split="all", out_path=out, show_progress=False)
    shards = sorted((tmp_path / "b" / "oracle.jsonl.parts").glob("*-00000.jsonl"))
    text = shards[0].read_text(encoding="utf-8")
    shards[0].write_text(text.replace('"score":', '"score": ', 1), encoding="utf-8")  # same lines, other bytes
    monkeypatch.setattr(runner, "_write_shard", real)
    meta = runner.run_to_file(load_config("oracle"), data, split="all", out_path=out, resume=True, show_progress=False)
    assert meta["resumed_shards"] == 1  # shard 1 reused, the edited shard 0 recomputed
    assert out.read_bytes() == full.read_bytes()
