"""Entity and relation labels (SPEC §1.2).

One flat map ``id -> label`` serves entities and relations (Wikidata ``Q…`` and
``P…`` ids do not collide). Sources: a TSV or JSON labels file, and labels
harvested from the benchmark files. The labels file wins; harvested labels fill
only the ids the file lacks. The *rendered* label of an id is its label, or the
raw id when it has none or an empty one (fixed); documents, evidence lines and
label look-ups all use the rendered form.

Decisions:
- an id listed in the labels file with an empty label is not "lacking": the
  file wins and the id renders as itself, harvested labels do not fill it (the
  literal reading of SPEC §1.2); a JSON ``null`` does not list the id;
- when harvesting meets one id with two different labels, the first one in file
  order wins (question order, then ``S_star``, ``S_dist``, ``S_stale``, then
  position, then ``s``, ``r``, ``o``); :func:`harvest_labels` counts conflicts;
- any other non-string JSON value is an error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tempbench_core.errors import InputError
from tempbench_core.jsonl import plain_name, read_input_bytes, read_jsonl, require_file
from tempbench_core.schema import ID_LABEL_PAIRS, TRIPLE_LISTS
from tempbench_core.text import lone_surrogate, terminal_text

TSV_HEADER = "id\tlabel"


def render(labels: Mapping[str, str], id_: str) -> str:
    """Rendered label of ``id_``: its label, or ``id_`` itself when missing or empty (SPEC §1.2)."""
    return labels.get(id_) or id_


def load_labels(path: str | Path) -> dict[str, str]:
    """Read a labels file: JSON object ``{id: label}`` or TSV ``id<TAB>label``.

    The format is JSON when the file name ends in ``.json`` (``.json.gz``) or
    its first non-blank character is ``{``; TSV otherwise. A ``.gz`` file is
    decompressed transparently. In a TSV the first line is a
    header only when it is exactly ``id<TAB>label``; the label is everything after
    the first tab; blank lines are skipped; CRLF and a UTF-8 BOM are accepted.

    Raises
    ------
    MissingDataError
        The file does not exist.
    InputError
        A row without a tab, an empty id, the same id twice, invalid JSON or a
        non-string JSON value (with the line number where one is known).
    """
    path = require_file(path, "labels file")
    try:
        text = read_input_bytes(path).decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, None, f"invalid UTF-8 at byte {exc.start}", "a UTF-8 labels file") from exc
    if Path(plain_name(path)).suffix.lower() == ".json" or text.lstrip().startswith("{"):
        return _parse_json(path, text)
    return _parse_tsv(path, text)


def _parse_tsv(path: Path, text: str) -> dict[str, str]:
    labels: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if number == 1 and line == TSV_HEADER:
            continue
        if not line.strip():
            continue
        id_, tab, label = line.partition("\t")
        if not tab:
            raise InputError(path, number, "row without a tab", "id<TAB>label")
        id_ = id_.strip()
        if not id_:
            raise InputError(path, number, "empty id", "id<TAB>label with a non-empty id")
        if id_ in labels:
            raise InputError(path, number, f"id {id_!r} given twice (first on line {first_line[id_]})", "each id once")
        labels[id_] = label
        first_line[id_] = number
    return labels


def _parse_json(path: Path, text: str) -> dict[str, str]:
    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                raise _Duplicate(key)
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs_hook)
    except _Duplicate as exc:
        raise InputError(path, _json_line(text, exc.key), f"id {exc.key!r} given twice", "each id once") from exc
    except json.JSONDecodeError as exc:
        raise InputError(path, exc.lineno, f"invalid JSON ({exc.msg})", "a JSON object {id: label}") from exc
    if not isinstance(data, dict):
        raise InputError(path, 1, f"top-level JSON {type(data).__name__}", "a JSON object {id: label}")
    labels: dict[str, str] = {}
    for key, value in data.items():
        if not key.strip():
            raise InputError(path, _json_line(text, key), "empty id", "non-empty ids")
        bad = lone_surrogate(key) or lone_surrogate(value)
        if bad is not None:
            # a "\ud800" escape decodes to no text: it would fail where the label is written (a run,
            # a report), far from this file; said here, with the id
            what = f"the id {terminal_text(key)!r}" if lone_surrogate(key) else f"the label of {key!r}"
            raise InputError(path, _json_line(text, key), f"{what} holds a lone surrogate escape {bad[1]}, which is not text",
                             "Unicode text: a \\ud800-\\udfff escape only as one half of a pair")
        if value is None:
            continue
        if not isinstance(value, str):
            raise InputError(path, _json_line(text, key), f"label of {key!r} is {type(value).__name__}", "a string label")
        labels[key] = value
    return labels


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _json_line(text: str, key: str) -> int | None:
    """Line of the last occurrence of ``"key"`` (best effort for messages)."""
    needle = json.dumps(key, ensure_ascii=False)
    pos = text.rfind(needle)
    return None if pos < 0 else text.count("\n", 0, pos) + 1


class HarvestedLabels(dict):
    """``dict`` of harvested labels, plus ``conflicts``: ids seen with a second, different label."""

    conflicts: dict[str, list[str]]


def harvest_labels(labelled_jsonl: str | Path, ids_jsonl: str | Path | None = None) -> HarvestedLabels:
    """Labels harvested from the benchmark files (SPEC §1.2).

    Pairs come from (a) triples that carry both an id and a label field (``s_id``
    and ``s`` and so on) in either file, and (b) the labelled triple and the id
    triple at the same position of the same list (``S_star``, ``S_dist``,
    ``S_stale``) of the question with the same ``id`` in the two files.

    Parameters
    ----------
    labelled_jsonl:
        ``benchmark_labelled.jsonl``.
    ids_jsonl:
        ``benchmark.jsonl`` (optional; without it only triples carrying both
        fields yield labels).

    Returns
    -------
    HarvestedLabels
        ``id -> label`` in first-seen order; the first label wins on a conflict
        and ``.conflicts`` lists the other labels seen.
    """
    labelled_path = require_file(labelled_jsonl, "benchmark file")
    id_records: dict[str, dict[str, Any]] = {}
    if ids_jsonl is not None:
        ids_path = require_file(ids_jsonl, "benchmark id file")
        for number, record in read_jsonl(ids_path):
            qid = record.get("id")
            if qid is None:
                raise InputError(ids_path, number, "record without 'id'", "a question id")
            id_records.setdefault(str(qid), record)
    out = HarvestedLabels()
    out.conflicts = {}

    def add(id_: Any, label: Any) -> None:
        if not isinstance(id_, str) or not isinstance(label, str) or not id_ or not label:
            return
        known = out.get(id_)
        if known is None:
            out[id_] = label
        elif known != label and label not in out.conflicts.setdefault(id_, []):
            out.conflicts[id_].append(label)

    def triples(record: dict[str, Any], name: str) -> list[Any]:
        value = record.get(name)
        return value if isinstance(value, list) else []

    for _number, record in read_jsonl(labelled_path):
        partner = id_records.get(str(record.get("id")))
        for name in TRIPLE_LISTS:
            labelled = triples(record, name)
            id_space = triples(partner, name) if partner is not None else []
            for pos, item in enumerate(labelled):
                if not isinstance(item, dict):
                    continue
                other = id_space[pos] if pos < len(id_space) and isinstance(id_space[pos], dict) else {}
                for id_key, label_key in ID_LABEL_PAIRS:
                    add(item.get(id_key, other.get(id_key)), item.get(label_key))
    # Triples of the id file that carry labels themselves.
    for record in id_records.values():
        for name in TRIPLE_LISTS:
            for item in triples(record, name):
                if isinstance(item, dict):
                    for id_key, label_key in ID_LABEL_PAIRS:
                        add(item.get(id_key), item.get(label_key))
    return out


class Labels(dict):
    """Labels by id, combined from their sources (:func:`combine_labels`)."""

    def render(self, id_: str) -> str:
        """The rendered form of ``id_``: its label, or the raw id when it has none (SPEC §1.2, fixed)."""
        return render(self, id_)

    def tsv(self) -> str:
        """The labels as a TSV file with its ``id<TAB>label`` header (what :func:`load_labels` reads back)."""
        return TSV_HEADER + "\n" + "".join(f"{id_}\t{label}\n" for id_, label in self.items())


def combine_labels(file_labels: Mapping[str, str] | None, harvested: Mapping[str, str] | None) -> Labels:
    """Labels file first; harvested labels fill only ids the file lacks (SPEC §1.2).

    An id the file lists with an empty label is not "lacking": the file wins, and
    the id renders as itself.
    """
    combined = Labels(file_labels or {})
    for id_, label in (harvested or {}).items():
        combined.setdefault(id_, label)
    return combined
