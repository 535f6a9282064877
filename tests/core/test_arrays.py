"""tempbench_core.arrays: the sorted-array helpers against plain numpy on random inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tempbench_core import arrays


@st.composite
def bounded_columns(draw: st.DrawFn) -> tuple[list[np.ndarray], list[int]]:
    width = draw(st.integers(1, 4))
    # sizes up to 2**40 each: some products fit in 62 bits (the packed sort), others do not (lexsort)
    sizes = draw(st.lists(st.integers(1, 1 << 40), min_size=width, max_size=width))
    n = draw(st.integers(0, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # few distinct values per column, so that equal rows and equal prefixes are common
    columns = [rng.choice(np.unique(rng.integers(0, size, 4)), n) for size in sizes]
    return columns, sizes


@settings(max_examples=300, deadline=None)
@given(bounded_columns())
def test_sorted_rows_is_the_lexicographic_order(case: tuple[list[np.ndarray], list[int]]) -> None:
    columns, sizes = case
    got = arrays.sorted_rows(columns, sizes)
    expected = sorted(zip(*(c.tolist() for c in columns), strict=True))
    assert [tuple(row) for row in zip(*(g.tolist() for g in got), strict=True)] == expected
    assert all(g.dtype == np.int64 and len(g) == len(columns[0]) for g in got)


def test_sorted_rows_packs_when_the_key_fits_and_falls_back_otherwise() -> None:
    columns = [np.array([2, 0, 2, 1]), np.array([1, 5, 0, 5])]
    for sizes in ([3, 6], [1 << 40, 1 << 40]):  # packed; lexsort
        first, second = arrays.sorted_rows(columns, sizes)
        assert first.tolist() == [0, 1, 2, 2]
        assert second.tolist() == [5, 5, 0, 1]
    assert arrays.sorted_rows(columns, [3, 6])[0] is not columns[0]  # the inputs are left as they were
    assert columns[0].tolist() == [2, 0, 2, 1]


def test_sorted_unique_first_occurrences_in_sorted() -> None:
    values = np.array([5, 3, 5, 1, 3, 9])
    assert arrays.sorted_unique(values).tolist() == [1, 3, 5, 9]
    assert arrays.first_occurrences(values).tolist() == [0, 1, 3, 5]
    assert arrays.in_sorted(np.array([1, 2, 9, 10]), np.array([1, 3, 9])).tolist() == [True, False, True, False]
    assert arrays.in_sorted(np.array([1]), np.array([], dtype=np.int64)).tolist() == [False]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-(1 << 62), 1 << 62) | st.integers(-3, 3), max_size=50))
def test_unique_inverse_and_sorted_unique_are_plain_python_sets(values: list[int]) -> None:
    a = np.array(values, dtype=np.int64)
    distinct, inverse = arrays.unique_inverse(a)
    assert distinct.tolist() == sorted(set(values)) == arrays.sorted_unique(a).tolist()
    assert distinct[inverse].tolist() == values and inverse.dtype == np.int64


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), max_size=6), max_size=6))
def test_gather_slices_is_the_concatenation_of_the_slices(bounds: list[list[int]]) -> None:
    values = np.arange(100, 110, dtype=np.int64)
    pairs = [(min(b[:2], default=0), max(b[:2], default=0)) for b in bounds]
    starts = np.array([p[0] for p in pairs], dtype=np.int64)
    stops = np.array([p[1] for p in pairs], dtype=np.int64)
    expected = [v for lo, hi in pairs for v in values[lo:hi].tolist()]
    assert arrays.gather_slices(values, starts, stops).tolist() == expected
