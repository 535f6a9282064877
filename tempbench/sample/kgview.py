"""Sorted indexes over the rows of a TGB-format KG, for drawing question chains and negatives (SPEC §1.3).

The row indexes are numpy sorts and counts over all rows, kept as int32 and
booleans where exact, so a 10M-row KG is indexed in seconds and under a GB; the
per-question work of :mod:`tempbench.sample.builder` does not grow with the KG.
"""

from __future__ import annotations

import numpy as np


def compact(values: np.ndarray) -> np.ndarray:
    """``values`` as int32 when they fit (halves the memory of a 10M-row KG), else int64."""
    a = np.asarray(values)
    if len(a) and (int(a.min()) < -(2**31) or int(a.max()) >= 2**31):
        return a.astype(np.int64, copy=False)
    return a.astype(np.int32, copy=False)


def fact_order(head: np.ndarray, tail: np.ndarray, rel: np.ndarray, year: np.ndarray, ymin: int, ny: int) -> np.ndarray:
    """Row order by ``(head, rel, tail, year)``, ties in row order: ``np.lexsort`` of the four columns.

    When the four columns fit one int64 key (mixed radix; a 10M-row KG with 1M
    entities does), one stable argsort of that key gives the same permutation
    several times faster than the four-key lexsort.
    """
    n_ent = int(max(head.max(), tail.max())) + 1
    n_rel = int(rel.max()) + 1
    if n_ent * n_ent * n_rel * ny < 2**62:
        key = head.astype(np.int64) * n_rel + rel
        key *= n_ent
        key += tail
        key *= ny
        key += year - ymin
        return np.argsort(key, kind="stable")
    return np.lexsort((year, tail, rel, head))


#: Year offsets are keys while the years span at most this many (or four times the rows), else year ranks.
MAX_DENSE_SPAN = 1 << 20


def years_by_rank(span: int, rows: int) -> bool:
    """Whether a KG of ``rows`` rows whose years span ``span`` keys its years by rank (else by offset)."""
    return span > max(MAX_DENSE_SPAN, 4 * rows)


class KGView:
    """Sorted indexes over the rows needed to draw chains and negatives.

    Columns are kept as int32 when they fit and per-row results are boolean or
    int32 where exact, so a 10M-row KG stays within a few hundred MB here; every
    value is the same integer as with int64 arrays, so the output is too.
    """
    # per-year dense degree counts while (years present x entities) <= this x rows
    DENSE_YEAR_FACTOR = 32

    def __init__(self, head: np.ndarray, tail: np.ndarray, relation: np.ndarray, year: np.ndarray) -> None:
        self.head = compact(head)
        self.tail = compact(tail)
        self.rel = compact(relation)
        self.year = compact(year)
        n = len(self.head)
        self.n = n
        self.ymin = int(self.year.min()) if n else 0
        span = (int(self.year.max()) - self.ymin + 1) if n else 1
        # A year is keyed by its offset from the first year, or, when the years span far more than there are rows
        # (a KG with a year 10**17), by its rank among the years present: the same order and groups, while a key
        # per (entity, year) and a count per year stay small.
        self.years = np.unique(self.year) if years_by_rank(span, n) else None
        yo = (self.year - self.ymin).astype(np.int64) if self.years is None else np.searchsorted(self.years, self.year)
        ny = span if self.years is None else len(self.years)
        self.ny = ny
        if n == 0:
            return
        # (h, r, t, year) order: groups of one fact and of one (s, r)
        o = fact_order(self.head, self.tail, self.rel, yo, 0, ny)
        self.hrt_order = o.astype(np.int32) if n < 2**31 else o
        h, r, t, y = self.head[o], self.rel[o], self.tail[o], self.year[o]
        new_hr = np.ones(n, dtype=bool)
        new_hr[1:] = (h[1:] != h[:-1]) | (r[1:] != r[:-1])
        new_hrt = new_hr.copy()
        new_hrt[1:] |= t[1:] != t[:-1]
        new_hrty = new_hrt.copy()
        new_hrty[1:] |= y[1:] != y[:-1]
        del h, r, t
        self.hr_start, self.hr_size = self._groups(new_hr, o)
        self.hrt_start, self.hrt_size = self._groups(new_hrt, o)
        _, hrty_size = self._groups(new_hrty, o)
        del new_hrty
        # a stale candidate: same fact in another year; a distractor: same (s, r), other object
        self.n_stale = self.hrt_size - hrty_size
        self.n_dist = self.hr_size - self.hrt_size
        del hrty_size
        # whether each row is in the earliest year of its fact (s, r, o), i.e.
        # when that fact began, and in the earliest / latest year of its (s, r)
        self.fact_start = np.empty(n, dtype=bool)
        self.fact_start[o] = y == self._spread(np.minimum.reduceat(y, np.flatnonzero(new_hrt)), new_hrt)
        hr_pos = np.flatnonzero(new_hr)
        self.hr_first = np.empty(n, dtype=bool)
        self.hr_first[o] = y == self._spread(np.minimum.reduceat(y, hr_pos), new_hr)
        self.hr_last = np.empty(n, dtype=bool)
        self.hr_last[o] = y == self._spread(np.maximum.reduceat(y, hr_pos), new_hr)
        del y, o, new_hr, new_hrt, hr_pos
        # Neighbourhood of each row's head, counted with multiplicity (a self-loop
        # twice): head_year_pool = deg_t(h) + sum over rows incident to h in year t
        # of deg_t(other end), an upper bound on a 2-hop BFS pool anchored at h and
        # filtered to t; head_footprint is the same over all years (no filter).
        self.head_year_pool = self._head_year_pool(yo)
        ents = np.concatenate([self.head, self.tail])
        deg_all = np.bincount(ents)
        self.head_degree = deg_all[self.head]
        around_all = np.bincount(ents, weights=np.concatenate([deg_all[self.tail], deg_all[self.head]]).astype(np.float64),
                                 minlength=len(deg_all))
        self.head_footprint = self.head_degree + around_all[self.head].astype(np.int64)
        del ents, deg_all, around_all
        # (head, year) -> rows, for extending a chain from an entity at a year
        key = yo + self.head.astype(np.int64) * ny
        del yo
        hy_order = np.argsort(key, kind="stable")
        self.hy_key = key[hy_order]
        self.hy_order = hy_order.astype(np.int32) if n < 2**31 else hy_order
        del key, hy_order
        # objects of each relation, for non-functional distractors
        # (the tails sorted within each relation: one sort of a combined key, no permutation needed)
        n_tail = int(self.tail.max()) + 1
        rel_tail = np.sort(self.rel.astype(np.int64) * n_tail + self.tail)
        self.rel_tails = compact(rel_tail % n_tail)
        # objects of relation r are rel_tails[rel_bounds[r] : rel_bounds[r + 1]]
        self.rel_bounds = np.searchsorted(rel_tail, np.arange(int(self.rel.max()) + 2, dtype=np.int64) * n_tail)

    def _head_year_pool(self, yo: np.ndarray) -> np.ndarray:
        """Per row: ``deg_t(h)`` plus the ``deg_t`` of every end of a row incident to ``h`` in ``t`` (see above).

        Degrees per (entity, year) are counted with one dense ``bincount`` per
        year when that costs about as much as the rows themselves (the
        generated KGs: 125 years), else by ``np.unique`` over the (entity, year)
        keys. The counts are exact integers either way.
        """
        n, ny = self.n, self.ny
        n_ent = int(max(self.head.max(), self.tail.max())) + 1
        present = np.flatnonzero(np.bincount(yo, minlength=ny))
        if len(present) * n_ent > self.DENSE_YEAR_FACTOR * n:
            uk, inv = np.unique(np.concatenate([yo + self.head.astype(np.int64) * ny, yo + self.tail.astype(np.int64) * ny]),
                                return_inverse=True)
            deg = np.bincount(inv, minlength=len(uk))
            dh, dt = deg[inv[:n]], deg[inv[n:]]
            around = np.bincount(inv, weights=np.concatenate([dt, dh]).astype(np.float64), minlength=len(uk))
            return dh + around[inv[:n]].astype(np.int64)
        order = np.argsort(yo.astype(np.int16 if ny < 2**15 else np.int64), kind="stable")
        bounds = np.searchsorted(yo[order], np.append(present, ny))
        pool = np.empty(n, dtype=np.int64)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
            rows = order[a:b]
            h, t = self.head[rows], self.tail[rows]
            ends = np.concatenate([h, t])
            deg = np.bincount(ends, minlength=n_ent)
            dh, dt = deg[h], deg[t]
            around = np.bincount(ends, weights=np.concatenate([dt, dh]).astype(np.float64), minlength=n_ent)
            pool[rows] = dh + around[h].astype(np.int64)
        return pool

    @staticmethod
    def _spread(per_group: np.ndarray, new: np.ndarray) -> np.ndarray:
        """One value per group -> the value of each position's group (positions in sorted order)."""
        return np.repeat(per_group, np.diff(np.append(np.flatnonzero(new), len(new))))

    @staticmethod
    def _groups(new: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row (original index): start position of its group in ``order`` and group size."""
        n = len(new)
        starts = np.flatnonzero(new)
        sizes = np.diff(np.append(starts, n))
        dtype = np.int32 if n < 2**31 else np.int64
        start = np.empty(n, dtype=dtype)
        size = np.empty(n, dtype=dtype)
        start[order] = np.repeat(starts, sizes)
        size[order] = np.repeat(sizes, sizes)
        return start, size

    def next_rows(self, entity: int, year: int) -> np.ndarray:
        """The rows whose head is ``entity`` in ``year``, in row order."""
        if self.years is None:
            if not 0 <= year - self.ymin < self.ny:
                return self.hy_order[:0]  # (its key would be another entity's)
            k = entity * self.ny + (year - self.ymin)
        else:
            at = int(np.searchsorted(self.years, year))
            if at == len(self.years) or int(self.years[at]) != year:
                return self.hy_order[:0]
            k = entity * self.ny + at
        a = np.searchsorted(self.hy_key, k, "left")
        b = np.searchsorted(self.hy_key, k, "right")
        return self.hy_order[a:b]

    def stale_rows(self, i: int) -> np.ndarray:
        """The rows of row ``i``'s fact ``(s, r, o)`` in another year (stale candidates)."""
        rows = self.hrt_order[self.hrt_start[i] : self.hrt_start[i] + self.hrt_size[i]]
        return rows[self.year[rows] != self.year[i]]

    def dist_rows(self, i: int) -> np.ndarray:
        """The rows of row ``i``'s ``(s, r)`` with another object (distractor candidates)."""
        rows = self.hrt_order[self.hr_start[i] : self.hr_start[i] + self.hr_size[i]]
        return rows[self.tail[rows] != self.tail[i]]

    def other_objects(self, rel: int, obj: int) -> np.ndarray:
        """The objects of relation ``rel`` other than ``obj``, sorted, with repeats."""
        objs = self.rel_tails[self.rel_bounds[rel] : self.rel_bounds[rel + 1]]
        return objs[objs != obj]
