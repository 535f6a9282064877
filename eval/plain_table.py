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

from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import chain, repeat
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

import numpy as np

from eval.evidence import SPACES, Codes, EvidenceTable, ItemColumns, parsed_gold
from eval.keyspace import KEY_CHOICES, gold_classes, gold_spaces, read_scores, read_t_query
from tempbench_core.errors import EvidenceError
from tempbench_core.memo import kept_for
from tempbench_core.runlines import IdItem, LabelItem, RunLine
from tempbench_core.schema import ID_KEYS, LABEL_KEYS

_GETTERS = {"id": itemgetter(*ID_KEYS), "label": itemgetter(*LABEL_KEYS)}
_FIELDS = {"id": attrgetter(*ID_KEYS), "label": attrgetter(*LABEL_KEYS)}
_T_START, _T_END, _SCORE_FIELD = attrgetter("t_start"), attrgetter("t_end"), attrgetter("score")
_TS = itemgetter("t_start")
_TE = itemgetter("t_end")
_NUMBERS = frozenset((int, float))
_STR = frozenset((str,))
_RUN_FILE_SCORES = frozenset((int, float, type(None)))
#: What the fast path of read_items catches before it reads a list item by item.
_NOT_PLAIN = (KeyError, TypeError, IndexError, OverflowError, AttributeError)


#: ``(t_query, space, class_valid, class lookup)`` of a question (:func:`question_classes`).
Classes = tuple[float, str, list[bool], dict[tuple[Any, Any, Any], int]]


def question_classes(question: Mapping[str, Any], key: str, shared: dict[Any, Any] | None) -> Classes:
    """``(t_query, space, class_valid, class lookup)`` of a question whose items are read in the rule's first space.

    ``space`` is where read_items' fast path reads the items, and then the
    primary space too; kept in ``shared`` for that very question.
    """
    def make() -> Classes:
        tq = read_t_query(question)
        gold = parsed_gold(question, key, shared)
        spaces = gold_spaces(question, gold, key)
        space = "id" if key == "id" or (key == "auto" and "id" in spaces) else "label"
        class_valid, _, lookup = gold_classes(gold, space, tq)
        return tq, space, class_valid, lookup[space]

    return kept_for(shared, ("plain classes", question.get("id"), key), question, make)


class PlainItems(NamedTuple):
    """One question's list (evidence or cut-off ties) as read_items' fast path reads it, with the gold classes."""

    srots: list[tuple[Any, Any, Any]]
    ts: list[float]
    te: list[float]
    scores: list[float]  # NaN: no score
    cls: list[int]


NO_ITEMS = PlainItems([], [], [], [], [])
_TIMES_START, _TIMES_END, _SCORE = itemgetter(1), itemgetter(2), itemgetter(3)


def plain_items(items: Any, space: str, lookup: Mapping[tuple[Any, Any, Any], int], run_form: bool = False
                ) -> PlainItems | None:
    """``items`` read in ``space`` and matched against ``lookup``, or ``None`` when read_items must read it.

    ``run_form``: see :func:`plain_table`. That ``s, r, o`` are strings is left
    to :func:`rows_table`, which tests each distinct value once.
    """
    if type(items) is not list:
        return None
    if not items:
        return NO_ITEMS
    try:
        srots = list(map(_GETTERS[space], items))
        ts, te = list(map(_TS, items)), list(map(_TE, items))
        if not (set(map(type, ts)) <= _NUMBERS and set(map(type, te)) <= _NUMBERS):
            return None
        ts, te = list(map(float, ts)), list(map(float, te))
        raw = list(map(dict.get, items, repeat("score")))
    except _NOT_PLAIN:
        return None
    if run_form and not set(map(type, raw)) <= _RUN_FILE_SCORES:
        return None
    try:
        cls = list(map(lookup.get, srots, repeat(-1)))
    except TypeError:  # a list or dict value; that s, r, o are strings is checked once per value (rows_table)
        return None
    return PlainItems(srots, ts, te, read_scores(raw), cls)


class LineItems(NamedTuple):
    """One question's list of a decoded run line: :class:`PlainItems` whose times and scores stay in the items.

    The decoder made the items' checks; their ``t_start``, ``t_end`` and
    ``score`` are read into the table's columns at once (:func:`rows_table`),
    with no list per line and field.
    """

    items: list[IdItem] | list[LabelItem]
    srots: list[tuple[Any, Any, Any]]
    cls: list[int]

    @property
    def ts(self) -> list[float]:
        return list(map(_T_START, self.items))

    @property
    def te(self) -> list[float]:
        return list(map(_T_END, self.items))

    @property
    def scores(self) -> list[float]:  # NaN: no score
        return read_scores(list(map(_SCORE_FIELD, self.items)))


def line_items(items: list[IdItem] | list[LabelItem], space: str, lookup: Mapping[tuple[Any, Any, Any], int]
               ) -> LineItems | PlainItems:
    """:func:`plain_items` of a decoded run line's list (``run_form``), as :class:`LineItems`.

    The decoder made plain_items' checks (every item carries the whole key
    space, numeric times, a numeric or null score).
    """
    if not items:
        return NO_ITEMS
    srots = list(map(_FIELDS[space], items))
    return LineItems(items, srots, list(map(lookup.get, srots, repeat(-1))))


class PlainRow(NamedTuple):
    """One question with its evidence and cut-off ties read (a row of :func:`rows_table`)."""

    question: Mapping[str, Any]
    tq: float
    space: str
    class_valid: list[bool]
    items: PlainItems | LineItems
    extra: PlainItems | LineItems


def plain_row(question: Mapping[str, Any], evidence: Any, ties: Any, key: str = "auto",
              shared: dict[Any, Any] | None = None, run_form: bool = False) -> PlainRow | None:
    """One question's row, as :func:`~eval.evidence.read_question` reads it, or ``None`` (module docstring)."""
    try:
        tq, space, class_valid, lookup = question_classes(question, key, shared)
    except EvidenceError:
        return None
    items = plain_items(evidence, space, lookup, run_form)
    # read_question reads no cut-off ties from a falsy value
    extra = plain_items(ties, space, lookup, run_form) if ties else NO_ITEMS
    if items is None or extra is None:
        return None
    return PlainRow(question, tq, space, class_valid, items, extra)


def line_row(question: Mapping[str, Any], line: RunLine, classes: Classes) -> PlainRow | None:
    """:func:`plain_row` of a decoded run line (``run_form``), or ``None`` when read_question must read it.

    ``classes``: the question's :func:`question_classes`; the line must have
    been decoded in their space (``None`` otherwise).
    """
    tq, space, class_valid, lookup = classes
    if line.space != space:
        return None
    extra = line_items(line.cutoff_ties, space, lookup) if line.cutoff_ties else NO_ITEMS
    return PlainRow(question, tq, space, class_valid, line_items(line.evidence, space, lookup), extra)


_SROTS_OF, _CLS_OF, _ITEMS_OF = attrgetter("srots"), attrgetter("cls"), attrgetter("items")


def _field(lists: Sequence[PlainItems | LineItems], plain: Callable[[PlainItems], list[Any]],
           of_item: Callable[[Any], Any]) -> Iterator[Any]:
    """One field of every item of the lists, in order: from a PlainItems' list, or read from a LineItems' items."""
    if all(type(part) is LineItems for part in lists):
        return map(of_item, chain.from_iterable(map(_ITEMS_OF, lists)))
    return chain.from_iterable(map(of_item, part.items) if type(part) is LineItems else plain(part) for part in lists)


def _columns(lists: Sequence[PlainItems | LineItems], space: np.ndarray, codes: Codes, cls_start: np.ndarray
             ) -> ItemColumns:
    """The :class:`~eval.evidence.ItemColumns` of the rows' lists; ``codes`` numbers the values in order of first use."""
    counts = np.fromiter(map(len, map(_CLS_OF, lists)), dtype=np.int64, count=len(lists))
    total = int(counts.sum())
    # an empty list adds nothing: only the others say which way their fields are read
    lists = [part for part in lists if part.cls]

    def flat(plain: Callable[[PlainItems], list[Any]], of_item: Callable[[Any], Any]) -> np.ndarray:
        return np.fromiter(_field(lists, plain, of_item), dtype=np.float64, count=total)

    # the s, r, o of every item, item after item, interned in that order (as resolve interns them)
    values = chain.from_iterable(chain.from_iterable(map(_SROTS_OF, lists)))
    sro = np.fromiter(map(codes.__getitem__, values), dtype=np.int64, count=3 * total).reshape(total, 3)
    cls = np.fromiter(chain.from_iterable(map(_CLS_OF, lists)), dtype=np.int64, count=total)
    # numpy stores a decoded None (no score) as NaN, as read_scores reads it (the reader's tests hold it to that)
    scores = flat(_SCORE, _SCORE_FIELD)
    return ItemColumns(counts, np.repeat(space, counts), sro[:, 0], sro[:, 1], sro[:, 2], flat(_TIMES_START, _T_START),
                       flat(_TIMES_END, _T_END), cls, scores, cls_start)


def rows_table(rows: Sequence[PlainRow], key: str = "auto", shared: dict[Any, Any] | None = None,
               evidence: Sequence[Any] = ()) -> EvidenceTable | None:
    """The :class:`~eval.evidence.EvidenceTable` of rows (``evidence``: the lists as given, kept as resolve keeps them).

    ``None`` when an ``s``, ``r`` or ``o`` is not a string (read_items reads such a list item by item).
    """
    n_gold = np.fromiter((len(r.class_valid) for r in rows), dtype=np.int64, count=len(rows))
    cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
    space = np.array([SPACES.index(r.space) for r in rows], dtype=np.int8)
    codes = Codes()
    items = _columns([r.items for r in rows], space, codes, cls_start)
    extra = _columns([r.extra for r in rows], space, codes, cls_start)
    if not set(map(type, codes)) <= _STR:
        return None  # read_items reads s, r, o of another type item by item
    return EvidenceTable(
        key=key, questions=[r.question for r in rows],
        tq=np.fromiter((r.tq for r in rows), dtype=np.float64, count=len(rows)), n_gold=n_gold, cls_start=cls_start,
        class_valid=np.fromiter(chain.from_iterable(r.class_valid for r in rows), dtype=bool,
                                count=int(cls_start[-1])),
        gold_space=[r.space for r in rows], items=items, extra=extra, code_of=codes, values=list(codes),
        evidence=list(evidence), shared=shared,
    )


def plain_table(questions: Sequence[Mapping[str, Any]], evidence: Sequence[Any], ties: Sequence[Any],
                key: str = "auto", shared: dict[Any, Any] | None = None, run_form: bool = False) -> EvidenceTable | None:
    """``resolve(questions, evidence, ties, key, shared=shared)`` when every list is plain (module docstring), else ``None``.

    ``run_form``: also ``None`` unless every item's score is absent, null or a
    number, so that every item (a dict with a whole key space and numeric
    times, as read here) is one :func:`tempbench_core.runfile.read_run` keeps
    as it is (SPEC §6.1's form): the records need no other check of read_run's.
    """
    if key not in KEY_CHOICES:
        return None
    rows = []
    for q, ev, ex in zip(questions, evidence, ties, strict=True):
        row = plain_row(q, ev, ex, key, shared, run_form)
        if row is None:
            return None
        rows.append(row)
    return rows_table(rows, key, shared, evidence)
