"""A generated temporal knowledge graph shaped like TGB ``tkgl-smallpedia`` (SPEC §1.1, §5).

The world has typed entities (countries, cities, people, organisations,
universities, sports teams, parties, positions, awards, events) and relations
under their real Wikidata property ids and English labels, plus real-looking
extra property ids with generic labels to reach the real relation count.

Facts come in four kinds, each a vectorised numpy draw:

- ``succession``: one holder at a time per subject (head of government, head of
  state, head coach, chairperson): consecutive runs, so the same ``(s, r)`` has
  many objects over the years (distractor candidates, mostly at other years);
- ``run``: a fact that holds over a run of consecutive years, expanded to one
  row per year (the same ``(s, r, o)`` in many years: stale candidates);
- ``oneoff``: a single year (awards, events); most participations in an event
  fall in the event's own year, so one event has several participants at once;
- mirrors: the inverse or symmetric statement Wikidata also holds
  (spouse both ways, officeholder/position held, winner/award received).

Objects are drawn with Zipf weights so countries become hubs with thousands of
rows. The row count is then trimmed or filled with one-off rows of generic
relations to hit the exact target, every entity and relation is made to occur,
a few exact duplicate rows are added, and rows are sorted by year.

The named relations (property ids, labels, subject and object types, weights,
run lengths, mirrors) and the entity type shares are data: the catalogue
``relations.toml`` beside this module, read by :mod:`tempbench.sample.catalogue`.

No per-row Python objects: rows are int arrays (int32 while assembled) until
the CSV is written, and the CSV text is assembled by numpy too
(:func:`tempbench.sample.write.join_lines`), so a KG of ``tkgl-wikidata``'s
size (the ``wikidata`` preset or :func:`tempbench.sample.scales.scale_for_rows`: 10M rows, 1M
entities) is generated in well under a minute.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tempbench.sample import names
from tempbench.sample.catalogue import (
    AWARD,
    CITY,
    COUNTRY,
    EVENT,
    ORG,
    PARTY,
    PERSON,
    POSITION,
    TEAM,
    TYPE_NAMES,
    UNIVERSITY,
    Catalogue,
    RelSpec,
    default_catalogue,
)
from tempbench.sample.scales import SCALES, Scale
from tempbench_core.layout import DEFAULT_SCALE, DEFAULT_SEED
from tempbench_core.progress import progress

__all__ = ["World", "build_world", "RelSpec", "TYPE_NAMES", "EVENT", "PERSON", "COUNTRY"]


GENERIC_SHARE = 0.12  # share of the row budget given to generic relations
CAREER_MEAN = 4.0  # mean length in years of a person's career window


@dataclass
class World:
    """The generated KG as column arrays plus id lists and labels.

    ``head``/``tail``/``relation`` index ``entity_ids``/``relation_ids``; rows are
    sorted by ``year``. ``labels`` maps id -> label (entities without a label are
    absent); ``entity_type`` gives each entity's type code (see ``TYPE_NAMES``).
    """

    head: np.ndarray
    tail: np.ndarray
    relation: np.ndarray
    year: np.ndarray
    entity_ids: list[str]
    relation_ids: list[str]
    labels: dict[str, str]
    entity_type: np.ndarray
    scale: Scale
    extra: dict = field(default_factory=dict)


def _type_counts(scale: Scale, shares: dict[int, float]) -> np.ndarray:
    rest = scale.n_entities - scale.n_countries
    total = sum(shares.values())
    counts = np.zeros(10, dtype=np.int64)
    counts[COUNTRY] = scale.n_countries
    for t, share in shares.items():
        counts[t] = max(4, int(rest * share / total))
    counts[EVENT] = scale.n_entities - counts.sum()
    return counts


def _expand(s: np.ndarray, o: np.ndarray, start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per year of each fact: fact i covers ``start[i] .. start[i] + length[i] - 1``."""
    length = np.maximum(length, 1)
    rep = np.repeat(np.arange(len(s)), length)
    offsets = np.cumsum(length) - length
    years = start[rep] + (np.arange(len(rep)) - offsets[rep])
    return s[rep], o[rep], years


class _Builder:
    """Stateful helper holding the entity blocks and the rng while rows are drawn."""
    def __init__(self, scale: Scale, seed: int, type_shares: dict[int, float]) -> None:
        self.scale = scale
        self.rng = np.random.default_rng(seed)
        self.counts = _type_counts(scale, type_shares)
        self.starts = np.concatenate([[0], np.cumsum(self.counts)[:-1]])
        n = int(self.counts.sum())
        self.n = n
        self.etype = np.repeat(np.arange(10), self.counts)
        # Popularity: a random in-type rank, Zipf-weighted, so a few entities of
        # each type attract most facts (hubs) without tying popularity to ids.
        self.rank = np.zeros(n, dtype=np.int64)
        for t in range(10):
            a, c = self.starts[t], self.counts[t]
            self.rank[a : a + c] = self.rng.permutation(c)
        # A person's active years, skewed to recent decades like Wikidata.
        span = scale.year_max - scale.year_min + 1
        self.active = scale.year_min - 40 + np.floor((span + 10) * self.rng.beta(scale.year_skew - 0.5, 1.0, size=n)).astype(np.int64)
        # A person's career: the window in which their dated facts fall, so that
        # one year of a person holds several facts (citizenship among them).
        self.career0 = self.active + 18 + self.rng.integers(0, 25, size=n)
        self.career_len = np.minimum(1 + self.rng.geometric(1.0 / CAREER_MEAN, size=n), 40)
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._pools: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        # an event's own year (when its participations are dated), recent decades favoured
        self.event_year = self.recent_years(n)

    # -- pools -----------------------------------------------------------
    def pool(self, types: tuple[int, ...], exponent: float) -> tuple[np.ndarray, np.ndarray]:
        """Entities of ``types`` and their Zipf popularity weights (normalised)."""
        ids = np.concatenate([np.arange(self.starts[t], self.starts[t] + self.counts[t]) for t in types])
        w = 1.0 / (self.rank[ids] + 1.0) ** exponent
        return ids, w / w.sum()

    def _cdf(self, types: tuple[int, ...], exponent: float) -> tuple[np.ndarray, np.ndarray]:
        # cached: hundreds of relations draw from the same few pools, and at 1M
        # entities rebuilding one (and its cumulative weights) per draw dominated;
        # ids as int32 and no copy of p keep the cache small (cleared after the draws)
        key = (types, float(exponent))
        if key not in self._pools:
            ids, p = self.pool(types, exponent)
            cdf = p.cumsum()
            cdf /= cdf[-1]
            self._pools[key] = (ids.astype(np.int32), cdf)
        return self._pools[key]

    def draw(self, types: tuple[int, ...], size: int, exponent: float) -> np.ndarray:
        """``size`` entities of ``types`` drawn with replacement by popularity.

        The same draws, from the same generator state, as
        ``ids[rng.choice(len(ids), size=size, p=p)]`` (numpy's choice inverts
        the normalised cumulative weights with one uniform per draw), without
        re-checking and re-summing ``p`` on every call.
        """
        ids, cdf = self._cdf(types, exponent)
        return ids[cdf.searchsorted(self.rng.random(size), side="right")]

    def add(self, rel: int, s: np.ndarray, o: np.ndarray, y: np.ndarray) -> None:
        """Keep the rows of relation ``rel`` inside the year range and without self-loops.

        Stored as int32 (the same integers; half the memory while a 10M-row KG
        is assembled).
        """
        keep = (y >= self.scale.year_min) & (y <= self.scale.year_max) & (s != o)
        self.parts.append((s[keep].astype(np.int32), o[keep].astype(np.int32), np.full(int(keep.sum()), rel, dtype=np.int32),
                           y[keep].astype(np.int32)))

    # -- fact kinds --------------------------------------------------------
    def facts_run(self, spec: RelSpec, budget: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Facts of a ``run``/``oneoff`` relation worth about ``budget`` rows inside the year range.

        A first draw sized by the mean run length loses the years past
        ``year_max`` (recent starts are common); one top-up draw replaces them.
        """
        n = max(1, int(budget / (1.0 if spec.kind == "oneoff" else spec.mean)))
        parts = self._draw_run(spec, n)
        kept = int(self._in_range(parts[2]).sum())
        if 0 < kept < budget:
            more = self._draw_run(spec, max(1, int(n * (budget - kept) / kept)))
            parts = tuple(np.concatenate([a, b]) for a, b in zip(parts, more, strict=True))
        return parts

    def _in_range(self, years: np.ndarray) -> np.ndarray:
        return (years >= self.scale.year_min) & (years <= self.scale.year_max)

    def _draw_run(self, spec: RelSpec, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rng = self.rng
        s = self.draw(spec.subj, n, 0.5)
        o = self.draw(spec.obj, n, spec.hub)
        if spec.kind == "oneoff":
            length = np.ones(n, dtype=np.int64)
        else:
            length = rng.geometric(1.0 / spec.mean, size=n)
        generic_start = self.recent_years(n)
        person_start = self.career0[s] + np.floor(rng.random(n) * self.career_len[s]).astype(np.int64)
        start = np.where(self.etype[s] == PERSON, person_start, generic_start)
        if spec.dated > 0:
            # an event happens in one year: its participants share that year, so
            # the same (event, participant) pair has several objects valid at once
            ev = np.where(self.etype[s] == EVENT, s, o)
            on = (self.etype[ev] == EVENT) & (rng.random(n) < spec.dated)
            start = np.where(on, self.event_year[ev], start)
        # a run may have begun before the first year: it is seen from its middle
        start = np.where(length > 1, start - (rng.random(n) * length).astype(np.int64) // 2, start)
        return _expand(s, o, start, length)

    def recent_years(self, n: int) -> np.ndarray:
        """Years skewed to recent decades, as Wikidata's dated statements are."""
        sc = self.scale
        span = sc.year_max - sc.year_min + 1
        return sc.year_min + np.floor(span * self.rng.beta(sc.year_skew, 1.0, size=n)).astype(np.int64)

    def facts_career(self, spec: RelSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One fact per person of ``spec.subj`` over their whole career (citizenship)."""
        ids, _ = self.pool(spec.subj, 0.0)
        o = self.draw(spec.obj, len(ids), spec.hub)
        return _expand(ids, o, self.career0[ids], self.career_len[ids])

    def facts_succession(self, spec: RelSpec, budget: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        sc, rng = self.scale, self.rng
        span = sc.year_max - sc.year_min + 1
        ids, p = self.pool(spec.subj, 0.3)
        order = np.argsort(-p, kind="stable")
        cover = rng.integers(max(5, span // 5), span + 1, size=len(ids))
        # the most popular subjects get offices until the budget is spent
        n_sub = int(np.searchsorted(np.cumsum(cover[order]), budget)) + 1
        subj = ids[order[:n_sub]]
        cov = cover[order[:n_sub]]
        first = sc.year_max - cov + 1
        m = span  # at most one segment per year
        seg = rng.geometric(1.0 / spec.mean, size=(len(subj), m))
        seg_start = first[:, None] + np.cumsum(seg, axis=1) - seg
        valid = seg_start <= sc.year_max
        s = np.repeat(subj, valid.sum(axis=1))
        st = seg_start[valid]
        ln = np.minimum(seg[valid], sc.year_max - st + 1)
        o = self.draw(spec.obj, len(s), 0.4)
        return _expand(s, o, st, ln)


def _position_labels(b: _Builder, country_lab: list[str], city_lab: list[str]) -> tuple[list[str], int]:
    """Position labels tied to countries and cities.

    Layout (relied on by the office mirrors): ``President of`` country ``c`` at
    ``2c``, ``Prime Minister of`` it at ``2c + 1``, then ``Mayor of`` city ``j``
    at ``2 * n_countries + j`` for the first ``n_mayors`` cities, then ministers
    and members of parliament. Returns the labels and ``n_mayors``.
    """
    rng = b.rng
    n_pos = int(b.counts[POSITION])
    labels: list[str] = []
    for name in country_lab:
        labels.append(f"President of {name}")
        labels.append(f"Prime Minister of {name}")
    n_mayors = min(len(city_lab), max(0, (n_pos - len(labels)) // 3))
    labels += [f"Mayor of {city_lab[j]}" for j in range(n_mayors)]
    while len(labels) < n_pos:
        c = int(rng.integers(len(country_lab)))
        if rng.random() < 0.75:
            port = names.PORTFOLIOS[int(rng.integers(len(names.PORTFOLIOS)))]
            labels.append(f"Minister of {port} of {country_lab[c]}")
        else:
            labels.append(f"member of the Parliament of {country_lab[c]}")
    if len(labels) > n_pos:
        raise ValueError(f"{n_pos} positions cannot hold the {len(labels)} offices of the countries")
    return labels, n_mayors


def _entity_labels(b: _Builder) -> tuple[list[str], np.ndarray, int]:
    rng = b.rng
    cnt = b.counts
    countries = list(names.COUNTRY_NAMES[: cnt[COUNTRY]])
    if len(countries) < cnt[COUNTRY]:
        extra = names.place_names(rng, int(cnt[COUNTRY]) - len(countries))
        forms = ("Republic of {}", "{}", "Kingdom of {}", "{}ia", "{}stan")
        countries += [forms[i % len(forms)].format(x) for i, x in enumerate(extra)]
    cities = names.place_names(rng, int(cnt[CITY]))
    # homonyms: some cities copy another city's name (several Springfields)
    dup = rng.random(len(cities)) < 0.02
    src = rng.integers(0, len(cities), size=len(cities))
    cities = [cities[src[i]] if dup[i] else x for i, x in enumerate(cities)]
    people = names.person_names(rng, int(cnt[PERSON]))
    city_pick = names.pick(rng, tuple(cities), int(cnt[ORG] + cnt[UNIVERSITY] + cnt[TEAM] + cnt[AWARD] + cnt[EVENT]), 0.3)
    ci = iter(city_pick)
    orgs = []
    for _ in range(int(cnt[ORG])):
        r = rng.random()
        if r < 0.15:
            orgs.append(f"{names.ORG_WORDS[int(rng.integers(len(names.ORG_WORDS)))]} {names.ORG_KINDS[int(rng.integers(len(names.ORG_KINDS)))]}")
        elif r < 0.7:
            orgs.append(f"{next(ci)} {names.ORG_KINDS[int(rng.integers(len(names.ORG_KINDS)))]}")
        else:
            s1, s2 = names.pick(rng, names.SURNAMES, 2)
            orgs.append(f"{s1} & {s2}" if r < 0.85 else f"{s1} {names.ORG_KINDS[int(rng.integers(len(names.ORG_KINDS)))]}")
    unis = [names.UNIVERSITY_PATTERNS[int(rng.integers(len(names.UNIVERSITY_PATTERNS)))].format(next(ci)) for _ in range(int(cnt[UNIVERSITY]))]
    teams = [names.TEAM_PATTERNS[int(rng.integers(len(names.TEAM_PATTERNS)))].format(next(ci)) for _ in range(int(cnt[TEAM]))]
    parties = []
    for _ in range(int(cnt[PARTY])):
        adj = names.pick(rng, names.PARTY_ADJECTIVES, 1)[0]
        r = rng.random()
        c = countries[int(rng.integers(len(countries)))]
        parties.append(f"{adj} Party" if r < 0.3 else (f"{adj} Party of {c}" if r < 0.8 else f"{adj} Union"))
    positions, n_mayors = _position_labels(b, countries, cities)
    awards = []
    for _ in range(int(cnt[AWARD])):
        pat = names.AWARD_PATTERNS[int(rng.integers(len(names.AWARD_PATTERNS)))]
        awards.append(pat.format(s=names.pick(rng, names.SURNAMES, 1)[0], w=names.ORG_WORDS[int(rng.integers(len(names.ORG_WORDS)))],
                                 c=next(ci), f=names.FIELDS[int(rng.integers(len(names.FIELDS)))]))
    events = []
    for _ in range(int(cnt[EVENT])):
        pat = names.EVENT_PATTERNS[int(rng.integers(len(names.EVENT_PATTERNS)))]
        # the year in the label is not the event's year: an interval question names
        # its last object, and the released text gives the answer year only rarely
        events.append(pat.format(y=int(rng.integers(b.scale.year_min, b.scale.year_max + 1)), c=next(ci),
                                 f=names.FIELDS[int(rng.integers(len(names.FIELDS)))]))
    labels = countries + cities + people + orgs + unis + teams + parties + positions + awards + events
    # ~1.5% of non-country entities have no English label (rendered as the raw id)
    unlabeled = (rng.random(b.n) < 0.015) & (b.etype != COUNTRY)
    return labels, unlabeled, n_mayors


def build_world(scale: str | Scale = DEFAULT_SCALE, seed: int = DEFAULT_SEED, catalogue: Catalogue | None = None) -> World:
    """Generate the world for ``scale`` deterministically from ``seed``.

    Returns exactly ``scale.n_rows`` rows over exactly ``scale.n_entities``
    entities and ``scale.n_relations`` relations, sorted by year.

    Parameters
    ----------
    scale:
        A preset name (:data:`~tempbench.sample.scales.SCALES`) or a :class:`~tempbench.sample.scales.Scale`.
    seed:
        Seed of every random draw.
    catalogue:
        The relation catalogue; default the shipped ``relations.toml``
        (:func:`tempbench.sample.catalogue.default_catalogue`).
    """
    sc = SCALES[scale] if isinstance(scale, str) else scale
    cat = catalogue if catalogue is not None else default_catalogue()
    b = _Builder(sc, seed, cat.type_shares)
    labels, unlabeled, n_mayors = _entity_labels(b)
    rel_ids, rel_labels, generic_specs = _relations(b, cat)
    rindex = {p: i for i, p in enumerate(rel_ids)}
    _draw_facts(b, list(cat.relations) + generic_specs, rindex, n_mayors)
    head, tail, rel, year = _rows(b, generic_specs, rindex)
    entity_ids, label_map = _ids_and_labels(b, labels, unlabeled, rel_ids, rel_labels)
    return World(head.astype(np.int32), tail.astype(np.int32), rel.astype(np.int32), year.astype(np.int64),
                 entity_ids, rel_ids, label_map, b.etype.copy(), sc)


def _relations(b: _Builder, cat: Catalogue) -> tuple[list[str], list[str], list[RelSpec]]:
    """Relation ids and labels: the named ones (plus their mirrors), then generic ones; the generic specs."""
    sc, rng = b.scale, b.rng
    named = list(cat.relations)
    rel_ids: list[str] = []
    rel_labels: list[str] = []
    for spec in named:
        for pid, lab in ((spec.pid, spec.label), (spec.mirror, cat.mirror_labels.get(spec.mirror or "", ""))):
            if pid and pid != "sym" and pid not in rel_ids:
                rel_ids.append(pid)
                rel_labels.append(lab)
    if len(rel_ids) > sc.n_relations:
        raise ValueError(f"scale {sc.name}: {sc.n_relations} relations is fewer than the {len(rel_ids)} named ones")
    n_generic = sc.n_relations - len(rel_ids)
    taken = {int(p[1:]) for p in rel_ids}
    candidates = np.arange(200, 9000)
    candidates = candidates[~np.isin(candidates, np.asarray(sorted(taken)))]
    generic_nums = np.sort(rng.choice(candidates, size=n_generic, replace=False))
    generic_specs: list[RelSpec] = []
    gw = names.zipf_weights(max(1, n_generic), 1.1) * GENERIC_SHARE * sum(s.weight for s in named) / (1 - GENERIC_SHARE)
    generic_labels = names.generic_relation_labels(rng, n_generic)
    for i, num in enumerate(generic_nums.tolist()):
        st = tuple(sorted({int(x) for x in rng.integers(0, 10, size=int(rng.integers(1, 3)))}))
        ot = tuple(sorted({int(x) for x in rng.integers(0, 10, size=int(rng.integers(1, 3)))}))
        kind = "oneoff" if rng.random() < 0.2 else "run"
        lab = generic_labels[i]
        generic_specs.append(RelSpec(f"P{num}", lab, st, ot, kind, float(rng.choice([3, 5, 8, 15])), float(gw[i])))
        rel_ids.append(f"P{num}")
        rel_labels.append(lab)
    return rel_ids, rel_labels, generic_specs


def _draw_facts(b: _Builder, specs: list[RelSpec], rindex: dict[str, int], n_mayors: int) -> None:
    """Draw every relation's facts into ``b.parts``: careers first, then the others by their share of the rows."""
    sc = b.scale
    total_w = sum(s.weight for s in specs)
    budget_rows = sc.n_rows * 0.95
    # subject -> its office, for the holders' P39/P1308 mirror rows
    p0, c0, city0, nc = int(b.starts[POSITION]), int(b.starts[COUNTRY]), int(b.starts[CITY]), sc.n_countries
    office_of = {"P35": np.full(b.n, -1, dtype=np.int64), "P6": np.full(b.n, -1, dtype=np.int64)}
    office_of["P35"][c0 : c0 + nc] = p0 + 2 * np.arange(nc)
    office_of["P6"][c0 : c0 + nc] = p0 + 2 * np.arange(nc) + 1
    office_of["P6"][city0 : city0 + n_mayors] = p0 + 2 * nc + np.arange(n_mayors)
    for spec in specs:
        if spec.kind == "career":
            s, o, y = b.facts_career(spec)
            b.add(rindex[spec.pid], s, o, y)
            budget_rows -= int(b.parts[-1][0].size)
    for spec in progress(specs, total=len(specs), description="drawing facts per relation"):
        if spec.weight <= 0 or spec.kind == "career":
            continue
        budget = budget_rows * spec.weight / total_w
        if spec.mirror:
            budget /= 2
        if spec.kind == "succession":
            s, o, y = b.facts_succession(spec, budget)
        else:
            s, o, y = b.facts_run(spec, budget)
        r = rindex[spec.pid]
        b.add(r, s, o, y)
        if spec.mirror == "sym":
            b.add(r, o, s, y)
        elif spec.mirror:
            b.add(rindex[spec.mirror], o, s, y)
        if spec.pid in office_of:
            # the holder also "holds the position" for the same years (P39 + P1308)
            office = office_of[spec.pid]
            has = office[s] >= 0
            b.add(rindex["P39"], o[has], office[s[has]], y[has])
            b.add(rindex["P1308"], office[s[has]], o[has], y[has])


def _rows(b: _Builder, generic_specs: list[RelSpec], rindex: dict[str, int]) -> tuple[np.ndarray, ...]:
    """The drawn facts as exactly ``n_rows`` int32 rows ``(head, tail, rel, year)``, sorted by year."""
    sc, rng = b.scale, b.rng
    b._pools.clear()
    head = np.concatenate([p[0] for p in b.parts])
    tail = np.concatenate([p[1] for p in b.parts])
    rel = np.concatenate([p[2] for p in b.parts])
    year = np.concatenate([p[3] for p in b.parts])
    b.parts.clear()
    # overlapping runs of one fact would repeat rows: keep each (s, r, o, ts) once
    # (the exact duplicates the real file has are added back, few, by _fit_to_target)
    first = _first_occurrences(head, tail, rel, year, b.n, len(rindex), sc)
    head, tail, rel, year = head[first], tail[first], rel[first], year[first]
    head, tail, rel, year = _fit_to_target(b, head, tail, rel, year, generic_specs, rindex)
    head, tail, rel, year = (a.astype(np.int32) for a in (head, tail, rel, year))
    # Sort by year; within a year the order is random (the real file's is arbitrary).
    # (= np.lexsort((rng.random(n), year)): a stable sort by the random key, then a
    # stable sort by year, which numpy does by radix on int16 years; same order, ties included)
    by_key = np.argsort(rng.random(len(year)), kind="stable")
    span_dtype = np.int16 if sc.year_max - sc.year_min < 2**15 else np.int64
    order = by_key[np.argsort((year[by_key] - sc.year_min).astype(span_dtype), kind="stable")]
    return head[order], tail[order], rel[order], year[order]


def _ids_and_labels(b: _Builder, labels: list[str], unlabeled: np.ndarray, rel_ids: list[str],
                    rel_labels: list[str]) -> tuple[list[str], dict[str, str]]:
    """Random distinct QIDs for the entities, and the label of every id that has one."""
    rng = b.rng
    qnums = np.unique(rng.integers(1, 130_000_000, size=int(b.n * 1.2) + 10))
    qnums = rng.permutation(qnums)[: b.n]
    entity_ids = [f"Q{q}" for q in qnums.tolist()]
    label_map: dict[str, str] = {}
    for i, qid in enumerate(entity_ids):
        if not unlabeled[i]:
            label_map[qid] = labels[i]
    for pid, lab in zip(rel_ids, rel_labels, strict=True):
        label_map[pid] = lab
    return entity_ids, label_map


def _first_occurrences(head: np.ndarray, tail: np.ndarray, rel: np.ndarray, year: np.ndarray, n_ent: int, n_rel: int,
                       sc: Scale) -> np.ndarray:
    """Sorted indexes of the first occurrence of each distinct ``(head, tail, rel, year)`` row.

    One int64 key per row (mixed radix) when it fits, which sorts far faster
    than ``np.unique(..., axis=0)`` on the stacked columns; both keep the first
    occurrence of each row (a stable sort), so the result is the same.
    """
    span = sc.year_max - sc.year_min + 1
    if n_ent * n_ent * n_rel * span < 2**62:
        key = head.astype(np.int64) * n_ent + tail
        key *= n_rel
        key += rel
        key *= span
        key += year - sc.year_min
        _, first = np.unique(key, return_index=True)
    else:
        _, first = np.unique(np.stack([head, tail, rel, year], axis=1), axis=0, return_index=True)
    first.sort()
    return first


def _fit_to_target(b: _Builder, head, tail, rel, year, generic_specs, rindex):
    """Trim or fill to exactly ``n_rows`` rows using every entity and relation once at least."""
    sc, rng = b.scale, b.rng
    n_dup = sc.n_duplicates
    n_rel = len(rindex)
    while True:
        used_e = np.zeros(b.n, dtype=bool)
        used_e[head] = True
        used_e[tail] = True
        used_r = np.zeros(n_rel, dtype=bool)
        used_r[rel] = True
        need = int((~used_e).sum()) + int((~used_r).sum()) + n_dup
        room = sc.n_rows - len(head)
        if room >= need:
            break
        # drop random rows to make room; a few more entities may become unused
        n_drop = need - room + max(10, (need - room) // 10)
        keep = np.ones(len(head), dtype=bool)
        keep[rng.choice(len(head), size=min(n_drop, len(head)), replace=False)] = False
        head, tail, rel, year = head[keep], tail[keep], rel[keep], year[keep]
    n_fill = sc.n_rows - len(head) - n_dup
    unused_e = np.flatnonzero(~used_e)
    unused_r = np.flatnonzero(~used_r)
    gen_rel = np.asarray([rindex[s.pid] for s in generic_specs] or [0], dtype=np.int64)
    # filler rows: one-off facts of generic relations (Zipf-weighted), entities at random
    fr = gen_rel[rng.choice(len(gen_rel), size=n_fill, p=names.zipf_weights(len(gen_rel), 0.6))]
    fh = rng.integers(0, b.n, size=n_fill)
    ft = rng.integers(0, b.n, size=n_fill)
    fr[: len(unused_r)] = unused_r
    # each unused entity gets one row, on a random side
    k = len(unused_e)
    sl = slice(len(unused_r), len(unused_r) + k)
    side = rng.random(k) < 0.5
    fh[sl] = np.where(side, unused_e, fh[sl])
    ft[sl] = np.where(side, ft[sl], unused_e)
    # no self-loops: move the partner side (never the unused entity) on a clash
    same = np.flatnonzero(fh == ft)
    in_sl = (same >= sl.start) & (same < sl.stop)
    head_is_u = np.zeros(len(same), dtype=bool)
    head_is_u[in_sl] = side[same[in_sl] - sl.start]
    ft[same[~in_sl | head_is_u]] = (ft[same[~in_sl | head_is_u]] + 1) % b.n
    fh[same[in_sl & ~head_is_u]] = (fh[same[in_sl & ~head_is_u]] + 1) % b.n
    fy = b.recent_years(n_fill)
    # the year range is the scale's, ends included, however steep the skew
    fy[-2:] = (sc.year_min, sc.year_max)
    head = np.concatenate([head, fh])
    tail = np.concatenate([tail, ft])
    rel = np.concatenate([rel, fr])
    year = np.concatenate([year, fy])
    # exact duplicate rows, as the real file has a few
    d = rng.choice(len(head), size=n_dup, replace=False)
    head = np.concatenate([head, head[d]])
    tail = np.concatenate([tail, tail[d]])
    rel = np.concatenate([rel, rel[d]])
    year = np.concatenate([year, year[d]])
    return head, tail, rel, year
