"""``tempbench_core.arrays.any_in_sorted`` (the attribution pools' membership test) is ``in_sorted(values, set).any()``."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tempbench_core.arrays import any_in_sorted, in_sorted

SMALL = st.integers(-3, 40)


@settings(max_examples=500, deadline=None)
@given(st.lists(SMALL, max_size=8), st.lists(SMALL, max_size=30), st.sampled_from([np.int64, np.int32]))
def test_any_in_is_in_sorted_any(values: list[int], members: list[int], dtype: type) -> None:
    sorted_set = np.sort(np.array(members, dtype=dtype))  # duplicates kept: a pool before deduplication
    vals = np.array(values, dtype=np.int64)
    assert any_in_sorted(vals, sorted_set) == bool(in_sorted(vals, sorted_set).any())


def test_any_in_edges() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert not any_in_sorted(np.array([1]), empty)
    assert not any_in_sorted(empty, np.array([1, 2]))
    assert any_in_sorted(np.array([9, 2]), np.array([1, 2]))  # past the end, then a member
    assert not any_in_sorted(np.array([3, 0]), np.array([1, 2]))
