"""Recompute every claim and give it a verdict (SPEC §4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eval.audit.claims import Claim, load_claims, shipped_tolerances
from eval.audit.context import AuditContext
from eval.audit.format import verdict_counts
from eval.audit.registry import COMPUTE
from eval.audit.values import NotComputable
from eval.audit.verdict import BY_CONSTRUCTION, NA, OK, SCALE, delta, verdict
from tempbench_core.errors import ConfigError
from tempbench_core.provenance import absolute


def run_audit(ctx: AuditContext, claims: Sequence[Claim] | None = None,
              tolerances: Mapping[str, Mapping[str, float]] | None = None,
              select: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Recompute every claim (or those whose id starts with one of ``select``).

    On data that is not the release (:func:`is_release`), a count marked
    ``scales`` that differs from the paper gets the verdict ``scale`` instead
    of OKish/FAIL; its ``share`` row keeps its own verdict. On data whose
    origin (``ctx.origin``) a claim lists in ``by_construction``, a computed
    value gets ``by-construction`` whatever it is (it says nothing about the
    release: tempbench's builder made it so).

    Returns
    -------
    list of dict
        One row per claim: ``id, section, group, what, kind, paper, paper_of,
        reproduced, of, delta, verdict, note, reason, command``.
    """
    if claims is None:
        claims, tolerances = load_claims()
    if tolerances is None:
        tolerances = shipped_tolerances()
    release = is_release(ctx, claims)
    origin = getattr(ctx, "origin", "unknown")
    rows = []
    for claim in claims:
        if select and not any(claim.id.startswith(s) for s in select):
            continue
        reason = None
        try:
            got = COMPUTE[claim.compute](ctx, **claim.params)
        except NotComputable as exc:
            got, reason = None, str(exc)
        except TypeError as exc:  # wrong params in the TOML: a config problem, said so
            raise ConfigError(f"claim {claim.id!r}: bad params {claim.params}: {exc}") from None
        reproduced = None if got is None else got.value
        tol = {**tolerances.get(claim.kind, {}), **claim.tolerance}
        notes = [n for n in (claim.note, None if got is None else got.note) if n]
        judged = verdict(claim.paper, reproduced, claim.kind, tol)
        if origin in claim.by_construction and judged != NA:
            judged = BY_CONSTRUCTION
            notes.append(f"true by construction on {origin} data: tempbench's builder makes it so")
        elif claim.scales and not release and judged not in (OK, NA):
            judged = SCALE
            notes.append("scales with the data's size" + (f"; compare the share row {claim.share}" if claim.share else ""))
        rows.append({
            "id": claim.id,
            "section": claim.section,
            "group": claim.group,
            "what": claim.what,
            "kind": claim.kind,
            "paper": claim.paper,
            "paper_of": claim.paper_of,
            "reproduced": reproduced,
            "of": None if got is None else got.of,
            "delta": delta(claim.paper, reproduced, claim.kind),
            "verdict": judged,
            "note": "; ".join(notes) if notes else None,
            "reason": reason,
            "command": claim.command,
        })
    return rows


def is_release(ctx: AuditContext, claims: Sequence[Claim]) -> bool:
    """Whether the data has the release's size: not made by tempbench, and as many questions as the card's total.

    This decides the ``scale`` verdict only (a count of data of another size
    is not comparable); the card's total is the paper value of the claim
    ``split.all.questions`` (when the claims file has it). Data generated or
    built by tempbench is never the release, whatever its size.
    """
    if getattr(ctx, "origin", None) in ("generated", "built") or getattr(ctx.data, "generated", False):
        return False
    total = next((c.paper for c in claims if c.id == "split.all.questions"), None)
    return total is None or len(ctx.questions) == total


def audit_document(ctx: AuditContext, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON of ``tempbench audit --json`` and of ``tempbench reproduce`` (``audit.json``)."""
    return {
        "data": None if ctx.data.root is None else absolute(ctx.data.root),
        "origin": ctx.origin,
        "provenance": ctx.provenance.to_json(),
        "split": ctx.split,
        "run_sources": dict(ctx.run_sources),
        "verdicts": verdict_counts(rows),
        "claims": rows,
    }
