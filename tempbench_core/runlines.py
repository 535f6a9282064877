"""Run files read line by line as raw bytes, for readers that share the records of several runs.

Two runs of one configuration (an original and its reproduction) hold mostly
byte-identical lines. :func:`run_lines` gives a run file's lines as bytes, so a
caller can parse each distinct line once (:func:`parse_line`) and resolve it
once for every run that holds it (:mod:`eval.repro.distinct`).

This is a fast path of :func:`tempbench_core.runfile.read_run` for the common
case only, a JSON Lines run file of SPEC §6.1 that read_run returns as it is:
every line a JSON object that orjson reads exactly as :mod:`json` does, with a
string ``id``, an ``evidence`` list and an optional ``cutoff_ties`` list (or
null). Anything else (a blank line, a BOM, a long integer, NaN, another form of
SPEC §1.4, a problem read_run reports) is ``None``: the caller then reads the
file with read_run, which also names the problem. The items are the caller's
to check (read_run keeps an item as it is when it is a dict with a whole key
space, numeric times and a numeric or null score, :func:`eval.plain_table.plain_items`
with ``run_form``), as are duplicate ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from tempbench_core.errors import InputError
from tempbench_core.jsonl import has_long_int, read_input_lines, require_file


def run_lines(path: str | Path) -> list[bytes] | None:
    """The lines of a run file as raw bytes (a ``.gz`` file decompressed), or ``None`` when read_run must read it.

    A line keeps its ``b"\\n"`` (what orjson skips as whitespace; a blank line is ``b"\\n"``, which
    :func:`parse_line` leaves to read_run as it did ``b""``).

    ``None`` for what this fast path leaves to read_run: a UTF-8 BOM, or no line
    at all (a damaged gzip stream: read_run reports it). A missing file raises as
    read_run would.
    """
    path = require_file(path, "run file")
    try:
        lines = read_input_lines(path)
    except InputError:
        return None  # read_run reports it with its own words
    if not lines or lines[0].startswith(b"\xef\xbb\xbf"):
        return None
    return lines


def parse_line(line: bytes) -> dict[str, Any] | None:
    """One line as a record read_run keeps as it is (its items aside), or ``None``.

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
