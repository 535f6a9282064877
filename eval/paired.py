"""Paired comparison of two runs on the same questions (SPEC §3.7).

For every headline metric, overall and per slice (complexity, operator): the
values of A and B, ``delta = A - B``, a paired bootstrap 95% interval of delta
(one resampling of the questions both runs answer) and the p-value of a
two-sided paired permutation test (A and B swapped per question with
probability 1/2); :func:`eval.bootstrap.paired_test` has the formulas. An
optional Holm correction (:func:`eval.bootstrap.holm`) adjusts the p-values
over every reported row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from eval.bootstrap import holm, paired_test
from eval.scoring import BY, Evaluation, headline_metrics

#: The metrics compared within each slice.
SLICE_METRICS = ("coverage", "TRP_macro", "CCR", "ndcg@10", "mrr")
#: A coverage gap (in share of questions) beyond which TRP comparisons need a warning.
COVERAGE_GAP = 0.02


def test_description(n_boot: int, n_perm: int) -> str:
    """One line naming the tests, for tables and JSON."""
    return (f"95% CI: paired bootstrap of A - B over questions ({n_boot:,} replicates); p: two-sided paired "
            f"permutation test ({n_perm:,} permutations, A and B swapped per question), smallest reportable "
            f"p = 1/({n_perm:,} + 1) = {1 / (n_perm + 1):.2g}")


def compare_evaluations(ev_a: Evaluation, ev_b: Evaluation, n_boot: int = 1000, n_perm: int = 1000, seed: int = 0,
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
        out["correction"] = f"Holm over all {sum(t['p'] is not None for t in tests)} reported rows"
    return out


def _all_tests(result: dict[str, Any]) -> list[dict[str, Any]]:
    tests = [t for t in result["overall"].values() if isinstance(t, dict)]
    for field in BY:
        for per in result[f"by_{field}"].values():
            tests += [t for t in per.values() if isinstance(t, dict)]
    return tests
