"""A run kept in memory (``run_to_file(records=...)``) is exactly what its file holds, for any number of workers.

``tempbench reproduce`` scores the records it keeps instead of reading the run
back: they must equal, value for value, what :func:`read_run` reads from the
file (and :func:`run_records` must give the same mapping, line numbers
included), whether they came from this process, from worker processes (parsed
from their shards) or from a resumed shard. A given index and benchmark are used
as given.
"""

from __future__ import annotations

import json

import pytest

from retriever import Retriever, load_benchmark, load_index, runner
from retriever.config import load_config
from tempbench.data import resolve_data
from tempbench_core.runfile import read_run, run_records


@pytest.fixture(scope="module")
def data(small_sample):
    return resolve_data(data=small_sample)


@pytest.mark.parametrize("workers", [1, 2])
def test_kept_records_are_the_file(data, tmp_path, monkeypatch, workers):
    monkeypatch.setattr(runner, "SHARD_SIZE", 64)
    out = tmp_path / "oracle.jsonl"
    records: list[dict] = []
    runner.run_to_file(load_config("oracle"), data, split="all", out_path=out, workers=workers, show_progress=False,
                       records=records)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert records == [json.loads(line) for line in lines] and len(records) > 64
    # types too (a tuple or a numpy float would compare equal but write differently)
    assert json.dumps(records, ensure_ascii=False) == json.dumps([json.loads(x) for x in lines], ensure_ascii=False)
    kept, read = run_records(out, records), read_run(out)
    assert kept == read and kept.lines == read.lines and kept.path == read.path
    assert (kept.item_form, kept.id_key, kept.evidence_key) == (read.item_form, read.id_key, read.evidence_key)


def test_given_index_and_benchmark_give_the_same_bytes(data, tmp_path):
    cfg = load_config("nonoracle")
    plain = tmp_path / "plain.jsonl"
    runner.run_to_file(cfg, data, split="test", out_path=plain, show_progress=False)
    given = tmp_path / "given.jsonl"
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark)
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    records: list[dict] = []
    runner.run_to_file(cfg, data, split="test", out_path=given, show_progress=False, index=index,
                       questions=questions, records=records)
    assert plain.read_bytes() == given.read_bytes()
    assert [r["id"] for r in records] == [q["id"] for q in questions if q["split"] == "test"]


def test_resumed_shards_reach_the_kept_records(data, tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "SHARD_SIZE", 64)
    cfg = load_config("oracle")
    out = tmp_path / "run.jsonl"
    calls = {"n": 0}
    original = runner._compute_shard

    def crash_after_two(i):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt
        return original(i)

    monkeypatch.setattr(runner, "_compute_shard", crash_after_two)
    with pytest.raises(KeyboardInterrupt):
        runner.run_to_file(cfg, data, split="all", out_path=out, show_progress=False)
    monkeypatch.setattr(runner, "_compute_shard", original)
    records: list[dict] = []
    meta = runner.run_to_file(cfg, data, split="all", out_path=out, show_progress=False, resume=True, records=records)
    assert meta["resumed_shards"] == 2
    assert records == [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("keep_records", [True, False])
def test_every_shard_result_arrives_in_shard_order(data, tmp_path, monkeypatch, workers, keep_records):
    """With or without kept records, in this process or in workers: one hook result per shard, in order."""
    monkeypatch.setattr(runner, "SHARD_SIZE", 64)
    results: list = []
    runner.run_to_file(load_config("oracle"), data, split="all", out_path=tmp_path / "run.jsonl", workers=workers,
                       show_progress=False, records=[] if keep_records else None,
                       on_shard=lambda positions, shard, pools: (positions.start, len(shard), len(pools)),
                       shard_results=results)
    n = len((tmp_path / "run.jsonl").read_text(encoding="utf-8").splitlines())
    assert results == [(lo, min(64, n - lo), min(64, n - lo)) for lo in range(0, n, 64)]


@pytest.mark.parametrize("name", ["oracle", "stale_blind", "hop3_k25"])
@pytest.mark.parametrize("workers", [1, 2])
def test_kept_pools_are_the_questions_expansions(data, tmp_path, monkeypatch, name, workers):
    """The shard hook gets, per question, what expanding its pool again gives (counted eligible rows included),
    and its results come back in shard order, from worker processes too."""
    monkeypatch.setattr(runner, "SHARD_SIZE", 64)
    cfg = load_config(name)
    records: list[dict] = []
    results: list = []
    runner.run_to_file(cfg, data, split="all", out_path=tmp_path / "run.jsonl", workers=workers,
                       show_progress=False, records=records,
                       on_shard=lambda positions, shard, pools: (positions, [r["id"] for r in shard], pools),
                       shard_results=results)
    assert [positions for positions, _, _ in results] == [range(lo, min(lo + 64, len(records)))
                                                          for lo in range(0, len(records), 64)]
    assert [qid for _, ids, _ in results for qid in ids] == [r["id"] for r in records]
    pools = [p for _, _, shard_pools in results for p in shard_pools]
    assert len(pools) == len(records) > 64
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark)
    retriever = Retriever(index, cfg)
    by_id = {q["id"]: q for q in load_benchmark(data.benchmark, data.benchmark_ids)}
    capped = 0
    for record, kept in zip(records, pools, strict=True):
        question = by_id[record["id"]]
        again = retriever.bfs.expand(retriever.anchor(question).index, float(question["t_query"]), count_eligible=True)
        assert kept.rows.tolist() == sorted(again.pool.tolist())
        assert (kept.hop_sizes, kept.eligible, kept.candidates) == (again.hop_sizes, again.eligible, len(again.rows))
        assert all(type(x) is int for x in (*kept.hop_sizes, *kept.eligible, kept.candidates))
        capped += any(e > r for r, e in zip(kept.hop_sizes, kept.eligible, strict=True))
    assert capped  # some pool hit a cap, so eligible counts were compared where they matter


def test_a_written_run_read_fast_is_what_read_run_reads(data, tmp_path):
    """``read_written_run`` (reproduce's scoring workers) gives :func:`read_run`'s mapping, line numbers included."""
    from tempbench_core.runfile import read_written_run

    out = tmp_path / "nonoracle.jsonl"
    runner.run_to_file(load_config("nonoracle"), data, split="all", out_path=out, show_progress=False)
    fast, read = read_written_run(out), read_run(out)
    assert fast == read and fast.lines == read.lines and fast.path == read.path
    assert (fast.item_form, fast.id_key, fast.evidence_key) == (read.item_form, read.id_key, read.evidence_key)
    assert json.dumps(list(fast.values())) == json.dumps(list(read.values()))
