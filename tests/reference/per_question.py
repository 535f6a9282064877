"""The per-question implementation of SPEC §3.1-§3.5, the reference of :mod:`eval`'s table kernels.

:mod:`eval` reads a whole run into one table of arrays and computes every
metric with numpy (:mod:`eval.evidence` and the kernels). This module does the
same one question at a time with Python objects, literally as SPEC words it:
:func:`resolve_question` matches one question's evidence to its gold, and
:func:`row_from_resolved`, :func:`hit_list`, :func:`question_indicators`,
:func:`trp_ccr_ties` and :func:`rank_tie_vectors` compute each metric from
it; :func:`evaluate_reference` gives the :class:`eval.scoring.Evaluation` of a
whole run this way. Tests check that both give the same numbers on random runs
(ties, repeats, homonyms, label-only, id-only and 5-list items).

It borrows from :mod:`eval` only what is not a rule of the metrics: the
closed-form arithmetic of :mod:`eval.tie_forms` (checked on its own against
brute force in :mod:`tests.reference.eval`), the gain-matrix kernel of
:mod:`eval.rank`, the summary of :mod:`eval.ties`, and the benchmark-only
pairs of :mod:`eval.negatives`.

Numbers follow :mod:`eval.keyspace`'s documented reading: a NaN score is no
score, and every NaN time is one value (canonicalised below) for the
deduplication of whole items.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any, NamedTuple

import numpy as np

from eval.measures import RANK_MEASURES, Measure
from eval.negatives import RATE_NAMES, TYPES, negatives_result, replaced_pair
from eval.rank import rank_kernel, rank_result, to_matrix
from eval.scoring import Evaluation, _answer_rows, _where, select
from eval.tie_forms import ADDITIVE, RankTies, _cut_minimum, _groups, chain_probability, first_offset_dist
from eval.ties import TieVectors, tie_summary
from tempbench_core.errors import EvidenceError
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, SPACE_KEYS, TIME_KEYS, carried_spaces, valid_at

_NAN = float("nan")


KEY_CHOICES = ("auto", "label", "id")


class Item(NamedTuple):
    """One evidence item normalised to ``(s, r, o, t_start, t_end)`` in one space."""

    space: str
    srot: tuple[Any, Any, Any]
    t_start: float
    t_end: float
    cls: int  # index of the gold triple it matches, -1 when not in gold
    score: float | None = None

    @property
    def whole(self) -> tuple[Any, ...]:
        """The whole item, the unit of deduplication in SPEC §3.4."""
        return (self.space, *self.srot, self.t_start, self.t_end)

    def valid_at(self, tq: float) -> bool:
        """Whether the item's own window is valid at ``tq`` (:func:`~tempbench_core.schema.valid_at`)."""
        return valid_at(self.t_start, self.t_end, tq)


@dataclass(frozen=True)
class GoldTriple:
    """A benchmark triple with the spaces it carries."""

    keys: dict[str, tuple[Any, Any, Any]]
    t_start: float
    t_end: float

    def five(self, space: str) -> tuple[Any, ...] | None:
        """``(s, r, o, t_start, t_end)`` in ``space``, or None when it lacks it."""
        srot = self.keys.get(space)
        return None if srot is None else (*srot, self.t_start, self.t_end)


@dataclass
class Resolved:
    """A question's gold and evidence after key-space resolution (SPEC §3.1)."""

    qid: Any
    complexity: Any
    operator: Any
    tq: float
    items: list[Item]
    n_gold: int
    gold_space: str
    class_valid: list[bool] = field(default_factory=list)  # a member of the class is valid at tq
    class_keys: list[dict[str, tuple[Any, Any, Any]]] = field(default_factory=list)
    extra: list[Item] = field(default_factory=list)  # cut-off ties (SPEC §3.5), matched like evidence
    gold: list[GoldTriple] = field(default_factory=list)  # S_star as parsed
    key: str = "auto"  # the key-space option the question was resolved under

    @property
    def n_ret(self) -> int:
        return len(self.items)


def _qname(question: Mapping[str, Any]) -> str:
    qid = question.get("id") if isinstance(question, Mapping) else None
    return "question" if qid is None else f"question {qid!r}"


def _to_float(value: Any, what: str) -> float:
    if type(value) is float:  # the common case, checked first for speed
        return _NAN if value != value else value
    if value is None or isinstance(value, (list, tuple, dict)):
        raise EvidenceError(f"{what} is {value!r}; expected a number")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float range
        raise EvidenceError(f"{what} is {value!r}; expected a number") from None
    return _NAN if number != number else number


def _srot(a: Any, b: Any, c: Any, what: Callable[[], str]) -> tuple[Any, Any, Any]:
    """``(s, r, o)`` as a set/dict key; a list or dict value cannot be one (``what()`` names the item)."""
    if type(a) is str and type(b) is str and type(c) is str:  # the common case, no hashing test
        return (a, b, c)
    key = (a, b, c)
    try:
        hash(key)
    except TypeError:
        raise EvidenceError(f"{what()} has s/r/o values {key!r}; expected strings (ids or labels)") from None
    return key



def _describe_keys(obj: Mapping[str, Any]) -> str:
    present = [k for k in (*LABEL_KEYS, *ID_KEYS, *TIME_KEYS) if k in obj]
    return "{" + ", ".join(present) + "}" if present else "no triple keys"


def _missing_space_keys(obj: Mapping[str, Any], spaces: Sequence[str]) -> str:
    parts = []
    for space in spaces:
        missing = [k for k in SPACE_KEYS[space] if k not in obj]
        parts.append(f"{', '.join(missing)} ({space} space)")
    return " or ".join(parts)


def gold_triples(question: Mapping[str, Any], field_name: str = "S_star", key: str = "auto") -> list[GoldTriple]:
    where = _qname(question)
    if field_name not in question:
        raise EvidenceError(f"{where} has no {field_name} field")
    raw = question[field_name]
    if raw is None or isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable):
        raise EvidenceError(f"{where}: {field_name} is {type(raw).__name__}; expected a list of triples")
    out = []
    for j, triple in enumerate(raw):
        what = f"{where}: {field_name}[{j}]"
        if not isinstance(triple, Mapping):
            raise EvidenceError(f"{what} is {type(triple).__name__}; expected a dict triple")
        spaces = carried_spaces(triple)
        wanted = ("label", "id") if key == "auto" else (key,)
        if not any(s in spaces for s in wanted):
            raise EvidenceError(f"{what} has {_describe_keys(triple)}; missing {_missing_space_keys(triple, wanted)}")
        for tk in TIME_KEYS:
            if tk not in triple:
                raise EvidenceError(f"{what} has no {tk}")
        keys = {s: _srot(*(triple[k] for k in SPACE_KEYS[s]), lambda what=what: what) for s in spaces}
        out.append(
            GoldTriple(
                keys=keys,
                t_start=_to_float(triple["t_start"], f"{what}.t_start"),
                t_end=_to_float(triple["t_end"], f"{what}.t_end"),
            )
        )
    return out


def _raw_item(
    item: Any, kind: str, pos: int, where: str, gold_spaces: set[str], key: str
) -> tuple[str, tuple[Any, Any, Any], float, float, Any]:
    """Normalise one evidence item to ``(space, (s, r, o), t_start, t_end, score)``.

    ``kind``/``pos``/``where`` only build the error message (lazily: this runs
    once per retrieved item).
    """
    if isinstance(item, Mapping):
        if key != "auto":
            space = key
            if space not in carried_spaces(item):
                what = f"{kind} item {pos} of {where}"
                raise EvidenceError(f"{what} has {_describe_keys(item)}; missing {_missing_space_keys(item, (key,))}")
        elif "s_id" in item and "r_id" in item and "o_id" in item and "id" in gold_spaces:
            space = "id"
        elif "s" in item and "r" in item and "o" in item and "label" in gold_spaces:
            space = "label"
        else:
            what = f"{kind} item {pos} of {where}"
            item_spaces = carried_spaces(item)
            if not item_spaces:
                raise EvidenceError(f"{what} has {_describe_keys(item)}; missing {_missing_space_keys(item, ('label', 'id'))}")
            raise EvidenceError(
                f"{what} carries the {'/'.join(item_spaces)} space but the gold (S_star) carries "
                f"{'/'.join(sorted(gold_spaces)) or 'neither'}; no shared key space (give key='label' or key='id' "
                "only when both sides carry it)"
            )
        if "t_start" not in item or "t_end" not in item:
            missing = "t_start" if "t_start" not in item else "t_end"
            raise EvidenceError(f"{kind} item {pos} of {where} has no {missing}")
        names = ID_KEYS if space == "id" else LABEL_KEYS
        srot = _srot(item[names[0]], item[names[1]], item[names[2]], lambda: f"{kind} item {pos} of {where}")
        ts = _to_float(item["t_start"], f"{kind} item {pos} of {where}: t_start")
        te = _to_float(item["t_end"], f"{kind} item {pos} of {where}: t_end")
        return space, srot, ts, te, item.get("score")
    if isinstance(item, (tuple, list)):
        what = f"{kind} item {pos} of {where}"
        if len(item) != 5:
            raise EvidenceError(f"{what} has {len(item)} fields; expected 5: (s, r, o, t_start, t_end)")
        if key != "auto":
            space = key
        elif "label" in gold_spaces:
            space = "label"
        else:
            space = "id"
        srot = _srot(item[0], item[1], item[2], lambda: what)
        return space, srot, _to_float(item[3], f"{what}: t_start"), _to_float(item[4], f"{what}: t_end"), None
    raise EvidenceError(
        f"{kind} item {pos} of {where} is {type(item).__name__}; expected a dict or a 5-tuple (s, r, o, t_start, t_end)"
    )


def score_value(score: Any) -> float | None:
    """An item's score as the tie rules read it (SPEC §3.5): a float, or ``None`` (absent, a boolean, not a number)."""
    if score is None or isinstance(score, bool):
        return None
    try:
        value = float(score)
    except (TypeError, ValueError, OverflowError):
        return None
    return None if value != value else value


def _iter_evidence(evidence: Any, where: str) -> Iterable[Any]:
    if evidence is None or isinstance(evidence, (str, bytes, Mapping)) or not isinstance(evidence, Iterable):
        raise EvidenceError(f"evidence of {where} is {type(evidence).__name__}; expected an iterable of items")
    return evidence


def primary_space(used: set[str], key: str, gold_spaces: set[str]) -> str:
    """The space gold classes are keyed on (SPEC §3.1): the evidence's one space, else ``key``, else ids when the gold has them.

    ``used``: the spaces the evidence items were read in; ``gold_spaces``: the
    spaces every ``S_star`` triple carries (``{key}`` when a space is forced).
    """
    if len(used) == 1:
        return next(iter(used))
    if key != "auto":
        return key
    return "id" if "id" in gold_spaces else "label"


def resolve_question(
    question: Mapping[str, Any],
    evidence: Iterable[Any],
    key: str = "auto",
    extra: Iterable[Any] = (),
) -> Resolved:
    """Match the evidence of one question against its gold chain (SPEC §3.1).

    Parameters
    ----------
    question:
        A benchmark record with ``S_star`` and ``t_query`` (SPEC §1.3).
    evidence:
        Any iterable of items, consumed exactly once.
    key:
        ``'auto'``, ``'label'`` or ``'id'``.
    extra:
        Items ranked after the evidence (``cutoff_ties``, SPEC §3.5), matched the
        same way but never counted by TRP/CCR.
    """
    if key not in KEY_CHOICES:
        raise EvidenceError(f"unknown key space {key!r}; expected one of {', '.join(KEY_CHOICES)}")
    if not isinstance(question, Mapping):
        raise EvidenceError(f"question is {type(question).__name__}; expected a dict record")
    where = _qname(question)
    if "t_query" not in question:
        raise EvidenceError(f"{where} has no t_query field")
    tq = _to_float(question["t_query"], f"{where}: t_query")
    gold = gold_triples(question, "S_star", key)
    gold_spaces = set.intersection(*(set(g.keys) for g in gold)) if gold else {"id", "label"}
    if not gold_spaces:
        raise EvidenceError(f"{where}: S_star mixes triples with only labels and triples with only ids")
    if key != "auto":
        gold_spaces = {key}

    raw = [_raw_item(it, "evidence", i, where, gold_spaces, key) for i, it in enumerate(_iter_evidence(evidence, where))]
    raw_extra = [_raw_item(it, "cutoff_ties", i, where, gold_spaces, key) for i, it in enumerate(_iter_evidence(extra, where))]

    primary = primary_space({r[0] for r in raw}, key, gold_spaces)

    # Gold classes: distinct (s, r, o) in the primary space, in S_star order.
    class_of: dict[tuple[Any, ...], int] = {}
    class_valid: list[bool] = []
    class_keys: list[dict[str, tuple[Any, Any, Any]]] = []
    lookup: dict[str, dict[tuple[Any, ...], int]] = {"id": {}, "label": {}}
    for g in gold:
        k = g.keys[primary]
        if k not in class_of:
            class_of[k] = len(class_valid)
            class_valid.append(False)
            class_keys.append(dict(g.keys))
        c = class_of[k]
        if valid_at(g.t_start, g.t_end, tq):
            class_valid[c] = True
        for space, srot in g.keys.items():
            lookup[space].setdefault(srot, c)

    def make(r: tuple[str, tuple[Any, Any, Any], float, float, Any]) -> Item:
        space, srot, ts, te, score = r
        return Item(space, srot, ts, te, lookup[space].get(srot, -1), score_value(score))

    return Resolved(
        qid=question.get("id"),
        complexity=question.get("complexity"),
        operator=question.get("operator_type"),
        tq=tq,
        items=[make(r) for r in raw],
        n_gold=len(class_valid),
        gold_space=primary,
        class_valid=class_valid,
        class_keys=class_keys,
        extra=[make(r) for r in raw_extra],
        gold=gold,
        key=key,
    )


# ---------------------------------------------------------------- SPEC §3.1: TRP and CCR
def is_hit(item: Item, tq: float) -> bool:
    """A TRP hit (SPEC §3.1): the item matches a gold triple and its own window is valid at ``tq``."""
    return item.cls >= 0 and item.valid_at(tq)


def row_from_resolved(res: Resolved) -> dict[str, Any]:
    """The published per-question row (SPEC §3.1) from a resolved question."""
    tq = res.tq
    hit_classes = [it.cls for it in res.items if is_hit(it, tq)]
    n_ret = len(res.items)
    hits = len(hit_classes)
    ccr = 1 if res.n_gold > 0 and len(set(hit_classes)) == res.n_gold else 0
    return {
        "id": res.qid,
        "complexity": res.complexity,
        "operator": res.operator,
        "n_ret": n_ret,
        "hits": hits,
        "n_gold": res.n_gold,
        "trp": hits / n_ret if n_ret else None,
        "ccr": ccr,
    }


# ---------------------------------------------------------------- SPEC §3.4: relevance and rank metrics
def relevant_classes(res: Resolved) -> list[int]:
    """The gold classes in ``rel``: a member is valid at ``t_query`` (SPEC §3.4)."""
    return [c for c, valid in enumerate(res.class_valid) if valid]


def deduplicated(items: list[Item]) -> list[Item]:
    """The items without repeats of a whole item, first occurrence kept, in order."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for it in items:
        whole = it.whole
        if whole not in seen:
            seen.add(whole)
            out.append(it)
    return out


def hit_list(res: Resolved) -> tuple[list[bool], int]:
    """Hit indicators of the deduplicated returned list, and ``|rel|`` (SPEC §3.4)."""
    tq = res.tq
    rel = set(relevant_classes(res))
    done: set[int] = set()
    flags: list[bool] = []
    for it in deduplicated(res.items):
        hit = it.cls in rel and it.valid_at(tq) and it.cls not in done
        if hit:
            done.add(it.cls)
        flags.append(hit)
    return flags, len(rel)


def rank_metrics(resolved: Sequence[Resolved], measures: Sequence[Measure] = RANK_MEASURES) -> dict[str, Any]:
    """Per-question arrays and macro values of the SPEC §3.4 metrics, from per-question hit lists.

    Returns ``{'per_question': {name: array}, 'macro': {name: value},
    'n_rel': array, 'n_evaluated': int, 'n_empty_rel': int}``.
    """
    lists = []
    n_rel = np.zeros(len(resolved), dtype=np.int64)
    for i, res in enumerate(resolved):
        flags, nr = hit_list(res)
        lists.append(flags)
        n_rel[i] = nr
    width = max([m.cutoff or 1 for m in measures] + [len(x) for x in lists])
    per_q = rank_kernel(to_matrix(lists, width), n_rel, measures)
    return rank_result(per_q, n_rel)


# ---------------------------------------------------------------- SPEC §3.3: typed negatives
def question_indicators(question: Mapping[str, Any], res: Resolved) -> dict[str, bool | None]:
    """Per rate name: whether the evidence contains a matching item (None if not evaluable)."""
    tq = res.tq
    out: dict[str, bool | None] = dict.fromkeys(RATE_NAMES)
    for kind, (variant, _flag) in TYPES.items():
        pair = replaced_pair(question, variant, res.key, res.gold or None)
        if pair is None:
            continue
        hop, repl = pair
        exact = same_a = same_b = False
        for it in res.items:
            five = (*it.srot, it.t_start, it.t_end)
            hop_srot = hop.keys.get(it.space)
            repl_five = repl.five(it.space)
            invalid = not valid_at(it.t_start, it.t_end, tq)
            if repl_five is not None and five == repl_five:
                exact = True
            if kind == "stale":
                if hop_srot is not None and it.srot == hop_srot and invalid:
                    same_a = True
                if hop_srot is not None and it.srot[:2] == hop_srot[:2] and invalid:
                    same_b = True
            else:
                if repl_five is not None and it.srot == repl.keys[it.space]:
                    same_a = True
                if hop_srot is not None and it.srot[:2] == hop_srot[:2] and it.srot[2] != hop_srot[2]:
                    same_b = True
        names = RATE_NAMES[:3] if kind == "stale" else RATE_NAMES[3:]
        out.update(zip(names, (exact, same_a, same_b), strict=True))
    return out


def negatives_report(
    questions: Sequence[Mapping[str, Any]],
    resolved: Sequence[Resolved],
    flags: Mapping[Any, Mapping[str, bool]] | None,
) -> dict[str, Any]:
    """Rates ``name -> {rate, n}`` plus the evaluable and functional counts per type.

    Returns ``{'rates': ..., 'counts': {type: {'evaluable', 'functional'}},
    'indicators': {name: list of 0/1/None per question}}``; ``rates`` is None
    when no flags were found (SPEC §3.2).
    """
    indicators = {name: [] for name in RATE_NAMES}
    counts = {kind: {"evaluable": 0, "functional": 0} for kind in TYPES}
    for q, res in zip(questions, resolved, strict=True):
        ind = question_indicators(q, res)
        flag = (flags or {}).get(q.get("id"), {})
        for kind, (_variant, flag_name) in TYPES.items():
            names = RATE_NAMES[:3] if kind == "stale" else RATE_NAMES[3:]
            evaluable = ind[names[0]] is not None
            functional = evaluable and bool(flag.get(flag_name, False))
            counts[kind]["evaluable"] += evaluable
            counts[kind]["functional"] += functional
            for name in names:
                indicators[name].append(int(ind[name]) if functional else None)
    return negatives_result(indicators, counts, flags is not None)


# ---------------------------------------------------------------- SPEC §3.5: ties
def cutoff_group(res: Resolved) -> tuple[list[int], int]:
    """Indices of returned items in the cut-off group, and the number of ``cutoff_ties``.

    The group is the returned items with the k-th (last returned) score plus
    ``cutoff_ties`` (SPEC §6.1). Without scores there is no group.
    """
    if not res.items or res.items[-1].score is None or any(it.score is None for it in res.items):
        return [], 0
    last = res.items[-1].score
    members = [i for i, it in enumerate(res.items) if it.score == last]
    return members, len(res.extra)


def trp_ccr_ties(res: Resolved) -> dict[str, tuple[float, float, float, float] | None]:
    """``(observed, expected, min, max)`` of TRP (None when ``n_ret == 0``) and CCR."""
    tq = res.tq
    n_ret = len(res.items)
    hits = [is_hit(it, tq) for it in res.items]
    observed_ccr = float(res.n_gold > 0 and len({it.cls for it, h in zip(res.items, hits, strict=True) if h}) == res.n_gold)
    if n_ret == 0:
        return {"TRP": None, "CCR": (observed_ccr, observed_ccr, observed_ccr, observed_ccr)}
    members, n_extra = cutoff_group(res)
    group_extra = list(res.extra)
    if not members:
        # an exactly known order: a group of one changes nothing, and the cut-off ties are below it
        members, n_extra, group_extra = [n_ret - 1], 0, []
    in_group = set(members)
    extra_hits = [is_hit(it, tq) for it in group_extra]
    above = sum(h for i, h in enumerate(hits) if i not in in_group)
    m = len(members)
    g = m + n_extra
    h = sum(hits[i] for i in members) + sum(extra_hits)
    trp_obs = sum(hits) / n_ret
    trp = (trp_obs, (above + m * h / g) / n_ret, (above + max(0, m - (g - h))) / n_ret, (above + min(m, h)) / n_ret)

    if res.n_gold == 0:
        return {"TRP": trp, "CCR": (0.0, 0.0, 0.0, 0.0)}
    covered = {res.items[i].cls for i in range(n_ret) if hits[i] and i not in in_group}
    missing = [c for c in range(res.n_gold) if c not in covered]
    counts = dict.fromkeys(missing, 0)
    for it in [res.items[i] for i in members] + group_extra:
        if is_hit(it, tq) and it.cls in counts:
            counts[it.cls] += 1
    p = chain_probability(g, m, [counts[j] for j in missing])
    ccr = (observed_ccr, float(p), 1.0 if p == 1 else 0.0, 1.0 if p > 0 else 0.0)
    return {"TRP": trp, "CCR": ccr}


def rank_tie_vectors(res: Resolved, measures: Sequence[Measure] = RANK_MEASURES) -> RankTies:
    """Expected, best and worst hit vectors of SPEC §3.4 over the orderings of SPEC §3.5.

    Works group by group on the raw known ranking (evidence then
    ``cutoff_ties``), as SPEC orders it: shuffle, cut at ``n_ret``, deduplicate,
    then hits. See the module docstring for the formulas.
    """
    tq = res.tq
    rel = res.class_valid
    n_rel = sum(rel)
    known = list(res.items) + list(res.extra)
    n_ret = len(res.items)
    prob = [0.0] * n_ret
    best = [0.0] * n_ret
    worst = [0.0] * n_ret
    cut_min = None
    e_rr = min_rr = 0.0
    first = True
    # it[:4] = (space, srot, t_start, t_end): the whole item, as a cheap C-level slice
    keys = [it[:4] for it in known]
    # triple index of items that are valid copies of a relevant triple, else -1
    vr = [c if c >= 0 and rel[c] and valid_at(ts, te, tq) else -1 for _, _, ts, te, c, _ in known]
    seen: set[tuple[Any, ...]] = set()  # whole items above the current group
    done: set[int] = set()  # triples hit above the current group
    d = 0  # distinct whole items above the current group
    for start, size in _groups([it.score for it in known], n_ret):
        end = start + size
        if max(vr[start:end]) < 0:  # nothing relevant here: only count new whole items
            if size == 1:
                w = keys[start]
                if w not in seen:
                    seen.add(w)
                    d += 1
            else:
                new = set(keys[start:end]) - seen
                seen |= new
                d += len(new)
            continue
        cap = min(size, n_ret - start)
        counts: dict[tuple[Any, ...], int] = {}
        dead = 0
        targets: dict[int, set[tuple[Any, ...]]] = {}
        for i in range(start, end):
            w = keys[i]
            if w in seen:
                dead += 1  # its triple, if relevant, was hit above already
                continue
            counts[w] = counts.get(w, 0) + 1
            c = vr[i]
            if c >= 0 and c not in done:
                targets.setdefault(c, set()).add(w)
        n_new = len(counts)
        r = len(targets)
        if r:
            t_of = [sum(counts[w] for w in ws) for ws in targets.values()]
            a_of = [len(ws) for ws in targets.values()]
            total = sum(t_of)
            b = n_new - sum(a_of)  # distinct new whole items that are not relevant here
            for p in range(d, d + min(r, cap)):
                best[p] = 1.0
            if dead == 0 and total == r and n_new == size:
                # all items distinct, one copy per triple: each position equally likely
                share = r / size
                for p in range(d, d + cap):
                    prob[p] += share
                if first:
                    for j in range(min(size - r + 1, cap)):
                        e_rr += comb(size - j - 1, r - 1) / comb(size, r) / (d + j + 1)
            else:
                for ws, t in zip(targets.values(), t_of, strict=True):
                    mults = [m for w, m in counts.items() if w not in ws]
                    for k, q in enumerate(first_offset_dist(size, t, cap, dead, mults)[:cap]):
                        prob[d + k] += q
                if first:
                    tw = set().union(*targets.values())
                    junk = [m for w, m in counts.items() if w not in tw]
                    for k, q in enumerate(first_offset_dist(size, total, cap, dead, junk)[:cap]):
                        e_rr += q / (d + k + 1)
            slots = cap - (size - total)  # raw places left to relevant items once all others come first
            if first:
                min_rr = 1.0 / (d + b + 1) if slots > 0 else 0.0
            if cap >= size or total == r:
                # one ordering is worst for every metric: others first, then blocks in decreasing a
                pos = d + b
                for a in sorted(a_of, reverse=True)[:max(0, min(r, slots))]:
                    worst[pos] = 1.0
                    pos += a
            elif slots > 0:
                additive = [m for m in measures if m.family in ADDITIVE]
                cut_min = _cut_minimum(list(zip(a_of, t_of, strict=True)), slots, d + b + 1, n_rel, additive)
            first = False
            done.update(targets)
        seen.update(counts)
        d += n_new
    return RankTies(prob, best, worst, cut_min, e_rr, min_rr, n_rel)


def tie_report(resolved: Sequence[Resolved], measures: Sequence[Measure] = RANK_MEASURES) -> dict[str, Any]:
    """Per-question arrays and macro ``{observed, expected, min, max, bias}`` per metric.

    TRP is macro over questions with ``n_ret > 0`` (0.0 when there is none, as
    ``TRP_macro``), CCR over all, rank metrics over questions with a non-empty
    ``rel`` (like the metrics themselves; None when there is none).
    """
    n = len(resolved)
    trp = np.full((n, 4), np.nan)
    ccr = np.zeros((n, 4))
    probs, bests, worsts, obs_lists = [], [], [], []
    err = np.zeros(n)
    min_rr = np.zeros(n)
    n_rel = np.zeros(n, dtype=np.int64)
    cut_min: list[tuple[int, np.ndarray]] = []
    for i, res in enumerate(resolved):
        tc = trp_ccr_ties(res)
        if tc["TRP"] is not None:
            trp[i] = tc["TRP"]
        ccr[i] = tc["CCR"]
        rt = rank_tie_vectors(res, measures)
        probs.append(rt.prob)
        bests.append(rt.best)
        worsts.append(rt.worst)
        err[i] = rt.e_rr
        min_rr[i] = rt.min_rr
        n_rel[i] = rt.n_rel
        if rt.cut_min is not None:
            cut_min.append((i, rt.cut_min))
        obs_lists.append(hit_list(res)[0])
    width = max([m.cutoff or 1 for m in measures] + [len(p) for p in probs])
    vectors = TieVectors(trp, ccr, to_matrix(obs_lists, width), to_matrix(probs, width), to_matrix(bests, width),
                         to_matrix(worsts, width), err, min_rr, n_rel, cut_min)
    return tie_summary(vectors, measures)


# ---------------------------------------------------------------- a whole run
def evaluate_reference(
    run: Mapping[Any, Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    flags: Mapping[Any, Mapping[str, bool]] | None,
    split: str | None = None,
    predictions: Mapping[Any, str] | None = None,
    key: str = "auto",
) -> Evaluation:
    """:func:`eval.scoring.evaluate` question by question: :func:`resolve_question` and the per-question metrics."""
    chosen, records, missing, outside = select(run, questions, split)
    resolved = []
    for q, rec in zip(chosen, records, strict=True):
        evidence = rec.get("evidence", []) if rec is not None else []
        ties = (rec.get("cutoff_ties") or []) if rec is not None else []
        try:
            resolved.append(resolve_question(q, evidence, key, extra=ties))
        except EvidenceError as exc:
            raise EvidenceError(f"{_where(run, q['id'])}{exc}") from None
    rows = [row_from_resolved(r) for r in resolved]
    key_space = key_space_effect(chosen, records, resolved, rows)
    out = Evaluation(
        questions=list(chosen),
        table=None,  # type: ignore[arg-type]
        rows=rows,
        missing=missing,
        outside_split=outside,
        rank=rank_metrics(resolved),
        ties=tie_report(resolved),
        negatives=negatives_report(chosen, resolved, flags),
        flags_found=flags is not None,
        answer_rows=_answer_rows(questions, chosen, predictions),
        extra={"key_space": key_space},
    )
    out.resolved = resolved  # type: ignore[attr-defined]  # the per-question resolutions, for comparisons
    return out


def key_space_effect(
    questions: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any] | None],
    resolved: Sequence[Resolved],
    rows: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Which key space the questions were matched in, and how many would score otherwise in the other one.

    Matching on ids (the default when both sides carry them, with
    ``benchmark.jsonl`` merged into the gold) or on labels (what the published
    scorer does with ``benchmark_labelled.jsonl`` alone) can differ where
    homonyms occur (SPEC §3.1). Returns ``{"used", "other", "questions_differing"}``:
    ``used`` is ``"id"``, ``"label"`` or ``"mixed"``; ``questions_differing`` counts
    the questions whose hits or CCR change when both sides are forced into the
    other space (``None`` when some item or gold triple does not carry it).
    """
    spaces = {r.gold_space for r in resolved if r.items} or {r.gold_space for r in resolved}
    used = spaces.pop() if len(spaces) == 1 else ("mixed" if spaces else "id")
    other = {"id": "label", "label": "id"}.get(used)
    differing = None
    if other is not None:
        try:
            differing = 0
            for q, rec, row in zip(questions, records, rows, strict=True):
                evidence = rec.get("evidence", []) if rec is not None else []
                alt = row_from_resolved(resolve_question(q, evidence, other))
                differing += (alt["hits"], alt["ccr"]) != (row["hits"], row["ccr"])
        except EvidenceError:
            differing = None
    return {"used": used, "other": other, "questions_differing": differing}
