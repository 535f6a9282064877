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

Speed: no Python loop over a node's rows, nor over the questions of a batch.
:meth:`BFS.expand_many` takes every question's hop in one pass: the
``(question, node)`` pairs of all frontiers, their slices of the per-entity
row arrays (CSR, CSV order) truncated to what can matter (a node's first
``C[h] + |seen_rows|`` eligible rows contain its first ``C[h]`` unseen ones),
merged as packed ``question * n_rows + row`` keys (:mod:`retriever.selection`);
one question is a batch of one (:meth:`BFS.expand`). A BFS's first hops
depend only on the anchor, the filter, the cap rule and their caps, so a
deeper BFS can take them from a shallower one's expansions (``prior``: the
3-hop ablation extends the oracle's two hops). Walks that only need
entities (the eligible-row count, :meth:`BFS.reach_many`, :meth:`BFS.meets`)
read each node's neighbours as one slice of
:meth:`~retriever.incidence.Incidence.other_ends` instead of gathering its rows
and then their heads and tails.

Counterfactual pools (SPEC §7, loss attribution): :meth:`BFS.expand_uncapped`
is the same BFS with every cap removed (no cap value stands for "infinite"),
and the filter on or off at will; :meth:`BFS.reach` returns only the entities
whose incident rows make up that pool, which answers "is this row in the
uncapped pool?" without gathering the last hop's rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from retriever.config import DEFAULTS
from retriever.selection import CapRule, Endpoints, Frontier, PoolSoFar, segment_starts, select_hop
from retriever.selection import count_eligible as count_eligible_rows
from tempbench_core.arrays import (
    first_occurrences,
    gather_slices,
    in_sorted,
    in_sorted_distinct,
    merged_unique,
    sorted_unique,
)
from tempbench_core.schema import whole_year
from tempbench_core.scratch import ThreadScratch

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
    eligible:
        Only when asked for (``expand(..., count_eligible=True)``): the number
        of rows each hop could have added (incident to its frontier, unseen,
        passing the filter) before its cap; a hop's cap was hit when this is
        larger than its ``hop_sizes`` entry. Empty otherwise.
    ascending:
        ``pool`` sorted, when it was made with the pool (by
        :meth:`BFS.expand_many` with ``count_eligible``: one sort for the
        batch instead of one per :meth:`PoolSummary.of`); else ``None``.
    """

    pool: np.ndarray
    rows: np.ndarray
    hop_sizes: tuple[int, ...]
    eligible: tuple[int, ...] = ()
    ascending: np.ndarray | None = None


#: Questions expanded together at most (bounds the temporary arrays of a hop).
_BATCH = 256
#: The pool of a question without an anchor.
_NO_POOL = Expansion(_EMPTY, _EMPTY, ())


@dataclass(frozen=True)
class PoolSummary:
    """What the loss attribution (SPEC §7) and the question browser read of one question's pool.

    Kept from the run itself (``run_to_file(..., pools=...)``), so that they
    need not expand the pool again.

    Attributes
    ----------
    rows:
        The pool's row ids before deduplication, ascending.
    hop_sizes, eligible:
        As in :class:`Expansion` (``eligible`` counted).
    candidates:
        Rows after the ``(s, r, o)`` deduplication.
    """

    rows: np.ndarray
    hop_sizes: tuple[int, ...]
    eligible: tuple[int, ...]
    candidates: int

    @classmethod
    def of(cls, expansion: Expansion) -> PoolSummary:
        """The summary of an expansion made with ``count_eligible=True``."""
        rows = np.sort(expansion.pool, kind="stable") if expansion.ascending is None else expansion.ascending
        return cls(rows, expansion.hop_sizes, expansion.eligible, int(len(expansion.rows)))


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


class BFS:
    """Candidate pool builder over a KG and its incidence index (SPEC §2.4).

    Parameters
    ----------
    kg:
        :class:`retriever.kg.KG` (``head``, ``tail``, ``relation`` arrays).
    incidence:
        :class:`retriever.incidence.Incidence` with ``rows_of(e)`` and
        ``rows_at(e, year)``; its CSR arrays (``indptr``, ``rows``,
        ``year_rows``, ``min_year``, ``span``) are read directly, and
        ``year_slices`` finds a frontier's ``(entity, year)`` slices, so that a
        whole frontier is gathered with numpy.
    hops, caps, temporal_filter, cap_scope, cap_counts:
        As in :class:`retriever.config.RetrieverConfig`.
    """

    def __init__(self, kg, incidence, hops: int = DEFAULTS.hops, caps=DEFAULTS.caps,
                 temporal_filter: bool = DEFAULTS.temporal_filter, cap_scope: str = DEFAULTS.cap_scope,
                 cap_counts: str = DEFAULTS.cap_counts, tids: np.ndarray | None = None) -> None:
        self.head = np.asarray(kg.head, dtype=np.int64)
        self.tail = np.asarray(kg.tail, dtype=np.int64)
        self.n_entities = int(kg.n_entities)
        self._endpoints = Endpoints(self.head, self.tail, len(self.head), self.n_entities)
        self.incidence = incidence
        self.hops = int(hops)
        self.caps = tuple(int(c) for c in caps)
        self.temporal_filter = bool(temporal_filter)
        self.rule = CapRule(per_node=cap_scope == "per_node", unique_triples=cap_counts == "unique_triples")
        self.tid = tids if tids is not None else triple_ids(self.head, np.asarray(kg.relation, dtype=np.int64), self.tail)
        self._n_triples = int(self.tid.max()) + 1 if len(self.tid) else 1
        # all False between calls: the frontier's marks while eligible rows are counted, the targets' in meets
        self._scratch = ThreadScratch(self.n_entities, bool, False)

    def _ranges(self, frontier: np.ndarray, t_query: float, on: bool,
                ends: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One question's frontier: each node's eligible rows as slices ``values[starts[i]:stops[i]]`` (ascending).

        ``on``: the temporal filter. ``ends``: the values are the rows' other
        endpoints instead (the same slices, :meth:`_layout`).
        """
        starts, stops = self._slices(np.zeros(len(frontier), dtype=np.int64), frontier,
                                     self._year_offsets([t_query], on))
        return self._layout(on, ends), starts, stops

    def _slices(self, q: np.ndarray, nodes: np.ndarray, offsets: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Each ``(question, node)`` pair's eligible rows as a slice of :meth:`_layout`'s arrays.

        ``offsets``: each question's year offset in the ``(entity, year)``
        index (-1: a year no row has), or ``None`` without the filter.
        """
        inc = self.incidence
        if offsets is None:
            return inc.indptr[nodes], inc.indptr[nodes + 1]
        off = offsets[q]
        starts, stops = inc.year_slices(nodes * inc.span + off)
        nowhere = off < 0
        if nowhere.any():
            starts[nowhere] = stops[nowhere] = 0
        return starts, stops

    def _layout(self, on: bool, ends: bool = False) -> np.ndarray:
        """The incidence layout a walk with the filter ``on`` or off reads: its rows, or (``ends``) per position the
        row's other end (made on first use: a 10M-row KG's take a second and 300 MB, so only walks that read
        neighbours ask for them)."""
        inc = self.incidence
        if ends:
            return inc.other_ends(self.head, self.tail)[1 if on else 0]
        return inc.year_rows if on else inc.rows

    def _year_offsets(self, t_queries: Sequence[float], on: bool) -> np.ndarray | None:
        """Each question's offset in the ``(entity, year)`` index, -1 for none (``None`` without the filter)."""
        if not on:
            return None
        inc = self.incidence
        out = []
        for t_query in t_queries:
            year = whole_year(t_query)
            offset = -1 if year is None else year - inc.min_year
            out.append(offset if 0 <= offset < inc.span else -1)
        return np.array(out, dtype=np.int64)

    def expand(self, anchor: int | None, t_query: float, count_eligible: bool = False) -> Expansion:
        """Build the candidate pool of one question (SPEC §2.4): :meth:`expand_many` of one."""
        return self.expand_many([anchor], [t_query], count_eligible)[0]

    def expand_many(self, anchors: Sequence[int | None], t_queries: Sequence[float],
                    count_eligible: bool = False, prior: Sequence[Expansion | None] | None = None) -> list[Expansion]:
        """The candidate pool of each question (SPEC §2.4), all hops of all questions at once.

        Parameters
        ----------
        anchors:
            Each question's anchor entity (``None``: no anchor, an empty pool).
        t_queries:
            Each question's query time.
        count_eligible:
            Also count, per hop, the rows the hop could have taken before its
            cap (:attr:`Expansion.eligible`); the pools are the same.
        prior:
            Optionally, per question, the :class:`Expansion` of its first
            ``P < hops`` hops (``None`` where there is none): made from the same
            anchor and query time by a BFS that agrees with this one on the
            filter, the cap rule, the rows' triples and the caps of those hops
            (the caller's key says so, :func:`retriever.pipeline.hops_key`).
            Hop ``h`` of a BFS depends only on those and on hops before it, so
            these hops are taken from it as they are and only the later ones
            are expanded. A prior without eligible counts is not used when
            they are asked for.

        Each hop selects every question's rows in one pass
        (:func:`retriever.selection.select_hop`); the pools are the same as one
        question at a time would give.
        """
        out = [_NO_POOL] * len(anchors)
        # the questions by how many of their first hops are known (0: none), each group expanded on its own
        groups: dict[int, list[int]] = {}
        for i, a in enumerate(anchors):
            if a is not None:
                groups.setdefault(self._usable_hops(None if prior is None else prior[i], count_eligible), []).append(i)
        for known, live in sorted(groups.items()):
            for lo in range(0, len(live), _BATCH):
                part = live[lo : lo + _BATCH]
                before = [prior[i] for i in part] if known else None  # type: ignore[index]
                pools = self._expand_batch([anchors[i] for i in part], [t_queries[i] for i in part], count_eligible,
                                           before)  # type: ignore[arg-type]
                for i, expansion in zip(part, pools, strict=True):
                    out[i] = expansion
        return out

    def _usable_hops(self, prior: Expansion | None, count_eligible: bool) -> int:
        """How many first hops :meth:`expand_many` takes from ``prior`` (0: it is not used)."""
        if prior is None or not 0 < len(prior.hop_sizes) < self.hops:
            return 0
        if count_eligible and len(prior.eligible) != len(prior.hop_sizes):
            return 0
        return len(prior.hop_sizes)

    def _expand_batch(self, anchors: list[int], t_queries: list[float], count_eligible: bool,
                      prior: list[Expansion] | None = None) -> list[Expansion]:
        """:meth:`expand_many` of questions that all have an anchor (and, if ``prior``, all the same known hops)."""
        n_q, n_rows, n_entities = len(anchors), len(self.head), self.n_entities
        offsets = self._year_offsets(t_queries, self.temporal_filter)
        values = self._layout(self.temporal_filter)
        q = np.arange(n_q, dtype=np.int64)
        nodes = np.array(anchors, dtype=np.int64)
        visited = q * n_entities + nodes  # packed (question, entity), sorted
        pool = PoolSoFar(_EMPTY, np.zeros(n_q, dtype=np.int64), _EMPTY)
        sizes = np.zeros((n_q, self.hops), dtype=np.int64)
        eligible = np.zeros((n_q, self.hops), dtype=np.int64)
        hop_q: list[np.ndarray] = []
        hop_rows: list[np.ndarray] = []
        known = _known_hops(prior, count_eligible, eligible)
        for h in range(self.hops):
            if not len(q):
                break  # no question has a frontier: nothing new, and no frontier for later hops
            made = h < len(known)  # a hop the prior expansions made: their rows; their counts are in `eligible`
            if made:
                cand_q, cand = known[h]
            else:
                frontier = Frontier(q, nodes, *self._slices(q, nodes, offsets))
                cand_q, cand = select_hop(values, frontier, self.caps[h], pool, n_q, n_rows, self.rule, self.tid)
            taken = np.bincount(cand_q, minlength=n_q)
            sizes[:, h] = taken
            if not made:
                eligible[:, h] = taken
            hop_q.append(cand_q)
            hop_rows.append(cand)
            if count_eligible and not made:
                wanted = np.zeros(n_q, dtype=bool)
                wanted[q] = True
                if not (self.rule.per_node or self.rule.unique_triples):
                    wanted &= taken >= self.caps[h]  # under the cap the hop took every eligible row
                if wanted.any():
                    counted = count_eligible_rows(self._layout(self.temporal_filter, ends=True), frontier, pool,
                                                  wanted, n_q, self._endpoints, self._scratch.get())
                    eligible[wanted, h] = counted[wanted]
            if h == self.hops - 1:
                break  # the last hop's seen rows and frontier are never read
            # every array sorted below is sorted runs (per question, or two sorted arrays): merged, not sorted
            pool = PoolSoFar(np.sort(np.concatenate((pool.seen, cand_q * n_rows + cand)), kind="stable"),
                             pool.seen_count + taken,
                             merged_unique(np.concatenate((pool.triples, cand_q * self._n_triples + self.tid[cand])))
                             if self.rule.unique_triples else _EMPTY)
            reached = merged_unique(np.concatenate((cand_q * n_entities + self.head[cand],
                                                    cand_q * n_entities + self.tail[cand])))
            reached = reached[~in_sorted_distinct(reached, visited)]
            visited = np.sort(np.concatenate((visited, reached)), kind="stable")
            q, nodes = np.divmod(reached, n_entities)
        # each question's pool: its hops in order, each in edge-id order
        pool_q = np.concatenate(hop_q) if hop_q else _EMPTY
        order = np.argsort(pool_q, kind="stable")
        pool_q, pool_rows = pool_q[order], (np.concatenate(hop_rows) if hop_rows else _EMPTY)[order]
        firsts = first_occurrences(pool_q * self._n_triples + self.tid[pool_rows])
        bounds = segment_starts(pool_q, n_q).tolist()
        kept = segment_starts(pool_q[firsts], n_q).tolist()
        candidates = pool_rows[firsts]
        sizes_list, eligible_list = sizes.tolist(), eligible.tolist()
        if not count_eligible:
            return [Expansion(pool_rows[bounds[j]:bounds[j + 1]], candidates[kept[j]:kept[j + 1]], tuple(sizes_list[j]))
                    for j in range(n_q)]
        # the pools' summaries want each pool ascending: one sort of the batch (each pool is sorted runs, its hops)
        ascending = np.sort(pool_q * n_rows + pool_rows, kind="stable") - pool_q * n_rows
        return [Expansion(pool_rows[bounds[j]:bounds[j + 1]], candidates[kept[j]:kept[j + 1]],
                          tuple(sizes_list[j]), tuple(eligible_list[j]), ascending[bounds[j]:bounds[j + 1]])
                for j in range(n_q)]

    def _walk_start(self, anchor: int | np.ndarray, temporal_filter: bool | None,
                    hops: int | None) -> tuple[int, bool, np.ndarray, np.ndarray]:
        """A walk's depth, filter, visited mask and first frontier (the anchor entities)."""
        depth = self.hops if hops is None else int(hops)
        on = self.temporal_filter if temporal_filter is None else bool(temporal_filter)
        visited = np.zeros(self.n_entities, dtype=bool)
        frontier = np.atleast_1d(np.asarray(anchor, dtype=np.int64))
        visited[frontier] = True
        return depth, on, visited, frontier

    def _levels(self, anchor: int | np.ndarray, t_query: float, temporal_filter: bool | None, gather_last: bool,
                hops: int | None = None):
        """The hops of the BFS from ``anchor`` without caps: yields ``(frontier, rows)`` per hop.

        Without caps, hop ``h`` takes every row incident to its frontier that
        passes the filter and is not already in the pool; its frontier is the
        entities first reached by the previous hop (BFS distance ``h - 1`` in the
        graph of the rows passing the filter). ``rows`` are all rows incident
        to the frontier that pass the filter (seen or not), ascending; for the
        last hop they are ``None`` unless ``gather_last``. Stops early when
        nothing new is reached. ``hops``: the depth (default: the configured one).
        ``anchor`` may be several entities (sorted, distinct): a search from all of them.
        """
        depth, on, visited, frontier = self._walk_start(anchor, temporal_filter, hops)
        for h in range(depth):
            last = h == depth - 1
            if last and not gather_last:
                yield frontier, None
                return
            values, starts, stops = self._ranges(frontier, t_query, on)
            rows = gather_slices(values, starts, stops)
            if len(frontier) > 1:
                rows = merged_unique(rows)  # the nodes' sorted slices
            yield frontier, rows
            if last or len(rows) == 0:
                return
            ends = sorted_unique(np.concatenate((self.head[rows], self.tail[rows])))
            frontier = ends[~visited[ends]]
            if len(frontier) == 0:
                return
            visited[frontier] = True

    def reach(self, anchor: int | None, t_query: float, temporal_filter: bool | None = None,
              hops: int | None = None) -> np.ndarray:
        """Sorted entities at BFS distance below ``hops`` from ``anchor`` (SPEC §2.4's graph; SPEC §7).

        These are the frontiers of every hop of :meth:`expand_uncapped`, so a
        row is in the uncapped pool exactly when it passes the filter and its
        head or tail is one of them. The rows of the last hop are never
        gathered, which keeps a hub at the edge of the ball cheap.
        :meth:`reach_many` of one.

        Parameters
        ----------
        anchor:
            Entity index (``None``: no anchor, nothing is reached).
        t_query:
            The question's query time.
        temporal_filter:
            ``None`` for the configured filter, else on (``True``) or off.
        hops:
            The BFS depth (default: the configured one).
        """
        return self.reach_many([anchor], [t_query], temporal_filter, hops)[0]

    def reach_many(self, anchors: Sequence[int | None], t_queries: Sequence[float],
                   temporal_filter: bool | None = None, hops: int | None = None) -> list[np.ndarray]:
        """:meth:`reach` of each ``(anchor, t_query)``, the walks of all the questions taken together."""
        out = [_EMPTY] * len(anchors)
        live = [i for i, a in enumerate(anchors) if a is not None]
        depth = self.hops if hops is None else int(hops)
        on = self.temporal_filter if temporal_filter is None else bool(temporal_filter)
        for lo in range(0, len(live), _BATCH):
            part = live[lo : lo + _BATCH]
            reached = self._reach_batch([anchors[i] for i in part], [t_queries[i] for i in part], on, depth)
            for i, entities in zip(part, reached, strict=True):
                out[i] = entities
        return out

    def _reach_batch(self, anchors: list[int], t_queries: list[float], on: bool, depth: int) -> list[np.ndarray]:
        """:meth:`reach_many` of questions that all have an anchor: each frontier from the last one's neighbours."""
        n_q, n_entities = len(anchors), self.n_entities
        if depth < 1:
            return [_EMPTY] * n_q
        offsets = self._year_offsets(t_queries, on)
        ends = self._layout(on, ends=True)
        q = np.arange(n_q, dtype=np.int64)
        nodes = np.array(anchors, dtype=np.int64)
        visited = q * n_entities + nodes  # packed (question, entity), sorted
        for _ in range(depth - 1):
            starts, stops = self._slices(q, nodes, offsets)
            near = np.repeat(q * n_entities, stops - starts) + gather_slices(ends, starts, stops)
            near = merged_unique(near)  # one block per question
            near = near[~in_sorted_distinct(near, visited)]
            if not len(near):
                break
            visited = np.sort(np.concatenate((visited, near)), kind="stable")  # two sorted runs
            q, nodes = np.divmod(near, n_entities)
        owner, entity = np.divmod(visited, n_entities)
        bounds = segment_starts(owner, n_q).tolist()
        return [entity[bounds[j]:bounds[j + 1]] for j in range(n_q)]

    def meets(self, nodes: np.ndarray, t_query: float, steps: int, targets: np.ndarray,
              temporal_filter: bool | None = None) -> bool:
        """Whether an entity within ``steps`` steps of any of ``nodes`` is one of ``targets`` (sorted).

        With :meth:`reach` it tells whether an entity is within a distance of
        the anchor without expanding the anchor's whole ball: ``e`` is within
        ``a + b`` steps of the anchor exactly when ``meets([e], b, reach at
        depth a + 1)`` (SPEC §7's ``too_deep``). Each step reads its nodes'
        neighbours (the other ends of their rows that pass the filter) and tests
        them as they are read; only a step that still has to go on is sorted.
        A node of a step was tested when it was reached, so only its
        neighbours need be.
        """
        frontier = sorted_unique(np.asarray(nodes, dtype=np.int64))
        if not len(frontier) or not len(targets):
            return False
        on = self.temporal_filter if temporal_filter is None else bool(temporal_filter)
        is_target = self._scratch.get()
        is_target[targets] = True
        try:
            if is_target[frontier].any():
                return True
            visited = np.zeros(self.n_entities, dtype=bool)
            visited[frontier] = True
            for step in range(steps):
                values, starts, stops = self._ranges(frontier, t_query, on, ends=True)
                near = gather_slices(values, starts, stops)
                if is_target[near].any():
                    return True
                if step == steps - 1 or not len(near):
                    return False
                near = sorted_unique(near)
                frontier = near[~visited[near]]
                if not len(frontier):
                    return False
                visited[frontier] = True
            return False
        finally:
            is_target[targets] = False

    def expand_uncapped(self, anchor: int | None, t_query: float, temporal_filter: bool | None = None) -> Expansion:
        """SPEC §2.4's BFS with every cap removed, with the configured or a given filter (SPEC §7).

        Each hop takes every eligible row (incident to its frontier, unseen,
        passing the filter), in edge-id order; the pool is then deduplicated
        on ``(s, r, o)`` as usual. ``eligible`` equals ``hop_sizes``.
        """
        if anchor is None:
            return Expansion(_EMPTY, _EMPTY, (), ())
        parts: list[np.ndarray] = []
        seen = _EMPTY
        for _frontier, rows in self._levels(anchor, t_query, temporal_filter, gather_last=True):
            new = rows[~in_sorted(rows, seen)] if len(seen) else rows
            parts.append(new)
            seen = merged_unique(np.concatenate((seen, new)))
        sizes = [len(p) for p in parts] + [0] * (self.hops - len(parts))
        pool = np.concatenate(parts) if parts else _EMPTY
        return Expansion(pool, dedup_first(pool, self.tid), tuple(sizes), tuple(sizes))


def _known_hops(prior: list[Expansion] | None, count_eligible: bool,
                eligible: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The first hops of a batch's prior expansions (all with as many hops): per hop, its ``(q, row)`` sorted by
    question, then edge id, as :func:`~retriever.selection.select_hop` gives them; their eligible counts are
    written into ``eligible`` (the hop's sizes without ``count_eligible``)."""
    if not prior:
        return []
    n_known = len(prior[0].hop_sizes)
    known_sizes = np.array([p.hop_sizes for p in prior], dtype=np.int64).reshape(len(prior), n_known)
    eligible[:, :n_known] = (np.array([p.eligible for p in prior], dtype=np.int64).reshape(len(prior), n_known)
                             if count_eligible else known_sizes)
    rows = np.concatenate([p.pool for p in prior]).astype(np.int64, copy=False)
    owner = np.repeat(np.arange(len(prior), dtype=np.int64), known_sizes.sum(axis=1))
    # a pool is its hops in order: each row's hop, question after question
    hop = np.repeat(np.tile(np.arange(n_known, dtype=np.int64), len(prior)), known_sizes.ravel())
    return [(owner[hop == h], rows[hop == h]) for h in range(n_known)]


def dedup_first(pool: np.ndarray, tid: np.ndarray) -> np.ndarray:
    """Keep the first row of each ``(s, r, o)`` in pool order (SPEC §2.4, fixed)."""
    if len(pool) == 0:
        return _EMPTY
    return pool[first_occurrences(tid[pool])]
