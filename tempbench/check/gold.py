"""Gold hops in the KG: the share of ``S_star`` triples present at a year valid at ``t_query`` (a low share means another KG).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tempbench.check.benchmark import valid_ids
from tempbench.check.report import GOLD_HOPS_OK, CheckReport, pct, rel_path
from tempbench_core.schema import whole_year


def _dense(*columns: np.ndarray) -> np.ndarray:
    """A dense int64 id per distinct tuple of the (non-negative int) columns, without overflow."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col in columns:
        col = col.astype(np.int64)
        width = int(col.max()) + 1 if len(col) else 1
        _, key = np.unique(key * width + col, return_inverse=True)
        key = key.astype(np.int64).reshape(-1)
    return key


def gold_hops_in_kg(kg_cols: tuple[np.ndarray, np.ndarray, np.ndarray], year: np.ndarray,
                    hop_cols: tuple[np.ndarray, np.ndarray, np.ndarray], hop_year: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which hops exist in the KG, at any year and at the hop's valid year.

    Parameters
    ----------
    kg_cols:
        ``(s, r, o)`` codes of every KG row (non-negative ints in one key space).
    year:
        The rows' years.
    hop_cols:
        ``(s, r, o)`` codes of the hops in the same space; ``-1`` for a code the
        KG does not have.
    hop_year:
        Per hop, the one KG year valid at its question's ``t_query``: on the
        point-in-time KG ``valid_at(y, y, t_query)`` holds exactly for
        ``y == t_query`` (SPEC §2.4). A ``t_query`` that is not a whole year
        has no valid year: give any value outside the KG's years.

    Returns
    -------
    (ndarray, ndarray)
        Boolean arrays over the hops: in the KG at any year; at the valid year.
        Vectorised: one sort of the KG, binary searches for the hops.
    """
    n = len(hop_year)
    known = np.ones(n, dtype=bool)
    for col in hop_cols:
        known &= col >= 0
    if not len(year) or not n:
        return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    # Codes shared by KG rows and hops, densified together so the keys never overflow.
    both = [np.concatenate([k.astype(np.int64), np.where(known, h, 0).astype(np.int64)]) for k, h in zip(kg_cols, hop_cols, strict=True)]
    triple = _dense(*both)
    kg_triple, hop_triple = triple[: len(year)], triple[len(year):]
    y0 = int(year.min())
    span = int(year.max()) - y0 + 1
    kg_key = np.sort(kg_triple * span + (year.astype(np.int64) - y0))
    lo = np.searchsorted(kg_key, hop_triple * span, side="left")
    hi = np.searchsorted(kg_key, hop_triple * span + span, side="left")
    any_year = known & (hi > lo)
    offset = hop_year.astype(np.int64) - y0
    in_range = (offset >= 0) & (offset < span)
    probe = hop_triple * span + np.clip(offset, 0, span - 1)
    pos = np.searchsorted(kg_key, probe, side="left")
    found = (pos < len(kg_key)) & (kg_key[np.minimum(pos, len(kg_key) - 1)] == probe)
    return any_year, any_year & in_range & found


def check_gold_hops(report: CheckReport, st: dict[str, Any]) -> None:
    """The share of gold hops (``S_star`` triples) found in the KG at a year valid at ``t_query``.

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    kg: Any = st.get("kg")
    questions = st.get("questions")
    if kg is None or questions is None or "entity_labels" not in st:
        return
    # Label space: a code per distinct rendered label, for the KG rows and the hops alike.
    ent_text, ent_code = np.unique(np.asarray(st["entity_labels"], dtype=object), return_inverse=True)
    rel_text, rel_code = np.unique(np.asarray(st["relation_labels"], dtype=object), return_inverse=True)
    ent_lookup = {t: i for i, t in enumerate(ent_text.tolist())}
    rel_lookup = {t: i for i, t in enumerate(rel_text.tolist())}
    ids: list[tuple[int, int, int, int]] = []
    labs: list[tuple[int, int, int, int]] = []
    for q in questions:
        year = whole_year(q["t_query"])
        y = -(1 << 40) if year is None else year
        for t in q["S_star"]:
            if valid_ids(t):
                ids.append((kg.entity_index.get(str(t["s_id"]), -1), kg.relation_index.get(str(t["r_id"]), -1),
                            kg.entity_index.get(str(t["o_id"]), -1), y))
            else:
                labs.append((ent_lookup.get(str(t["s"]), -1), rel_lookup.get(str(t["r"]), -1),
                             ent_lookup.get(str(t["o"]), -1), y))
    any_year = valid = 0
    for rows, cols in ((ids, (kg.head, kg.relation, kg.tail)),
                       (labs, (ent_code.reshape(-1)[kg.head], rel_code.reshape(-1)[kg.relation], ent_code.reshape(-1)[kg.tail]))):
        if not rows:
            continue
        hop = np.asarray(rows, dtype=np.int64)
        a, v = gold_hops_in_kg(cols, kg.year, (hop[:, 0], hop[:, 1], hop[:, 2]), hop[:, 3])
        any_year += int(a.sum())
        valid += int(v.sum())
    total = len(ids) + len(labs)
    report.facts["gold_hops"] = {"hops": total, "by_id": len(ids), "by_label": len(labs),
                                 "in_kg_any_year": any_year, "in_kg_valid_year": valid}
    name = rel_path(st["data"].kg, st["root"])
    text = (f"{valid:,} of {total:,} gold hops ({pct(valid, total)}) exist in the KG at a year valid at t_query "
            f"({any_year:,}, {pct(any_year, total)}, at any year)")
    if total and valid / total < GOLD_HOPS_OK:
        hint = ("a foreign KG: the benchmark was not built from it" if any_year / total < 0.5
                else "another version of the KG than the one the benchmark was built from")
        report.add("warning", name, f"only {text}: {hint}; the hops it lacks can never be retrieved", "kg.gold_hops")
    else:
        report.add("info", name, text, "kg.gold_hops")


