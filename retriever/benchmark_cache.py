"""A validated benchmark kept in the per-user cache, read back instead of checked again.

:func:`retriever.benchmark.load_benchmark` reads two JSON Lines files line by
line, checks every record (SPEC §1.3) and merges the id space into the
labelled triples: about a third of a second for the 8,710 questions of the
full data, paid by every command before its real work starts. What it returns
depends on the two files' bytes and on this package's rules alone, so it is
kept under a key made of both files' sha256
(:func:`tempbench_core.digest.sha256_file`, itself remembered by file
status), the package version, :data:`FORMAT` and the sources of the modules
whose rules decide the records (:data:`_RULES`), in
``<cache>/benchmarks/<key>.json``: a line naming the key, the number of
questions and the sha256 of the rest, then the records as one JSON array. A
later load with the same files checks that sha256 and reads the array (one
:func:`orjson.loads`) instead of checking every record again.

An entry is written only when it gives the records back as they were read
(a value only Python's :mod:`json` reads, such as ``NaN`` in an extra field or
an integer beyond 64 bits, would not survive; such a benchmark is simply read
from its files each time), atomically, and read back only when it names its own
key and its checksum holds: a damaged or foreign entry is ignored and written again. A
cache that cannot be written costs only the time saved.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

import orjson

from tempbench_core.atomic import atomic_open
from tempbench_core.digest import sha256_file, sha256_json
from tempbench_core.errors import OutputError
from tempbench_core.jsonl import dumps_strict_bytes
from tempbench_core.layout import cache_home
from tempbench_core.memory import gc_paused
from tempbench_core.version import __version__

#: The entry layout: raised when it changes, so older entries are not read.
FORMAT = 1

#: The modules whose rules decide what the loader returns: their sources are part of the key, so an entry
#: made under other rules (another version, or a working copy being edited) is not read.
_RULES = ("retriever.benchmark", "tempbench_core.schema")


def entry_path(path: Path, ids_path: Path | None) -> tuple[Path, str] | None:
    """Where the records of ``path`` (merged with ``ids_path``) are kept, and their key.

    ``None`` when a file cannot be read: the loader then reads it, and says what is wrong.
    """
    try:
        digests = [sha256_file(p) if p is not None else "-" for p in (path, ids_path)]
        rules = [sha256_file(Path(sys.modules[name].__file__ or "")) for name in _RULES]
    except (OSError, KeyError):
        return None
    key = sha256_json([FORMAT, __version__, *digests, *rules])
    return cache_home() / "benchmarks" / f"{key}.json", key


def read_entry(entry: Path, key: str) -> list[dict[str, Any]] | None:
    """The records kept in ``entry`` under ``key``, or ``None`` (none kept, or not a sound entry)."""
    try:
        data = entry.read_bytes()
    except OSError:
        return None
    head, _, body = data.partition(b"\n")
    try:
        header = orjson.loads(head)
    except orjson.JSONDecodeError:
        return None
    if not (type(header) is dict and header.get("format") == FORMAT and header.get("key") == key
            and header.get("sha256") == hashlib.sha256(body).hexdigest()):
        return None
    with gc_paused():  # tens of thousands of new dicts: no collection needed while they are made
        records = orjson.loads(body)
    if type(records) is not list or len(records) != header.get("questions"):
        return None
    return records if all(type(r) is dict for r in records) else None


def write_entry(entry: Path, key: str, records: list[dict[str, Any]]) -> bool:
    """Keep ``records`` in ``entry`` when :func:`read_entry` would give them back as they are; whether it was written.

    As they are: equal (a NaN, written ``null``, is not) and written alike
    (an integer beyond 64 bits, read back as a float, is equal but not alike).
    """
    body = dumps_strict_bytes(records)
    with gc_paused():
        back = orjson.loads(body)
        if back != records or dumps_strict_bytes(back) != body:
            return False
    header = {"format": FORMAT, "key": key, "questions": len(records), "sha256": hashlib.sha256(body).hexdigest()}
    try:
        # no fsync: an entry cut short or damaged fails its checksum, and is written again
        with atomic_open(entry, "wb", encoding=None, fsync=False) as handle:
            handle.write(dumps_strict_bytes(header) + b"\n")
            handle.write(body)
    except (OSError, OutputError):
        return False
    return True
