"""Incidence.year_slices: one search among the distinct ``(entity, year)`` keys, against two plain searches."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.incidence import Incidence

_EMPTY = np.zeros(0, dtype=np.int64)


def _incidence(year_keys: np.ndarray) -> Incidence:
    """An index whose ``year_keys`` are given (``year_slices`` reads nothing else)."""
    return Incidence(np.zeros(1, dtype=np.int64), _EMPTY, _EMPTY, year_keys, 0, 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=60), st.lists(st.integers(-3, 45), max_size=30))
def test_year_slices_are_the_left_and_right_searches(stored: list[int], asked: list[int]) -> None:
    year_keys = np.array(sorted(stored), dtype=np.int64)
    keys = np.array(asked, dtype=np.int64)
    starts, stops = _incidence(year_keys).year_slices(keys)
    assert starts.tolist() == year_keys.searchsorted(keys, "left").tolist()
    assert stops.tolist() == year_keys.searchsorted(keys, "right").tolist()
    assert starts.dtype == stops.dtype == np.int64
