"""Paired comparison of two runs on the same questions (SPEC §3.7).

For every headline metric, overall and per slice (complexity, operator): the
values of A and B, ``delta = A - B``, a paired bootstrap 95% interval of delta
(one resampling of the questions both runs answer) and the p-value of a
two-sided paired permutation test (A and B swapped per question with
probability 1/2); :func:`eval.bootstrap.paired_test` has the formulas. An
optional Holm correction (:func:`eval.bootstrap.holm`) adjusts the p-values
over every reported row; :func:`holm_reach` says when the permutations are too
few for any adjusted p to reach :data:`ALPHA`.

References
----------
- M. D. Smucker, J. Allan and B. Carterette, "A Comparison of Statistical
  Significance Tests for Information Retrieval Evaluation", CIKM 2007 (the
  paired randomization test over topics).
- S. Holm, "A Simple Sequentially Rejective Multiple Test Procedure",
  Scandinavian Journal of Statistics 6(2), 1979 (the step-down correction).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from eval.bootstrap import LEVEL, N_BOOT, N_PERM, SEED, holm, paired_test
from eval.scoring import BY, Evaluation, headline_metrics

#: The metrics compared within each slice.
SLICE_METRICS = ("coverage", "TRP_macro", "CCR", "ndcg@10", "mrr")
#: A coverage gap (in share of questions) beyond which TRP comparisons need a warning.
COVERAGE_GAP = 0.02
#: The significance level the Holm note speaks of.
ALPHA = 0.05


def holm_reach(n_tests: int, n_perm: int, alpha: float = ALPHA) -> dict[str, Any]:
    """Whether Holm over ``n_tests`` p-values from ``n_perm`` permutations can reach ``alpha`` at all.

    A permutation p is at least ``1 / (P + 1)``, and Holm multiplies the
    smallest p of the family by the family's size ``m``, every other adjusted
    p being at least that one; so no row can reach ``alpha`` when
    ``m / (P + 1) > alpha``. The smallest ``P`` that can is
    ``ceil(m / alpha) - 1``.

    Returns
    -------
    dict
        ``smallest`` (the smallest Holm-adjusted p possible), ``reachable``,
        ``perm_needed`` (the smallest ``--perm`` for which it is reachable).
    """
    # exact arithmetic (0.05 is not a binary fraction): m / (P + 1) <= alpha  <=>  P + 1 >= m / alpha
    needed = max(math.ceil(Fraction(n_tests) / Fraction(str(alpha))) - 1, 1)
    return {"smallest": min(1.0, n_tests / (n_perm + 1)), "reachable": n_perm >= needed, "perm_needed": needed,
            "alpha": alpha}


def test_description(n_boot: int, n_perm: int) -> str:
    """One line naming the tests, for tables and JSON."""
    return (f"{LEVEL:.0%} CI: paired bootstrap of A - B over questions ({n_boot:,} replicates); p: two-sided paired "
            f"permutation test ({n_perm:,} permutations, A and B swapped per question), smallest reportable "
            f"p = 1/({n_perm:,} + 1) = {1 / (n_perm + 1):.2g}")


def compare_evaluations(ev_a: Evaluation, ev_b: Evaluation, n_boot: int = N_BOOT, n_perm: int = N_PERM, seed: int = SEED,
                        correct: bool = False) -> dict[str, Any]:
    """Overall and per-slice paired tests of two evaluations of the same questions.

    With ``correct``, every test gets ``p_holm``: Holm's adjustment over all
    reported rows (overall and slices together).
    """
    out: dict[str, Any] = {
        "n_questions": len(ev_a.rows),
        "tests": test_description(n_boot, n_perm),
        "overall": paired_test(headline_metrics(ev_a), headline_metrics(ev_b), n_boot=n_boot, n_perm=n_perm, seed=seed),
    }
    for field in BY:
        values: dict[Any, list[int]] = {}
        for i, row in enumerate(ev_a.rows):
            values.setdefault(row[field], []).append(i)
        sliced = {}
        for value in sorted(values, key=str):
            idx = np.asarray(values[value], dtype=np.int64)
            a = {k: v for k, v in headline_metrics(ev_a, idx).items() if k in SLICE_METRICS}
            b = {k: v for k, v in headline_metrics(ev_b, idx).items() if k in SLICE_METRICS}
            sliced[value] = {"n": int(idx.size), **paired_test(a, b, n_boot=n_boot, n_perm=n_perm, seed=seed)}
        out[f"by_{field}"] = sliced
    cov = out["overall"].get("coverage") or {}
    gap = abs(cov["delta"]) if cov.get("delta") is not None else 0.0
    out["coverage_gap"] = gap
    if gap > COVERAGE_GAP:
        out["note"] = (f"coverage differs by {gap:.1%}: TRP is averaged over the questions with evidence only, "
                       "so the two TRP values are over different questions")
    if correct:
        tests = [t for t in _all_tests(out)]
        for t, adjusted in zip(tests, holm([t["p"] for t in tests]), strict=True):
            t["p_holm"] = adjusted
        m = sum(t["p"] is not None for t in tests)
        out["correction"] = f"Holm over all {m} reported rows"
        reach = holm_reach(m, n_perm)
        out["holm_reach"] = reach
        if not reach["reachable"]:
            out["correction_note"] = (
                f"with {n_perm:,} permutations the smallest p is 1/({n_perm:,} + 1), so Holm over {m} rows cannot go "
                f"below {m}/{n_perm + 1:,} = {reach['smallest']:.3g} > {reach['alpha']:g}: no row can be significant "
                f"at {reach['alpha']:g}; --perm {reach['perm_needed']:,} (or more) can")
    return out


def _all_tests(result: dict[str, Any]) -> list[dict[str, Any]]:
    tests = [t for t in result["overall"].values() if isinstance(t, dict)]
    for field in BY:
        for per in result[f"by_{field}"].values():
            tests += [t for t in per.values() if isinstance(t, dict)]
    return tests
