"""Build a TempBench-style benchmark from any TGB-format KG (SPEC §1.3, §5).

Input is column arrays (the generator passes its own; ``build-benchmark`` passes
those of :func:`retriever.kg.load_edgelist`), so the same code runs on the real
``tkgl-smallpedia`` file.

Construction (SPEC §1.3):

- **Gold chain** ``S_star`` of ``k`` hops (``k = 1, 2, 3``): KG rows
  ``(a, r1, o1, t), (o1, r2, o2, t), …`` all in the year ``t = t_query`` (the KG
  is point-in-time, so a row is valid at ``t_query`` iff ``ts == t_query``);
  each hop's subject is the previous hop's object, and no entity repeats.
- **Operators**: ``point_in_time`` (text names the year), ``interval`` (the
  answer is the year ``t``, and ``t_query == t``: the released leak; the year is
  in the text only rarely; every hop is a fact that began in ``t``, and the first
  hop's subject has a small neighbourhood, both in ``t`` and over all years, when
  the KG has enough such rows: the released interval slice is the easiest one for
  every retriever), ``before``/``after`` (text names ``t + 1`` /
  ``t - 1``), ``first``/``last`` (the first hop is the earliest / latest year of
  its ``(a, r1)`` in the KG; no year in the text).
- **S_stale**: one gold hop replaced by an actual KG row with the same
  ``(s, r, o)`` at a year ``!= t_query``. The hop is drawn among the hops that
  have such a row; ``stale_functional`` is true iff one exists. When no hop has
  one, the replacement is the same ``(s, r, o)`` at ``t_query - 1`` (or ``+ 1``
  at the first year), which is *not* a KG row: the variant keeps its shape (one
  triple differs, same fact, invalid time) but nothing can retrieve it.
- **S_dist**: one gold hop's object replaced: an actual KG row with the same
  ``(s, r)``, another object, and its own year (validity at ``t_query`` is not
  required, so most are invalid, as in the release). ``dist_functional`` is true
  iff such a row exists for some hop. Otherwise the replacement is
  ``(s, r, o')`` at ``t_query`` with ``o'`` another object of relation ``r``
  elsewhere in the KG (any entity when ``r`` has one object), not a KG row.
- **Splits**: sizes in the released ratio 6,096 / 871 / 1,743 (exact at 8,710),
  with interval counts per split in the released ratio 601 / 100 / 163.

Labels use the rendered form (SPEC §1.2: raw id when there is no label).
Output is deterministic given the inputs and the seed.

The row indexes (:class:`_KGView`) are numpy sorts and counts over all rows,
kept as int32 and booleans where exact, so a 10M-row KG is indexed in seconds
and under a GB; the per-question work does not grow with the KG.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tempbench.sample import templates
from tempbench_core.errors import ConfigError

#: The most questions one benchmark may ask for (TempBench has 8,710): the plan's arrays
#: grow with it, and a mistyped 10**14 must be an error, not a MemoryError.
MAX_TARGET_N = 1_000_000

RELEASED_SPLITS = (("train", 6096, 601), ("dev", 871, 100), ("test", 1743, 163))
OPERATORS = ("point_in_time", "interval", "before", "after", "first", "last")
# Shares of the non-interval operators and of the complexities.
OPERATOR_MIX = (("point_in_time", 0.55), ("before", 0.1), ("after", 0.1), ("first", 0.125), ("last", 0.125))
COMPLEXITY_MIX = (("1hop", 1, 0.35), ("2hop", 2, 0.4), ("3+hop", 3, 0.25))
# interval questions ask when one event began: mostly short chains
INTERVAL_COMPLEXITY = (0.6, 0.35, 0.05)
ALTER_SHARE = 0.25  # anchors written in a shortened / altered form
# "in which year did …" questions are about events with a small footprint: the
# first hop's subject has few rows around it in that year and over all years
# (_KGView.head_year_pool / head_footprint), as the released interval slice is
# the easiest one for every retriever; first hops are drawn with weight
# sqrt(head_year_pool) so that isolated pairs do not dominate
INTERVAL_MAX_YEAR_POOL = 150
INTERVAL_MAX_FOOTPRINT = 2200
INTERVAL_YEAR_IN_TEXT = 2 / 864  # released share of interval questions whose text has the year


@dataclass
class Benchmark:
    """The built benchmark: label-space records, id-space records, flags, stats."""
    labelled: list[dict]
    ids: list[dict]
    flags: list[dict]
    stats: dict = field(default_factory=dict)


def split_plan(n: int) -> list[tuple[str, int, int]]:
    """``(split, n_questions, n_interval)`` in the released ratios; exact for ``n = 8710``."""
    total = sum(s[1] for s in RELEASED_SPLITS)
    sizes = [int(round(n * s[1] / total)) for s in RELEASED_SPLITS[:-1]]
    sizes.append(n - sum(sizes))
    return [(name, size, int(round(size * n_int / n_rel))) for (name, n_rel, n_int), size in zip(RELEASED_SPLITS, sizes, strict=True)]


def _compact(values: np.ndarray) -> np.ndarray:
    """``values`` as int32 when they fit (halves the memory of a 10M-row KG), else int64."""
    a = np.asarray(values)
    if len(a) and (int(a.min()) < -(2**31) or int(a.max()) >= 2**31):
        return a.astype(np.int64, copy=False)
    return a.astype(np.int32, copy=False)


def _fact_order(head: np.ndarray, tail: np.ndarray, rel: np.ndarray, year: np.ndarray, ymin: int, ny: int) -> np.ndarray:
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


class _KGView:
    """Sorted indexes over the rows needed to draw chains and negatives.

    Columns are kept as int32 when they fit and per-row results are boolean or
    int32 where exact, so a 10M-row KG stays within a few hundred MB here; every
    value is the same integer as with int64 arrays, so the output is too.
    """
    # per-year dense degree counts while (years present x entities) <= this x rows
    DENSE_YEAR_FACTOR = 32

    def __init__(self, head: np.ndarray, tail: np.ndarray, relation: np.ndarray, year: np.ndarray) -> None:
        self.head = _compact(head)
        self.tail = _compact(tail)
        self.rel = _compact(relation)
        self.year = _compact(year)
        n = len(self.head)
        self.n = n
        self.ymin = int(self.year.min()) if n else 0
        ny = (int(self.year.max()) - self.ymin + 1) if n else 1
        self.ny = ny
        if n == 0:
            return
        # (h, r, t, year) order: groups of one fact and of one (s, r)
        o = _fact_order(self.head, self.tail, self.rel, self.year, self.ymin, ny)
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
        yo = (self.year - self.ymin).astype(np.int64)
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
        self.rel_tails = _compact(rel_tail % n_tail)
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
        k = entity * self.ny + (year - self.ymin)
        a = np.searchsorted(self.hy_key, k, "left")
        b = np.searchsorted(self.hy_key, k, "right")
        return self.hy_order[a:b]

    def stale_rows(self, i: int) -> np.ndarray:
        rows = self.hrt_order[self.hrt_start[i] : self.hrt_start[i] + self.hrt_size[i]]
        return rows[self.year[rows] != self.year[i]]

    def dist_rows(self, i: int) -> np.ndarray:
        rows = self.hrt_order[self.hr_start[i] : self.hr_start[i] + self.hr_size[i]]
        return rows[self.tail[rows] != self.tail[i]]

    def other_objects(self, rel: int, obj: int) -> np.ndarray:
        objs = self.rel_tails[self.rel_bounds[rel] : self.rel_bounds[rel + 1]]
        return objs[objs != obj]


def _triple_ids(s: str, r: str, o: str, t: int) -> dict:
    return {"s_id": s, "r_id": r, "o_id": o, "t_start": float(t), "t_end": float(t)}


def build_benchmark(
    head: np.ndarray,
    tail: np.ndarray,
    relation: np.ndarray,
    year: np.ndarray,
    entity_ids: list[str],
    relation_ids: list[str],
    labels: dict[str, str],
    target_n: int = 10000,
    seed: int = 42,
    max_attempts: int = 60,
) -> Benchmark:
    """Build ``target_n`` questions (fewer only if the KG cannot support them).

    Parameters
    ----------
    head, tail, relation, year:
        KG columns; ``head``/``tail`` index ``entity_ids``, ``relation`` indexes
        ``relation_ids``; one row per ``(s, r, o, ts)``.
    labels:
        id -> label; missing or empty labels render as the raw id (SPEC §1.2).
    target_n:
        Number of questions; split into train/dev/test by :func:`split_plan`.
    seed:
        Seed of ``np.random.default_rng``; same inputs and seed, same output.
    max_attempts:
        Chain draws tried per question before falling back to fewer hops.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"the benchmark seed must be an integer >= 0 (got {seed!r})")  # numpy's rule, said first
    if isinstance(target_n, bool) or not isinstance(target_n, int) or not 1 <= target_n <= MAX_TARGET_N:
        raise ConfigError(f"the number of questions must be an integer from 1 to {MAX_TARGET_N:,} (got {target_n!r})")
    kg = _KGView(head, tail, relation, year)
    rng = np.random.default_rng(seed)
    if kg.n == 0:
        return Benchmark([], [], [], {"requested": target_n, "built": 0})

    def render(i: str) -> str:
        lab = labels.get(i)
        return lab if lab else i

    ent_lab = [render(e) for e in entity_ids]
    rel_lab = [render(r) for r in relation_ids]
    has_label = np.asarray([bool(labels.get(e)) for e in entity_ids], dtype=bool)
    # rendered-label code per entity: a distractor object with the gold object's
    # label (a homonym) would leave the label-space S_dist equal to S_star
    # (numbered by first appearance: only equality of codes matters, and a
    # fixed-width string array of a million labels would take hundreds of MB)
    code_of: dict[str, int] = {}
    lab_code = np.fromiter((code_of.setdefault(lab, len(code_of)) for lab in ent_lab), dtype=np.int64, count=len(ent_lab))
    del code_of

    ok = kg.head != kg.tail
    pools = {
        "any": np.flatnonzero(ok),
        "first": np.flatnonzero(ok & kg.hr_first),
        "last": np.flatnonzero(ok & kg.hr_last),
        # "in which year did …": the year the first hop's fact began
        "interval": np.flatnonzero(ok & kg.fact_start),
    }
    iv = pools["interval"]
    yp = kg.head_year_pool[iv]
    small = iv[(yp <= INTERVAL_MAX_YEAR_POOL) & (kg.head_footprint[iv] <= INTERVAL_MAX_FOOTPRINT)]
    n_interval = sum(p[2] for p in split_plan(target_n))
    if len(small) < 4 * n_interval:
        small = iv[:0]  # too few on a small KG: keep the whole pool
    else:
        pools["interval"] = small
    # interval first hops: weight sqrt(head_year_pool), see INTERVAL_MAX_YEAR_POOL
    cum_weight = {"interval": np.cumsum(np.sqrt(kg.head_year_pool[pools["interval"]].astype(np.float64)))}

    def draw_chain(op: str, hops: int) -> list[int] | None:
        pool = pools.get(op, pools["any"])
        if len(pool) == 0:
            return None
        cw = cum_weight.get(op)
        if cw is None:
            first = int(pool[rng.integers(len(pool))])
        else:
            first = int(pool[min(int(np.searchsorted(cw, rng.random() * cw[-1], "right")), len(pool) - 1)])
        chain = [first]
        seen = [int(kg.head[first]), int(kg.tail[first])]
        y = int(kg.year[first])
        for _ in range(hops - 1):
            cand = kg.next_rows(seen[-1], y)
            # objects not yet in the chain (a few != tests: np.isin sorts the candidates)
            fresh = np.ones(len(cand), dtype=bool)
            tails = kg.tail[cand]
            for e in seen:
                fresh &= tails != e
            cand = cand[fresh]
            if op == "interval":
                # every hop began that year: the chain is "when did this start"
                cand = cand[kg.fact_start[cand]]
            if len(cand) == 0:
                return None
            nxt = int(cand[rng.integers(len(cand))])
            chain.append(nxt)
            seen.append(int(kg.tail[nxt]))
        return chain

    # question slots: per split, interval quota then the mix of other operators
    plan = split_plan(target_n)
    slots: list[tuple[str, str]] = []
    for name, size, n_int in plan:
        others = rng.choice(len(OPERATOR_MIX), size=size - n_int, p=[w for _, w in OPERATOR_MIX])
        ops = ["interval"] * n_int + [OPERATOR_MIX[i][0] for i in others.tolist()]
        ops = [ops[i] for i in rng.permutation(len(ops)).tolist()]
        slots += [(name, op) for op in ops]
    cx = rng.choice(len(COMPLEXITY_MIX), size=len(slots), p=[w for _, _, w in COMPLEXITY_MIX])
    cx_interval = rng.choice(len(COMPLEXITY_MIX), size=len(slots), p=list(INTERVAL_COMPLEXITY))
    is_interval = np.asarray([op == "interval" for _, op in slots], dtype=bool)
    cx = np.where(is_interval, cx_interval, cx)
    # the released count of interval texts naming the year, exactly (2 of 864), not a coin flip per question
    iv_slots = np.flatnonzero(is_interval)
    n_mention = int(round(len(iv_slots) * INTERVAL_YEAR_IN_TEXT))
    mention = set(rng.choice(iv_slots, size=n_mention, replace=False).tolist()) if n_mention else set()

    used: set[tuple] = set()
    labelled: list[dict] = []
    ids: list[dict] = []
    flags: list[dict] = []
    stats = {"requested": target_n, "fallback_fewer_hops": 0, "skipped": 0, "altered_anchor": 0, "unlabelled_anchor": 0,
             "interval_small_pool": int(len(small))}
    per_split_count: dict[str, int] = {}
    for slot, ((split, op), ci) in enumerate(zip(slots, cx.tolist(), strict=True)):
        hops = COMPLEXITY_MIX[ci][1]
        chain = None
        for h in range(hops, 0, -1):
            for _ in range(max_attempts):
                c = draw_chain(op, h)
                if c is not None and (op, tuple(c)) not in used:
                    chain = c
                    break
            if chain is not None:
                if h != hops:
                    stats["fallback_fewer_hops"] += 1
                break
        if chain is None:
            stats["skipped"] += 1
            continue
        used.add((op, tuple(chain)))
        per_split_count[split] = per_split_count.get(split, 0) + 1
        qid = f"q{len(labelled):05d}"
        t = int(kg.year[chain[0]])
        n_h = len(chain)
        complexity = ("1hop", "2hop", "3+hop")[min(n_h, 3) - 1]

        # anchor surface form
        anchor = int(kg.head[chain[0]])
        if has_label[anchor]:
            anchor_text = ent_lab[anchor]
            if rng.random() < ALTER_SHARE:
                alt = templates.altered_surface(anchor_text, rng)
                if alt is not None:
                    anchor_text = alt
                    stats["altered_anchor"] += 1
        else:
            anchor_text = ent_lab[anchor]
            stats["unlabelled_anchor"] += 1
        last = chain[-1]
        answer = str(t) if op == "interval" else ent_lab[int(kg.tail[last])]
        question = templates.question_text(
            op, anchor_text,
            [relation_ids[int(kg.rel[i])] for i in chain], [rel_lab[int(kg.rel[i])] for i in chain],
            t, ent_lab[int(kg.tail[last])], rng,
            mention_year_in_interval=slot in mention,
        )

        gold = [(int(kg.head[i]), int(kg.rel[i]), int(kg.tail[i]), t) for i in chain]
        # stale variant
        stale_hops = [k for k, i in enumerate(chain) if kg.n_stale[i] > 0]
        stale_functional = bool(stale_hops)
        if stale_functional:
            k = stale_hops[int(rng.integers(len(stale_hops)))]
            cand = kg.stale_rows(chain[k])
            row = int(cand[rng.integers(len(cand))])
            stale_rep = (int(kg.head[row]), int(kg.rel[row]), int(kg.tail[row]), int(kg.year[row]))
        else:
            k = int(rng.integers(n_h))
            s_, r_, o_, _ = gold[k]
            stale_rep = (s_, r_, o_, t - 1 if t - 1 >= kg.ymin else t + 1)
        s_stale = list(gold)
        s_stale[k] = stale_rep
        # distractor variant
        dist_hops = [k for k, i in enumerate(chain) if kg.n_dist[i] > 0]
        dist_functional = bool(dist_hops)
        if dist_functional:
            # prefer hops and rows whose new object reads differently from the gold one
            readable = [k for k in dist_hops if (lab_code[kg.tail[kg.dist_rows(chain[k])]] != lab_code[kg.tail[chain[k]]]).any()]
            pick_from = readable or dist_hops
            k = pick_from[int(rng.integers(len(pick_from)))]
            cand = kg.dist_rows(chain[k])
            differ = cand[lab_code[kg.tail[cand]] != lab_code[kg.tail[chain[k]]]]
            cand = differ if len(differ) else cand
            row = int(cand[rng.integers(len(cand))])
            dist_rep = (int(kg.head[row]), int(kg.rel[row]), int(kg.tail[row]), int(kg.year[row]))
        else:
            k = int(rng.integers(n_h))
            s_, r_, o_, _ = gold[k]
            objs = kg.other_objects(r_, o_)
            objs = objs[objs != s_]
            differ = objs[lab_code[objs] != lab_code[o_]]
            objs = differ if len(differ) else objs
            if len(objs):
                o2 = int(objs[rng.integers(len(objs))])
            else:
                o2 = int(rng.integers(len(entity_ids) - 1))
                o2 = o2 + 1 if o2 >= o_ else o2
                if o2 == s_:
                    o2 = (o2 + 1) % len(entity_ids)
                    o2 = (o2 + 1) % len(entity_ids) if o2 == o_ else o2
            dist_rep = (s_, r_, o2, t)
        s_dist = list(gold)
        s_dist[k] = dist_rep

        def lab_triples(triples):
            return [{"s": ent_lab[s], "r": rel_lab[r], "o": ent_lab[o], "t_start": float(y), "t_end": float(y)} for s, r, o, y in triples]

        def id_triples(triples):
            return [_triple_ids(entity_ids[s], relation_ids[r], entity_ids[o], y) for s, r, o, y in triples]

        base = {"id": qid, "split": split, "question": question, "answer": answer, "t_query": float(t),
                "complexity": complexity, "operator_type": op}
        labelled.append({**base, "S_star": lab_triples(gold), "S_dist": lab_triples(s_dist), "S_stale": lab_triples(s_stale)})
        ids.append({**base, "S_star": id_triples(gold), "S_dist": id_triples(s_dist), "S_stale": id_triples(s_stale)})
        flags.append({"id": qid, "stale_functional": stale_functional, "dist_functional": dist_functional})
    stats["built"] = len(labelled)
    stats["per_split"] = per_split_count
    return Benchmark(labelled, ids, flags, stats)
