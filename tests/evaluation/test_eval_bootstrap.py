"""Bootstrap intervals and paired tests (SPEC §3.7)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.bootstrap import RatioMetric, bootstrap_ci, count_matrix, kept_counts, mean_metric, paired_test


def test_count_matrix_is_deterministic_and_complete():
    a = count_matrix(50, 200, seed=3)
    assert a.shape == (200, 50) and (a.sum(axis=1) == 50).all()
    assert np.array_equal(a, count_matrix(50, 200, seed=3))
    assert not np.array_equal(a, count_matrix(50, 200, seed=4))


def test_ci_equals_slow_resampling_loop():
    rng = np.random.default_rng(1)
    x = rng.random(40)
    hits, n_ret = rng.integers(0, 5, 40).astype(float), rng.integers(0, 5, 40).astype(float)
    ci = bootstrap_ci({"mean": mean_metric(x), "micro": RatioMetric(hits, n_ret, 0.0)}, n_boot=300, seed=9)
    # the same draws, one replicate at a time
    idx = np.random.default_rng(9).integers(0, 40, size=(300, 40), dtype=np.int32)
    means = [x[row].mean() for row in idx]
    micro = [hits[row].sum() / n_ret[row].sum() if n_ret[row].sum() else 0.0 for row in idx]
    assert ci["mean"] == pytest.approx(list(np.percentile(means, [2.5, 97.5])), abs=1e-12)
    assert ci["micro"] == pytest.approx(list(np.percentile(micro, [2.5, 97.5])), abs=1e-12)
    assert ci["mean"][0] <= x.mean() <= ci["mean"][1]


def test_nan_entries_are_outside_the_macro():
    m = mean_metric(np.array([1.0, np.nan, 0.0]))
    assert m.value() == 0.5
    assert mean_metric(np.array([np.nan])).value() is None
    assert RatioMetric(np.zeros(1), np.zeros(1), 0.0).value() == 0.0


def test_paired_test():
    rng = np.random.default_rng(0)
    a = rng.random(200)
    same = paired_test({"m": mean_metric(a)}, {"m": mean_metric(a)}, n_boot=200, n_perm=200)
    assert same["m"]["delta"] == 0.0 and same["m"]["p"] == 1.0 and same["m"]["ci"] == [0.0, 0.0]
    better = paired_test({"m": mean_metric(a + 0.2)}, {"m": mean_metric(a)}, n_boot=200, n_perm=200)
    assert better["m"]["delta"] == pytest.approx(0.2)
    assert better["m"]["p"] == pytest.approx(1 / 201) and better["m"]["ci"][0] > 0.15
    noise = paired_test({"m": mean_metric(rng.random(200))}, {"m": mean_metric(rng.random(200))}, n_boot=200, n_perm=500)
    assert noise["m"]["p"] > 0.01


@settings(max_examples=40, deadline=None)
@given(sizes=st.lists(st.integers(0, 400), min_size=1, max_size=5), n_boot=st.integers(1, 30), seed=st.integers(0, 3))
def test_kept_counts_are_the_count_matrices(sizes, n_boot, seed):
    memo: dict = {}
    for n in sizes + sizes:  # each size asked again: the second answer is read from the memo
        want = count_matrix(n, n_boot, seed)
        for got in (kept_counts(memo, n, n_boot, seed), kept_counts(None, n, n_boot, seed)):
            assert got.dtype == np.float64 and got.shape == want.shape and np.array_equal(got, want)
    assert set(memo) == {(n, n_boot, seed) for n in sizes}
