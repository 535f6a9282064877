"""Run files read line by line as raw bytes, for readers that share the records of several runs.

Two runs of one configuration (an original and its reproduction) hold mostly
byte-identical lines. :func:`run_lines` gives a run file's lines as bytes, one
at a time, so a caller can read the runs side by side, decode each distinct
line once (:func:`parse_line`) and resolve it once for every run that holds it
(:mod:`eval.repro.distinct`).

This is a fast path of :func:`tempbench_core.runfile.read_run` for the common
case only, a JSON Lines run file of SPEC §6.1 whose records read_run keeps as
they are: a JSON object with a string ``id``, an ``evidence`` list and an
optional ``cutoff_ties`` list (or null), every item an object with numeric
``t_start`` and ``t_end`` and a numeric, null or absent ``score``. Such a line
is decoded straight into the fields read in one key space (:class:`IdLine`
of :class:`IdItem`, or :class:`LabelLine` of :class:`LabelItem`; ``msgspec``
skips the other fields, the other space's keys included, without building
them), which is where most of the time of ``tempbench repro`` went. Anything
else is ``None``: the caller then reads the file with read_run, which also
names the problem. The caller picks the space: the one its question's items
are read in (a line read in the other space first is decoded again).

Why a decoded line equals read_run's record in every field read here:

* ``msgspec`` (0.19 on; 0.18 wrapped 20-digit integers above 2**64 around)
  reads a number into a ``float`` field correctly rounded, as ``float()``
  reads the value :mod:`json` gives (an integer of any length included; one
  beyond the float range is an error, never ``inf``), takes the
  last of duplicate keys, as :mod:`json` does, and unescapes keys;
* it refuses what read_run refuses in a field it reads (invalid UTF-8, lone
  surrogate escapes, NaN, a boolean where a number is expected) and, in a
  field it skips, everything but invalid UTF-8: that is tested on the whole
  line first (UTF-8-encoded surrogates included, which :mod:`json` would pass
  on to read_run's refusal);
* the other key space's keys are not read: read_run keeps an item whatever
  they hold (its whole key space, times and score are what it checks), and the
  scorer reads each question's items in one space.

An item lacking a key of the space makes the line ``None`` in that space
(the caller may decode it in the other, whose keys it may carry: the
question's space decides). Duplicate ids are the caller's to check.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from pathlib import Path
from typing import ClassVar

import msgspec

from tempbench_core.errors import InputError
from tempbench_core.jsonl import iter_input_lines, require_file


class IdItem(msgspec.Struct, gc=False):
    """An evidence (or cut-off tie) item read in the id space: its ids (required), times and score."""

    s_id: str
    r_id: str
    o_id: str
    t_start: float
    t_end: float
    score: float | None = None


class LabelItem(msgspec.Struct, gc=False):
    """An item read in the label space (:class:`IdItem`'s twin)."""

    s: str
    r: str
    o: str
    t_start: float
    t_end: float
    score: float | None = None


class IdLine(msgspec.Struct, gc=False):
    """A record read in the id space: its id and its two lists (``cutoff_ties`` ``None`` when absent)."""

    #: the key space its items were read in
    space: ClassVar[str] = "id"
    id: str
    evidence: list[IdItem]
    cutoff_ties: list[IdItem] | None = None


class LabelLine(msgspec.Struct, gc=False):
    """A record read in the label space (:class:`IdLine`'s twin)."""

    space: ClassVar[str] = "label"
    id: str
    evidence: list[LabelItem]
    cutoff_ties: list[LabelItem] | None = None


#: A decoded record, in one key space.
RunLine = IdLine | LabelLine

_DECODERS = {"id": msgspec.json.Decoder(IdLine), "label": msgspec.json.Decoder(LabelLine)}
_ENCODER = msgspec.json.Encoder()


def run_lines(path: str | Path) -> Iterator[bytes] | None:
    """The lines of a run file as raw bytes, one at a time (a ``.gz`` file decompressed), or ``None`` when read_run must read it.

    A line keeps its ``b"\\n"`` (JSON whitespace; a blank line is ``b"\\n"``,
    which :func:`parse_line` leaves to read_run). No line is kept here: a
    reader holds only the lines it compares.

    ``None`` for what this fast path leaves to read_run: a UTF-8 BOM, or no line
    at all. A missing file raises as read_run would; a gzip stream damaged after
    its first line raises :class:`~tempbench_core.errors.InputError` where it
    breaks off (read_run reports it with its own words).
    """
    path = require_file(path, "run file")
    lines = iter_input_lines(path)
    try:
        first = next(lines, None)
    except InputError:
        return None  # read_run reports it with its own words
    if first is None or first.startswith(b"\xef\xbb\xbf"):
        lines.close()
        return None
    return chain((first,), lines)


def parse_line(line: bytes, space: str) -> RunLine | None:
    """One line decoded in ``space`` (``"id"`` or ``"label"``; module docstring), or ``None`` when read_run must read it."""
    if not line.isascii():
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        return _DECODERS[space].decode(line)
    except (msgspec.DecodeError, RecursionError):  # a ValidationError too; RecursionError: nested too deep
        return None


def same_record(a: RunLine, b: RunLine) -> bool:
    """Whether two decoded lines hold the same value in every field read (read in one space; ``-0.0`` is not ``0.0``).

    Two lines that differ in bytes (another writer's field order, number
    format or extra fields) but not here read the same: a reader may give
    them one row. Equal floats are written alike and ``-0.0`` is written
    apart from ``0.0``, so the encodings tell the zeros apart where ``==``
    does not.
    """
    return type(a) is type(b) and a == b and _ENCODER.encode(a) == _ENCODER.encode(b)
