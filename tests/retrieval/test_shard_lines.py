"""A shard's run lines: a record whose floats print alike is written unscanned, with the same bytes.

:func:`retriever.shards._floats_alike` decides, from a retrieved record's
shape, that orjson's bytes are json.dumps's (every score ``0.0`` or at least
``1e-4``, no float among the question's id, split and anchor); a wrong yes
would write ``0.00001`` where Python writes ``1e-05``.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.shards import _floats_alike
from tempbench_core.runfile import dumps_record_bytes

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
SCORES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.floats(min_value=1e-9, max_value=1e-3),
                   st.sampled_from([0.0, -0.0, 1e-4, 9.99e-5, 1e-5, 12.5, math.nan]))
QUESTION_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), TEXT, SCORES,
                            st.lists(SCORES, max_size=2))


def _item(score: float) -> dict:
    return {"s": "A", "r": "rel", "o": "B", "s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 1990, "t_end": 1990,
            "score": score, "line": "A | rel | B | 1990"}


def _record(qid, split, anchor_id, evidence: list[float], ties: list[float]) -> dict:
    return {"id": qid, "split": split, "anchor": {"id": anchor_id, "label": "A", "source": "oracle"},
            "evidence": [_item(s) for s in evidence], "cutoff_ties": [_item(s) for s in ties]}


@settings(max_examples=800, deadline=None)
@given(QUESTION_VALUES, QUESTION_VALUES, QUESTION_VALUES, st.lists(SCORES, max_size=5), st.lists(SCORES, max_size=3))
def test_unscanned_lines_are_the_scanned_lines(qid, split, anchor_id, evidence, ties):
    record = _record(qid, split, anchor_id, evidence, ties)
    assert dumps_record_bytes(record, _floats_alike(record)) == dumps_record_bytes(record)


def test_what_is_alike_and_what_is_not():
    assert _floats_alike(_record("q1", "test", "Q1", [12.5, 0.0, 1e-4], [0.0]))
    assert _floats_alike(_record(7, None, None, [], []))
    assert not _floats_alike(_record("q1", "test", "Q1", [12.5, 5e-5], []))  # 0.00005 against 5e-05
    assert not _floats_alike(_record("q1", "test", "Q1", [12.5], [1e-7]))
    assert not _floats_alike(_record(1e-5, "test", "Q1", [12.5], []))  # the question's own floats are not scores
    assert not _floats_alike(_record("q1", "test", 2.5, [12.5], []))
    assert not _floats_alike(_record("q1", ["x"], "Q1", [12.5], []))


EDGES = [1e-4, math.nextafter(1e-4, math.inf), 1.5e-4, 0.1, 1.0, 123.456, 1e15, 9999999999999998.0, 1e16,
         math.nextafter(1e16, 0), 1.5e16, 1e17, 1.2345678901234568e17, 1e22, 1e300, 1.7976931348623157e308]


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.floats(min_value=1e-4, allow_infinity=False), st.floats(max_value=-1e-4, allow_infinity=False),
                 st.floats(min_value=1e-4, max_value=1e-2), st.floats(min_value=1e15, max_value=1e18),
                 st.sampled_from(EDGES + [-x for x in EDGES])))
def test_orjson_writes_every_float_from_1e_minus_4_as_python_does(x):
    """The claim `_floats_alike` rests on, at both ends (the large floats in exponent form as well)."""
    import orjson

    assert orjson.dumps(x) == repr(x).encode()


def test_below_1e_minus_4_the_forms_differ():
    import orjson

    below = math.nextafter(1e-4, 0)
    assert orjson.dumps(below) != repr(below).encode()
    assert orjson.dumps(9.5e-05) != repr(9.5e-05).encode()


@settings(max_examples=300, deadline=None)
@given(QUESTION_VALUES, QUESTION_VALUES, st.lists(st.one_of(st.just(0.0), st.floats(min_value=1e-4, max_value=1e3)),
                                                   max_size=5))
def test_known_scores_skip_the_scan_with_the_same_answer(qid, split, scores):
    """With every score 0.0 or at least 1e-4 (what ``scores_alike`` vouches for), skipping the scan answers alike."""
    record = _record(qid, split, "Q1", scores[:3], scores[3:])
    assert _floats_alike(record, scores_alike=True) == _floats_alike(record)
    assert dumps_record_bytes(record, _floats_alike(record, scores_alike=True)) == dumps_record_bytes(record)
