"""The table of some of its questions (EvidenceTable.take) is the table those questions resolve to alone.

On the random runs of ``test_columnar_scoring`` (homonyms, repeats, ties, label-only, id-only and 5-list items,
every key space), any selection of questions, in any order, repeats included: the same gold classes and items,
item for item, with ``s, r, o`` read back through the codes (a taken table keeps its parent's code numbering).
And the tie ranges of some rows (``run_values(..., tie_rows=...)``, what ``tempbench repro`` reads of the rows
of a reproduction) are those rows' tie ranges of the whole table, the other rows NaN.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_columnar_scoring import run_case

from eval.evidence import resolve
from eval.measures import RANK_MEASURES
from eval.repro.values import parse_measures, per_question_names, run_values, tie_ranges
from tempbench_core.errors import EvidenceError

MEASURES = [m for _, m in parse_measures(per_question_names())]
SAME_ARRAYS = ("counts", "space", "ts", "te", "cls", "score", "start", "q", "pos", "gid", "has_score")


def _resolved(case):
    questions, run, _flags, _split, key = case
    evidence = [run[q["id"]]["evidence"] if q["id"] in run else [] for q in questions]
    ties = [run[q["id"]]["cutoff_ties"] if q["id"] in run else [] for q in questions]
    try:
        return questions, evidence, ties, key, resolve(questions, evidence, ties, key, shared={})
    except EvidenceError:
        return None


def _equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case(), st.data())
def test_taken_questions_are_those_questions_resolved_alone(case, data) -> None:
    got = _resolved(case)
    if got is None:
        return
    questions, evidence, ties, key, table = got
    rows = data.draw(st.lists(st.integers(0, len(questions) - 1), max_size=2 * len(questions)), label="rows")
    taken = table.take(np.array(rows, dtype=np.int64))
    alone = resolve([questions[i] for i in rows], [evidence[i] for i in rows], [ties[i] for i in rows], key,
                    shared={})
    assert taken.n == alone.n == len(rows)
    assert [q["id"] for q in taken.questions] == [q["id"] for q in alone.questions]
    for name in ("tq", "n_gold", "cls_start", "class_valid"):
        assert _equal(getattr(taken, name), getattr(alone, name)), name
    assert taken.gold_space == alone.gold_space
    for part in ("items", "extra"):
        mine, theirs = getattr(taken, part), getattr(alone, part)
        for name in SAME_ARRAYS:
            assert _equal(getattr(mine, name), getattr(theirs, name)), (part, name)
        for name in ("s", "r", "o"):
            assert [taken.values[c] for c in getattr(mine, name).tolist()] == \
                   [alone.values[c] for c in getattr(theirs, name).tolist()], (part, name)
    for i in range(taken.n):
        assert taken.question(i) == alone.question(i)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case(), st.data(), st.sampled_from(["zero", "skip"]))
def test_tie_ranges_of_some_rows_are_those_rows_of_the_whole_table(case, data, trp_empty) -> None:
    got = _resolved(case)
    if got is None:
        return
    table = got[-1]
    rows = sorted(data.draw(st.sets(st.integers(0, table.n - 1)), label="rows"))
    tie_rows = np.array(rows, dtype=np.int64)
    whole = run_values(table, MEASURES, trp_empty)
    some = run_values(table, MEASURES, trp_empty, tie_rows=tie_rows)
    for name, v in whole.values.items():
        assert _equal(some.values[name], v), name
    assert some.tie_min.keys() == whole.tie_min.keys() and some.tie_max.keys() == whole.tie_max.keys()
    others = np.setdiff1d(np.arange(table.n), tie_rows)
    for ranges, full in ((some.tie_min, whole.tie_min), (some.tie_max, whole.tie_max)):
        for name, v in full.items():
            assert _equal(ranges[name][tie_rows], v[tie_rows]), name
            if trp_empty == "skip" or name != "TRP":
                assert np.isnan(ranges[name][others]).all(), name


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case(), st.data())
def test_tie_ranges_read_from_the_whole_table_equal_those_of_the_taken_rows(case, data) -> None:
    got = _resolved(case)
    if got is None:
        return
    table = got[-1]
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, table.n - 1)), label="rows")), dtype=np.int64)
    measures = list(RANK_MEASURES)
    whole = tie_ranges(table, measures, rows, whole_share=0.0)  # always the whole table
    taken = tie_ranges(table, measures, rows, whole_share=2.0)  # always the taken rows
    assert whole.keys() == taken.keys()
    for name, part in taken.items():
        assert _equal(whole[name], part), name
