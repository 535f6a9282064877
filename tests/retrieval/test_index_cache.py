"""Index cache (issue 2 §6): reuse, rebuild on changed input, detect corruption; CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from retriever.index import load_index
from tempbench.cli import main

KG_TEXT = "ts,head,tail,relation_type\n1990,Q1,Q2,P1\n1991,Q1,Q2,P1\n1992,Q2,Q3,P2\n1990,Q3,Q3,P1\n"


@pytest.fixture()
def inputs(tmp_path: Path) -> dict[str, Path]:
    kg = tmp_path / "kg.csv"
    kg.write_text(KG_TEXT, encoding="utf-8")
    labels = tmp_path / "labels.tsv"
    labels.write_text("id\tlabel\nQ1\tParis\nQ2\tFrance\nP1\tcapital of\n", encoding="utf-8")
    bench = tmp_path / "benchmark"
    bench.mkdir()
    record = {"id": "q1", "S_star": [{"s": "Paris city", "r": "located in", "o": "Europe"}], "S_dist": [], "S_stale": []}
    ids = {"id": "q1", "S_star": [{"s_id": "Q1", "r_id": "P2", "o_id": "Q3"}], "S_dist": [], "S_stale": []}
    (bench / "benchmark_labelled.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    (bench / "benchmark.jsonl").write_text(json.dumps(ids) + "\n", encoding="utf-8")
    return {"kg": kg, "labels": labels, "bench": bench, "cache": tmp_path / "cache"}


def same(a, b) -> None:
    assert a.fingerprint == b.fingerprint
    assert a.kg.entity_ids == b.kg.entity_ids and a.kg.relation_ids == b.kg.relation_ids
    for name in ("head", "tail", "relation", "year"):
        assert np.array_equal(getattr(a.kg, name), getattr(b.kg, name))
    assert a.entity_labels == b.entity_labels and a.relation_labels == b.relation_labels and a.labels == b.labels
    ids = np.arange(a.kg.n_rows)
    assert a.bm25.score("capital of France Paris", ids).tobytes() == b.bm25.score("capital of France Paris", ids).tobytes()
    assert a.incidence.rows_at(0, 1990).tolist() == b.incidence.rows_at(0, 1990).tolist()


def test_labels_combined_and_rendered(inputs) -> None:
    index = load_index(inputs["kg"], inputs["labels"], inputs["bench"], cache_dir=False)
    # File wins for Q1; harvest fills Q3 and P2; no label anywhere -> raw id.
    assert index.entity_labels == ["Paris", "France", "Europe"]
    assert index.relation_labels == ["capital of", "located in"]
    assert index.render("Q1") == "Paris" and index.render("Q404") == "Q404"
    plain = load_index(inputs["kg"], None, None, cache_dir=False)
    assert plain.entity_labels == ["Q1", "Q2", "Q3"]
    assert plain.bm25.doc_terms(0) == {"q1": 1, "p1": 1, "q2": 1}


def test_cache_reused_and_identical(inputs) -> None:
    first = load_index(inputs["kg"], inputs["labels"], inputs["bench"], cache_dir=inputs["cache"])
    second = load_index(inputs["kg"], inputs["labels"], inputs["bench"], cache_dir=inputs["cache"])
    assert not first.from_cache and second.from_cache
    same(first, second)
    files = sorted(p.name for p in second.cache_path.iterdir())
    assert files == ["arrays", "manifest.json", "meta.json"]
    # every array memory-mapped, read-only: processes share the pages
    for array in (second.kg.head, second.bm25.post_groups, second.incidence.year_rows):
        assert isinstance(array.base, np.memmap) and not array.flags.writeable


def test_changed_input_rebuilds(inputs) -> None:
    first = load_index(inputs["kg"], inputs["labels"], None, cache_dir=inputs["cache"])
    inputs["labels"].write_text("Q1\tLyon\n", encoding="utf-8")
    second = load_index(inputs["kg"], inputs["labels"], None, cache_dir=inputs["cache"])
    assert not second.from_cache and second.fingerprint != first.fingerprint
    assert second.entity_labels[0] == "Lyon"
    inputs["kg"].write_text(KG_TEXT + "2000,Q9,Q1,P1\n", encoding="utf-8")
    third = load_index(inputs["kg"], inputs["labels"], None, cache_dir=inputs["cache"])
    assert not third.from_cache and third.kg.n_rows == 5


@pytest.mark.parametrize("victim", ["arrays/kg__head.npy", "arrays/bm25__post_tf.npy", "meta.json", "manifest.json"])
def test_corrupted_cache_is_rebuilt(inputs, victim: str, capsys) -> None:
    first = load_index(inputs["kg"], inputs["labels"], None, cache_dir=inputs["cache"])
    path = first.cache_path / victim
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated
    again = load_index(inputs["kg"], inputs["labels"], None, cache_dir=inputs["cache"])
    assert not again.from_cache
    assert "corrupted" in capsys.readouterr().err
    same(first, again)
    assert load_index(inputs["kg"], inputs["labels"], None, cache_dir=inputs["cache"]).from_cache


def test_flipped_byte_is_detected(inputs, capsys) -> None:
    first = load_index(inputs["kg"], None, None, cache_dir=inputs["cache"])
    path = first.cache_path / "arrays" / "incidence__rows.npy"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert not load_index(inputs["kg"], None, None, cache_dir=inputs["cache"]).from_cache
    assert "checksum mismatch" in capsys.readouterr().err


def test_cache_disabled_writes_nothing(inputs) -> None:
    index = load_index(inputs["kg"], None, None, cache_dir=False)
    assert index.cache_path is None and not inputs["cache"].exists()


def test_cli_index(inputs, capsys) -> None:
    args = ["index", "--kg", str(inputs["kg"]), "--labels", str(inputs["labels"]), "--cache", str(inputs["cache"])]
    assert main(args) == 0
    out = capsys.readouterr().out
    for needle in ("rows", "entities", "relations", "1990-1992 (3 distinct)", "documents N", "vocabulary", "avgdl"):
        assert needle in out
    assert main(args) == 0
    assert "yes" in capsys.readouterr().out


def test_cli_index_bad_input_exit_2(inputs, capsys) -> None:
    inputs["kg"].write_text(KG_TEXT + "1993,Q1\n", encoding="utf-8")
    assert main(["index", "--kg", str(inputs["kg"]), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert f"{inputs['kg']}:6: ragged row" in err and "Traceback" not in err


def test_cli_labels(inputs, tmp_path: Path, capsys) -> None:
    out = tmp_path / "harvested.tsv"
    bench = inputs["bench"] / "benchmark_labelled.jsonl"
    assert main(["labels", "--kg", str(inputs["kg"]), "--benchmark", str(bench), "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == "id\tlabel\nQ1\tParis city\nP2\tlocated in\nQ3\tEurope\n"
    merged = tmp_path / "merged.tsv"
    args = ["labels", "--kg", str(inputs["kg"]), "--labels", str(inputs["labels"]), "--benchmark", str(bench)]
    assert main([*args, "--merge", "--out", str(merged)]) == 0
    from retriever.labels import load_labels

    assert load_labels(merged) == {"Q1": "Paris", "Q2": "France", "P1": "capital of", "P2": "located in", "Q3": "Europe"}


def test_a_killed_build_leaves_nothing_that_survives_the_next_run(tmp_path):
    import os
    import subprocess

    from retriever.index import remove_stale_temporaries

    cache = tmp_path / "cache"
    cache.mkdir()
    gone = subprocess.Popen(["true"])  # a process that has ended  # noqa: S607
    gone.wait()
    stale = cache / f".0123456789abcdef.{gone.pid}.x1y2"
    stale.mkdir()
    (stale / "arrays.npz").write_bytes(b"half")
    live = cache / f".0123456789abcdef.{os.getpid()}.zz"
    live.mkdir()
    assert remove_stale_temporaries(cache) == [stale]
    assert not stale.exists() and live.exists()
