"""TRP and CCR per question and their aggregate (SPEC §3.1, §3.2).

TRP is the *temporal retrieval precision*: the share of the returned evidence
that is a gold triple valid at the query time. CCR is the *chain consistency
rate*: 1 when the valid gold matches cover every gold triple of the chain.
The public functions mirror the dataset's published scorer, so code written
against it switches by changing one import:

* ``score_question(question, evidence, key='auto') -> row``
* ``aggregate(rows, by=('complexity', 'operator')) -> dict``

Per question, with ``gold = {(s, r, o) of every S_star triple}`` and
``tq = float(t_query)``::

    hits = #{retrieved items i : (s_i, r_i, o_i) in gold and t_start_i <= tq <= t_end_i}
    TRP  = hits / n_ret            (None when n_ret == 0)
    CCR  = 1 if gold and {(s, r, o) of the hits} == gold else 0

Repeated items count again (no deduplication). The scorer never truncates.
Matching of items to the gold (key spaces) is :mod:`eval.keyspace`; every
question of a run is read once into :class:`eval.evidence.EvidenceTable`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from eval.evidence import EvidenceTable, resolve
from eval.keyspace import DEFAULT_KEY
from tempbench_core.arrays import sorted_unique


def trp_ccr_arrays(table: EvidenceTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(n_ret, hits, ccr)`` per question (SPEC §3.1), the kernel of this module.

    ``hits`` counts every returned item that is a gold triple valid at
    ``t_query`` (repeats again); ``ccr`` is 1 when the distinct gold classes
    hit are all of the question's classes (and it has one).
    """
    items = table.items
    n_ret = np.diff(items.start)
    hit = table.hits(items)
    hits = np.bincount(items.q[hit], minlength=table.n)
    distinct = sorted_unique(items.gid[hit])
    covered = np.bincount(np.searchsorted(table.cls_start, distinct, side="right") - 1, minlength=table.n)
    ccr = ((table.n_gold > 0) & (covered == table.n_gold)).astype(np.int64)
    return n_ret, hits, ccr


def rows(table: EvidenceTable) -> list[dict[str, Any]]:
    """The published per-question rows (SPEC §3.1), in question order."""
    n_ret, hits, ccr = (a.tolist() for a in trp_ccr_arrays(table))
    n_gold = table.n_gold.tolist()
    return [{"id": q.get("id"), "complexity": q.get("complexity"), "operator": q.get("operator_type"),
             "n_ret": nr, "hits": h, "n_gold": ng, "trp": h / nr if nr else None, "ccr": c}
            for q, nr, h, ng, c in zip(table.questions, n_ret, hits, n_gold, ccr, strict=True)]


def score_question(question: Mapping[str, Any], evidence: Iterable[Any], key: str = DEFAULT_KEY) -> dict[str, Any]:
    """TRP/CCR row of one question (SPEC §3.1): :func:`rows` of its one-row table.

    Parameters
    ----------
    question:
        Benchmark record (needs ``S_star`` and ``t_query``; ``id``,
        ``complexity``, ``operator_type`` are copied, ``None`` when absent).
    evidence:
        Retrieved items, already cut to k: dicts in label or id space, or
        5-tuples ``(s, r, o, t_start, t_end)``; any iterable, consumed once.
    key:
        ``'auto'`` (per-item rule of SPEC §3.1), ``'label'`` or ``'id'``.

    Returns
    -------
    dict
        ``id, complexity, operator, n_ret, hits, n_gold, trp, ccr`` where
        ``trp = hits / n_ret`` (None if ``n_ret == 0``) and ``ccr = 1`` iff the
        gold set is non-empty and equals the set of ``(s, r, o)`` of the hits.

    Raises
    ------
    EvidenceError
        An item of another length, a dict without a full key space or without
        ``t_start``/``t_end``, or no key space shared with the gold.
    """
    return rows(resolve([question], [evidence], None, key))[0]


def aggregate(rows: Iterable[Mapping[str, Any]], by: Sequence[str] = ("complexity", "operator")) -> dict[str, Any]:
    """Aggregate rows as the published scorer does (SPEC §3.2).

    ``coverage = #{n_ret > 0} / n``; ``TRP_macro`` = mean ``trp`` over rows with
    ``n_ret > 0`` (0.0 if none); ``TRP_micro = sum(hits) / sum(n_ret)`` (0.0 if
    the denominator is 0); ``CCR`` = mean ``ccr`` over all rows. For each field
    ``f`` of ``by``, ``by_f`` maps each value (ordered by ``str(value)``) to
    ``{'n', 'TRP', 'CCR'}`` with TRP macro inside the slice.
    Returns ``{'n_questions': 0}`` for no rows.
    """
    rows = list(rows)
    n = len(rows)
    if n == 0:
        return {"n_questions": 0}
    retrieved = [r for r in rows if r["n_ret"] > 0]
    total_ret = sum(r["n_ret"] for r in rows)
    out: dict[str, Any] = {
        "n_questions": n,
        "coverage": len(retrieved) / n,
        "TRP_macro": sum(r["trp"] for r in retrieved) / len(retrieved) if retrieved else 0.0,
        "TRP_micro": sum(r["hits"] for r in rows) / total_ret if total_ret else 0.0,
        "CCR": sum(r["ccr"] for r in rows) / n,
    }
    for name in by:
        groups: dict[Any, list[Mapping[str, Any]]] = {}
        for r in rows:
            groups.setdefault(r.get(name), []).append(r)
        sliced = {}
        for value in sorted(groups, key=str):
            members = groups[value]
            ret = [r for r in members if r["n_ret"] > 0]
            sliced[value] = {
                "n": len(members),
                "TRP": sum(r["trp"] for r in ret) / len(ret) if ret else 0.0,
                "CCR": sum(r["ccr"] for r in members) / len(members),
            }
        out[f"by_{name}"] = sliced
    return out


def coverage_by(rows: Iterable[Mapping[str, Any]], by: Sequence[str] = ("complexity", "operator")) -> dict[str, Any]:
    """Per-slice coverage, the separate ``coverage`` object of SPEC §3.2/§6.2."""
    rows = list(rows)
    out: dict[str, Any] = {"overall": (sum(1 for r in rows if r["n_ret"] > 0) / len(rows)) if rows else None}
    for name in by:
        groups: dict[Any, list[int]] = {}
        for r in rows:
            groups.setdefault(r.get(name), []).append(1 if r["n_ret"] > 0 else 0)
        out[f"by_{name}"] = {v: sum(groups[v]) / len(groups[v]) for v in sorted(groups, key=str)}
    return out
