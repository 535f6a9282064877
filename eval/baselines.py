"""Read a published baselines file whose layout is not known in advance (SPEC §1.4).

Two families are recognised by sniffing keys, never by file name:

- **per-question evidence** (JSONL, or a JSON list of records): each record has a
  question id under ``id`` / ``qid`` / ``question_id`` and a list under
  ``evidence`` / ``retrieved`` / ``triples`` / ``context``. An item is a triple
  dict (label space ``s, r, o``, id space ``s_id, r_id, o_id``, or both, with
  ``t_start``/``t_end`` or a single ``t``), a 5-list ``[s, r, o, t_start, t_end]``,
  or a rendered evidence line such as ``"s | r | o | 1994"``. A run file of SPEC
  §6.1 is of this family.
- **metric tables** (JSON or CSV) keyed by metric and slice: a SPEC §6.2 score
  object, a SPEC §3.2 aggregate, ``{slice: {metric: value}}``,
  ``{metric: {slice: value}}``, a list of ``{metric, slice, value}`` rows, or a CSV
  in long form (``metric, slice, value`` columns) or wide form (a slice column
  plus one column per metric, or a ``metric`` column plus one column per slice).
  An optional ``config`` column / top-level config-name key selects a retriever
  configuration.

Anything else raises :class:`tempbench.core.errors.InputError` naming the keys that
were found and the keys that were expected.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tempbench.core.errors import InputError
from tempbench.core.jsonl import read_jsonl

ID_KEYS = ("id", "qid", "question_id")
EVIDENCE_KEYS = ("evidence", "retrieved", "triples", "context")
LABEL_KEYS = ("s", "r", "o")
ID_SPACE_KEYS = ("s_id", "r_id", "o_id")
SLICE_FIELDS = ("complexity", "operator")
CONFIG_NAMES = ("oracle", "nonoracle", "stale_blind", "hop3_k25")

_EXPECTED_EVIDENCE = (
    "per-question records with a question id key (" + "/".join(ID_KEYS) + ") and an evidence list key ("
    + "/".join(EVIDENCE_KEYS) + ")"
)
_EXPECTED_METRICS = "or a metric table keyed by metric and slice (e.g. TRP/CCR per complexity or operator)"
_QID = re.compile(r"^Q\d+$")
_PID = re.compile(r"^P\d+$")
_YEAR_SPAN = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(?:-\s*(-?\d+(?:\.\d+)?)\s*)?$")


@dataclass
class EvidenceBaseline:
    """Per-question evidence lists, items normalised to dicts.

    Attributes
    ----------
    path:
        The file read.
    records:
        Question id -> list of items, in file order. Every item is a dict with
        keys ``s r o s_id r_id o_id t_start t_end line`` (``None`` where the
        source does not carry the field).
    item_form:
        ``"triple"`` (dicts), ``"list5"`` or ``"line"``.
    id_key, evidence_key:
        The keys the records used.
    line_numbers:
        Question id -> 1-based line of its record (for messages).
    """

    path: Path
    records: dict[str, list[dict[str, Any]]]
    item_form: str
    id_key: str
    evidence_key: str
    line_numbers: dict[str, int] = field(default_factory=dict)
    kind: str = "evidence"


@dataclass
class MetricBaseline:
    """A metric table: ``(config, slice, metric) -> value``.

    ``config`` is ``None`` when the table names none; ``slice`` is ``"all"``,
    ``"<field>=<value>"`` for ``field`` in ``complexity``/``operator``, or a bare
    value that :func:`resolve_slice` places later; metric names are normalised
    by :func:`normalise_metric`.
    """

    path: Path
    values: dict[tuple[str | None, str, str], float]
    kind: str = "metrics"

    def configs(self) -> list[str | None]:
        """The configurations present, in first-appearance order."""
        seen: dict[str | None, None] = {}
        for cfg, _, _ in self.values:
            seen.setdefault(cfg, None)
        return list(seen)


# --------------------------------------------------------------------------- metrics


_METRIC_ALIASES = {
    "trp": "TRP",
    "trp_macro": "TRP",
    "trp_micro": "TRP_micro",
    "ccr": "CCR",
    "coverage": "coverage",
    "n": "n",
    "n_questions": "n",
    "mrr": "mrr",
    "em": "EM",
    "f1": "F1",
}
_RANK_METRIC = re.compile(r"^(recall|ndcg|r|p|precision)@(\d+)$")


def normalise_metric(name: str) -> str | None:
    """Canonical metric name (``TRP``, ``CCR``, ``coverage``, ``recall@k``...), or ``None``."""
    key = str(name).strip().lower().replace(" ", "_")
    if key in _METRIC_ALIASES:
        return _METRIC_ALIASES[key]
    m = _RANK_METRIC.match(key)
    if m:
        kind = {"r": "recall", "p": "precision"}.get(m.group(1), m.group(1))
        return f"{kind}@{m.group(2)}"
    return None


def normalise_slice(name: Any) -> str:
    """Canonical slice: ``all``, ``complexity=V``, ``operator=V``, or the bare value."""
    text = "" if name is None else str(name).strip()
    if text.lower() in ("", "all", "overall", "total", "any", "*"):
        return "all"
    for sep in ("=", ":", "/", "."):
        if sep in text:
            head, tail = text.split(sep, 1)
            fld = head.strip().lower().removeprefix("by_")
            if fld == "operator_type":
                fld = "operator"
            if fld in SLICE_FIELDS:
                return f"{fld}={tail.strip()}"
    return text


def resolve_slice(slice_name: str, known: dict[str, set[str]]) -> str:
    """Place a bare slice value in its field using the values each field has.

    ``known`` maps ``complexity``/``operator`` to the slice values of the run.
    A value found in no field (or in both) is returned unchanged.
    """
    if slice_name == "all" or "=" in slice_name:
        return slice_name
    hits = [f for f in SLICE_FIELDS if slice_name in known.get(f, set())]
    return f"{hits[0]}={slice_name}" if len(hits) == 1 else slice_name


def _flatten_aggregate(obj: dict[str, Any], cfg: str | None, out: dict) -> bool:
    """A SPEC §3.2 aggregate (optionally inside a §6.2 object). True when recognised."""
    if "trp_ccr" in obj and isinstance(obj["trp_ccr"], dict):
        agg = obj["trp_ccr"]
        for fld, per in (obj.get("coverage") or {}).items():
            if isinstance(per, dict) and fld.startswith("by_"):
                for value, share in per.items():
                    if isinstance(share, (int, float)):
                        out[(cfg, normalise_slice(f"{fld}={value}"), "coverage")] = float(share)
        for name, value in (obj.get("rank") or {}).items():
            metric = normalise_metric(name)
            if metric and isinstance(value, (int, float)):
                out[(cfg, "all", metric)] = float(value)
    else:
        agg = obj
    if not ({"TRP_macro", "CCR"} <= set(agg) or "n_questions" in agg and len(agg) == 1):
        return False
    for name, value in agg.items():
        if name.startswith("by_") and isinstance(value, dict):
            for slice_value, stats in value.items():
                for metric_name, v in (stats or {}).items():
                    metric = normalise_metric(metric_name)
                    if metric and isinstance(v, (int, float)):
                        out[(cfg, normalise_slice(f"{name}={slice_value}"), metric)] = float(v)
        else:
            metric = normalise_metric(name)
            if metric and isinstance(value, (int, float)) and not isinstance(value, bool):
                out[(cfg, "all", metric)] = float(value)
    return True


def _flatten_nested(obj: dict[str, Any], cfg: str | None, out: dict) -> bool:
    """``{slice: {metric: v}}`` or ``{metric: {slice: v}}``; True when recognised."""
    if not obj or not all(isinstance(v, dict) for v in obj.values()):
        return False
    outer_metrics = [k for k in obj if normalise_metric(k)]
    if outer_metrics and len(outer_metrics) == len(obj):
        for metric_name, per in obj.items():
            for slice_name, v in per.items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    out[(cfg, normalise_slice(slice_name), normalise_metric(metric_name))] = float(v)
        return True
    found = False
    for slice_name, per in obj.items():
        for metric_name, v in per.items():
            metric = normalise_metric(metric_name)
            if metric and isinstance(v, (int, float)) and not isinstance(v, bool):
                out[(cfg, normalise_slice(slice_name), metric)] = float(v)
                found = True
    return found


def _flatten_rows(rows: list[dict[str, Any]], out: dict) -> bool:
    """Row dicts in long (``metric``/``value``) or wide (one column per metric) form."""
    if not rows or not all(isinstance(r, dict) for r in rows):
        return False
    keys = {k.lower(): k for k in rows[0]}
    slice_col = next((keys[c] for c in ("slice", "subset", "group", "complexity", "operator", "operator_type") if c in keys), None)
    cfg_col = next((keys[c] for c in ("config", "configuration", "retriever", "run") if c in keys), None)
    if "metric" in keys and "value" in keys:
        for row in rows:
            metric = normalise_metric(row[keys["metric"]])
            value = _number(row[keys["value"]])
            if metric is None or value is None:
                continue
            sl = _slice_of(row, slice_col)
            out[(_cfg(row, cfg_col), sl, metric)] = value
        return bool(out)
    if "metric" in keys:  # a metric column, one column per slice
        for row in rows:
            metric = normalise_metric(row[keys["metric"]])
            if metric is None:
                continue
            for col, raw in row.items():
                if col in (keys["metric"], cfg_col):
                    continue
                value = _number(raw)
                if value is not None:
                    out[(_cfg(row, cfg_col), normalise_slice(col), metric)] = value
        return bool(out)
    metric_cols = [k for k in rows[0] if normalise_metric(k)]
    if not metric_cols:
        return False
    for row in rows:
        sl = _slice_of(row, slice_col)
        for col in metric_cols:
            value = _number(row.get(col))
            if value is not None:
                out[(_cfg(row, cfg_col), sl, normalise_metric(col))] = value
    return bool(out)


def _slice_of(row: dict[str, Any], slice_col: str | None) -> str:
    if slice_col is None:
        return "all"
    value = row.get(slice_col)
    lowered = slice_col.lower()
    if lowered in ("complexity", "operator", "operator_type") and value not in (None, "", "all"):
        return normalise_slice(f"{lowered}={value}")
    return normalise_slice(value)


def _cfg(row: dict[str, Any], cfg_col: str | None) -> str | None:
    if cfg_col is None:
        return None
    value = row.get(cfg_col)
    return str(value) if value not in (None, "") else None


def _number(raw: Any) -> float | None:
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        return float(raw)
    try:
        return float(str(raw).strip().rstrip("%")) / (100.0 if str(raw).strip().endswith("%") else 1.0)
    except ValueError:
        return None


def _metric_table_from_json(obj: Any, out: dict) -> bool:
    if isinstance(obj, list):
        return _flatten_rows(obj, out)
    if not isinstance(obj, dict):
        return False
    config_keys = [k for k in obj if k in CONFIG_NAMES]
    if config_keys and len(config_keys) == len(obj) and all(isinstance(v, dict) for v in obj.values()):
        return all(_flatten_aggregate(v, k, out) or _flatten_nested(v, k, out) for k, v in obj.items())
    return _flatten_aggregate(obj, None, out) or _flatten_nested(obj, None, out)


# --------------------------------------------------------------------------- evidence


def _looks_like_ids(items: list[list[Any]]) -> bool:
    return bool(items) and all(
        _QID.match(str(it[0])) and _PID.match(str(it[1])) and _QID.match(str(it[2])) for it in items
    )


def parse_time(text: str) -> tuple[float, float] | None:
    """``"1994"`` -> ``(1994.0, 1994.0)``; ``"1990-1994"`` -> ``(1990.0, 1994.0)``; else ``None``."""
    m = _YEAR_SPAN.match(str(text))
    if not m:
        return None
    start = float(m.group(1))
    end = float(m.group(2)) if m.group(2) is not None else start
    return start, end


def parse_line(line: str, sep: str = " | ") -> dict[str, Any] | None:
    """Best-effort parse of a default-template line ``s | r | o | t`` (SPEC §2.5).

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


def _empty_item() -> dict[str, Any]:
    return dict.fromkeys(("s", "r", "o", "s_id", "r_id", "o_id", "t_start", "t_end", "line"))


def _item_from_dict(raw: dict[str, Any]) -> dict[str, Any]:
    item = _empty_item()
    for key in ("s", "r", "o", "s_id", "r_id", "o_id", "line"):
        if raw.get(key) is not None:
            item[key] = str(raw[key])
    for key in ("t_start", "t_end"):
        if raw.get(key) is not None:
            item[key] = float(raw[key])
    if item["t_start"] is None and raw.get("t") is not None:
        span = parse_time(str(raw["t"]))
        if span:
            item["t_start"], item["t_end"] = span
    # Items in id space only (s_id given as s) are left as found: the comparison
    # space is chosen over the whole file by the diff.
    return item


def _normalise_items(path: Path, lineno: int, raw_items: list[Any], id_space: bool) -> tuple[list[dict], str]:
    items: list[dict[str, Any]] = []
    forms: set[str] = set()
    for pos, raw in enumerate(raw_items):
        if isinstance(raw, dict):
            forms.add("triple")
            items.append(_item_from_dict(raw))
        elif isinstance(raw, (list, tuple)) and len(raw) == 5:
            forms.add("list5")
            item = _empty_item()
            keys = ID_SPACE_KEYS if id_space else LABEL_KEYS
            for key, value in zip(keys, raw[:3], strict=True):
                item[key] = str(value)
            try:
                item["t_start"], item["t_end"] = float(raw[3]), float(raw[4])
            except (TypeError, ValueError):
                raise InputError(path, lineno, f"evidence item {pos} has a non-numeric time {raw[3:]!r}", "[s, r, o, t_start, t_end]") from None
            items.append(item)
        elif isinstance(raw, str):
            forms.add("line")
            item = _empty_item()
            item["line"] = raw
            parsed = parse_line(raw)
            if parsed:
                item.update(parsed)
            items.append(item)
        else:
            raise InputError(
                path, lineno, f"evidence item {pos} is {type(raw).__name__} {raw!r:.60}",
                "a triple dict, a 5-list [s, r, o, t_start, t_end] or an evidence line string",
            )
    if len(forms) > 1:
        raise InputError(path, lineno, f"evidence items mix forms {sorted(forms)}", "one item form per file")
    return items, (forms.pop() if forms else "")


def _evidence_records(path: Path, records: list[tuple[int, dict[str, Any]]]) -> EvidenceBaseline | None:
    first = records[0][1]
    id_key = next((k for k in ID_KEYS if k in first), None)
    ev_key = next((k for k in EVIDENCE_KEYS if k in first and isinstance(first[k], list)), None)
    if id_key is None or ev_key is None:
        return None
    five = [it for _, rec in records for it in (rec.get(ev_key) or []) if isinstance(it, (list, tuple)) and len(it) == 5]
    id_space = _looks_like_ids(five)
    out: dict[str, list[dict[str, Any]]] = {}
    lines: dict[str, int] = {}
    form = ""
    for lineno, rec in records:
        if id_key not in rec or not isinstance(rec.get(ev_key), list):
            raise InputError(path, lineno, f"record lacks '{id_key}' or a list under '{ev_key}' (keys: {sorted(rec)})",
                             f"every record to carry '{id_key}' and '{ev_key}' like the first one")
        qid = str(rec[id_key])
        if qid in out:
            raise InputError(path, lineno, f"question id {qid!r} appears twice (first on line {lines[qid]})", "one record per question")
        items, f = _normalise_items(path, lineno, rec[ev_key], id_space)
        if f and form and f != form:
            raise InputError(path, lineno, f"evidence items are {f} here but {form} earlier", "one item form per file")
        form = form or f
        out[qid] = items
        lines[qid] = lineno
    return EvidenceBaseline(path=path, records=out, item_form=form or "triple", id_key=id_key, evidence_key=ev_key, line_numbers=lines)


def _found_keys(obj: Any) -> str:
    if isinstance(obj, dict):
        return "[" + ", ".join(sorted(map(str, obj))[:20]) + "]"
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        return "[" + ", ".join(sorted(map(str, obj[0]))[:20]) + "]"
    return f"a JSON {type(obj).__name__}"


def load_baseline(path: str | Path) -> EvidenceBaseline | MetricBaseline:
    """Sniff and read one baselines file (SPEC §1.4).

    Parameters
    ----------
    path:
        A ``.jsonl``/``.json`` file of per-question evidence or metrics, or a
        ``.csv``/``.tsv`` metric table.

    Raises
    ------
    InputError
        When the file is of no recognised form: the message lists the keys found
        and the keys expected.
    """
    p = Path(path)
    if not p.is_file():
        from tempbench.core.errors import MissingDataError

        raise MissingDataError(f"baselines file not found: {p}")
    suffix = p.suffix.lower()
    if suffix in (".csv", ".tsv"):
        with open(p, encoding="utf-8-sig", newline="") as handle:
            sample = handle.read(4096)
            handle.seek(0)
            delimiter = "\t" if suffix == ".tsv" or sample.count("\t") > sample.count(",") else ","
            rows = list(csv.DictReader(handle, delimiter=delimiter))
        values: dict = {}
        if rows and _flatten_rows(rows, values):
            return MetricBaseline(path=p, values=values)
        header = sorted(rows[0]) if rows else []
        raise InputError(p, 1, f"unrecognised baselines table: found columns {header}",
                         "columns metric,slice,value (long form), or a slice column plus metric columns such as TRP,CCR")
    # JSON or JSONL: try one document first, then one record per line.
    text = p.read_text(encoding="utf-8-sig")
    try:
        whole = json.loads(text)
        # A list of records, or a JSONL file that happens to hold one record.
        records = [(i + 1, r) for i, r in enumerate(whole)] if isinstance(whole, list) else [(1, whole)]
    except json.JSONDecodeError:
        whole = None
        records = list(read_jsonl(p, objects_only=False))
    if records and all(isinstance(r, dict) for _, r in records):
        ev = _evidence_records(p, records)
        if ev is not None:
            return ev
    values = {}
    if whole is not None and _metric_table_from_json(whole, values):
        return MetricBaseline(path=p, values=values)
    if records and whole is None and _flatten_rows([r for _, r in records], values):
        return MetricBaseline(path=p, values=values)
    sample_obj = whole if whole is not None else (records[0][1] if records else None)
    raise InputError(
        p, None if whole is not None else (records[0][0] if records else None),
        f"unrecognised baselines file: found keys {_found_keys(sample_obj)}",
        _EXPECTED_EVIDENCE + ", " + _EXPECTED_METRICS,
    )
