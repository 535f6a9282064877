"""The tie report's shortcuts (eval.ties) give what the plain way gives, on the random runs of test_columnar_scoring.

The known items' order is the stable lexsort of ``(question, kind, position)``
it replaces, and the whole-item ids numbered among the questions with hard ties
alone give every such question the same closed forms as ids numbered over the
whole table.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from test_columnar_scoring import run_case

from eval.evidence import resolve
from eval.measures import RANK_MEASURES
from eval.relevance import group_ids, hit_matrix, whole_keys
from eval.ties import _ClosedForms, _cutoff_group, _hard_rank_groups, known_order
from tempbench_core.errors import EvidenceError


def _table(case):
    questions, run, _flags, _split, key = case
    evidence = [run[q["id"]]["evidence"] if q["id"] in run else [] for q in questions]
    ties = [run[q["id"]]["cutoff_ties"] if q["id"] in run else [] for q in questions]
    try:
        return resolve(questions, evidence, ties, key, shared={})
    except EvidenceError:
        return None


def _first_seen(ids: np.ndarray) -> np.ndarray:
    """Ids renumbered by first occurrence: equal exactly when the partitions are."""
    return np.array(
        [list(dict.fromkeys(ids.tolist())).index(x) for x in ids.tolist()], dtype=np.int64)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_known_order_is_the_lexsort_it_replaces(case) -> None:
    table = _table(case)
    if table is None:
        return
    ev, ex = table.items, table.extra
    plain = np.lexsort((np.concatenate([ev.pos, ex.pos]), np.concatenate([np.zeros(len(ev)), np.ones(len(ex))]),
                        np.concatenate([ev.q, ex.q])))
    assert np.array_equal(known_order(table), plain)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_closed_forms_of_the_hard_questions_alone_are_those_of_the_whole_table(case) -> None:
    table = _table(case)
    if table is None:
        return
    n_ret = np.diff(table.items.start)
    ev_hit, ex_hit = table.hits(table.items), table.hits(table.extra)
    hit_matrix(table, width=int(n_ret.max()) if table.n else 0)
    cut = _cutoff_group(table, n_ret, ev_hit, ex_hit)
    hard, k_rel, order = _hard_rank_groups(table, n_ret)
    every = _ClosedForms(table, cut.member, ev_hit, ex_hit, cut.in_group_extra, k_rel, order)
    # the plain way: every known item's whole item numbered over the whole table
    keys = [np.concatenate([a, b]) for a, b in zip(whole_keys(table.items), whole_keys(table.extra), strict=True)]
    every.k_whole = group_ids(keys)[0][order]
    some = _ClosedForms(table, cut.member, ev_hit, ex_hit, cut.in_group_extra, k_rel, order, hard)
    for i in np.flatnonzero(hard).tolist():
        lo, hi = int(some.known_start[i]), int(some.known_start[i + 1])
        assert np.array_equal(_first_seen(some.k_whole[lo:hi]), _first_seen(every.k_whole[lo:hi]))
        mine, theirs = some.rank(i, RANK_MEASURES), every.rank(i, RANK_MEASURES)
        for a, b in zip(mine, theirs, strict=True):
            assert np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float), equal_nan=True)
