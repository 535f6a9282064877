"""A run retrieved into data (``retriever.retrieve_shard``, as ``tempbench reproduce`` does in its workers) is
exactly what ``run_to_file`` writes, for any shard size: records, text, pools and metadata.

A given index and benchmark are used as given.
"""

from __future__ import annotations

import json

import pytest

from retriever import (
    Retriever,
    RunOptions,
    RunSetup,
    Shard,
    finish_run,
    load_benchmark,
    load_index,
    retrieve_shard,
    run_to_file,
)
from retriever.config import load_config
from tempbench.data import resolve_data
from tempbench_core.runfile import read_meta, read_run, read_written_run
from tempbench_core.schema import select_split


@pytest.fixture(scope="module")
def data(small_sample):
    return resolve_data(data=small_sample)


@pytest.fixture(scope="module")
def loaded(data):
    return load_index(data.kg, data.labels, benchmark_dir=data.benchmark), load_benchmark(data.benchmark,
                                                                                            data.benchmark_ids)


@pytest.mark.parametrize("size", [64, 1000])
def test_shards_are_the_run_file(data, loaded, tmp_path, size):
    index, questions = loaded
    cfg = load_config("nonoracle")
    out = tmp_path / "run.jsonl"
    run_to_file(cfg, data, split="all", out_path=out, show_progress=False)
    chosen = select_split(questions, "all")
    retriever = Retriever(index, cfg)
    shards = [retrieve_shard(retriever, chosen, lo, hi) for lo, hi in Shard.bounds(len(chosen), size)]
    assert b"".join(s.text for s in shards) == out.read_bytes()
    records = [r for s in shards for r in s.records]
    assert records == [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # types too (a tuple or a numpy float would compare equal but write differently)
    assert json.dumps(records, ensure_ascii=False) == json.dumps(list(read_run(out).values()), ensure_ascii=False)
    # the run written from the shards: the same bytes and the same counts in its metadata
    again = tmp_path / "again.jsonl"
    meta = finish_run(again, cfg, data, index, "all", [s.text for s in shards], [s.stats for s in shards],
                      RunSetup(workers=1, shard_size=size))
    assert again.read_bytes() == out.read_bytes()
    assert meta["counts"] == read_meta(out)["counts"] and meta["coverage"] == read_meta(out)["coverage"]


def test_given_index_and_benchmark_give_the_same_bytes(data, loaded, tmp_path):
    cfg = load_config("nonoracle")
    plain = tmp_path / "plain.jsonl"
    run_to_file(cfg, data, split="test", out_path=plain, show_progress=False)
    given = tmp_path / "given.jsonl"
    index, questions = loaded
    run_to_file(cfg, data, split="test", out_path=given, options=RunOptions(index=index, questions=questions,
                                                                            show_progress=False))
    assert plain.read_bytes() == given.read_bytes()


def test_run_options_are_declared(data, tmp_path):
    with pytest.raises(TypeError, match="unknown run option 'worker'.*workers"):
        run_to_file(load_config("oracle"), data, out_path=tmp_path / "r.jsonl", worker=2)


@pytest.mark.parametrize("name", ["oracle", "stale_blind", "hop3_k25"])
def test_kept_pools_are_the_questions_expansions(loaded, name):
    """A shard's pools are, per question, what expanding its pool again gives (counted eligible rows included)."""
    index, questions = loaded
    cfg = load_config(name)
    retriever = Retriever(index, cfg)
    chosen = select_split(questions, "all")
    shard = retrieve_shard(retriever, chosen, 0, len(chosen), keep_pools=True)
    assert len(shard.pools) == len(shard.records) == len(chosen) > 64
    capped = 0
    for question, kept in zip(chosen, shard.pools, strict=True):
        again = retriever.expand_from(retriever.anchor(question).index, float(question["t_query"]), count_eligible=True)
        assert kept.rows.tolist() == sorted(again.pool.tolist())
        assert (kept.hop_sizes, kept.eligible, kept.candidates) == (again.hop_sizes, again.eligible, len(again.rows))
        assert all(type(x) is int for x in (*kept.hop_sizes, *kept.eligible, kept.candidates))
        capped += any(e > r for r, e in zip(kept.hop_sizes, kept.eligible, strict=True))
    assert capped  # some pool hit a cap, so eligible counts were compared where they matter


def test_a_written_run_read_fast_is_what_read_run_reads(data, tmp_path):
    """``read_written_run`` (reproduce's scoring fallback) gives :func:`read_run`'s mapping, line numbers included."""
    out = tmp_path / "nonoracle.jsonl"
    run_to_file(load_config("nonoracle"), data, split="all", out_path=out, show_progress=False)
    fast, read = read_written_run(out), read_run(out)
    assert fast == read and fast.lines == read.lines and fast.path == read.path
    assert (fast.item_form, fast.id_key, fast.evidence_key) == (read.item_form, read.id_key, read.evidence_key)
    assert json.dumps(list(fast.values())) == json.dumps(list(read.values()))


def test_a_shard_shared_by_configurations_is_each_configurations_own(loaded):
    """One ``shared`` cache across the four configurations (as reproduce's shard task keeps it): every
    configuration's records, text, counts and pools are those it retrieves alone, and the linker's runs did
    take pools from the oracle's (the cache is used, not just harmless)."""
    index, questions = loaded
    chosen = select_split(questions, "all")
    shared: dict = {}
    alone = {}
    together = {}
    for name in ("oracle", "stale_blind", "nonoracle", "hop3_k25", "oracle"):
        cfg = load_config(name)
        alone[name] = retrieve_shard(Retriever(index, cfg), chosen, 0, len(chosen), keep_pools=True)
        together[name] = retrieve_shard(Retriever(index, cfg), chosen, 0, len(chosen), keep_pools=True,
                                        shared=shared)
    for name, shard in alone.items():
        mine = together[name]
        assert mine.text == shard.text and mine.stats == shard.stats and mine.records == shard.records
        assert [(p.rows.tolist(), p.hop_sizes, p.eligible, p.candidates) for p in mine.pools] == \
            [(p.rows.tolist(), p.hop_sizes, p.eligible, p.candidates) for p in shard.pools]
    oracle_anchor = [r["anchor"]["id"] for r in together["oracle"].records]
    linked = [r["anchor"]["id"] for r in together["nonoracle"].records]
    same = [i for i, (a, b) in enumerate(zip(oracle_anchor, linked, strict=True)) if a == b and a is not None]
    assert same and all(together["nonoracle"].records[i]["evidence"] is together["oracle"].records[i]["evidence"]
                        for i in same)
