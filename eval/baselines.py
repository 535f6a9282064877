"""Read a published baselines file whose layout is not known in advance (SPEC §1.4).

Two families, recognised by sniffing keys, never by file name:

- **per-question evidence**: records with a question id and an evidence list,
  read by the one run reader, :func:`tempbench_core.runfile.read_run` (so a
  baseline is scored exactly like the same evidence written as a run file);
- **metric tables** keyed by metric and slice (:mod:`eval.metric_tables`).

Anything else raises :class:`~tempbench_core.errors.InputError` naming the keys
that were found and the keys that were expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.metric_tables import MetricBaseline, flatten_rows, metric_table_from_json, read_csv_table
from tempbench_core.errors import InputError
from tempbench_core.jsonl import first_of_several, json_type, read_jsonl, refuse_lone_surrogates, require_file
from tempbench_core.runfile import EVIDENCE_FIELDS, ID_FIELDS, RunRecords, read_run
from tempbench_core.text import terminal_text

TABLE_SUFFIXES = (".csv", ".tsv")
#: The files of a ``baselines/`` folder that are read (a run's ``.meta.json`` is not).
BASELINE_SUFFIXES = (".jsonl", ".json", *TABLE_SUFFIXES)
_EXPECTED = (
    "per-question records with a question id key (" + "/".join(ID_FIELDS) + ") and an evidence list key ("
    + "/".join(EVIDENCE_FIELDS) + "), or a metric table keyed by metric and slice (e.g. TRP/CCR per complexity or operator)"
)


def is_baseline_file(path: Path) -> bool:
    """Whether a file of a ``baselines/`` folder is read (:data:`BASELINE_SUFFIXES`, not a ``.meta.json``)."""
    return path.suffix.lower() in BASELINE_SUFFIXES and not path.name.endswith(".meta.json")


def match_config(stem: str, configs: list[str]) -> str | None:
    """The configuration a baselines file is about: the longest configuration name in its stem."""
    lowered = stem.lower().replace("-", "_")
    hits = [c for c in configs if c in lowered]
    return max(hits, key=len) if hits else None


def is_evidence_record(record: Any) -> bool:
    """Whether a record carries a question id and an evidence list (SPEC §1.4)."""
    return (isinstance(record, dict) and any(k in record for k in ID_FIELDS)
            and any(isinstance(record.get(k), list) for k in EVIDENCE_FIELDS))


def _found(obj: Any) -> str:
    """What a baselines file holds instead of a run or a table, in a few words."""
    if isinstance(obj, dict):
        return "found keys [" + ", ".join(sorted(map(str, obj))[:20]) + "]"
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        return "found keys [" + ", ".join(sorted(map(str, obj[0]))[:20]) + "]"
    return "the file is empty" if obj is None else f"found a JSON {json_type(obj)}"


def _refuse_repeated_keys(path: Path, text: str) -> None:
    """Refuse a JSON metric table in which one object holds a key twice (JSON readers keep the last, silently)."""
    repeated: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out and not repeated:
                repeated.append(key)
            out[key] = value
        return out

    json.loads(text, object_pairs_hook=pairs)  # a table is small: read again, this time seeing every key
    if repeated:
        raise InputError(path, None, f"the key {terminal_text(repr(repeated[0]))} appears twice in one JSON object",
                         "each key once in an object (JSON readers keep only the last value)")


def load_baseline(path: str | Path) -> RunRecords | MetricBaseline:
    """Sniff and read one baselines file (SPEC §1.4).

    Parameters
    ----------
    path:
        A ``.jsonl``/``.json`` file of per-question evidence or metrics, or a
        ``.csv``/``.tsv`` metric table.

    Returns
    -------
    RunRecords or MetricBaseline
        Evidence (as :func:`~tempbench_core.runfile.read_run` reads it), or a table.
    """
    p = require_file(path, "baselines file")
    if p.suffix.lower() in TABLE_SUFFIXES:
        return read_csv_table(p)
    if is_evidence_record(first_of_several(p)):
        return read_run(p)  # a run's JSONL, told from its first line: the file is read once, by the reader of runs
    try:
        text = p.read_bytes().decode("utf-8-sig")
        whole = json.loads(text)
        refuse_lone_surrogates(p, None, whole, text)
        records = whole if isinstance(whole, list) else [whole]
        first_line = None
    except (ValueError, RecursionError):
        whole = None
        rows = list(read_jsonl(p, objects_only=False))
        records = [r for _, r in rows]
        first_line = rows[0][0] if rows else None
    if records and is_evidence_record(records[0]):
        return read_run(p)
    values: dict = {}
    if whole is not None and metric_table_from_json(whole, values):
        _refuse_repeated_keys(p, text)
        return MetricBaseline(path=p, values=values)
    skipped: list[str] = []
    if whole is None and records and flatten_rows(records, values, skipped, first_line=first_line or 1):
        return MetricBaseline(path=p, values=values, skipped=skipped)
    sample = whole if whole is not None else (records[0] if records else None)
    raise InputError(p, first_line, f"unrecognised baselines file: {_found(sample)}", _EXPECTED)
