"""TRP/CCR per question and aggregate (SPEC §3.1, §3.2): worked examples, errors, properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.eval import published_aggregate, published_score

from eval import aggregate, score_question
from tempbench_core.errors import EvidenceError, TempbenchError


def T(s, r, o, t0, t1=None, ids=False, labels=True):
    """A triple dict in label and/or id space (ids are the labels upper-cased with a Q)."""
    t1 = t0 if t1 is None else t1
    d = {}
    if labels:
        d.update(s=s, r=r, o=o)
    if ids:
        d.update(s_id="Q" + s.upper(), r_id="P" + r.upper(), o_id="Q" + o.upper())
    d.update(t_start=float(t0), t_end=float(t1))
    return d


def question(star, tq=1994.0, **extra):
    q = {"id": "q1", "complexity": "2hop", "operator_type": "point_in_time", "t_query": tq, "S_star": star}
    q.update(extra)
    return q


GOLD = [T("a", "p", "b", 1994), T("b", "q", "c", 1994)]


# ---------------------------------------------------------------- worked examples
def test_perfect_retrieval():
    row = score_question(question(GOLD), list(GOLD))
    assert row == {"id": "q1", "complexity": "2hop", "operator": "point_in_time", "n_ret": 2, "hits": 2,
                   "n_gold": 2, "trp": 1.0, "ccr": 1}
    assert list(row) == ["id", "complexity", "operator", "n_ret", "hits", "n_gold", "trp", "ccr"]


def test_one_distractor_added():
    row = score_question(question(GOLD), [*GOLD, T("a", "p", "x", 1994)])
    assert (row["n_ret"], row["hits"], row["trp"], row["ccr"]) == (3, 2, 2 / 3, 1)


def test_stale_only():
    row = score_question(question(GOLD), [T("a", "p", "b", 1980), T("b", "q", "c", 2001)])
    assert (row["n_ret"], row["hits"], row["trp"], row["ccr"]) == (2, 0, 0.0, 0)


def test_empty_retrieval():
    row = score_question(question(GOLD), [])
    assert (row["n_ret"], row["hits"], row["n_gold"], row["trp"], row["ccr"]) == (0, 0, 2, None, 0)


def test_repeated_items_count_again():
    row = score_question(question(GOLD), [GOLD[0], GOLD[0], GOLD[0]])
    assert (row["n_ret"], row["hits"], row["trp"], row["ccr"]) == (3, 3, 1.0, 0)


def test_gold_chain_with_repeated_triple():
    star = [T("a", "p", "b", 1994), T("a", "p", "b", 1994), T("b", "q", "c", 1994)]
    row = score_question(question(star), [T("a", "p", "b", 1994), T("b", "q", "c", 1994)])
    assert (row["n_gold"], row["hits"], row["ccr"]) == (2, 2, 1)


def test_window_inclusive_and_interval_items():
    star = [T("a", "p", "b", 1990, 2000)]
    assert score_question(question(star), [T("a", "p", "b", 1994, 1994)])["hits"] == 1
    assert score_question(question(star), [T("a", "p", "b", 1990, 1994)])["hits"] == 1
    assert score_question(question(star), [T("a", "p", "b", 1994.5, 1999)])["hits"] == 0


def test_label_vs_id_space():
    star_ids = [T("a", "p", "b", 1994, ids=True, labels=False), T("b", "q", "c", 1994, ids=True, labels=False)]
    ev = [T("a", "p", "b", 1994, ids=True, labels=False)]
    row = score_question(question(star_ids), ev)
    assert (row["hits"], row["trp"], row["n_gold"]) == (1, 1.0, 2)
    # labels only on the item, ids only on the gold: a clear error naming both sides
    with pytest.raises(EvidenceError, match="label.*gold.*id"):
        score_question(question(star_ids), [T("a", "p", "b", 1994)])
    # forcing a space the gold lacks names the missing keys
    with pytest.raises(EvidenceError, match="s, r, o"):
        score_question(question(star_ids), ev, key="label")


def test_labels_collide_ids_distinct():
    # two different entities with the same label: distinct in id space, one triple in label space
    star = [
        {"s": "a", "r": "p", "o": "b", "s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 1994.0, "t_end": 1994.0},
        {"s": "a", "r": "p", "o": "b", "s_id": "Q9", "r_id": "P1", "o_id": "Q2", "t_start": 1994.0, "t_end": 1994.0},
    ]
    assert score_question(question(star), [star[0]], key="id")["n_gold"] == 2
    assert score_question(question(star), [star[0]], key="id")["ccr"] == 0
    assert score_question(question(star), [star[0]], key="label")["n_gold"] == 1
    assert score_question(question(star), [star[0]], key="label")["ccr"] == 1
    assert score_question(question(star), [star[0]])["n_gold"] == 2  # auto prefers ids when both carry them


def test_mixed_spaces_in_one_evidence_list():
    star = [T("a", "p", "b", 1994, ids=True), T("b", "q", "c", 1994, ids=True)]
    ev = [T("a", "p", "b", 1994, ids=True, labels=False), T("b", "q", "c", 1994, ids=False), ("b", "q", "c", 1994, 1994)]
    row = score_question(question(star), ev)
    assert (row["n_ret"], row["hits"], row["n_gold"], row["ccr"]) == (3, 3, 2, 1)


def test_tuples_compared_in_gold_space():
    row = score_question(question(GOLD), [("a", "p", "b", 1994, 1994), ["b", "q", "c", "1994", 1994.0]])
    assert (row["hits"], row["ccr"]) == (2, 1)
    star_ids = [T("a", "p", "b", 1994, ids=True, labels=False)]
    assert score_question(question(star_ids), [("QA", "PP", "QB", 1994, 1994)])["hits"] == 1


def test_generator_consumed_once():
    consumed = []

    def gen():
        for t in GOLD:
            consumed.append(t)
            yield t

    row = score_question(question(GOLD), gen())
    assert row["n_ret"] == 2 and len(consumed) == 2


def test_empty_s_star_scores_zero():
    row = score_question(question([]), [T("a", "p", "b", 1994)])
    assert (row["n_gold"], row["ccr"], row["hits"]) == (0, 0, 0)


def test_missing_fields_give_none_slices():
    row = score_question({"t_query": 1994, "S_star": GOLD}, GOLD)
    assert row["id"] is None and row["complexity"] is None and row["operator"] is None


@pytest.mark.parametrize(
    ("item", "pattern"),
    [
        (("a", "p", "b", 1994), r"4 fields; expected 5"),
        (("a", "p", "b", 1994, 1994, 1), r"6 fields"),
        ({"s": "a", "r": "p", "t_start": 1, "t_end": 1}, r"missing o \(label space\) or s_id, r_id, o_id"),
        ({"s": "a", "r": "p", "o": "b", "t_end": 1994}, r"has no t_start"),
        ({"s": "a", "r": "p", "o": "b", "t_start": 1994}, r"has no t_end"),
        ({"s": "a", "r": "p", "o": "b", "t_start": None, "t_end": 1994}, r"t_start is None"),
        ({"s": "a", "r": "p", "o": "b", "t_start": "soon", "t_end": 1994}, r"t_start is 'soon'"),
        ("a p b", r"is str"),
        (42, r"is int"),
    ],
)
def test_malformed_evidence_names_what_is_missing(item, pattern):
    with pytest.raises(EvidenceError, match=pattern) as info:
        score_question(question(GOLD), [GOLD[0], item])
    assert "evidence item 1" in str(info.value) and "'q1'" in str(info.value)
    assert isinstance(info.value, TempbenchError)


def test_malformed_question_and_key():
    with pytest.raises(EvidenceError, match="no S_star"):
        score_question({"id": "x", "t_query": 1}, [])
    with pytest.raises(EvidenceError, match="no t_query"):
        score_question({"id": "x", "S_star": GOLD}, [])
    with pytest.raises(EvidenceError, match=r"S_star\[0\] has no t_end"):
        score_question(question([{"s": "a", "r": "p", "o": "b", "t_start": 1}]), [])
    with pytest.raises(EvidenceError, match="unknown key space"):
        score_question(question(GOLD), [], key="qid")
    with pytest.raises(EvidenceError, match="expected an iterable"):
        score_question(question(GOLD), None)


def test_aggregate_worked_example():
    rows = [
        {"id": 1, "complexity": "1hop", "operator": "interval", "n_ret": 2, "hits": 1, "n_gold": 1, "trp": 0.5, "ccr": 1},
        {"id": 2, "complexity": "2hop", "operator": "interval", "n_ret": 0, "hits": 0, "n_gold": 2, "trp": None, "ccr": 0},
        {"id": 3, "complexity": "1hop", "operator": "point_in_time", "n_ret": 4, "hits": 4, "n_gold": 1, "trp": 1.0, "ccr": 1},
        {"id": 4, "complexity": None, "operator": "point_in_time", "n_ret": 2, "hits": 0, "n_gold": 1, "trp": 0.0, "ccr": 0},
    ]
    agg = aggregate(rows)
    assert list(agg) == ["n_questions", "coverage", "TRP_macro", "TRP_micro", "CCR", "by_complexity", "by_operator"]
    assert agg["n_questions"] == 4 and agg["coverage"] == 0.75
    assert agg["TRP_macro"] == pytest.approx(0.5) and agg["TRP_micro"] == 5 / 8 and agg["CCR"] == 0.5
    assert list(agg["by_complexity"]) == ["1hop", "2hop", None]  # ordered by str(value)
    assert agg["by_complexity"]["2hop"] == {"n": 1, "TRP": 0.0, "CCR": 0.0}
    assert agg["by_operator"]["interval"] == {"n": 2, "TRP": 0.5, "CCR": 0.5}
    assert aggregate([]) == {"n_questions": 0}
    assert list(aggregate(rows, by=("operator",))) == ["n_questions", "coverage", "TRP_macro", "TRP_micro", "CCR", "by_operator"]


def test_aggregate_nothing_retrieved():
    rows = [{"id": 1, "complexity": "1hop", "operator": "x", "n_ret": 0, "hits": 0, "n_gold": 1, "trp": None, "ccr": 0}]
    agg = aggregate(iter(rows))
    assert (agg["coverage"], agg["TRP_macro"], agg["TRP_micro"], agg["CCR"]) == (0.0, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------- properties against the published scorer
ENT = st.sampled_from(["a", "b", "c", "d"])
REL = st.sampled_from(["p", "q"])
YEAR = st.integers(1990, 1996)


@st.composite
def triple(draw, ids):
    t0 = draw(YEAR)
    t1 = draw(st.one_of(st.just(t0), st.integers(t0, 1998)))
    return T(draw(ENT), draw(REL), draw(ENT), t0, t1, ids=ids, labels=not ids)


@st.composite
def case(draw):
    ids = draw(st.booleans())
    star = draw(st.lists(triple(ids), min_size=1, max_size=4))
    ev = draw(st.lists(st.one_of(triple(ids), st.sampled_from(star)), max_size=8))
    if not ids and draw(st.booleans()):
        ev = [(t["s"], t["r"], t["o"], t["t_start"], t["t_end"]) if i % 2 else t for i, t in enumerate(ev)]
    q = question(star, tq=float(draw(YEAR)), complexity=draw(st.sampled_from(["1hop", "2hop", "3+hop"])),
                 operator_type=draw(st.sampled_from(["interval", "point_in_time"])))
    return q, ev


@settings(max_examples=300, deadline=None)
@given(case())
def test_equals_published_scorer_in_conformance_domain(c):
    q, ev = c
    ours = score_question(q, iter(ev))
    assert ours == published_score(q, ev)
    assert ours["trp"] is None or 0.0 <= ours["trp"] <= 1.0
    assert ours["ccr"] in (0, 1)
    assert 0 <= ours["hits"] <= ours["n_ret"] == len(ev)


@settings(max_examples=100, deadline=None)
@given(st.lists(case(), max_size=12))
def test_aggregate_equals_published_and_coverage_counts(cases):
    rows = [score_question(q, ev) for q, ev in cases]
    agg = aggregate(rows)
    assert agg == published_aggregate([published_score(q, ev) for q, ev in cases])
    if rows:
        assert agg["coverage"] * len(rows) == pytest.approx(sum(1 for _, ev in cases if ev))
        assert sum(s["n"] for s in agg["by_complexity"].values()) == len(rows)
        assert 0.0 <= agg["TRP_macro"] <= 1.0 and 0.0 <= agg["CCR"] <= 1.0
