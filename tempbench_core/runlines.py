"""Run files read line by line as raw bytes, for readers that share the records of several runs.

Two runs of one configuration (an original and its reproduction) hold mostly
byte-identical lines. :func:`run_lines` gives a run file's lines as bytes, so a
caller can parse each distinct line once (:func:`plain_records`) and resolve
it once for every run that holds it.

This is a fast path of :func:`tempbench_core.runfile.read_run` for the common
case only, a JSON Lines run file of SPEC §6.1 that read_run returns as it is:
every line a JSON object that orjson reads exactly as :mod:`json` does, with a
string ``id``, an ``evidence`` list and an optional ``cutoff_ties`` list (or
null) of plain triple dicts, no id twice. Anything else (a blank line, a BOM, a
long integer, NaN, another form of SPEC §1.4, a problem read_run reports) is
``None``: the caller then reads the file with read_run, which also names the
problem. :func:`read_plain_run` is what read_run returns, when the fast path
applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from tempbench_core.errors import InputError
from tempbench_core.jsonl import has_long_int, read_input_bytes, require_file
from tempbench_core.runfile import RunRecords

_NUMBERS = frozenset((int, float))
_SCORES = frozenset((int, float, type(None)))
_ID3 = itemgetter("s_id", "r_id", "o_id")
_LABEL3 = itemgetter("s", "r", "o")


def run_lines(path: str | Path) -> list[bytes] | None:
    """The lines of a run file as raw bytes (a ``.gz`` file decompressed), or ``None`` when read_run must read it.

    ``None`` for what this fast path leaves to read_run: a UTF-8 BOM, or no line
    at all (a damaged gzip stream: read_run reports it). A missing file raises as
    read_run would.
    """
    path = require_file(path, "run file")
    try:
        data = read_input_bytes(path)
    except InputError:
        return None  # read_run reports it with its own words
    if not data or data.startswith(b"\xef\xbb\xbf"):
        return None
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    return lines


def parse_line(line: bytes) -> dict[str, Any] | None:
    """One line as a plain record (:func:`plain_records`' rules for the record itself), or ``None``.

    ``None`` also for a line with a run of 19 digits, which orjson might read
    as a float where read_run reads an integer.
    """
    if has_long_int(line):
        return None
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None  # blank, NaN, a lone surrogate, invalid UTF-8, ...: read_run's careful path
    if type(rec) is not dict or type(rec.get("id")) is not str or type(rec.get("evidence")) is not list:
        return None
    ties = rec.get("cutoff_ties")
    if ties is not None and type(ties) is not list:
        return None
    return rec


def plain_items(items: Sequence[Any]) -> bool:
    """Whether every item is a triple dict read_run keeps as it is (``runfile._plain_item``), tested column-wise."""
    if not items:
        return True
    if set(map(type, items)) != {dict}:
        return False
    try:
        times = chain(map(itemgetter("t_start"), items), map(itemgetter("t_end"), items))
        if not set(map(type, times)) <= _NUMBERS:
            return False
    except KeyError:
        return False
    if not set(map(type, map(dict.get, items, repeat("score")))) <= _SCORES:
        return False
    for getter in (_ID3, _LABEL3):
        try:
            list(map(getter, items))
        except KeyError:
            continue
        return True
    # each item carries a whole space, but not every item the same one
    return all(("s_id" in it and "r_id" in it and "o_id" in it) or ("s" in it and "r" in it and "o" in it)
               for it in items)


def plain_records(records: Sequence[dict[str, Any] | None]) -> bool:
    """Whether every parsed record (:func:`parse_line`) holds only plain items, in evidence and cut-off ties."""
    if any(rec is None for rec in records):
        return False
    evidence = list(chain.from_iterable(rec["evidence"] for rec in records))
    ties = list(chain.from_iterable(rec.get("cutoff_ties") or () for rec in records))
    return plain_items(evidence) and plain_items(ties)


def as_run_record(rec: dict[str, Any]) -> dict[str, Any]:
    """A parsed plain record as read_run returns it (``cutoff_ties`` a list, ``[]`` when absent or null)."""
    if rec.get("cutoff_ties") is None:
        rec["cutoff_ties"] = []
    return rec


def read_plain_run(path: str | Path) -> RunRecords | None:
    """:func:`~tempbench_core.runfile.read_run` of a plain run file (module docstring), or ``None``.

    The same records, in the same order, with the same ``path`` and ``lines``.
    """
    lines = run_lines(path)
    if lines is None:
        return None
    records = [parse_line(line) for line in lines]
    if not plain_records(records):
        return None
    out = RunRecords()
    out.path = Path(path)
    out.lines = {}
    any_items = False
    for number, rec in enumerate(records, start=1):
        qid = rec["id"]  # type: ignore[index]
        if qid in out.lines:
            return None  # read_run names the duplicate
        out.lines[qid] = number
        out[qid] = as_run_record(rec)  # type: ignore[arg-type]
        any_items = any_items or bool(out[qid]["evidence"]) or bool(out[qid]["cutoff_ties"])
    out.item_form = "triple" if any_items else ""
    return out
