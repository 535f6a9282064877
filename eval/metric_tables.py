"""Published metric tables (SPEC §1.4): JSON or CSV keyed by metric and slice.

Recognised forms: a SPEC §6.2 score object, a SPEC §3.2 aggregate,
``{slice: {metric: value}}``, ``{metric: {slice: value}}``, a list of
``{metric, slice, value}`` rows, or a CSV in long form (``metric, slice, value``
columns) or wide form (a slice column plus one column per metric, or a
``metric`` column plus one column per slice). An optional ``config`` column /
top-level configuration-name key selects a retriever configuration. Metric
names are read through the declared measures (:mod:`eval.measures`); slices
are canonicalised to ``all``, ``complexity=V`` or ``operator=V``.

A value that no metric can have (NaN, an infinity, a share outside [0, 1], a
negative or fractional question count: :func:`eval.measures.value_problem`) is
kept apart in :attr:`MetricBaseline.invalid`, never among the numbers: ``check``
reports it as an error, the diff and the report mark it instead of comparing it.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.measures import find, value_problem
from tempbench_core.errors import InputError
from tempbench_core.schema import SHIPPED_CONFIGS

SLICE_FIELDS = ("complexity", "operator")


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
    skipped: list[str] = field(default_factory=list)  # rows that could not be read, "line N: why"
    #: ``(config, slice, metric) -> Impossible``: the values no metric can have (moved out of ``values``).
    invalid: dict[tuple[str | None, str, str], Impossible] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # The flatteners store an impossible value under its key like any other, so
        # that every form of table is checked by one rule; here they are set apart.
        for key in [k for k, v in self.values.items() if isinstance(v, Impossible)]:
            self.invalid[key] = self.values.pop(key)

    def configs(self) -> list[str | None]:
        """The configurations present, in first-appearance order."""
        seen: dict[str | None, None] = {}
        for cfg, _, _ in (*self.values, *self.invalid):
            seen.setdefault(cfg, None)
        return list(seen)

    def invalid_lines(self) -> list[str]:
        """One line per impossible value: ``TRP (all) = nan: not a finite number``, with the config when named."""
        out = []
        for (cfg, sl, metric), bad in self.invalid.items():
            where = f"{metric} ({sl})" if cfg is None else f"{cfg} {metric} ({sl})"
            out.append(f"{where} = {bad.given}: {bad.problem}" + (f" ({bad.line})" if bad.line else ""))
        return out


@dataclass(frozen=True)
class Impossible:
    """A published value no metric can have: as given (``"nan"``, ``"-0.2"``), and why."""

    given: str
    problem: str
    line: str = ""  # "line N" where the table has lines (CSV, JSON Lines)


def checked(metric: str, value: float, raw: Any = None, line: str = "") -> float | Impossible:
    """``value`` when metric ``metric`` can have it, else an :class:`Impossible` saying why."""
    measure = find(metric)
    percent = isinstance(raw, str) and raw.strip().endswith("%")
    problem = None if measure is None else value_problem(measure, value, percent)
    if problem is None:
        return value
    given = (raw.strip() if isinstance(raw, str) else repr(raw) if isinstance(raw, float)
             else str(raw) if isinstance(raw, int) else repr(value))
    if len(given) > 40:  # a 400-digit integer is named, not printed
        given = f"{given[:20]}... ({len(given)} characters)"
    return Impossible(given, problem, line)


def normalise_metric(name: str) -> str | None:
    """Canonical metric name of a table column or key (:func:`eval.measures.find`), or ``None``."""
    measure = find(name)
    return None if measure is None else measure.name


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


def flatten_aggregate(obj: dict[str, Any], cfg: str | None, out: dict) -> bool:
    """A SPEC §3.2 aggregate (optionally inside a §6.2 object). True when recognised."""
    if "trp_ccr" in obj and isinstance(obj["trp_ccr"], dict):
        agg = obj["trp_ccr"]
        for fld, per in (obj.get("coverage") or {}).items():
            if isinstance(per, dict) and fld.startswith("by_"):
                for value, share in per.items():
                    if isinstance(share, (int, float)) and not isinstance(share, bool):
                        out[(cfg, normalise_slice(f"{fld}={value}"), "coverage")] = checked("coverage", _as_float(share), share)
        for name, value in (obj.get("rank") or {}).items():
            metric = normalise_metric(name)
            if metric and isinstance(value, (int, float)) and not isinstance(value, bool):
                out[(cfg, "all", metric)] = checked(metric, _as_float(value), value)
    else:
        agg = obj
    if not ({"TRP_macro", "CCR"} <= set(agg) or "n_questions" in agg and len(agg) == 1):
        return False
    for name, value in agg.items():
        if name.startswith("by_") and isinstance(value, dict):
            for slice_value, stats in value.items():
                for metric_name, v in (stats or {}).items():
                    metric = normalise_metric(metric_name)
                    if metric and isinstance(v, (int, float)) and not isinstance(v, bool):
                        out[(cfg, normalise_slice(f"{name}={slice_value}"), metric)] = checked(metric, _as_float(v), v)
        else:
            metric = normalise_metric(name)
            if metric and isinstance(value, (int, float)) and not isinstance(value, bool):
                out[(cfg, "all", metric)] = checked(metric, _as_float(value), value)
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
                    metric = normalise_metric(metric_name)
                    out[(cfg, normalise_slice(slice_name), metric)] = checked(metric, _as_float(v), v)
        return True
    found = False
    for slice_name, per in obj.items():
        for metric_name, v in per.items():
            metric = normalise_metric(metric_name)
            if metric and isinstance(v, (int, float)) and not isinstance(v, bool):
                out[(cfg, normalise_slice(slice_name), metric)] = checked(metric, _as_float(v), v)
                found = True
    return found


def flatten_rows(rows: list[dict[str, Any]], out: dict, skipped: list[str] | None = None, first_line: int = 1) -> bool:
    """Row dicts in long (``metric``/``value``) or wide (one column per metric) form.

    Rows (or cells) that cannot be read, an unknown metric name or a value that
    is not a number, are listed in ``skipped`` (``"line N: why"``, row ``i`` on
    line ``first_line + i``) instead of being dropped silently.
    """
    if not rows or not all(isinstance(r, dict) for r in rows):
        return False
    skipped = [] if skipped is None else skipped

    def skip(i: int, why: str) -> None:
        skipped.append(f"line {first_line + i}: {why}")

    keys = {k.lower(): k for k in rows[0]}
    slice_col = next((keys[c] for c in ("slice", "subset", "group", "complexity", "operator", "operator_type") if c in keys), None)
    cfg_col = next((keys[c] for c in ("config", "configuration", "retriever", "run") if c in keys), None)
    if "metric" in keys and "value" in keys:
        for i, row in enumerate(rows):
            metric = normalise_metric(row[keys["metric"]])
            value = _number(row[keys["value"]])
            if metric is None or value is None:
                skip(i, f"unknown metric {row[keys['metric']]!r}" if metric is None else f"value {row[keys['value']]!r} is not a number")
                continue
            sl = _slice_of(row, slice_col)
            out[(_cfg(row, cfg_col), sl, metric)] = checked(metric, value, row[keys["value"]], f"line {first_line + i}")
        return bool(out)
    if "metric" in keys:  # a metric column, one column per slice
        for i, row in enumerate(rows):
            metric = normalise_metric(row[keys["metric"]])
            if metric is None:
                skip(i, f"unknown metric {row[keys['metric']]!r}")
                continue
            for col, raw in row.items():
                if col in (keys["metric"], cfg_col):
                    continue
                value = _number(raw)
                if value is not None:
                    out[(_cfg(row, cfg_col), normalise_slice(col), metric)] = checked(metric, value, raw,
                                                                                      f"line {first_line + i}")
                elif raw not in (None, ""):
                    skip(i, f"{col}: value {raw!r} is not a number")
        return bool(out)
    metric_cols = [k for k in rows[0] if normalise_metric(k)]
    if not metric_cols:
        return False
    for i, row in enumerate(rows):
        sl = _slice_of(row, slice_col)
        for col in metric_cols:
            value = _number(row.get(col))
            if value is not None:
                metric = normalise_metric(col)
                out[(_cfg(row, cfg_col), sl, metric)] = checked(metric, value, row.get(col), f"line {first_line + i}")
            elif row.get(col) not in (None, ""):
                skip(i, f"{col}: value {row.get(col)!r} is not a number")
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


def _as_float(value: int | float) -> float:
    """A JSON number as a float; an integer too large for one is infinite (and so refused), not an OverflowError."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def _number(raw: Any) -> float | None:
    """A cell as a number (``45%`` is 0.45); ``None`` when it is no number. ``nan`` and ``inf`` are numbers
    here, to be refused by :func:`checked` with the metric in hand."""
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        return _as_float(raw)
    try:
        return float(str(raw).strip().rstrip("%")) / (100.0 if str(raw).strip().endswith("%") else 1.0)
    except ValueError:
        return None


def metric_table_from_json(obj: Any, out: dict) -> bool:
    if isinstance(obj, list):
        return flatten_rows(obj, out)
    if not isinstance(obj, dict):
        return False
    config_keys = [k for k in obj if k in SHIPPED_CONFIGS]
    if config_keys and len(config_keys) == len(obj) and all(isinstance(v, dict) for v in obj.values()):
        return all(flatten_aggregate(v, k, out) or _flatten_nested(v, k, out) for k, v in obj.items())
    return flatten_aggregate(obj, None, out) or _flatten_nested(obj, None, out)


def flatten_scores(scores: dict[str, Any]) -> dict[tuple[str, str], float]:
    """A SPEC §6.2 score object or §3.2 aggregate as ``{(slice, metric): value}``."""
    out: dict = {}
    flatten_aggregate(dict(scores), None, out)
    # the scorer's own values are in range by construction; one that is not is no number to compare either
    return {(sl, metric): v for (_, sl, metric), v in out.items() if not isinstance(v, Impossible)}


def read_csv_table(path: Path) -> MetricBaseline:
    """A metric table from a CSV or TSV file (long or wide form)."""
    suffix = path.suffix.lower()
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise InputError(path, line, f"not UTF-8 text (byte {exc.start}; another encoding such as UTF-16 or Latin-1?)",
                         "a UTF-8 CSV") from None
    delimiter = "\t" if suffix == ".tsv" or text[:4096].count("\t") > text[:4096].count(",") else ","
    rows = list(csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter))
    values: dict = {}
    skipped: list[str] = []
    if rows and flatten_rows(rows, values, skipped, first_line=2):
        return MetricBaseline(path=path, values=values, skipped=skipped)
    header = sorted(rows[0]) if rows else []
    raise InputError(path, 1, f"unrecognised baselines table: found columns {header}",
                     "columns metric,slice,value (long form), or a slice column plus metric columns such as TRP,CCR")
