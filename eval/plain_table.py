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
from itertools import chain, count, repeat
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
_RUN_FILE_SCORES = frozenset((int, float, type(None)))
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
            raw = list(map(dict.get, flat, repeat("score")))
            self.score_types = set(map(type, raw))
            self.scores = read_scores(raw)
        self.srots, self.ts, self.te = srots, ts, te
        # each distinct (s, r, o) once: the index of its first item (a list value makes this a TypeError)
        self.first: dict[tuple[Any, Any, Any], int] = {}
        self.triple = np.fromiter(map(self.first.setdefault, srots, count()), dtype=np.int64, count=len(srots))
        self.plain = self.plain and set(map(type, chain.from_iterable(self.first))) <= _STR

    def classes(self, lookups: Sequence[dict[tuple[Any, Any, Any], int]]) -> np.ndarray:
        """Each item's gold class in its question's lookup (``-1``: none)."""
        out: list[int] = []
        at = 0
        for count_, lookup in zip(self.counts.tolist(), lookups, strict=True):
            if count_:
                out.extend(map(lookup.get, self.srots[at:at + count_], repeat(-1)))
                at += count_
        return np.array(out, dtype=np.int64)

    def columns(self, codes: Codes, space: np.ndarray, lookups: Sequence[dict[Any, int]],
                cls_start: np.ndarray) -> ItemColumns:
        """The :class:`~eval.evidence.ItemColumns`; ``codes`` numbers the values in order of first use, as resolve."""
        # a value's first use is in the first item of its triple: interning the distinct triples in
        # order of first item gives the codes of interning every item
        sro = np.fromiter(map(codes.__getitem__, chain.from_iterable(self.first)), dtype=np.int64,
                          count=3 * len(self.first)).reshape(-1, 3)
        dense = np.zeros(len(self.triple), dtype=np.int64)
        dense[np.fromiter(self.first.values(), dtype=np.int64, count=len(self.first))] = np.arange(len(self.first))
        sro = sro[dense[self.triple]]
        return ItemColumns(self.counts, np.repeat(space, self.counts), sro[:, 0], sro[:, 1], sro[:, 2],
                           np.array(self.ts, dtype=np.float64), np.array(self.te, dtype=np.float64),
                           self.classes(lookups), np.array(self.scores, dtype=np.float64), cls_start)


def plain_table(questions: Sequence[Mapping[str, Any]], evidence: Sequence[Any], ties: Sequence[Any],
                key: str = "auto", shared: dict[Any, Any] | None = None, run_form: bool = False) -> EvidenceTable | None:
    """``resolve(questions, evidence, ties, key, shared=shared)`` when every list is plain (module docstring), else ``None``.

    ``run_form``: also ``None`` unless every item's score is absent, null or a
    number, so that every item (a dict with a whole key space and numeric
    times, as read here) is one :func:`tempbench_core.runfile.read_run` keeps
    as it is (SPEC §6.1's form): the records need no other check of read_run's.
    """
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
    if run_form and not (items.score_types <= _RUN_FILE_SCORES and ex.score_types <= _RUN_FILE_SCORES):
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
