"""A run scored from columns parts (eval.columnar.columns_part, as ``tempbench reproduce`` makes them where
the run is retrieved) equals the run scored from its records (eval.scoring.evaluate).

The random runs of ``test_columnar_scoring`` (homonyms, repeats, ties, label-only, id-only and 5-list items,
questions missing from the run), cut into parts of every size.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_columnar_scoring import assert_same_evaluation, run_case

from eval.columnar import columns_from_parts, columns_part, parts_suffice, resolve_columns, resolve_parsed
from eval.scoring import evaluate, evaluate_parts, score_parts, score_run
from tempbench_core.errors import EvidenceError


def _parts(chosen, records, size):
    parts = []
    for lo in range(0, len(chosen), size):
        questions, recs = chosen[lo:lo + size], records[lo:lo + size]
        parsed = []
        for q, rec in zip(questions, recs, strict=True):
            try:
                parsed.append(resolve_parsed(q, rec["evidence"], "auto", extra=rec["cutoff_ties"])[1])
            except EvidenceError:
                parsed.append(None)
        parts.append(columns_part(questions, [rec["evidence"] for rec in recs], parsed))
    return parts


def _same(a, b) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case(), st.integers(1, 4))
def test_parts_score_as_the_records(case, size):
    questions, run, flags, _split, _key = case
    chosen = [q for q in questions if q["id"] in run]  # run order: what reproduce scores
    records = [run[q["id"]] for q in chosen]
    parts = _parts(chosen, records, size)
    if not parts_suffice(parts):
        event("parts do not suffice")
        return
    event("scored from parts")
    ref = evaluate(run, questions, flags)
    assert_same_evaluation(evaluate_parts(parts, chosen, questions, flags), ref)
    # a second run of the same questions reads the negative pairs from the shared cache: the same scores
    shared: dict = {}
    expected = score_run(run, questions, flags, n_boot=20)
    for _ in range(2):
        assert _same(score_parts(parts, chosen, questions, flags, n_boot=20, shared=shared), expected)
    assert len(shared) == len(chosen)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_joined_columns_hold_the_same_arrays(case):
    """Codes may be numbered otherwise; every array and every equality between codes is the same."""
    questions, run, _flags, _split, _key = case
    chosen = [q for q in questions if q["id"] in run]
    records = [run[q["id"]] for q in chosen]
    parts = _parts(chosen, records, 2)
    if any(part is None for part in parts):
        return
    ref = resolve_columns(chosen, [r["evidence"] for r in records], [r["cutoff_ties"] for r in records])
    got = columns_from_parts(chosen, parts)
    for a, b in ((got.items, ref.items), (got.extra, ref.extra)):
        for name in ("start", "q", "pos", "space", "ts", "te", "cls", "gid", "has_score"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        np.testing.assert_array_equal(np.isnan(a.score), np.isnan(b.score))
        np.testing.assert_array_equal(np.nan_to_num(a.score), np.nan_to_num(b.score))
        values_got, values_ref = list(got.codes), list(ref.codes)
        for name in ("s", "r", "o"):
            assert [values_got[c] for c in getattr(a, name)] == [values_ref[c] for c in getattr(b, name)]
    for name in ("tq", "n_gold", "cls_start", "class_valid"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
    assert got.gold_space == ref.gold_space
    assert [got.gold(i) for i in range(got.n)] == [p.gold for p in ref.parsed]


def test_a_question_read_by_the_reference_makes_no_part():
    """A question the column reader leaves to the reference path (a NaN time) makes no part: the run is scored from
    its records."""
    q = {"id": "q1", "t_query": 1994, "S_star": [{"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}]}
    evidence = [{"s": "a", "r": "p", "o": "b", "t_start": float("nan"), "t_end": 1994, "score": 1.0}]
    _resolved, parsed = resolve_parsed(q, evidence, "auto")
    assert parsed is None
    assert columns_part([q], [evidence], [parsed]) is None
    assert not parts_suffice([None])


def test_parts_must_cover_the_questions_in_order():
    qs = [{"id": f"q{i}", "t_query": 1994, "S_star": [{"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}]}
          for i in range(2)]
    parts = [columns_part([q], [[]], [resolve_parsed(q, [], "auto")[1]]) for q in qs]
    assert parts_suffice(parts)
    with pytest.raises(ValueError, match="do not cover"):
        columns_from_parts(list(reversed(qs)), parts)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case(), st.sampled_from(("id", "label")))
def test_the_other_space_read_from_this_ones_is_the_column_readers(case, other):
    """``_in_other_space`` (the key-space effect's reading of a part, made from the ``auto`` one) gives what
    ``_fast_question`` gives in that space, or leaves the question to it."""
    from eval.columnar import _fast_question, _in_other_space, _Slow

    questions, run, _flags, _split, _key = case
    made = 0
    for q in questions:
        evidence = run.get(q["id"], {"evidence": []})["evidence"]
        try:
            auto = _fast_question(q, evidence, (), "auto")
        except (_Slow, TypeError):
            continue
        try:
            got = _in_other_space(evidence, auto, other)
        except (_Slow, TypeError):
            continue
        made += 1
        ref = _fast_question(q, evidence, (), other)  # must not raise where the shortcut did not
        assert (got.tq, got.gold_space, got.class_valid, got.gold, got.class_first) == \
            (ref.tq, ref.gold_space, ref.class_valid, ref.gold, ref.class_first)
        assert [list(c) for c in got.items[:5]] == [list(c) for c in ref.items[:5]]
        np.testing.assert_array_equal(np.array(got.items[5], dtype=float), np.array(ref.items[5], dtype=float))
        assert got.extra == ref.extra
    event(f"read in the other space: {'some' if made else 'none'}")


def test_the_other_space_keys_its_own_classes():
    """Two gold hops that differ in ids only (homonyms) are two classes keyed on ids and one keyed on labels."""
    from eval.columnar import _fast_question, _in_other_space

    hop = {"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}
    q = {"id": "q", "t_query": 1994, "S_star": [{**hop, "s_id": "Q1", "r_id": "P1", "o_id": "Q2"},
                                                {**hop, "s_id": "Q9", "r_id": "P1", "o_id": "Q2"}]}
    evidence = [{**hop, "s_id": "Q9", "r_id": "P1", "o_id": "Q2", "score": 1.0}]
    auto = _fast_question(q, evidence, (), "auto")
    assert auto.gold_space == "id" and len(auto.class_valid) == 2
    got, ref = _in_other_space(evidence, auto, "label"), _fast_question(q, evidence, (), "label")
    assert len(ref.class_valid) == 1
    assert (got.class_valid, got.class_first, got.items[4]) == (ref.class_valid, ref.class_first, ref.items[4])
