"""Candidate generation: undirected BFS with per-hop caps (SPEC §2.4).

Default (``cap_scope="per_hop"``, ``cap_counts="rows"``), SPEC's pseudo-code::

    frontier = {anchor}; visited = {anchor}; seen_rows = {}; pool = []
    for h in 1..H:
        cand = rows incident to any node in frontier,
               not in seen_rows, passing the filter (if on)
        cand = sorted by edge id (CSV load order)[: C[h]]
        pool += cand; seen_rows |= cand
        frontier = endpoints of cand not in visited; visited |= frontier

then the pool is deduplicated on ``(s, r, o)`` keeping the first row of each
triple in pool order (fixed).

Filter: a row passes when ``t_start <= t_query <= t_end`` as floats; on the
point-in-time KG that is ``float(ts) == t_query``, so a ``t_query`` that is not
a whole number matches no row (it is never rounded).

Options (SPEC §2.4 asks for both):

- ``cap_scope="per_node"``: every frontier node contributes its own first
  ``C[h]`` eligible rows (edge-id order); the hop's rows are the union of the
  nodes' picks in edge-id order. Nodes pick independently, so a row incident to
  two frontier nodes counts against both nodes' caps and the result does not
  depend on any order of the frontier.
- ``cap_counts="unique_triples"``: the cap counts ``(s, r, o)`` triples new to
  the pool: the hop takes the shortest edge-id-ordered prefix of eligible rows
  that holds ``C[h]`` new triples (per node under ``per_node``); rows in it
  whose triple is already in the pool are deduplicated afterwards as usual.

Speed: no Python loop over a node's rows. Per-entity row arrays (CSR, CSV
order) are truncated to what can matter (a node's first ``C[h] + |seen_rows|``
eligible rows contain its first ``C[h]`` unseen ones) and merged with numpy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tempbench.core.schema import whole_year

_EMPTY = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Expansion:
    """Result of one BFS.

    Attributes
    ----------
    pool:
        Row ids in pool order, before deduplication.
    rows:
        Row ids after ``(s, r, o)`` deduplication (first time-version kept), in
        pool order: the candidates of SPEC §2.5.
    hop_sizes:
        Number of rows each hop added to the pool.
    """

    pool: np.ndarray
    rows: np.ndarray
    hop_sizes: tuple[int, ...]


def triple_ids(head: np.ndarray, relation: np.ndarray, tail: np.ndarray) -> np.ndarray:
    """Dense id of each row's ``(s, r, o)``: equal ids iff equal triples."""
    n = len(head)
    if n == 0:
        return _EMPTY.copy()
    order = np.lexsort((tail, relation, head))
    h, r, t = head[order], relation[order], tail[order]
    change = np.empty(n, dtype=bool)
    change[0] = True
    change[1:] = (h[1:] != h[:-1]) | (r[1:] != r[:-1]) | (t[1:] != t[:-1])
    out = np.empty(n, dtype=np.int64)
    out[order] = np.cumsum(change) - 1
    return out


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort + neighbour test; faster here than ``np.unique``'s hashing)."""
    if len(values) < 2:
        return values
    out = np.sort(values)
    keep = np.empty(len(out), dtype=bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]


def _first_occurrences(values: np.ndarray) -> np.ndarray:
    """Ascending positions of the first occurrence of each distinct value."""
    if len(values) < 2:
        return np.arange(len(values))
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    first = np.empty(len(values), dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return np.sort(order[first])


def _in_sorted(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Boolean mask: which ``values`` occur in the sorted array ``sorted_set``."""
    if len(sorted_set) == 0 or len(values) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.searchsorted(sorted_set, values)
    pos[pos == len(sorted_set)] = 0
    return sorted_set[pos] == values




class BFS:
    """Candidate pool builder over a KG and its incidence index (SPEC §2.4).

    Parameters
    ----------
    kg:
        :class:`retriever.kg.KG` (``head``, ``tail``, ``relation`` arrays).
    incidence:
        :class:`retriever.incidence.Incidence` with ``rows_of(e)`` and
        ``rows_at(e, year)``; its CSR arrays (``indptr``, ``rows``,
        ``year_rows``, ``year_keys``, ``min_year``, ``span``) are read directly
        so that a whole frontier is gathered with numpy.
    hops, caps, temporal_filter, cap_scope, cap_counts:
        As in :class:`retriever.config.RetrieverConfig`.
    """

    def __init__(self, kg, incidence, hops: int = 2, caps=(60, 200, 400), temporal_filter: bool = True,
                 cap_scope: str = "per_hop", cap_counts: str = "rows", tids: np.ndarray | None = None) -> None:
        self.head = np.asarray(kg.head, dtype=np.int64)
        self.tail = np.asarray(kg.tail, dtype=np.int64)
        self.n_entities = int(kg.n_entities)
        self.incidence = incidence
        self.hops = int(hops)
        self.caps = tuple(int(c) for c in caps)
        self.temporal_filter = bool(temporal_filter)
        self.per_node = cap_scope == "per_node"
        self.unique = cap_counts == "unique_triples"
        self.tid = tids if tids is not None else triple_ids(self.head, np.asarray(kg.relation, dtype=np.int64), self.tail)

    def _ranges(self, frontier: np.ndarray, year: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Eligible rows of each frontier node as slices ``values[starts[i]:stops[i]]`` (ascending)."""
        inc = self.incidence
        if not self.temporal_filter:
            return inc.rows, inc.indptr[frontier], inc.indptr[frontier + 1]
        offset = None if year is None else year - inc.min_year
        if offset is None or not 0 <= offset < inc.span:
            return _EMPTY, np.zeros(len(frontier), dtype=np.int64), np.zeros(len(frontier), dtype=np.int64)
        keys = frontier * inc.span + offset
        return (inc.year_rows, np.searchsorted(inc.year_keys, keys, "left"),
                np.searchsorted(inc.year_keys, keys, "right"))

    def _select(self, values: np.ndarray, starts: np.ndarray, stops: np.ndarray, cap: int,
                seen: np.ndarray, pool_tids: np.ndarray) -> np.ndarray:
        """First eligible rows (edge-id order) of the union of the slices, per the cap rule.

        Each slice is sorted. Slices are truncated to ``limit`` rows; the merged
        result is exact for rows up to the smallest last-kept row of a truncated
        slice (``bound``): every eligible row below ``bound`` is in it. When that
        prefix is too short, ``limit`` doubles.
        """
        if cap <= 0 or len(starts) == 0:
            return _EMPTY
        lengths = stops - starts
        if len(starts) == 1 and len(seen) == 0 and not self.unique:
            # one node, nothing seen yet (hop 1): its first `cap` eligible rows
            return values[int(starts[0]) : int(starts[0]) + min(int(lengths[0]), cap)]
        # a node's first cap + |seen| rows always hold its first `cap` unseen ones,
        # so this limit is exact in "rows" mode at the first pass
        limit = cap + len(seen)
        while True:
            truncated = lengths > limit
            if truncated.any():
                ends = np.where(truncated, starts + limit, stops)
                bound = int(values[starts[truncated] + limit - 1].min())
            else:
                ends, bound = stops, None
            merged = _gather(values, starts, ends)
            if len(starts) > 1:
                merged = _sorted_unique(merged)
            if len(seen):
                merged = merged[~_in_sorted(merged, seen)]
            exact = merged if bound is None else merged[merged <= bound]
            if not self.unique:
                if len(exact) >= cap or bound is None:
                    return exact[:cap]
            else:
                t = self.tid[exact]
                first = _first_occurrences(t)
                is_new = np.zeros(len(exact), dtype=bool)
                is_new[first] = True
                is_new &= ~_in_sorted(t, pool_tids)
                count = np.cumsum(is_new)
                if len(exact) and count[-1] >= cap:
                    return exact[: int(np.searchsorted(count, cap)) + 1]
                if bound is None:
                    return exact
            limit *= 2

    def expand(self, anchor: int | None, t_query: float) -> Expansion:
        """Build the candidate pool of one question (SPEC §2.4)."""
        if anchor is None:
            return Expansion(_EMPTY, _EMPTY, ())
        year = whole_year(t_query) if self.temporal_filter else None
        visited = np.zeros(self.n_entities, dtype=bool)
        visited[anchor] = True
        frontier = np.array([anchor], dtype=np.int64)
        seen = _EMPTY
        pool_tids = _EMPTY
        parts: list[np.ndarray] = []
        sizes: list[int] = []
        for h in range(self.hops):
            cap = self.caps[h]
            values, starts, stops = self._ranges(frontier, year)
            if self.per_node:
                picks = [self._select(values, starts[i : i + 1], stops[i : i + 1], cap, seen, pool_tids)
                         for i in range(len(frontier))]
                picks = [p for p in picks if len(p)]
                cand = _sorted_unique(np.concatenate(picks)) if picks else _EMPTY
            else:
                cand = self._select(values, starts, stops, cap, seen, pool_tids)
            parts.append(cand)
            sizes.append(len(cand))
            if len(cand) == 0:
                # empty hop: nothing new, and no frontier for later hops
                sizes.extend([0] * (self.hops - h - 1))
                break
            if h == self.hops - 1:
                break  # the last hop's seen rows and frontier are never read
            seen = _sorted_unique(np.concatenate((seen, cand)))
            if self.unique:
                pool_tids = _sorted_unique(np.concatenate((pool_tids, self.tid[cand])))
            ends = _sorted_unique(np.concatenate((self.head[cand], self.tail[cand])))
            frontier = ends[~visited[ends]]
            visited[frontier] = True
        pool = np.concatenate(parts) if parts else _EMPTY
        return Expansion(pool, dedup_first(pool, self.tid), tuple(sizes))


def _gather(values: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """``concatenate(values[starts[i]:stops[i]])`` without a Python loop over slices."""
    lengths = stops - starts
    total = int(lengths.sum())
    if total == 0:
        return _EMPTY
    shift = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return values[np.arange(total, dtype=np.int64) + shift]


def dedup_first(pool: np.ndarray, tid: np.ndarray) -> np.ndarray:
    """Keep the first row of each ``(s, r, o)`` in pool order (SPEC §2.4, fixed)."""
    if len(pool) == 0:
        return _EMPTY
    return pool[_first_occurrences(tid[pool])]
