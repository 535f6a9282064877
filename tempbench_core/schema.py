"""The shapes every layer shares: benchmark triples, splits, configuration names, time.

One definition of each naming and time rule of the specification:

- a triple carries the *label space* ``s, r, o`` and/or the *id space*
  ``s_id, r_id, o_id``, plus ``t_start, t_end`` (SPEC §1.3);
- a triple (or KG row) is valid at the query time when
  ``t_start <= t_query <= t_end``, compared as floats (SPEC §2.4, §3.1);
- a query time selects a point-in-time KG year only when it is a whole,
  finite number (SPEC §2.4: never rounded);
- the four shipped configurations of SPEC §2.6, in the paper's order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from tempbench_core.errors import ConfigError, RunMismatchError

LABEL_KEYS = ("s", "r", "o")
ID_KEYS = ("s_id", "r_id", "o_id")
TIME_KEYS = ("t_start", "t_end")
SPACE_KEYS = {"id": ID_KEYS, "label": LABEL_KEYS}
#: Each id key with the label key it names (harvesting labels, SPEC §1.2).
ID_LABEL_PAIRS = tuple(zip(ID_KEYS, LABEL_KEYS, strict=True))
#: The triple lists of a benchmark question (SPEC §1.3).
TRIPLE_LISTS = ("S_star", "S_dist", "S_stale")

SPLITS = ("train", "dev", "test")
#: What ``--split`` accepts: a split, or ``all`` for every question.
SPLIT_CHOICES = ("test", "dev", "train", "all")
#: The split a run, an audit and a reproduction use unless told otherwise (the paper's).
DEFAULT_SPLIT = "test"

#: The shipped configurations of SPEC §2.6, in the paper's order.
SHIPPED_CONFIGS = ("oracle", "nonoracle", "stale_blind", "hop3_k25")


def select_split(questions: Sequence[Any], split: str) -> list[Any]:
    """The questions of ``split`` in file order (``all``: every question); an unknown split is an error."""
    if split not in SPLIT_CHOICES:
        raise ConfigError(f"unknown split {split!r} (expected one of {', '.join(SPLIT_CHOICES)})")
    return list(questions) if split == "all" else [q for q in questions if q.get("split") == split]


def require_split(questions: Sequence[Any], split: str) -> list[Any]:
    """:func:`select_split`, refusing a split that selects no question (a run or a score of nothing)."""
    chosen = select_split(questions, split)
    if not chosen:
        if not questions:
            raise RunMismatchError("the benchmark holds no question (expected at least one question record)")
        splits = sorted({str(q.get("split")) for q in questions})
        raise RunMismatchError(f"no benchmark question has split {split!r} (splits: {', '.join(splits)})")
    return chosen


def carried_spaces(obj: Any) -> list[str]:
    """The key spaces a triple dict carries in full: ``"id"`` and/or ``"label"``."""
    out = []
    if all(k in obj for k in ID_KEYS):
        out.append("id")
    if all(k in obj for k in LABEL_KEYS):
        out.append("label")
    return out


def valid_at(t_start: Any, t_end: Any, t_query: Any) -> Any:
    """``t_start <= t_query <= t_end`` (SPEC §2.4, §3.1).

    Works on floats and, elementwise, on numpy arrays (hence ``&`` rather than
    a chained comparison).
    """
    return (t_start <= t_query) & (t_query <= t_end)


def whole_year(t_query: Any) -> int | None:
    """The integer year equal to ``t_query``, or ``None`` when it is not a whole finite number.

    A point-in-time row of year ``y`` is valid exactly when ``whole_year(t_query) == y``
    (SPEC §2.4); ``1994.5`` selects no year, it is never rounded.
    """
    value = float(t_query)
    return int(value) if math.isfinite(value) and value.is_integer() else None


def format_year(value: Any) -> str:
    """A time for people: ``1994`` for a whole number, else the float's shortest text.

    The one rule for printing a year or a timestamp: a plain integer, never with
    thousands separators (``1900``, not ``1,900``). An integer is printed exactly,
    however long (a float would round ``999999999999999999``).
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if hasattr(value, "dtype") and getattr(value.dtype, "kind", "") in "iu":
        return str(int(value))
    year = whole_year(value)
    return str(year) if year is not None else repr(float(value))


def format_span(t_start: Any, t_end: Any) -> str:
    """``"1994"`` when both ends are equal, else ``"1990-1994"`` (the ``t`` of SPEC §2.5's line)."""
    return format_year(t_start) if t_start == t_end else f"{format_year(t_start)}-{format_year(t_end)}"
