"""The report's tables: headline, per slice, audit; cells formatted for Markdown and terminals."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from eval.audit.format import format_delta, format_value
from tempbench_core.schema import SHIPPED_CONFIGS
from tempbench_core.text import markdown_cell, markdown_code


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if not math.isfinite(value):
            # never printed as a number: impossible values are refused where they are read, so
            # this is the last line of defence, and it says what it found
            return f"invalid ({value})"
        text = f"{value:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.000"
    return str(value)


def _ci(scores: Mapping[str, Any], *names: str) -> list[float] | None:
    ci = scores.get("ci") or {}
    for name in names:
        if ci.get(name) is not None:
            return ci[name]
    return None


def _fmt_ci(interval: Sequence[float] | None) -> str:
    return "–" if not interval else f"[{interval[0]:.3f}, {interval[1]:.3f}]"


def _tie_range(scores: Mapping[str, Any], metric: str) -> str:
    t = (scores.get("ties") or {}).get(metric)
    if not t or t.get("min") is None:
        return "–"
    return f"{t['min']:.3f}–{t['max']:.3f}"


def ordered(scores: Mapping[str, Any]) -> list[str]:
    """Configuration names: the paper's four first, then the rest as given."""
    return [c for c in SHIPPED_CONFIGS if c in scores] + [c for c in scores if c not in SHIPPED_CONFIGS]


def headline_rows(scores: Mapping[str, Mapping[str, Any]], compact: bool = False) -> tuple[list[str], list[list[Any]]]:
    """The headline table: one row per configuration (coverage always beside TRP, SPEC §3.2).

    ``compact=True`` gives the terminal version (fits 80 columns): no tie ranges,
    intervals as ``low-high``.
    """
    if compact:
        columns = ["config", "n", "coverage", "TRP", "TRP 95% CI", "CCR", "CCR 95% CI"]
    else:
        columns = ["config", "questions", "coverage", "TRP", "TRP 95% CI", "CCR", "CCR 95% CI", "TRP tie range", "CCR tie range"]
    rows = []
    for name in ordered(scores):
        s = scores[name]
        agg = s.get("trp_ccr") or {}
        trp_ci, ccr_ci = _ci(s, "TRP", "TRP_macro"), _ci(s, "CCR")
        row = [name, agg.get("n_questions", 0), agg.get("coverage"), agg.get("TRP_macro")]
        if compact:
            row += [_short_ci(trp_ci), agg.get("CCR"), _short_ci(ccr_ci)]
        else:
            row += [_fmt_ci(trp_ci), agg.get("CCR"), _fmt_ci(ccr_ci), _tie_range(s, "TRP"), _tie_range(s, "CCR")]
        rows.append(row)
    return columns, rows


def _short_ci(interval: Sequence[float] | None) -> str:
    return "-" if not interval else f"{interval[0]:.3f}-{interval[1]:.3f}"


def slice_values(scores: Mapping[str, Mapping[str, Any]], field: str) -> list[str]:
    values: set[str] = set()
    for s in scores.values():
        values |= set(((s.get("trp_ccr") or {}).get(f"by_{field}") or {}).keys())
    return sorted(values, key=str)


def slice_rows(scores: Mapping[str, Mapping[str, Any]], field: str) -> tuple[list[str], list[list[Any]]]:
    """Per-slice table: n, coverage, TRP, CCR for every configuration."""
    names = ordered(scores)
    columns = [field, "n"]
    for name in names:
        columns += [f"{name} cov", f"{name} TRP", f"{name} CCR"]
    rows = []
    for value in slice_values(scores, field):
        n = None
        row: list[Any] = [value]
        cells: list[Any] = []
        for name in names:
            per = ((scores[name].get("trp_ccr") or {}).get(f"by_{field}") or {}).get(value)
            cov = ((scores[name].get("coverage") or {}).get(f"by_{field}") or {}).get(value)
            if per is not None and n is None:
                n = per.get("n")
            cells += [cov, None if per is None else per.get("TRP"), None if per is None else per.get("CCR")]
        rows.append(row + [n] + cells)
    return columns, rows


def md_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table; every header and cell through :func:`tempbench_core.text.markdown_cell` (one line, bars escaped)."""
    head = "| " + " | ".join(markdown_cell(c) for c in columns) + " |"
    sep = "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(columns))) + "|"
    body = ["| " + " | ".join(markdown_cell(fmt(v)) for v in row) + " |" for row in rows]
    return "\n".join([head, sep, *body])


def audit_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The audit as Markdown: claim, paper, reproduced, delta, verdict, note."""
    out = []
    for r in rows:
        reproduced = format_value(r["reproduced"], r["kind"], r["of"], like=r["paper"])
        note = r.get("reason") or r.get("note") or ""
        out.append([f"{markdown_code(r['id'])} {r['what']}", format_value(r["paper"], r["kind"], r["paper_of"]), reproduced,
                    format_delta(r["delta"], r["kind"], like=r["paper"]), r["verdict"], note])
    return md_table(["claim", "paper", "reproduced", "delta", "verdict", "note"], out)
