"""Benchmark and flags loading (SPEC §1.3)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from retriever.benchmark import load_benchmark, load_flags
from tempbench_core.errors import InputError, MissingDataError


def triple(s, r, o, t, ids=False):
    if ids:
        return {"s_id": "Q" + s, "r_id": "P" + r, "o_id": "Q" + o, "t_start": t, "t_end": t}
    return {"s": s, "r": r, "o": o, "t_start": t, "t_end": t}


def record(qid="q1", split="test", ids=False, **extra):
    rec = {
        "id": qid, "split": split, "question": "Who?", "answer": "c", "t_query": 1994.0,
        "complexity": "2hop", "operator_type": "point_in_time",
        "S_star": [triple("a", "p", "b", 1994.0, ids), triple("b", "q", "c", 1994.0, ids)],
        "S_dist": [triple("a", "p", "x", 1990.0, ids), triple("b", "q", "c", 1994.0, ids)],
        "S_stale": [triple("a", "p", "b", 1980.0, ids), triple("b", "q", "c", 1994.0, ids)],
    }
    rec.update(extra)
    return rec


def write(path: Path, records, raw_tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + raw_tail, encoding="utf-8")
    return path


def test_loads_in_file_order_and_keeps_extra_fields(tmp_path):
    recs = [record("q2", extra_field={"x": 1}), record("q1", split="train")]
    out = load_benchmark(write(tmp_path / "b.jsonl", recs))
    assert [r["id"] for r in out] == ["q2", "q1"]
    assert out[0]["extra_field"] == {"x": 1}
    assert out == recs


def test_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps(record()) + "\n\n", encoding="utf-8")
    assert len(load_benchmark(path)) == 1


def test_merges_id_space_by_question_and_position(tmp_path):
    lab = write(tmp_path / "benchmark_labelled.jsonl", [record("q1"), record("q2")])
    ids = write(tmp_path / "benchmark.jsonl", [record("q2", ids=True), record("q1", ids=True)])
    out = load_benchmark(lab, ids_path=ids)
    t = out[0]["S_star"][1]
    assert (t["s"], t["r"], t["o"], t["s_id"], t["r_id"], t["o_id"]) == ("b", "q", "c", "Qb", "Pq", "Qc")
    assert out[1]["S_stale"][0]["s_id"] == "Qa"


@pytest.mark.parametrize(
    ("mutate", "pattern"),
    [
        (lambda r: r.pop("t_query"), "missing field 't_query'"),
        (lambda r: r.update(t_query="1994"), "field 't_query' is '1994'"),
        (lambda r: r.update(t_query=True), "field 't_query' is True"),
        (lambda r: r.update(split="validation"), "unknown split 'validation'"),
        (lambda r: r.update(S_star=[]), "empty S_star"),
        (lambda r: r.update(S_dist={"s": "a"}), "field 'S_dist' is a dict"),
        (lambda r: r["S_star"][1].pop("o"), r"S_star\[1\] lacks o \(label space\)"),
        (lambda r: r["S_stale"][0].pop("t_end"), r"S_stale\[0\] has no t_end"),
        (lambda r: r["S_star"][0].update(t_start="x"), r"S_star\[0\].t_start is 'x'"),
        (lambda r: r.pop("complexity"), "missing field 'complexity'"),
        (lambda r: r.update(question=None), "field 'question' is None"),
    ],
)
def test_invalid_records_name_file_and_line(tmp_path, mutate, pattern):
    bad = record("q2")
    mutate(bad)
    path = write(tmp_path / "b.jsonl", [record("q1"), bad])
    with pytest.raises(InputError, match=pattern) as info:
        load_benchmark(path)
    assert info.value.line == 2 and str(path) in str(info.value)


def test_truncated_and_non_json_lines(tmp_path):
    path = write(tmp_path / "b.jsonl", [record()], raw_tail='{"id": "q2", "split": ')
    with pytest.raises(InputError, match="truncated JSON") as info:
        load_benchmark(path)
    assert info.value.line == 2
    path = write(tmp_path / "c.jsonl", [record()], raw_tail="not json\n")
    with pytest.raises(InputError, match="not valid JSON"):
        load_benchmark(path)
    path = write(tmp_path / "d.jsonl", [record()], raw_tail="[1, 2]\n")
    with pytest.raises(InputError, match="JSON array"):
        load_benchmark(path)


def test_duplicate_id_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="duplicate question id 'q1'"):
        load_benchmark(write(tmp_path / "b.jsonl", [record(), record()]))
    with pytest.raises(MissingDataError):
        load_benchmark(tmp_path / "nope.jsonl")


def test_id_merge_mismatches(tmp_path):
    lab = write(tmp_path / "l.jsonl", [record("q1")])
    other = record("q1", ids=True)
    other["S_star"] = other["S_star"][:1]
    with pytest.raises(InputError, match="S_star of 'q1' has 1 triples"):
        load_benchmark(lab, write(tmp_path / "i.jsonl", [other]))
    other = record("q1", ids=True)
    other["S_dist"][0]["t_start"] = 1500.0
    with pytest.raises(InputError, match=r"S_dist\[0\].t_start"):
        load_benchmark(lab, write(tmp_path / "i2.jsonl", [other]))
    with pytest.raises(InputError, match="not in"):
        load_benchmark(lab, write(tmp_path / "i3.jsonl", [record("zz", ids=True)]))
    # issue 13: a benchmark.jsonl covering only some questions is accepted (SPEC §2.3
    # fallback); the question without a twin stays in the label space.
    lab2 = write(tmp_path / "l2.jsonl", [record("q1"), record("q2")])
    q1, q2 = load_benchmark(lab2, write(tmp_path / "i4.jsonl", [record("q1", ids=True)]))
    assert "s_id" in q1["S_star"][0] and "s_id" not in q2["S_star"][0]


def test_load_flags(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_text('{"id": "q1", "stale_functional": true, "dist_functional": false, "extra": 1}\n', encoding="utf-8")
    assert load_flags(path) == {"q1": {"stale_functional": True, "dist_functional": False}}
    path.write_text('{"id": "q1", "stale_functional": "yes", "dist_functional": false}\n', encoding="utf-8")
    with pytest.raises(InputError, match="stale_functional"):
        load_flags(path)
    path.write_text('{"id": "q1", "stale_functional": true}\n', encoding="utf-8")
    with pytest.raises(InputError, match="dist_functional"):
        load_flags(path)


def test_id_only_benchmark_loads(tmp_path):
    recs = [record("q1", ids=True)]
    assert load_benchmark(write(tmp_path / "benchmark.jsonl", copy.deepcopy(recs))) == recs


def _record(qid="q1", **changes):
    triple = {"s": "a", "r": "p", "o": "b", "t_start": 1994.0, "t_end": 1994.0}
    record = {"id": qid, "split": "test", "question": "?", "answer": "b", "t_query": 1994.0, "complexity": "1hop",
              "operator_type": "point_in_time", "S_star": [triple], "S_dist": [triple], "S_stale": [triple]}
    record.update(changes)
    return record


@pytest.mark.parametrize(("changes", "expected"), [
    ({"t_query": float("nan")}, "field 't_query' is nan"),
    ({"t_query": float("inf")}, "field 't_query' is inf"),
    ({"S_star": [{"s": "a", "r": "p", "o": "b", "t_start": 1995.0, "t_end": 1994.0}]}, "ends before it starts"),
    ({"S_dist": [{"s": "a", "r": "p", "o": "b", "t_start": float("nan"), "t_end": 1994.0}]}, r"S_dist\[0\]\.t_start is nan"),
])
def test_impossible_values_are_errors_naming_the_line(tmp_path, changes, expected):
    path = tmp_path / "benchmark_labelled.jsonl"
    path.write_text(json.dumps(_record("q0")) + "\n" + json.dumps(_record(**changes)) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=expected) as err:
        load_benchmark(path)
    assert err.value.line == 2


def test_a_duplicate_id_in_benchmark_jsonl_names_the_line(tmp_path):
    labelled = tmp_path / "benchmark_labelled.jsonl"
    labelled.write_text(json.dumps(_record("q1")) + "\n", encoding="utf-8")
    ids = tmp_path / "benchmark.jsonl"
    twin = {"id": "q1", **{k: [{"s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 1994.0, "t_end": 1994.0}]
                           for k in ("S_star", "S_dist", "S_stale")}}
    ids.write_text(json.dumps(twin) + "\n" + json.dumps(twin) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="duplicate question id 'q1' \\(first on line 1\\)") as err:
        load_benchmark(labelled, ids)
    assert err.value.line == 2 and err.value.path == str(ids)
