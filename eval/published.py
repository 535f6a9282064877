"""The published outputs beside the reproduction: our TRP, their reported TRP, TRP of their evidence.

A release's ``baselines/`` (SPEC §1.4) may hold the reference retriever's
evidence per question, metric tables, or both. :func:`eval.diff.compare` turns
each file into metric rows ``{slice, metric, run, baseline}``: for an evidence
file ``baseline`` is the value of *their evidence* scored by our scorer, for a
table it is the value *they reported*. :func:`published_rows` puts them side by
side with our own run, one row per configuration and metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tempbench_core.text import markdown_code

#: The headline metrics compared (names as the flattened score rows use them, SPEC §3.2).
PUBLISHED_METRICS = ("TRP", "CCR", "coverage")


def _overall(rows: list[Mapping[str, Any]], metric: str) -> float | str | None:
    """The overall value of ``metric``; for an impossible published value its mark (``invalid: nan``), never a number."""
    row = next((r for r in rows if r.get("slice") == "all" and r.get("metric") == metric), None)
    if row is None:
        return None
    return f"invalid: {row['invalid']['given']}" if row.get("invalid") else row["baseline"]


def published_values(diffs: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{config: {metric: {"reported": (file, value) | None, "evidence": (file, value) | None}}}`` from diff results."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for name, d in diffs.items():
        config = d.get("config")
        rows = d.get("metrics") or []
        if config is None or not rows:
            continue
        role = "evidence" if d.get("baseline_kind") == "evidence" else "reported"
        per = out.setdefault(config, {m: {"reported": None, "evidence": None} for m in PUBLISHED_METRICS})
        for metric in PUBLISHED_METRICS:
            value = _overall(rows, metric)
            if value is not None and per[metric][role] is None:
                per[metric][role] = (name, value)
    return out


def published_rows(scores: Mapping[str, Mapping[str, Any]],
                   diffs: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """One row per configuration and metric: ours, reported by the authors, of their evidence (and the files)."""
    values = published_values(diffs)
    ours_key = {"TRP": "TRP_macro", "CCR": "CCR", "coverage": "coverage"}
    columns = ["config", "metric", "ours", "reported", "of their evidence", "from"]
    rows = []
    for config, per in values.items():
        agg = (scores.get(config) or {}).get("trp_ccr") or {}
        for metric in PUBLISHED_METRICS:
            reported, evidence = per[metric]["reported"], per[metric]["evidence"]
            if reported is None and evidence is None:
                continue
            sources = ", ".join(markdown_code(f) for f in dict.fromkeys(x[0] for x in (reported, evidence) if x))
            rows.append([config, metric, agg.get(ours_key[metric]), None if reported is None else reported[1],
                         None if evidence is None else evidence[1], sources])
    return columns, rows
