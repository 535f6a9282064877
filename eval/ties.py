"""Tie-aware evaluation (SPEC §3.5): expected, min and max over tie orderings.

The known ranking of a question is its returned evidence followed by its
``cutoff_ties``. Every group of equal scores in it is shuffled uniformly and
independently, then the first ``n_ret`` items are scored. Closed forms, no
enumeration of permutations:

TRP and CCR (only the cut-off group matters). Let the cut-off group have ``g``
items, ``m`` of them among the returned ones, ``h`` of them hits (gold triple,
valid window), and ``A`` hits above the group. The number of group hits that
land in the top ``n_ret`` is hypergeometric ``X ~ H(g, h, m)``, so::

    E[TRP] = (A + m h / g) / n_ret
    min    = (A + max(0, m - (g - h))) / n_ret,   max = (A + min(m, h)) / n_ret

CCR = 1 iff every gold triple not already hit above the group (set ``M``) is
hit by the ``m`` drawn items; with ``c_j`` group hits of triple ``j``, by
inclusion-exclusion over the multivariate hypergeometric::

    P(CCR = 1) = sum_{J subset M} (-1)^{|J|} C(g - sum_{j in J} c_j, m) / C(g, m)

Rank metrics (every group matters; SPEC §3.4 list, deduplicated). A group of
size ``g`` with ``r`` relevant items puts a relevant item at each of its
positions with probability ``r / g``; recall@k and nDCG@k are linear in those
probabilities, so their expectation is the metric of the probability vector.
For MRR only the first group with ``r > 0`` matters (start ``c``, 0-based)::

    E[RR] = sum_{t=0}^{min(g-1, L-c-1)} 1/(c+t+1) * C(g-r, t)/C(g, t) * r/(g-t)

Extremes put the relevant items first (max) or last (min) in every group,
which maximises (minimises) all three metrics at once.

Readings (documented choices):

* Groups are runs of consecutive equal scores in rank order. Items without a
  score (5-lists, evidence files) make the ranking fully known: no ties.
* For rank metrics the known ranking is deduplicated on the whole item first and
  ``L`` is the deduplicated returned length. An item is relevant when it is the
  first valid copy of its triple in the known ranking; if a second valid copy of
  the same triple (another window) sits in the same tie group, which copy counts
  depends on the order and this closed form treats only the first as relevant.
  Run files of the reference retriever never contain such copies (its pool is
  deduplicated on ``(s, r, o)``, SPEC §2.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations
from math import comb
from typing import Any

import numpy as np

from eval.rank import KS, hit_list, rank_kernel, to_matrix
from eval.trp_ccr import Item, Resolved


def _is_hit(it: Item, tq: float) -> bool:
    return it.cls >= 0 and it.t_start <= tq <= it.t_end


def cutoff_group(res: Resolved) -> tuple[list[int], int]:
    """Indices of returned items in the cut-off group, and the number of ``cutoff_ties``.

    The group is the returned items with the k-th (last returned) score plus
    ``cutoff_ties`` (SPEC §6.1). Without scores there is no group.
    """
    if not res.items or res.items[-1].score is None or any(it.score is None for it in res.items):
        return [], 0
    last = res.items[-1].score
    members = [i for i, it in enumerate(res.items) if it.score == last]
    return members, len(res.extra)


def trp_ccr_ties(res: Resolved) -> dict[str, tuple[float, float, float, float] | None]:
    """``(observed, expected, min, max)`` of TRP (None when ``n_ret == 0``) and CCR."""
    tq = res.tq
    n_ret = len(res.items)
    hits = [_is_hit(it, tq) for it in res.items]
    observed_ccr = float(res.n_gold > 0 and len({it.cls for it, h in zip(res.items, hits, strict=True) if h}) == res.n_gold)
    if n_ret == 0:
        return {"TRP": None, "CCR": (observed_ccr, observed_ccr, observed_ccr, observed_ccr)}
    members, n_extra = cutoff_group(res)
    if not members:
        members, n_extra = [n_ret - 1], 0  # an exactly known order: a group of one changes nothing
    in_group = set(members)
    extra_hits = [_is_hit(it, tq) for it in res.extra]
    above = sum(h for i, h in enumerate(hits) if i not in in_group)
    m = len(members)
    g = m + n_extra
    h = sum(hits[i] for i in members) + sum(extra_hits)
    trp_obs = sum(hits) / n_ret
    trp = (trp_obs, (above + m * h / g) / n_ret, (above + max(0, m - (g - h))) / n_ret, (above + min(m, h)) / n_ret)

    if res.n_gold == 0:
        return {"TRP": trp, "CCR": (0.0, 0.0, 0.0, 0.0)}
    covered = {res.items[i].cls for i in range(n_ret) if hits[i] and i not in in_group}
    missing = [c for c in range(res.n_gold) if c not in covered]
    counts = dict.fromkeys(missing, 0)
    for it in [res.items[i] for i in members] + list(res.extra):
        if _is_hit(it, tq) and it.cls in counts:
            counts[it.cls] += 1
    if any(v == 0 for v in counts.values()) or len(missing) > m:
        p = Fraction(0)
    else:
        c = [counts[j] for j in missing]
        total = comb(g, m)
        acc = 0
        for size in range(len(c) + 1):
            for subset in combinations(c, size):
                acc += (-1) ** size * comb(g - sum(subset), m)
        p = Fraction(acc, total)
    ccr = (observed_ccr, float(p), 1.0 if p == 1 else 0.0, 1.0 if p > 0 else 0.0)
    return {"TRP": trp, "CCR": ccr}


def _known_ranking(res: Resolved) -> tuple[list[Item], int]:
    seen: set[tuple[Any, ...]] = set()
    known: list[Item] = []
    length = 0
    for pos, it in enumerate(list(res.items) + list(res.extra)):
        if it.whole in seen:
            continue
        seen.add(it.whole)
        known.append(it)
        if pos < len(res.items):
            length += 1
    return known, length


def _groups(known: Sequence[Item]) -> list[tuple[int, int]]:
    """``(start, size)`` of runs of equal scores; singletons when any score is missing."""
    if any(it.score is None for it in known):
        return [(i, 1) for i in range(len(known))]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(known):
        j = i + 1
        while j < len(known) and known[j].score == known[i].score:
            j += 1
        out.append((i, j - i))
        i = j
    return out


def rank_tie_vectors(res: Resolved) -> tuple[list[float], list[float], list[float], float, int]:
    """Per-position relevance probabilities, best and worst cases, E[RR], and ``|rel|``.

    All vectors have the deduplicated returned length ``L``.
    """
    tq = res.tq
    rel_classes = {c for c, valid in enumerate(res.class_valid) if valid}
    known, length = _known_ranking(res)
    done: set[int] = set()
    relevant = []
    for it in known:
        r = it.cls in rel_classes and it.t_start <= tq <= it.t_end and it.cls not in done
        if r:
            done.add(it.cls)
        relevant.append(r)
    prob = [0.0] * length
    best = [0.0] * length
    worst = [0.0] * length
    err = 0.0
    first_found = False
    for start, size in _groups(known):
        r = sum(relevant[start:start + size])
        if r == 0 or start >= length:
            continue
        for p in range(start, min(start + size, length)):
            prob[p] = r / size
        for p in range(start, min(start + r, length)):
            best[p] = 1.0
        for p in range(start + size - r, min(start + size, length)):
            worst[p] = 1.0
        if not first_found:
            first_found = True
            u = min(size - 1, length - start - 1)
            for t in range(u + 1):
                err += (1.0 / (start + t + 1)) * (comb(size - r, t) / comb(size, t)) * (r / (size - t))
    return prob, best, worst, err, len(rel_classes)


def tie_report(resolved: Sequence[Resolved], ks: Sequence[int] = KS) -> dict[str, Any]:
    """Per-question arrays and macro ``{observed, expected, min, max, bias}`` per metric.

    TRP is macro over questions with ``n_ret > 0`` (0.0 when there is none, as
    ``TRP_macro``), CCR over all, rank metrics over questions with a non-empty
    ``rel`` (like the metrics themselves; None when there is none).
    """
    n = len(resolved)
    trp = np.full((n, 4), np.nan)
    ccr = np.zeros((n, 4))
    probs, bests, worsts, obs_lists = [], [], [], []
    err = np.zeros(n)
    n_rel = np.zeros(n, dtype=np.int64)
    for i, res in enumerate(resolved):
        tc = trp_ccr_ties(res)
        if tc["TRP"] is not None:
            trp[i] = tc["TRP"]
        ccr[i] = tc["CCR"]
        prob, best, worst, e_rr, nr = rank_tie_vectors(res)
        probs.append(prob)
        bests.append(best)
        worsts.append(worst)
        err[i] = e_rr
        n_rel[i] = nr
        obs_lists.append(hit_list(res)[0])
    width = max([max(ks)] + [len(p) for p in probs])
    observed = rank_kernel(to_matrix(obs_lists, width), n_rel, ks)
    expected = rank_kernel(to_matrix(probs, width), n_rel, ks)
    expected["mrr"] = np.where(n_rel > 0, err, np.nan)
    hi = rank_kernel(to_matrix(bests, width), n_rel, ks)
    lo = rank_kernel(to_matrix(worsts, width), n_rel, ks)
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
