"""Reading what a release may really ship (issue 13): gzip inputs, a header read by
position as TGB's loader reads it, and a benchmark.jsonl that covers only some
questions (SPEC §1.1, §1.2, §1.5, §2.3)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from retriever import load_benchmark, load_edgelist, load_labels
from retriever.config import load_config
from retriever.kg import read_edgelist_header
from retriever.runner import run_to_file
from tempbench_core.errors import InputError
from tempbench_core.jsonl import read_jsonl
from tempbench_core.layout import MANIFEST, find_inputs
from tempbench_core.runfile import read_run

CSV = "ts,head,tail,relation_type\n1990,Q1,Q2,P1\n1991,Q2,Q3,P2\n1990,Q3,Q1,P1\n"


def _gz(path: Path, data: bytes) -> Path:
    path.write_bytes(gzip.compress(data, mtime=0))
    return path


def _same_kg(a, b) -> None:
    for name in ("head", "tail", "relation", "year"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert a.entity_ids == b.entity_ids and a.relation_ids == b.relation_ids


def test_gzip_edge_list_reads_like_the_plain_file(tmp_path):
    plain = tmp_path / "kg.csv"
    plain.write_text(CSV, encoding="utf-8")
    kg = load_edgelist(_gz(tmp_path / "kg.csv.gz", CSV.encode()))
    _same_kg(kg, load_edgelist(plain))
    assert kg.n_rows == 3 and kg.entity_ids == ["Q1", "Q2", "Q3"] and kg.year.tolist() == [1990, 1991, 1990]


def test_gzip_errors_name_the_file_and_line(tmp_path):
    bad_row = CSV + "19x1,Q9,Q8,P1\n"
    with pytest.raises(InputError, match="non-integer ts") as info:
        load_edgelist(_gz(tmp_path / "bad.csv.gz", bad_row.encode()))
    assert info.value.line == 5
    many = CSV + "".join(f"{1900 + i % 100},Q{i},Q{i * 7 % 1000},P{i % 50}\n" for i in range(20_000))
    truncated = gzip.compress(many.encode(), mtime=0)
    truncated = truncated[: len(truncated) // 2]
    (tmp_path / "cut.csv.gz").write_bytes(truncated)
    with pytest.raises(InputError, match="gzip stream ends early"):
        load_edgelist(tmp_path / "cut.csv.gz")
    (tmp_path / "x.jsonl.gz").write_bytes(b"this is not gzip data")
    with pytest.raises(InputError, match="corrupt gzip"):
        list(read_jsonl(tmp_path / "x.jsonl.gz"))


def test_gzip_labels_and_jsonl(tmp_path):
    assert load_labels(_gz(tmp_path / "labels.tsv.gz", b"id\tlabel\nQ1\tone\nP1\trel\n")) == {"Q1": "one", "P1": "rel"}
    assert load_labels(_gz(tmp_path / "labels.json.gz", b'{"Q1": "one"}')) == {"Q1": "one"}
    with pytest.raises(InputError, match="given twice") as info:
        load_labels(_gz(tmp_path / "dup.tsv.gz", b"Q1\ta\nQ1\tb\n"))
    assert info.value.line == 2
    rows = [{"id": i} for i in range(3)]
    path = _gz(tmp_path / "r.jsonl.gz", "".join(json.dumps(r) + "\n" for r in rows).encode())
    assert [obj for _, obj in read_jsonl(path)] == rows


def test_layout_finds_gz_names_and_prefers_the_plain_file(small_sample, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(small_sample, root)
    for rel in ("tkgl-smallpedia_edgelist.csv", "labels.tsv", "benchmark/benchmark.jsonl", "benchmark/functional_negatives.jsonl"):
        _gz(root / (rel + ".gz"), (root / rel).read_bytes())
        (root / rel).unlink()
    paths = find_inputs(root)
    assert paths.kg.name == "tkgl-smallpedia_edgelist.csv.gz" and paths.labels.name == "labels.tsv.gz"
    assert paths.benchmark_ids.name == "benchmark.jsonl.gz" and paths.flags.name == "functional_negatives.jsonl.gz"
    assert paths.benchmark.name == "benchmark_labelled.jsonl"
    plain = find_inputs(small_sample)
    assert load_benchmark(paths.benchmark, paths.benchmark_ids) == load_benchmark(plain.benchmark, plain.benchmark_ids)
    (root / "labels.tsv").write_bytes((small_sample / "labels.tsv").read_bytes())
    assert find_inputs(root).labels.name == "labels.tsv"


@pytest.mark.parametrize("header", ["timestamp,head,tail,relation_type", "year,subject,object,property", "a,b,c,d"])
def test_four_column_header_read_by_position(tmp_path, header):
    path = tmp_path / "kg.csv"
    path.write_text(header + "\n" + CSV.split("\n", 1)[1], encoding="utf-8")
    kg = load_edgelist(path)
    reference = tmp_path / "ref.csv"
    reference.write_text(CSV, encoding="utf-8")
    _same_kg(kg, load_edgelist(reference))
    recognised = header.startswith("timestamp")
    assert kg.header_by_position is (not recognised)
    assert read_edgelist_header(path).by_position is (not recognised)
    assert kg.header == tuple(header.split(","))


def test_headers_never_read_silently(tmp_path):
    path = tmp_path / "kg.csv"
    # a recognised name at another column than its positional role: neither reading applies
    path.write_text("head,ts,x,y\nQ1,1990,Q2,P1\n", encoding="utf-8")
    with pytest.raises(InputError, match="neither by name nor by position") as info:
        load_edgelist(path)
    assert info.value.line == 1
    # another column count without the required names
    path.write_text("a,b,c,d,e\n1990,Q1,Q2,P1,x\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column"):
        load_edgelist(path)
    path.write_text("a,b,c\n1990,Q1,Q2\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column"):
        load_edgelist(path)


def test_twin_triples_without_ids_stay_in_label_space(tmp_path):
    def rec(qid: str, ids: bool) -> dict:
        t = {"s": "a", "r": "p", "o": "b", "t_start": 1990.0, "t_end": 1990.0}
        if ids:
            t = {"s_id": "Qa", "r_id": "Pp", "o_id": "Qb", "t_start": 1990.0, "t_end": 1990.0}
        return {"id": qid, "split": "test", "question": "?", "answer": "b", "t_query": 1990.0, "complexity": "1hop",
                "operator_type": "point_in_time", "S_star": [dict(t), dict(t)], "S_dist": [], "S_stale": []}

    lab = tmp_path / "l.jsonl"
    lab.write_text("".join(json.dumps(rec(q, False)) + "\n" for q in ("q1", "q2", "q3")), encoding="utf-8")
    twin = [rec("q1", True), rec("q2", True)]
    del twin[1]["S_star"][0]["o_id"]
    twin[1]["S_star"][1]["s_id"] = None
    ids = tmp_path / "i.jsonl"
    ids.write_text("".join(json.dumps(r) + "\n" for r in twin), encoding="utf-8")
    q1, q2, q3 = load_benchmark(lab, ids)
    assert all(t.get("s_id") == "Qa" and t.get("o_id") == "Qb" for t in q1["S_star"])
    assert not any(k in t for t in q2["S_star"] for k in ("s_id", "r_id", "o_id"))
    assert not any(k in t for t in q3["S_star"] for k in ("s_id", "r_id", "o_id"))
    twin[0]["S_star"][0]["s_id"] = ["Qa"]  # a wrong type is still an error
    ids.write_text("".join(json.dumps(r) + "\n" for r in twin), encoding="utf-8")
    with pytest.raises(InputError, match=r"S_star\[0\]\.s_id is \['Qa'\]"):
        load_benchmark(lab, ids)


@pytest.fixture()
def partial_root(small_sample, tmp_path) -> Path:
    root = tmp_path / "partial"
    shutil.copytree(small_sample, root)
    (root / MANIFEST).unlink()
    ids = root / "benchmark" / "benchmark.jsonl"
    lines = ids.read_text(encoding="utf-8").splitlines()
    ids.write_text("\n".join(lines[::3]) + "\n", encoding="utf-8")
    return root


def test_partial_twin_runs_and_counts_label_anchors(small_sample, partial_root, tmp_path):
    full_out, partial_out = tmp_path / "full.jsonl", tmp_path / "partial.jsonl"
    config = load_config("oracle")
    full_meta = run_to_file(config, find_inputs(small_sample), split="test", out_path=full_out, show_progress=False)
    meta = run_to_file(config, find_inputs(partial_root), split="test", out_path=partial_out, show_progress=False,
                       cache_dir=tmp_path / "cache")
    twins = {json.loads(line)["id"] for line in (partial_root / "benchmark" / "benchmark.jsonl").read_text().splitlines()}
    test_ids = [json.loads(line)["id"] for line in (small_sample / "benchmark" / "benchmark.jsonl").read_text().splitlines()
                if json.loads(line)["split"] == "test"]
    assert meta["counts"]["oracle_by_label"] == sum(q not in twins for q in test_ids) > 0
    assert full_meta["counts"]["oracle_by_label"] == 0
    assert meta["kg_header"] == {"columns": ["ts", "head", "tail", "relation_type"], "read_by_position": False}
    full, partial = read_run(full_out), read_run(partial_out)
    assert list(full) == list(partial) == test_ids
    for qid in test_ids:
        if qid in twins:
            assert partial[qid] == full[qid]
        else:
            # resolved by label: the anchor is an entity rendered with the gold label, or none
            anchor = partial[qid]["anchor"]
            assert anchor["source"] in ("oracle", "none")


def test_header_by_position_recorded_in_run_metadata(small_sample, tmp_path):
    root = tmp_path / "pos"
    shutil.copytree(small_sample, root)
    kg = root / "tkgl-smallpedia_edgelist.csv"
    kg.write_text("year,subject,object,property\n" + kg.read_text(encoding="utf-8").split("\n", 1)[1], encoding="utf-8")
    config = load_config("oracle")
    meta = run_to_file(config, find_inputs(root), split="test", out_path=tmp_path / "pos.jsonl", show_progress=False,
                       cache_dir=tmp_path / "cache")
    assert meta["kg_header"] == {"columns": ["year", "subject", "object", "property"], "read_by_position": True}
    run_to_file(config, find_inputs(small_sample), split="test", out_path=tmp_path / "std.jsonl", show_progress=False,
                cache_dir=tmp_path / "cache")
    assert (tmp_path / "pos.jsonl").read_bytes() == (tmp_path / "std.jsonl").read_bytes()
