"""tempbench_core.arrays: the helpers that avoid a sort, against plain Python on random inputs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tempbench_core import arrays

small_ints = st.integers(-(1 << 62), 1 << 62) | st.integers(-3, 3)


@st.composite
def runs(draw: st.DrawFn) -> list[int]:
    """Ascending runs (the arrays the BFS merges), sometimes with equal values across and within runs."""
    parts = draw(st.lists(st.lists(small_ints, max_size=12), max_size=8))
    return [v for part in parts for v in sorted(part)]


@settings(max_examples=300, deadline=None)
@given(runs() | st.lists(small_ints, max_size=60))
def test_merged_unique_is_the_sorted_set(values: list[int]) -> None:
    got = arrays.merged_unique(np.array(values, dtype=np.int64))
    assert got.tolist() == sorted(set(values))
    assert got.dtype == np.int64


@settings(max_examples=300, deadline=None)
@given(runs() | st.lists(small_ints, max_size=60))
def test_first_occurrences_are_the_first_positions_of_each_value(values: list[int]) -> None:
    firsts: dict[int, int] = {}
    for i, v in enumerate(values):
        firsts.setdefault(v, i)
    got = arrays.first_occurrences(np.array(values, dtype=np.int64))
    assert got.tolist() == sorted(firsts.values())


@settings(max_examples=400, deadline=None)
@given(st.lists(small_ints, max_size=60), st.lists(small_ints, max_size=60))
def test_in_sorted_distinct_is_membership(values: list[int], members: list[int]) -> None:
    # distinct ascending values against a sorted set with repeats, larger or smaller than the values, or empty
    distinct = np.array(sorted(set(values)), dtype=np.int64)
    sorted_set = np.array(sorted(members + values[::3]), dtype=np.int64)
    got = arrays.in_sorted_distinct(distinct, sorted_set)
    assert got.tolist() == [v in set(sorted_set.tolist()) for v in distinct.tolist()]
    assert got.tolist() == arrays.in_sorted(distinct, sorted_set).tolist()
    assert got.dtype == bool
