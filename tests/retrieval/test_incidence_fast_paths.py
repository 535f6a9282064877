"""Incidence's fast paths against plain Python: ``year_slices`` (one search among the distinct ``(entity, year)``
keys) against two plain searches, ``other_ends`` against each slice's rows read one by one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.tiny import make_index

from retriever.incidence import Incidence, _ascending_within

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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(2000, 2003)), min_size=1, max_size=40))
def test_other_ends_are_each_slices_neighbours_ascending(rows: list[tuple[int, int, int]]) -> None:
    index = make_index([(f"E{s}", "P", f"E{o}", y) for s, o, y in rows], {})
    kg, inc = index.kg, index.incidence
    head, tail = kg.head.astype(np.int64), kg.tail.astype(np.int64)
    by_entity, by_year = inc.other_ends(head, tail)
    for e in range(kg.n_entities):
        lo, hi = int(inc.indptr[e]), int(inc.indptr[e + 1])
        expected = sorted(int(head[r] + tail[r] - e) for r in range(kg.n_rows) if e in (head[r], tail[r]))
        assert by_entity[lo:hi].tolist() == expected
        for year in range(inc.min_year, inc.min_year + inc.span):  # a key outside the span is another entity's
            start, stop = inc.year_slices(np.array([e * inc.span + year - inc.min_year], dtype=np.int64))
            got = by_year[int(start[0]):int(stop[0])].tolist()
            assert got == sorted(int(head[r] + tail[r] - e) for r in range(kg.n_rows)
                                 if e in (head[r], tail[r]) and kg.year[r] == year)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 9)), max_size=30), st.sampled_from([1, 1 << 60]))
def test_ascending_within_groups_packed_or_not(pairs: list[tuple[int, int]], scale: int) -> None:
    pairs = sorted(pairs, key=lambda p: p[0])  # groups non-decreasing, values in any order within a group
    groups = np.array([g * scale for g, _ in pairs], dtype=np.int64)
    values = np.array([v for _, v in pairs], dtype=np.int64)
    assert _ascending_within(groups, values, 10).tolist() == [v for _, v in sorted(pairs)]
