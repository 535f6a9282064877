"""The audit as a table: values with the paper's precision, signed deltas, verdict counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tempbench_core.provenance import describe_origin

#: What the verdicts mean, per data origin (tempbench_core.provenance.ORIGINS).
VERDICTS_MEAN = {
    "release": "every claim should reproduce; a FAIL is a difference from the card",
    "generated": "a claim the generator makes true reads by-construction; FAIL is expected where a value depends on "
                 "the real release",
    "built": "a claim the builder makes true reads by-construction; the others compare the benchmark built from this "
             "KG with the card",
    "unknown": "the verdicts compare this data with the card as it is; none is known to hold by construction",
}


def _decimals(value: Any) -> int:
    text = repr(float(value))
    return max(3, len(text.split(".")[1])) if "." in text and "e" not in text else 3


def format_value(value: Any, kind: str, of: int | None = None, like: Any = None) -> str:
    """Render a paper or reproduced value for a table."""
    if value is None:
        return "-"
    if kind == "range":
        return f"{value[0]:.3f}-{value[1]:.3f}"
    if kind == "count":
        text = f"{int(value):,}"
        return text if of is None else f"{text} of {int(of):,}"
    return f"{float(value):.{_decimals(like if like is not None else value)}f}"


def format_delta(d: Any, kind: str, like: Any = None) -> str:
    """A signed delta, with as many decimals as the paper value (at least 3)."""
    if d is None:
        return "-"
    if kind == "count":
        return f"{int(d):+,}"
    digits = _decimals(like) if like is not None and kind == "rate" else 3
    text = f"{d:+.{digits}f}"
    return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


def table_rows(rows: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    """``claim | paper | reproduced | delta | verdict`` cells for printing."""
    out = []
    for r in rows:
        reproduced = format_value(r["reproduced"], r["kind"], r["of"], like=r["paper"])
        if r["reproduced"] is None and r["reason"]:
            reproduced = f"- ({r['reason']})"
        out.append([r["what"], format_value(r["paper"], r["kind"], r["paper_of"]), reproduced,
                    format_delta(r["delta"], r["kind"], like=r["paper"]), r["verdict"]])
    return out


AUDIT_COLUMNS = ("claim", "paper", "reproduced", "delta", "verdict")


def verdict_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    """``{verdict: count}`` over the headline claims, sorted by verdict.

    Alternative readings (``section`` ending in ``-alt``) are shown in the table
    but left out of the count, so each claim of SPEC §4 is counted once.
    """
    counts: dict[str, int] = {}
    for r in rows:
        if not str(r.get("section", "")).endswith("-alt"):
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return dict(sorted(counts.items()))


def verdict_summary(rows: list[dict[str, Any]]) -> str:
    """``"50 headline claims (4 alternative readings not counted): FAIL 20, OK 15, ..."``.

    The one line that the terminal, ``audit.json`` readers and the report all
    print, so that its counts match the report's table.
    """
    counts = verdict_counts(rows)
    alternatives = sum(1 for r in rows if str(r.get("section", "")).endswith("-alt"))
    counted = sum(counts.values())
    text = ", ".join(f"{k} {v}" for k, v in counts.items())
    return f"{counted} headline claims ({alternatives} alternative readings not counted): {text}"


def data_kind(provenance: Any) -> tuple[str, str]:
    """``(what the data is, what its verdicts mean)``, from a :class:`~tempbench_core.provenance.Provenance` or its JSON."""
    doc = provenance.to_json() if hasattr(provenance, "to_json") else dict(provenance)
    origin = str(doc.get("origin", "unknown"))
    return describe_origin(origin, doc.get("detail") or {}, doc.get("kg")), VERDICTS_MEAN.get(origin, VERDICTS_MEAN["unknown"])


def data_kind_note(provenance: Any) -> str:
    """``"Computed on <the data>: <what the verdicts mean>."`` (empty without a provenance)."""
    if not provenance:
        return ""
    what, meaning = data_kind(provenance)
    return f"Computed on {what}: {meaning}."


def audit_line(rows: list[dict[str, Any]], provenance: Any) -> str:
    """The console's audit summary: ``on <the data>: <verdict_summary> (<what the verdicts mean>)``."""
    what, meaning = data_kind(provenance)
    return f"on {what}: {verdict_summary(rows)} ({meaning})"
