"""Rank metrics (SPEC §3.4): kernel vs a slow loop vs ir_measures vs ranx, and the TREC export."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from reference.eval import slow_rank
from tables import hit_list, one, table

from eval.measures import RANK_MEASURES, rank_measures
from eval.rank import rank_kernel, rank_metrics, rank_metrics_ir_measures
from eval.trec import format_qrels, format_run, trec_run_and_qrels


def T(s, r, o, t0, t1=None):
    return {"s": s, "r": r, "o": o, "t_start": float(t0), "t_end": float(t0 if t1 is None else t1)}


def random_question(rng: random.Random, qid: str):
    ents = "abcdef"
    tq = float(rng.randint(1990, 1993))
    star = [T(rng.choice(ents), rng.choice("pq"), rng.choice(ents), rng.randint(1990, 1993)) for _ in range(rng.randint(1, 4))]
    pool = star + [T(rng.choice(ents), rng.choice("pq"), rng.choice(ents), rng.randint(1990, 1993)) for _ in range(6)]
    pool += [dict(t, t_start=tq - 1, t_end=tq + 1) for t in star[:1]]  # a copy with a wider valid window
    ev = [dict(rng.choice(pool)) for _ in range(rng.randint(0, 30))]
    q = {"id": qid, "t_query": tq, "S_star": star, "complexity": "1hop", "operator_type": "x"}
    return q, ev


@pytest.fixture(scope="module")
def random_runs():
    rng = random.Random(7)
    cases = [random_question(rng, f"q{i}") for i in range(3000)]
    resolved = table([q for q, _ in cases], [ev for _, ev in cases])
    return cases, resolved


def test_kernel_equals_slow_loop(random_runs):
    cases, resolved = random_runs
    result = rank_metrics(resolved)
    slow = [slow_rank(q, ev) for q, ev in cases]
    assert result["n_empty_rel"] == sum(s is None for s in slow)
    assert result["n_evaluated"] == sum(s is not None for s in slow) > 1000
    for name, values in result["per_question"].items():
        for i, s in enumerate(slow):
            if s is None:
                assert np.isnan(values[i])
            else:
                assert values[i] == pytest.approx(s[name], abs=1e-12), (name, i)
        expected_macro = np.mean([s[name] for s in slow if s is not None])
        assert result["macro"][name] == pytest.approx(expected_macro, abs=1e-12)


def test_kernel_equals_ir_measures(random_runs):
    _, resolved = random_runs
    ours = rank_metrics(resolved)
    theirs = rank_metrics(resolved, backend="ir_measures")
    for name, values in ours["per_question"].items():
        np.testing.assert_allclose(values, theirs["per_question"][name], atol=1e-9, equal_nan=True, err_msg=name)
    macro = rank_metrics_ir_measures(resolved)
    for name in ours["macro"]:
        assert ours["macro"][name] == pytest.approx(macro[name], abs=1e-9), name


def test_kernel_equals_ranx(random_runs):
    ranx = pytest.importorskip("ranx")
    _, resolved = random_runs
    run, qrels = trec_run_and_qrels(resolved)
    # ranx needs every qrels query in the run with at least one document
    run = {q: (run.get(q) or {"__none__": 1.0}) for q in qrels}
    names = [m.name for m in RANK_MEASURES]  # the declared names are ranx's metric names
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names, make_comparable=True)
    ours = rank_metrics(resolved)["macro"]
    for name in names:
        assert ours[name] == pytest.approx(theirs[name], abs=1e-9), name


def test_worked_example():
    star = [T("a", "p", "b", 1994), T("b", "q", "c", 1994), T("c", "r", "d", 1980)]  # third is not valid at tq
    q = {"id": "w", "t_query": 1994.0, "S_star": star}
    ev = [T("x", "p", "y", 1994), T("a", "p", "b", 1980), T("a", "p", "b", 1994), T("a", "p", "b", 1994), T("b", "q", "c", 1994)]
    flags, n_rel = hit_list(one(q, ev))
    assert n_rel == 2
    assert flags == [False, False, True, True]  # the repeat is dropped, b-q-c moves up to rank 4
    m = rank_metrics(one(q, ev))["macro"]
    assert m["recall@1"] == 0.0 and m["recall@5"] == 1.0 and m["mrr"] == 1 / 3
    ideal = 1 + 1 / math.log2(3)
    assert m["ndcg@5"] == pytest.approx((1 / math.log2(4) + 1 / math.log2(5)) / ideal)
    # recall@25 of a short list only sees what was returned
    assert m["recall@25"] == 1.0


def test_empty_rel_reported_apart():
    q = {"id": "e", "t_query": 2000.0, "S_star": [T("a", "p", "b", 1994)]}
    r = rank_metrics(one(q, [T("a", "p", "b", 1994)]))
    assert r["n_empty_rel"] == 1 and r["n_evaluated"] == 0 and r["macro"]["mrr"] is None


def test_kernel_probabilities_are_linear():
    gains = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 1.0]])
    out = rank_kernel(gains, np.array([1, 2]), rank_measures((1, 2)))
    assert out["recall@1"].tolist() == [0.5, 0.5]
    assert out["ndcg@2"][0] == pytest.approx(0.5 + 0.5 / math.log2(3))


def test_trec_format():
    q = {"id": "w", "t_query": 1994.0, "S_star": [T("a", "p", "b", 1994), T("b", "q", "c", 1994)]}
    run, qrels = trec_run_and_qrels(one(q, [T("x", "p", "y", 1994), T("a", "p", "b", 1994)]))
    assert run == {"w": {"x|p|y|1994": 2.0, "a|p|b|1994": 1.0}}
    assert qrels == {"w": {"a|p|b|1994": 1, "b|q|c|1994": 1}}
    assert format_run(run) == "w Q0 x|p|y|1994 1 2 tempbench\nw Q0 a|p|b|1994 2 1 tempbench\n"
    assert format_qrels(qrels) == "w 0 a|p|b|1994 1\nw 0 b|q|c|1994 1\n"
