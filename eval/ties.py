"""Tie-aware evaluation (SPEC §3.5): expected, min and max of every metric over the orderings of equal scores.

The known ranking of a question is its returned evidence followed by its
``cutoff_ties``. Every group of equal scores in it is shuffled uniformly and
independently, then the first ``n_ret`` items are scored; the expectation
over tie orderings is McSherry and Najork's (References). The closed forms,
and why they hold, are in :mod:`eval.tie_forms`.

:func:`tie_report` is the kernel over a run's
:class:`~eval.evidence.EvidenceTable`. A question whose equal-score groups
hold no valid copy of a relevant triple in a group of two or more has every
ordering give its observed rank metrics, and its TRP/CCR extremes follow from
counts of its cut-off group: those are array operations over all questions.
The others (about one in six of a reference run) are computed question by
question with the closed forms, on the same table's arrays.

References
----------
- F. McSherry and M. Najork, "Computing Information Retrieval Performance
  Measures Efficiently in the Presence of Tied Scores", ECIR 2008 (the
  expected value of a rank metric over the orderings of tied groups).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from eval.evidence import EvidenceTable
from eval.measures import RANK_MEASURES, Measure
from eval.rank import rank_kernel
from eval.relevance import group_ids, hit_matrix, relevant, whole_keys
from eval.tie_forms import ADDITIVE, rank_tie_vectors, trp_ccr_closed
from eval.trp_ccr import trp_ccr_arrays


def tie_report(table: EvidenceTable, measures: Sequence[Measure] = RANK_MEASURES) -> dict[str, Any]:
    """Per-question arrays and macro ``{observed, expected, min, max, bias}`` per metric (SPEC §3.5).

    TRP is macro over questions with ``n_ret > 0`` (0.0 when there is none, as
    ``TRP_macro``), CCR over all, rank metrics over questions with a non-empty
    ``rel`` (like the metrics themselves; None when there is none).
    """
    n = table.n
    ev, ex = table.items, table.extra
    n_ret = np.diff(ev.start)
    ev_hit = table.hits(ev)
    ex_hit = table.hits(ex)
    gains, n_rel, _, _ = hit_matrix(table, width=int(n_ret.max()) if n else 0)
    cut = _cutoff_group(table, n_ret, ev_hit, ex_hit)
    trp, ccr, chance = cut.trp, cut.ccr, cut.chance
    hard, k_rel, order = _hard_rank_groups(table, n_ret)

    # observed = expected = min = max for the others; the first hit's rank gives RR
    first_hit = np.argmax(gains > 0, axis=1)
    any_hit = (gains > 0).any(axis=1)
    rr = np.where(any_hit, 1.0 / (first_hit + 1), 0.0)
    prob, best, worst = gains.copy(), gains.copy(), gains.copy()
    err, min_rr = rr.copy(), rr.copy()
    cut_min: list[tuple[int, np.ndarray]] = []
    width = gains.shape[1]
    closed = _ClosedForms(table, cut.member, ev_hit, ex_hit, cut.in_group_extra, k_rel, order, hard)
    for i in np.flatnonzero(chance | hard).tolist():
        if chance[i]:
            trp_i, ccr[i] = closed.trp_ccr(i)
            trp[i] = np.nan if trp_i is None else trp_i
        if not hard[i]:
            continue
        rt = closed.rank(i, measures)
        for target, values in ((prob, rt.prob), (best, rt.best), (worst, rt.worst)):
            target[i] = 0.0
            target[i, :min(len(values), width)] = values[:width]
        err[i], min_rr[i] = rt.e_rr, rt.min_rr
        if rt.cut_min is not None:
            cut_min.append((i, rt.cut_min))
    return tie_summary(TieVectors(trp, ccr, gains, prob, best, worst, err, min_rr, n_rel, cut_min), measures)


class _CutoffGroup(NamedTuple):
    """TRP and CCR per question over the orderings of the cut-off tie group (SPEC §3.5), where closed.

    ``trp`` and ``ccr``: ``(n, 4)`` arrays of observed, expected, min, max;
    ``chance``: the questions whose CCR is a chance strictly between 0 and 1
    (left to the closed forms); ``member``: the returned items in the group;
    ``in_group_extra``: the cut-off ties in it.
    """

    trp: np.ndarray
    ccr: np.ndarray
    chance: np.ndarray
    member: np.ndarray
    in_group_extra: np.ndarray


def _cutoff_group(table: EvidenceTable, n_ret: np.ndarray, ev_hit: np.ndarray, ex_hit: np.ndarray) -> _CutoffGroup:
    """TRP and CCR ranges of every question from the counts of its cut-off group (:class:`_CutoffGroup`)."""
    n = table.n
    ev, ex = table.items, table.extra
    # the cut-off group is the returned items with the last score, plus every cut-off
    # tie; without a score on every returned item the order is known (the last item alone)
    last = ev.start[1:] - 1
    has_ret = n_ret > 0
    scored = np.ones(n, dtype=bool)
    np.logical_and.at(scored, ev.q, ev.has_score)
    grouped = has_ret & scored
    last_score = np.where(has_ret, ev.score[np.maximum(last, 0)] if len(ev) else 0.0, np.nan)
    member = np.where(grouped[ev.q], ev.score == last_score[ev.q], np.arange(len(ev)) == last[ev.q])
    in_group_extra = grouped[ex.q]
    m = np.bincount(ev.q[member], minlength=n)
    g = m + np.bincount(ex.q[in_group_extra], minlength=n)
    group_hit = np.bincount(ev.q[member & ev_hit], minlength=n)
    h = group_hit + np.bincount(ex.q[ex_hit & in_group_extra], minlength=n)
    hits = np.bincount(ev.q[ev_hit], minlength=n)
    above = hits - group_hit
    safe_ret = np.where(has_ret, n_ret, 1)
    safe_g = np.where(g > 0, g, 1)
    trp = np.full((n, 4), np.nan)
    trp[:, 0] = hits / safe_ret
    trp[:, 1] = (above + (m * h) / safe_g) / safe_ret
    trp[:, 2] = (above + np.maximum(0, m - (g - h))) / safe_ret
    trp[:, 3] = (above + np.minimum(m, h)) / safe_ret
    trp[~has_ret] = np.nan
    # CCR: the gold classes not hit above the group must all be hit by the m items drawn
    covered = np.zeros(len(table.class_valid), dtype=bool)
    covered[ev.gid[ev_hit & ~member]] = True
    group_hits = np.bincount(np.concatenate([ev.gid[ev_hit & member], ex.gid[ex_hit & in_group_extra]]),
                             minlength=len(table.class_valid))
    cls_q = np.repeat(np.arange(n), table.n_gold)
    n_missing = np.bincount(cls_q[~covered], minlength=n)
    unhittable = np.bincount(cls_q[~covered & (group_hits == 0)], minlength=n) > 0
    _, _, ccr_obs = trp_ccr_arrays(table)
    p = np.where(n_missing == 0, 1.0, 0.0)
    # a chance between 0 and 1: inclusion-exclusion, question by question
    chance = (table.n_gold > 0) & (n_missing > 0) & ~unhittable & (n_missing <= m)
    ccr = np.stack([ccr_obs.astype(np.float64), p, p, p], axis=1)
    ccr[table.n_gold == 0] = 0.0
    return _CutoffGroup(trp, ccr, chance, member, in_group_extra)


def known_starts(table: EvidenceTable) -> np.ndarray:
    """Each question's first place among the known items laid end to end (its evidence, then its cut-off ties)."""
    return np.concatenate([[0], np.cumsum(table.items.counts + table.extra.counts)]).astype(np.int64)


def known_order(table: EvidenceTable) -> np.ndarray:
    """The known items (evidence, then cut-off ties, concatenated) ordered by question, kind and position.

    The stable lexicographic order of ``(question, kind, position)``, which are
    distinct: each question's evidence in place, then its cut-off ties, laid
    end to end (each item's place is known, so no sort is needed).
    """
    ev, ex = table.items, table.extra
    known_start = known_starts(table)
    order = np.empty(len(ev) + len(ex), dtype=np.int64)
    order[known_start[ev.q] + ev.pos] = np.arange(len(ev), dtype=np.int64)
    order[known_start[ex.q] + ev.counts[ex.q] + ex.pos] = np.arange(len(ev), len(ev) + len(ex), dtype=np.int64)
    return order


def _hard_rank_groups(table: EvidenceTable, n_ret: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The questions whose rank metrics need the closed forms, and the known items' relevance and order.

    A question does when a group of two or more equal scores starting inside
    the ranking holds a valid copy of a relevant triple (every item scored).
    Returns ``(hard, k_rel, order)``: a flag per question; per known item
    (returned, then cut-off ties, in ``order``) whether it is relevant; the
    order of the known items by question, kind and position.
    """
    n = table.n
    ev, ex = table.items, table.extra
    hard = np.zeros(n, dtype=bool)
    known_q = np.concatenate([ev.q, ex.q])
    order = known_order(table)
    kq = known_q[order]
    kscore = np.concatenate([ev.score, ex.score])[order]
    kpos = np.concatenate([ev.pos, n_ret[ex.q] + ex.pos])[order]
    k_rel = np.concatenate([relevant(table, ev), relevant(table, ex)])[order]
    all_scored = np.ones(n, dtype=bool)
    np.logical_and.at(all_scored, kq, np.concatenate([ev.has_score, ex.has_score])[order])
    same_prev = np.zeros(len(order), dtype=bool)
    if len(order):
        same_prev[1:] = (kq[1:] == kq[:-1]) & (kscore[1:] == kscore[:-1])
    group = np.cumsum(~same_prev) - 1
    n_groups = int(group[-1]) + 1 if len(order) else 0
    size = np.bincount(group, minlength=n_groups)
    starts = np.flatnonzero(~same_prev)
    begins_inside = kpos[starts] < n_ret[kq[starts]]
    rel_in_group = np.bincount(group[k_rel], minlength=n_groups) > 0
    needs = begins_inside & (size > 1) & rel_in_group & all_scored[kq[starts]]
    hard[kq[starts[needs]]] = True
    return hard, k_rel, order


class _ClosedForms:
    """The per-question inputs of :mod:`eval.tie_forms`, read from the table's arrays."""

    def __init__(self, table: EvidenceTable, member: np.ndarray, ev_hit: np.ndarray, ex_hit: np.ndarray,
                 in_group_extra: np.ndarray, k_rel: np.ndarray, order: np.ndarray, rows: np.ndarray | None = None
                 ) -> None:
        """``rows``: the questions :meth:`rank` is asked for (a flag per question; default all)."""
        self.table = table
        ev, ex = table.items, table.extra
        self.member, self.ev_hit, self.ex_hit, self.in_group_extra = member, ev_hit, ex_hit, in_group_extra
        # the whole item of every known item of those questions (evidence, then cut-off ties), and the valid
        # relevant copies' classes; rank_tie_vectors reads only which of a question's items are one whole item,
        # and the key holds the question: numbered among those questions' items alone, they are the same groups
        self.known_start = known_starts(table)
        k_keys = [np.concatenate([a, b])[order] for a, b in zip(whole_keys(ev), whole_keys(ex), strict=True)]
        self.k_whole = np.full(len(order), -1, dtype=np.int64)
        asked = np.ones(len(order), dtype=bool) if rows is None else rows[k_keys[0]]
        if asked.any():
            self.k_whole[asked] = group_ids([k[asked] for k in k_keys])[0]
        cls = np.concatenate([ev.cls, ex.cls])
        vr = np.where(np.concatenate([relevant(table, ev), relevant(table, ex)]), cls, -1)
        self.k_vr = vr[order]
        self.k_score = np.concatenate([ev.score, ex.score])[order]

    def trp_ccr(self, i: int) -> tuple[Any, Any]:
        table = self.table
        ev, ex = table.items, table.extra
        lo, hi = int(ev.start[i]), int(ev.start[i + 1])
        xlo, xhi = int(ex.start[i]), int(ex.start[i + 1])
        grouped = self.in_group_extra[xlo:xhi]
        return trp_ccr_closed(self.ev_hit[lo:hi].tolist(), ev.cls[lo:hi].tolist(),
                              np.flatnonzero(self.member[lo:hi]).tolist(), self.ex_hit[xlo:xhi][grouped].tolist(),
                              ex.cls[xlo:xhi][grouped].tolist(), int(table.n_gold[i]))

    def rank(self, i: int, measures: Sequence[Measure]) -> Any:
        table = self.table
        lo, hi = int(self.known_start[i]), int(self.known_start[i + 1])
        scores = self.k_score[lo:hi].tolist()
        scores = [None if sc != sc else sc for sc in scores]
        c_lo, c_hi = int(table.cls_start[i]), int(table.cls_start[i + 1])
        return rank_tie_vectors(self.k_whole[lo:hi].tolist(), self.k_vr[lo:hi].tolist(), scores,
                                int(table.items.counts[i]), int(table.class_valid[c_lo:c_hi].sum()), measures)


class TieVectors(NamedTuple):
    """The per-question pieces of a tie report (SPEC §3.5), from which :func:`tie_summary` makes the macro figures.

    ``trp``/``ccr``: ``(n, 4)`` observed, expected, min, max (TRP NaN when
    ``n_ret == 0``); the gain matrices: observed hits, hit probabilities, best
    and worst hits per position of the deduplicated list
    (:func:`eval.tie_forms.rank_tie_vectors`); ``err``/``min_rr``: expected
    and minimum reciprocal rank; ``n_rel``: relevant classes per question;
    ``cut_min``: ``(question, per-measure minimum of the cut-off group)``.
    """

    trp: np.ndarray
    ccr: np.ndarray
    observed_gains: np.ndarray
    expected_gains: np.ndarray
    best_gains: np.ndarray
    worst_gains: np.ndarray
    err: np.ndarray
    min_rr: np.ndarray
    n_rel: np.ndarray
    cut_min: Sequence[tuple[int, np.ndarray]]


def tie_summary(vectors: TieVectors, measures: Sequence[Measure] = RANK_MEASURES) -> dict[str, Any]:
    """The :func:`tie_report` object from its per-question pieces (:class:`TieVectors`)."""
    trp, ccr, observed_gains, expected_gains, best_gains, worst_gains, err, min_rr, n_rel, cut_min = vectors
    observed = rank_kernel(observed_gains, n_rel, measures)
    expected = rank_kernel(expected_gains, n_rel, measures)
    hi = rank_kernel(best_gains, n_rel, measures)
    lo = rank_kernel(worst_gains, n_rel, measures)
    for m in measures:
        if m.family == "mrr":  # not linear in hit probabilities: its own closed forms
            expected[m.name] = np.where(n_rel > 0, err, np.nan)
            lo[m.name] = np.where(n_rel > 0, min_rr, np.nan)
    additive = [m.name for m in measures if m.family in ADDITIVE]
    for i, extra in cut_min:
        for name, value in zip(additive, extra, strict=True):
            lo[name][i] += value
    per_q: dict[str, np.ndarray] = {
        "TRP": trp,
        "CCR": ccr,
    }
    for name in observed:
        per_q[name] = np.stack([observed[name], expected[name], lo[name], hi[name]], axis=1)
    summary: dict[str, Any] = {}
    for name, mat in per_q.items():
        mask = ~np.isnan(mat[:, 0])
        if not mask.any():
            # TRP_macro is 0.0 when nothing was retrieved (SPEC §3.2); the rank
            # metrics have no value without a non-empty rel (SPEC §3.4).
            empty = 0.0 if name == "TRP" else None
            summary[name] = {"observed": empty, "expected": empty, "min": empty, "max": empty, "bias": empty}
            continue
        o, e, lo_v, hi_v = (float(x) for x in mat[mask].mean(axis=0))
        summary[name] = {"observed": o, "expected": e, "min": lo_v, "max": hi_v, "bias": o - e}
    return {"per_question": per_q, "summary": summary}
