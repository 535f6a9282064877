"""The fast path of :func:`eval.keyspace.read_items` reads what the item-by-item path reads.

A ``list`` of items takes the fast path (C-level passes); any other iterable
(here the same items as a ``tuple``) is read item by item by ``_read_item``,
which names the problems. Both must give the same :class:`QuestionRead`, or
the same error, for every kind of value: numeric and non-numeric times,
strings that ``float()`` reads, booleans, NaN, huge ints, non-string and
unhashable ``s, r, o``, missing keys, odd scores.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval.evidence import read_question
from eval.keyspace import read_items
from tempbench_core.errors import EvidenceError

LABELS = ["a", "b", "Zoë", "東京"]
IDS = ["Q1", "Q2", "P1"]

GOLD = [
    {"s": "a", "r": "b", "o": "Zoë", "s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 1990, "t_end": 2010},
    {"s": "Zoë", "r": "b", "o": "東京", "s_id": "Q2", "r_id": "P1", "o_id": "Q1", "t_start": 2000.0, "t_end": 2000.0},
]

TIMES = st.one_of(
    st.integers(1900, 2100),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([True, False, "2000", " 1999.5 ", "nan", "year", "", None, [2000], {}, 10**400, -0.0]),
)
VALUES = st.one_of(st.sampled_from(LABELS + IDS), st.sampled_from([1, 2.5, None, ("Q1",), ["Q1"], {"x": 1}, True]))
SCORES = st.one_of(st.floats(allow_nan=True), st.integers(-5, 5),
                   st.sampled_from([None, True, "1.5", "high", [1.0], 10**400]))


@st.composite
def items(draw: st.DrawFn) -> object:
    item: dict[str, object] = {}
    for keys, pool in ((("s", "r", "o"), LABELS), (("s_id", "r_id", "o_id"), IDS)):
        if draw(st.integers(0, 9)) == 0:
            continue  # this space left out
        for k in keys:
            item[k] = draw(st.sampled_from(pool)) if draw(st.integers(0, 5)) else draw(VALUES)
    for k in ("t_start", "t_end"):
        if draw(st.integers(0, 29)):
            item[k] = draw(st.integers(1980, 2020)) if draw(st.booleans()) else draw(TIMES)
    if draw(st.booleans()):
        item["score"] = draw(SCORES)
    if draw(st.integers(0, 29)) == 0:
        return (item.get("s"), item.get("r"), item.get("o"), item.get("t_start"), item.get("t_end"))
    return item


def _outcome(question: dict[str, object], evidence: object, ties: object, key: str) -> str:
    try:
        # repr: NaN compares unequal to itself, and -0.0 must stay -0.0
        return repr(read_question(question, evidence, ties, key))
    except EvidenceError as exc:
        return f"EvidenceError: {exc}"


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(items(), max_size=6), st.lists(items(), max_size=3), st.sampled_from(["auto", "label", "id"]),
       st.sampled_from([2000, 1995.5]))
def test_fast_path_reads_as_item_by_item(evidence: list[object], ties: list[object], key: str, tq: float) -> None:
    question = {"id": "q", "t_query": tq, "S_star": GOLD}
    assert _outcome(question, evidence, ties, key) == _outcome(question, tuple(evidence), tuple(ties), key)


def test_fast_path_reads_common_values() -> None:
    """Numeric-string times, int times and non-string ids are read (not rejected) on the fast path."""
    items = [{"s_id": 1, "r_id": "P1", "o_id": "Q2", "t_start": "1990", "t_end": 2010, "score": 2}]
    raw = read_items(items, "evidence", "q", {"id", "label"}, "auto")
    assert raw.srots == [(1, "P1", "Q2")] and raw.t_start == [1990.0] and raw.t_end == [2010.0]
    assert raw.scores == [2.0] and type(raw.t_end[0]) is float
    assert read_items([], "evidence", "q", {"id"}, "auto") == ([], [], [], [], [])
    nan = read_items([{"s": "a", "r": "b", "o": "c", "t_start": "nan", "t_end": math.inf}], "e", "q", {"label"}, "auto")
    assert math.isnan(nan.t_start[0]) and math.isnan(nan.scores[0])


@pytest.mark.parametrize("bad", ["year", None, [1990], 10**400])
def test_fast_path_leaves_unreadable_times_to_the_item_reader(bad: object) -> None:
    items = [{"s": "a", "r": "b", "o": "c", "t_start": bad, "t_end": 2000}]
    with pytest.raises(EvidenceError, match="evidence item 0 of q: t_start"):
        read_items(items, "evidence", "q", {"label"}, "auto")


def test_unhashable_values_are_named_by_read_question() -> None:
    question = {"id": "q", "t_query": 2000, "S_star": GOLD}
    evidence = [{"s_id": ["Q1"], "r_id": "P1", "o_id": "Q2", "t_start": 2000, "t_end": 2000}]
    with pytest.raises(EvidenceError, match="evidence item 0 of question 'q' has s/r/o values"):
        read_question(question, evidence)
