"""Per-entity incidence index (SPEC §2.4): the rows touching each entity.

The graph is undirected: row ``i`` is incident to ``head[i]`` and ``tail[i]``;
a self-loop row (``head == tail``) is listed once. Two CSR layouts share one
``indptr`` over entities:

- ``rows``: each entity's rows in ascending row id (= CSV load order);
- ``year_rows`` / ``year_keys``: the same rows sorted by ``(year, row)``, with
  ``year_keys = entity * span + (year - min_year)`` so that the rows of any
  ``(entity, year)`` pair, or of many entities in one year, are a
  :func:`numpy.searchsorted` away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from tempbench_core.arrays import gather_slices, sorted_rows, sorted_unique
from tempbench_core.schema import whole_year

if TYPE_CHECKING:  # pragma: no cover
    from retriever.kg import KG

_EMPTY = np.zeros(0, dtype=np.int64)
_EMPTY.setflags(write=False)


@dataclass(frozen=True, eq=False)
class Incidence:
    """CSR incidence of a :class:`~retriever.kg.KG` (build with :meth:`build`).

    Attributes
    ----------
    indptr:
        ``int64[n_entities + 1]``; entity ``e`` owns positions ``indptr[e]:indptr[e+1]``.
    rows:
        ``int64``: row ids, ascending within each entity.
    year_rows:
        ``int64``: row ids sorted by ``(year, row)`` within each entity.
    year_keys:
        ``int64``: ``entity * span + (year - min_year)`` for ``year_rows`` (non-decreasing).
    min_year, span:
        Year offset and ``max_year - min_year + 1``.
    """

    indptr: np.ndarray
    rows: np.ndarray
    year_rows: np.ndarray
    year_keys: np.ndarray
    min_year: int
    span: int

    @classmethod
    def build(cls, kg: KG) -> Incidence:
        """Build both layouts with vectorized sorts (no per-row Python work)."""
        n = kg.n_rows
        row_ids = np.arange(n, dtype=np.int64)
        loop = kg.head == kg.tail
        ents = np.concatenate([kg.head.astype(np.int64), kg.tail[~loop].astype(np.int64)])
        rows = np.concatenate([row_ids, row_ids[~loop]])
        min_year = int(kg.year.min()) if n else 0
        span = int(kg.year.max()) - min_year + 1 if n else 1
        keys = ents * span + (kg.year[rows] - min_year)
        # both layouts are the (entity, row) and (entity, year, row) incidences in order
        year_keys, year_rows = sorted_rows((keys, rows), (kg.n_entities * span, n))
        del keys
        ents, rows = sorted_rows((ents, rows), (kg.n_entities, n))
        counts = np.bincount(ents, minlength=kg.n_entities)
        del ents
        indptr = np.zeros(kg.n_entities + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        for arr in (indptr, rows):
            arr.setflags(write=False)
        year_rows.setflags(write=False)
        year_keys.setflags(write=False)
        return cls(indptr, rows, year_rows, year_keys, min_year, span)

    def other_ends(self, head: np.ndarray, tail: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The neighbours of each entity's slice of ``rows`` and of each ``(entity, year)`` slice of ``year_rows``:
        the other endpoint of each of the slice's rows (the entity itself for a self-loop), ascending within the
        slice (not in row order), for the KG's ``head`` and ``tail`` this index was built from.

        A walk over the graph reads an entity's neighbours as one slice instead
        of gathering its rows and then their heads and tails; the walks read a
        slice as a multiset, and an ascending one is merged, not sorted, with
        the others of a frontier. Made on first use and kept with the index.
        """
        made = self.__dict__.get("_other_ends")
        if made is None:
            owner = np.repeat(np.arange(self.n_entities, dtype=np.int64), np.diff(self.indptr))
            made = (_ascending_within(owner, head[self.rows] + tail[self.rows] - owner, self.n_entities),
                    _ascending_within(self.year_keys, head[self.year_rows] + tail[self.year_rows] - owner,
                                      self.n_entities))
            for arr in made:
                arr.setflags(write=False)
            self.__dict__["_other_ends"] = made
        return made

    def year_slices(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where the rows of each ``entity * span + (year - min_year)`` key are in ``year_rows``.

        The same ``(starts, stops)`` as ``year_keys.searchsorted(keys, "left")``
        and ``(keys, "right")``, by one search among the distinct keys (less
        than half as many on a KG with several rows per entity and year), made
        in ascending key order (each search starts where the last one ended).
        """
        distinct, bounds = self._year_directory()
        order = np.argsort(keys, kind="stable")  # a frontier's keys are ascending runs: about linear
        ordered = keys[order]
        at = distinct.searchsorted(ordered)  # the sentinel keeps every position inside ``distinct``
        hit = distinct[at] == ordered
        starts = np.empty(len(keys), dtype=np.int64)
        stops = np.empty(len(keys), dtype=np.int64)
        starts[order] = bounds[at]
        stops[order] = bounds[at + hit]  # a key no row has: an empty slice where the search would put it
        return starts, stops

    def _year_directory(self) -> tuple[np.ndarray, np.ndarray]:
        """The distinct ``year_keys`` (then a sentinel above any key) and where each one's run starts (then the
        end, twice). Made on first use and kept with the index."""
        made = self.__dict__.get("_year_directory_made")
        if made is None:
            keys = self.year_keys
            first = np.flatnonzero(keys[1:] != keys[:-1]) + 1
            first = np.concatenate(([0], first)) if len(keys) else first
            distinct = np.append(keys[first], np.iinfo(np.int64).max)
            bounds = np.concatenate((first, [len(keys), len(keys)])).astype(np.int64)
            for arr in (distinct, bounds):
                arr.setflags(write=False)
            made = self.__dict__["_year_directory_made"] = (distinct, bounds)
        return made  # type: ignore[return-value]

    @property
    def n_entities(self) -> int:
        """Number of entities indexed."""
        return int(self.indptr.shape[0] - 1)

    def degree(self, entity: int) -> int:
        """Number of distinct rows incident to ``entity``."""
        return int(self.indptr[entity + 1] - self.indptr[entity])

    def rows_of(self, entity: int) -> np.ndarray:
        """Rows incident to ``entity``, ascending row id (read-only view)."""
        return self.rows[self.indptr[entity] : self.indptr[entity + 1]]

    def _year_offset(self, year: int | float) -> int | None:
        whole = whole_year(year)
        if whole is None:
            return None  # a non-whole t_query matches no row (SPEC §2.4)
        offset = whole - self.min_year
        return offset if 0 <= offset < self.span else None

    def rows_at(self, entity: int, year: int | float) -> np.ndarray:
        """Rows incident to ``entity`` whose year equals ``year``, ascending row id."""
        offset = self._year_offset(year)
        if offset is None:
            return _EMPTY
        start, stop = self.indptr[entity], self.indptr[entity + 1]
        key = entity * self.span + offset
        keys = self.year_keys[start:stop]
        lo = start + np.searchsorted(keys, key, "left")
        hi = start + np.searchsorted(keys, key, "right")
        return self.year_rows[lo:hi]

    def rows_of_many(self, entities: np.ndarray | list[int]) -> np.ndarray:
        """Sorted unique rows incident to any of ``entities`` (vectorized)."""
        ents = np.asarray(entities, dtype=np.int64)
        return sorted_unique(gather_slices(self.rows, self.indptr[ents], self.indptr[ents + 1]))

    def rows_at_many(self, entities: np.ndarray | list[int], year: int | float) -> np.ndarray:
        """Sorted unique rows with ``year`` incident to any of ``entities`` (vectorized)."""
        offset = self._year_offset(year)
        ents = np.asarray(entities, dtype=np.int64)
        if offset is None or ents.size == 0:
            return _EMPTY
        keys = ents * self.span + offset
        lo = np.searchsorted(self.year_keys, keys, "left")
        hi = np.searchsorted(self.year_keys, keys, "right")
        return sorted_unique(gather_slices(self.year_rows, lo, hi))


def _ascending_within(groups: np.ndarray, values: np.ndarray, n_values: int) -> np.ndarray:
    """``values`` (in ``[0, n_values)``) sorted within each run of equal ``groups`` (non-decreasing)."""
    radix = max(int(n_values), 1)
    if len(groups) and int(groups[-1]) + 1 >= (1 << 62) // radix:  # the packed key would not fit: plain lexsort
        return values[np.lexsort((values, groups))]
    key = groups * radix + values
    key.sort(kind="stable")  # ascending already but within each group: short runs to merge
    return key % radix
