"""The table kernels (eval.evidence and the metric modules, behind eval.scoring.evaluate) equal the per-question path.

Random runs over a tiny world, so that matches, homonyms, repeats and ties are
frequent: label-only, id-only and two-space triples and items, 5-lists, repeated
whole items, equal scores across the cut-off, items without scores, questions
missing from the run, mixed key spaces inside one list, negatives. Three
references: the per-question implementation of ``tests/reference/per_question.py``
(``evaluate_reference``: ``resolve_question`` and the per-question metric
functions), the published
scorer and the slow rank metrics of ``tests/reference/eval.py`` (independent of
``eval``) where SPEC §3.1's conformance domain applies.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.eval import published_score, slow_rank
from reference.per_question import evaluate_reference
from reference.per_question import resolve_question as reference_resolve

from eval.evidence import resolve_question
from eval.scoring import evaluate, to_json
from tempbench_core.errors import EvidenceError, RunMismatchError

ENTITIES = ("a", "b", "c")
RELATIONS = ("p", "q")
YEARS = (1990, 1994, 1994.0, 2000)
TQ = 1994


def _ident(label: str) -> str:
    return "Q" + str(ENTITIES.index(label) + 1) if label in ENTITIES else "P" + str(RELATIONS.index(label) + 1)


@st.composite
def triple(draw, spaces: str) -> dict:
    s, o = draw(st.sampled_from(ENTITIES)), draw(st.sampled_from(ENTITIES))
    r = draw(st.sampled_from(RELATIONS))
    ts = draw(st.sampled_from(YEARS))
    te = max(ts, draw(st.sampled_from(YEARS)))
    out: dict = {}
    if spaces in ("label", "both"):
        out.update(s=s, r=r, o=o)
    if spaces in ("id", "both"):
        # a homonym now and then: the same label with another id
        hom = draw(st.integers(0, 5)) == 0
        out.update(s_id=_ident(s) + ("0" if hom else ""), r_id=_ident(r), o_id=_ident(o))
    out.update(t_start=ts, t_end=te)
    return out


@st.composite
def question(draw, i: int) -> dict:
    spaces = draw(st.sampled_from(("label", "id", "both", "both")))
    star = draw(st.lists(triple(spaces), min_size=1, max_size=3))
    q = {"id": f"q{i}", "split": draw(st.sampled_from(("test", "dev"))), "question": "?", "answer": "a",
         "t_query": draw(st.sampled_from((TQ, float(TQ), 1990.0))), "complexity": draw(st.sampled_from(("1hop", "2hop"))),
         "operator_type": draw(st.sampled_from(("point_in_time", "interval"))), "S_star": star}
    for variant in ("S_stale", "S_dist"):
        if draw(st.booleans()):
            # one hop replaced (evaluable), sometimes two (not evaluable)
            other = [dict(t) for t in star]
            for j in draw(st.lists(st.integers(0, len(star) - 1), min_size=1, max_size=2, unique=True)):
                other[j] = draw(triple(spaces))
            q[variant] = other
    return q


@st.composite
def evidence_list(draw, q: dict, form: str) -> list:
    pool = list(q["S_star"]) + list(q.get("S_stale", [])) + list(q.get("S_dist", []))
    items = []
    for _ in range(draw(st.integers(0, 7))):
        if pool and draw(st.booleans()):
            it = dict(draw(st.sampled_from(pool)))
            if draw(st.integers(0, 3)) == 0:
                it["t_start"] = it["t_end"] = draw(st.sampled_from(YEARS))
        else:
            it = draw(triple(draw(st.sampled_from(("label", "id", "both")))))
        if form == "label":
            it = {k: v for k, v in it.items() if k not in ("s_id", "r_id", "o_id")}
        elif form == "id":
            it = {k: v for k, v in it.items() if k not in ("s", "r", "o")}
        if form == "list5":
            names = ("s", "r", "o") if "s" in it else ("s_id", "r_id", "o_id")
            it = [it.get(names[0]), it.get(names[1]), it.get(names[2]), it["t_start"], it["t_end"]]
            if None in it:
                continue
        items.append(it)
        if items and draw(st.integers(0, 4)) == 0:
            items.append(items[-1])  # a repeated whole item
    if form != "list5" and draw(st.integers(0, 4)) > 0:
        # scores in rank order, few distinct values so that groups of equal scores are common
        scores = sorted(draw(st.lists(st.sampled_from((1.0, 2.0, 3.0)), min_size=len(items), max_size=len(items))),
                        reverse=True)
        for it, sc in zip(items, scores, strict=True):
            it["score"] = sc
    return items


@st.composite
def run_case(draw):
    n = draw(st.integers(1, 6))
    questions = [draw(question(i)) for i in range(n)]
    form = draw(st.sampled_from(("auto", "auto", "label", "id", "list5")))
    run = {}
    for q in questions:
        if draw(st.integers(0, 5)) == 0:
            continue  # missing from the run
        known = draw(evidence_list(q, "auto" if form == "auto" else form))
        n_ret = draw(st.integers(0, len(known)))
        evidence, rest = known[:n_ret], known[n_ret:]
        last = evidence[-1].get("score") if evidence and isinstance(evidence[-1], dict) else None
        ties = [t for t in rest if isinstance(t, dict) and last is not None and t.get("score") == last]
        run[q["id"]] = {"id": q["id"], "evidence": evidence, "cutoff_ties": ties}
    flags = {q["id"]: {"stale_functional": draw(st.booleans()), "dist_functional": draw(st.booleans())}
             for q in questions} if draw(st.booleans()) else None
    split = draw(st.sampled_from((None, "test", "all")))
    key = draw(st.sampled_from(("auto", "auto", "label", "id")))
    return questions, run, flags, split, key


def _evaluations(questions, run, flags, split, key):
    try:
        ref = evaluate_reference(run, questions, flags, split=split, key=key)
    except (EvidenceError, RunMismatchError) as exc:
        with pytest.raises(type(exc)) as got:
            evaluate(run, questions, flags, split=split, key=key)
        assert str(got.value) == str(exc)
        return None, None
    return evaluate(run, questions, flags, split=split, key=key), ref


def _same(a, b) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_columnar_equals_per_question(case):
    questions, run, flags, split, key = case
    ev, ref = _evaluations(questions, run, flags, split, key)
    if ev is None:
        return
    assert_same_evaluation(ev, ref)


def assert_same_evaluation(ev, ref) -> None:
    """Two evaluations agree: per-question rows and metrics, negatives, the score object bit for bit, resolutions."""
    assert ev.rows == ref.rows
    for name, values in ref.rank["per_question"].items():
        np.testing.assert_array_equal(ev.rank["per_question"][name], values)
    for name, values in ref.ties["per_question"].items():
        np.testing.assert_array_equal(ev.ties["per_question"][name], values)
    assert ev.negatives == ref.negatives
    assert ev.extra == ref.extra
    # the whole score object, bit for bit (bootstrap included)
    assert _same(to_json(ev, n_boot=20), to_json(ref, n_boot=20))
    # the table's view of each question is the reference resolution, cut-off ties included
    views = [ev.table.question(i) for i in range(ev.table.n)]
    assert [r.items for r in views] == [r.items for r in ref.resolved]
    assert [r.extra for r in views] == [r.extra for r in ref.resolved]


def _plain(res) -> tuple:
    """A resolution's fields as plain values (the two implementations have their own classes)."""
    return (res.qid, res.complexity, res.operator, res.tq, [tuple(it) for it in res.items], res.n_gold, res.gold_space,
            res.class_valid, res.class_keys, [tuple(it) for it in res.extra],
            [(g.keys, g.t_start, g.t_end) for g in res.gold], res.key)


def _one_space(q: dict, items: list) -> bool:
    """SPEC §3.1's conformance domain: the gold and every item carry the same single space, or all carry both."""
    def spaces(d):
        return ("s" in d, "s_id" in d)
    gold = {spaces(t) for t in q["S_star"]}
    if len(gold) != 1:
        return False
    g = gold.pop()
    return all(isinstance(it, dict) and spaces(it) == g for it in items) and g != (False, False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_columnar_equals_the_slow_references(case):
    questions, run, _flags, _split, _key = case
    try:
        ev = evaluate(run, questions, None)
    except EvidenceError:
        return
    rank = ev.rank["per_question"]
    for i, (q, row) in enumerate(zip(ev.questions, ev.rows, strict=True)):
        evidence = run[q["id"]]["evidence"]
        if not _one_space(q, evidence):
            continue
        assert row == published_score(q, evidence)
        slow = slow_rank(q, evidence)
        if slow is None:
            assert all(math.isnan(rank[name][i]) for name in rank)
        else:
            for name, value in slow.items():
                assert rank[name][i] == pytest.approx(value, abs=1e-12)


def test_a_malformed_item_is_reported_as_the_per_question_path_reports_it():
    q = {"id": "q0", "t_query": 1994, "S_star": [{"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}]}
    run = {"q0": {"id": "q0", "evidence": [{"s": "a", "r": "p", "o": "b", "t_start": None, "t_end": 1994}]}}
    with pytest.raises(EvidenceError) as ref:
        evaluate_reference(run, [q], None)
    with pytest.raises(EvidenceError) as got:
        evaluate(run, [q], None)
    assert str(got.value) == str(ref.value)


def test_odd_values_are_read_as_the_reference_reads_them():
    q = {"id": "q0", "t_query": 1994, "S_star": [{"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}]}
    for item in ({"s": ["a"], "r": "p", "o": "b", "t_start": 1994, "t_end": 1994},  # unhashable: an error
                 {"s": "a", "r": "p", "o": "b", "t_start": "1994", "t_end": 1994.0},  # a numeric string: read
                 {"s": "a", "r": "p", "o": "b", "t_start": float("nan"), "t_end": 1994},  # NaN: no hit
                 ["a", "p", "b", 1994, 1994], ("a", "p", "b", True, 1994)):
        run = {"q0": {"id": "q0", "evidence": [item, item], "cutoff_ties": []}}
        try:
            ref = evaluate_reference(run, [q], None)
        except EvidenceError as exc:
            with pytest.raises(EvidenceError) as got:
                evaluate(run, [q], None)
            assert str(got.value) == str(exc)
            continue
        ev = evaluate(run, [q], None)
        assert ev.rows == ref.rows and _same(to_json(ev, n_boot=5), to_json(ref, n_boot=5))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_the_table_view_equals_the_reference_resolution(case):
    """A question's view of its one-row table (eval.evidence.resolve_question) is the reference one, errors included."""
    questions, run, _flags, _split, key = case
    for q in questions:
        record = run.get(q["id"], {"evidence": [], "cutoff_ties": []})
        try:
            ref = reference_resolve(q, record["evidence"], key, extra=record["cutoff_ties"])
        except EvidenceError as exc:
            with pytest.raises(EvidenceError) as got:
                resolve_question(q, record["evidence"], key, extra=record["cutoff_ties"])
            assert str(got.value) == str(exc)
            continue
        fast = resolve_question(q, record["evidence"], key, extra=record["cutoff_ties"])
        assert _plain(fast) == _plain(ref)
        # the scores' types too (None stays None, numbers are floats)
        assert [type(it.score) for it in fast.items + fast.extra] == [type(it.score) for it in ref.items + ref.extra]
