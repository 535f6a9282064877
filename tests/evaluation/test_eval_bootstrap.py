"""Bootstrap intervals and paired tests (SPEC §3.7)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import eval.bootstrap as bootstrap
from eval.bootstrap import RatioMetric, Resamples, bootstrap_ci, count_matrix, kept_resamples, mean_metric, paired_test


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
def test_kept_resamples_are_the_draws(sizes, n_boot, seed):
    memo: dict = {}
    for n in sizes + sizes:  # each size asked again: the second answer is read from the memo
        want = np.random.default_rng(seed).integers(0, n, size=(n_boot, n), dtype=np.int32) if n else None
        for got in (kept_resamples(memo, n, n_boot, seed), kept_resamples(None, n, n_boot, seed)):
            assert got.draws.shape == (n_boot, n) and (want is None or np.array_equal(got.draws, want))
            counts = got.counts()
            assert counts.dtype == np.float64 and np.array_equal(counts, count_matrix(n, n_boot, seed))
            assert (counts.sum(axis=1) == n).all()
    assert set(memo) == {(n, n_boot, seed) for n in sizes}


@settings(max_examples=30, deadline=None)
@given(n=st.integers(0, 300), n_boot=st.integers(0, 80), k=st.integers(1, 4), block=st.sampled_from([1, 5, 32, 1000]),
       seed=st.integers(0, 5))
def test_replicate_sums_are_the_count_matrix_product_whatever_the_block(n, n_boot, k, block, seed):
    values = np.random.default_rng(seed).random((n, k))
    drawn = Resamples(n, n_boot, seed)
    want = drawn.sums(values)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(bootstrap, "BLOCK", block)
        got = drawn.sums(values)
        assert np.array_equal(drawn.sums(values[:, 0]), got[:, 0])
        for j in range(k):  # a column's sums do not depend on the columns summed with it
            assert drawn.sums(values[:, [j]]).tobytes() == np.ascontiguousarray(got[:, [j]]).tobytes()
    assert got.tobytes() == want.tobytes()  # bit for bit: each replicate summed in the same order
    # and the product itself (a slow loop over the draws; equal up to the order of the additions)
    slow = np.array([[sum(values[q, j] for q in row) for j in range(k)] for row in drawn.draws.astype(np.int64)])
    assert np.allclose(got, slow.reshape(n_boot, k), rtol=1e-12, atol=1e-12)


_BLAS_PROBE = """
import numpy as np
from eval.bootstrap import RatioMetric, bootstrap_ci, mean_metric, paired_test
rng = np.random.default_rng(5)
n = 3000
a = {f"m{i}": mean_metric(np.where(rng.random(n) < 0.2, np.nan, rng.random(n))) for i in range(6)}
a["micro"] = RatioMetric(rng.integers(0, 9, n).astype(float), rng.integers(1, 9, n).astype(float), 0.0)
b = {k: RatioMetric(m.num * 0.9, m.den, m.empty) for k, m in a.items()}
print(repr(bootstrap_ci(a, n_boot=500, seed=2)), repr(paired_test(a, b, n_boot=300, n_perm=300, seed=2)))
"""


def test_intervals_do_not_depend_on_the_blas_threads():
    # the resampled sums are numpy's own loops, not BLAS: a threaded BLAS splits the sums by the machine's
    # cores, and the intervals' last digits followed (another machine, other bytes)
    outputs = set()
    for threads in ("1", "2", "4"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads}
        done = subprocess.run([sys.executable, "-c", _BLAS_PROBE], env=env, capture_output=True, text=True, check=True)
        outputs.add(done.stdout)
    assert len(outputs) == 1


def _float_sums(drawn: Resamples, values: np.ndarray) -> np.ndarray:
    """``C @ values`` with every column summed in float64 (no int32 part): what :meth:`Resamples.sums` must equal."""
    columns = np.ascontiguousarray(np.atleast_2d(np.asarray(values, dtype=np.float64).T))
    out = np.zeros((drawn.n_boot, len(columns)))
    if drawn.n:
        for start, block in drawn.blocks():
            out[start:start + len(block)] = bootstrap.weighted_sums(block, columns)
    return out


_ODD_VALUES = [0.0, -0.0, 1.0, -1.0, 2.0, 15.0, 0.5, 1e-300, np.nan, np.inf, -np.inf, 2.0**31, -(2.0**30), 3e9]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 300), n_boot=st.integers(0, 70), seed=st.integers(0, 5),
       kinds=st.lists(st.sampled_from(["mask", "small", "signed", "float", "odd", "big"]), min_size=1, max_size=6))
def test_whole_number_columns_sum_to_the_same_bits_as_floats(n, n_boot, seed, kinds):
    # columns of whole numbers are summed in int32: exact, so the same bits as the float64 sums, whatever the order
    rng = np.random.default_rng(seed)
    make = {
        "mask": lambda: rng.integers(0, 2, n).astype(float),
        "small": lambda: rng.integers(0, 16, n).astype(float),
        "signed": lambda: rng.integers(-9, 9, n).astype(float) * np.where(rng.random(n) < 0.1, -0.0, 1.0),
        "float": lambda: rng.random(n),
        "odd": lambda: rng.choice(_ODD_VALUES, n),
        "big": lambda: np.full(n, 2.0**31 // max(n, 1)) - rng.integers(0, 2, n),
    }
    values = np.stack([make[k]() for k in kinds], axis=1) if n else np.zeros((0, len(kinds)))
    drawn = Resamples(n, n_boot, seed)
    got, want = drawn.sums(values), _float_sums(drawn, values)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    assert drawn.sums(values[:, 0]).tobytes() == np.ascontiguousarray(want[:, 0]).tobytes()


def test_counts_beyond_a_byte_are_kept():
    drawn = Resamples(300, 3, seed=1)
    draws = np.zeros((3, 300), dtype=np.int32)  # every replicate draws question 0 three hundred times
    drawn.table = drawn._count(draws)
    assert drawn.table[:, 0].tolist() == [300] * 3 and drawn.counts().sum() == 900
    assert drawn.sums(np.arange(300.0)).tolist() == [0.0] * 3 and drawn.sums(np.ones(300)).tolist() == [300.0] * 3
    assert Resamples(50, 10, seed=2).table.dtype == np.uint8  # a byte a cell in the usual case
