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

The row indexes (:class:`tempbench.sample.kgview.KGView`) are numpy sorts and counts over all rows,
kept as int32 and booleans where exact, so a 10M-row KG is indexed in seconds
and under a GB; the per-question work does not grow with the KG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tempbench.sample import templates
from tempbench.sample.kgview import KGView
from tempbench_core.errors import ConfigError

#: The most questions one benchmark may ask for (TempBench has 8,710): the plan's arrays
#: grow with it, and a mistyped 10**14 must be an error, not a MemoryError.
MAX_TARGET_N = 1_000_000
#: The benchmark ``build-benchmark`` builds unless told otherwise: questions asked, seed of the draws.
DEFAULT_TARGET_N = 10000
DEFAULT_BUILD_SEED = 42

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
# (KGView.head_year_pool / head_footprint), as the released interval slice is
# the easiest one for every retriever; first hops are drawn with weight
# sqrt(head_year_pool) so that isolated pairs do not dominate
INTERVAL_MAX_YEAR_POOL = 150
INTERVAL_MAX_FOOTPRINT = 2200
INTERVAL_YEAR_IN_TEXT = 2 / 864  # released share of interval questions whose text has the year


@dataclass(frozen=True)
class EdgeColumns:
    """The KG a benchmark is built from: one row per ``(s, r, o, ts)``, as column arrays.

    ``head``/``tail`` index ``entity_ids``, ``relation`` indexes
    ``relation_ids``; ``year`` is the row's ``ts``.
    """

    head: np.ndarray
    tail: np.ndarray
    relation: np.ndarray
    year: np.ndarray
    entity_ids: Sequence[str]
    relation_ids: Sequence[str]

    @classmethod
    def of(cls, kg: Any) -> EdgeColumns:
        """The columns of anything that has them (:func:`retriever.load_edgelist`'s KG, a sample's world)."""
        return cls(kg.head, kg.tail, kg.relation, kg.year, kg.entity_ids, kg.relation_ids)


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


def _triple_ids(s: str, r: str, o: str, t: int) -> dict:
    return {"s_id": s, "r_id": r, "o_id": o, "t_start": float(t), "t_end": float(t)}


@dataclass(frozen=True)
class _Rendered:
    """The KG's ids as the questions show them (SPEC §1.2: the raw id when there is no label)."""

    entity_ids: Sequence[str]
    relation_ids: Sequence[str]
    ent_lab: list[str]
    rel_lab: list[str]
    has_label: np.ndarray
    #: a code per distinct rendered entity label: a distractor object with the gold object's
    #: label (a homonym) would leave the label-space S_dist equal to S_star
    lab_code: np.ndarray

    def lab_triples(self, triples: list[tuple[int, int, int, int]]) -> list[dict]:
        """Triples ``(s, r, o, year)`` of codes as label-space records."""
        return [{"s": self.ent_lab[s], "r": self.rel_lab[r], "o": self.ent_lab[o], "t_start": float(y), "t_end": float(y)}
                for s, r, o, y in triples]

    def id_triples(self, triples: list[tuple[int, int, int, int]]) -> list[dict]:
        """Triples ``(s, r, o, year)`` of codes as id-space records."""
        return [_triple_ids(self.entity_ids[s], self.relation_ids[r], self.entity_ids[o], y) for s, r, o, y in triples]


def _rendered(entity_ids: Sequence[str], relation_ids: Sequence[str], labels: dict[str, str]) -> _Rendered:
    def render(i: str) -> str:
        lab = labels.get(i)
        return lab if lab else i

    ent_lab = [render(e) for e in entity_ids]
    rel_lab = [render(r) for r in relation_ids]
    has_label = np.asarray([bool(labels.get(e)) for e in entity_ids], dtype=bool)
    # numbered by first appearance: only equality of codes matters, and a fixed-width
    # string array of a million labels would take hundreds of MB
    code_of: dict[str, int] = {}
    lab_code = np.fromiter((code_of.setdefault(lab, len(code_of)) for lab in ent_lab), dtype=np.int64, count=len(ent_lab))
    return _Rendered(entity_ids, relation_ids, ent_lab, rel_lab, has_label, lab_code)


class _ChainDrawer:
    """Draws gold chains: a first row from the operator's pool, then hops in the same year."""

    def __init__(self, kg: KGView, rng: np.random.Generator, target_n: int) -> None:
        self.kg, self.rng = kg, rng
        ok = kg.head != kg.tail
        self.pools = {
            "any": np.flatnonzero(ok),
            "first": np.flatnonzero(ok & kg.hr_first),
            "last": np.flatnonzero(ok & kg.hr_last),
            # "in which year did …": the year the first hop's fact began
            "interval": np.flatnonzero(ok & kg.fact_start),
        }
        iv = self.pools["interval"]
        yp = kg.head_year_pool[iv]
        small = iv[(yp <= INTERVAL_MAX_YEAR_POOL) & (kg.head_footprint[iv] <= INTERVAL_MAX_FOOTPRINT)]
        n_interval = sum(p[2] for p in split_plan(target_n))
        if len(small) < 4 * n_interval:
            small = iv[:0]  # too few on a small KG: keep the whole pool
        else:
            self.pools["interval"] = small
        self.small_pool = len(small)
        # interval first hops: weight sqrt(head_year_pool), see INTERVAL_MAX_YEAR_POOL
        self.cum_weight = {"interval": np.cumsum(np.sqrt(kg.head_year_pool[self.pools["interval"]].astype(np.float64)))}

    def draw(self, op: str, hops: int) -> list[int] | None:
        """One chain of ``hops`` rows for operator ``op``, or ``None`` when this draw dead-ends."""
        kg, rng = self.kg, self.rng
        pool = self.pools.get(op, self.pools["any"])
        if len(pool) == 0:
            return None
        cw = self.cum_weight.get(op)
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

    def find(self, op: str, hops: int, used: set[tuple], max_attempts: int, stats: dict) -> list[int] | None:
        """A chain not used before for ``op``: ``hops`` rows, else fewer (counted in ``stats``)."""
        for h in range(hops, 0, -1):
            for _ in range(max_attempts):
                c = self.draw(op, h)
                if c is not None and (op, tuple(c)) not in used:
                    if h != hops:
                        stats["fallback_fewer_hops"] += 1
                    return c
        return None


def _slots(rng: np.random.Generator, target_n: int) -> tuple[list[tuple[str, str]], list[int], set[int]]:
    """Question slots ``(split, operator)``: per split, the interval quota then the mix of the other operators.

    Returns the slots, each slot's complexity (an index of ``COMPLEXITY_MIX``) and
    the interval slots whose text names the year.
    """
    slots: list[tuple[str, str]] = []
    for name, size, n_int in split_plan(target_n):
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
    return slots, cx.tolist(), mention


def _question_text(kg: KGView, rng: np.random.Generator, names: _Rendered, op: str, chain: list[int], t: int,
                   mention_year: bool, stats: dict) -> tuple[str, str]:
    """The question's text (the anchor's surface form, sometimes altered) and its answer."""
    anchor = int(kg.head[chain[0]])
    anchor_text = names.ent_lab[anchor]
    if names.has_label[anchor]:
        if rng.random() < ALTER_SHARE:
            alt = templates.altered_surface(anchor_text, rng)
            if alt is not None:
                anchor_text = alt
                stats["altered_anchor"] += 1
    else:
        stats["unlabelled_anchor"] += 1
    last = chain[-1]
    answer = str(t) if op == "interval" else names.ent_lab[int(kg.tail[last])]
    question = templates.question_text(
        op, anchor_text,
        [names.relation_ids[int(kg.rel[i])] for i in chain], [names.rel_lab[int(kg.rel[i])] for i in chain],
        t, names.ent_lab[int(kg.tail[last])], rng,
        mention_year_in_interval=mention_year,
    )
    return question, answer


def _stale_variant(kg: KGView, rng: np.random.Generator, chain: list[int], gold: list[tuple], t: int) -> tuple[list[tuple], bool]:
    """``S_stale`` (one hop at another year) and whether it is a KG row (``stale_functional``)."""
    stale_hops = [k for k, i in enumerate(chain) if kg.n_stale[i] > 0]
    if stale_hops:
        k = stale_hops[int(rng.integers(len(stale_hops)))]
        cand = kg.stale_rows(chain[k])
        row = int(cand[rng.integers(len(cand))])
        rep = (int(kg.head[row]), int(kg.rel[row]), int(kg.tail[row]), int(kg.year[row]))
    else:
        k = int(rng.integers(len(chain)))
        s_, r_, o_, _ = gold[k]
        rep = (s_, r_, o_, t - 1 if t - 1 >= kg.ymin else t + 1)
    variant = list(gold)
    variant[k] = rep
    return variant, bool(stale_hops)


def _dist_variant(kg: KGView, rng: np.random.Generator, names: _Rendered, chain: list[int], gold: list[tuple],
                  t: int) -> tuple[list[tuple], bool]:
    """``S_dist`` (one hop's object replaced) and whether it is a KG row (``dist_functional``)."""
    lab_code = names.lab_code
    dist_hops = [k for k, i in enumerate(chain) if kg.n_dist[i] > 0]
    if dist_hops:
        # prefer hops and rows whose new object reads differently from the gold one
        readable = [k for k in dist_hops if (lab_code[kg.tail[kg.dist_rows(chain[k])]] != lab_code[kg.tail[chain[k]]]).any()]
        pick_from = readable or dist_hops
        k = pick_from[int(rng.integers(len(pick_from)))]
        cand = kg.dist_rows(chain[k])
        differ = cand[lab_code[kg.tail[cand]] != lab_code[kg.tail[chain[k]]]]
        cand = differ if len(differ) else cand
        row = int(cand[rng.integers(len(cand))])
        rep = (int(kg.head[row]), int(kg.rel[row]), int(kg.tail[row]), int(kg.year[row]))
    else:
        k = int(rng.integers(len(chain)))
        s_, r_, o_, _ = gold[k]
        rep = (s_, r_, _other_object(kg, rng, lab_code, s_, r_, o_, len(names.entity_ids)), t)
    variant = list(gold)
    variant[k] = rep
    return variant, bool(dist_hops)


def _other_object(kg: KGView, rng: np.random.Generator, lab_code: np.ndarray, s_: int, r_: int, o_: int, n_ent: int) -> int:
    """Another object of relation ``r_`` (reading differently when one does), else any entity but ``s_`` and ``o_``."""
    objs = kg.other_objects(r_, o_)
    objs = objs[objs != s_]
    differ = objs[lab_code[objs] != lab_code[o_]]
    objs = differ if len(differ) else objs
    if len(objs):
        return int(objs[rng.integers(len(objs))])
    o2 = int(rng.integers(n_ent - 1))
    o2 = o2 + 1 if o2 >= o_ else o2
    if o2 == s_:
        o2 = (o2 + 1) % n_ent
        o2 = (o2 + 1) % n_ent if o2 == o_ else o2
    return o2


def build_benchmark(
    kg: EdgeColumns,
    labels: dict[str, str],
    target_n: int = DEFAULT_TARGET_N,
    seed: int = DEFAULT_BUILD_SEED,
    max_attempts: int = 60,
) -> Benchmark:
    """Build ``target_n`` questions (fewer only if the KG cannot support them).

    Parameters
    ----------
    kg:
        The KG's columns (:class:`EdgeColumns`).
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
    view = KGView(kg.head, kg.tail, kg.relation, kg.year)
    rng = np.random.default_rng(seed)
    if view.n == 0:
        return Benchmark([], [], [], {"requested": target_n, "built": 0})
    names = _rendered(kg.entity_ids, kg.relation_ids, labels)
    drawer = _ChainDrawer(view, rng, target_n)
    slots, complexities, mention = _slots(rng, target_n)
    used: set[tuple] = set()
    bench = Benchmark([], [], [])
    stats = {"requested": target_n, "fallback_fewer_hops": 0, "skipped": 0, "altered_anchor": 0, "unlabelled_anchor": 0,
             "interval_small_pool": int(drawer.small_pool)}
    per_split_count: dict[str, int] = {}
    for slot, ((split, op), ci) in enumerate(zip(slots, complexities, strict=True)):
        chain = drawer.find(op, COMPLEXITY_MIX[ci][1], used, max_attempts, stats)
        if chain is None:
            stats["skipped"] += 1
            continue
        used.add((op, tuple(chain)))
        per_split_count[split] = per_split_count.get(split, 0) + 1
        t = int(view.year[chain[0]])
        question, answer = _question_text(view, rng, names, op, chain, t, slot in mention, stats)
        gold = [(int(view.head[i]), int(view.rel[i]), int(view.tail[i]), t) for i in chain]
        s_stale, stale_functional = _stale_variant(view, rng, chain, gold, t)
        s_dist, dist_functional = _dist_variant(view, rng, names, chain, gold, t)
        qid = f"q{len(bench.labelled):05d}"
        base = {"id": qid, "split": split, "question": question, "answer": answer, "t_query": float(t),
                "complexity": ("1hop", "2hop", "3+hop")[min(len(chain), 3) - 1], "operator_type": op}
        bench.labelled.append({**base, "S_star": names.lab_triples(gold), "S_dist": names.lab_triples(s_dist),
                               "S_stale": names.lab_triples(s_stale)})
        bench.ids.append({**base, "S_star": names.id_triples(gold), "S_dist": names.id_triples(s_dist),
                          "S_stale": names.id_triples(s_stale)})
        bench.flags.append({"id": qid, "stale_functional": stale_functional, "dist_functional": dist_functional})
    stats["built"] = len(bench.labelled)
    stats["per_split"] = per_split_count
    bench.stats.update(stats)
    return bench
