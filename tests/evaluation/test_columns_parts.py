"""A run scored from table parts (eval.evidence.table_part, as ``tempbench reproduce`` makes them where the run
is retrieved) equals the run scored from its records (eval.scoring.evaluate).

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

from eval.evidence import join_parts, read_question, resolve, table_of, table_part
from eval.key_space_effect import PartSpaces, part_other_space, parts_suffice, used_space
from eval.scoring import ScoreOptions, evaluate, evaluate_parts, score_parts, score_run
from tempbench_core.errors import EvidenceError


def _parts(chosen, records, size):
    """The parts of a run as ``tempbench reproduce`` makes them (``None`` when a record cannot be read)."""
    parts = []
    for lo in range(0, len(chosen), size):
        questions, recs = chosen[lo:lo + size], records[lo:lo + size]
        try:
            reads = [read_question(q, rec["evidence"], rec["cutoff_ties"], "auto") for q, rec in zip(questions, recs,
                                                                                                     strict=True)]
        except EvidenceError:
            return None
        table = table_of(questions, reads, "auto", [rec["evidence"] for rec in recs])
        parts.append(table_part(table, part_other_space(table)))
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
    if parts:
        # the decision read from the parts' summaries alone (what the job sends) is the one read from the parts,
        # and their used space is that of the joined questions
        assert parts_suffice([PartSpaces.of(p) for p in parts]) == parts_suffice(parts)
        gold_space = [sp for p in parts for sp in p.gold_space]
        counts = np.concatenate([p.items["counts"] for p in parts])
        used = used_space(gold_space, counts)
        summaries = [PartSpaces.of(p) for p in parts]
        found = frozenset().union(*(p.with_items for p in summaries)) or frozenset().union(*(p.every for p in summaries))
        assert used == (next(iter(found)) if len(found) == 1 else ("mixed" if found else "id"))
    if parts is None or not parts_suffice(parts):
        event("parts do not suffice")
        return
    event("scored from parts")
    ref = evaluate(run, questions, flags)
    assert_same_evaluation(evaluate_parts(parts, chosen, questions, flags), _with_views(ref))
    # a second run of the same questions reads the negative pairs from the shared cache: the same scores
    shared: dict = {}
    expected = score_run(run, questions, flags, options=ScoreOptions(n_boot=20))
    for _ in range(2):
        assert _same(score_parts(parts, chosen, questions, flags, n_boot=20, shared=shared), expected)
    assert sum(key[0] == "negative pairs" for key in shared) == len(chosen)


def _with_views(ev):
    """``ev`` with ``resolved``, its table's views (what :func:`assert_same_evaluation` compares with)."""
    ev.resolved = [ev.table.question(i) for i in range(ev.table.n)]
    return ev


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_joined_parts_hold_the_same_arrays(case):
    """Codes may be numbered otherwise; every array and every equality between codes is the same."""
    questions, run, _flags, _split, _key = case
    chosen = [q for q in questions if q["id"] in run]
    records = [run[q["id"]] for q in chosen]
    parts = _parts(chosen, records, 2)
    if parts is None:
        return
    ref = resolve(chosen, [r["evidence"] for r in records], [r["cutoff_ties"] for r in records])
    got = join_parts(chosen, parts)
    for a, b in ((got.items, ref.items), (got.extra, ref.extra)):
        for name in ("start", "q", "pos", "space", "ts", "te", "cls", "gid", "has_score"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        np.testing.assert_array_equal(np.isnan(a.score), np.isnan(b.score))
        np.testing.assert_array_equal(np.nan_to_num(a.score), np.nan_to_num(b.score))
        for name in ("s", "r", "o"):
            assert [got.values[c] for c in getattr(a, name)] == [ref.values[c] for c in getattr(b, name)]
    for name in ("tq", "n_gold", "cls_start", "class_valid"):
        np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))
    assert got.gold_space == ref.gold_space
    assert [got.gold(i) for i in range(got.n)] == [ref.gold(i) for i in range(ref.n)]


def test_parts_must_cover_the_questions_in_order():
    qs = [{"id": f"q{i}", "t_query": 1994, "S_star": [{"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}]}
          for i in range(2)]
    tables = [resolve([q], [[]]) for q in qs]
    assert not parts_suffice([table_part(t) for t in tables])  # labels only: the id-space reading is needed
    parts = [table_part(t, part_other_space(t)) for t in tables]
    assert parts_suffice(parts)
    with pytest.raises(ValueError, match="do not cover"):
        join_parts(list(reversed(qs)), parts)


def test_the_other_space_keys_its_own_classes():
    """Two gold hops that differ in ids only (homonyms) are two classes keyed on ids and one keyed on labels:
    the part's other-space reading counts the label-space hit, as resolving in that space does."""
    hop = {"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}
    q = {"id": "q", "t_query": 1994, "S_star": [{**hop, "s_id": "Q1", "r_id": "P1", "o_id": "Q2"},
                                                {**hop, "s_id": "Q9", "r_id": "P1", "o_id": "Q2"}]}
    evidence = [{**hop, "s_id": "Q9", "r_id": "P1", "o_id": "Q2", "score": 1.0}]
    auto = resolve([q], [evidence])
    assert auto.gold_space == ["id"] and int(auto.n_gold[0]) == 2
    assert part_other_space(auto) == ("label", [1], [1])
    assert int(resolve([q], [evidence], key="label").n_gold[0]) == 1
