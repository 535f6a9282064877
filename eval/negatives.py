"""Typed-negative hit rates on the functional subsets (SPEC §3.3).

For a question and a negative type (``stale`` uses ``S_stale``, ``dist`` uses
``S_dist``), compare the variant with ``S_star`` as sets of five-field triples
``(s, r, o, t_start, t_end)``. The *replaced hop* is the ``S_star`` triple
missing from the variant, the *replacement* the variant triple missing from
``S_star``; the question is evaluable for that type only when exactly one triple
differs each way. Over evaluable questions flagged functional, each rate is::

    rate = #{questions whose retrieved evidence contains a matching item} / n

with the matching item, for replaced hop ``(s*, r*, o*)`` and replacement
``(s', r', o', ts', te')``:

* ``stale_exact``: the stale replacement itself (all five fields);
* ``stale_same_fact``: ``(s*, r*, o*)`` with a window invalid at ``t_query``;
* ``stale_same_relation``: ``(s*, r*)`` with a window invalid at ``t_query``;
* ``dist_exact``: the distractor replacement itself (all five fields);
* ``dist_same_triple``: ``(s', r', o')`` at any time;
* ``dist_same_relation``: ``(s*, r*)`` with an object other than ``o*``.

``S_star`` and the variant are compared in one space for the whole question
(:func:`comparison_space`: ids when both lists carry them); evidence items are
then matched in their own key space (SPEC §3.1), the benchmark triple taken in
that space. The audit (:mod:`eval.audit`) uses the same pair.

:func:`negatives_report` is the kernel: each question's pair as codes of the
run's :class:`~eval.evidence.EvidenceTable`, every item tested at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import chain, repeat
from operator import is_
from typing import Any, NamedTuple

import numpy as np

from eval.evidence import SPACES, Codes, EvidenceTable
from eval.keyspace import DEFAULT_KEY, GoldTriple, gold_triples
from tempbench_core.memo import kept_for

RATE_NAMES: tuple[str, ...] = (
    "stale_exact",
    "stale_same_fact",
    "stale_same_relation",
    "dist_exact",
    "dist_same_triple",
    "dist_same_relation",
)
TYPES = {"stale": ("S_stale", "stale_functional"), "dist": ("S_dist", "dist_functional")}


def comparison_space(triples: list[GoldTriple], key: str = DEFAULT_KEY) -> str | None:
    """The space ``S_star`` and a variant are compared in (SPEC §3.1, §3.3).

    ``key='auto'``: ids when every triple of both lists carries ids, else labels
    when every one carries labels (so a homonym replacement, same label and
    another id, is one differing triple); ``'label'``/``'id'`` force a space.
    ``None`` when the lists share no space.
    """
    spaces = set.intersection(*(set(t.keys) for t in triples)) if triples else set()
    if key != "auto":
        return key if key in spaces else None
    return "id" if "id" in spaces else ("label" if "label" in spaces else None)


def differing_triples(
    question: Mapping[str, Any], variant: str, key: str = DEFAULT_KEY, star: list[GoldTriple] | None = None
) -> tuple[list[GoldTriple], list[GoldTriple]]:
    """``(S_star triples missing from the variant, variant triples missing from S_star)`` (SPEC §3.3).

    Triples are compared on all five fields ``(s, r, o, t_start, t_end)`` in
    :func:`comparison_space`, as sets (a triple listed twice is one triple),
    each side in its list's order. Both empty when the variant is absent or the
    lists share no space. ``star`` is the already parsed ``S_star`` when the
    caller has it.
    """
    if question.get(variant) is None:
        return [], []
    if star is None:
        star = gold_triples(question, "S_star")
    other = gold_triples(question, variant)
    space = comparison_space(star + other, key)
    if space is None:
        return [], []
    star_five = {t.five(space): t for t in star}
    other_five = {t.five(space): t for t in other}
    gone = [t for k, t in star_five.items() if k not in other_five]
    new = [t for k, t in other_five.items() if k not in star_five]
    return gone, new


def differing_kept(question: Mapping[str, Any], variant: str, shared: dict[Any, Any] | None,
                   star: list[GoldTriple] | Callable[[], list[GoldTriple]] | None = None
                   ) -> tuple[list[GoldTriple], list[GoldTriple]]:
    """:func:`differing_triples` (key ``auto``), kept in ``shared`` when given.

    ``shared``: a cache of what depends on the question alone, kept by a caller
    that asks again (the question browser under every configuration, the
    audit's claims); an entry serves the very question object it was made for.
    ``star``: the parsed ``S_star``, or a function giving it, called only when
    the entry is not kept yet.
    """
    return kept_for(shared, ("differing", question.get("id"), variant), question,
                    lambda: differing_triples(question, variant, star=star() if callable(star) else star))


def replaced_pair(
    question: Mapping[str, Any], variant: str, key: str = DEFAULT_KEY, star: list[GoldTriple] | None = None
) -> tuple[GoldTriple, GoldTriple] | None:
    """``(replaced hop, replacement)`` when exactly one triple differs each way, else ``None`` (SPEC §3.3)."""
    return single_pair(*differing_triples(question, variant, key, star))


def single_pair(gone: list[GoldTriple], new: list[GoldTriple]) -> tuple[GoldTriple, GoldTriple] | None:
    """The replaced pair of :func:`differing_triples`' two lists: exactly one triple each way, else ``None``."""
    if len(gone) != 1 or len(new) != 1:
        return None
    return gone[0], new[0]


def question_pairs(table: EvidenceTable, i: int) -> dict[str, tuple[GoldTriple, GoldTriple] | None]:
    """Per negative type, question ``i``'s ``(replaced hop, replacement)``, or None when it is not evaluable.

    They depend on the question and the key option alone: the table's
    ``shared`` cache keeps them for the next run scored against the same
    question objects.
    """
    question = table.questions[i]

    def make() -> dict[str, tuple[GoldTriple, GoldTriple] | None]:
        if table.key == DEFAULT_KEY:  # the lists the question browser compares, made once for both
            # S_star parsed only if a list is not kept yet (the reproduction keeps them for every question);
            # without a cache it is parsed here, once for both lists
            star = (lambda: table.gold(i)) if table.shared is not None else table.gold(i)
            return {kind: single_pair(*differing_kept(question, variant, table.shared, star))
                    for kind, (variant, _) in TYPES.items()}
        star_now = table.gold(i)
        return {kind: replaced_pair(question, variant, table.key, star_now) for kind, (variant, _) in TYPES.items()}

    return kept_for(table.shared, ("negative pairs", question.get("id"), table.key), question, make)


def negatives_report(table: EvidenceTable, flags: Mapping[Any, Mapping[str, bool]] | None) -> dict[str, Any]:
    """Rates ``name -> {rate, n}`` plus the evaluable and functional counts per type (SPEC §3.3).

    Returns ``{'rates': ..., 'counts': {type: {'evaluable', 'functional'}},
    'indicators': {name: list of 0/1/None per question}}``; ``rates`` is None
    when no flags were found (SPEC §3.2).
    """
    n = table.n
    ev = table.items
    evaluable, hop, rep, rep_t = _pair_codes(table)
    valid = table.valid(ev)
    sp = ev.space.astype(np.int64)
    q = ev.q
    found_q: dict[str, np.ndarray] = {}
    for kind in TYPES:
        on = evaluable[kind][q]
        hs, hr, ho = (hop[kind][q, sp, j] for j in range(3))
        rs, rr, ro = (rep[kind][q, sp, j] for j in range(3))
        same_triple = (rs != -1) & (ev.s == rs) & (ev.r == rr) & (ev.o == ro)
        exact = same_triple & (ev.ts == rep_t[kind][q, 0]) & (ev.te == rep_t[kind][q, 1])
        same_sr = (hs != -1) & (ev.s == hs) & (ev.r == hr)
        if kind == "stale":
            found = (exact, same_sr & (ev.o == ho) & ~valid, same_sr & ~valid)
        else:
            found = (exact, same_triple, same_sr & (ev.o != ho))
        for name, mask in zip(_names(kind), found, strict=True):
            found_q[name] = np.bincount(q[on & mask], minlength=n) > 0
    indicators: dict[str, list[int | None]] = {}
    counts = {}
    flag_of = [(flags or {}).get(question.get("id"), {}) for question in table.questions]
    for kind, (_variant, flag_name) in TYPES.items():
        functional = evaluable[kind] & np.fromiter((bool(flag.get(flag_name, False)) for flag in flag_of),
                                                   dtype=bool, count=n)
        counts[kind] = {"evaluable": int(evaluable[kind].sum()), "functional": int(functional.sum())}
        on = functional.tolist()
        for name in _names(kind):
            indicators[name] = [int(hit) if f else None for hit, f in zip(found_q[name].tolist(), on, strict=True)]
    return negatives_result(indicators, counts, flags is not None)


def _pair_codes(table: EvidenceTable) -> tuple[dict[str, np.ndarray], ...]:
    """Per type: which questions are evaluable, and their replaced pair as codes of the table.

    ``(evaluable[n], hop[n, 2, 3], rep[n, 2, 3], rep_t[n, 2])`` per type: the
    hop's and the replacement's ``(s, r, o)`` codes in each space of
    :data:`~eval.evidence.SPACES` (-1: the triple lacks that space, -2: a value
    no item carries) and the replacement's window. The values to code are laid
    out once for the questions (:func:`_pair_layout`, kept across the runs
    scored against them): a run codes each distinct value once.
    """
    n = table.n
    layout = _pair_layout(table)
    coded = np.fromiter(map(table.code_of.get, layout.distinct, repeat(-2)), dtype=np.int64, count=len(layout.distinct))
    if layout.absent >= 0:
        coded[layout.absent] = -1  # a space the triple lacks, or a type that is not evaluable
    codes = coded[layout.slot].reshape(n, len(TYPES), 2, len(SPACES), 3)
    kinds = list(TYPES)
    return ({kind: layout.on[:, k].copy() for k, kind in enumerate(kinds)},
            {kind: codes[:, k, 0].copy() for k, kind in enumerate(kinds)},
            {kind: codes[:, k, 1].copy() for k, kind in enumerate(kinds)},
            {kind: layout.windows[:, k].copy() for k, kind in enumerate(kinds)})


class _PairLayout(NamedTuple):
    """The replaced pairs of a table's questions laid out for :func:`_pair_codes`: what does not depend on the run.

    ``questions``: the question objects it was made for, in order; ``on``:
    evaluable per question and type; ``distinct``: the distinct values to code
    (:func:`_pair_values`' values, :data:`_ABSENT` included); ``slot``: each
    laid-out value's index in ``distinct``; ``absent``: the slot of
    :data:`_ABSENT` (-1 when none); ``windows``: the replacements' windows.
    """

    questions: list[Mapping[str, Any]]
    on: np.ndarray
    distinct: list[Any]
    slot: np.ndarray
    absent: int
    windows: np.ndarray


def _pair_layout(table: EvidenceTable) -> _PairLayout:
    """:class:`_PairLayout` of the table's questions, kept in its ``shared`` cache for the next run scored
    against the very same question objects in the same order (the job scores every run of a split so)."""
    key = ("negative pair layout", table.key)
    known = None if table.shared is None else table.shared.get(key)
    if known is not None and len(known.questions) == table.n and all(map(is_, known.questions, table.questions)):
        return known
    laid = [_pair_values(table, i) for i in range(table.n)]
    slots = Codes()
    slot = np.fromiter(slots.each(chain.from_iterable(v for _, v, _ in laid)), dtype=np.int64)
    layout = _PairLayout(
        questions=list(table.questions),
        on=np.array([e for e, _, _ in laid], dtype=bool).reshape(table.n, len(TYPES)),
        distinct=list(slots), slot=slot, absent=slots.get(_ABSENT, -1),
        windows=np.array([w for _, _, w in laid], dtype=np.float64).reshape(table.n, len(TYPES), 2))
    if table.shared is not None:
        table.shared[key] = layout
    return layout


#: Stands for a value to code as -1 in :func:`_pair_codes` (no run's value is this object).
_ABSENT = object()


def _pair_values(table: EvidenceTable, i: int) -> tuple[tuple[bool, ...], list[Any], list[float]]:
    """Question ``i``'s replaced pairs laid out for :func:`_pair_codes`: what does not depend on the run.

    ``(evaluable per type, values, windows)``: per type in :data:`TYPES`
    order, the hop's then the replacement's ``(s, r, o)`` in each space of
    :data:`~eval.evidence.SPACES` (:data:`_ABSENT` where the triple lacks the
    space or the type is not evaluable), and the replacement's ``(t_start,
    t_end)`` (0.0 when not evaluable).
    """
    question = table.questions[i]

    def make() -> tuple[tuple[bool, ...], list[Any], list[float]]:
        evaluable: list[bool] = []
        values: list[Any] = []
        windows: list[float] = []
        for pair in question_pairs(table, i).values():
            evaluable.append(pair is not None)
            if pair is None:
                values += [_ABSENT] * (6 * len(SPACES))
                windows += [0.0, 0.0]
                continue
            for triple in pair:
                for space in SPACES:
                    srot = triple.keys.get(space)
                    values += [_ABSENT] * 3 if srot is None else srot
            windows += [pair[1].t_start, pair[1].t_end]
        return tuple(evaluable), values, windows

    return kept_for(table.shared, ("negative pair values", question.get("id"), table.key), question, make)


def _names(kind: str) -> tuple[str, ...]:
    """The rate names of a negative type."""
    return RATE_NAMES[:3] if kind == "stale" else RATE_NAMES[3:]


def negatives_result(indicators: dict[str, list[int | None]], counts: dict[str, dict[str, int]],
                     flags_found: bool) -> dict[str, Any]:
    """The rates ``name -> {rate, n}`` over the questions with a defined indicator (``rates`` is None without flags)."""
    if not flags_found:
        return {"rates": None, "counts": counts, "indicators": indicators}
    rates = {}
    for name, vals in indicators.items():
        kept = [v for v in vals if v is not None]
        rates[name] = {"rate": (sum(kept) / len(kept)) if kept else None, "n": len(kept)}
    return {"rates": rates, "counts": counts, "indicators": indicators}
