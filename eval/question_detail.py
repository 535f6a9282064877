"""One question of a run in full: what ``tempbench show`` prints and the report's question browser shows (SPEC §7).

:func:`question_detail` gathers, as plain data, the gold chain with the stage
at which each hop is lost (:class:`eval.explain.Explainer`), the stale and
distractor replacements (SPEC §3.3), the anchor against the gold subject, the
pool per hop with its caps, and the ranked evidence with marks, scores and the
cut-off tie group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from eval.explain import Explainer, Explanation
from eval.keyspace import GoldTriple, RawItems, gold_triples
from eval.negatives import differing_kept
from retriever import PoolSummary
from tempbench_core.memo import kept_for
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, format_span, valid_at


def item_line(item: Mapping[str, Any]) -> str:
    """The evidence line of an item: its ``line`` when it has one, else ``s | r | o | t`` (SPEC §2.5)."""
    line = item.get("line")
    if isinstance(line, str):
        return line
    names = LABEL_KEYS if all(k in item for k in LABEL_KEYS) else ID_KEYS
    t = format_span(item.get("t_start"), item.get("t_end")) if "t_start" in item else "?"
    return " | ".join(str(item.get(k, "")) for k in names) + f" | {t}"


def _triple_view(t: GoldTriple) -> dict[str, Any]:
    labels = t.keys.get("label")
    ids = t.keys.get("id")
    return {
        "s": None if labels is None else labels[0], "r": None if labels is None else labels[1],
        "o": None if labels is None else labels[2],
        "s_id": None if ids is None else ids[0], "r_id": None if ids is None else ids[1],
        "o_id": None if ids is None else ids[2],
        "t": format_span(t.t_start, t.t_end),
    }


#: The fields of an evidence or cut-off tie row of :func:`question_detail`, in order.
EVIDENCE_FIELDS = ("rank", "mark", "hop", "score", "line", "tie_group")
_ALL = object()  # every item is in the tie group (the cut-off ties)


def question_detail(explainer: Explainer, question: Mapping[str, Any], record: Mapping[str, Any],
                    facts: bool = True, shared: dict[Any, Any] | None = None,
                    item_rows: bool = False) -> dict[str, Any]:
    """Everything ``tempbench show`` prints about one question of a run, as plain data.

    Parameters
    ----------
    explainer:
        The :class:`~eval.explain.Explainer` of the run's configuration.
    question:
        The benchmark record.
    record:
        The question's run record.
    facts:
        With each hop, what each test of SPEC §7 found (evidence, valid KG
        rows, the three pools).
    shared:
        A cache, kept by the caller across configurations, of what depends on
        the question alone (the ``S_stale``/``S_dist`` replacements).
    item_rows:
        Evidence and cut-off ties as tuples in :data:`EVIDENCE_FIELDS` order
        instead of dicts (the browser's many rows).

    Returns
    -------
    dict
        Keys ``id, split, question, t_query, answer, operator, complexity,
        config, k, stages``; ``hops`` (gold chain, each with its stage);
        ``replacements`` (``S_stale``/``S_dist``: replaced hop -> replacement);
        ``anchor`` (run anchor, gold subject, hit); ``pool`` (rows per hop,
        caps, eligible rows, caps hit); ``evidence`` and ``cutoff_ties`` (rank,
        mark, hop, score, line, in the cut-off tie group).
    """
    ex = explainer.explain(question, record, facts=facts)
    read = ex.read
    cfg = explainer.config

    hops = []
    for hop in ex.hops:
        hops.append({"hop": len(hops) + 1, "position": hop.position, "space": hop.space, **_triple_view(hop.triple),
                     "stage": hop.stage, **hop.facts})

    _, replacements, negatives = question_negatives(question, read.gold, shared)
    anchor_idx = explainer.run_anchor(question, record)
    rows_evidence, rows_ties = _evidence_rows(ex, record, negatives)
    if not item_rows:
        rows_evidence = [dict(zip(EVIDENCE_FIELDS, row, strict=True)) for row in rows_evidence]
        rows_ties = [dict(zip(EVIDENCE_FIELDS, row, strict=True)) for row in rows_ties]

    return {
        "id": question.get("id"),
        "split": question.get("split"),
        "question": question.get("question"),
        "t_query": question.get("t_query"),
        "answer": question.get("answer"),
        "operator": question.get("operator_type"),
        "complexity": question.get("complexity"),
        "config": cfg.name,
        "k": cfg.k,
        "stages": ex.stages,
        "hops": hops,
        "replacements": replacements,
        "anchor": _anchor_view(explainer, question, record, anchor_idx, read.gold),
        "pool": _pool_view(explainer, question, anchor_idx, read.tq),
        "evidence": rows_evidence,
        "cutoff_ties": rows_ties,
    }


def _anchor_view(explainer: Explainer, question: Mapping[str, Any], record: Mapping[str, Any],
                 anchor_idx: int | None, gold: list[GoldTriple]) -> dict[str, Any]:
    """The run's anchor (as recorded, else recomputed) against the gold subject (SPEC §2.3)."""
    kg = explainer.index.kg
    labels = explainer.index.entity_labels
    anchor_rec = record.get("anchor") if isinstance(record.get("anchor"), Mapping) else None
    gold_idx = explainer.gold_subject(question)
    first = gold[0] if gold else None
    gold_view = _triple_view(first) if first is not None else {}
    return {
        "rule": explainer.config.anchor,
        "source": (anchor_rec or {}).get("source", "recomputed"),
        "id": (anchor_rec or {}).get("id") if anchor_rec else (None if anchor_idx is None else kg.entity_ids[anchor_idx]),
        "label": (anchor_rec or {}).get("label") if anchor_rec else (None if anchor_idx is None else labels[anchor_idx]),
        "in_kg": anchor_idx is not None,
        "gold_id": gold_view.get("s_id") if gold_idx is None else kg.entity_ids[gold_idx],
        "gold_label": gold_view.get("s") if gold_idx is None else labels[gold_idx],
        "hit": None if gold_idx is None else anchor_idx == gold_idx,
    }


def _pool_view(explainer: Explainer, question: Mapping[str, Any], anchor_idx: int | None,
               tq: Any) -> dict[str, Any]:
    """The BFS pool from the run's anchor per hop: rows taken, caps, eligible rows, caps hit (SPEC §2.4)."""
    cfg = explainer.config
    summary = explainer.pool_summary(question, anchor_idx)
    if summary is None:
        summary = PoolSummary.of(explainer.retriever.expand_from(anchor_idx, tq, count_eligible=True))
    return {
        "hops": cfg.hops, "caps": list(cfg.caps[: cfg.hops]),
        "rows": list(summary.hop_sizes) or [0] * cfg.hops,
        "eligible": list(summary.eligible) or [0] * cfg.hops,
        "cap_hit": [e > r for r, e in zip(summary.hop_sizes, summary.eligible, strict=True)] or [False] * cfg.hops,
        "pool_rows": int(len(summary.rows)), "candidates": summary.candidates,
        "temporal_filter": cfg.temporal_filter, "cap_scope": cfg.cap_scope, "cap_counts": cfg.cap_counts,
    }


def _evidence_rows(ex: Explanation, record: Mapping[str, Any], negatives: Mapping[str, list[GoldTriple]]
                   ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The ranked evidence and the cut-off ties as :data:`EVIDENCE_FIELDS` tuples.

    ``ex``: the question's explanation (:meth:`eval.explain.Explainer.explain`).
    The tie group of the evidence is the items scoring as the k-th when the
    run records cut-off ties; every cut-off tie is in it.
    """
    read = ex.read
    evidence = record.get("evidence") or []
    ties = record.get("cutoff_ties") or []
    kth = evidence[-1].get("score") if evidence and ties else None
    marks = _MarkSets(read.tq, {(space, srot) for t in negatives["S_dist"] for space, srot in t.keys.items()},
                      {t.five(space) for t in negatives["S_stale"] for space in t.keys})
    hop_of: dict[tuple[str, Any], int] = {}
    for k, h in enumerate(ex.hops):
        for space, srot in h.triple.keys.items():
            hop_of.setdefault((space, srot), k + 1)
    return (_item_view(evidence, read.items, read.items_cls, 1, kth, marks, hop_of),
            _item_view(ties, read.extra, read.extra_cls, len(evidence) + 1, _ALL, marks, hop_of))


class _MarkSets(NamedTuple):
    """What an evidence item's mark is decided on: ``t_query``, the ``S_dist`` keys, the ``S_stale`` 5-tuples."""

    tq: Any
    dist_keys: set[tuple[str, Any]]
    stale_five: set[tuple[Any, ...]]


def _item_view(items: Sequence[Mapping[str, Any]], raw: RawItems, classes: Sequence[int], start: int,
               group_score: Any, marks: _MarkSets, hop_of: Mapping[tuple[str, Any], int]) -> list[tuple[Any, ...]]:
    """One tuple per item, fields as :data:`EVIDENCE_FIELDS`; ``group_score``: the tie group's score, or ``_ALL``.

    The mark: ``gold`` for a gold triple valid at ``t_query``, ``stale`` for one
    at an invalid time or an ``S_stale`` replacement, ``dist`` for an ``S_dist``
    replacement, else none.
    """
    tq, dist_keys, stale_five = marks
    out = []
    for j, (item, space, srot, ts, te, cls) in enumerate(zip(items, raw.spaces, raw.srots, raw.t_start, raw.t_end,
                                                               classes, strict=True)):
        key = (space, srot)
        if cls >= 0:
            mark = "gold" if valid_at(ts, te, tq) else "stale"
        elif (*srot, ts, te) in stale_five:
            mark = "stale"
        elif key in dist_keys:
            mark = "dist"
        else:
            mark = ""
        score = item.get("score")
        line = item.get("line")
        out.append((start + j, mark, hop_of.get(key), score, line if type(line) is str else item_line(item),
                    group_score is _ALL or (group_score is not None and score == group_score)))
    return out


def question_negatives(question: Mapping[str, Any], gold: list[GoldTriple] | None = None,
                       shared: dict[Any, Any] | None = None) -> tuple[Mapping[str, Any], dict[str, Any], dict[str, Any]]:
    """``(question, replacements, negatives)`` of :func:`question_detail`, kept in ``shared`` when given.

    They depend on the question alone, so a caller detailing it under several
    configurations (or in several processes forked after calling this for
    every question) makes them once. ``gold``: the parsed ``S_star``, when at hand.
    """
    made = kept_for(shared, ("negatives", question.get("id")), question,
                    lambda: _replacements(question, gold_triples(question) if gold is None else gold, shared))
    return (question, *made)


def _replacements(question: Mapping[str, Any], gold: list[GoldTriple], shared: dict[Any, Any] | None = None
                  ) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[GoldTriple]]]:
    """Per negative list: its replaced hop -> replacement views, and its triples missing from ``S_star``."""
    replacements: dict[str, list[dict[str, Any]]] = {}
    negatives: dict[str, list[GoldTriple]] = {}
    for variant in ("S_stale", "S_dist"):
        gone, new = differing_kept(question, variant, shared, star=gold)
        negatives[variant] = new
        replacements[variant] = [{"replaced": _triple_view(g) if g is not None else None,
                                  "replacement": _triple_view(n) if n is not None else None}
                                 for g, n in _pairs(gone, new)]
    return replacements, negatives


def _pairs(gone: list[GoldTriple], new: list[GoldTriple]) -> list[tuple[GoldTriple | None, GoldTriple | None]]:
    n = max(len(gone), len(new))
    return [(gone[i] if i < len(gone) else None, new[i] if i < len(new) else None) for i in range(n)]
