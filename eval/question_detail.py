"""One question of a run in full: what ``tempbench show`` prints and the report's question browser shows (SPEC §7).

:func:`question_detail` gathers, as plain data, the gold chain with the stage
at which each hop is lost (:class:`eval.explain.Explainer`), the stale and
distractor replacements (SPEC §3.3), the anchor against the gold subject, the
pool per hop with its caps, and the ranked evidence with marks, scores and the
cut-off tie group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import compress
from operator import or_
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


def triple_view(t: GoldTriple) -> dict[str, Any]:
    """A gold triple as shown: its labels and ids (``None`` where it lacks a space) and its time span."""
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
#: An item's mark, by its code (:meth:`ItemSource.marked`).
MARKS = ("", "gold", "stale", "dist")
_NONE, _GOLD, _STALE, _DIST = range(len(MARKS))
_UNMARKED = (_NONE, None)
#: The tie group of the cut-off ties: every item is in it.
ALL = object()


def question_detail(explainer: Explainer, question: Mapping[str, Any], record: Mapping[str, Any],
                    facts: bool = True, shared: dict[Any, Any] | None = None) -> dict[str, Any]:
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
        the question alone (the ``S_stale``/``S_dist`` replacements, what the
        evidence marks are decided on).

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
        hops.append({"hop": len(hops) + 1, "position": hop.position, "space": hop.space, **triple_view(hop.triple),
                     "stage": hop.stage, **hop.facts})

    _, replacements, _ = question_negatives(question, read.gold, shared)
    anchor_idx, gold_idx = run_anchors(explainer, ex, question, record)
    evidence, ties = evidence_sources(ex, question, record, shared)

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
        "anchor": anchor_view(explainer, record, anchor_idx, gold_idx, read.gold),
        "pool": pool_view(explainer, question, anchor_idx, read.tq),
        "evidence": [dict(zip(EVIDENCE_FIELDS, row, strict=True)) for row in evidence.rows()],
        "cutoff_ties": [dict(zip(EVIDENCE_FIELDS, row, strict=True)) for row in ties.rows()],
    }


def run_anchors(explainer: Explainer, ex: Explanation, question: Mapping[str, Any],
                record: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The run's anchor and the gold subject (KG entities or ``None``), as the explanation ``ex`` found them.

    The attribution looked both up unless every hop was in the evidence
    (SPEC §7); only then are they looked up here.
    """
    if ex.resolved:
        return ex.anchor, ex.gold_subject
    return explainer.run_anchor(question, record), explainer.gold_subject(question)


def anchor_view(explainer: Explainer, record: Mapping[str, Any], anchor_idx: int | None, gold_idx: int | None,
                 gold: list[GoldTriple]) -> dict[str, Any]:
    """The run's anchor (as recorded, else recomputed) against the gold subject (SPEC §2.3).

    ``anchor_idx``, ``gold_idx``: as :func:`run_anchors` gives them; ``gold``: the parsed ``S_star``.
    """
    kg = explainer.index.kg
    labels = explainer.index.entity_labels
    anchor_rec = record.get("anchor")
    if not isinstance(anchor_rec, Mapping):
        anchor_rec = None
    if gold_idx is not None:
        gold_id, gold_label = kg.entity_ids[gold_idx], labels[gold_idx]
    else:  # unresolved: the first gold triple's own subject, as shown (made only then)
        view = triple_view(gold[0]) if gold else {}
        gold_id, gold_label = view.get("s_id"), view.get("s")
    return {
        "rule": explainer.config.anchor,
        "source": (anchor_rec or {}).get("source", "recomputed"),
        "id": (anchor_rec or {}).get("id") if anchor_rec else (None if anchor_idx is None else kg.entity_ids[anchor_idx]),
        "label": (anchor_rec or {}).get("label") if anchor_rec else (None if anchor_idx is None else labels[anchor_idx]),
        "in_kg": anchor_idx is not None,
        "gold_id": gold_id,
        "gold_label": gold_label,
        "hit": None if gold_idx is None else anchor_idx == gold_idx,
    }


def pool_view(explainer: Explainer, question: Mapping[str, Any], anchor_idx: int | None,
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


def evidence_sources(ex: Explanation, question: Mapping[str, Any], record: Mapping[str, Any],
                     shared: dict[Any, Any] | None = None) -> tuple[ItemSource, ItemSource]:
    """The ranked evidence and the cut-off ties of a question's run record, as :class:`ItemSource` s.

    ``ex``: the question's explanation (:meth:`eval.explain.Explainer.explain`).
    The tie group of the evidence is the items scoring as the k-th when the
    run records cut-off ties; every cut-off tie is in it. What the marks are
    decided on depends on the question alone: kept in ``shared`` for every
    configuration.
    """
    read = ex.read
    evidence = record.get("evidence") or []
    ties = record.get("cutoff_ties") or []
    kth = evidence[-1].get("score") if evidence and ties else None
    marks = kept_for(shared, ("evidence_marks", question.get("id")), question,
                     lambda: _mark_sets(ex, question_negatives(question, read.gold, shared)[2]))
    return (ItemSource(evidence, read.items, read.items_cls, 1, kth, marks),
            ItemSource(ties, read.extra, read.extra_cls, len(evidence) + 1, ALL, marks))


class _MarkSets(NamedTuple):
    """What an evidence item's mark and hop are decided on (:meth:`ItemSource.marked`).

    ``t_query``; the ``S_dist`` keys; the ``S_stale`` 5-tuples; the gold hop
    (1-based) of each key of a hop's triple; ``special``: every ``(s, r, o)``
    among these, in any space (an item whose ``(s, r, o)`` is not there has
    no mark and no hop).
    """

    tq: Any
    dist_keys: set[tuple[str, Any]]
    stale_five: set[tuple[Any, ...]]
    hop_of: dict[tuple[str, Any], int]
    special: set[tuple[Any, Any, Any]]


def _mark_sets(ex: Explanation, negatives: Mapping[str, list[GoldTriple]]) -> _MarkSets:
    dist_keys = {(space, srot) for t in negatives["S_dist"] for space, srot in t.keys.items()}
    stale_five = {t.five(space) for t in negatives["S_stale"] for space in t.keys}
    hop_of: dict[tuple[str, Any], int] = {}
    for k, h in enumerate(ex.hops):
        for space, srot in h.triple.keys.items():
            hop_of.setdefault((space, srot), k + 1)
    special = {five[:3] for five in stale_five}
    special.update(srot for _, srot in dist_keys)
    special.update(srot for _, srot in hop_of)
    return _MarkSets(ex.read.tq, dist_keys, stale_five, hop_of, special)


class ItemSource(NamedTuple):
    """The evidence (or the cut-off ties) of one question as read, from which its rows are made.

    ``group_score``: the tie group's score, or :data:`ALL`; ``start``: the rank
    of the first item. :meth:`rows` gives the :data:`EVIDENCE_FIELDS` tuples;
    the browser writes its own rows from :meth:`marked`, column by column
    (:mod:`eval.report.browser`).
    """

    items: Sequence[Mapping[str, Any]]
    raw: RawItems
    classes: Sequence[int]
    start: int
    group_score: Any
    marks: _MarkSets

    def marked(self) -> dict[int, tuple[int, int | None]]:
        """The items with a mark or a hop: position -> (mark, an index into :data:`MARKS`; hop, ``None`` when none).

        The mark: ``gold`` for a gold triple valid at ``t_query``, ``stale``
        for one at an invalid time or an ``S_stale`` replacement, ``dist`` for
        an ``S_dist`` replacement, else none. An item that matches no gold
        class and whose ``(s, r, o)`` is no hop's and no replacement's has
        neither: most items, passed over by set look-ups in C loops.
        """
        raw, classes = self.raw, self.classes
        tq, dist_keys, stale_five, hop_of, special = self.marks
        candidates = map(or_, map(special.__contains__, raw.srots), map(_NONE.__le__, classes))
        out: dict[int, tuple[int, int | None]] = {}
        for j in compress(range(len(classes)), candidates):
            space, srot, ts, te = raw.spaces[j], raw.srots[j], raw.t_start[j], raw.t_end[j]
            if classes[j] >= 0:
                mark = _GOLD if valid_at(ts, te, tq) else _STALE
            elif (*srot, ts, te) in stale_five:
                mark = _STALE
            elif (space, srot) in dist_keys:
                mark = _DIST
            else:
                mark = _NONE
            hop = hop_of.get((space, srot))
            if mark != _NONE or hop is not None:
                out[j] = (mark, hop)
        return out

    def rows(self) -> list[tuple[Any, ...]]:
        """One tuple per item, fields as :data:`EVIDENCE_FIELDS`."""
        marked = self.marked()
        group = self.group_score
        out = []
        for j, item in enumerate(self.items):
            mark, hop = marked.get(j, _UNMARKED)
            score = item.get("score")
            line = item.get("line")
            out.append((self.start + j, MARKS[mark], hop, score, line if type(line) is str else item_line(item),
                        group is ALL or (group is not None and score == group)))
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
        replacements[variant] = [{"replaced": triple_view(g) if g is not None else None,
                                  "replacement": triple_view(n) if n is not None else None}
                                 for g, n in _pairs(gone, new)]
    return replacements, negatives


def _pairs(gone: list[GoldTriple], new: list[GoldTriple]) -> list[tuple[GoldTriple | None, GoldTriple | None]]:
    n = max(len(gone), len(new))
    return [(gone[i] if i < len(gone) else None, new[i] if i < len(new) else None) for i in range(n)]
