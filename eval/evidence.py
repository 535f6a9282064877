"""A run's evidence resolved against its questions, once, as one table of arrays (SPEC §3.1).

Every metric of :mod:`eval` reads this table; none reads a record again. Each
question's gold and evidence are matched by the rules of :mod:`eval.keyspace`
and stored as integer and float columns over all items of all questions:

* per question: ``tq`` (``t_query``), ``n_gold`` (its number of gold
  classes), ``gold_space`` (the space the classes are keyed on), and, per
  gold class, ``class_valid`` (a member is valid at ``t_query``: SPEC §3.4's
  ``rel``);
* per evidence item and per cut-off tie (SPEC §6.1), in :class:`ItemColumns`:
  question, position, key space, interned codes of ``s``, ``r``, ``o``,
  ``t_start``, ``t_end``, gold class (``-1`` for none) and score (NaN: none).

Scoring one question is the same table with one row (:func:`resolve_question`
gives its :class:`Resolved` view, as ``tempbench show`` and the TREC export
read it). A table made where a run's records are (in the run's worker
process) travels as a :class:`TablePart` and is joined with the others
(:func:`join_parts`) where the run is scored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import Any

import numpy as np

from eval.keyspace import (
    DEFAULT_KEY,
    EMPTY_ITEMS,
    KEY_CHOICES,
    ClassLookup,
    GoldTriple,
    Item,
    RawItems,
    gold_classes,
    gold_spaces,
    gold_triples,
    match_classes,
    primary_space,
    question_name,
    read_items,
    read_t_query,
)
from tempbench_core.arrays import gather_slices
from tempbench_core.errors import EvidenceError
from tempbench_core.memo import kept_for
from tempbench_core.schema import valid_at

#: Key spaces by their code in the columns.
SPACES = ("id", "label")
_SPACE_CODE = {"id": 0, "label": 1}


class Codes(dict):
    """Interned values: ``codes[value]`` is a small integer, the same for equal values (as dict keys)."""

    def __missing__(self, key: Any) -> int:
        value = self[key] = len(self)
        return value

    def each(self, values: Iterable[Any]) -> Iterator[int]:
        """``map(self.__getitem__, values)`` without a Python call per new value.

        ``map`` takes the length just before ``setdefault`` stores a new
        value, so it gets the code :meth:`__missing__` would give it.
        """
        return map(self.setdefault, values, map(len, repeat(self)))


@dataclass
class QuestionRead:
    """One question as :func:`read_question` read it: its gold classes and items as lists."""

    tq: float
    gold_space: str
    class_valid: list[bool]
    class_keys: list[dict[str, tuple[Any, Any, Any]]]
    gold: list[GoldTriple]
    items: RawItems
    items_cls: list[int]
    extra: RawItems
    extra_cls: list[int]


def parsed_gold(question: Mapping[str, Any], key: str, shared: dict[Any, Any] | None = None) -> list[GoldTriple]:
    """The question's ``S_star`` (:func:`~eval.keyspace.gold_triples`), kept in ``shared`` for that very question."""
    return kept_for(shared, ("S_star", question.get("id"), key), question, lambda: gold_triples(question, "S_star", key))


def forced_classes(question: Mapping[str, Any], key: str, shared: dict[Any, Any] | None = None
                   ) -> tuple[list[bool], dict[tuple[Any, Any, Any], int]]:
    """``(class_valid, class lookup)`` of the question read with both sides forced into ``key`` (``'id'``/``'label'``).

    What :func:`read_question` finds of the gold under that key (its items are
    all read in ``key``, the primary space then), raising as it does; kept in
    ``shared`` for that very question.
    """
    def make() -> tuple[list[bool], dict[tuple[Any, Any, Any], int]]:
        tq = read_t_query(question)
        gold = parsed_gold(question, key, shared)
        gold_spaces(question, gold, key)  # only for its error
        class_valid, _, lookup = gold_classes(gold, key, tq)
        return class_valid, lookup[key]

    return kept_for(shared, ("forced classes", question.get("id"), key), question, make)


def read_question(question: Any, evidence: Any, extra: Any = (), key: str = DEFAULT_KEY,
                  shared: dict[Any, Any] | None = None) -> QuestionRead:
    """Match the evidence (and cut-off ties) of one question against its gold chain (SPEC §3.1).

    ``shared``: a cache of the parsed gold (its spaces and classes too), for
    a caller reading the same question objects for several runs.
    """
    tq = read_t_query(question)
    where = question_name(question)
    gold = parsed_gold(question, key, shared)
    qid = question.get("id")
    # the gold's spaces and classes depend on the question alone (and the primary space): made once per question
    # for every run read with this ``shared`` (read only, never changed, by every reader of a QuestionRead)
    spaces = kept_for(shared, ("gold spaces", qid, key), question, lambda: gold_spaces(question, gold, key))
    items = read_items(evidence, "evidence", where, spaces, key)
    primary = primary_space(set(items.spaces), key, spaces)
    class_valid, class_keys, lookup = kept_for(shared, ("gold classes", qid, key, primary), question,
                                               lambda: gold_classes(gold, primary, tq))
    # the evidence is matched before the ties are read: a problem of the evidence is named first
    items, items_cls = _matched(items, evidence, "evidence", where, spaces, key, lookup)
    ties, extra_cls = (_matched(read_items(extra, "cutoff_ties", where, spaces, key), extra, "cutoff_ties", where,
                                spaces, key, lookup) if extra else (EMPTY_ITEMS, []))
    return QuestionRead(tq, primary, class_valid, class_keys, gold, items, items_cls, ties, extra_cls)


def _matched(raw: RawItems, given: Any, kind: str, where: str, spaces: set[str], key: str,
             lookup: ClassLookup) -> tuple[RawItems, list[int]]:
    """``(raw, its gold classes)``; an unhashable s/r/o (read as it is by read_items' fast path) makes the
    items be read again item by item, which names it."""
    try:
        return raw, match_classes(raw, lookup)
    except TypeError:
        raw = read_items(tuple(given), kind, where, spaces, key)
        return raw, match_classes(raw, lookup)


#: The arrays an :class:`ItemColumns` is made of (the others derive from them).
BASE_ARRAYS = ("counts", "space", "s", "r", "o", "ts", "te", "cls", "score")


class ItemColumns:
    """Items of every question in question order: flat arrays plus ``start`` offsets (``n + 1``).

    ``q``/``pos``: question and position of each item; ``gid``: the global
    index of its gold class (the classes of all questions side by side), -1
    for none; ``has_score``: it carries a score.
    """

    def __init__(self, counts: np.ndarray, space: np.ndarray, s: np.ndarray, r: np.ndarray, o: np.ndarray,
                 ts: np.ndarray, te: np.ndarray, cls: np.ndarray, score: np.ndarray, cls_start: np.ndarray) -> None:
        self.counts, self.space, self.s, self.r, self.o = counts, space, s, r, o
        self.ts, self.te, self.cls, self.score = ts, te, cls, score
        self.start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        total = int(self.start[-1])
        self.q = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        self.pos = np.arange(total, dtype=np.int64) - self.start[:-1][self.q]
        self.has_score = ~np.isnan(self.score)
        self.gid = np.where(self.cls >= 0, cls_start[:-1][self.q] + self.cls, -1)

    @classmethod
    def of(cls, reads: Sequence[tuple[RawItems, list[int]]], codes: Codes | None, cls_start: np.ndarray) -> ItemColumns:
        """The columns of each question's ``(items, classes)`` (``codes`` None: ``s, r, o`` left at 0)."""
        counts = np.fromiter((len(x[1]) for x in reads), dtype=np.int64, count=len(reads))
        total = int(counts.sum())

        def flat(j: int) -> Any:
            return chain.from_iterable(x[0][j] for x in reads)

        if codes is None:
            sro = np.zeros((total, 3), dtype=np.int64)
        else:
            sro = np.fromiter(codes.each(chain.from_iterable(flat(1))), dtype=np.int64,
                              count=3 * total).reshape(total, 3)
        return cls(counts, np.fromiter(map(_SPACE_CODE.__getitem__, flat(0)), dtype=np.int8, count=total),
                   sro[:, 0], sro[:, 1], sro[:, 2],
                   np.fromiter(flat(2), dtype=np.float64, count=total), np.fromiter(flat(3), dtype=np.float64, count=total),
                   np.fromiter(chain.from_iterable(x[1] for x in reads), dtype=np.int64, count=total),
                   np.fromiter(flat(4), dtype=np.float64, count=total), cls_start)

    def base(self) -> dict[str, np.ndarray]:
        """The arrays the others derive from (:data:`BASE_ARRAYS`)."""
        return {name: getattr(self, name) for name in BASE_ARRAYS}

    @classmethod
    def joined(cls, parts: Sequence[tuple[Mapping[str, np.ndarray], np.ndarray]], cls_start: np.ndarray) -> ItemColumns:
        """The columns of consecutive parts (:meth:`base` arrays, each with its local-to-joined code map)."""
        def cat(name: str, dtype: Any) -> np.ndarray:
            return np.concatenate([p[name] for p, _ in parts]).astype(dtype) if parts else np.zeros(0, dtype=dtype)

        sro = [np.concatenate([remap[p[name]] for p, remap in parts]) if parts else np.zeros(0, dtype=np.int64)
               for name in ("s", "r", "o")]
        return cls(cat("counts", np.int64), cat("space", np.int8), *sro, cat("ts", np.float64), cat("te", np.float64),
                   cat("cls", np.int64), cat("score", np.float64), cls_start)

    def take(self, rows: np.ndarray, cls_start: np.ndarray) -> ItemColumns:
        """The items of the questions ``rows`` (in that order), their classes' global index from ``cls_start``."""
        at = gather_slices(np.arange(len(self.q), dtype=np.int64), self.start[rows], self.start[rows + 1])
        return ItemColumns(self.counts[rows], self.space[at], self.s[at], self.r[at], self.o[at], self.ts[at],
                           self.te[at], self.cls[at], self.score[at], cls_start)

    def question_items(self, i: int, values: Sequence[Any]) -> list[Item]:
        """Question ``i``'s items (codes read back through ``values``)."""
        lo, hi = int(self.start[i]), int(self.start[i + 1])
        s, r, o = self.s[lo:hi].tolist(), self.r[lo:hi].tolist(), self.o[lo:hi].tolist()
        scores = [None if sc != sc else sc for sc in self.score[lo:hi].tolist()]
        return list(map(Item, [SPACES[c] for c in self.space[lo:hi].tolist()],
                        [(values[a], values[b], values[c]) for a, b, c in zip(s, r, o, strict=True)],
                        self.ts[lo:hi].tolist(), self.te[lo:hi].tolist(), self.cls[lo:hi].tolist(), scores))

    def __len__(self) -> int:
        return len(self.q)


@dataclass
class Resolved:
    """One question's gold and evidence after key-space resolution: a row of the table, for people and exports."""

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
    key: str = DEFAULT_KEY  # the key-space option the question was resolved under

    @property
    def n_ret(self) -> int:
        return len(self.items)


@dataclass
class EvidenceTable:
    """A run resolved against its questions (SPEC §3.1), as arrays; see the module docstring.

    ``values``: the value of each ``s, r, o`` code; ``code_of``: the code of
    a value. ``evidence``: each question's evidence as given (kept for the
    key-space effect's reading in the other space; empty for joined parts).
    """

    key: str
    questions: list[Mapping[str, Any]]
    tq: np.ndarray
    n_gold: np.ndarray
    cls_start: np.ndarray
    class_valid: np.ndarray
    gold_space: list[str]
    items: ItemColumns
    extra: ItemColumns
    code_of: dict[Any, int]
    values: list[Any]
    evidence: list[Any] = field(default_factory=list)
    shared: dict[Any, Any] | None = None
    #: what the metrics derive from the table alone, made once (:func:`eval.relevance.hit_matrix`'s hits)
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def n(self) -> int:
        return len(self.questions)

    def take(self, rows: np.ndarray) -> EvidenceTable:
        """The table of the questions ``rows`` (indices, in that order), as if resolved alone; codes shared."""
        rows = np.asarray(rows, dtype=np.int64)
        n_gold = self.n_gold[rows]
        cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
        return EvidenceTable(
            key=self.key, questions=[self.questions[i] for i in rows.tolist()], tq=self.tq[rows], n_gold=n_gold,
            cls_start=cls_start,
            class_valid=gather_slices(self.class_valid, self.cls_start[rows], self.cls_start[rows + 1]).copy(),
            gold_space=[self.gold_space[i] for i in rows.tolist()], items=self.items.take(rows, cls_start),
            extra=self.extra.take(rows, cls_start), code_of=self.code_of, values=self.values,
            evidence=[self.evidence[i] for i in rows.tolist()] if self.evidence else [], shared=self.shared,
        )

    def valid(self, items: ItemColumns) -> np.ndarray:
        """Per item: its own window is valid at its question's ``t_query``."""
        return valid_at(items.ts, items.te, self.tq[items.q])

    def hits(self, items: ItemColumns) -> np.ndarray:
        """Per item: a TRP hit (SPEC §3.1), a gold triple whose own window is valid at ``t_query``."""
        return (items.cls >= 0) & self.valid(items)

    def gold(self, i: int) -> list[GoldTriple]:
        """Question ``i``'s parsed ``S_star``."""
        return parsed_gold(self.questions[i], self.key, self.shared)

    def question(self, i: int) -> Resolved:
        """Question ``i`` as a :class:`Resolved` view."""
        q = self.questions[i]
        gold = self.gold(i)
        lo, hi = int(self.cls_start[i]), int(self.cls_start[i + 1])
        _, class_keys, _ = gold_classes(gold, self.gold_space[i], float(self.tq[i]))
        return Resolved(
            qid=q.get("id"), complexity=q.get("complexity"), operator=q.get("operator_type"), tq=float(self.tq[i]),
            items=self.items.question_items(i, self.values), n_gold=int(self.n_gold[i]), gold_space=self.gold_space[i],
            class_valid=self.class_valid[lo:hi].tolist(), class_keys=class_keys,
            extra=self.extra.question_items(i, self.values), gold=gold, key=self.key,
        )


def table_of(questions: Sequence[Mapping[str, Any]], reads: Sequence[QuestionRead], key: str = DEFAULT_KEY,
             evidence: Sequence[Any] = (), shared: dict[Any, Any] | None = None, light: bool = False) -> EvidenceTable:
    """The table of questions already read (:func:`read_question`, e.g. by the loss attribution).

    ``evidence``: each question's evidence as given, for the key-space
    effect's reading in the other space.
    """
    n = len(reads)
    n_gold = np.fromiter((len(r.class_valid) for r in reads), dtype=np.int64, count=n)
    cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
    codes = None if light else Codes()
    items = ItemColumns.of([(r.items, r.items_cls) for r in reads], codes, cls_start)
    extra = ItemColumns.of([(r.extra, r.extra_cls) for r in reads], codes, cls_start)
    return EvidenceTable(
        key=key, questions=list(questions), tq=np.fromiter((r.tq for r in reads), dtype=np.float64, count=n),
        n_gold=n_gold, cls_start=cls_start,
        class_valid=np.fromiter((v for r in reads for v in r.class_valid), dtype=bool, count=int(cls_start[-1])),
        gold_space=[r.gold_space for r in reads], items=items, extra=extra, code_of=codes or {},
        values=list(codes or ()),
        evidence=list(evidence), shared=shared,
    )


def resolve(
    questions: Sequence[Mapping[str, Any]],
    evidence: Sequence[Any],
    ties: Sequence[Any] | None = None,
    key: str = DEFAULT_KEY,
    where: Callable[[int], str] | None = None,
    shared: dict[Any, Any] | None = None,
    light: bool = False,
) -> EvidenceTable:
    """Resolve every question's evidence (and cut-off ties) against its gold, once (SPEC §3.1).

    Parameters
    ----------
    questions:
        Benchmark records, one per scored question.
    evidence, ties:
        Per question, the evidence list and the ``cutoff_ties`` list (``()`` for none).
    key:
        ``'auto'``, ``'label'`` or ``'id'`` (:mod:`eval.keyspace`).
    where:
        ``where(i)`` prefixes the message of an :class:`EvidenceError` raised
        for question ``i`` (file and line of its record).
    shared:
        A cache of what depends on the question alone (its parsed gold, its
        negative pairs), kept by a caller scoring several runs of the same
        question objects.
    light:
        Leave the ``s, r, o`` codes out (enough for TRP/CCR, not for the
        rank, tie and negative metrics).

    Raises
    ------
    EvidenceError
        For the first question whose record cannot be read, naming what is wrong.
    """
    if key not in KEY_CHOICES:
        raise EvidenceError(f"unknown key space {key!r}; expected one of {', '.join(KEY_CHOICES)}")
    ties = ties if ties is not None else [()] * len(questions)
    reads = []
    for i, (q, ev, ex) in enumerate(zip(questions, evidence, ties, strict=True)):
        try:
            reads.append(read_question(q, ev, ex, key, shared))
        except EvidenceError as exc:
            raise EvidenceError(f"{where(i) if where is not None else ''}{exc}") from None
    return table_of(questions, reads, key, evidence, shared, light)


def resolve_question(question: Mapping[str, Any], evidence: Any, key: str = DEFAULT_KEY, extra: Any = ()) -> Resolved:
    """One question resolved (SPEC §3.1): the one-row table's :class:`Resolved` view."""
    return resolve([question], [evidence], [extra], key).question(0)


# -- tables made in parts, where the run's records are (``tempbench reproduce``) -------------------

@dataclass
class TablePart:
    """Consecutive questions of a run resolved with key ``auto``: the table's arrays, small to send.

    ``values``: the values of the part's local ``s, r, o`` codes;
    ``other_space``: the key-space effect's reading of the part in the other
    space (:func:`eval.key_space_effect.part_other_space`), when made.
    """

    ids: list[Any]
    tq: np.ndarray
    gold_space: list[str]
    n_gold: np.ndarray
    class_valid: np.ndarray
    items: dict[str, np.ndarray]
    extra: dict[str, np.ndarray]
    values: list[Any]
    other_space: Any = None


def table_part(table: EvidenceTable, other_space: Any = None) -> TablePart:
    """The :class:`TablePart` of a table (key ``auto``)."""
    return TablePart(ids=[q.get("id") for q in table.questions], tq=table.tq, gold_space=list(table.gold_space),
                     n_gold=table.n_gold, class_valid=table.class_valid, items=table.items.base(),
                     extra=table.extra.base(), values=table.values, other_space=other_space)


def join_parts(questions: Sequence[Mapping[str, Any]], parts: Sequence[TablePart],
               shared: dict[Any, Any] | None = None) -> EvidenceTable:
    """The table of a run (key ``auto``) from its parts, in question order.

    ``questions``: the benchmark records of the parts' questions, in order
    (checked against the parts' ids). The same arrays as :func:`resolve` of
    the run's records, with the codes renumbered in order of first use.
    """
    ids = [qid for part in parts for qid in part.ids]
    if ids != [q.get("id") for q in questions]:
        raise ValueError("the parts do not cover these questions in this order")
    codes = Codes()
    remaps = [np.fromiter(map(codes.__getitem__, part.values), dtype=np.int64, count=len(part.values))
              for part in parts]
    n_gold = np.concatenate([p.n_gold for p in parts]).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
    cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
    pairs = list(zip(parts, remaps, strict=True))
    return EvidenceTable(
        key="auto", questions=list(questions),
        tq=np.concatenate([p.tq for p in parts]).astype(np.float64) if parts else np.zeros(0),
        n_gold=n_gold, cls_start=cls_start,
        class_valid=np.concatenate([p.class_valid for p in parts]).astype(bool) if parts else np.zeros(0, dtype=bool),
        gold_space=[space for p in parts for space in p.gold_space],
        items=ItemColumns.joined([(p.items, remap) for p, remap in pairs], cls_start),
        extra=ItemColumns.joined([(p.extra, remap) for p, remap in pairs], cls_start),
        code_of=codes, values=list(codes), shared=shared,
    )
