"""Paired comparison (SPEC §3.7): Holm correction, questions differing, the coverage note."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.bootstrap import holm, mean_metric, paired_test
from tempbench.cli import main


def _holm_by_definition(pvalues):
    """Holm (1979) read literally: reject H_(i) while p_(i) <= alpha / (m - i + 1); the adjusted
    p of a hypothesis is the smallest alpha at which it is rejected."""
    defined = [p for p in pvalues if p is not None]
    m = len(defined)
    order = sorted(range(m), key=lambda i: defined[i])
    candidates = sorted({min(1.0, p * k) for p in defined for k in range(1, m + 1)} | {1.0})
    adjusted = [1.0] * m
    for alpha in reversed(candidates):
        for rank, i in enumerate(order):
            if defined[i] * (m - rank) <= alpha + 1e-15:
                adjusted[i] = alpha
            else:
                break
    it = iter(adjusted)
    return [None if p is None else next(it) for p in pvalues]


def test_holm_worked_example():
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([None, 0.5]) == [None, 0.5]
    assert holm([]) == []


@given(st.lists(st.one_of(st.none(), st.floats(0.0005, 1.0)), max_size=8))
def test_holm_equals_its_definition(pvalues):
    got = holm(pvalues)
    want = _holm_by_definition(pvalues)
    for g, w in zip(got, want, strict=True):
        assert (g is None and w is None) or g == pytest.approx(w)


def test_questions_differing_and_smallest_p():
    rng = random.Random(3)
    a = np.array([rng.random() for _ in range(50)])
    b = a.copy()
    b[[3, 7, 11]] += 0.5
    out = paired_test({"m": mean_metric(a)}, {"m": mean_metric(b)}, n_boot=50, n_perm=99)["m"]
    assert out["n_differ"] == 3 and out["p_min"] == 1 / 100
    assert out["p"] >= out["p_min"]


def test_compare_cli_names_the_tests_and_warns_on_coverage(small_sample, tmp_path, capsys):
    runs = {}
    for name in ("oracle", "nonoracle"):
        runs[name] = tmp_path / f"{name}.jsonl"
        assert main(["run", "--config", name, "--data", str(small_sample), "--out", str(runs[name])]) == 0
    capsys.readouterr()
    out_json = tmp_path / "cmp.json"
    assert main(["compare", str(runs["oracle"]), str(runs["nonoracle"]), "--data", str(small_sample), "--holm",
                 "--boot", "100", "--perm", "200", "--json", str(out_json)]) == 0
    out, err = capsys.readouterr()
    assert "two-sided paired permutation test (200 permutations" in err and "1/(200 + 1)" in err
    assert "TRP is averaged over the questions with evidence only" in err
    assert "p (Holm)" in out and "questions differing" in out
    result = json.loads(out_json.read_text(encoding="utf-8"))
    tests = list(result["overall"].values())
    assert all("p_holm" in t and t["p_holm"] >= t["p"] for t in tests if t["p"] is not None)
    assert result["coverage_gap"] > 0.02 and result["correction"].startswith("Holm over all")
