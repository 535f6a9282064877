"""Test helpers: the package's table kernels called the way the per-question tests read, one question at a time.

``trp_ccr_ties(q, evidence, ties)`` and ``rank_tie_vectors`` take a question
and its records, build the one-row :class:`eval.evidence.EvidenceTable` and
return what the kernel computes for it, so tests written per question check the
package's kernels (the per-question reference lives in
:mod:`reference.per_question`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from eval import tie_forms
from eval.evidence import EvidenceTable, resolve
from eval.measures import RANK_MEASURES
from eval.negatives import negatives_report
from eval.relevance import group_ids, hit_matrix, relevant, whole_keys
from eval.tie_forms import RankTies
from eval.ties import tie_report
from eval.trec import question_runs


def table(questions: Sequence[Any], evidence: Sequence[Any], ties: Sequence[Any] | None = None,
          key: str = "auto") -> EvidenceTable:
    """The table of several questions (``ties``: their cut-off ties, default none)."""
    return resolve(list(questions), list(evidence), None if ties is None else list(ties), key)


def one(question: Any, evidence: Any, ties: Any = (), key: str = "auto") -> EvidenceTable:
    """The one-row table of a question."""
    return resolve([question], [evidence], [ties], key)


def trp_ccr_ties(t: EvidenceTable, i: int = 0) -> dict[str, tuple[float, ...] | None]:
    """``{"TRP": (observed, expected, min, max) or None, "CCR": (...)}`` of question ``i``, from :func:`tie_report`."""
    per_q = tie_report(t)["per_question"]
    trp = per_q["TRP"][i]
    return {"TRP": None if np.isnan(trp[0]) else tuple(float(x) for x in trp),
            "CCR": tuple(float(x) for x in per_q["CCR"][i])}


def rank_tie_vectors(t: EvidenceTable, i: int = 0, measures: Sequence[Any] = RANK_MEASURES) -> RankTies:
    """The closed forms of :func:`eval.tie_forms.rank_tie_vectors` for question ``i``, inputs read from the table."""
    ev, ex = t.items, t.extra
    keys = [np.concatenate([a, b]) for a, b in zip(whole_keys(ev), whole_keys(ex), strict=True)]
    whole = group_ids(keys)[0]
    vr = np.where(np.concatenate([relevant(t, ev), relevant(t, ex)]), np.concatenate([ev.cls, ex.cls]), -1)
    scores = np.concatenate([ev.score, ex.score])
    mine = np.concatenate([ev.q, ex.q]) == i
    order = np.flatnonzero(mine)  # evidence first, then cut-off ties, each in rank order
    lo, hi = int(t.cls_start[i]), int(t.cls_start[i + 1])
    return tie_forms.rank_tie_vectors(whole[order].tolist(), vr[order].tolist(),
                                      [None if s != s else s for s in scores[order].tolist()],
                                      int(ev.counts[i]), int(t.class_valid[lo:hi].sum()), measures)


def question_indicators(question: Any, evidence: Any) -> dict[str, bool | None]:
    """Per typed-negative rate name, whether the evidence holds a matching item (None: the type is not evaluable)."""
    flags = {question.get("id"): {"stale_functional": True, "dist_functional": True}}
    indicators = negatives_report(one(question, evidence), flags)["indicators"]
    return {name: None if values[0] is None else bool(values[0]) for name, values in indicators.items()}


def hit_list(t: EvidenceTable, i: int = 0) -> tuple[list[bool], int]:
    """Question ``i``'s hit indicators over its deduplicated list, and ``|rel|`` (:func:`eval.relevance.hit_matrix`)."""
    m = hit_matrix(t)
    length = int((m.dedup_pos[t.items.start[i]:t.items.start[i + 1]] >= 0).sum())
    return [bool(x) for x in m.gains[i, :length]], int(m.n_rel[i])


def question_run(t: EvidenceTable, i: int = 0, space: str | None = None) -> Any:
    """Question ``i``'s written TREC list (:func:`eval.trec.question_runs`)."""
    return question_runs(t, space)[i][1]
