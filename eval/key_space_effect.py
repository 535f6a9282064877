"""The key-space effect (SPEC §3.1): would the scores change if ids and labels swapped roles?

Matching on ids (the default when both sides carry them, with
``benchmark.jsonl`` merged into the gold) or on labels (what the published
scorer does with ``benchmark_labelled.jsonl`` alone) can differ where homonyms
occur. :func:`key_space_effect` names the space the questions were matched in
and counts the questions whose hits or CCR change when both sides are forced
into the other space.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import numpy as np

from eval.evidence import SPACES, EvidenceTable, ItemColumns, TablePart, forced_classes, resolve
from eval.trp_ccr import trp_ccr_arrays
from tempbench_core.errors import EvidenceError
from tempbench_core.schema import ID_KEYS, LABEL_KEYS

#: What a part keeps of its reading in the other space: ``(space, hits, ccr)``,
#: ``(space, None, None)`` when the evidence does not carry that space.
OtherSpace = tuple[str, list[int] | None, list[int] | None]


def used_space(gold_space: Sequence[str], n_items: np.ndarray) -> str:
    """The space the questions were matched in: that of those with items (else of all), ``mixed``, or ``id`` for none."""
    spaces = {sp for sp, nr in zip(gold_space, n_items.tolist(), strict=True) if nr} or set(gold_space)
    return _named(spaces)


def _named(spaces: set[str] | frozenset[str]) -> str:
    """The one space of ``spaces``, ``mixed`` for several, ``id`` for none."""
    return next(iter(spaces)) if len(spaces) == 1 else ("mixed" if spaces else "id")


def other_space(used: str) -> str | None:
    """The space to compare with (``None`` for ``mixed``)."""
    return {"id": "label", "label": "id"}.get(used)


def _other_reading(table: EvidenceTable, space: str) -> tuple[list[int], list[int]]:
    """Per question, hits and CCR with both sides forced into ``space`` (evidence only, no cut-off ties)."""
    forced = _plain_forced_table(table, space)
    if forced is None:
        forced = resolve(table.questions, table.evidence, None, space, shared=table.shared, light=True)
    _, hits, ccr = trp_ccr_arrays(forced)
    return hits.tolist(), ccr.tolist()


_GETTERS = {"id": itemgetter(*ID_KEYS), "label": itemgetter(*LABEL_KEYS)}
_LIST_ONLY = frozenset((list,))
_DICT_ONLY = frozenset((dict,))


def _plain_forced_table(table: EvidenceTable, space: str) -> EvidenceTable | None:
    """What TRP/CCR read of ``resolve(table.questions, table.evidence, None, space, light=True)``, or ``None``.

    For the common case, where that resolve would read every list by
    :func:`eval.keyspace.read_items`' fast path: lists of dicts carrying
    ``space`` (their ``s, r, o`` kept as they are, as read_items keeps them;
    an unhashable one is left to resolve, which names it). An item's times
    do not depend on the space it is read in, and the table's items are its
    evidence read (in order), so the times are the table's own; only the items' ``(s, r, o)``
    in ``space`` and the gold classes keyed there are read again (the classes
    once per question, :func:`~eval.evidence.forced_classes`). Anything else
    (and the errors to raise) is left to resolve.
    """
    evidence = table.evidence
    counts = table.items.counts
    if len(evidence) != table.n or not set(map(type, evidence)) <= _LIST_ONLY:
        return None
    if not np.array_equal(np.fromiter(map(len, evidence), dtype=np.int64, count=table.n), counts):
        return None
    flat = list(chain.from_iterable(evidence))
    if not set(map(type, flat)) <= _DICT_ONLY:
        return None
    try:
        srots = list(map(_GETTERS[space], flat))
    except KeyError:
        return None
    cls: list[int] = []
    class_valid: list[bool] = []
    n_gold = np.zeros(table.n, dtype=np.int64)
    start = table.items.start.tolist()
    for i, q in enumerate(table.questions):
        valid, lookup = forced_classes(q, space, table.shared)  # raises where read_question would
        try:
            cls += map(lookup.get, srots[start[i]:start[i + 1]], repeat(-1))
        except TypeError:  # an unhashable s, r or o: resolve names it
            return None
        class_valid += valid
        n_gold[i] = len(valid)
    cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
    items = table.items
    codes = np.zeros(len(items), dtype=np.int64)  # light: TRP/CCR read no s, r, o codes
    forced = ItemColumns(counts, np.full(len(items), SPACES.index(space), dtype=np.int8), codes, codes, codes,
                         items.ts, items.te, np.array(cls, dtype=np.int64), items.score, cls_start)
    none = np.zeros(0, dtype=np.float64)
    no_ties = ItemColumns(np.zeros(table.n, dtype=np.int64), np.zeros(0, dtype=np.int8), *[np.zeros(0, dtype=np.int64)] * 3,
                          none, none, np.zeros(0, dtype=np.int64), none, cls_start)
    return EvidenceTable(key=space, questions=table.questions, tq=table.tq, n_gold=n_gold, cls_start=cls_start,
                         class_valid=np.array(class_valid, dtype=bool), gold_space=[space] * table.n, items=forced,
                         extra=no_ties, code_of={}, values=[], shared=table.shared)


def part_other_space(table: EvidenceTable) -> OtherSpace | None:
    """The reading in the other space of a table part (key ``auto``), ``None`` when its questions need none."""
    space = other_space(used_space(table.gold_space, table.items.counts))
    if space is None:
        return None
    try:
        return (space, *_other_reading(table, space))
    except EvidenceError:
        return (space, None, None)


@dataclass(frozen=True)
class PartSpaces:
    """What :func:`parts_suffice` reads of a table part, small enough to send without the part.

    ``with_items``: the gold spaces of its questions that have items;
    ``every``: those of all its questions; ``other``: the space of its own
    other-space reading (``None`` when it has none).
    """

    with_items: frozenset[str]
    every: frozenset[str]
    other: str | None

    @classmethod
    def of(cls, part: TablePart) -> PartSpaces:
        counts = part.items["counts"].tolist()
        return cls(frozenset(sp for sp, n in zip(part.gold_space, counts, strict=True) if n),
                   frozenset(part.gold_space), None if part.other_space is None else part.other_space[0])


def parts_suffice(parts: Sequence[TablePart | PartSpaces]) -> bool:
    """Whether the parts' own other-space readings give the key-space effect of their joined table.

    The joined table's space is :func:`used_space` of all the parts' questions:
    the one space of those with items (else of all), ``mixed`` for several.
    """
    spaces = [p if isinstance(p, PartSpaces) else PartSpaces.of(p) for p in parts]
    found = frozenset().union(*(p.with_items for p in spaces)) or frozenset().union(*(p.every for p in spaces))
    space = other_space(_named(found))
    return space is None or all(p.other == space for p in spaces)


def key_space_effect(table: EvidenceTable, rows: Sequence[Mapping[str, Any]],
                     parts: Sequence[TablePart] | None = None) -> dict[str, Any]:
    """``{"used", "other", "questions_differing"}`` of a run's table and its TRP/CCR rows.

    ``used`` is ``"id"``, ``"label"`` or ``"mixed"``; ``questions_differing``
    is ``None`` when some item or gold triple does not carry the other space.
    ``parts``: the table was joined from these (:func:`parts_suffice` holds):
    their own other-space readings are used.
    """
    used = used_space(table.gold_space, table.items.counts)
    space = other_space(used)
    differing = None
    if space is not None:
        alt: tuple[list[int], list[int]] | None
        if parts is not None:
            readings = [part.other_space for part in parts]
            alt = None if any(r[1] is None for r in readings) else (
                [h for r in readings for h in r[1]], [c for r in readings for c in r[2]])
        else:
            try:
                alt = _other_reading(table, space)
            except EvidenceError:
                alt = None
        if alt is not None:
            differing = sum((h, c) != (r["hits"], r["ccr"]) for h, c, r in zip(*alt, rows, strict=True))
    return {"used": used, "other": space, "questions_differing": differing}
