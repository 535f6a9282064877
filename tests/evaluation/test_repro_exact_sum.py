"""eval.repro.means.exact_sum against its plain equivalent, math.fsum of the values as a list (same bits)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.repro.means import exact_sum, fmean


def _fsum(values: np.ndarray) -> float:
    """The reference: exactly what the kernels computed before exact_sum."""
    return math.fsum(values.tolist())


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


# long enough for the array path (short arrays go to fsum itself), with values of every kind of magnitude
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-2.0 ** 990, max_value=2.0 ** 990)
scores = st.sampled_from([0.0, -0.0, 1.0, 0.5, 1 / 3, 2 / 3, 0.1, 1e-300, 5e-324, -5e-324, 2.0 ** -1022, 1 - 2 ** -53])
value_lists = st.lists(st.one_of(finite, scores), min_size=64, max_size=400)


@settings(max_examples=300, deadline=None)
@given(value_lists)
def test_exact_sum_is_fsum_bit_for_bit(values) -> None:
    array = np.array(values, dtype=np.float64)
    assert _bits(exact_sum(array)) == _bits(_fsum(array))


@settings(max_examples=200, deadline=None)
@given(st.lists(scores, min_size=64, max_size=300), st.data())
def test_exact_sum_of_score_differences_and_squares(values, data) -> None:
    a = np.array(values, dtype=np.float64)
    b = np.array(data.draw(st.permutations(values)), dtype=np.float64)
    for array in (a - b, (a - b) * (a - b), np.maximum(a, 1.0 - a) ** 2):
        assert _bits(exact_sum(array)) == _bits(_fsum(array))


def test_half_way_totals_round_to_even() -> None:
    # 1 + 2**-53 is exactly half way between two floats: the sum must round to even (1.0), as fsum does
    for tail in (2.0 ** -53, 3 * 2.0 ** -53, -(2.0 ** -54)):
        array = np.array([1.0] + [tail] + [0.0] * 100, dtype=np.float64)
        assert _bits(exact_sum(array)) == _bits(_fsum(array))
    array = np.array([2.0 ** 52 + 1, 0.5] + [0.0] * 100)
    assert _bits(exact_sum(array)) == _bits(_fsum(array))


@pytest.mark.parametrize("values", [
    [-0.0] * 80,  # fsum keeps the sign of a zero total
    [0.0, -0.0] * 40,
    [1.0, -1.0] * 40,
    [5e-324] * 70 + [-5e-324] * 70,
    [1e308] * 64,  # near overflow: fsum decides (here it raises)
    [math.inf] + [1.0] * 70,
    [math.nan] + [1.0] * 70,
    [1.0, 2.0],  # short: fsum itself
])
def test_edge_cases_match_fsum(values) -> None:
    array = np.array(values, dtype=np.float64)
    try:
        expected = _bits(_fsum(array))
    except OverflowError:
        with pytest.raises(OverflowError):
            exact_sum(array)
        return
    got = exact_sum(array)
    assert _bits(got) == expected or (math.isnan(got) and math.isnan(_fsum(array)))


def test_fmean_is_the_fsum_mean_of_the_defined_values() -> None:
    rng = np.random.default_rng(7)
    values = rng.random(5000)
    values[rng.random(5000) < 0.1] = np.nan
    kept = values[~np.isnan(values)]
    assert _bits(fmean(values)) == _bits(math.fsum(kept.tolist()) / len(kept))
    assert fmean(np.array([np.nan])) is None
