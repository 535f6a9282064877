"""Benchmark and functional-flag files (SPEC §1.3).

:func:`load_benchmark` returns the validated question records in file order.
Every problem a user can cause (a truncated or non-JSON line, a missing field, a
wrong type, an unknown split, an empty ``S_star``) raises
:class:`~tempbench_core.errors.InputError` naming the file and line. Unknown extra
fields are kept untouched.

With ``ids_path`` (``benchmark.jsonl``, the Wikidata id space) the id keys
``s_id, r_id, o_id`` are merged into the labelled triples by question id and
position, so each triple carries both key spaces (SPEC §1.3, §3.1).

The id file may cover only some questions, and some of its triples may lack
ids (SPEC §2.3 lists the label as the oracle's last resort): a question without
an id-space twin, and a triple whose twin lacks any of ``s_id, r_id, o_id`` (or
has it empty or ``null``), simply stay in the label space. Such questions
resolve their oracle anchor by label and harvest no labels; runs count them
(``oracle_by_label`` in ``.meta.json``) and ``tempbench check`` reports the
coverage. What still refuses the file: a question id the labelled file does not
have, a different number of triples in a list, a time that disagrees, an id of
the wrong type.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from retriever.benchmark_cache import entry_path, read_entry, write_entry
from tempbench_core.errors import InputError
from tempbench_core.jsonl import read_jsonl
from tempbench_core.memory import gc_paused
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, SPLITS, TIME_KEYS, TRIPLE_LISTS

# field -> (accepted types, description)
_SCALARS: dict[str, tuple[tuple[type, ...], str]] = {
    "id": ((str, int), "a string id"),
    "split": ((str,), "one of train/dev/test"),
    "question": ((str,), "a string"),
    "answer": ((str, int, float, list), "a string, number or list of aliases"),
    "t_query": ((int, float), "a number such as 1994.0"),
    "complexity": ((str,), "a string such as '2hop'"),
    "operator_type": ((str,), "a string such as 'point_in_time'"),
}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_NUMBER_TYPES = (int, float)
_STRING_KEYS = (*LABEL_KEYS, *ID_KEYS)


class _Absent:
    """The value :func:`_plain_triple` sees for a key a triple does not have."""


_ABSENTS = (_Absent(),) * len(_STRING_KEYS)
_PLAIN_VALUE_TYPES = frozenset((str, _Absent))


def _plain_triple(triple: Any) -> bool:
    """Whether :func:`_check_triple` accepts ``triple``, decided cheaply for the common case (a sufficient test).

    A dict with a full key space of strings (no other key of either space that
    is not a string) and numeric times in order; anything else is checked in full.
    """
    if type(triple) is not dict:
        return False
    ts, te = triple.get("t_start"), triple.get("t_end")
    if type(ts) not in _NUMBER_TYPES or type(te) not in _NUMBER_TYPES or not ts <= te:  # NaN fails <=
        return False
    if not (("s" in triple and "r" in triple and "o" in triple) or ("s_id" in triple and "r_id" in triple and "o_id" in triple)):
        return False
    # every key of either space that is there holds a string (one C-level pass over the six keys)
    return set(map(type, map(triple.get, _STRING_KEYS, _ABSENTS))) <= _PLAIN_VALUE_TYPES


def _check_triple(path: Path, line: int, where: str, triple: Any) -> None:
    if not isinstance(triple, dict):
        raise InputError(path, line, f"{where} is a {type(triple).__name__}", "a triple object")
    has_label = all(k in triple for k in LABEL_KEYS)
    has_id = all(k in triple for k in ID_KEYS)
    if not (has_label or has_id):
        missing_l = [k for k in LABEL_KEYS if k not in triple]
        missing_i = [k for k in ID_KEYS if k not in triple]
        raise InputError(
            path, line, f"{where} lacks {', '.join(missing_l)} (label space) and {', '.join(missing_i)} (id space)",
            "s, r, o and/or s_id, r_id, o_id",
        )
    for k in (*LABEL_KEYS, *ID_KEYS):
        if k in triple and not isinstance(triple[k], (str, int)):
            raise InputError(path, line, f"{where}.{k} is {triple[k]!r}", "a string")
    for k in TIME_KEYS:
        if k not in triple:
            raise InputError(path, line, f"{where} has no {k}", "a number")
        if not _is_number(triple[k]) or math.isnan(triple[k]):
            raise InputError(path, line, f"{where}.{k} is {triple[k]!r}", "a number")
    if triple["t_start"] > triple["t_end"]:
        raise InputError(path, line, f"{where} ends before it starts (t_start {triple['t_start']!r} > t_end {triple['t_end']!r})",
                         "t_start <= t_end")


def validate_record(path: Path, line: int, obj: dict[str, Any]) -> None:
    """Raise :class:`InputError` unless ``obj`` is a SPEC §1.3 question record."""
    for name, (types, expected) in _SCALARS.items():
        if name not in obj:
            raise InputError(path, line, f"missing field '{name}'", expected)
        value = obj[name]
        if isinstance(value, bool) or not isinstance(value, types):
            raise InputError(path, line, f"field '{name}' is {value!r}", expected)
    if not math.isfinite(obj["t_query"]):
        raise InputError(path, line, f"field 't_query' is {obj['t_query']!r}", "a finite number such as 1994.0")
    if obj["split"] not in SPLITS:
        raise InputError(path, line, f"unknown split {obj['split']!r}", "one of train/dev/test")
    for name in TRIPLE_LISTS:
        if name not in obj:
            raise InputError(path, line, f"missing field '{name}'", "a list of triples")
        if not isinstance(obj[name], list):
            raise InputError(path, line, f"field '{name}' is a {type(obj[name]).__name__}", "a list of triples")
        for j, triple in enumerate(obj[name]):
            if not _plain_triple(triple):
                _check_triple(path, line, f"{name}[{j}]", triple)
    if not obj["S_star"]:
        raise InputError(path, line, f"question {obj['id']!r} has an empty S_star (invalid question)", "a non-empty gold chain")


def load_benchmark(path: str | Path, ids_path: str | Path | None = None) -> list[dict[str, Any]]:
    """Load and validate a benchmark JSONL file (SPEC §1.3).

    Parameters
    ----------
    path:
        ``benchmark_labelled.jsonl`` (or the id-space ``benchmark.jsonl``).
    ids_path:
        Optional ``benchmark.jsonl``: its ``s_id, r_id, o_id`` are merged into
        the triples of ``path`` by question id and triple position.

    Returns
    -------
    list of dict
        The records in file order, extra fields kept.

    A benchmark read once is kept in the per-user cache and read from there
    while both files are unchanged (:mod:`retriever.benchmark_cache`).
    """
    path = Path(path)
    found = entry_path(path, Path(ids_path) if ids_path is not None else None)
    kept = read_entry(*found) if found is not None else None
    if kept is not None:
        return kept
    records = _read_benchmark(path, ids_path)
    if found is not None:
        write_entry(*found, records)
    return records


def _read_benchmark(path: Path, ids_path: str | Path | None) -> list[dict[str, Any]]:
    """The records of ``path`` read and checked line by line, ``ids_path``'s ids merged (:func:`load_benchmark`)."""
    records: list[dict[str, Any]] = []
    lines: dict[Any, int] = {}
    with gc_paused():  # tens of thousands of new dicts: no collection needed while they are made
        for line, obj in read_jsonl(path):
            validate_record(path, line, obj)
            if obj["id"] in lines:
                raise InputError(path, line, f"duplicate question id {obj['id']!r} (first on line {lines[obj['id']]})", "unique ids")
            lines[obj["id"]] = line
            records.append(obj)
        if ids_path is not None:
            _merge_ids(records, lines, path, Path(ids_path))
    return records


def _merge_ids(records: list[dict[str, Any]], lines: dict[Any, int], path: Path, ids_path: Path) -> None:
    by_id = {r["id"]: r for r in records}
    seen: dict[Any, int] = {}
    for line, obj in read_jsonl(ids_path):
        qid = obj.get("id")
        if isinstance(qid, bool) or not isinstance(qid, (str, int)):
            raise InputError(ids_path, line, f"field 'id' is {qid!r}", "a string id")
        if qid in seen:
            raise InputError(ids_path, line, f"duplicate question id {qid!r} (first on line {seen[qid]})", "unique ids")
        seen[qid] = line
        if qid not in by_id:
            raise InputError(ids_path, line, f"question id {qid!r} is not in {path.name}", "the same questions as the labelled file")
        target = by_id[qid]
        for name in TRIPLE_LISTS:
            theirs = obj.get(name)
            if not isinstance(theirs, list):
                raise InputError(ids_path, line, f"field '{name}' is missing or not a list", "a list of triples")
            ours = target[name]
            if len(theirs) != len(ours):
                raise InputError(
                    ids_path, line, f"{name} of {qid!r} has {len(theirs)} triples, {path.name} line {lines[qid]} has {len(ours)}",
                    "the same triples in the same order",
                )
            for j, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
                if type(other) is dict:
                    # the common case, decided without building messages: three non-empty string ids
                    # and the same times (or none) on both sides
                    a, b, c = other.get("s_id"), other.get("r_id"), other.get("o_id")
                    if (type(a) is str and type(b) is str and type(c) is str and a and b and c
                            and other.get("t_start", mine.get("t_start")) == mine.get("t_start")
                            and other.get("t_end", mine.get("t_end")) == mine.get("t_end")
                            and ("t_start" in mine or "t_start" not in other) and ("t_end" in mine or "t_end" not in other)):
                        mine.setdefault("s_id", a)
                        mine.setdefault("r_id", b)
                        mine.setdefault("o_id", c)
                        continue
                where = f"{name}[{j}]"
                if not isinstance(other, dict):
                    raise InputError(ids_path, line, f"{where} is a {type(other).__name__}", "an id-space triple object")
                for tk in TIME_KEYS:
                    if tk in other and tk in mine and other[tk] != mine[tk]:
                        raise InputError(
                            ids_path, line, f"{where}.{tk} is {other[tk]!r} but {path.name} line {lines[qid]} has {mine[tk]!r}",
                            "the same triple in both files",
                        )
                for k in ID_KEYS:
                    value = other.get(k)
                    if value is not None and (not isinstance(value, (str, int)) or isinstance(value, bool)):
                        raise InputError(ids_path, line, f"{where}.{k} is {value!r}", "a string")
                if any(other.get(k) in (None, "") for k in ID_KEYS):
                    # A triple without (all of) its ids stays in the label space (SPEC §2.3 fallback).
                    continue
                for k in ID_KEYS:
                    # An id the labelled triple carries itself comes first (SPEC §2.3).
                    mine.setdefault(k, other[k])
    # Questions without a twin keep the label space only (SPEC §2.3 fallback).


def load_flags(path: str | Path) -> dict[str, dict[str, bool]]:
    """Load ``functional_negatives.jsonl``: id -> ``{stale_functional, dist_functional}``."""
    path = Path(path)
    out: dict[str, dict[str, bool]] = {}
    for line, obj in read_jsonl(path):
        if "id" not in obj:
            raise InputError(path, line, "missing field 'id'", "a question id")
        if isinstance(obj["id"], bool) or not isinstance(obj["id"], (str, int)):
            raise InputError(path, line, f"field 'id' is {obj['id']!r}", "a string id")
        entry = {}
        for name in ("stale_functional", "dist_functional"):
            if name not in obj:
                raise InputError(path, line, f"missing field '{name}'", "true or false")
            if not isinstance(obj[name], bool):
                raise InputError(path, line, f"field '{name}' is {obj[name]!r}", "true or false")
            entry[name] = obj[name]
        if obj["id"] in out:
            raise InputError(path, line, f"duplicate id {obj['id']!r}", "one line per question")
        out[obj["id"]] = entry
    return out
