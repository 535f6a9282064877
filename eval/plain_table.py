"""The evidence table of plain records made column-wise: :func:`eval.evidence.resolve`'s table, faster.

:func:`~eval.evidence.resolve` reads question by question
(:func:`~eval.evidence.read_question`). For the common case it ends in the
fast path of :func:`eval.keyspace.read_items` for every list: a ``list`` of
triple dicts in the space the rule picks (ids when the gold carries them
under ``key='auto'``), numeric times and string ``s, r, o``. There the items
are matched against the gold's classes keyed on that same space (the primary
space of SPEC §3.1), and the table's columns follow from flat lists of all the
items of all the questions. :func:`plain_table` makes those columns with one
C-level pass per field over every item, and reads each question's gold once
per ``shared`` cache (the gold classes do not depend on the evidence here).

Every other record (another form, a missing key, a string time, a problem to
report) makes :func:`plain_table` return ``None``: the caller then calls
resolve, which reads it (and names the problem with file and line).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import numpy as np

from eval.evidence import SPACES, Codes, EvidenceTable, ItemColumns, parsed_gold
from eval.keyspace import KEY_CHOICES, gold_classes, gold_spaces, read_scores, read_t_query
from tempbench_core.errors import EvidenceError
from tempbench_core.memo import kept_for
from tempbench_core.schema import ID_KEYS, LABEL_KEYS

_GETTERS = {"id": itemgetter(*ID_KEYS), "label": itemgetter(*LABEL_KEYS)}
_TS = itemgetter("t_start")
_TE = itemgetter("t_end")
_NUMBERS = frozenset((int, float))
_STR = frozenset((str,))
#: What the fast path of read_items catches before it reads a list item by item.
_NOT_PLAIN = (KeyError, TypeError, IndexError, OverflowError, AttributeError)


def question_classes(question: Mapping[str, Any], key: str, shared: dict[Any, Any] | None
                     ) -> tuple[float, str, list[bool], dict[tuple[Any, Any, Any], int]]:
    """``(t_query, space, class_valid, class lookup)`` of a question whose items are read in the rule's first space.

    ``space`` is where read_items' fast path reads the items, and then the
    primary space too; kept in ``shared`` for that very question.
    """
    def make() -> tuple[float, str, list[bool], dict[tuple[Any, Any, Any], int]]:
        tq = read_t_query(question)
        gold = parsed_gold(question, key, shared)
        spaces = gold_spaces(question, gold, key)
        space = "id" if key == "id" or (key == "auto" and "id" in spaces) else "label"
        class_valid, _, lookup = gold_classes(gold, space, tq)
        return tq, space, class_valid, lookup[space]

    return kept_for(shared, ("plain classes", question.get("id"), key), question, make)


class _Flat:
    """The items of every question's list, flat, as read_items' fast path reads them."""

    def __init__(self, lists: Sequence[list[Any]], spaces: Sequence[str]) -> None:
        self.counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        flat = list(chain.from_iterable(lists))
        if len(set(spaces)) <= 1:
            srots = list(map(_GETTERS[spaces[0] if spaces else "id"], flat))
        else:
            srots = list(chain.from_iterable(map(_GETTERS[sp], x) for sp, x in zip(spaces, lists, strict=True)))
        ts, te = list(map(_TS, flat)), list(map(_TE, flat))
        self.plain = set(map(type, ts)) <= _NUMBERS and set(map(type, te)) <= _NUMBERS
        if self.plain:
            ts, te = list(map(float, ts)), list(map(float, te))
            self.scores = read_scores(list(map(dict.get, flat, repeat("score"))))
            self.plain = set(map(type, chain.from_iterable(srots))) <= _STR
        self.srots, self.ts, self.te = srots, ts, te

    def classes(self, lookups: Sequence[dict[tuple[Any, Any, Any], int]]) -> np.ndarray:
        """Each item's gold class in its question's lookup (``-1``: none)."""
        out: list[int] = []
        at = 0
        for count, lookup in zip(self.counts.tolist(), lookups, strict=True):
            if count:
                out.extend(map(lookup.get, self.srots[at:at + count], repeat(-1)))
                at += count
        return np.array(out, dtype=np.int64)

    def columns(self, codes: Codes, space: np.ndarray, lookups: Sequence[dict[Any, int]],
                cls_start: np.ndarray) -> ItemColumns:
        total = len(self.srots)
        sro = np.fromiter(map(codes.__getitem__, chain.from_iterable(self.srots)), dtype=np.int64,
                          count=3 * total).reshape(total, 3)
        return ItemColumns(self.counts, np.repeat(space, self.counts), sro[:, 0], sro[:, 1], sro[:, 2],
                           np.array(self.ts, dtype=np.float64), np.array(self.te, dtype=np.float64),
                           self.classes(lookups), np.array(self.scores, dtype=np.float64), cls_start)


def plain_table(questions: Sequence[Mapping[str, Any]], evidence: Sequence[Any], ties: Sequence[Any],
                key: str = "auto", shared: dict[Any, Any] | None = None) -> EvidenceTable | None:
    """``resolve(questions, evidence, ties, key, shared=shared)`` when every list is plain (module docstring), else ``None``."""
    if key not in KEY_CHOICES or not all(type(x) is list for x in evidence):
        return None
    extra = [x if x else [] for x in ties]  # read_question reads no cut-off ties from a falsy value
    if not all(type(x) is list for x in extra):
        return None
    try:
        infos = [question_classes(q, key, shared) for q in questions]
    except EvidenceError:
        return None
    spaces = [info[1] for info in infos]
    try:
        items, ex = _Flat(evidence, spaces), _Flat(extra, spaces)
    except _NOT_PLAIN:
        return None
    if not (items.plain and ex.plain):
        return None
    n_gold = np.fromiter((len(info[2]) for info in infos), dtype=np.int64, count=len(infos))
    cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
    space = np.array([SPACES.index(sp) for sp in spaces], dtype=np.int8)
    lookups = [info[3] for info in infos]
    codes = Codes()
    item_columns = items.columns(codes, space, lookups, cls_start)
    extra_columns = ex.columns(codes, space, lookups, cls_start)
    return EvidenceTable(
        key=key, questions=list(questions), tq=np.fromiter((info[0] for info in infos), dtype=np.float64,
                                                           count=len(infos)),
        n_gold=n_gold, cls_start=cls_start,
        class_valid=np.fromiter(chain.from_iterable(info[2] for info in infos), dtype=bool,
                                count=int(cls_start[-1])),
        gold_space=spaces, items=item_columns, extra=extra_columns, code_of=codes, values=list(codes),
        evidence=list(evidence), shared=shared,
    )
