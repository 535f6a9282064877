"""The benchmark kept in the per-user cache (retriever.benchmark_cache): the same records, or none kept."""

from __future__ import annotations

import json
import math
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import retriever.benchmark as benchmark
from retriever.benchmark import load_benchmark
from retriever.benchmark_cache import entry_path, read_entry
from tempbench_core.errors import InputError, MissingDataError


def _triple(s: str, o: str, t: float, ids: bool = False) -> dict:
    if ids:
        return {"s_id": "Q" + s, "r_id": "P1", "o_id": "Q" + o, "t_start": t, "t_end": t}
    return {"s": s, "r": "p", "o": o, "t_start": t, "t_end": t}


def _record(qid: str, ids: bool = False, **extra) -> dict:
    rec = {"id": qid, "split": "test", "question": "Who?", "answer": "c", "t_query": 1994.0,
           "complexity": "2hop", "operator_type": "point_in_time",
           "S_star": [_triple("a", "b", 1994.0, ids), _triple("b", "c", 1994.0, ids)],
           "S_dist": [_triple("a", "x", 1990.0, ids)], "S_stale": [_triple("a", "b", 1980.0, ids)]}
    rec.update(extra)
    return rec


def _write(path: Path, records: list[dict], text: str | None = None) -> Path:
    path.write_text(text if text is not None else "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    labelled = _write(tmp_path / "benchmark_labelled.jsonl", [_record("q1", extra={"k": [1, 2.5, None]}), _record("q2")])
    ids = _write(tmp_path / "benchmark.jsonl", [_record("q1", ids=True), _record("q2", ids=True)])
    return labelled, ids


def _no_checks(monkeypatch):
    """Reading the files again fails the test: only a kept entry can answer."""
    def refuse(*_):
        raise AssertionError("the files were read again")
    monkeypatch.setattr(benchmark, "_read_benchmark", refuse)


def test_a_second_load_reads_the_kept_records_equal_in_value_order_and_type(files, monkeypatch):
    first = load_benchmark(*files)
    _no_checks(monkeypatch)
    second = load_benchmark(*files)
    assert second == first
    assert orjson.dumps(second) == orjson.dumps(first)  # key order, ints and floats as they were
    assert second[0]["S_star"][0]["s_id"] == "Qa" and second[0]["extra"] == {"k": [1, 2.5, None]}


def test_a_changed_file_is_read_again(files, monkeypatch):
    labelled, ids = files
    load_benchmark(labelled, ids)
    _write(labelled, [_record("q1"), _record("q2", question="Who else?")])
    assert load_benchmark(labelled, ids)[1]["question"] == "Who else?"
    assert load_benchmark(labelled)[1]["question"] == "Who else?"  # without the ids: another entry
    assert "s_id" not in load_benchmark(labelled)[1]["S_star"][0]


def test_an_invalid_file_keeps_nothing_and_still_fails_naming_the_line(tmp_path):
    bad = _write(tmp_path / "b.jsonl", [], text=json.dumps(_record("q1")) + "\n" + json.dumps(_record("q2", S_star=[])) + "\n")
    for _ in range(2):
        with pytest.raises(InputError, match=r"b\.jsonl:2: .*empty S_star"):
            load_benchmark(bad)
    found = entry_path(bad, None)
    assert found is not None and not found[0].exists()


def test_a_missing_file_is_the_loaders_error(tmp_path):
    assert entry_path(tmp_path / "none.jsonl", None) is None
    with pytest.raises(MissingDataError, match="none.jsonl"):
        load_benchmark(tmp_path / "none.jsonl")


@pytest.mark.parametrize("damage", [
    lambda data: data[: len(data) // 2],  # cut short
    lambda data: b"",
    lambda data: data.replace(b"Who?", b"Why?", 1),  # one record changed: the checksum fails
    lambda data: data.replace(b"1994.0", b"1995.0", 1),
    lambda data: data.replace(b'"format":1', b'"format":0'),
    lambda data: data.replace(b'"questions":2', b'"questions":3'),
    lambda data: data.replace(b'"key":"', b'"key":"x'),
    lambda data: b"[1, 2, 3]",
])
def test_a_damaged_or_foreign_entry_is_not_read_and_is_written_again(files, damage):
    first = load_benchmark(*files)
    entry, key = entry_path(*files)
    entry.write_bytes(damage(entry.read_bytes()))
    assert read_entry(entry, key) is None
    assert load_benchmark(*files) == first
    assert read_entry(entry, key) == first


def test_values_json_would_not_give_back_are_never_kept(tmp_path, monkeypatch):
    # NaN is read by Python's json (not orjson): kept, it would come back as null
    path = _write(tmp_path / "b.jsonl", [], text=json.dumps(_record("q1", extra=float("nan"))) + "\n")
    loaded = load_benchmark(path)
    assert math.isnan(loaded[0]["extra"])
    assert not entry_path(path, None)[0].exists()
    big = _write(tmp_path / "c.jsonl", [], text=json.dumps(_record("q1", extra=2**70)) + "\n")
    assert type(load_benchmark(big)[0]["extra"]) is int and load_benchmark(big)[0]["extra"] == 2**70
    assert not entry_path(big, None)[0].exists()


def test_an_unwritable_cache_costs_only_time(files, monkeypatch, tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    monkeypatch.setenv("TEMPBENCH_CACHE", str(blocker))
    assert load_benchmark(*files)[1]["id"] == "q2"


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(extras=st.lists(st.dictionaries(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=5)
                                       .filter(lambda k: k not in _record("q")), _VALUES, max_size=3),
                       min_size=1, max_size=3))
def test_kept_records_are_what_the_files_give(tmp_path_factory, extras):
    folder = tmp_path_factory.mktemp("bench")
    records = [_record(f"q{i}", **extra) for i, extra in enumerate(extras)]
    path = _write(folder / "b.jsonl", records)
    first = load_benchmark(path)
    again = load_benchmark(path)
    assert again == first == benchmark._read_benchmark(path, None)
    assert [json.dumps(r) for r in again] == [json.dumps(r) for r in first]  # order and types too


def test_an_entry_made_under_other_rules_is_not_read(files, monkeypatch, tmp_path):
    load_benchmark(*files)
    found = entry_path(*files)
    edited = tmp_path / "benchmark.py"
    edited.write_bytes(Path(benchmark.__file__).read_bytes() + b"\n# a rule changed\n")
    monkeypatch.setattr(benchmark, "__file__", str(edited))
    assert entry_path(*files)[1] != found[1]


def test_an_empty_benchmark_is_kept_as_empty(tmp_path, monkeypatch):
    path = _write(tmp_path / "b.jsonl", [], text="")
    assert load_benchmark(path) == []
    _no_checks(monkeypatch)
    assert load_benchmark(path) == []
