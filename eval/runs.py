"""Reading run files (SPEC §6.1) and plain evidence files (SPEC §3.1) for scoring.

Both are JSONL with one record per question. A run record carries ``id``,
``split``, ``anchor``, ``evidence`` (items ``s, r, o, s_id, r_id, o_id, t_start,
t_end, score, line`` in rank order) and ``cutoff_ties``; an evidence file only
needs ``id`` and ``evidence``, whose items may be dicts in either key space or
5-lists ``[s, r, o, t_start, t_end]``. Problems are reported with file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tempbench.core.errors import InputError, MissingDataError
from tempbench.core.jsonl import read_jsonl

_LABEL = ("s", "r", "o")
_IDS = ("s_id", "r_id", "o_id")


class RunRecords(dict):
    """``{question id: record}`` in file order, plus where each record came from.

    ``path`` is the file read and ``lines[qid]`` the 1-based line of the record,
    so that a problem found later (while scoring) can still name file and line.
    """

    path: Path | None = None
    lines: dict[Any, int]

    def where(self, qid: Any) -> str:
        """``"path:line"`` of a record (just the path when unknown), for messages."""
        line = getattr(self, "lines", {}).get(qid)
        return f"{self.path}:{line}" if line is not None else str(self.path)


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
    """What is wrong with one evidence item, or None when it can be scored."""
    if isinstance(item, dict):
        if not (all(k in item for k in _LABEL) or all(k in item for k in _IDS)):
            miss_l = [k for k in _LABEL if k not in item]
            miss_i = [k for k in _IDS if k not in item]
            return f"lacks {', '.join(miss_l)} (label space) or {', '.join(miss_i)} (id space)"
        for k in ("t_start", "t_end"):
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
    return f"is a {type(item).__name__}, not an object or a 5-list"


def read_run(path: str | Path) -> dict[Any, dict[str, Any]]:
    """Read a run file or evidence JSONL into ``{question id: record}`` (file order).

    ``evidence`` is required; ``cutoff_ties`` defaults to ``[]``. Every item is
    checked here so that a malformed one is reported with its file and line.
    """
    path = Path(path)
    if not path.exists():
        raise MissingDataError(f"run file not found: {path}")
    out = RunRecords()
    out.path = path
    first_line: dict[Any, int] = {}
    out.lines = first_line
    for number, rec in read_jsonl(path, objects_only=False):
        if not isinstance(rec, dict):
            raise InputError(path, number, f"a JSON {type(rec).__name__}, not an object", "one JSON object per line")
        if "id" not in rec:
            raise InputError(path, number, "missing field 'id'", "the question id")
        qid = rec["id"]
        if isinstance(qid, (bool, float, list, dict)) or qid is None:
            raise InputError(path, number, f"id is {qid!r}", "a string id")
        if qid in first_line:
            raise InputError(path, number, f"duplicate question id {qid!r} (first on line {first_line[qid]})", "one record per question")
        if "evidence" not in rec:
            raise InputError(path, number, "missing field 'evidence'", "a list of evidence items")
        for name in ("evidence", "cutoff_ties"):
            items = rec.get(name, [])
            if items is None and name == "cutoff_ties":
                items = []
            if not isinstance(items, list):
                raise InputError(path, number, f"field '{name}' is a {type(items).__name__}", "a list of evidence items")
            for i, item in enumerate(items):
                problem = item_problem(item)
                if problem:
                    raise InputError(path, number, f"{name}[{i}] {problem}", "items with s, r, o or s_id, r_id, o_id plus t_start, t_end")
        rec.setdefault("cutoff_ties", [])
        if rec["cutoff_ties"] is None:
            rec["cutoff_ties"] = []
        first_line[qid] = number
        out[qid] = rec
    return out


def read_predictions(path: str | Path) -> dict[Any, str]:
    """Read a predictions JSONL (``id``, ``prediction``) into ``{id: prediction}`` (SPEC §3.6)."""
    path = Path(path)
    if not path.exists():
        raise MissingDataError(f"predictions file not found: {path}")
    out: dict[Any, str] = {}
    for number, rec in read_jsonl(path, objects_only=False):
        if not isinstance(rec, dict) or "id" not in rec or "prediction" not in rec:
            raise InputError(path, number, "a record without 'id' and 'prediction'", '{"id": ..., "prediction": ...}')
        if isinstance(rec["id"], (bool, float, list, dict)) or rec["id"] is None:
            raise InputError(path, number, f"id is {rec['id']!r}", "a string id")
        pred = rec["prediction"]
        if pred is None:
            pred = ""
        if isinstance(pred, bool) or not isinstance(pred, (str, int, float)):
            raise InputError(path, number, f"prediction is {pred!r}", "a string")
        if rec["id"] in out:
            raise InputError(path, number, f"duplicate id {rec['id']!r}", "one prediction per question")
        out[rec["id"]] = str(pred)
    return out
