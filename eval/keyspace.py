"""How evidence and gold are read, and in which key space they are compared (SPEC §3.1).

A triple may carry the label space ``s, r, o``, the id space ``s_id, r_id,
o_id``, or both (:mod:`tempbench_core.schema`). Under ``key='auto'`` an item is
compared in the id space when both it and the gold carry ids, else in the label
space when both carry labels, else an :class:`~tempbench_core.errors.EvidenceError`
names the keys of each side. A 5-tuple/list ``(s, r, o, t_start, t_end)`` is
compared in the gold's space (labels when the gold carries labels, ids when it
carries ids only). ``key='label'``/``key='id'`` force one space on both sides.

Evidence mixing both spaces (reading chosen here, outside the conformance
domain): gold triples are identified in the id space; an item compared in the
label space stands for the first ``S_star`` triple with its labels.

The gold is grouped into *classes*: the distinct ``(s, r, o)`` of ``S_star`` in
the primary space, in ``S_star`` order (:func:`gold_classes`); an item matches
the class of its ``(s, r, o)`` (``-1`` for none).

Numbers. Times are read with ``float()``; a NaN time is a number that no
``t_query`` lies within (never valid), and for the deduplication of SPEC §3.4
every NaN of a field is one value. A score that is absent, a boolean, NaN or
not a number is *no score* (:func:`score_value`): the ranking is then fully
known (SPEC §3.5).

This module reads one question; :mod:`eval.evidence` puts every question of a
run into one table of arrays, which every metric reads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import repeat
from math import isnan
from operator import itemgetter
from typing import Any, NamedTuple

from tempbench_core.errors import EvidenceError
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, SPACE_KEYS, TIME_KEYS, carried_spaces, valid_at

#: SPEC §3.1's key-space option (module docstring); ``auto`` unless a caller asks for one space.
KEY_CHOICES = ("auto", "label", "id")
DEFAULT_KEY = "auto"

_ID3 = itemgetter(*ID_KEYS)
_LABEL3 = itemgetter(*LABEL_KEYS)
_TS = itemgetter("t_start")
_TE = itemgetter("t_end")
_NUMBER_TYPES = frozenset((int, float))
_FLOAT_ONLY = frozenset((float,))
_DICT_ONLY = frozenset((dict,))


class Item(NamedTuple):
    """One evidence item normalised to ``(s, r, o, t_start, t_end)`` in one space."""

    space: str
    srot: tuple[Any, Any, Any]
    t_start: float
    t_end: float
    cls: int  # the gold class it matches, -1 when not in gold
    score: float | None = None

    @property
    def whole(self) -> tuple[Any, ...]:
        """The whole item, the unit of deduplication in SPEC §3.4."""
        return (self.space, *self.srot, self.t_start, self.t_end)

    def valid_at(self, tq: float) -> bool:
        """Whether the item's own window is valid at ``tq`` (:func:`~tempbench_core.schema.valid_at`)."""
        return valid_at(self.t_start, self.t_end, tq)


class GoldTriple(NamedTuple):
    """A benchmark triple with the spaces it carries."""

    keys: dict[str, tuple[Any, Any, Any]]
    t_start: float
    t_end: float

    def five(self, space: str) -> tuple[Any, ...] | None:
        """``(s, r, o, t_start, t_end)`` in ``space``, or None when it lacks it."""
        srot = self.keys.get(space)
        return None if srot is None else (*srot, self.t_start, self.t_end)


class RawItems(NamedTuple):
    """The items of one question as parallel lists (what :func:`read_items` returns)."""

    spaces: list[str]
    srots: list[tuple[Any, Any, Any]]
    t_start: list[float]
    t_end: list[float]
    scores: list[float]  # NaN: no score


EMPTY_ITEMS = RawItems([], [], [], [], [])


def question_name(question: Mapping[str, Any]) -> str:
    """``question 'q1'`` (or ``question``), the prefix of a message about it."""
    qid = question.get("id") if type(question) is dict or isinstance(question, Mapping) else None
    return "question" if qid is None else f"question {qid!r}"


def to_float(value: Any, what: str) -> float:
    """``float(value)``, or an :class:`EvidenceError` saying ``what`` is not a number."""
    if type(value) is float:  # the common case, checked first for speed
        return value
    if value is None or isinstance(value, (list, tuple, dict)):
        raise EvidenceError(f"{what} is {value!r}; expected a number")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float range
        raise EvidenceError(f"{what} is {value!r}; expected a number") from None


def read_t_query(question: Mapping[str, Any]) -> float:
    """The question's ``t_query`` as a float (an error when it is missing or not a number)."""
    if type(question) is not dict and not isinstance(question, Mapping):  # a dict first: abc checks are slow
        raise EvidenceError(f"question is {type(question).__name__}; expected a dict record")
    where = question_name(question)
    if "t_query" not in question:
        raise EvidenceError(f"{where} has no t_query field")
    return to_float(question["t_query"], f"{where}: t_query")


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


def gold_triples(question: Mapping[str, Any], field_name: str = "S_star", key: str = DEFAULT_KEY) -> list[GoldTriple]:
    """The triples of one of the question's lists (``S_star``, ``S_stale``, ``S_dist``), parsed (SPEC §1.3)."""
    where = question_name(question)
    if field_name not in question:
        raise EvidenceError(f"{where} has no {field_name} field")
    raw = question[field_name]
    if type(raw) is not list and (raw is None or isinstance(raw, (str, bytes, Mapping)) or not isinstance(raw, Iterable)):
        raise EvidenceError(f"{where}: {field_name} is {type(raw).__name__}; expected a list of triples")
    out = []
    wanted = ("label", "id") if key == "auto" else (key,)
    for j, triple in enumerate(raw):
        plain = _plain_triple(triple, key)
        if plain is not None:
            out.append(plain)
            continue
        what = f"{where}: {field_name}[{j}]"
        if not isinstance(triple, Mapping):
            raise EvidenceError(f"{what} is {type(triple).__name__}; expected a dict triple")
        spaces = carried_spaces(triple)
        if not any(s in spaces for s in wanted):
            raise EvidenceError(f"{what} has {_describe_keys(triple)}; missing {_missing_space_keys(triple, wanted)}")
        for tk in TIME_KEYS:
            if tk not in triple:
                raise EvidenceError(f"{what} has no {tk}")
        keys = {s: _srot(*(triple[k] for k in SPACE_KEYS[s]), lambda what=what: what) for s in spaces}
        out.append(GoldTriple(keys=keys, t_start=to_float(triple["t_start"], f"{what}.t_start"),
                              t_end=to_float(triple["t_end"], f"{what}.t_end")))
    return out


def _plain_triple(triple: Any, key: str) -> GoldTriple | None:
    """The common case of :func:`gold_triples`, read without building messages: a dict with string ``s, r, o``
    and/or ``s_id, r_id, o_id`` and numeric (not NaN) times; ``None`` for anything else (read carefully)."""
    if type(triple) is not dict:
        return None
    try:
        ts, te = triple["t_start"], triple["t_end"]
    except KeyError:
        return None
    if type(ts) not in _NUMBER_TYPES or type(te) not in _NUMBER_TYPES:
        return None
    keys = {}
    if "s_id" in triple and "r_id" in triple and "o_id" in triple:
        srot = _ID3(triple)
        if type(srot[0]) is not str or type(srot[1]) is not str or type(srot[2]) is not str:
            return None
        keys["id"] = srot
    if "s" in triple and "r" in triple and "o" in triple:
        srot = _LABEL3(triple)
        if type(srot[0]) is not str or type(srot[1]) is not str or type(srot[2]) is not str:
            return None
        keys["label"] = srot
    if not keys if key == "auto" else key not in keys:
        return None
    try:
        return GoldTriple(keys, float(ts), float(te))
    except OverflowError:
        return None


def gold_spaces(question: Mapping[str, Any], gold: Sequence[GoldTriple], key: str) -> set[str]:
    """The spaces every ``S_star`` triple carries (``{key}`` when a space is forced; both for an empty gold)."""
    spaces = set.intersection(*(set(g.keys) for g in gold)) if gold else {"id", "label"}
    if not spaces:
        raise EvidenceError(f"{question_name(question)}: S_star mixes triples with only labels and triples with only ids")
    return {key} if key != "auto" else spaces


def primary_space(used: set[str], key: str, spaces: set[str]) -> str:
    """The space gold classes are keyed on (SPEC §3.1): the evidence's one space, else ``key``, else ids when the gold has them.

    ``used``: the spaces the evidence items were read in; ``spaces``: the
    spaces every ``S_star`` triple carries (``{key}`` when a space is forced).
    """
    if len(used) == 1:
        return next(iter(used))
    if key != "auto":
        return key
    return "id" if "id" in spaces else "label"


#: ``space -> (s, r, o) -> gold class``: the first class a key meets.
ClassLookup = dict[str, dict[tuple[Any, Any, Any], int]]


def gold_classes(gold: Sequence[GoldTriple], primary: str, tq: float
                 ) -> tuple[list[bool], list[dict[str, tuple[Any, Any, Any]]], ClassLookup]:
    """The gold classes keyed in ``primary``: ``(class_valid, class_keys, lookup)`` (SPEC §3.1, §3.4).

    ``class_valid[c]``: some member of class ``c`` is valid at ``tq`` (the
    class is in SPEC §3.4's ``rel``); ``class_keys[c]``: the keys of its first
    triple; ``lookup``: space -> ``(s, r, o)`` -> class.
    """
    class_of: dict[tuple[Any, Any, Any], int] = {}
    class_valid: list[bool] = []
    class_keys: list[dict[str, tuple[Any, Any, Any]]] = []
    lookup: ClassLookup = {"id": {}, "label": {}}
    for g in gold:
        k = g.keys[primary]
        c = class_of.get(k)
        if c is None:
            c = class_of[k] = len(class_valid)
            class_valid.append(False)
            class_keys.append(dict(g.keys))
        if valid_at(g.t_start, g.t_end, tq):
            class_valid[c] = True
        for space, srot in g.keys.items():
            lookup[space].setdefault(srot, c)
    return class_valid, class_keys, lookup


def match_classes(raw: RawItems, lookup: ClassLookup) -> list[int]:
    """The gold class of each item (``-1`` for none)."""
    spaces, srots = raw.spaces, raw.srots
    if not spaces:
        return []
    if spaces[0] == spaces[-1] and len(set(spaces)) == 1:
        return list(map(lookup[spaces[0]].get, srots, repeat(-1)))
    return [lookup[sp].get(srot, -1) for sp, srot in zip(spaces, srots, strict=True)]


def score_value(score: Any) -> float | None:
    """An item's score as the tie rules read it (SPEC §3.5): a float, or ``None`` (absent, a boolean, NaN, not a number)."""
    if score is None or isinstance(score, bool):
        return None
    try:
        value = float(score)
    except (TypeError, ValueError, OverflowError):
        return None
    return None if value != value else value


def read_scores(raw: list[Any]) -> list[float]:
    """Scores as :func:`score_value` reads them, NaN for no score."""
    if set(map(type, raw)) <= _FLOAT_ONLY:
        return raw  # a NaN among them already means no score
    out = []
    for sc in raw:
        value = score_value(sc)
        out.append(float("nan") if value is None else value)
    return out


def read_items(items: Any, kind: str, where: str, spaces: set[str], key: str) -> RawItems:
    """The items of one question's ``evidence`` (or ``cutoff_ties``, ``kind``) as :class:`RawItems`.

    The common case, a list of dicts in the space the rule picks first, is
    read with C-level ``map`` calls; anything else item by item
    (:func:`_read_item`), which also raises the errors. What the fast path
    reads is what :func:`_read_item` reads of the same items:

    - a time is ``float()`` of its value, which is :func:`to_float` wherever
      ``float()`` succeeds (to_float first rejects ``None``, lists, tuples
      and dicts, which ``float()`` rejects too: only a subclass of those
      defining ``__float__`` would read differently);
    - ``(s, r, o)`` is the values' tuple whatever their type, as
      :func:`_srot` makes it; an unhashable one fails where it is hashed
      (the class lookup of :func:`eval.evidence.read_question`, which then
      reads the items again this way for the message).
    """
    if type(items) is list:
        if key == "id" or (key == "auto" and "id" in spaces):
            space, getter = "id", _ID3
        else:
            space, getter = "label", _LABEL3
        try:
            srots = list(map(getter, items))
            ts = list(map(float, map(_TS, items)))
            te = list(map(float, map(_TE, items)))
            if set(map(type, items)) <= _DICT_ONLY:
                scores = read_scores(list(map(dict.get, items, repeat("score"))))
            else:
                scores = read_scores([it.get("score") for it in items])
            return RawItems([space] * len(items), srots, ts, te, scores)
        except (KeyError, TypeError, IndexError, ValueError, OverflowError, AttributeError):
            pass
    if items is None or isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise EvidenceError(f"evidence of {where} is {type(items).__name__}; expected an iterable of items")
    out = RawItems([], [], [], [], [])
    for pos, item in enumerate(items):
        space, srot, ts, te, score = _read_item(item, kind, pos, where, spaces, key)
        out.spaces.append(space)
        out.srots.append(srot)
        out.t_start.append(ts)
        out.t_end.append(te)
        value = score_value(score)
        out.scores.append(float("nan") if value is None else value)
    return out


def _read_item(item: Any, kind: str, pos: int, where: str, spaces: set[str], key: str
               ) -> tuple[str, tuple[Any, Any, Any], float, float, Any]:
    """Normalise one evidence item to ``(space, (s, r, o), t_start, t_end, score)``.

    ``kind``/``pos``/``where`` only build the error message (lazily: this runs
    once per item read this way).
    """
    if isinstance(item, Mapping):
        if key != "auto":
            space = key
            if space not in carried_spaces(item):
                what = f"{kind} item {pos} of {where}"
                raise EvidenceError(f"{what} has {_describe_keys(item)}; missing {_missing_space_keys(item, (key,))}")
        elif "s_id" in item and "r_id" in item and "o_id" in item and "id" in spaces:
            space = "id"
        elif "s" in item and "r" in item and "o" in item and "label" in spaces:
            space = "label"
        else:
            what = f"{kind} item {pos} of {where}"
            item_spaces = carried_spaces(item)
            if not item_spaces:
                raise EvidenceError(f"{what} has {_describe_keys(item)}; missing {_missing_space_keys(item, ('label', 'id'))}")
            raise EvidenceError(
                f"{what} carries the {'/'.join(item_spaces)} space but the gold (S_star) carries "
                f"{'/'.join(sorted(spaces)) or 'neither'}; no shared key space (give key='label' or key='id' "
                "only when both sides carry it)"
            )
        if "t_start" not in item or "t_end" not in item:
            missing = "t_start" if "t_start" not in item else "t_end"
            raise EvidenceError(f"{kind} item {pos} of {where} has no {missing}")
        names = SPACE_KEYS[space]
        srot = _srot(item[names[0]], item[names[1]], item[names[2]], lambda: f"{kind} item {pos} of {where}")
        ts = to_float(item["t_start"], f"{kind} item {pos} of {where}: t_start")
        te = to_float(item["t_end"], f"{kind} item {pos} of {where}: t_end")
        return space, srot, ts, te, item.get("score")
    if isinstance(item, (tuple, list)):
        what = f"{kind} item {pos} of {where}"
        if len(item) != 5:
            raise EvidenceError(f"{what} has {len(item)} fields; expected 5: (s, r, o, t_start, t_end)")
        space = key if key != "auto" else ("label" if "label" in spaces else "id")
        srot = _srot(item[0], item[1], item[2], lambda: what)
        return space, srot, to_float(item[3], f"{what}: t_start"), to_float(item[4], f"{what}: t_end"), None
    raise EvidenceError(
        f"{kind} item {pos} of {where} is {type(item).__name__}; expected a dict or a 5-tuple (s, r, o, t_start, t_end)"
    )


def has_nan(values: list[float]) -> bool:
    """Whether a list of floats holds a NaN."""
    return any(map(isnan, values))
