"""Sorting, set operations and slices of integer arrays, shared by the index build, the BFS and the loss attribution.

A sort and a neighbour test beat ``np.unique``'s and ``np.isin``'s general
machinery on the small, already nearly sorted arrays of one question's pool;
on the millions of entries of an index build, one ``np.sort`` of bounded
columns packed into one integer beats ``np.lexsort`` and a stable
``np.argsort`` followed by gathers (:func:`sorted_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Packed keys stay below 2**62, clear of int64's sign bit and of overflow in the products.
_PACKED_LIMIT = 1 << 62


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values: ``np.unique(values)``, by one sort (numpy 2.3+'s hash table is slower here)."""
    if len(values) < 2:
        return values
    out = np.sort(values)
    keep = np.empty(len(out), dtype=bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]


def merged_unique(values: np.ndarray) -> np.ndarray:
    """:func:`sorted_unique` of an array made of ascending runs (slices of sorted lists, blocks of packed keys).

    Timsort (``kind="stable"``) merges such runs in about linear time where
    the default sort (introsort) sorts them from scratch: several times
    faster on these arrays, a little slower on random ones. The result is the
    same: equal values are equal, however ties are ordered.
    """
    if len(values) < 2:
        return values
    out = np.sort(values, kind="stable")
    keep = np.empty(len(out), dtype=bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]


def unique_inverse(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_inverse=True)`` of a 1-D integer array: sorted distinct values, each value's index.

    (numpy 2.3+ finds distinct values with a hash table that is many times
    slower than a sort on these arrays.)
    """
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    new = np.empty(len(values), dtype=bool)
    new[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(len(values), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], inverse


def first_occurrences(values: np.ndarray) -> np.ndarray:
    """Ascending positions of the first occurrence of each distinct value."""
    if len(values) < 2:
        return np.arange(len(values))
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.empty(len(values), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    # the positions in ascending order: a mask read back, not a sort
    at = np.zeros(len(values), dtype=bool)
    at[order[first]] = True
    return np.flatnonzero(at)


def in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``values`` occur in the sorted array ``sorted_set``."""
    if len(sorted_set) == 0 or len(values) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    pos[pos == len(sorted_set)] = 0
    return sorted_set[pos] == values


def any_in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> bool:
    """``in_sorted(values, sorted_set).any()`` without the mask: whether one of a few values is in the set.

    The element at each value's insertion point (clipped to the last) equals
    the value exactly when the set holds it.
    """
    if not len(sorted_set):
        return False
    return bool((sorted_set.take(sorted_set.searchsorted(values), mode="clip") == values).any())


def in_sorted_distinct(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """:func:`in_sorted` of ascending, distinct ``values``.

    A BFS hop tests many merged keys against a smaller set (the pool so far,
    the entities visited): each element of the set is looked up among the
    values instead, one binary search per set element rather than one per
    value. A value equal to an element is the one found there (the values are
    distinct), so a value is marked exactly when the set holds it.
    """
    if len(sorted_set) >= len(values):
        return in_sorted(values, sorted_set)
    out = np.zeros(len(values), dtype=bool)
    at = np.searchsorted(values, sorted_set)
    inside = at < len(values)
    at = at[inside]
    out[at[values[at] == sorted_set[inside]]] = True
    return out


def gather_slices(values: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """``concatenate([values[starts[i]:stops[i]] for i])`` without a Python loop over the slices.

    One slice comes back as a view of ``values``: read it, do not write it.
    """
    if len(starts) == 1:
        return values[int(starts[0]) : int(stops[0])]
    lengths = stops - starts
    full = lengths > 0
    if not full.all():  # an empty slice has no position to mark its start
        starts, stops, lengths = starts[full], stops[full], lengths[full]
    if not len(starts):
        return values[:0]
    # the positions to read are a running sum: +1 within a slice, a jump to the next slice's start at its
    # first position (one pass over the output instead of a repeat, an arange and an add)
    offsets = np.cumsum(lengths)
    at = np.ones(int(offsets[-1]), dtype=np.int64)
    at[0] = starts[0]
    at[offsets[:-1]] = starts[1:] - stops[:-1] + 1
    np.cumsum(at, out=at)
    return values.take(at)


def sorted_rows(columns: Sequence[np.ndarray], sizes: Sequence[int]) -> list[np.ndarray]:
    """The rows ``(columns[0][i], columns[1][i], ...)`` sorted lexicographically, as columns (``int64``).

    Every value of ``columns[j]`` lies in ``[0, sizes[j])``. Equal rows are
    equal, so the result does not depend on how ties are ordered: where the
    product of the sizes fits in 62 bits the columns are packed into one
    ``int64`` key (mixed radix, first column most significant) and sorted
    with one ``np.sort``, otherwise sorted with ``np.lexsort``.
    """
    columns = [np.asarray(c, dtype=np.int64) for c in columns]
    radix = [max(int(size), 1) for size in sizes]
    total = 1
    for size in radix:
        total *= size
    if total >= _PACKED_LIMIT:
        order = np.lexsort(columns[::-1])
        return [c[order] for c in columns]
    key = columns[0].copy()
    for column, size in zip(columns[1:], radix[1:], strict=True):
        key *= size
        key += column
    key.sort()
    out: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * len(columns)
    for j in range(len(columns) - 1, 0, -1):
        key, out[j] = np.divmod(key, radix[j])
    out[0] = key
    return out
