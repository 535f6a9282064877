"""Key-space resolution: matching evidence items to the gold chain (SPEC §3.1).

Every metric of :mod:`eval` starts from one :class:`Resolved` question, so they
all see the same matching. A triple may carry the label space ``s, r, o``, the
id space ``s_id, r_id, o_id``, or both (:mod:`tempbench_core.schema`).

Under ``key='auto'`` an item is compared in the id space when both it and the
gold carry ids, else in the label space when both carry labels, else an
:class:`~tempbench_core.errors.EvidenceError` names the keys of each side. A
5-tuple/list ``(s, r, o, t_start, t_end)`` is compared in the gold's space
(labels when the gold carries labels, ids when it carries ids only).
``key='label'``/``key='id'`` force one space on both sides.

Evidence mixing both spaces (reading chosen here, outside the conformance
domain): gold triples are identified in the id space; an item compared in the
label space stands for the first ``S_star`` triple with its labels.

The gold is grouped into *classes*: the distinct ``(s, r, o)`` of ``S_star`` in
the primary space, in ``S_star`` order; ``Item.cls`` is the class an item
matches (``-1`` for none).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tempbench_core.errors import EvidenceError
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, SPACE_KEYS, TIME_KEYS, carried_spaces, valid_at

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
        return value
    if value is None or isinstance(value, (list, tuple, dict)):
        raise EvidenceError(f"{what} is {value!r}; expected a number")
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int beyond float range
        raise EvidenceError(f"{what} is {value!r}; expected a number") from None


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
        ts = _to_float(item["t_start"], f"{kind} item {pos} of {where}: t_start") if type(item["t_start"]) is not float else item["t_start"]
        te = _to_float(item["t_end"], f"{kind} item {pos} of {where}: t_end") if type(item["t_end"]) is not float else item["t_end"]
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
        return float(score)
    except (TypeError, ValueError, OverflowError):
        return None


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
