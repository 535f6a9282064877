"""Tie-aware rank metrics (SPEC §3.4, §3.5) when whole items repeat or a triple has several valid copies.

SPEC's order: shuffle every group of equal scores, cut at ``n_ret``, deduplicate
on the whole item (first occurrence kept), then the first valid copy of each
relevant triple is its hit. The reference here enumerates every ordering of every
group (``reference.eval``: slow loops, small cases only) and scores each with the
literal SPEC §3.4 oracle; expected, min and max must equal the closed forms of
``eval.ties``.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.eval import RANK_NAMES, brute_ties, distinct_tie_orderings, slow_rank, tie_orderings
from tables import one, rank_tie_vectors, trp_ccr_ties

from eval.tie_forms import first_offset_dist
from eval.ties import tie_report

TQ = 1994.0
# windows valid at TQ: (1994, 1994), (1990, 1999), (1993, 1995); the others are not
WINDOWS = [(1994.0, 1994.0), (1990.0, 1990.0), (1990.0, 1999.0), (1993.0, 1995.0), (1995.0, 2000.0)]


def T(s, o, window, score, r="p"):
    return {"s": s, "r": r, "o": o, "t_start": window[0], "t_end": window[1], "score": float(score)}


def check(q, evidence, ties, orderings=tie_orderings):
    res = one(q, evidence, ties)
    per_q = tie_report(res)["per_question"]
    ref = brute_ties(q, evidence, ties, orderings)
    if "mrr" not in ref:  # empty rel: no rank metric
        return
    for name in RANK_NAMES:
        obs, exp, lo, hi = per_q[name][0]
        assert (obs, exp, lo, hi) == pytest.approx(ref[name], abs=1e-12, rel=0), name
        assert lo - 1e-12 <= exp <= hi + 1e-12 and lo - 1e-12 <= obs <= hi + 1e-12, name


@st.composite
def dup_case(draw):
    """Small tied rankings drawn from a pool of few whole items: repeats within and across groups,
    repeats between evidence and cut-off ties, several valid windows of one relevant triple."""
    pairs = [("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")]
    star_pairs = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=3, unique=True))
    star = [{"s": s, "r": "p", "o": o, "t_start": w[0], "t_end": w[1]}
            for (s, o), w in zip(star_pairs, draw(st.lists(st.sampled_from(WINDOWS[:3]), min_size=len(star_pairs),
                                                           max_size=len(star_pairs))), strict=True)]
    pool = draw(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("ab"), st.sampled_from(WINDOWS)),
                         min_size=1, max_size=5))
    n = draw(st.integers(1, 7))
    picks = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    scores = sorted(draw(st.lists(st.sampled_from([1, 2, 3]), min_size=n, max_size=n)), reverse=True)
    known = [T(s, o, w, sc) for (s, o, w), sc in zip(picks, scores, strict=True)]
    n_ret = draw(st.integers(1, n))
    evidence = known[:n_ret]
    ties = [t for t in known[n_ret:] if t["score"] == evidence[-1]["score"]]
    return {"id": "d", "t_query": TQ, "S_star": star}, evidence, ties


@settings(max_examples=300, deadline=None)
@given(dup_case())
def test_rank_ties_with_duplicates_equal_enumeration(case):
    check(*case)


@settings(max_examples=100, deadline=None)
@given(dup_case())
def test_trp_ccr_ties_with_duplicates_equal_enumeration(case):
    q, evidence, ties = case
    got = trp_ccr_ties(one(q, evidence, ties))
    ref = brute_ties(q, evidence, ties)
    assert got["TRP"] == pytest.approx(ref["TRP"], abs=1e-12)
    assert got["CCR"] == pytest.approx(ref["CCR"], abs=1e-12)


def test_distinct_arrangements_are_a_valid_reference():
    # the faster reference (distinct arrangements of each group) equals the literal one
    q = {"id": "d", "t_query": TQ, "S_star": [{"s": "a", "r": "p", "o": "b", "t_start": 1990.0, "t_end": 1999.0}]}
    g, g2, x = T("a", "b", WINDOWS[0], 1), T("a", "b", WINDOWS[2], 1), T("x", "y", WINDOWS[0], 1)
    ev, ct = [T("z", "y", WINDOWS[0], 2), g, x, g], [g2, g, x]
    fast, literal = brute_ties(q, ev, ct, distinct_tie_orderings), brute_ties(q, ev, ct, tie_orderings)
    assert fast.keys() == literal.keys() and len(list(distinct_tie_orderings(ev + ct))) < len(list(tie_orderings(ev + ct)))
    for name, vals in literal.items():
        assert fast[name] == pytest.approx(vals, abs=1e-12), name
    check(q, ev, ct)


# ---------------------------------------------------------------- worked examples (by hand)
def test_item_in_evidence_and_in_cutoff_ties():
    # group {X, G, G}, 2 returned: XGG -> [X, G], GXG -> [G, X], GGX -> [G, G] -> [G] (dedup), each 1/3
    q = {"id": "w", "t_query": TQ, "S_star": [{"s": "a", "r": "p", "o": "b", "t_start": TQ, "t_end": TQ}]}
    g, x = T("a", "b", WINDOWS[0], 1), T("x", "y", WINDOWS[0], 1)
    res = one(q, [x, g], [g])
    pq = tie_report(res)["per_question"]
    assert tuple(pq["mrr"][0]) == pytest.approx((0.5, 5 / 6, 0.5, 1.0))  # E = (1/2 + 1 + 1) / 3
    assert tuple(pq["recall@1"][0]) == pytest.approx((0.0, 2 / 3, 0.0, 1.0))
    check(q, [x, g], [g])


def test_two_valid_copies_of_one_triple_in_a_group():
    # G1 and G2 are two valid windows of the relevant triple; the first of them in the shuffle is the hit.
    q = {"id": "w", "t_query": TQ, "S_star": [{"s": "a", "r": "p", "o": "b", "t_start": 1990.0, "t_end": 1999.0}]}
    g1, g2, x = T("a", "b", WINDOWS[0], 1), T("a", "b", WINDOWS[2], 1), T("x", "y", WINDOWS[0], 1)
    rt = rank_tie_vectors(one(q, [g1, g2, x]))
    # P(first of 2 marked among 3 at offset j) = C(3 - j - 1, 1) / C(3, 2): 2/3, 1/3, 0
    assert rt.prob == pytest.approx([2 / 3, 1 / 3, 0.0])
    assert rt.e_rr == pytest.approx(2 / 3 + 1 / 3 / 2)
    # worst: X first, then the hit, then the other copy (it cannot come before the hit)
    assert (rt.best, rt.worst, rt.min_rr) == ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], 0.5)
    check(q, [g1, g2, x], [])


def test_cutoff_minimum_is_per_metric():
    """No single ordering attains min recall@5 and min recall@10 together.

    Above: three junk items (ranks 1-3). Cut-off group of 8 with 6 returned: triple A as one
    whole item three times, B likewise, C as two valid windows. All 6 returned places hold
    copies of relevant triples. Either A's block then B: hits at ranks 4, 5 (recall@5 = 2/3,
    recall@10 = 2/3); or C's block, then A's, then B: hits at 4, 6, 7 (recall@5 = 1/3,
    recall@10 = 1). min recall@5 = 1/3, min recall@10 = 2/3.
    """
    star = [{"s": s, "r": "p", "o": o, "t_start": 1990.0, "t_end": 1999.0} for s, o in (("a", "a"), ("a", "b"), ("b", "a"))]
    q = {"id": "w", "t_query": TQ, "S_star": star}
    junk = [T("x", "y", WINDOWS[0], 5), T("x", "z", WINDOWS[0], 4), T("y", "z", WINDOWS[0], 3)]
    a, b = T("a", "a", WINDOWS[0], 1), T("a", "b", WINDOWS[0], 1)
    c1, c2 = T("b", "a", WINDOWS[2], 1), T("b", "a", WINDOWS[3], 1)
    evidence = junk + [a, b, c1, a, b, c2]
    ties = [a, b]
    res = one(q, evidence, ties)
    assert rank_tie_vectors(res).cut_min is not None
    s = tie_report(res)["per_question"]
    assert s["recall@5"][0][2] == pytest.approx(1 / 3) and s["recall@10"][0][2] == pytest.approx(2 / 3)
    orders = [slow_rank(q, o[:len(evidence)]) for o in distinct_tie_orderings(evidence + ties)]
    assert not any(o["recall@5"] == pytest.approx(1 / 3) and o["recall@10"] == pytest.approx(2 / 3) for o in orders)
    check(q, evidence, ties, distinct_tie_orderings)


# ---------------------------------------------------------------- the offset law itself
def _offset_law_by_enumeration(g, t, cap, dead, mults):
    labels = ["T"] * t + ["D"] * dead + [f"w{i}" for i, m in enumerate(mults) for _ in range(m)]
    assert len(labels) == g
    out: dict[int, Fraction] = {}
    perms = list(itertools.permutations(range(g)))
    for p in perms:
        seq = [labels[i] for i in p]
        j = seq.index("T")
        if j < cap:
            kappa = len({x for x in seq[:j] if x != "D"})
            out[kappa] = out.get(kappa, Fraction(0)) + Fraction(1, len(perms))
    return out


@pytest.mark.parametrize(("g", "t", "cap", "dead", "mults"), [
    (5, 1, 5, 1, [1, 2]), (6, 2, 4, 0, [3, 1]), (6, 1, 3, 2, [2, 1]), (7, 3, 5, 1, [2, 1]), (5, 2, 2, 0, [1, 1, 1]),
])
def test_first_offset_dist_equals_enumeration(g, t, cap, dead, mults):
    got = first_offset_dist(g, t, cap, dead, mults)
    ref = _offset_law_by_enumeration(g, t, cap, dead, mults)
    for k, v in enumerate(got):
        assert v == pytest.approx(float(ref.get(k, 0)), abs=1e-15)


def test_first_offset_dist_large_group_is_finite_and_sums_right():
    # 2,000 items: exact integers over g!, no float overflow; total mass = P(first marked within cap)
    g, t, cap, dead, mults = 2000, 3, 1500, 40, [1] * 1950 + [2] * 2 + [3]
    q = first_offset_dist(g, t, cap, dead, mults)
    assert all(math.isfinite(x) and x >= 0 for x in q)
    assert math.fsum(q) == pytest.approx(1 - math.comb(g - cap, t) / math.comb(g, t), abs=1e-12)
