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

A table that cannot be read as meant is refused (:class:`~tempbench_core.errors.InputError`
naming the file, the line where there is one, and what was expected), never read in part
by guessing: a CSV row with more fields than its header, a metric given twice for the
same slice (and configuration), a column name given twice, a JSON value that is a string
(or ``true``/``false``, an array) where a metric's number is expected, a CSV quote that
is never closed, or a table whose every value cell is unreadable. The flatteners have no
file name to hand: they note the first such problem in the table they fill (:class:`Refusal`),
and :class:`MetricBaseline`, which is made with the path, raises it.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.measures import find, valid_names, value_problem
from tempbench_core.errors import InputError
from tempbench_core.jsonl import dumps_compact, json_type
from tempbench_core.schema import SHIPPED_CONFIGS

SLICE_FIELDS = ("complexity", "operator")

#: Keys of a flattener's ``out`` table besides ``(config, slice, metric)``: the first reason to
#: refuse the table (a :class:`Refusal`), and the notes of :func:`flatten_rows` on rows it left
#: out when its caller gave no list for them. :class:`MetricBaseline` takes both out.
_REFUSED = "__refused__"
_SKIPPED = "__skipped__"
_ONCE = "each metric (and slice) once"
_A_NUMBER = "a number such as 0.2 or 20% (a decimal point, not a comma)"
_A_JSON_NUMBER = 'a JSON number such as 0.2 (not the string "0.2"), or null for no value'


@dataclass(frozen=True)
class Refusal:
    """Why a table is refused, noted by a flattener (which has no file name) for :class:`MetricBaseline` to raise."""

    line: int | None
    problem: str
    expected: str


def _refuse(out: dict, line: int | None, problem: str, expected: str) -> None:
    """Note a reason to refuse the table being filled; the first one noted is the one raised."""
    out.setdefault(_REFUSED, Refusal(line, problem, expected))


def _key_text(key: tuple[str | None, str, str]) -> str:
    cfg, sl, metric = key
    return f"{metric} (slice {sl})" if cfg is None else f"{metric} (slice {sl}, configuration {cfg})"


@dataclass
class MetricBaseline:
    """A metric table: ``(config, slice, metric) -> value``.

    ``config`` is ``None`` when the table names none; ``slice`` is ``"all"``,
    ``"<field>=<value>"`` for ``field`` in ``complexity``/``operator``, or a bare
    value that :func:`resolve_slice` places later; metric names are normalised
    by :func:`normalise_metric`.

    Made of a table a flattener filled, it raises the :class:`Refusal` noted
    there as an :class:`~tempbench_core.errors.InputError` naming ``path``, and
    adds the notes on rows left out to :attr:`skipped`.
    """

    path: Path
    values: dict[tuple[str | None, str, str], float]
    kind: str = "metrics"
    skipped: list[str] = field(default_factory=list)  # cells that could not be read, "line N, column C: why"
    #: ``(config, slice, metric) -> Impossible``: the values no metric can have (moved out of ``values``).
    invalid: dict[tuple[str | None, str, str], Impossible] = field(default_factory=dict)

    def __post_init__(self) -> None:
        refusal = self.values.pop(_REFUSED, None)
        notes = self.values.pop(_SKIPPED, None)
        if refusal is not None:
            raise InputError(self.path, refusal.line, refusal.problem, refusal.expected)
        if notes:
            self.skipped = [*self.skipped, *notes]
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


def _json_path(*keys: Any) -> str:
    """Where a value sits in a JSON document: ``["TRP"]["all"]``."""
    return "".join(f"[{dumps_compact(str(k))}]" for k in keys)


def _json_kind(value: Any) -> str:
    if isinstance(value, str):
        shown = value if len(value) <= 40 else f"{value[:20]}... ({len(value)} characters)"
        return f"the string {dumps_compact(shown)}"
    if isinstance(value, bool):
        return f"the JSON value {dumps_compact(value)}"
    if isinstance(value, list):
        return "a JSON array"
    return f"a JSON {json_type(value)}"


def _json_value(out: dict, metric: str, value: Any, where: str) -> float | Impossible | None:
    """A JSON value under a metric's name: the number (:func:`checked`), or ``None``.

    ``null``, an empty string and an object are no value (a score object holds
    nested objects and nulls by design) and are passed over; any other value that
    is no number (a string such as ``"0.2"``, ``true``, an array) is refused.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return checked(metric, _as_float(value), value)
    if value is None or isinstance(value, dict) or (isinstance(value, str) and not value.strip()):
        return None
    _refuse(out, None, f"the value of {metric} at {where} is {_json_kind(value)}, not a number", _A_JSON_NUMBER)
    return None


def _put_json(out: dict, key: tuple[str | None, str, str], value: float | Impossible, where: str,
              seen: dict[tuple[str | None, str, str], str]) -> None:
    """Store one value of a JSON table; a key given twice (``all`` and ``overall``, ``TRP`` and ``TRP_macro``) is refused."""
    if key in out:
        first = seen.get(key)
        _refuse(out, None, f"{_key_text(key)} is given twice: at {first or 'an earlier key'} and at {where}", _ONCE)
        return
    seen[key] = where
    out[key] = value


def flatten_aggregate(obj: dict[str, Any], cfg: str | None, out: dict) -> bool:
    """A SPEC §3.2 aggregate (optionally inside a §6.2 object). True when recognised."""
    top = () if cfg is None else (cfg,)
    wrapped = "trp_ccr" in obj and isinstance(obj["trp_ccr"], dict)
    agg, inner = (obj["trp_ccr"], (*top, "trp_ccr")) if wrapped else (obj, top)
    if not ({"TRP_macro", "CCR"} <= set(agg) or "n_questions" in agg and len(agg) == 1):
        return False  # before anything is stored: another form may still read ``obj`` into ``out``
    if wrapped:
        coverage = obj.get("coverage")
        for fld, per in (coverage.items() if isinstance(coverage, dict) else ()):
            if isinstance(per, dict) and fld.startswith("by_"):
                for value, share in per.items():
                    v = _json_value(out, "coverage", share, _json_path(*top, "coverage", fld, value))
                    if v is not None:
                        out[(cfg, normalise_slice(f"{fld}={value}"), "coverage")] = v
        rank = obj.get("rank")
        for name, value in (rank.items() if isinstance(rank, dict) else ()):
            metric = normalise_metric(name)
            v = None if metric is None else _json_value(out, metric, value, _json_path(*top, "rank", name))
            if metric and v is not None:
                out[(cfg, "all", metric)] = v
    for name, value in agg.items():
        if name.startswith("by_") and isinstance(value, dict):
            for slice_value, stats in value.items():
                if stats is not None and not isinstance(stats, dict):
                    _refuse(out, None, f"{_json_path(*inner, name, slice_value)} is {_json_kind(stats)}",
                            "an object of metric values such as {\"n\": 4, \"TRP\": 0.3, \"CCR\": 0.75}")
                    continue
                for metric_name, v in (stats or {}).items():
                    metric = normalise_metric(metric_name)
                    got = None if metric is None else _json_value(
                        out, metric, v, _json_path(*inner, name, slice_value, metric_name))
                    if metric and got is not None:
                        out[(cfg, normalise_slice(f"{name}={slice_value}"), metric)] = got
        else:
            metric = normalise_metric(name)
            got = None if metric is None else _json_value(out, metric, value, _json_path(*inner, name))
            if metric and got is not None:
                out[(cfg, "all", metric)] = got
    return True


def _flatten_nested(obj: dict[str, Any], cfg: str | None, out: dict) -> bool:
    """``{slice: {metric: v}}`` or ``{metric: {slice: v}}``; True when recognised."""
    if not obj or not all(isinstance(v, dict) for v in obj.values()):
        return False
    top = () if cfg is None else (cfg,)
    seen: dict[tuple[str | None, str, str], str] = {}
    outer_metrics = [k for k in obj if normalise_metric(k)]
    if outer_metrics and len(outer_metrics) == len(obj):
        for metric_name, per in obj.items():
            metric = normalise_metric(metric_name)
            for slice_name, v in per.items():
                where = _json_path(*top, metric_name, slice_name)
                got = _json_value(out, metric, v, where)
                if got is not None:
                    _put_json(out, (cfg, normalise_slice(slice_name), metric), got, where, seen)
        return True
    found = False
    for slice_name, per in obj.items():
        for metric_name, v in per.items():
            metric = normalise_metric(metric_name)
            if metric is None:
                continue
            where = _json_path(*top, slice_name, metric_name)
            got = _json_value(out, metric, v, where)
            if got is not None:
                _put_json(out, (cfg, normalise_slice(slice_name), metric), got, where, seen)
                found = True
            elif _REFUSED in out:
                found = True  # recognised, and refused: the refusal is the answer, not "unrecognised"
    return found


def flatten_rows(rows: list[dict[str, Any]], out: dict, skipped: list[str] | None = None, first_line: int | None = 1,
                 lines: Sequence[int] | None = None) -> bool:
    """Row dicts in long (``metric``/``value``) or wide (one column per metric) form.

    Rows (or cells) that cannot be read, an unknown metric name or a value that
    is not a number, are listed in ``skipped`` (``"line N, column C: why"``)
    instead of being dropped silently; without a ``skipped`` list the notes go
    to the :class:`MetricBaseline` made of ``out``. Row ``i`` is on line
    ``lines[i]`` when given, else ``first_line + i``; ``first_line=None`` names
    rows ``row i+1`` (a JSON document's list, which has no line per row).

    A key given twice (the same metric, slice and configuration) and a table
    in a recognised form of which no value can be read are refused (noted in
    ``out`` and raised by :class:`MetricBaseline`, naming the line).
    """
    if not rows or not all(isinstance(r, dict) for r in rows):
        return False
    reader = _RowReader(out, first_line, lines)
    keys = {str(k).lower(): k for k in rows[0]}
    slice_col = next((keys[c] for c in ("slice", "subset", "group", "complexity", "operator", "operator_type") if c in keys), None)
    cfg_col = next((keys[c] for c in ("config", "configuration", "retriever", "run") if c in keys), None)
    if "metric" in keys and "value" in keys:
        _read_long(rows, reader, keys["metric"], keys["value"], slice_col, cfg_col)
    elif "metric" in keys:
        _read_metric_per_row(rows, reader, keys["metric"], cfg_col)
    elif not _read_wide(rows, reader, slice_col, cfg_col):
        return False
    reader.finish(skipped)
    return True


def _column(col: Any) -> str:
    return f"column {str(col)!r}"


class _RowReader:
    """One table's reading by :func:`flatten_rows`: where each row is, the notes on what was left out, the keys put."""

    def __init__(self, out: dict, first_line: int | None, lines: Sequence[int] | None) -> None:
        self.out, self.first_line, self.lines = out, first_line, lines
        self.notes: list[str] = []
        self.first_skip: list[tuple[int | None, str, str]] = []  # (line, why, expected) of the first row left out
        self.seen: dict[tuple[str | None, str, str], str] = {}
        self.unknown_metric = f"a metric name ({', '.join(valid_names())})"

    def where(self, i: int) -> tuple[int | None, str]:
        """Row ``i``'s line (``None``: a list without lines) and how a message names it."""
        line = self.lines[i] if self.lines is not None else None if self.first_line is None else self.first_line + i
        return line, (f"row {i + 1}" if line is None else f"line {line}")

    def skip(self, i: int, why: str, expected: str) -> None:
        """Note a row (or cell) left out."""
        line, label = self.where(i)
        self.notes.append(f"{label}, {why}")
        if not self.first_skip:
            self.first_skip.append((line, why if line is not None else f"{label}, {why}", expected))

    def put(self, i: int, key: tuple[str | None, str, str], value: float | Impossible, col: Any = None) -> None:
        """Store a value under ``key``; a key given twice is refused."""
        line, label = self.where(i)
        at = label if col is None else f"{label}, {_column(col)}"
        if key in self.seen:
            again = "" if col is None else f", in {_column(col)}"
            text = f"{_key_text(key)} is given a second time{again} (first on {self.seen[key]})"
            _refuse(self.out, line, text if line is not None else f"{label}: {text}", _ONCE)
            return
        self.seen[key] = at
        self.out[key] = value

    def number(self, i: int, col: Any, raw: Any) -> float | None:
        """A cell's number; a cell that holds something else is noted."""
        value = _number(raw)
        if value is None and raw not in (None, ""):
            self.skip(i, f"{_column(col)}: {raw!r} is not a number", _A_NUMBER)
        return value

    def metric(self, i: int, col: Any, raw: Any) -> str | None:
        """A cell's metric name (normalised); an unknown one is noted."""
        metric = normalise_metric(raw)
        if metric is None:
            self.skip(i, f"{_column(col)}: unknown metric {raw!r}", self.unknown_metric)
        return metric

    def finish(self, skipped: list[str] | None) -> None:
        """Hand the notes on (to ``skipped``, else to ``out``); refuse a table of which no value was read."""
        if self.notes:
            if skipped is not None:
                skipped.extend(self.notes)
            else:
                self.out.setdefault(_SKIPPED, []).extend(self.notes)
        if not self.seen and _REFUSED not in self.out:  # a table in a recognised form, but not one value read
            if self.first_skip:
                line, why, expected = self.first_skip[0]
                _refuse(self.out, line, f"no value of the table could be read; the first: {why}", expected)
            else:
                _refuse(self.out, self.where(0)[0], "no value of the table could be read: every value cell is empty",
                        f"{_A_NUMBER} in the value cells")


def _read_long(rows: list[dict[str, Any]], reader: _RowReader, metric_col: Any, value_col: Any, slice_col: Any,
               cfg_col: Any) -> None:
    """The long form: a metric column and a value column, one value per row."""
    for i, row in enumerate(rows):
        metric = reader.metric(i, metric_col, row.get(metric_col))
        if metric is None:
            continue
        raw = row.get(value_col)
        value = reader.number(i, value_col, raw)
        if value is None:
            if raw in (None, ""):
                reader.skip(i, f"{_column(value_col)}: no value for {metric}", _A_NUMBER)
            continue
        reader.put(i, (_cfg(row, cfg_col), _slice_of(row, slice_col), metric),
                   checked(metric, value, raw, reader.where(i)[1]))


def _read_metric_per_row(rows: list[dict[str, Any]], reader: _RowReader, metric_col: Any, cfg_col: Any) -> None:
    """A metric column, one column per slice."""
    for i, row in enumerate(rows):
        metric = reader.metric(i, metric_col, row.get(metric_col))
        if metric is None:
            continue
        for col, raw in row.items():
            if col in (metric_col, cfg_col):
                continue
            value = reader.number(i, col, raw)
            if value is not None:
                reader.put(i, (_cfg(row, cfg_col), normalise_slice(col), metric),
                           checked(metric, value, raw, reader.where(i)[1]), col)


def _read_wide(rows: list[dict[str, Any]], reader: _RowReader, slice_col: Any, cfg_col: Any) -> bool:
    """The wide form, one column per metric; False when no column names a metric (not a metric table)."""
    metric_cols = [k for k in rows[0] if normalise_metric(k)]
    if not metric_cols:
        return False
    for i, row in enumerate(rows):
        sl = _slice_of(row, slice_col)
        for col in metric_cols:
            raw = row.get(col)
            value = reader.number(i, col, raw)
            if value is not None:
                metric = normalise_metric(col)
                reader.put(i, (_cfg(row, cfg_col), sl, metric), checked(metric, value, raw, reader.where(i)[1]), col)
    return True


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
    """Fill ``out`` from a parsed JSON document (any form of the module docstring); True when recognised.

    A problem found (a string where a number is expected, a key given twice) is
    noted in ``out`` and raised, naming the file, by the :class:`MetricBaseline` made of it.
    """
    if isinstance(obj, list):
        return flatten_rows(obj, out, first_line=None)
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
    out.pop(_REFUSED, None)  # the scorer's own object: a value that is no number is no number to compare
    # the scorer's own values are in range by construction; one that is not is no number to compare either
    return {(sl, metric): v for (_, sl, metric), v in out.items() if not isinstance(v, Impossible)}


def _lines_from(text: str, line: int) -> str:
    """``text`` from physical line ``line`` on (lines as :mod:`csv` counts them)."""
    return "".join(io.StringIO(text, newline="").readlines()[line - 1:])


def _csv_rows(path: Path, text: str, delimiter: str) -> tuple[list[str] | None, int, list[dict[str, Any]], list[int]]:
    """The header, its line, the rows as ``{column: cell}`` (as :class:`csv.DictReader` makes them) and their lines.

    Blank lines are passed over; a row shorter than the header has ``None`` in the
    columns it lacks. Refused: a column name given twice, a row with more
    (non-empty) fields than the header, a quote never closed, a cell over the
    :mod:`csv` field size limit.
    """
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    header_line = 1
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    start = 1  # the line the row being read starts on
    sep = "a tab" if delimiter == "\t" else "a comma"
    try:
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not cells:
                continue  # a blank line
            if header is None:
                header, header_line = cells, line
                names: dict[str, int] = {}
                for j, name in enumerate(cells, start=1):
                    folded = name.strip().casefold()
                    if folded and folded in names:
                        raise InputError(path, line, f"column {name.strip()!r} is given twice in the header "
                                         f"(columns {names[folded]} and {j})", f"{_ONCE}: one column per name")
                    names.setdefault(folded, j)
                continue
            if len(cells) > len(header) and any(c.strip() for c in cells[len(header):]):
                raise InputError(path, line, f"the row has {len(cells)} fields, the header (line {header_line}) {len(header)}",
                                 f"at most {len(header)} fields, one per column of the header (a value holding {sep} "
                                 "must be quoted; a decimal comma? write 0.2)")
            rows.append({name: cells[j] if j < len(cells) else None for j, name in enumerate(header)})
            lines.append(line)
    except csv.Error as exc:
        limit = csv.field_size_limit()
        if "field larger than field limit" in str(exc):
            raise InputError(path, start, f"a field longer than {limit:,} characters", "a metric table") from None
        raise InputError(path, start, f"not readable as CSV: {exc}", "a CSV metric table") from None
    if rows or header is not None:
        # csv reads a quote never closed to the end of the file without a word: asked strictly, it tells
        last = lines[-1] if rows else header_line
        try:
            for _ in csv.reader(io.StringIO(_lines_from(text, last), newline=""), delimiter=delimiter, strict=True):
                pass
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                raise InputError(path, last, "unterminated quote: a quoted field of this row is never closed "
                                 "(it runs to the end of the file)", 'a closing " for every opening one') from None
    return header, header_line, rows, lines


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
    expected = "columns metric,slice,value (long form), or a slice column plus metric columns such as TRP,CCR"
    header, header_line, rows, lines = _csv_rows(path, text, delimiter)
    if header is None:
        raise InputError(path, None, "empty file: no header and no rows", f"a header line ({expected}) and rows of values")
    if not rows:
        raise InputError(path, header_line, f"no data rows: the header (columns {sorted(header)}) is all there is",
                         "at least one row of values under the header")
    values: dict = {}
    skipped: list[str] = []
    if flatten_rows(rows, values, skipped, lines=lines):
        return MetricBaseline(path=path, values=values, skipped=skipped)
    raise InputError(path, header_line, f"unrecognised baselines table: found columns {sorted(header)}", expected)
