"""Run files (SPEC §6.1): ``<name>.jsonl`` plus ``<name>.meta.json``; writing and reading.

Writing: one JSON object per line, compact separators, UTF-8 (``ensure_ascii=False``),
keys in the order the retriever builds them, floats as Python's shortest
round-trip ``repr``: the same run always gives the same bytes. Both files are
written atomically (:mod:`tempbench_core.atomic`).

Reading (:func:`read_run`) is the one reader of per-question evidence, used by
every command that takes a run: a run file of SPEC §6.1, a hand-written
evidence file, or a published baselines file of SPEC §1.4. Forms, sniffed by
keys (never by file name):

- JSON Lines, or one JSON list of records;
- the question id under ``id``, ``qid`` or ``question_id``; the evidence list
  under ``evidence``, ``retrieved``, ``triples`` or ``context`` (the first key of
  each list that the first record has); ``cutoff_ties`` optional;
- an item is a triple dict (label space ``s, r, o`` and/or id space ``s_id,
  r_id, o_id``, with ``t_start, t_end`` or one ``t`` such as ``"1994"`` or
  ``"1990-1994"``), a 5-list ``[s, r, o, t_start, t_end]``, or a rendered
  evidence line ``"s | r | o | t"`` (SPEC §2.5's default template).

Normalisation, so that a baseline scores exactly as the same evidence written
as a run file: a line becomes ``{s, r, o, t_start, t_end, line}`` when it has
exactly four fields and a year (or span) last, else ``{line}`` alone (it can be
diffed, not scored); a dict with ``t`` gains ``t_start``/``t_end``; when every
5-list of the file looks like Wikidata ids (``Q…``, ``P…``, ``Q…``) they become
id-space dicts, else they stay 5-lists (compared in the gold's space, SPEC
§3.1). Records of a run file in the SPEC §6.1 form are returned untouched.
Problems are reported with file and line.

Checking a run against what its ``.meta.json`` says it is for, before a
command computes on it (each a refusal, or with ``--force`` a warning):
:func:`read_meta` (a ``.meta.json`` that is there must be a JSON object; the
one of ``R.jsonl``, ``R.jsonl.gz``, ``R.json`` or ``R.json.gz`` is
``R.meta.json``), :func:`check_run_inputs` (the data, by sha256),
:func:`check_run_count` (the number of records) and :func:`check_run_split`
(the split, against a command's ``--split``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tempbench_core.atomic import atomic_open, write_json
from tempbench_core.errors import InputError
from tempbench_core.jsonl import (
    dumps_compact,
    dumps_compact_bytes,
    iter_input_lines,
    json_type,
    loads_fast,
    read_jsonl,
    refuse_lone_surrogates,
    require_file,
)
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, TIME_KEYS
from tempbench_core.text import terminal_text


def dumps_record(record: dict[str, Any]) -> str:
    """One run-file line (with its trailing newline): compact JSON, exactly :func:`json.dumps`'s bytes."""
    return dumps_compact(record) + "\n"


def dumps_record_bytes(record: dict[str, Any], floats_alike: bool = False) -> bytes:
    """:func:`dumps_record` as UTF-8 bytes (``floats_alike``: see :func:`~tempbench_core.jsonl.dumps_compact_bytes`)."""
    return dumps_compact_bytes(record, floats_alike) + b"\n"


#: The names of a run file (SPEC §1.4's per-question forms, each possibly gzip-compressed), longest first: its
#: ``.meta.json`` is its name without one of them (any case), as :func:`eval.repro.folders.run_name` names runs.
RUN_SUFFIXES = (".jsonl.gz", ".json.gz", ".jsonl", ".json")


def meta_path(run_path: str | Path) -> Path:
    """``runs/oracle.jsonl`` (or ``.jsonl.gz``, ``.json``, ``.json.gz``) -> ``runs/oracle.meta.json``.

    A name without one of :data:`RUN_SUFFIXES` keeps it whole: ``runs/oracle`` -> ``runs/oracle.meta.json``.
    """
    path = Path(run_path)
    name = path.name
    lowered = name.lower()
    for suffix in RUN_SUFFIXES:
        if lowered.endswith(suffix) and len(name) > len(suffix):
            return path.with_name(name[: -len(suffix)] + ".meta.json")
    return path.with_name(name + ".meta.json")


def write_run(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write run records atomically; returns the number written."""
    n = 0
    with atomic_open(path, "w") as handle:
        for record in records:
            handle.write(dumps_record(record))
            n += 1
    return n


def write_meta(run_path: str | Path, meta: dict[str, Any]) -> Path:
    """Write the run's metadata beside it, atomically."""
    target = meta_path(run_path)
    write_json(target, meta)
    return target


#: What a run's ``.meta.json`` must be, for the messages about one that is not.
META_EXPECTED = "a JSON object as `tempbench run` writes it beside the run; fix the file or delete it"


def read_meta(run_path: str | Path) -> dict[str, Any] | None:
    """The ``.meta.json`` beside a run file (:func:`meta_path`), or ``None`` when there is none.

    Raises
    ------
    InputError
        There is one, but it cannot be read, or it is not valid JSON, not an
        object, or empty: what it records (the data, the split, the number of
        records the run was made with) would otherwise go unchecked, silently.
    """
    target = meta_path(run_path)
    if not target.exists():
        return None

    def bad(problem: str, line: int | None = None) -> InputError:
        return InputError(target, line, f"the .meta.json of {terminal_text(run_path)} is {problem}", META_EXPECTED)

    if not target.is_file():
        raise bad("not a regular file")
    try:
        raw = target.read_bytes()
    except OSError as exc:
        raise bad(f"unreadable ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise bad(f"not UTF-8 (invalid byte at {exc.start})") from None
    if not text.strip():
        raise bad("an empty file")
    try:
        meta = json.loads(text)
    except json.JSONDecodeError as exc:
        raise bad(f"not valid JSON ({exc.msg}, column {exc.colno})", exc.lineno) from None
    except RecursionError:
        raise bad("not valid JSON (nested too deeply)") from None
    if not isinstance(meta, dict):
        raise bad(f"a JSON {json_type(meta)}, not an object")
    if not meta:
        raise bad("an empty object")
    refuse_lone_surrogates(target, None, meta, text)
    return meta


#: Keys a record may carry its question id / its evidence list under (SPEC §1.4), in order of preference.
ID_FIELDS = ("id", "qid", "question_id")
EVIDENCE_FIELDS = ("evidence", "retrieved", "triples", "context")
#: Separator of the default evidence line template (SPEC §2.5).
LINE_SEPARATOR = " | "

_WIKIDATA_ENTITY = re.compile(r"^Q\d+$")
_WIKIDATA_PROPERTY = re.compile(r"^P\d+$")
_YEAR_SPAN = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:-\s*(-?\d+(?:\.\d+)?)\s*)?$")
_EXPECTED_ITEMS = "items with s, r, o or s_id, r_id, o_id plus t_start, t_end (or a 5-list, or an evidence line)"


class RunRecords(dict):
    """``{question id: record}`` in file order, plus how the file was read.

    ``path`` is the file read and ``lines[qid]`` the 1-based line of the record,
    so that a problem found later (while scoring) can still name file and line.
    Every record has ``id``, ``evidence`` and ``cutoff_ties`` (normalised
    records of another form keep their other fields). ``id_key`` and
    ``evidence_key`` are the keys the file used; ``item_form`` is ``"triple"``,
    ``"list5"``, ``"line"``, ``"mixed"``, or ``""`` when no record has items.
    """

    path: Path | None = None
    lines: dict[Any, int]
    id_key: str = "id"
    evidence_key: str = "evidence"
    item_form: str = ""

    def where(self, qid: Any) -> str:
        """``"path:line"`` of a record (just the path when unknown), for messages."""
        line = getattr(self, "lines", {}).get(qid)
        return f"{self.path}:{line}" if line is not None else str(self.path)


def parse_time(text: Any) -> tuple[float, float] | None:
    """``"1994"`` -> ``(1994.0, 1994.0)``; ``"1990-1994"`` -> ``(1990.0, 1994.0)``; else ``None``."""
    m = _YEAR_SPAN.match(str(text))
    if not m:
        return None
    start = float(m.group(1))
    end = float(m.group(2)) if m.group(2) is not None else start
    return start, end


def parse_line(line: str, sep: str = LINE_SEPARATOR) -> dict[str, Any] | None:
    """``{s, r, o, t_start, t_end}`` of a default-template line ``s | r | o | t`` (SPEC §2.5), or ``None``.

    Labels may themselves contain the separator, so this succeeds only when the
    line has exactly four fields and the last is a year or year span.
    """
    parts = line.split(sep)
    if len(parts) != 4:
        return None
    span = parse_time(parts[3])
    if span is None:
        return None
    return {"s": parts[0], "r": parts[1], "o": parts[2], "t_start": span[0], "t_end": span[1]}


def _time_ok(value: Any) -> bool:
    """Whether the scorer's ``float(t)`` (SPEC §3.1) reads ``value``: numbers and numeric strings.

    Booleans are refused: in a file they are a mistake, not a year.
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


def item_problem(item: Any) -> str | None:
    """What is wrong with one (normalised) evidence item, or None when it can be read."""
    if isinstance(item, dict):
        if set(item) == {"line"}:
            return None if isinstance(item["line"], str) else f"line is {item['line']!r}, not a string"
        if not (all(k in item for k in LABEL_KEYS) or all(k in item for k in ID_KEYS)):
            miss_l = [k for k in LABEL_KEYS if k not in item]
            miss_i = [k for k in ID_KEYS if k not in item]
            return f"lacks {', '.join(miss_l)} (label space) or {', '.join(miss_i)} (id space)"
        for k in TIME_KEYS:
            if k not in item:
                return f"has no {k}"
            if not _time_ok(item[k]):
                return f"{k} is {item[k]!r}, not a number"
        if "score" in item and item["score"] is not None and (
            isinstance(item["score"], bool) or not isinstance(item["score"], (int, float))
        ):
            return f"score is {item['score']!r}, not a number"
        return None
    if isinstance(item, list):
        if len(item) != 5:
            return f"is a list of {len(item)} fields, not [s, r, o, t_start, t_end]"
        for pos, name in ((3, "t_start"), (4, "t_end")):
            if not _time_ok(item[pos]):
                return f"{name} is {item[pos]!r}, not a number"
        return None
    shown = repr(item) if len(repr(item)) <= 40 else repr(item)[:40] + "..."
    return f"is {shown} (JSON {json_type(item)}), not an object, a 5-list or an evidence line"


_NUMBER_TYPES = (int, float)


def _plain_item(item: Any) -> bool:
    """Whether ``item`` is a triple dict that :func:`_normalise_item` keeps and :func:`item_problem` accepts.

    A sufficient test only (exact ``int``/``float`` times and score, a full key
    space): anything else takes the general path.
    """
    if type(item) is not dict:
        return False
    if type(item.get("t_start")) not in _NUMBER_TYPES or type(item.get("t_end")) not in _NUMBER_TYPES:
        return False
    if not (("s_id" in item and "r_id" in item and "o_id" in item) or ("s" in item and "r" in item and "o" in item)):
        return False
    score = item.get("score")
    return score is None or type(score) in _NUMBER_TYPES


def _form(item: Any) -> str:
    return "line" if isinstance(item, str) else ("list5" if isinstance(item, list) else "triple")


def _normalise_item(item: Any, ids: bool) -> Any:
    """The item in a form the scorer reads (see the module docstring); others unchanged."""
    if isinstance(item, str):
        parsed = parse_line(item)
        return {**parsed, "line": item} if parsed is not None else {"line": item}
    if isinstance(item, list) and ids and len(item) == 5:
        return dict(zip((*ID_KEYS, *TIME_KEYS), item, strict=True))
    if isinstance(item, dict) and "t_start" not in item and "t_end" not in item and item.get("t") is not None:
        span = parse_time(item["t"])
        if span is not None:
            return {**item, "t_start": span[0], "t_end": span[1]}
    return item


def _looks_like_ids(items: list[list[Any]]) -> bool:
    return bool(items) and all(
        len(it) == 5 and _WIKIDATA_ENTITY.match(str(it[0])) and _WIKIDATA_PROPERTY.match(str(it[1]))
        and _WIKIDATA_ENTITY.match(str(it[2]))
        for it in items
    )


def _records(path: Path) -> list[tuple[int, Any]]:
    """``(line, record)``: JSON Lines, or (when that fails) one JSON list of records."""
    try:
        rows = list(read_jsonl(path, objects_only=False))
    except InputError as jsonl_error:
        try:
            text = path.read_bytes().decode("utf-8-sig")
            whole = json.loads(text)
        except (ValueError, RecursionError):
            raise jsonl_error from None
        if not isinstance(whole, list):
            raise jsonl_error from None
        refuse_lone_surrogates(path, None, whole, text)
        return [(None, rec) for rec in whole]
    if len(rows) == 1 and isinstance(rows[0][1], list):  # one JSON list on one line
        return [(None, rec) for rec in rows[0][1]]
    return rows


def _first_key(record: dict[str, Any], names: tuple[str, ...], want_list: bool = False) -> str | None:
    return next((k for k in names if k in record and (not want_list or isinstance(record[k], list))), None)


def read_run(path: str | Path) -> RunRecords:
    """Read any per-question evidence file into ``{question id: record}`` (file order).

    See the module docstring for the forms. The evidence list is required;
    ``cutoff_ties`` defaults to ``[]``. Every item is checked here so that a
    malformed one is reported with its file and line.
    """
    path = require_file(path, "run file")
    rows = _records(path)
    out = RunRecords()
    out.path = path
    first_line: dict[Any, int] = {}
    out.lines = first_line
    first = next((rec for _, rec in rows if isinstance(rec, dict)), {})
    id_key = _first_key(first, ID_FIELDS) or "id"
    evidence_key = _first_key(first, EVIDENCE_FIELDS, want_list=True) or _first_key(first, EVIDENCE_FIELDS) or "evidence"
    out.id_key, out.evidence_key = id_key, evidence_key
    five = [it for _, rec in rows if isinstance(rec, dict) and isinstance(rec.get(evidence_key), list)
            for it in rec[evidence_key] if isinstance(it, list)]
    ids = _looks_like_ids(five)
    forms: set[str] = set()
    for position, (number, rec) in enumerate(rows, start=1):
        where = number if number is not None else None
        label = f"record {position}" if number is None else None

        def fail(problem: str, expected: str, label: str | None = label, where: int | None = where) -> InputError:
            return InputError(path, where, f"{label}: {problem}" if label else problem, expected)

        if not isinstance(rec, dict):
            raise fail(f"a JSON {json_type(rec)}, not an object", "one JSON object per line")
        if id_key not in rec:
            raise fail(f"missing field {id_key!r}" + (f" (keys: {', '.join(sorted(map(str, rec))[:12])})" if rec else ""),
                       "the question id under " + "/".join(ID_FIELDS))
        qid = rec[id_key]
        if isinstance(qid, (bool, float, list, dict)) or qid is None:
            raise fail(f"{id_key} is {qid!r}", "a string id")
        if qid in first_line:
            raise fail(f"duplicate question id {qid!r} (first on line {first_line[qid]})", "one record per question")
        if evidence_key not in rec:
            raise fail(f"missing field {evidence_key!r}", "a list of evidence items under " + "/".join(EVIDENCE_FIELDS))
        lists = {}
        for name in (evidence_key, "cutoff_ties"):
            items = rec.get(name, [])
            if items is None and name == "cutoff_ties":
                items = []
            if not isinstance(items, list):
                raise fail(f"field {name!r} is a {type(items).__name__}", "a list of evidence items")
            if all(map(_plain_item, items)):
                # the run-file form: nothing to normalise, nothing wrong (the common case, checked cheaply)
                if items:
                    forms.add("triple")
                lists[name] = items
                continue
            normalised = [_normalise_item(item, ids) for item in items]
            for i, item in enumerate(normalised):
                problem = item_problem(item)
                if problem:
                    raise fail(f"{name}[{i}] {problem}", _EXPECTED_ITEMS)
            forms.update(_form(item) for item in items)
            lists[name] = normalised
        if id_key == "id" and evidence_key == "evidence" and (lists["evidence"] is rec["evidence"]
                                                              or lists["evidence"] == rec["evidence"]):
            record = rec  # a SPEC §6.1 record: kept as it is
            record.setdefault("cutoff_ties", [])
            if record["cutoff_ties"] is None:
                record["cutoff_ties"] = []
            else:
                record["cutoff_ties"] = lists["cutoff_ties"]
        else:
            rest = {k: v for k, v in rec.items() if k not in (id_key, evidence_key, "cutoff_ties")}
            record = {"id": qid, "evidence": lists[evidence_key], "cutoff_ties": lists["cutoff_ties"], **rest}
        first_line[qid] = number if number is not None else position
        out[qid] = record
    out.item_form = forms.pop() if len(forms) == 1 else ("mixed" if forms else "")
    return out


def run_records(path: str | Path, records: Iterable[dict[str, Any]]) -> RunRecords:
    """What :func:`read_run` returns for a run file of SPEC §6.1 that holds ``records`` (one per line, in order).

    For a caller that wrote the file and kept its records: no second parse.
    """
    out = RunRecords()
    out.path = Path(path)
    out.lines = {}
    any_items = False
    for number, record in enumerate(records, start=1):
        if record.get("cutoff_ties") is None:
            record["cutoff_ties"] = []
        any_items = any_items or bool(record["evidence"]) or bool(record["cutoff_ties"])
        out.lines.setdefault(record["id"], number)
        out[record["id"]] = record
    out.item_form = "triple" if any_items else ""
    return out


def written_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a run file (or shard) this package wrote: one compact JSON record per line.

    One fast parse per line and none of the checks :func:`read_run` makes of
    files from elsewhere; the same values.
    """
    return [loads_fast(line) for line in Path(path).read_bytes().split(b"\n")[:-1]]


def read_written_run(path: str | Path) -> RunRecords:
    """:func:`run_records` of a run file this package wrote (SPEC §6.1), for a process that did not keep its records."""
    return run_records(path, written_records(path))


def count_records(path: str | Path) -> int | None:
    """How many records :func:`read_run` reads from ``path`` (``None``: the file does not parse).

    A run file (JSON Lines) has one record per non-blank line: counted in one
    pass over its bytes, nothing parsed. A file that holds one JSON list is
    read whole. The count of lines is exact for the files ``tempbench run``
    writes; :func:`tempbench_core.runchecks.check_run_count` confirms one that differs
    from the ``.meta.json`` with :func:`exact_count` before refusing anything.
    """
    n = 0
    first = b""
    for raw in iter_input_lines(require_file(path, "run file")):
        if raw.strip():
            if not first:
                first = raw.lstrip(b"\xef\xbb\xbf \t")[:1]
            n += 1
    if first != b"[":
        return n
    return exact_count(path)


def exact_count(path: str | Path) -> int | None:
    """The number of records :func:`read_run` reads (``None``: the file does not parse)."""
    try:
        return len(_records(Path(path)))
    except InputError:
        return None


def question_ids(path: str | Path) -> list[Any]:
    """The question ids of a run file in any form :func:`read_run` reads, without checking its evidence.

    ``read_run`` reports what is wrong with the file; a record without an id is skipped here.
    """
    rows = _records(require_file(path, "run file"))
    first = next((rec for _, rec in rows if isinstance(rec, dict)), {})
    key = _first_key(first, ID_FIELDS) or "id"
    return [rec[key] for _, rec in rows if isinstance(rec, dict) and key in rec]
