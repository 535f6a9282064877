"""Typed-negative hit rates (SPEC §3.3)."""

from __future__ import annotations

import pytest
from tables import question_indicators, table

from eval.negatives import RATE_NAMES, negatives_report, replaced_pair


def T(s, r, o, t, ids=False):
    d = {"s": s, "r": r, "o": o, "t_start": float(t), "t_end": float(t)}
    if ids:
        d.update(s_id="Q" + s, r_id="P" + r, o_id="Q" + o)
    return d


def q(qid="q1", ids=False):
    return {
        "id": qid, "t_query": 1994.0,
        "S_star": [T("a", "p", "b", 1994, ids), T("b", "q", "c", 1994, ids)],
        "S_stale": [T("a", "p", "b", 1980, ids), T("b", "q", "c", 1994, ids)],
        "S_dist": [T("a", "p", "b", 1994, ids), T("b", "q", "x", 1991, ids)],
    }


def test_replaced_pair():
    hop, repl = replaced_pair(q(), "S_stale", "label")
    assert hop.five("label") == ("a", "p", "b", 1994.0, 1994.0) and repl.five("label") == ("a", "p", "b", 1980.0, 1980.0)
    hop, repl = replaced_pair(q(), "S_dist", "label")
    assert hop.keys["label"] == ("b", "q", "c") and repl.keys["label"] == ("b", "q", "x")
    two = q()
    two["S_stale"] = [T("a", "p", "b", 1980), T("b", "q", "c", 1981)]
    assert replaced_pair(two, "S_stale", "label") is None  # two triples differ: not evaluable
    same = q()
    same["S_dist"] = list(same["S_star"])
    assert replaced_pair(same, "S_dist", "label") is None


@pytest.mark.parametrize(
    ("evidence", "expected"),
    [
        ([T("a", "p", "b", 1980)], {"stale_exact", "stale_same_fact", "stale_same_relation"}),
        ([T("a", "p", "b", 1975)], {"stale_same_fact", "stale_same_relation"}),
        ([T("a", "p", "z", 1975)], {"stale_same_relation"}),
        ([T("a", "p", "z", 1994)], set()),  # valid at t_query: not a stale hit
        ([T("a", "p", "b", 1994)], set()),  # the gold hop itself
        ([T("b", "q", "x", 1991)], {"dist_exact", "dist_same_triple", "dist_same_relation"}),
        ([T("b", "q", "x", 1994)], {"dist_same_triple", "dist_same_relation"}),
        ([T("b", "q", "y", 1994)], {"dist_same_relation"}),
        ([T("b", "q", "c", 1994)], set()),
        ([], set()),
    ],
)
def test_indicators(evidence, expected):
    question = q()
    got = question_indicators(question, evidence)
    assert {k for k, v in got.items() if v} == expected
    assert all(v is not None for v in got.values())


def test_id_space_evidence():
    question = q(ids=True)
    ev = [{"s_id": "Qa", "r_id": "Pp", "o_id": "Qb", "t_start": 1980.0, "t_end": 1980.0}]
    got = question_indicators(question, ev)
    assert got["stale_exact"] and got["stale_same_fact"]


def test_report_rates_and_counts():
    qs = [q("q1"), q("q2"), q("q3"), q("q4")]
    qs[3]["S_stale"] = [T("a", "p", "b", 1980), T("b", "q", "c", 1981)]  # not evaluable for stale
    evidence = [[T("a", "p", "b", 1980)], [T("b", "q", "y", 1994)], [], [T("a", "p", "b", 1980)]]
    resolved = table(qs, evidence)
    flags = {"q1": {"stale_functional": True, "dist_functional": True},
             "q2": {"stale_functional": True, "dist_functional": False},
             "q3": {"stale_functional": False, "dist_functional": True},
             "q4": {"stale_functional": True, "dist_functional": True}}
    rep = negatives_report(resolved, flags)
    assert rep["counts"] == {"stale": {"evaluable": 3, "functional": 2}, "dist": {"evaluable": 4, "functional": 3}}
    assert rep["rates"]["stale_exact"] == {"rate": 0.5, "n": 2}
    assert rep["rates"]["dist_same_relation"] == {"rate": 0.0, "n": 3}  # q2 hits it but is not dist-functional
    assert list(rep["rates"]) == list(RATE_NAMES)
    none = negatives_report(resolved, None)
    assert none["rates"] is None and none["counts"]["stale"]["evaluable"] == 3


def test_differing_triples_kept_serve_their_own_question_only():
    """``differing_kept`` gives ``differing_triples``; a kept entry serves the question object it was made for,
    not another question with the same id (another benchmark, another run of the caller)."""
    from eval.negatives import differing_kept, differing_triples

    question, shared = q(), {}
    got = differing_kept(question, "S_stale", shared)
    assert got == differing_triples(question, "S_stale") and got[0] and got[1]
    assert differing_kept(question, "S_stale", shared) is got
    other = {**question, "S_stale": list(question["S_star"])}  # same id, nothing differs
    assert differing_kept(other, "S_stale", shared) == ([], []) == differing_triples(other, "S_stale")
    assert differing_kept(question, "S_dist", None) == differing_triples(question, "S_dist")


def test_question_pairs_parse_s_star_only_when_a_list_is_not_kept():
    """The pairs are the same whether the differing lists were kept beforehand (the reproduction keeps them for
    every question), kept as they are made, or made without a cache; S_star is parsed only when one is needed."""
    from eval.evidence import resolve
    from eval.negatives import differing_kept, question_pairs

    qs = [q("q1"), q("q2", ids=True), {**q("q3"), "S_dist": None}]
    evidence = [[T("a", "p", "b", 1980)], [], [T("b", "q", "x", 1991)]]
    plain = resolve(qs, evidence, None, "auto")
    want = [question_pairs(plain, i) for i in range(len(qs))]
    assert want[0]["stale"] is not None and want[2]["dist"] is None

    fresh: dict = {}
    made = resolve(qs, evidence, None, "auto", shared=fresh)
    assert [question_pairs(made, i) for i in range(len(qs))] == want

    kept: dict = {}
    for question in qs:
        for variant in ("S_stale", "S_dist"):
            differing_kept(question, variant, kept)
    before = resolve(qs, evidence, None, "auto", shared=kept)
    for key in [k for k in kept if k[0] == "S_star"]:
        del kept[key]  # what resolving parsed: the pairs must not need it again
    assert [question_pairs(before, i) for i in range(len(qs))] == want
    assert not [k for k in kept if k[0] == "S_star"]


def test_pair_layout_kept_serves_the_same_question_objects_only():
    """The pairs' layout kept for the next run scored against the same questions gives the codes a fresh one
    gives; a run of other question objects (same ids, other pairs) gets its own layout."""
    from eval.evidence import resolve
    from eval.negatives import _pair_codes

    def codes_of(table):
        return [{kind: part[kind].tolist() for kind in part} for part in _pair_codes(table)]

    qs = [q("q1"), q("q2", ids=True), {**q("q3"), "S_dist": None}, q("q4")]
    qs[3]["S_stale"] = [T("a", "p", "b", 1980), T("b", "q", "c", 1981)]  # not evaluable for stale
    runs = [[[T("a", "p", "b", 1980)], [], [T("b", "q", "x", 1991)], []],
            [[], [{"s_id": "Qa", "r_id": "Pp", "o_id": "Qb", "t_start": 1980.0, "t_end": 1980.0}], [], [T("z", "p", "b", 1)]]]
    shared: dict = {}
    for evidence in runs + runs:
        kept, fresh = resolve(qs, evidence, None, "auto", shared=shared), resolve(qs, evidence, None, "auto")
        assert codes_of(kept) == codes_of(fresh)
        assert negatives_report(kept, None) == negatives_report(fresh, None)
    assert [k for k in shared if k[0] == "negative pair layout"]
    other = [dict(x) for x in qs]
    other[0]["S_stale"] = [T("a", "p", "b", 1970), T("b", "q", "c", 1994)]  # another replacement, same id
    kept, fresh = resolve(other, runs[0], None, "auto", shared=shared), resolve(other, runs[0], None, "auto")
    assert codes_of(kept) == codes_of(fresh) != codes_of(resolve(qs, runs[0], None, "auto"))
    assert codes_of(resolve(qs[:2], runs[0][:2], None, "auto", shared=shared)) == codes_of(resolve(qs[:2], runs[0][:2], None, "auto"))
