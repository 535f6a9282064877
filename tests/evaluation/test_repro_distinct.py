"""The runs of a configuration prepared together (eval.repro.distinct) give what each run prepared alone gives.

On random benchmarks and runs (windows, repeats, ties, homonyms, 5-lists,
label-only and id-only evidence, missing questions, splits, every key space),
an original and a reproduction sharing some records are prepared by the group
path and run by run (:func:`eval.repro.job.prepare`, the reference): the same
questions, the same per-question values and tie ranges (bit for bit), the
same key space, documents whose codes order and equate like the ids, and the
same error message when a run cannot be read. :func:`eval.plain_table.plain_table`
gives resolve's table wherever it gives one.
"""

from __future__ import annotations

import copy
import json
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_columnar_scoring import run_case

from eval.evidence import BASE_ARRAYS, resolve
from eval.plain_table import plain_table
from eval.repro.doclists import encode
from eval.repro.job import Prepared, _Failed, _group_task, _Job, _prepare_task
from eval.repro.values import parse_measures, per_question_names
from tempbench_core.errors import EvidenceError
from tempbench_core.runfile import dumps_record

MEASURES = [m for _, m in parse_measures(per_question_names())]
SLOTS = [("original", "x"), ("reproduced", "x")]


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def _same_docs(new: list, old: list) -> None:
    """The group's codes order and equate like the ids (encode's codes, the reference's)."""
    ref = encode(old)
    for got, want in zip(new, ref, strict=True):
        assert _same_array(got.lengths, want.lengths)
        assert got.codes.shape == want.codes.shape
    got_all = np.concatenate([d.codes.ravel() for d in new])
    want_all = np.concatenate([d.codes.ravel() for d in ref])
    assert _same_array(got_all < 0, want_all < 0)
    _, got_rank = np.unique(got_all[got_all >= 0], return_inverse=True)
    _, want_rank = np.unique(want_all[want_all >= 0], return_inverse=True)
    assert _same_array(got_rank.ravel(), want_rank.ravel())


def _reproduction(data, run: dict) -> dict:
    """A second run sharing most records: some dropped, some with their evidence reversed or cut."""
    out = {}
    for qid, rec in run.items():
        change = data.draw(st.integers(0, 5))
        if change == 0:
            continue
        if change == 1:
            rec = copy.deepcopy(rec)
            rec["evidence"] = rec["evidence"][::-1]
        elif change == 2:
            rec = copy.deepcopy(rec)
            rec["evidence"] = rec["evidence"][:1]
        out[qid] = rec
    return out


def _compare(job_new: _Job, job_old: _Job) -> None:
    new = _group_task(job_new, SLOTS)
    old = [_prepare_task(job_old, slot) for slot in SLOTS]
    for got, want in zip(new, old, strict=True):
        assert isinstance(got, _Failed) == isinstance(want, _Failed)
        if isinstance(want, _Failed):
            assert got.message == want.message
            continue
        assert isinstance(want, Prepared)
        assert got.qids == want.qids and got.space == want.space
        for part in ("values", "tie_min", "tie_max"):
            mine, theirs = getattr(got.values, part), getattr(want.values, part)
            assert mine.keys() == theirs.keys()
            for name in theirs:
                assert _same_array(mine[name], theirs[name]), (part, name)
    if not any(isinstance(x, _Failed) for x in old):
        _same_docs([x.docs for x in new], [x.docids for x in old])


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case(), st.data(), st.booleans())
def test_group_equals_each_run_alone(case, data, as_files) -> None:
    questions, run, _flags, split, key = case
    other = _reproduction(data, run)
    with tempfile.TemporaryDirectory() as tmp:
        if as_files:
            runs = {}
            for slot, records in zip(SLOTS, (run, other), strict=True):
                path = Path(tmp) / f"{slot[0]}.jsonl"
                path.write_text("".join(dumps_record(r) for r in records.values()), encoding="utf-8")
                runs[slot] = path
        else:
            runs = {SLOTS[0]: copy.deepcopy(run), SLOTS[1]: other}
        _compare(_Job(runs, questions, MEASURES, split, key, "zero"),
                 _Job(copy.deepcopy(runs), questions, MEASURES, split, key, "zero"))


def test_a_plain_pair_takes_the_group_path(tmp_path: Path) -> None:
    from eval.repro import distinct

    star = [{"s": "a", "r": "p", "o": "b", "s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 1994, "t_end": 1994}]
    questions = [{"id": f"q{i}", "split": "test", "t_query": 1994, "S_star": star} for i in range(3)]
    item = dict(star[0], score=1.0)
    runs = {}
    for slot in SLOTS:
        path = tmp_path / f"{slot[0]}.jsonl"
        path.write_text("".join(dumps_record({"id": q["id"], "evidence": [item, dict(item, o_id="Q3")]})
                                for q in questions), encoding="utf-8")
        runs[slot] = path
    reader = distinct.Reader(questions, "auto", {})
    sources = dict(zip(runs, distinct.file_sources(list(runs.values()), reader), strict=True))
    assert all(source is not None for source in sources.values())
    group = distinct.score_group(sources, None, reader, lambda t, ties: None, lambda slot: slot[0] == "reproduced")
    assert group is not None and set(group.chosen) == set(SLOTS)
    assert group.chosen[SLOTS[0]].rows.tolist() == group.chosen[SLOTS[1]].rows.tolist()  # one row per record
    _compare(_Job(runs, questions, MEASURES, None, "auto", "zero"), _Job(runs, questions, MEASURES, None, "auto", "zero"))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_plain_table_is_resolves_table(case) -> None:
    questions, run, _flags, _split, key = case
    evidence = [run[q["id"]]["evidence"] if q["id"] in run else [] for q in questions]
    ties = [run[q["id"]]["cutoff_ties"] if q["id"] in run else [] for q in questions]
    got = plain_table(questions, evidence, ties, key, {})
    if got is None:
        return
    want = resolve(questions, evidence, ties, key, shared={})
    for name in ("tq", "n_gold", "cls_start", "class_valid"):
        assert _same_array(getattr(got, name), getattr(want, name)), name
    assert got.gold_space == want.gold_space and got.values == want.values and got.code_of == want.code_of
    for part in ("items", "extra"):
        for name in (*BASE_ARRAYS, "start", "q", "pos", "gid", "has_score"):
            assert _same_array(getattr(getattr(got, part), name), getattr(getattr(want, part), name)), (part, name)


def _written_otherwise(record: dict) -> str:
    """One run line of the same record as another tool might write it: keys reversed, integral numbers as
    floats, spaces after separators, a field of its own."""
    def other(value):
        if isinstance(value, dict):
            return {k: other(v) for k, v in reversed(list(value.items()))}
        if isinstance(value, list):
            return [other(v) for v in value]
        if type(value) is int:
            return float(value)
        return value
    return json.dumps({"written_by": "another tool", **other(record)}, separators=(", ", ": ")) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case(), st.data())
def test_a_record_written_otherwise_shares_its_row(case, data) -> None:
    from eval.repro import distinct

    questions, run, _flags, split, key = case
    other = _reproduction(data, run)
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for slot, text in zip(SLOTS, ("".join(dumps_record(r) for r in run.values()),
                                      "".join(_written_otherwise(r) for r in other.values())), strict=True):
            runs[slot] = Path(tmp) / f"{slot[0]}.jsonl"
            runs[slot].write_text(text, encoding="utf-8")
        _compare(_Job(runs, questions, MEASURES, split, key, "zero"), _Job(runs, questions, MEASURES, split, key, "zero"))
        if other != run:
            return
        reader = distinct.Reader(questions, key, {})
        sources = distinct.file_sources(list(runs.values()), reader)
        if any(source is None for source in sources):
            return
        # the same records in other bytes: one row each, shared by both runs
        assert all(a is b for a, b in zip(sources[0].rows, sources[1].rows, strict=True))


def test_records_equal_but_for_the_sign_of_a_zero_keep_their_own_rows(tmp_path: Path) -> None:
    from eval.repro import distinct

    star = [{"s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 0, "t_end": 0}]
    questions = [{"id": "q", "split": "test", "t_query": 0, "S_star": star}]
    item = dict(star[0], score=1.0)
    # == holds item by item (-0.0 == 0.0), yet the original repeats one triple and the other holds two
    lines = {SLOTS[0]: json.dumps({"id": "q", "evidence": [dict(item, t_start=-0.0, t_end=-0.0), item]}) + "\n",
             SLOTS[1]: json.dumps({"id": "q", "evidence": [item, item]}) + "\n"}
    runs = {}
    for slot, line in lines.items():
        runs[slot] = tmp_path / f"{slot[0]}.jsonl"
        runs[slot].write_text(line, encoding="utf-8")
    reader = distinct.Reader(questions, "auto", {})
    original, reproduced = distinct.file_sources(list(runs.values()), reader)
    assert original.rows[0] is not reproduced.rows[0]
    _compare(_Job(runs, questions, MEASURES, None, "auto", "zero"), _Job(runs, questions, MEASURES, None, "auto", "zero"))


def test_plain_table_leaves_what_resolve_must_read(tmp_path: Path) -> None:
    star = [{"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}]
    questions = [{"id": "q", "t_query": 1994, "S_star": star}]
    for evidence in ([["a", "p", "b", 1994, 1994]], [dict(star[0], t_start="1994")], [{"s": "a", "t_start": 1, "t_end": 1}],
                     ({"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994},)):
        assert plain_table(questions, [evidence], [[]], "auto", {}) is None
    assert plain_table([{"id": "q", "S_star": star}], [[]], [[]], "auto", {}) is None  # no t_query: resolve says so
    try:
        resolve([{"id": "q", "S_star": star}], [[]], [[]])
    except EvidenceError:
        pass
    else:  # pragma: no cover
        raise AssertionError("resolve accepts a question without t_query")
    assert plain_table(questions, [[dict(star[0], score=True)]], [[]], "auto", {}, run_form=True) is None
    assert plain_table(questions, [[dict(star[0], score=True)]], [[]], "auto", {}) is not None
