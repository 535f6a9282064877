"""SPEC conformance of the evaluation code, as small worked examples (SPEC §1.3, §3.1-§3.7, §6.2).

Every expected value here is derived by hand from SPEC's sentences, not from the
code's output. The tie-aware section compares against a brute-force enumeration
of every ordering of every tie group (``reference.eval``, written from SPEC §3.5's text).
"""

from __future__ import annotations

import json
import math
import random

import pytest
from reference.eval import brute_ties_macro
from tables import one, table

from eval import aggregate, score_question
from eval.answers import answer_rows, answers_report, exact_match, normalize, token_f1
from eval.negatives import negatives_report
from eval.rank import rank_metrics
from eval.scoring import ScoreOptions, evaluate, score_run, select
from eval.ties import tie_report
from eval.trp_ccr import coverage_by
from tempbench_core.errors import EvidenceError, RunMismatchError

TQ = 2000.0


def L(s, r, o, ts, te=None, **extra):
    """A label-space triple dict."""
    return {"s": s, "r": r, "o": o, "t_start": ts, "t_end": ts if te is None else te, **extra}


def I(s, r, o, ts, te=None, **extra):  # noqa: E743 - a short name for id-space triples
    """An id-space triple dict."""
    return {"s_id": s, "r_id": r, "o_id": o, "t_start": ts, "t_end": ts if te is None else te, **extra}


def Q(star, tq=TQ, **extra):
    q = {"id": "q1", "complexity": "2hop", "operator_type": "point_in_time", "t_query": tq, "S_star": star}
    q.update(extra)
    return q


G1 = L("A", "P", "B", 2000.0)
G2 = L("B", "Q", "C", 2000.0)


# ---------------------------------------------------------------- §3.1 per question


def test_generator_evidence_and_row_fields():
    # 4 items: G1 valid (hit), G1 at 1990 (wrong time), G2 valid (hit), an unrelated triple.
    ev = (x for x in [G1, L("A", "P", "B", 1990.0), G2, L("X", "P", "Y", 2000.0)])
    row = score_question(Q([G1, G2]), ev)
    assert row == {"id": "q1", "complexity": "2hop", "operator": "point_in_time",
                   "n_ret": 4, "hits": 2, "n_gold": 2, "trp": 0.5, "ccr": 1}


def test_tuples_and_lists_with_int_and_string_times():
    # float(t): ints and numeric strings normalise to floats; windows compared as floats.
    ev = [("A", "P", "B", 2000, 2000), ["B", "Q", "C", "2000", "2000.0"], ("B", "Q", "C", "1999", 1999)]
    row = score_question(Q([G1, G2]), ev)
    assert (row["n_ret"], row["hits"], row["trp"], row["ccr"]) == (3, 2, 2 / 3, 1)


def test_wide_window_and_non_whole_t_query():
    wide = L("A", "P", "B", 1990.0, 2010.0)
    assert score_question(Q([G1]), [wide])["hits"] == 1
    # t_query 2000.5: inside [1990, 2010] but not inside [2000, 2000]
    row = score_question(Q([G1], tq=2000.5), [wide, G1])
    assert (row["hits"], row["ccr"]) == (1, 1)
    assert score_question(Q([G1], tq="2000"), [G1])["hits"] == 1  # tq = float(t_query)


def test_repeats_count_again():
    row = score_question(Q([G1, G2]), [G1, G1, G1])
    assert (row["n_ret"], row["hits"], row["trp"], row["ccr"]) == (3, 3, 1.0, 0)
    row = score_question(Q([G1]), [G1, G1])
    assert (row["hits"], row["trp"], row["ccr"]) == (2, 1.0, 1)


def test_ccr_is_set_equality_of_hit_triples_with_gold():
    # a wrong-time copy of G2 does not make G2 a hit
    assert score_question(Q([G1, G2]), [G1, L("B", "Q", "C", 1999.0)])["ccr"] == 0
    # gold as a set: a repeated S_star triple counts once in n_gold
    row = score_question(Q([G1, G1, G2]), [G1, G2])
    assert (row["n_gold"], row["ccr"]) == (2, 1)
    # a gold hop whose own window is invalid can still be "hit" only by a valid item
    row = score_question(Q([G1, L("B", "Q", "C", 1990.0)]), [G1, G2])
    assert (row["hits"], row["ccr"]) == (2, 1)


def test_empty_evidence_and_missing_fields():
    row = score_question({"t_query": 2000, "S_star": [G1]}, [])
    assert row == {"id": None, "complexity": None, "operator": None,
                   "n_ret": 0, "hits": 0, "n_gold": 1, "trp": None, "ccr": 0}


def test_empty_s_star():
    row = score_question(Q([]), [G1, G2])
    assert (row["n_gold"], row["ccr"], row["hits"], row["n_ret"], row["trp"]) == (0, 0, 0, 2, 0.0)
    row = score_question(Q([]), [])
    assert (row["n_gold"], row["ccr"], row["trp"]) == (0, 0, None)


@pytest.mark.parametrize(
    ("item", "needle"),
    [
        (("A", "P", "B", 2000.0), "5"),
        (("A", "P", "B", 2000.0, 2000.0, 0.5), "5"),
        ({"s": "A", "r": "P", "t_start": 2000.0, "t_end": 2000.0}, "o"),
        ({"s": "A", "r": "P", "o": "B", "t_end": 2000.0}, "t_start"),
        ({"s": "A", "r": "P", "o": "B", "t_start": 2000.0}, "t_end"),
        ({"s": "A", "r": "P", "o": "B", "t_start": "spring", "t_end": 2000.0}, "t_start"),
    ],
)
def test_malformed_items_name_what_is_missing(item, needle):
    with pytest.raises(EvidenceError) as exc:
        score_question(Q([G1]), [G1, item])
    assert needle in str(exc.value)


def test_auto_key_space_rules():
    gold_ids = I("Q1", "P1", "Q2", 2000.0)
    gold_both = {**G1, "s_id": "Q1", "r_id": "P1", "o_id": "Q2"}
    # ids on both sides
    assert score_question(Q([gold_ids]), [I("Q1", "P1", "Q2", 2000.0)])["hits"] == 1
    # gold ids only, item labels only: no shared space -> error naming both sides' keys
    with pytest.raises(EvidenceError) as exc:
        score_question(Q([gold_ids]), [G1])
    msg = str(exc.value)
    assert "label" in msg and "id" in msg
    # gold labels only, item ids only
    with pytest.raises(EvidenceError):
        score_question(Q([G1]), [I("Q1", "P1", "Q2", 2000.0)])
    # gold carries both, item labels only -> labels
    assert score_question(Q([gold_both]), [G1])["hits"] == 1
    # both carry both -> ids win: labels agree but ids do not, so no hit
    item = {**G1, "s_id": "Q9", "r_id": "P1", "o_id": "Q2"}
    assert score_question(Q([gold_both]), [item])["hits"] == 0
    # gold labels only, item both -> labels
    assert score_question(Q([G1]), [item])["hits"] == 1


def test_tuple_compared_in_gold_space():
    gold_ids = I("Q1", "P1", "Q2", 2000.0)
    assert score_question(Q([gold_ids]), [("Q1", "P1", "Q2", 2000, 2000)])["hits"] == 1
    assert score_question(Q([gold_ids]), [("A", "P", "B", 2000, 2000)])["hits"] == 0
    assert score_question(Q([G1]), [("A", "P", "B", 2000, 2000)])["hits"] == 1


def test_forced_key_spaces():
    gold_both = {**G1, "s_id": "Q1", "r_id": "P1", "o_id": "Q2"}
    item = {**G1, "s_id": "Q9", "r_id": "P1", "o_id": "Q2"}
    assert score_question(Q([gold_both]), [item], key="label")["hits"] == 1
    assert score_question(Q([gold_both]), [item], key="id")["hits"] == 0
    with pytest.raises(EvidenceError):
        score_question(Q([G1]), [item], key="id")  # the gold has no ids
    with pytest.raises(EvidenceError):
        score_question(Q([gold_both]), [G1], key="id")  # the item has no ids
    # a tuple under a forced space is read in that space
    assert score_question(Q([gold_both]), [("Q1", "P1", "Q2", 2000, 2000)], key="id")["hits"] == 1


# ---------------------------------------------------------------- §3.2 aggregate


def _row(c, op, n_ret, hits, ccr):
    return {"id": None, "complexity": c, "operator": op, "n_ret": n_ret, "hits": hits,
            "n_gold": 1, "trp": hits / n_ret if n_ret else None, "ccr": ccr}


ROWS = [
    _row("1hop", "interval", 2, 1, 1),
    _row("2hop", None, 0, 0, 0),
    _row("1hop", "point_in_time", 4, 1, 0),
    _row("3+hop", None, 0, 0, 0),
]


def test_aggregate_empty():
    assert aggregate([]) == {"n_questions": 0}


def test_aggregate_worked_example():
    agg = aggregate(iter(ROWS))
    assert list(agg) == ["n_questions", "coverage", "TRP_macro", "TRP_micro", "CCR", "by_complexity", "by_operator"]
    assert agg["n_questions"] == 4
    assert agg["coverage"] == 0.5
    assert agg["TRP_macro"] == pytest.approx((0.5 + 0.25) / 2)
    assert agg["TRP_micro"] == pytest.approx(2 / 6)
    assert agg["CCR"] == 0.25
    assert list(agg["by_complexity"]) == ["1hop", "2hop", "3+hop"]
    assert agg["by_complexity"]["1hop"] == {"n": 2, "TRP": pytest.approx(0.375), "CCR": 0.5}
    assert agg["by_complexity"]["2hop"] == {"n": 1, "TRP": 0.0, "CCR": 0.0}
    # str(None) == 'None' sorts before lowercase names
    assert list(agg["by_operator"]) == [None, "interval", "point_in_time"]
    assert agg["by_operator"][None] == {"n": 2, "TRP": 0.0, "CCR": 0.0}
    assert agg["by_operator"]["point_in_time"] == {"n": 1, "TRP": 0.25, "CCR": 0.0}
    assert json.loads(json.dumps(agg))["by_operator"]["null"]["n"] == 2


def test_aggregate_nothing_retrieved_and_custom_by():
    rows = [_row("1hop", "interval", 0, 0, 0)] * 3
    agg = aggregate(rows, by=("complexity",))
    assert (agg["coverage"], agg["TRP_macro"], agg["TRP_micro"], agg["CCR"]) == (0.0, 0.0, 0.0, 0.0)
    assert "by_operator" not in agg
    # slice order by str(value): 10 < 9 as strings
    rows = [{**_row("x", "a", 1, 1, 1), "complexity": 9}, {**_row("x", "a", 1, 0, 0), "complexity": 10}]
    assert list(aggregate(rows, by=("complexity",))["by_complexity"]) == [10, 9]


def test_coverage_object_per_slice():
    cov = coverage_by(ROWS)
    assert cov["by_complexity"] == {"1hop": 1.0, "2hop": 0.0, "3+hop": 0.0}
    assert cov["by_operator"] == {None: 0.0, "interval": 1.0, "point_in_time": 1.0}


def _bench():
    qs = []
    for i, split in enumerate(["test", "test", "dev"]):
        qs.append({"id": f"q{i}", "split": split, "complexity": "1hop", "operator_type": "point_in_time",
                   "t_query": TQ, "S_star": [G1], "S_stale": [L("A", "P", "B", 1999.0)], "S_dist": [L("A", "P", "Z", 1990.0)],
                   "answer": "B", "question": "?"})
    return qs


def test_split_semantics():
    qs = _bench()
    run = {"q0": {"id": "q0", "evidence": [G1]}, "q2": {"id": "q2", "evidence": [G1]}}
    chosen, records, missing, outside = select(run, qs, "test")
    assert [q["id"] for q in chosen] == ["q0", "q1"] and missing == 1 and outside == 1
    ev = evaluate(run, qs, None, split="test")
    agg = aggregate(ev.rows)
    # q1 missing = empty retrieval: coverage 1/2, CCR 1/2, TRP macro over q0 only
    assert (agg["n_questions"], agg["coverage"], agg["CCR"], agg["TRP_macro"]) == (2, 0.5, 0.5, 1.0)
    # no split: exactly the run's records
    assert aggregate(evaluate(run, qs, None).rows)["n_questions"] == 2
    with pytest.raises(RunMismatchError):
        select({"zz": {"id": "zz", "evidence": []}}, qs, None)
    with pytest.raises(RunMismatchError):
        select({"zz": {"id": "zz", "evidence": []}}, qs, "test")


# ---------------------------------------------------------------- §3.3 negatives

H1 = L("A", "P", "B", 2000.0)
H2 = L("B", "Q", "C", 2000.0)
STALE = L("B", "Q", "C", 1995.0)
DIST = L("B", "Q", "D", 1990.0)


def _neg_q(qid, s_stale=None, s_dist=None):
    return {"id": qid, "t_query": TQ, "complexity": "2hop", "operator_type": "point_in_time", "S_star": [H1, H2],
            "S_stale": [H1, STALE] if s_stale is None else s_stale, "S_dist": [H1, DIST] if s_dist is None else s_dist}


# evidence -> expected (stale_exact, stale_same_fact, stale_same_relation, dist_exact, dist_same_triple, dist_same_relation)
NEG_CASES = [
    ([STALE], (1, 1, 1, 0, 0, 0)),
    ([L("B", "Q", "C", 1980.0)], (0, 1, 1, 0, 0, 0)),
    ([L("B", "Q", "E", 1980.0)], (0, 0, 1, 0, 0, 1)),
    ([H2], (0, 0, 0, 0, 0, 0)),
    ([L("B", "Q", "D", 2000.0)], (0, 0, 0, 0, 1, 1)),
    ([DIST], (0, 0, 1, 1, 1, 1)),
    ([L("B", "Q", "E", 2000.0)], (0, 0, 0, 0, 0, 1)),
    ([L("B", "Q", "C", 1995.0, 2005.0)], (0, 0, 0, 0, 0, 0)),  # valid window: not stale, not exact
    ([L("B", "R", "C", 1995.0)], (0, 0, 0, 0, 0, 0)),  # another relation
    ([H1, L("A", "P", "B", 1995.0)], (0, 0, 0, 0, 0, 0)),  # the unreplaced hop
]


def test_negative_definitions_worked():
    names = ["stale_exact", "stale_same_fact", "stale_same_relation", "dist_exact", "dist_same_triple", "dist_same_relation"]
    qs = [_neg_q(f"q{i}") for i in range(len(NEG_CASES))]
    res = table(qs, [ev for ev, _ in NEG_CASES])
    flags = {q["id"]: {"stale_functional": True, "dist_functional": True} for q in qs}
    rep = negatives_report(res, flags)
    for name_i, name in enumerate(names):
        expected = [exp[name_i] for _, exp in NEG_CASES]
        assert rep["indicators"][name] == expected, name
        assert rep["rates"][name] == {"rate": sum(expected) / len(expected), "n": len(expected)}


def test_negatives_evaluable_and_functional_subsets():
    qs = [
        _neg_q("a"),  # evaluable for both
        _neg_q("b", s_stale=[L("A", "P", "B", 1999.0), STALE]),  # two triples differ: stale not evaluable
        _neg_q("c", s_dist=[H1, H2]),  # nothing differs: dist not evaluable
        _neg_q("d"),  # not functional for stale
        _neg_q("e"),  # not in the flags file at all
    ]
    ev = [[STALE, DIST]] * 5
    res = table(qs, ev)
    flags = {"a": {"stale_functional": True, "dist_functional": True},
             "b": {"stale_functional": True, "dist_functional": True},
             "c": {"stale_functional": True, "dist_functional": True},
             "d": {"stale_functional": False, "dist_functional": True}}
    rep = negatives_report(res, flags)
    assert rep["counts"]["stale"] == {"evaluable": 4, "functional": 2}  # a, c
    assert rep["counts"]["dist"] == {"evaluable": 4, "functional": 3}  # a, b, d
    assert rep["rates"]["stale_exact"] == {"rate": 1.0, "n": 2}
    assert rep["rates"]["dist_exact"] == {"rate": 1.0, "n": 3}
    assert negatives_report(res, None)["rates"] is None


# ---------------------------------------------------------------- §3.4 rank metrics


def _d(i):
    return 1.0 / math.log2(i + 1)


def test_rank_worked_example():
    g3 = L("C", "R", "D", 1990.0)  # gold hop invalid at t_query: not in rel
    q = Q([G1, G2, g3])
    x = L("X", "P", "Y", 2000.0)
    # dedup: [x, G1@1999, G1, g3, G2]; hits at 3 and 5; |rel| = 2
    ev = [x, L("A", "P", "B", 1999.0), G1, G1, g3, G2]
    out = rank_metrics(one(q, ev))
    m = out["macro"]
    assert m["recall@1"] == 0.0 and m["recall@5"] == 1.0 and m["recall@25"] == 1.0
    assert m["mrr"] == pytest.approx(1 / 3)
    assert m["ndcg@1"] == 0.0
    assert m["ndcg@5"] == pytest.approx((_d(3) + _d(5)) / (_d(1) + _d(2)))
    # without the whole-item dedup G2 would sit at 6: the dedup must matter
    assert m["ndcg@5"] != pytest.approx(_d(3) / (_d(1) + _d(2)))


def test_rank_same_triple_second_valid_copy_is_not_a_hit():
    wide = L("A", "P", "B", 1995.0, 2005.0)
    q = Q([G1, G2])
    out = rank_metrics(one(q, [wide, G1, G2]))["macro"]
    # hits at 1 and 3 (G1 at 2 repeats the triple)
    assert out["recall@1"] == 0.5 and out["recall@5"] == 1.0
    assert out["ndcg@5"] == pytest.approx((_d(1) + _d(3)) / (_d(1) + _d(2)))


def test_rank_ideal_is_min_rel_k_and_macro_skips_empty_rel():
    q1 = Q([G1, G2, L("C", "R", "D", 2000.0)])  # |rel| = 3
    q2 = Q([L("A", "P", "B", 1990.0)], id="q2")  # empty rel
    q3 = Q([G1], id="q3")  # |rel| = 1, nothing returned
    out = rank_metrics(table([q1, q2, q3], [[G2], [G1], []]))
    assert out["n_evaluated"] == 2 and out["n_empty_rel"] == 1
    m = out["macro"]
    # q1: hit at 1 -> ndcg@1 = 1/1; recall@1 = 1/3; q3: zeros
    assert m["ndcg@1"] == pytest.approx(0.5)
    assert m["recall@1"] == pytest.approx((1 / 3) / 2)
    assert m["ndcg@5"] == pytest.approx((1 / (_d(1) + _d(2) + _d(3))) / 2)
    assert m["mrr"] == pytest.approx(0.5)


def test_rank_never_beyond_returned():
    q = Q([G1, G2])
    ev = [L("X", "P", str(i), 2000.0) for i in range(15)]
    out = rank_metrics(one(q, ev))["macro"]
    assert out["recall@25"] == 0.0 and out["mrr"] == 0.0


# ---------------------------------------------------------------- §3.5 ties vs brute force


def _random_case(rng, qid):
    ents = "ABCD"
    star = [L(rng.choice(ents), "P", rng.choice(ents), float(rng.choice([2000, 2000, 1990]))) for _ in range(rng.randint(1, 3))]
    universe = sorted({(s, "P", o, float(y)) for s in ents for o in ents for y in (2000, 1990)})
    picked = rng.sample([t for t in universe if (t[0], t[1], t[2]) in {(g["s"], g["r"], g["o"]) for g in star}], 1)
    picked += rng.sample(universe, rng.randint(1, 6))
    picked = list(dict.fromkeys(picked))  # distinct whole items
    scored = [L(s, r, o, y, score=float(rng.choice([1, 2, 2, 3]))) for s, r, o, y in picked]
    scored.sort(key=lambda d: -d["score"])
    n_ret = rng.randint(1, len(scored))
    ev = scored[:n_ret]
    last = ev[-1]["score"]
    ct = [d for d in scored[n_ret:] if d["score"] == last]
    return Q(star, id=qid), ev, ct


def _check_against_brute(questions, evs, cts, only=None):
    res = table(questions, evs, cts)
    summary = tie_report(res)["summary"]
    brute = brute_ties_macro(questions, evs, cts)
    for name, (o, e, lo, hi) in brute.items():
        if only is not None and name not in only:
            continue
        got = summary[name]
        assert got["observed"] == pytest.approx(o), name
        assert got["expected"] == pytest.approx(e), name
        assert got["min"] == pytest.approx(lo), name
        assert got["max"] == pytest.approx(hi), name
        assert got["bias"] == pytest.approx(o - e), name


def test_ties_hand_example():
    # returned [G1@2000 s=2, x s=1, y s=1], cutoff_ties [G2 s=1]: group of 3 at the cut, 2 of them returned.
    q = Q([G1, G2])
    x, y = L("X", "P", "Y", 2000.0, score=1.0), L("Y", "P", "Z", 2000.0, score=1.0)
    ev = [{**G1, "score": 2.0}, x, y]
    ct = [{**G2, "score": 1.0}]
    s = tie_report(one(q, ev, ct))["summary"]
    # G2 lands in the top 3 with probability 2/3: E[TRP] = (1 + 2/3) / 3, CCR = 2/3
    assert s["TRP"]["expected"] == pytest.approx((1 + 2 / 3) / 3)
    assert (s["TRP"]["min"], s["TRP"]["max"], s["TRP"]["observed"]) == pytest.approx((1 / 3, 2 / 3, 1 / 3))
    assert s["CCR"]["expected"] == pytest.approx(2 / 3)
    assert (s["CCR"]["min"], s["CCR"]["max"]) == (0.0, 1.0)
    # recall@25 sees only the 3 returned positions: E = (1 + 2/3) / 2
    assert s["recall@25"]["expected"] == pytest.approx((1 + 2 / 3) / 2)
    _check_against_brute([q], [ev], [ct])


def test_ties_random_cases_against_enumeration():
    rng = random.Random(7)
    for trial in range(60):
        cases = [_random_case(rng, f"q{trial}_{j}") for j in range(rng.randint(1, 3))]
        qs, evs, cts = (list(x) for x in zip(*cases, strict=True))
        _check_against_brute(qs, evs, cts)


def test_ties_trp_ccr_with_repeated_items_against_enumeration():
    # TRP and CCR count repeats (SPEC §3.1), so the hypergeometric forms hold with duplicates too.
    rng = random.Random(11)
    for trial in range(60):
        q, ev, ct = _random_case(rng, f"q{trial}")
        ev = sorted(ev + [dict(rng.choice(ev + ct))], key=lambda d: -d["score"])
        ct = [d for d in ct if d["score"] == ev[-1]["score"]]
        _check_against_brute([q], [ev], [ct], only=("TRP", "CCR"))


def test_ties_without_scores_are_exact():
    q = Q([G1, G2])
    s = tie_report(one(q, [("A", "P", "B", 2000, 2000), ("X", "P", "Y", 2000, 2000)]))["summary"]
    assert s["TRP"] == {"observed": 0.5, "expected": 0.5, "min": 0.5, "max": 0.5, "bias": 0.0}


def test_ties_trp_macro_like_the_metric_when_nothing_retrieved():
    s = tie_report(one(Q([G1]), []))["summary"]
    # TRP_macro is 0.0 when no question retrieved anything (SPEC §3.2), so is its tie summary
    assert s["TRP"] == {"observed": 0.0, "expected": 0.0, "min": 0.0, "max": 0.0, "bias": 0.0}
    assert s["CCR"]["expected"] == 0.0


# ---------------------------------------------------------------- §3.6 answers


def test_normalisation():
    assert normalize("The  Eiffel-Tower, a landmark!") == "eiffeltower landmark"
    assert normalize("An Apple\tand THE pear.") == "apple and pear"
    assert normalize("Theatre") == "theatre"


@pytest.mark.parametrize(
    ("pred", "aliases", "em"),
    [
        ("Paris", ["Paris, France"], 1),  # gold contains prediction
        ("It is paris.", ["Paris"], 1),  # prediction contains gold
        ("Lyon", ["Paris"], 0),
        ("", ["Paris"], 0),  # empty prediction
        ("The.", ["Paris"], 0),  # normalises to empty
        ("  ", [""], 0),
        ("1994", ["1994"], 1),
        ("x", ["Paris", "X"], 1),  # any alias
    ],
)
def test_exact_match(pred, aliases, em):
    assert exact_match(pred, aliases) == em


def test_token_f1_and_report():
    assert token_f1("new york city", ["York New"]) == pytest.approx(0.8)  # P 2/3, R 1
    assert token_f1("", ["x"]) == 0.0
    qs = [{"id": "a", "operator_type": "interval", "answer": 1994.0},
          {"id": "b", "operator_type": "point_in_time", "answer": "Paris"},
          {"id": "c", "operator_type": "point_in_time", "answer": ["Rome", "Roma"]}]
    rows = answer_rows(qs, {"a": "1994", "b": "Lyon", "c": "roma"})
    rep = answers_report(rows)
    assert rep["EM"] == pytest.approx(2 / 3)
    assert rep["EM_without_interval"] == pytest.approx(1 / 2)
    assert rep["interval_leak_contaminated"] is True
    assert answers_report(rows, t_query_exposed=False)["interval_leak_contaminated"] is False


# ---------------------------------------------------------------- §6.2 JSON layout


def test_scores_json_layout():
    qs = _bench()
    run = {"q0": {"id": "q0", "evidence": [{**G1, "score": 1.0}], "cutoff_ties": []},
           "q1": {"id": "q1", "evidence": [], "cutoff_ties": []}}
    flags = {q["id"]: {"stale_functional": True, "dist_functional": True} for q in qs}
    out = score_run(run, qs, flags, predictions={"q0": "B", "q1": ""}, options=ScoreOptions(n_boot=50))
    for key in ("trp_ccr", "coverage", "negatives", "rank", "ties", "ci", "answers"):
        assert key in out, key
    assert set(out["trp_ccr"]) == {"n_questions", "coverage", "TRP_macro", "TRP_micro", "CCR", "by_complexity", "by_operator"}
    assert out["coverage"]["by_complexity"] == {"1hop": 0.5}
    assert set(out["negatives"]) >= {"stale_exact", "stale_same_fact", "stale_same_relation",
                                     "dist_exact", "dist_same_triple", "dist_same_relation"}
    assert all(set(v) == {"rate", "n"} for v in out["negatives"].values())
    rank_names = [f"recall@{k}" for k in (1, 5, 10, 15, 25)] + [f"ndcg@{k}" for k in (1, 5, 10, 15, 25)] + ["mrr"]
    assert list(out["rank"]) == rank_names
    assert set(out["ties"]) == {*rank_names, "TRP", "CCR"}
    assert all(set(v) == {"observed", "expected", "min", "max", "bias"} for v in out["ties"].values())
    for name, ci in out["ci"].items():
        assert ci is None or (len(ci) == 2 and ci[0] <= ci[1]), name
    assert {"TRP_macro", "CCR", "coverage"} <= set(out["ci"])
    json.dumps(out)
    # fixed seed: identical intervals on a second call
    opts = ScoreOptions(n_boot=50)
    assert score_run(run, qs, flags, options=opts)["ci"] == score_run(run, qs, flags, options=opts)["ci"]
    # no flags: the negatives section says so
    assert "flags" in json.dumps(score_run(run, qs, None, options=ScoreOptions(n_boot=10))["negatives"])


def test_run_file_times_read_like_float(tmp_path):
    # SPEC §3.1 normalises with float(t): numeric strings in a file are times too.
    from tempbench_core.errors import InputError
    from tempbench_core.runfile import read_run

    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"id": "q0", "evidence": [{**G1, "t_start": "2000", "t_end": 2000},
                                                         ["B", "Q", "C", "2000.0", 2000]]}) + "\n")
    run = read_run(path)
    assert score_question(Q([G1, G2]), run["q0"]["evidence"])["ccr"] == 1
    path.write_text(json.dumps({"id": "q0", "evidence": [{**G1, "t_start": "spring"}]}) + "\n")
    with pytest.raises(InputError):
        read_run(path)


def test_question_without_variant_is_not_evaluable():
    q = {k: v for k, v in _neg_q("a").items() if k != "S_dist"}
    rep = negatives_report(one(q, [STALE]), {"a": {"stale_functional": True, "dist_functional": True}})
    assert rep["counts"]["dist"] == {"evaluable": 0, "functional": 0}
    assert rep["rates"]["dist_exact"] == {"rate": None, "n": 0}
    assert rep["rates"]["stale_exact"] == {"rate": 1.0, "n": 1}


def test_loader_empty_s_star_invalid_and_merged_ids_score_in_id_space(tmp_path):
    # SPEC §1.3/§3.1: an empty S_star is invalid input for the loader; with
    # benchmark.jsonl merged every triple carries both spaces, so run items
    # carrying ids are matched on ids (homonym labels do not collide).
    from retriever.benchmark import load_benchmark
    from tempbench_core.errors import InputError

    base = {"id": "q0", "split": "test", "question": "?", "answer": "B", "t_query": 2000.0,
            "complexity": "1hop", "operator_type": "point_in_time", "S_dist": [], "S_stale": []}
    lab = tmp_path / "benchmark_labelled.jsonl"
    lab.write_text(json.dumps({**base, "S_star": []}) + "\n")
    with pytest.raises(InputError) as exc:
        load_benchmark(lab)
    assert "S_star" in str(exc.value) and "1" in str(exc.value)
    lab.write_text(json.dumps({**base, "S_star": [G1], "extra_field": 7}) + "\n")
    ids = tmp_path / "benchmark.jsonl"
    ids.write_text(json.dumps({**base, "S_star": [I("Q1", "P1", "Q2", 2000.0)]}) + "\n")
    (q,) = load_benchmark(lab, ids_path=ids)
    assert q["extra_field"] == 7
    homonym = {**G1, "s_id": "Q9", "r_id": "P1", "o_id": "Q2"}
    right = {**G1, "s_id": "Q1", "r_id": "P1", "o_id": "Q2"}
    assert score_question(q, [homonym])["hits"] == 0
    assert score_question(q, [right])["hits"] == 1
    assert score_question(q, [G1])["hits"] == 1  # a label-only item is compared in labels
