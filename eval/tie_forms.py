"""The closed forms of tie-aware evaluation (SPEC §3.5): expected, min and max over tie orderings, per question.

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

Rank metrics (every group matters; SPEC §3.4 on the list after shuffle, cut
at ``n_ret`` and deduplication, in that order). Groups are processed top down on
the raw known ranking. Groups above the cut-off group are wholly in the list,
so ``d``, the number of distinct whole items above a group, does not depend on
the order. In a group (``g`` items, ``cap`` of them above the cut-off, ``cap = g``
except in the cut-off group) an item is *dead* when its whole item appeared
above (it never counts); every other whole item is *new*. A *target* triple is
a relevant triple not hit above with a valid copy in the group: ``T_c`` raw
valid copies in ``a_c`` distinct whole items; ``r`` targets, ``R = sum T_c``,
and ``b`` new whole items that are not valid copies of a target. The hit of a
target is its first valid copy in the shuffled group; its rank after
deduplication is ``d + 1 + K``, ``K`` the number of distinct new whole items
before it. By linearity, recall@k and nDCG@k need only ``P(hit at rank i)``,
the sum over targets of ``P(K = i - d - 1, J < cap)`` with ``J`` the raw offset
of the first copy. Given ``J = j`` the items in front are a uniform ``j``-subset
of the ``g - T_c`` others, and one given subset is exactly that prefix with
probability ``j! T_c (g - j - 1)! / g! = T_c / (g C(g - 1, j))``, so
(:func:`first_offset_dist`)::

    P(K = kappa, J < cap) = T_c / g * sum_{j < cap} N(j, kappa) / C(g - 1, j)
    N(j, kappa) = [x^j y^kappa] (1 + x)^dead (1 + x y)^singles prod_{m >= 2} (1 + y ((1 + x)^m - 1))

over the others' new whole items with multiplicity ``m`` (singles: ``m = 1``).
Without duplicates and one copy per target this is ``1 / g`` at each of the
first ``cap`` offsets (the fast path: ``P(hit at d + 1 + j) = r / g``). MRR only
sees the first group with ``r > 0``: the same law with the union of the targets
(``R`` marked items, the others' new whole items only) gives
``E[RR] = sum_kappa P(K = kappa, J < cap) / (d + 1 + kappa)``; without
duplicates ``P(J = j) = C(g - j - 1, R - 1) / C(g, R)``.

Extremes (groups are independent: a group's hits depend only on its own order
and on ``d``). Max, for every metric at once: one valid copy of each target
first, hits at ranks ``d + 1 .. d + min(r, cap)``. Min: all non-target items
first (it never helps to move one below the cut-off, and moving one up only
pushes ranks down), then each target's hit followed by all its copies (a
block), so ``r0 = d + b + 1`` is the first hit's rank and ``slots = cap - (g -
R)`` raw places are left to targets (none: no hit). In a whole group
(``cap = g``) one order is worst for every metric: blocks in decreasing
``a_c``, hits at ``r0 + a_(1) + ... + a_(i-1)``; so too when every ``T_c = 1``
(hits at ``r0 .. r0 + slots - 1``). Otherwise the cut-off group needs a
per-metric minimum, since fewer hits can mean earlier ones (recall@5 and
recall@10 can be minimised by different orders): a set ``S`` of complete
blocks with ``T(S) < slots``, in decreasing ``a``, then one more target ``c``
with ``T(S) + T_c >= slots``, hits at ``r0 + a(blocks before)``; a dynamic
programme over targets in decreasing ``a`` with states ``(T(S), a(S))``
(:func:`_cut_minimum`; polynomial in the group size, at most ``2^r`` states).
``min RR = 1 / r0`` for the first group with targets (0 when ``slots <= 0``).

Readings (documented choices):

* Groups are runs of consecutive equal scores in rank order. Items without a
  score (5-lists, evidence files) make the ranking fully known: no ties.
* Duplicates of a whole item and several valid copies of one relevant triple
  (other windows) are handled exactly, in SPEC's order (shuffle, cut,
  deduplicate, then the first valid copy of a triple is its hit). Run files of
  the reference retriever never contain either (its pool is deduplicated on
  ``(s, r, o)``, SPEC §2.4); user runs may.

References
----------
- F. McSherry and M. Najork, "Computing Information Retrieval Performance
  Measures Efficiently in the Presence of Tied Scores", ECIR 2008 (expected
  values of rank metrics over the orderings of tied groups).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import combinations
from math import comb
from typing import NamedTuple

import numpy as np

from eval.measures import RANK_MEASURES, Measure

#: The rank metrics whose expectation is linear in the hit probabilities.
ADDITIVE = ("recall", "ndcg")


def trp_ccr_closed(hits: Sequence[bool], cls: Sequence[int], members: Sequence[int], extra_hits: Sequence[bool],
                   extra_cls: Sequence[int], n_gold: int) -> tuple[tuple[float, float, float, float] | None,
                                                                 tuple[float, float, float, float]]:
    """``(observed, expected, min, max)`` of TRP (None when nothing was returned) and of CCR, for one question.

    ``hits``/``cls``: per returned item, a TRP hit and its gold class;
    ``members``: the returned items in the cut-off group (the last item alone
    when the order is fully known); ``extra_hits``/``extra_cls``: the same for
    the cut-off ties in the group. Formulas in the module docstring.
    """
    n_ret = len(hits)
    observed_ccr = float(n_gold > 0 and len({c for c, h in zip(cls, hits, strict=True) if h}) == n_gold)
    if n_ret == 0:
        return None, (observed_ccr, observed_ccr, observed_ccr, observed_ccr)
    in_group = set(members)
    above = sum(h for i, h in enumerate(hits) if i not in in_group)
    m = len(members)
    g = m + len(extra_hits)
    h = sum(hits[i] for i in members) + sum(extra_hits)
    trp = (sum(hits) / n_ret, (above + m * h / g) / n_ret, (above + max(0, m - (g - h))) / n_ret,
           (above + min(m, h)) / n_ret)
    if n_gold == 0:
        return trp, (0.0, 0.0, 0.0, 0.0)
    covered = {cls[i] for i in range(n_ret) if hits[i] and i not in in_group}
    missing = [c for c in range(n_gold) if c not in covered]
    counts = dict.fromkeys(missing, 0)
    for c, hit in [(cls[i], hits[i]) for i in members] + list(zip(extra_cls, extra_hits, strict=True)):
        if hit and c in counts:
            counts[c] += 1
    p = chain_probability(g, m, [counts[j] for j in missing])
    return trp, (observed_ccr, float(p), 1.0 if p == 1 else 0.0, 1.0 if p > 0 else 0.0)


def chain_probability(g: int, m: int, counts: Sequence[int]) -> Fraction:
    """P(CCR = 1): ``m`` of a group of ``g`` drawn, each missing triple ``j`` hit by ``counts[j]`` group items.

    Inclusion-exclusion over the multivariate hypergeometric (module docstring);
    0 when a missing triple has no hit in the group or more triples are missing
    than items drawn.
    """
    if any(v == 0 for v in counts) or len(counts) > m:
        return Fraction(0)
    total = comb(g, m)
    acc = 0
    for size in range(len(counts) + 1):
        for subset in combinations(counts, size):
            acc += (-1) ** size * comb(g - sum(subset), m)
    return Fraction(acc, total)


def _groups(scores: Sequence[float | None], limit: int) -> list[tuple[int, int]]:
    """``(start, size)`` of runs of equal scores starting before ``limit``; singletons when a score is missing."""
    if None in scores:
        return [(i, 1) for i in range(min(limit, len(scores)))]
    out: list[tuple[int, int]] = []
    n = len(scores)
    i = 0
    while i < limit:
        j = i + 1
        s = scores[i]
        while j < n and scores[j] == s:
            j += 1
        out.append((i, j - i))
        i = j
    return out


def first_offset_dist(g: int, t: int, cap: int, dead: int, mults: Sequence[int]) -> list[float]:
    """Distribution of the deduplicated offset of the first of ``t`` marked items in a shuffled group.

    A group of ``g`` items is shuffled uniformly: ``t`` marked items, ``dead``
    items whose whole item already appeared above the group, and the others,
    which form distinct new whole items with multiplicities ``mults``. Returns
    ``q`` with ``q[kappa] = P(J < cap and K = kappa)``, where ``J`` is the raw
    offset of the first marked item and ``K`` the number of distinct new whole
    items before it (its offset after deduplication)::

        q[kappa] = t / g * sum_{j < cap} N(j, kappa) / C(g - 1, j)

    where ``N(j, kappa)`` is the coefficient of ``x^j y^kappa`` in
    ``(1 + x)^dead (1 + x y)^singles prod_{m >= 2} (1 + y ((1 + x)^m - 1))``, the
    number of ``j``-subsets of the unmarked items showing ``kappa`` whole items,
    and ``t / (g C(g - 1, j)) = j! t (g - j - 1)! / g!`` is the probability that one
    given ``j``-subset is exactly what precedes the first marked item. Computed
    in exact integers over the common denominator ``g!`` (one correctly rounded
    division per ``kappa``), in ``O(cap * dead + |P| * singles)`` big-integer
    operations, ``|P|`` the number of terms of the product over ``m >= 2``.
    """
    singles = 0
    poly: dict[tuple[int, int], int] = {(0, 0): 1}
    for m in mults:
        if m == 1:
            singles += 1
            continue
        grown: dict[tuple[int, int], int] = {}
        for (j, k), n in poly.items():
            grown[(j, k)] = grown.get((j, k), 0) + n
            for u in range(1, m + 1):
                grown[(j + u, k + 1)] = grown.get((j + u, k + 1), 0) + n * comb(m, u)
        poly = grown
    top = min(cap, g - t + 1)  # j runs over 0 .. g - t, and only j < cap is in the list
    if top <= 0:
        return [0.0] * (len(mults) + 1)
    # exact integers over the common denominator g!: 1 / C(g - 1, j) = j! (g - 1 - j)! / (g - 1)!
    fact = [1] * g
    for i in range(1, g):
        fact[i] = fact[i - 1] * i
    weight = [fact[j] * fact[g - 1 - j] for j in range(top)]
    # the dead items only shift j: fold them in once, h[e] = sum_i C(dead, i) weight[e + i]
    c_dead = [comb(dead, i) for i in range(min(dead, top - 1) + 1)]
    h = [sum(c * weight[e + i] for i, c in enumerate(c_dead[:top - e])) for e in range(top)]
    c_single = [comb(singles, i) for i in range(min(singles, top - 1) + 1)]
    acc = [0] * (len(mults) + 1)
    for (j2, k2), n in poly.items():
        for k1, c in enumerate(c_single[:max(0, top - j2)]):
            acc[k2 + k1] += n * c * h[j2 + k1]
    denom = fact[g - 1] * g
    return [t * x / denom for x in acc]  # one correctly rounded division per offset


def _metric_gains(rank: int, n_rel: int, additive: Sequence[Measure]) -> np.ndarray:
    """Contribution of one hit at 1-based ``rank`` to each additive measure (as :func:`rank_kernel`)."""
    disc = 1.0 / np.log2(rank + 1.0)
    kmax = max(m.cutoff for m in additive)
    ideal = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(np.arange(2, kmax + 2, dtype=np.float64)))])
    inside = np.array([rank <= m.cutoff for m in additive], dtype=np.float64)
    recall = np.array([m.family == "recall" for m in additive])
    idcg = np.array([ideal[min(n_rel, m.cutoff)] for m in additive])
    return np.where(recall, inside / n_rel, inside * disc / idcg)


def _cut_minimum(classes: Sequence[tuple[int, int]], slots: int, r0: int, n_rel: int,
                 additive: Sequence[Measure]) -> np.ndarray:
    """Per-measure minimum contribution of a partial cut-off group (the additive measures).

    ``classes`` holds ``(a, T)`` per relevant triple of the group (distinct
    valid whole items, raw copies); ``slots`` raw places of the list are left to
    them once every other item of the group sits in front; ``r0`` is the rank of
    the first of them. A worst ordering is a run of complete blocks (a triple's
    hit, then all its copies) over a set ``S`` with ``T(S) < slots``, then the hit
    of one more triple ``c`` with ``T(S) + T_c >= slots``, the blocks in decreasing
    ``a``; hits sit at ``r0 + a(earlier blocks)``. Dynamic programme over triples in
    decreasing ``a`` with states ``(T(S), a(S))``, metric by metric.
    """
    width = len(additive)
    best = np.full(width, np.inf)
    for last in range(len(classes)):
        t_last = classes[last][1]
        others = sorted((cl for i, cl in enumerate(classes) if i != last), reverse=True)
        states: dict[tuple[int, int], np.ndarray] = {(0, 0): np.zeros(width)}
        for a, t in others:
            for (ts, as_), cost in list(states.items()):
                if ts + t < slots:
                    key = (ts + t, as_ + a)
                    val = cost + _metric_gains(r0 + as_, n_rel, additive)
                    states[key] = np.minimum(states[key], val) if key in states else val
        for (ts, as_), cost in states.items():
            if ts + t_last >= slots:
                best = np.minimum(best, cost + _metric_gains(r0 + as_, n_rel, additive))
    return best


class RankTies(NamedTuple):
    """Tie-aware pieces of one question's rank metrics (0-based positions of the deduplicated list).

    ``prob[p]``: probability of a hit at position ``p`` (recall@k and nDCG@k
    are linear in it); ``best``: hits of an ordering maximising every metric;
    ``worst``: hits of an ordering minimising every metric, except the cut-off
    group when ``cut_min`` is set (its per-metric minimum contribution to
    recall@k then nDCG@k, added to the metrics of ``worst``); ``e_rr`` and
    ``min_rr``: expected and minimum reciprocal rank; ``n_rel = |rel|``.
    """

    prob: list[float]
    best: list[float]
    worst: list[float]
    cut_min: np.ndarray | None
    e_rr: float
    min_rr: float
    n_rel: int


def rank_tie_vectors(keys: Sequence[int], vr: Sequence[int], scores: Sequence[float | None], n_ret: int, n_rel: int,
                     measures: Sequence[Measure] = RANK_MEASURES) -> RankTies:
    """Expected, best and worst hit vectors of SPEC §3.4 over the orderings of SPEC §3.5, for one question.

    The question's known ranking (evidence then ``cutoff_ties``) is given as
    parallel sequences: ``keys``, an id of each item's whole item; ``vr``, the
    gold class of an item that is a valid copy of a relevant triple, else -1;
    ``scores`` (``None``: no score, the ranking is then fully known). The
    first ``n_ret`` are the returned items; ``n_rel = |rel|``. Works group by
    group, as SPEC orders it: shuffle, cut at ``n_ret``, deduplicate, then
    hits. See the module docstring for the formulas.
    """
    vectors = _Vectors(n_ret, n_rel, measures)
    seen: set[int] = set()  # whole items above the current group
    done: set[int] = set()  # triples hit above the current group
    d = 0  # distinct whole items above the current group
    for start, size in _groups(scores, n_ret):
        end = start + size
        if max(vr[start:end]) < 0:  # nothing relevant here: only count new whole items
            if size == 1:
                w = keys[start]
                if w not in seen:
                    seen.add(w)
                    d += 1
            else:
                new = set(keys[start:end]) - seen
                seen |= new
                d += len(new)
            continue
        group = _tally(keys, vr, start, end, seen, done)
        if group.targets:
            vectors.add(group, cap=min(size, n_ret - start), d=d)
            done.update(group.targets)
        seen.update(group.counts)
        d += len(group.counts)
    return RankTies(vectors.prob, vectors.best, vectors.worst, vectors.cut_min, vectors.e_rr, vectors.min_rr, n_rel)


class _Group(NamedTuple):
    """A tie group of one question's ranking, as :func:`rank_tie_vectors` reads it.

    ``counts``: raw copies per whole item not seen above the group;
    ``dead``: copies of whole items seen above (a relevant one was hit
    there already); ``targets``: per relevant triple not hit above, the
    group's new whole items that are valid copies of it; ``size``: raw items.
    """

    counts: dict[int, int]
    dead: int
    targets: dict[int, set[int]]
    size: int


def _tally(keys: Sequence[int], vr: Sequence[int], start: int, end: int, seen: set[int], done: set[int]) -> _Group:
    """The :class:`_Group` of items ``start`` to ``end`` given the whole items and triples above it."""
    counts: dict[int, int] = {}
    dead = 0
    targets: dict[int, set[int]] = {}
    for i in range(start, end):
        w = keys[i]
        if w in seen:
            dead += 1  # its triple, if relevant, was hit above already
            continue
        counts[w] = counts.get(w, 0) + 1
        c = vr[i]
        if c >= 0 and c not in done:
            targets.setdefault(c, set()).add(w)
    return _Group(counts, dead, targets, end - start)


class _Vectors:
    """The vectors of :class:`RankTies` as the groups holding relevant triples are added, top to bottom."""

    def __init__(self, n_ret: int, n_rel: int, measures: Sequence[Measure]) -> None:
        self.prob = [0.0] * n_ret
        self.best = [0.0] * n_ret
        self.worst = [0.0] * n_ret
        self.cut_min: np.ndarray | None = None
        self.e_rr = self.min_rr = 0.0
        self.first = True  # no relevant group added yet: this one decides RR
        self.n_rel = n_rel
        self.measures = measures

    def add(self, group: _Group, cap: int, d: int) -> None:
        """Add a group with relevant items: ``cap`` of its places inside the ranking, ``d`` whole items above."""
        counts, targets, size = group.counts, group.targets, group.size
        r = len(targets)
        t_of = [sum(counts[w] for w in ws) for ws in targets.values()]
        a_of = [len(ws) for ws in targets.values()]
        total = sum(t_of)
        b = len(counts) - sum(a_of)  # distinct new whole items that are not relevant here
        for p in range(d, d + min(r, cap)):
            self.best[p] = 1.0
        self._expected(group, t_of, cap, d)
        slots = cap - (size - total)  # raw places left to relevant items once all others come first
        if self.first:
            self.min_rr = 1.0 / (d + b + 1) if slots > 0 else 0.0
        if cap >= size or total == r:
            # one ordering is worst for every metric: others first, then blocks in decreasing a
            pos = d + b
            for a in sorted(a_of, reverse=True)[:max(0, min(r, slots))]:
                self.worst[pos] = 1.0
                pos += a
        elif slots > 0:
            additive = [m for m in self.measures if m.family in ADDITIVE]
            self.cut_min = _cut_minimum(list(zip(a_of, t_of, strict=True)), slots, d + b + 1, self.n_rel, additive)
        self.first = False

    def _expected(self, group: _Group, t_of: list[int], cap: int, d: int) -> None:
        """The group's share of the expected hits, and of the expected RR when it is the first relevant one."""
        counts, dead, targets, size = group
        r = len(targets)
        total = sum(t_of)
        if dead == 0 and total == r and len(counts) == size:
            # all items distinct, one copy per triple: each position equally likely
            share = r / size
            for p in range(d, d + cap):
                self.prob[p] += share
            if self.first:
                for j in range(min(size - r + 1, cap)):
                    self.e_rr += comb(size - j - 1, r - 1) / comb(size, r) / (d + j + 1)
            return
        for ws, t in zip(targets.values(), t_of, strict=True):
            mults = [m for w, m in counts.items() if w not in ws]
            for k, q in enumerate(first_offset_dist(size, t, cap, dead, mults)[:cap]):
                self.prob[d + k] += q
        if self.first:
            tw = set().union(*targets.values())
            junk = [m for w, m in counts.items() if w not in tw]
            for k, q in enumerate(first_offset_dist(size, total, cap, dead, junk)[:cap]):
                self.e_rr += q / (d + k + 1)
