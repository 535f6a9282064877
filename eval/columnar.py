"""Columnar scoring: a whole run resolved once into flat arrays, every metric computed with numpy (SPEC §3.1-§3.5).

:mod:`eval.keyspace` resolves one question at a time into Python objects, and
every metric module walks those objects again; that per-item Python is what a
full run spends its scoring time on. Here each question's gold and evidence are
matched once (the same rules as :func:`eval.keyspace.resolve_question`) and
stored as integer and float columns over all items of all questions:

* per question: ``t_query``, the number of gold classes and which of them are
  valid at ``t_query`` (SPEC §3.4's ``rel``), the key space the classes are
  keyed on;
* per evidence item and per cut-off tie (SPEC §6.1): question, position, key
  space, interned codes of ``s``, ``r``, ``o``, ``t_start``, ``t_end``, gold
  class (``-1`` for none) and score.

TRP/CCR (§3.1-§3.2), the hit lists of the rank metrics (§3.4, deduplication on
the whole item), the typed-negative indicators (§3.3), the tie-aware
expectations (§3.5) and the key-space effect are then array operations over
all questions, and the aggregates are made by the same functions as the
per-question path (:func:`eval.rank.rank_kernel`, :func:`eval.ties.tie_summary`,
:func:`eval.trp_ccr.aggregate`), so the numbers are the same to the last bit.

The per-question path stays the reference and takes over wherever this one
would need care: a question whose records are not plain (items that are not
dicts or 5-lists of strings and numbers, a NaN time, a missing field, anything
:func:`~eval.keyspace.resolve_question` would reject) is resolved by
:func:`~eval.keyspace.resolve_question` and all its metrics are computed by the
per-question functions; so is the tie report of a question whose equal-score
groups hold a relevant item (the closed forms of :mod:`eval.ties`, exact
fractions included). The test suite checks both paths give the same results
on random runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from math import isnan, nan
from operator import itemgetter
from typing import Any

import numpy as np

from eval.keyspace import KEY_CHOICES, GoldTriple, Item, Resolved, primary_space, resolve_question, score_value
from eval.measures import RANK_MEASURES, Measure
from eval.negatives import RATE_NAMES, TYPES, negatives_result, question_indicators, replaced_pair
from eval.rank import rank_kernel, rank_result
from eval.relevance import hit_list
from eval.ties import rank_tie_vectors, tie_summary, trp_ccr_ties
from eval.trp_ccr import row_from_resolved
from tempbench_core.errors import EvidenceError
from tempbench_core.memo import kept_for

#: Key spaces by their code in the columns.
SPACES = ("id", "label")
_LABEL_CODE = {"id": 0, "label": 1}
_ID3 = itemgetter("s_id", "r_id", "o_id")
_LABEL3 = itemgetter("s", "r", "o")
_MISSING = object()


class _Slow(Exception):
    """This question takes the per-question reference path."""


class _Codes(dict):
    """Interned values: ``codes[value]`` is a small integer, the same for equal values (as dict keys)."""

    def __missing__(self, key: Any) -> int:
        value = self[key] = len(self)
        return value


def _num(value: Any) -> float:
    """A time as :func:`eval.keyspace._to_float` reads it, for plain numbers only (NaN and others: the slow path)."""
    kind = type(value)
    if kind is float:
        if value != value:  # NaN: equal to itself only as the same object, a case for the reference path
            raise _Slow
        return value
    if kind is int:
        try:
            return float(value)
        except OverflowError:
            raise _Slow from None
    raise _Slow


def _gold(raw: Any, key: str) -> list[tuple[dict[str, tuple[Any, Any, Any]], float, float]]:
    """``(keys by space, t_start, t_end)`` per triple, as :func:`eval.keyspace.gold_triples` parses them."""
    if type(raw) is not list:
        raise _Slow
    out = []
    for t in raw:
        if type(t) is not dict:
            raise _Slow
        keys = {}
        if "s_id" in t and "r_id" in t and "o_id" in t:
            srot = _ID3(t)
            if type(srot[0]) is not str or type(srot[1]) is not str or type(srot[2]) is not str:
                raise _Slow
            keys["id"] = srot
        if "s" in t and "r" in t and "o" in t:
            srot = _LABEL3(t)
            if type(srot[0]) is not str or type(srot[1]) is not str or type(srot[2]) is not str:
                raise _Slow
            keys["label"] = srot
        if not keys if key == "auto" else key not in keys:
            raise _Slow
        out.append((keys, _num(t.get("t_start")), _num(t.get("t_end"))))
    return out


_TS = itemgetter("t_start")
_TE = itemgetter("t_end")
_NUMBER_TYPES = frozenset((int, float))

#: Items of one question as parallel lists: spaces, (s, r, o), t_start, t_end, raw scores.
RawItems = tuple[list[str], list[tuple[Any, Any, Any]], list[float], list[float], list[Any]]


def _items(items: Any, spaces: set[str], key: str) -> RawItems:
    """The items of one question as :func:`eval.keyspace._raw_item` reads them, or :class:`_Slow`.

    The common case, every item a dict in the space the rule picks first,
    is read with C-level ``map`` calls; anything else goes item by item.
    """
    if type(items) is not list:
        if type(items) is tuple and not items:
            return [], [], [], [], []
        raise _Slow
    if key == "id" or (key == "auto" and "id" in spaces):
        space, getter = "id", _ID3
    else:
        space, getter = "label", _LABEL3
    try:
        srots = list(map(getter, items))
        ts = list(map(_TS, items))
        te = list(map(_TE, items))
    except (KeyError, TypeError, IndexError):
        return _items_one_by_one(items, spaces, key)
    if not (set(map(type, ts)) <= _NUMBER_TYPES and set(map(type, te)) <= _NUMBER_TYPES):
        return _items_one_by_one(items, spaces, key)
    try:
        ts = list(map(float, ts))
        te = list(map(float, te))
        scores = [it.get("score") for it in items]
    except (OverflowError, AttributeError):
        raise _Slow from None
    if any(map(isnan, ts)) or any(map(isnan, te)):
        raise _Slow
    return [space] * len(items), srots, ts, te, scores


def _items_one_by_one(items: list[Any], spaces: set[str], key: str) -> RawItems:
    has_id = "id" in spaces
    has_label = "label" in spaces
    out: RawItems = ([], [], [], [], [])
    for it in items:
        kind = type(it)
        if kind is dict:
            if key == "auto":
                if has_id and "s_id" in it and "r_id" in it and "o_id" in it:
                    space, srot = "id", _ID3(it)
                elif has_label and "s" in it and "r" in it and "o" in it:
                    space, srot = "label", _LABEL3(it)
                else:
                    raise _Slow
            elif key == "id" and "s_id" in it and "r_id" in it and "o_id" in it:
                space, srot = "id", _ID3(it)
            elif key == "label" and "s" in it and "r" in it and "o" in it:
                space, srot = "label", _LABEL3(it)
            else:
                raise _Slow
            ts, te, score = it.get("t_start", _MISSING), it.get("t_end", _MISSING), it.get("score")
        elif kind is list or kind is tuple:
            if len(it) != 5:
                raise _Slow
            space = key if key != "auto" else ("label" if has_label else "id")
            srot, ts, te, score = (it[0], it[1], it[2]), it[3], it[4], None
        else:
            raise _Slow
        try:
            hash(srot)
        except TypeError:
            raise _Slow from None
        out[0].append(space)
        out[1].append(srot)
        out[2].append(_num(ts))
        out[3].append(_num(te))
        out[4].append(score)
    return out


@dataclass
class _Question:
    """One question after key-space resolution (the fields of :class:`~eval.keyspace.Resolved` the metrics use).

    ``items`` and ``extra``: parallel lists ``(spaces, (s, r, o), t_start,
    t_end, gold class, score or None)``.
    """

    tq: float
    gold_space: str
    class_valid: list[bool]
    items: tuple[list[Any], ...]
    extra: tuple[list[Any], ...]
    gold: list[tuple[dict[str, tuple[Any, Any, Any]], float, float]]
    class_first: list[dict[str, tuple[Any, Any, Any]]]  # each class's first gold triple's keys
    resolved: Resolved | None = None  # set when the reference path resolved it


_FLOAT_ONLY = frozenset((float,))


def _scores(raw: list[Any]) -> list[float]:
    """Scores as :func:`eval.keyspace.score_value` reads them, NaN for none (a NaN score: :class:`_Slow`)."""
    if set(map(type, raw)) <= _FLOAT_ONLY:
        if any(map(isnan, raw)):
            raise _Slow
        return raw
    out = []
    for sc in raw:
        value = score_value(sc)
        if value is None:
            value = nan
        elif value != value:
            raise _Slow
        out.append(value)
    return out


def _fast_question(question: Any, evidence: Any, extra: Any, key: str) -> _Question:
    """:func:`eval.keyspace.resolve_question` for plain records, or :class:`_Slow`."""
    if type(question) is not dict:
        raise _Slow
    tq = _num(question.get("t_query"))
    gold = _gold(question.get("S_star", _MISSING), key)
    if gold:
        spaces = set(gold[0][0])
        for g in gold[1:]:
            spaces.intersection_update(g[0])
        if not spaces:
            raise _Slow
    else:
        spaces = {"id", "label"}
    if key != "auto":
        spaces = {key}
    raw = _items(evidence, spaces, key)
    raw_extra = _items(extra, spaces, key)
    primary = primary_space(set(raw[0]), key, spaces)
    class_valid, class_first, lookup = _classes(gold, primary, tq)
    return _Question(tq, primary, class_valid, _matched(raw, lookup), _matched(raw_extra, lookup), gold, class_first)


def _classes(gold: list[tuple[dict[str, tuple[Any, Any, Any]], float, float]], primary: str, tq: float
             ) -> tuple[list[bool], list[dict[str, tuple[Any, Any, Any]]], dict[str, dict[tuple[Any, Any, Any], int]]]:
    """The gold classes (SPEC §3.1): ``(class_valid, class_first, lookup)``, classes keyed in ``primary``.

    ``class_first``: each class's first triple's keys; ``lookup``: space ->
    ``(s, r, o)`` -> class, the first class a key meets.
    """
    class_of: dict[tuple[Any, Any, Any], int] = {}
    class_valid: list[bool] = []
    class_first: list[dict[str, tuple[Any, Any, Any]]] = []
    lookup: dict[str, dict[tuple[Any, Any, Any], int]] = {"id": {}, "label": {}}
    for keys, ts, te in gold:
        k = keys.get(primary)
        if k is None:
            raise _Slow
        c = class_of.get(k)
        if c is None:
            c = class_of[k] = len(class_valid)
            class_valid.append(False)
            class_first.append(keys)
        if ts <= tq <= te:
            class_valid[c] = True
        for space, srot in keys.items():
            lookup[space].setdefault(srot, c)
    return class_valid, class_first, lookup


def _matched(raw: RawItems, lookup: dict[str, dict[tuple[Any, Any, Any], int]]) -> tuple[list[Any], ...]:
    spaces, srots, ts, te, scores = raw
    if not spaces:
        return spaces, srots, ts, te, [], []
    if spaces[0] == spaces[-1] and len(set(spaces)) == 1:
        cls = list(map(lookup[spaces[0]].get, srots, repeat(-1)))
    else:
        cls = [lookup[sp].get(srot, -1) for sp, srot in zip(spaces, srots, strict=True)]
    return spaces, srots, ts, te, cls, _scores(scores)


def _reference_question(question: Any, evidence: Any, extra: Any, key: str) -> _Question:
    """The reference resolution of one question, in the shape of :func:`_fast_question`."""
    res = resolve_question(question, evidence, key, extra=extra)
    def columns(items: list[Any]) -> tuple[list[Any], ...]:
        return ([it.space for it in items], [it.srot for it in items], [it.t_start for it in items],
                [it.t_end for it in items], [it.cls for it in items],
                [nan if it.score is None else it.score for it in items])

    return _Question(res.tq, res.gold_space, list(res.class_valid), columns(res.items), columns(res.extra),
                     [(dict(g.keys), g.t_start, g.t_end) for g in res.gold], res.class_keys, res)


def resolve_fast(question: Any, evidence: Any, key: str = "auto", extra: Any = ()) -> Resolved:
    """:func:`eval.keyspace.resolve_question`, the same :class:`~eval.keyspace.Resolved`, faster for plain records.

    Plain records are read by this module's column readers; anything else
    (and every error) goes to the reference function.
    """
    return resolve_parsed(question, evidence, key, extra)[0]


def resolve_parsed(question: Any, evidence: Any, key: str = "auto", extra: Any = ()) -> tuple[Resolved, _Question | None]:
    """:func:`resolve_fast` and what the column reader made of the question (``None``: the reference resolved it).

    The second value is what :func:`columns_part` packs.
    """
    try:
        p = _fast_question(question, evidence, extra, key)
    except (_Slow, TypeError):
        return resolve_question(question, evidence, key, extra=extra), None
    return _as_resolved(question, p, key), p


def _as_resolved(question: Any, p: _Question, key: str) -> Resolved:
    """The :class:`~eval.keyspace.Resolved` of a question read by :func:`_fast_question`."""
    class_keys = [dict(keys) for keys in p.class_first]
    return Resolved(
        qid=question.get("id"), complexity=question.get("complexity"), operator=question.get("operator_type"),
        tq=p.tq, items=_as_items(p.items), n_gold=len(p.class_valid), gold_space=p.gold_space,
        class_valid=list(p.class_valid), class_keys=class_keys, extra=_as_items(p.extra),
        gold=[GoldTriple(keys, ts, te) for keys, ts, te in p.gold], key=key,
    )


def _as_items(columns: tuple[list[Any], ...]) -> list[Item]:
    spaces, srots, ts, te, cls, scores = columns
    return list(map(Item, spaces, srots, ts, te, cls, [None if sc != sc else sc for sc in scores]))


#: The arrays an :class:`_ItemColumns` is made of (the others derive from them).
_BASE = ("counts", "space", "s", "r", "o", "ts", "te", "cls", "score")


class _ItemColumns:
    """Items of every question in question order: flat arrays plus ``start`` offsets (``n + 1``)."""

    def __init__(self, per_question: Sequence[tuple[list[Any], ...]], codes: _Codes | None, cls_start: np.ndarray) -> None:
        counts = np.fromiter((len(x[0]) for x in per_question), dtype=np.int64, count=len(per_question))
        total = int(counts.sum())

        def flat(j: int) -> Any:
            return chain.from_iterable(x[j] for x in per_question)

        space = np.fromiter(map(_LABEL_CODE.__getitem__, flat(0)), dtype=np.int8, count=total)
        s = r = o = None
        if codes is not None:
            sro = np.fromiter(map(codes.__getitem__, chain.from_iterable(flat(1))), dtype=np.int64,
                              count=3 * total).reshape(total, 3)
            s, r, o = sro[:, 0], sro[:, 1], sro[:, 2]
        # no score is NaN here (a question with a NaN score takes the reference path)
        self._set(counts, space, s, r, o, np.fromiter(flat(2), dtype=np.float64, count=total),
                  np.fromiter(flat(3), dtype=np.float64, count=total), np.fromiter(flat(4), dtype=np.int64, count=total),
                  np.fromiter(flat(5), dtype=np.float64, count=total), cls_start)

    def _set(self, counts: np.ndarray, space: np.ndarray, s: np.ndarray | None, r: np.ndarray | None,
             o: np.ndarray | None, ts: np.ndarray, te: np.ndarray, cls: np.ndarray, score: np.ndarray,
             cls_start: np.ndarray) -> None:
        self.counts, self.space, self.s, self.r, self.o = counts, space, s, r, o
        self.ts, self.te, self.cls, self.score = ts, te, cls, score
        self.start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        total = int(self.start[-1])
        self.q = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
        self.pos = np.arange(total, dtype=np.int64) - self.start[:-1][self.q]
        self.has_score = ~np.isnan(self.score)
        # the global index of an item's gold class (classes of all questions side by side), -1 for none
        self.gid = np.where(self.cls >= 0, cls_start[:-1][self.q] + self.cls, -1)

    @classmethod
    def joined(cls, parts: Sequence[tuple[Mapping[str, np.ndarray], np.ndarray]], cls_start: np.ndarray) -> _ItemColumns:
        """The columns of consecutive parts (:meth:`base` arrays, each with its local-to-joined code map)."""
        out = cls.__new__(cls)
        cat = {name: np.concatenate([p[name] for p, _ in parts]) if parts else np.zeros(0)
               for name in _BASE if name not in ("s", "r", "o")}  # those are renumbered below
        sro = [np.concatenate([remap[p[name]] for p, remap in parts]) if parts else np.zeros(0, dtype=np.int64)
               for name in ("s", "r", "o")]
        out._set(cat["counts"].astype(np.int64), cat["space"].astype(np.int8), *sro, cat["ts"].astype(np.float64),
                 cat["te"].astype(np.float64), cat["cls"].astype(np.int64), cat["score"].astype(np.float64), cls_start)
        return out

    def base(self) -> dict[str, np.ndarray]:
        """The arrays the others derive from (:data:`_BASE`), for :meth:`joined`."""
        return {name: getattr(self, name) for name in _BASE}

    def decoded(self, i: int, values: Sequence[Any]) -> tuple[list[Any], ...]:
        """Question ``i``'s items as :func:`_fast_question` lists them (codes read back through ``values``)."""
        lo, hi = int(self.start[i]), int(self.start[i + 1])
        s, r, o = self.s[lo:hi].tolist(), self.r[lo:hi].tolist(), self.o[lo:hi].tolist()
        srots = [(values[a], values[b], values[c]) for a, b, c in zip(s, r, o, strict=True)]
        return ([SPACES[c] for c in self.space[lo:hi].tolist()], srots, self.ts[lo:hi].tolist(),
                self.te[lo:hi].tolist(), self.cls[lo:hi].tolist(), self.score[lo:hi].tolist())

    def __len__(self) -> int:
        return len(self.q)


@dataclass
class Columns:
    """A run resolved against its questions (SPEC §3.1), as arrays; see the module docstring."""

    key: str
    questions: list[Mapping[str, Any]]
    evidence: list[Any]
    ties: list[Any]
    parsed: list[_Question]
    tq: np.ndarray
    n_gold: np.ndarray
    cls_start: np.ndarray
    class_valid: np.ndarray
    items: _ItemColumns
    extra: _ItemColumns
    slow: np.ndarray  # questions resolved (and scored) by the reference path
    codes: _Codes | None  # value -> code of the items' s, r, o (None when resolved light)
    gold_space: list[str]  # per question, the space its gold classes are keyed on

    @property
    def n(self) -> int:
        return len(self.questions)

    def gold(self, i: int) -> list[tuple[dict[str, tuple[Any, Any, Any]], float, float]]:
        """Question ``i``'s ``S_star`` as the column reader parses it."""
        parsed = self.parsed
        return parsed.gold(i) if isinstance(parsed, _PartParsed) else parsed[i].gold

    def resolved(self, i: int) -> Resolved:
        """The reference :class:`~eval.keyspace.Resolved` of question ``i``."""
        got = self.parsed[i].resolved
        if got is None:  # read by the fast path (the reference path keeps its own)
            got = self.parsed[i].resolved = _as_resolved(self.questions[i], self.parsed[i], self.key)
        return got


def resolve_columns(
    questions: Sequence[Mapping[str, Any]],
    evidence: Sequence[Any],
    ties: Sequence[Any] | None = None,
    key: str = "auto",
    where: Callable[[int], str] | None = None,
    light: bool = False,
) -> Columns:
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
    light:
        Skip the ``s, r, o`` codes (enough for :func:`rows`, not for the
        rank, tie and negative metrics).

    Raises
    ------
    EvidenceError
        As :func:`eval.keyspace.resolve_question` would, for the first question it rejects.
    """
    if key not in KEY_CHOICES:
        raise EvidenceError(f"unknown key space {key!r}; expected one of {', '.join(KEY_CHOICES)}")
    n = len(questions)
    ties = ties if ties is not None else [()] * n
    parsed: list[_Question] = []
    slow = np.zeros(n, dtype=bool)
    for i in range(n):
        try:
            parsed.append(_fast_question(questions[i], evidence[i], ties[i], key))
        except (_Slow, TypeError):  # TypeError: an unhashable s/r/o, which the reference path reports
            slow[i] = True
            try:
                parsed.append(_reference_question(questions[i], evidence[i], ties[i], key))
            except EvidenceError as exc:
                raise EvidenceError(f"{where(i) if where is not None else ''}{exc}") from None
    return _columns(questions, evidence, ties, parsed, slow, key, None if light else _Codes())


def _columns(questions: Sequence[Mapping[str, Any]], evidence: Sequence[Any], ties: Sequence[Any],
             parsed: list[_Question], slow: np.ndarray, key: str, codes: _Codes | None) -> Columns:
    """The :class:`Columns` of questions read by :func:`_fast_question` (or the reference, where ``slow``)."""
    n = len(parsed)
    n_gold = np.fromiter((len(p.class_valid) for p in parsed), dtype=np.int64, count=n)
    cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
    class_valid = np.fromiter((v for p in parsed for v in p.class_valid), dtype=bool, count=int(cls_start[-1]))
    return Columns(
        key=key, questions=list(questions), evidence=list(evidence), ties=list(ties), parsed=parsed,
        tq=np.fromiter((p.tq for p in parsed), dtype=np.float64, count=n),
        n_gold=n_gold, cls_start=cls_start, class_valid=class_valid,
        items=_ItemColumns([p.items for p in parsed], codes, cls_start),
        extra=_ItemColumns([p.extra for p in parsed], codes, cls_start),
        slow=slow, codes=codes, gold_space=[p.gold_space for p in parsed],
    )


def _in_other_space(evidence: Any, p: _Question, other: str) -> _Question:
    """``_fast_question(question, evidence, (), other)`` for a question ``p`` read from the same evidence (key ``auto``).

    The items' times and scores are read alike in every space, so only their
    ``(s, r, o)`` in ``other`` and the gold classes keyed in ``other`` are made
    again. :class:`_Slow` (or a :class:`TypeError`) where that reading would
    not take the plain path: then :func:`_fast_question` itself decides.
    """
    if type(evidence) is not list or not all(other in keys for keys, _, _ in p.gold):
        raise _Slow
    try:
        srots = list(map(_ID3 if other == "id" else _LABEL3, evidence))
    except (KeyError, TypeError, IndexError):
        raise _Slow from None
    class_valid, class_first, lookup = _classes(p.gold, other, p.tq)
    _, _, ts, te, _, scores = p.items
    items = ([other] * len(srots), srots, ts, te, list(map(lookup[other].get, srots, repeat(-1))), scores) \
        if srots else ([], [], [], [], [], [])
    return _Question(p.tq, other, class_valid, items, ([], [], [], [], [], []), p.gold, class_first)


# -- columns made in parts, where the run's records are (``tempbench reproduce``) ----------------------

@dataclass
class ColumnsPart:
    """Consecutive questions of a run resolved with key ``auto`` (:func:`columns_part`): arrays, small to send.

    :func:`columns_from_parts` joins the parts of a run into the
    :class:`Columns` that :func:`resolve_columns` makes of the same records,
    so a run can be resolved where its records are made (each question once
    for the loss attribution and the scores) and scored elsewhere without
    reading it back. ``strings``: the values of the part's local ``s, r, o``
    codes. ``alt``: the key-space effect's other resolution of the part
    (:func:`key_space_effect`): ``(space, hits, ccr)``, ``(space, None, None)``
    when it fails, ``None`` when the part's questions need none.
    """

    ids: list[Any]
    tq: np.ndarray
    gold_space: list[str]
    n_gold: np.ndarray
    class_valid: np.ndarray
    items: dict[str, np.ndarray]
    extra: dict[str, np.ndarray]
    strings: list[Any]
    alt: tuple[str, list[int] | None, list[int] | None] | None


def columns_part(questions: Sequence[Mapping[str, Any]], evidence: Sequence[Any],
                 parsed: Sequence[_Question | None]) -> ColumnsPart | None:
    """The part of ``questions`` (their evidence and :func:`resolve_parsed` values, key ``auto``).

    ``None`` when some question was resolved by the reference path: such a
    run is scored from its file.
    """
    if any(p is None for p in parsed):
        return None
    ready: list[_Question] = list(parsed)  # type: ignore[arg-type]
    codes = _Codes()
    n_gold = np.fromiter((len(p.class_valid) for p in ready), dtype=np.int64, count=len(ready))
    cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
    items = _ItemColumns([p.items for p in ready], codes, cls_start)
    extra = _ItemColumns([p.extra for p in ready], codes, cls_start)
    gold_space = [p.gold_space for p in ready]
    other = _other_space(_used_space(gold_space, items.counts))
    alt = None
    if other is not None:
        try:
            try:  # the other space's reading, made from this one's where it can be
                n = len(ready)
                alt_cols = _columns(questions, evidence, [()] * n, [_in_other_space(ev, p, other)
                                                                   for ev, p in zip(evidence, ready, strict=True)],
                                    np.zeros(n, dtype=bool), other, None)
            except (_Slow, TypeError):
                alt_cols = resolve_columns(questions, evidence, None, other, light=True)
            alt_rows = rows(alt_cols)
            alt = (other, [r["hits"] for r in alt_rows], [r["ccr"] for r in alt_rows])
        except EvidenceError:
            alt = (other, None, None)
    return ColumnsPart(
        ids=[q.get("id") for q in questions], tq=np.fromiter((p.tq for p in ready), dtype=np.float64, count=len(ready)),
        gold_space=gold_space, n_gold=n_gold,
        class_valid=np.fromiter((v for p in ready for v in p.class_valid), dtype=bool, count=int(cls_start[-1])),
        items=items.base(), extra=extra.base(), strings=list(codes), alt=alt,
    )


def columns_from_parts(questions: Sequence[Mapping[str, Any]], parts: Sequence[ColumnsPart]) -> Columns:
    """:func:`resolve_columns` (key ``auto``) of a run from its :func:`columns_part` parts, in question order.

    ``questions``: the benchmark records of the parts' questions, in order
    (checked against the parts' ids). The joined columns hold no records:
    their :func:`key_space_effect` reads the parts' own other-space results.
    """
    ids = [qid for part in parts for qid in part.ids]
    if ids != [q.get("id") for q in questions]:
        raise ValueError("the parts do not cover these questions in this order")
    codes = _Codes()
    remaps = [np.fromiter(map(codes.__getitem__, part.strings), dtype=np.int64, count=len(part.strings))
              for part in parts]
    n_gold = np.concatenate([part.n_gold for part in parts]).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)
    cls_start = np.concatenate([[0], np.cumsum(n_gold)]).astype(np.int64)
    items = _ItemColumns.joined([(part.items, remap) for part, remap in zip(parts, remaps, strict=True)], cls_start)
    extra = _ItemColumns.joined([(part.extra, remap) for part, remap in zip(parts, remaps, strict=True)], cls_start)
    tq = np.concatenate([part.tq for part in parts]) if parts else np.zeros(0)
    gold_space = [space for part in parts for space in part.gold_space]
    n = len(questions)
    return Columns(
        key="auto", questions=list(questions), evidence=[], ties=[],
        parsed=_PartParsed(questions, tq, gold_space, items, extra, list(codes)),  # type: ignore[arg-type]
        tq=tq, n_gold=n_gold, cls_start=cls_start,
        class_valid=np.concatenate([part.class_valid for part in parts]) if parts else np.zeros(0, dtype=bool),
        items=items, extra=extra, slow=np.zeros(n, dtype=bool), codes=codes, gold_space=gold_space,
    )


def parts_suffice(parts: Sequence[ColumnsPart | None]) -> bool:
    """Whether a run can be scored from these parts alone: each made, each with the other-space resolution needed."""
    if any(part is None for part in parts):
        return False
    ready: list[ColumnsPart] = list(parts)  # type: ignore[arg-type]
    gold_space = [space for part in ready for space in part.gold_space]
    counts = np.concatenate([part.items["counts"] for part in ready]) if ready else np.zeros(0, dtype=np.int64)
    other = _other_space(_used_space(gold_space, counts))
    return other is None or all(part.alt is not None and part.alt[0] == other for part in ready)


def _parts_alt(parts: Sequence[ColumnsPart], other: str) -> tuple[list[int], list[int]]:
    """The parts' other-space ``(hits, ccr)`` per question (:func:`parts_suffice` holds).

    Raises :class:`~tempbench_core.errors.EvidenceError` when a part's other resolution failed.
    """
    alts = [part.alt for part in parts]
    if any(alt is None or alt[0] != other for alt in alts):
        raise ValueError(f"a part was not resolved in the {other} space (see parts_suffice)")
    if any(alt[1] is None for alt in alts):  # type: ignore[index]
        raise EvidenceError(f"some evidence does not carry the {other} space")
    return ([h for alt in alts for h in alt[1]], [c for alt in alts for c in alt[2]])  # type: ignore[index]


class _PartParsed(Sequence):
    """``Columns.parsed`` of joined parts: a question's :class:`_Question` rebuilt from the arrays when first read."""

    def __init__(self, questions: Sequence[Mapping[str, Any]], tq: np.ndarray, gold_space: list[str],
                 items: _ItemColumns, extra: _ItemColumns, values: list[Any]) -> None:
        self.questions, self.tq, self.gold_space = questions, tq, gold_space
        self.items, self.extra, self.values = items, extra, values
        self._gold: dict[int, Any] = {}
        self._made: dict[int, _Question] = {}

    def __len__(self) -> int:
        return len(self.questions)

    def gold(self, i: int) -> list[tuple[dict[str, tuple[Any, Any, Any]], float, float]]:
        got = self._gold.get(i)
        if got is None:
            got = self._gold[i] = _gold(self.questions[i].get("S_star", _MISSING), "auto")
        return got

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        got = self._made.get(i)
        if got is None:
            gold, tq, primary = self.gold(i), float(self.tq[i]), self.gold_space[i]
            class_valid, class_first, _ = _classes(gold, primary, tq)
            got = self._made[i] = _Question(tq, primary, class_valid, self.items.decoded(i, self.values),
                                            self.extra.decoded(i, self.values), gold, class_first)
        return got


# -- TRP and CCR (SPEC §3.1) ---------------------------------------------------------------------

def _valid(cols: Columns, items: _ItemColumns) -> np.ndarray:
    tq = cols.tq[items.q]
    return (items.ts <= tq) & (tq <= items.te)


def _hits(cols: Columns, items: _ItemColumns) -> np.ndarray:
    """Per item: a TRP hit (a gold triple whose own window is valid at ``t_query``)."""
    return (items.cls >= 0) & _valid(cols, items)


def trp_ccr_arrays(cols: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(n_ret, hits, ccr)`` per question (SPEC §3.1)."""
    items = cols.items
    n_ret = np.diff(items.start)
    hit = _hits(cols, items)
    hits = np.bincount(items.q[hit], minlength=cols.n)
    distinct = np.unique(items.gid[hit])
    covered = np.bincount(np.searchsorted(cols.cls_start, distinct, side="right") - 1, minlength=cols.n)
    ccr = ((cols.n_gold > 0) & (covered == cols.n_gold)).astype(np.int64)
    return n_ret, hits, ccr


def rows(cols: Columns) -> list[dict[str, Any]]:
    """The published per-question rows (:func:`eval.trp_ccr.row_from_resolved`), in question order."""
    n_ret, hits, ccr = (a.tolist() for a in trp_ccr_arrays(cols))
    n_gold = cols.n_gold.tolist()
    out = []
    for i, q in enumerate(cols.questions):
        if cols.slow[i]:
            out.append(row_from_resolved(cols.resolved(i)))
            continue
        nr, h = n_ret[i], hits[i]
        out.append({
            "id": q.get("id"), "complexity": q.get("complexity"), "operator": q.get("operator_type"),
            "n_ret": nr, "hits": h, "n_gold": n_gold[i], "trp": h / nr if nr else None, "ccr": ccr[i],
        })
    return out


# -- rank metrics (SPEC §3.4) --------------------------------------------------------------------

def _first_of_runs(keys: Sequence[np.ndarray]) -> np.ndarray:
    """Indices of the first element (smallest index) of every group of equal key tuples."""
    if not len(keys[0]):
        return np.zeros(0, dtype=np.int64)
    order = np.lexsort(tuple(reversed(keys)))  # stable: equal keys keep index order
    new = np.zeros(len(order), dtype=bool)
    new[0] = True
    for k in keys:
        sk = k[order]
        new[1:] |= sk[1:] != sk[:-1]
    return order[new]


def hit_matrix(cols: Columns, width: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(gains, n_rel, dedup_pos)``: SPEC §3.4's hit indicators per position of the deduplicated list.

    ``dedup_pos`` is each evidence item's position in its question's
    deduplicated list (``-1`` for a repeat of an earlier whole item).
    """
    items = cols.items
    n = cols.n
    keep = np.zeros(len(items), dtype=bool)
    keep[_first_of_runs([items.q, items.space, items.s, items.r, items.o, items.ts, items.te])] = True
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    dedup_pos = np.where(keep, kept_before[1:] - 1 - kept_before[items.start[:-1]][items.q], -1)
    rel = np.zeros(len(items), dtype=bool)
    has = items.gid >= 0
    rel[has] = cols.class_valid[items.gid[has]]
    cand = np.flatnonzero(keep & rel & _valid(cols, items))
    hit_idx = cand[_first_of_runs([items.gid[cand]])] if len(cand) else cand
    lengths = np.bincount(items.q[keep], minlength=n)
    kmax = max(m.cutoff or 1 for m in RANK_MEASURES)
    width = max(kmax, int(lengths.max()) if n else 0, width or 0)
    gains = np.zeros((n, width), dtype=np.float64)
    gains[items.q[hit_idx], dedup_pos[hit_idx]] = 1.0
    n_rel = np.bincount(np.repeat(np.arange(n), cols.n_gold), weights=cols.class_valid, minlength=n).astype(np.int64)
    for i in np.flatnonzero(cols.slow):
        flags, nr = hit_list(cols.resolved(int(i)))
        gains[i] = 0.0
        gains[i, :len(flags)] = flags
        n_rel[i] = nr
    return gains, n_rel, dedup_pos


def rank_metrics(cols: Columns, measures: Sequence[Measure] = RANK_MEASURES) -> dict[str, Any]:
    """:func:`eval.rank.rank_metrics` over the columns (same keys, same values)."""
    gains, n_rel, _ = hit_matrix(cols)
    per_q = rank_kernel(gains, n_rel, measures)
    return rank_result(per_q, n_rel)


# -- tie-aware expectations (SPEC §3.5) ------------------------------------------------------------

def tie_report(cols: Columns, measures: Sequence[Measure] = RANK_MEASURES) -> dict[str, Any]:
    """:func:`eval.ties.tie_report` over the columns (same keys, same values).

    A question whose equal-score groups (evidence then cut-off ties) hold no
    valid copy of a relevant triple in a group of two or more has every
    ordering give its observed rank metrics; its TRP/CCR extremes follow from
    counts of its cut-off group. Every other question (about one in six of a
    reference run) goes through :func:`eval.ties.rank_tie_vectors` and
    :func:`eval.ties.trp_ccr_ties`.
    """
    n = cols.n
    ev, ex = cols.items, cols.extra
    n_ret = np.diff(ev.start)
    n_extra = np.diff(ex.start)
    ev_hit = _hits(cols, ev)
    ex_hit = _hits(cols, ex)
    gains, n_rel, _ = hit_matrix(cols, width=int(n_ret.max()) if n else 0)
    hard = cols.slow.copy()

    # -- TRP and CCR: the cut-off group is the returned items with the last score, plus every cut-off tie
    last = ev.start[1:] - 1
    has_ret = n_ret > 0
    scored = np.ones(n, dtype=bool)
    np.logical_and.at(scored, ev.q, ev.has_score)
    grouped = has_ret & scored
    last_score = np.where(has_ret, ev.score[np.maximum(last, 0)] if len(ev) else 0.0, np.nan)
    member = np.where(grouped[ev.q], ev.score == last_score[ev.q], np.arange(len(ev)) == last[ev.q])
    m = np.bincount(ev.q[member], minlength=n)
    g = m + np.where(grouped, n_extra, 0)
    h = np.bincount(ev.q[member & ev_hit], minlength=n) + np.bincount(ex.q[ex_hit], minlength=n)
    hits = np.bincount(ev.q[ev_hit], minlength=n)
    above = hits - np.bincount(ev.q[member & ev_hit], minlength=n)
    safe_ret = np.where(has_ret, n_ret, 1)
    safe_g = np.where(g > 0, g, 1)
    trp = np.full((n, 4), np.nan)
    trp[:, 0] = hits / safe_ret
    trp[:, 1] = (above + (m * h) / safe_g) / safe_ret
    trp[:, 2] = (above + np.maximum(0, m - (g - h))) / safe_ret
    trp[:, 3] = (above + np.minimum(m, h)) / safe_ret
    trp[~has_ret] = np.nan
    # CCR: the gold classes not hit above the group must all be hit by the m items drawn
    covered = np.zeros(len(cols.class_valid), dtype=bool)
    covered[ev.gid[ev_hit & ~member]] = True
    group_hits = np.bincount(np.concatenate([ev.gid[ev_hit & member], ex.gid[ex_hit]]),
                             minlength=len(cols.class_valid))
    cls_q = np.repeat(np.arange(n), cols.n_gold)
    n_missing = np.bincount(cls_q[~covered], minlength=n)
    unhittable = np.bincount(cls_q[~covered & (group_hits == 0)], minlength=n) > 0
    _, _, ccr_obs = trp_ccr_arrays(cols)
    obs = ccr_obs.astype(np.float64)
    p = np.where(n_missing == 0, 1.0, 0.0)
    hard |= (cols.n_gold > 0) & (n_missing > 0) & ~unhittable & (n_missing <= m)
    ccr = np.stack([obs, p, p, p], axis=1)
    ccr[cols.n_gold == 0] = 0.0

    # -- rank metrics: a group of two or more that holds a valid copy of a relevant triple needs the closed forms
    known_q = np.concatenate([ev.q, ex.q])
    order = np.lexsort((np.concatenate([ev.pos, ex.pos]), np.concatenate([np.zeros(len(ev)), np.ones(len(ex))]), known_q))
    kq = known_q[order]
    kscore = np.concatenate([ev.score, ex.score])[order]
    kpos = np.concatenate([ev.pos, n_ret[ex.q] + ex.pos])[order]
    k_rel = np.zeros(len(order), dtype=bool)
    gid = np.concatenate([ev.gid, ex.gid])[order]
    valid = np.concatenate([_valid(cols, ev), _valid(cols, ex)])[order]
    k_rel[gid >= 0] = cols.class_valid[gid[gid >= 0]]
    k_rel &= valid
    all_scored = np.ones(n, dtype=bool)
    np.logical_and.at(all_scored, kq, np.concatenate([ev.has_score, ex.has_score])[order])
    same_prev = np.zeros(len(order), dtype=bool)
    if len(order):
        same_prev[1:] = (kq[1:] == kq[:-1]) & (kscore[1:] == kscore[:-1])
    group = np.cumsum(~same_prev) - 1
    n_groups = int(group[-1]) + 1 if len(order) else 0
    size = np.bincount(group, minlength=n_groups)
    starts = np.flatnonzero(~same_prev)
    begins_inside = kpos[starts] < n_ret[kq[starts]]
    rel_in_group = np.bincount(group[k_rel], minlength=n_groups) > 0
    needs = begins_inside & (size > 1) & rel_in_group & all_scored[kq[starts]]
    hard[np.unique(kq[starts[needs]])] = True

    # observed = expected = min = max for the others; the first hit's rank gives RR
    first_hit = np.argmax(gains > 0, axis=1)
    any_hit = (gains > 0).any(axis=1)
    rr = np.where(any_hit, 1.0 / (first_hit + 1), 0.0)
    prob, best, worst = gains.copy(), gains.copy(), gains.copy()
    err, min_rr = rr.copy(), rr.copy()
    cut_min: list[tuple[int, np.ndarray]] = []
    width = gains.shape[1]
    for i in np.flatnonzero(hard).tolist():
        res = cols.resolved(i)
        tc = trp_ccr_ties(res)
        trp[i] = np.nan if tc["TRP"] is None else tc["TRP"]
        ccr[i] = tc["CCR"]
        rt = rank_tie_vectors(res, measures)
        for target, values in ((prob, rt.prob), (best, rt.best), (worst, rt.worst)):
            target[i] = 0.0
            target[i, :min(len(values), width)] = values[:width]
        err[i], min_rr[i] = rt.e_rr, rt.min_rr
        if rt.cut_min is not None:
            cut_min.append((i, rt.cut_min))
    return tie_summary(trp, ccr, gains, prob, best, worst, err, min_rr, n_rel, cut_min, measures)


# -- typed negatives (SPEC §3.3) ------------------------------------------------------------------

def _pairs(cols: Columns, i: int, shared: dict[Any, Any] | None = None) -> dict[str, tuple[Any, Any] | None]:
    """Per negative type, ``(replaced hop, replacement)`` as ``(keys by space, t_start, t_end)``, or None.

    They depend on the question and the key option alone: ``shared`` keeps
    them for the next run scored against the same question objects.
    """
    question = cols.questions[i]
    return kept_for(shared, ("negative pairs", question.get("id"), cols.key), question,
                    lambda: _question_pairs(question, cols.gold(i), cols.key))


def _question_pairs(question: Mapping[str, Any], star: list[tuple[dict[str, tuple[Any, Any, Any]], float, float]],
                    key: str) -> dict[str, tuple[Any, Any] | None]:
    out: dict[str, tuple[Any, Any] | None] = {}
    for kind, (variant, _flag) in TYPES.items():
        raw = question.get(variant)
        if raw is None:
            out[kind] = None
            continue
        try:
            other = _gold(raw, "auto")
        except _Slow:
            # the reference, which also raises what it raises
            star_triples = [GoldTriple(keys=dict(k), t_start=ts, t_end=te) for k, ts, te in star]
            pair = replaced_pair(question, variant, key, star_triples or None)
            out[kind] = None if pair is None else tuple((dict(t.keys), t.t_start, t.t_end) for t in pair)
            continue
        triples = star + other
        spaces = set(triples[0][0]) if triples else set()
        for t in triples[1:]:
            spaces.intersection_update(t[0])
        if key != "auto":
            space = key if key in spaces else None
        else:
            space = "id" if "id" in spaces else ("label" if "label" in spaces else None)
        if space is None:
            out[kind] = None
            continue
        star_five = {(*t[0][space], t[1], t[2]): t for t in star}
        other_five = {(*t[0][space], t[1], t[2]): t for t in other}
        gone = [t for k, t in star_five.items() if k not in other_five]
        new = [t for k, t in other_five.items() if k not in star_five]
        out[kind] = (gone[0], new[0]) if len(gone) == 1 and len(new) == 1 else None
    return out


def negatives_report(cols: Columns, flags: Mapping[Any, Mapping[str, bool]] | None,
                     shared: dict[Any, Any] | None = None) -> dict[str, Any]:
    """:func:`eval.negatives.negatives_report` over the columns (same keys, same values).

    ``shared``: a cache of what depends on the question alone, kept by a
    caller scoring several runs of the same questions (:func:`_pairs`).
    """
    n = cols.n
    ev = cols.items
    codes = cols.codes
    assert codes is not None, "negatives need the full columns (light=False)"
    indicators_q: dict[str, np.ndarray] = {name: np.zeros(n, dtype=bool) for name in RATE_NAMES}
    evaluable = {kind: np.zeros(n, dtype=bool) for kind in TYPES}
    # per question and type: hop and replacement codes per space (-1: the triple lacks that space)
    hop = {kind: np.full((n, 2, 3), -1, dtype=np.int64) for kind in TYPES}
    rep = {kind: np.full((n, 2, 3), -1, dtype=np.int64) for kind in TYPES}
    rep_t = {kind: np.zeros((n, 2), dtype=np.float64) for kind in TYPES}
    slow_rows: dict[int, dict[str, bool | None]] = {}
    for i in range(n):
        if cols.slow[i]:
            slow_rows[i] = question_indicators(cols.questions[i], cols.resolved(i))
            continue
        for kind, pair in _pairs(cols, i, shared).items():
            if pair is None:
                continue
            evaluable[kind][i] = True
            (hop_keys, _, _), (rep_keys, rts, rte) = pair
            for sp, space in enumerate(SPACES):
                if space in hop_keys:
                    hop[kind][i, sp] = [codes.get(v, -2) for v in hop_keys[space]]
                if space in rep_keys:
                    rep[kind][i, sp] = [codes.get(v, -2) for v in rep_keys[space]]
            rep_t[kind][i] = (rts, rte)
    valid = _valid(cols, ev)
    sp = ev.space.astype(np.int64)
    for kind in TYPES:
        q = ev.q
        on = evaluable[kind][q]
        hs, hr, ho = (hop[kind][q, sp, j] for j in range(3))
        rs, rr, ro = (rep[kind][q, sp, j] for j in range(3))
        hop_has = hs != -1
        rep_has = rs != -1
        same_triple = rep_has & (ev.s == rs) & (ev.r == rr) & (ev.o == ro)
        exact = same_triple & (ev.ts == rep_t[kind][q, 0]) & (ev.te == rep_t[kind][q, 1])
        same_sr = hop_has & (ev.s == hs) & (ev.r == hr)
        if kind == "stale":
            found = (exact, same_sr & (ev.o == ho) & ~valid, same_sr & ~valid)
            names = RATE_NAMES[:3]
        else:
            found = (exact, same_triple, same_sr & (ev.o != ho))
            names = RATE_NAMES[3:]
        for name, mask in zip(names, found, strict=True):
            indicators_q[name] = np.bincount(q[on & mask], minlength=n) > 0
    indicators: dict[str, list[int | None]] = {name: [] for name in RATE_NAMES}
    counts = {kind: {"evaluable": 0, "functional": 0} for kind in TYPES}
    for i, q in enumerate(cols.questions):
        flag = (flags or {}).get(q.get("id"), {})
        ind = slow_rows.get(i)
        for kind, (_variant, flag_name) in TYPES.items():
            names = RATE_NAMES[:3] if kind == "stale" else RATE_NAMES[3:]
            is_evaluable = (ind[names[0]] is not None) if ind is not None else bool(evaluable[kind][i])
            functional = is_evaluable and bool(flag.get(flag_name, False))
            counts[kind]["evaluable"] += is_evaluable
            counts[kind]["functional"] += functional
            for name in names:
                value = ind[name] if ind is not None else bool(indicators_q[name][i])
                indicators[name].append(int(value) if functional else None)
    return negatives_result(indicators, counts, flags is not None)


# -- the key-space effect (SPEC §3.1) ---------------------------------------------------------------

def _used_space(gold_space: Sequence[str], n_items: np.ndarray) -> str:
    """The key space the questions were matched in: that of those with items (else of all), ``mixed``, or ``id`` for none."""
    spaces = {sp for sp, nr in zip(gold_space, n_items.tolist(), strict=True) if nr} or set(gold_space)
    return spaces.pop() if len(spaces) == 1 else ("mixed" if spaces else "id")


def _other_space(used: str) -> str | None:
    return {"id": "label", "label": "id"}.get(used)


def key_space_effect(cols: Columns, row_list: Sequence[Mapping[str, Any]],
                     parts: Sequence[ColumnsPart] | None = None) -> dict[str, Any]:
    """:func:`eval.scoring.key_space_effect` over the columns: the other space's hits and CCR, compared.

    ``parts``: the columns were joined from these (:func:`parts_suffice`
    holds); their own other-space resolutions are used.
    """
    used = _used_space(cols.gold_space, np.diff(cols.items.start))
    other = _other_space(used)
    differing = None
    if other is not None:
        try:
            if parts is not None:
                alt = _parts_alt(parts, other)
            else:
                alt_rows = rows(resolve_columns(cols.questions, cols.evidence, None, other, light=True))
                alt = ([a["hits"] for a in alt_rows], [a["ccr"] for a in alt_rows])
        except EvidenceError:
            alt = None
        if alt is not None:
            differing = sum((h, c) != (r["hits"], r["ccr"]) for h, c, r in zip(*alt, row_list, strict=True))
    return {"used": used, "other": other, "questions_differing": differing}
