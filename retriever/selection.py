"""One BFS hop's rows under SPEC §2.4's caps, for many questions at once.

A hop of :meth:`retriever.bfs.BFS.expand_many` reads, for every question, the
eligible rows of each of its frontier nodes: one ascending slice per
``(question, node)`` pair of an incidence layout (rows passing the filter,
seen rows not yet removed). :func:`select_hop` takes from them what the cap
rule gives each question, :func:`count_eligible` counts what it could have
taken. Everything is a packed integer key (``question * n + value``) in
sorted arrays, so the questions of a shard go through one sort, one merge and
one set test per hop instead of one each (SPEC §2.4 asks for speed on hubs as
well: slices are truncated to what can matter, so a hub of 50k rows costs
its first few hundred).

The cap rules (:class:`CapRule`):

- per hop (default): a question takes the first ``C[h]`` unseen rows of the
  union of its nodes' slices, in edge-id order;
- per node: each ``(question, node)`` takes its own first ``C[h]`` unseen
  rows; the question's rows are the union of the picks;
- counting unique triples: instead of ``C[h]`` rows, the shortest edge-id
  prefix holding ``C[h]`` triples new to the question's pool.

Truncation: a unit's slices are cut to ``C[h] + |seen|`` rows (a slice's first
``C[h] + |seen|`` rows hold its first ``C[h]`` unseen ones). The merged rows
are then complete up to the smallest last-kept row of a cut slice (the
*bound*); a unit whose rule is not satisfied below its bound doubles its
limit and goes again. The result never depends on the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tempbench_core.arrays import first_occurrences, gather_slices, in_sorted, in_sorted_distinct, merged_unique

_EMPTY = np.zeros(0, dtype=np.int64)
_NO_BOUND = np.iinfo(np.int64).max


@dataclass(frozen=True)
class CapRule:
    """How a hop's cap applies (SPEC §2.4 and its two options)."""

    per_node: bool = False
    unique_triples: bool = False


@dataclass
class Frontier:
    """The ``(question, node)`` pairs of one hop, sorted, with each pair's eligible slice ``values[starts:stops]``."""

    q: np.ndarray
    node: np.ndarray
    starts: np.ndarray
    stops: np.ndarray

    def subset(self, keep: np.ndarray) -> Frontier:
        return Frontier(self.q[keep], self.node[keep], self.starts[keep], self.stops[keep])


@dataclass
class PoolSoFar:
    """What the questions' pools hold before a hop: packed ``q * n_rows + row`` (sorted), per-question row counts,
    and (for the unique-triples rule) packed ``q * n_triples + triple`` (sorted)."""

    seen: np.ndarray
    seen_count: np.ndarray
    triples: np.ndarray


def segment_starts(keys: np.ndarray, n: int) -> np.ndarray:
    """Where each of ``0..n-1`` starts in the non-decreasing ``keys`` (``n + 1`` entries)."""
    out = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=out[1:])
    return out


def select_hop(values: np.ndarray, frontier: Frontier, cap: int, pool: PoolSoFar, n_q: int, n_rows: int,
               rule: CapRule, tid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The hop's rows of every question: ``(q, row)`` sorted by question, then edge id.

    ``values``: the incidence layout the slices index; ``tid``: each row's
    ``(s, r, o)`` id (read under the unique-triples rule only).
    """
    if cap <= 0 or not len(frontier.q):
        return _EMPTY, _EMPTY
    # a unit selects on its own: a question (per hop) or one (question, node) pair (per node)
    n_units = len(frontier.q) if rule.per_node else n_q
    unit = np.arange(n_units, dtype=np.int64) if rule.per_node else frontier.q
    unit_q = frontier.q if rule.per_node else np.arange(n_q, dtype=np.int64)
    n_triples = int(tid.max()) + 1 if rule.unique_triples and len(tid) else 1
    starts, stops = frontier.starts, frontier.stops
    limit = cap + pool.seen_count[frontier.q]
    picked_units, picked_rows = [], []
    while True:
        truncated = stops - starts > limit
        ends = np.where(truncated, starts + limit, stops)
        bound = np.full(n_units, _NO_BOUND, dtype=np.int64)
        if truncated.any():
            np.minimum.at(bound, unit[truncated], values[starts[truncated] + limit[truncated] - 1])
        keys = merged_unique(np.repeat(unit * n_rows, ends - starts) + gather_slices(values, starts, ends))
        u, row = np.divmod(keys, n_rows)
        if len(pool.seen):
            # per hop the units are the questions, so these are the merged keys: ascending and distinct
            fresh = ~(in_sorted if rule.per_node else in_sorted_distinct)(unit_q[u] * n_rows + row, pool.seen)
            u, row = u[fresh], row[fresh]
        exact = row <= bound[u]
        u, row = u[exact], row[exact]
        first = segment_starts(u, n_units)
        asked = np.zeros(n_units, dtype=bool)
        asked[unit] = True
        if not rule.unique_triples:
            done = asked & ((first[1:] - first[:-1] >= cap) | (bound == _NO_BOUND))
            keep = done[u] & (np.arange(len(u)) - first[u] < cap)
        else:
            t = tid[row]
            is_new = np.zeros(len(u), dtype=bool)
            is_new[first_occurrences(u * n_triples + t)] = True
            if len(pool.triples):
                is_new &= ~in_sorted(unit_q[u] * n_triples + t, pool.triples)
            running = np.cumsum(is_new)
            before = running - is_new  # new triples strictly before each row, counted from the unit's start
            before -= np.concatenate([[0], running])[first[:-1]][u]
            new_total = np.bincount(u, weights=is_new, minlength=n_units)
            reached = new_total >= cap
            done = asked & (reached | (bound == _NO_BOUND))
            # a unit that reached the cap keeps the shortest prefix holding `cap` new triples
            keep = done[u] & (~reached[u] | (before < cap))
        picked_units.append(u[keep])
        picked_rows.append(row[keep])
        again = (asked & ~done)[unit]
        if not again.any():
            break
        unit, starts, stops, limit = unit[again], starts[again], stops[again], limit[again] * 2
    if rule.per_node:
        keys = merged_unique(np.concatenate([unit_q[u] * n_rows + r for u, r in zip(picked_units, picked_rows,
                                                                                      strict=True)]))
        return np.divmod(keys, n_rows)
    if len(picked_units) == 1:
        return picked_units[0], picked_rows[0]
    keys = np.sort(np.concatenate(picked_units) * n_rows + np.concatenate(picked_rows), kind="stable")
    return np.divmod(keys, n_rows)


@dataclass(frozen=True)
class Endpoints:
    """Each KG row's ``head`` and ``tail`` entity, and the numbers of rows and entities (the packing radixes)."""

    head: np.ndarray
    tail: np.ndarray
    n_rows: int
    n_entities: int


def count_eligible(ends: np.ndarray, frontier: Frontier, pool: PoolSoFar, wanted: np.ndarray, n_q: int,
                   kg: Endpoints, marks: np.ndarray) -> np.ndarray:
    """Per question (``wanted`` ones only; 0 elsewhere): distinct rows incident to its frontier, eligible, unseen.

    ``ends``: the other endpoint of each position of the slices' layout;
    ``kg``: the rows' endpoints; ``marks``: an all-``False`` entity mask to
    borrow (left all ``False``).

    A row incident to two frontier nodes of a question is listed under both
    (a self-loop once), so the distinct rows are the listed ones minus the
    rows joining two of its nodes. Those are counted without reading the
    question's longest list (a hub's, typically): a row joining two other
    nodes is met twice in the lists read, a row joining such a node to the
    hub once, as a neighbour equal to the hub. A seen row incident to the
    frontier passed the same filter, so it is among the listed rows.
    """
    n_rows, n_entities = kg.n_rows, kg.n_entities
    keep = wanted[frontier.q]
    f = frontier.subset(keep)
    lengths = f.stops - f.starts
    listed = np.bincount(f.q, weights=lengths, minlength=n_q).astype(np.int64)
    if not len(f.q):
        return listed
    # the hub: each question's first longest slice
    order = np.lexsort((-lengths, f.q))
    lead = np.ones(len(order), dtype=bool)
    lead[1:] = f.q[order][1:] != f.q[order][:-1]
    hub_at = order[lead]
    hub = np.full(n_q, -1, dtype=np.int64)
    hub[f.q[hub_at]] = f.node[hub_at]
    rest = np.ones(len(f.q), dtype=bool)
    rest[hub_at] = False
    read = np.flatnonzero(rest)
    near = gather_slices(ends, f.starts[read], f.stops[read])
    # only a neighbour that is some question's frontier node can join two nodes of its own
    marks[f.node] = True
    try:
        maybe = np.flatnonzero(marks[near])
    finally:
        marks[f.node] = False
    # the slice each kept neighbour was read from (not a slice index for every neighbour read): the kept
    # positions ascend, so counting those below each slice's end takes one search per slice, not per neighbour
    owner = np.repeat(read, np.diff(np.searchsorted(maybe, np.cumsum(lengths[read])), prepend=0))
    near = near[maybe]
    q = f.q[owner]
    nodes = f.q * n_entities + f.node  # sorted: the frontier's order
    apart = in_sorted(q * n_entities + near, nodes) & (near != f.node[owner])
    joining = (np.bincount(q[apart], minlength=n_q) + np.bincount(q[near == hub[q]], minlength=n_q)) // 2
    touched = np.zeros(n_q, dtype=np.int64)
    if len(pool.seen):
        sq, row = np.divmod(pool.seen, n_rows)
        mine = wanted[sq]
        sq, row = sq[mine], row[mine]
        at_frontier = in_sorted(sq * n_entities + kg.head[row], nodes) | in_sorted(sq * n_entities + kg.tail[row], nodes)
        touched = np.bincount(sq[at_frontier], minlength=n_q)
    return listed - joining - touched
