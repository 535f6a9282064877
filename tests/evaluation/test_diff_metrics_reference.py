"""The diff's metric deltas (SPEC §6.3) read TRP/CCR/coverage off the published scorer's rules (SPEC §3.1-§3.2).

:func:`eval.diff.evidence_scores` resolves a whole run as one table; here it is
checked against the slow published scorer of :mod:`tests.reference.eval`,
question by question, on a run and on a baseline that differs from it (items
dropped, times moved), with the gold kept between the two calls as
``compare`` keeps it; and on both with the ids taken away, gold and items (the
label space). Both sides carry the same spaces: SPEC §3.1's conformance domain.
"""

from __future__ import annotations

import copy
import random

import pytest

from eval.diff import evidence_scores
from eval.metric_tables import flatten_scores
from tests.reference.eval import published_aggregate, published_score
from tests.reference.synthetic import synthetic


def _slow_coverage(rows: list[dict], by=("complexity", "operator")) -> dict:
    out = {"overall": sum(1 for r in rows if r["n_ret"] > 0) / len(rows)}
    for field in by:
        values = sorted({r[field] for r in rows}, key=str)
        out[f"by_{field}"] = {v: sum(1 for r in rows if r[field] == v and r["n_ret"] > 0)
                                 / sum(1 for r in rows if r[field] == v) for v in values}
    return out


def _perturbed(run: dict, seed: int) -> dict:
    rng = random.Random(seed)
    out = copy.deepcopy(run)
    for rec in out.values():
        ev = [it for it in rec["evidence"] if rng.random() > 0.2]
        for it in ev:
            if rng.random() < 0.2:
                it["t_start"] = it["t_end"] = it["t_start"] + rng.choice([-1.0, 1.0])
        rec["evidence"] = ev
    return out


def _labels_only(records: list[dict] | dict) -> list[dict] | dict:
    """A copy without ``s_id, r_id, o_id`` in the gold (questions) or the evidence (a run)."""
    out = copy.deepcopy(records)
    triples = ([t for q in out for t in q["S_star"]] if isinstance(out, list)
               else [it for rec in out.values() for it in rec["evidence"]])
    for triple in triples:
        for key in ("s_id", "r_id", "o_id"):
            del triple[key]
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("space", ["id", "label"])
def test_evidence_scores_equal_the_published_scorer(seed, space):
    questions, run, _ = synthetic(n=300, seed=seed)
    baseline = _perturbed(run, seed)
    if space == "label":
        questions, run, baseline = _labels_only(questions), _labels_only(run), _labels_only(baseline)
    by_id = {q["id"]: q for q in questions}
    qids = [q["id"] for q in questions][:250]  # a baseline of fewer questions: the common ones
    shared: dict = {}
    for records in (baseline, run):
        rows = [published_score(by_id[q], records[q]["evidence"]) for q in qids]
        expected = flatten_scores({"trp_ccr": published_aggregate(rows), "coverage": _slow_coverage(rows)})
        got = evidence_scores(by_id, records, qids, "auto", shared)
        assert got.keys() == expected.keys()
        assert got == pytest.approx(expected, abs=1e-12)
