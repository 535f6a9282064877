"""Rank metrics with binary relevance (SPEC §3.4).

Relevant set ``rel``: the distinct ``S_star`` triples whose own window is valid
at ``t_query`` (key space as SPEC §3.1). The ranked list is the returned evidence
deduplicated on the whole item ``(s, r, o, t_start, t_end)`` (first occurrence
kept); item ``i`` is a hit when its triple is in ``rel``, its own window is valid
at ``t_query`` and no earlier item was a hit for the same triple. With ``h_i``
the hit indicator at 1-based position ``i``::

    recall@k = sum_{i<=k} h_i / |rel|
    nDCG@k   = sum_{i<=k} h_i / log2(i + 1)  /  sum_{i<=min(|rel|, k)} 1 / log2(i + 1)
    MRR      = 1 / min{i : h_i = 1}   (0 when there is no hit)

macro-averaged over questions with ``|rel| > 0``; questions with an empty
``rel`` are counted apart.

Two layers, as in ranx: :func:`rank_kernel` works on a numeric matrix of gains
(binary hits, or hit probabilities for the tie-aware expectation of §3.5, which
is linear in them), and :func:`rank_metrics` is the typed wrapper over a run's
:class:`~eval.evidence.EvidenceTable` (hits from :func:`eval.relevance.hit_matrix`). The metrics are the
declared :data:`eval.measures.RANK_MEASURES`. ``backend='ir_measures'`` computes the same
quantities with ``ir_measures`` (pytrec_eval) from the TREC form of
:mod:`eval.trec`; the test suite checks that both agree on thousands of random
runs. The kernel is the default because it is ten times faster.

References
----------
- K. Järvelin and J. Kekäläinen, "Cumulated Gain-Based Evaluation of IR
  Techniques", ACM TOIS 20(4), 2002 (nDCG).
- E. M. Voorhees, "The TREC-8 Question Answering Track Report", TREC 1999
  (mean reciprocal rank).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from eval.evidence import EvidenceTable
from eval.measures import RANK_MEASURES, Measure
from eval.relevance import hit_matrix
from eval.trec import trec_run_and_qrels
from tempbench_core.errors import ConfigError

BACKENDS = ("kernel", "ir_measures")

def to_matrix(rows: Sequence[Sequence[float]], width: int) -> np.ndarray:
    """Stack ragged per-question gain lists into an ``(n, width)`` float matrix (zero padded)."""
    out = np.zeros((len(rows), width), dtype=np.float64)
    for i, row in enumerate(rows):
        m = min(len(row), width)
        if m:
            out[i, :m] = np.asarray(row[:m], dtype=np.float64)
    return out


def _discount(width: int) -> np.ndarray:
    return 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))


def rank_kernel(gains: np.ndarray, n_rel: np.ndarray, measures: Sequence[Measure] = RANK_MEASURES) -> dict[str, np.ndarray]:
    """Per-question recall@k, nDCG@k and MRR (as declared in ``measures``) from a gain matrix.

    Parameters
    ----------
    gains:
        ``(n, L)`` matrix; ``gains[q, i]`` is 1 for a hit at 1-based position
        ``i + 1`` (or the probability of one, for expectations: recall and nDCG
        are linear in it; MRR is only meaningful for 0/1 gains).
    n_rel:
        ``|rel|`` per question.
    measures:
        Which metrics, in output order (families ``recall``, ``ndcg``, ``mrr``).

    Returns
    -------
    dict
        measure name -> float array of length n; NaN where ``n_rel == 0``.
    """
    gains = np.asarray(gains, dtype=np.float64)
    n, width = gains.shape
    kmax = max([m.cutoff for m in measures if m.cutoff is not None] or [1])
    if width < kmax:
        gains = np.concatenate([gains, np.zeros((n, kmax - width))], axis=1)
        width = kmax
    n_rel = np.asarray(n_rel, dtype=np.int64)
    has_rel = n_rel > 0
    safe_rel = np.where(has_rel, n_rel, 1)
    disc = _discount(width)
    ideal_cum = np.concatenate([[0.0], np.cumsum(disc)])  # ideal_cum[j] = sum of the first j discounts
    hits_cum = np.cumsum(gains, axis=1)
    dcg_cum = np.cumsum(gains * disc, axis=1)
    out: dict[str, np.ndarray] = {}
    for m in measures:
        if m.family == "recall":
            out[m.name] = np.where(has_rel, hits_cum[:, m.cutoff - 1] / safe_rel, np.nan)
        elif m.family == "ndcg":
            idcg = ideal_cum[np.minimum(safe_rel, m.cutoff)]
            out[m.name] = np.where(has_rel, dcg_cum[:, m.cutoff - 1] / idcg, np.nan)
        elif m.family == "mrr":
            positive = gains > 0
            first = np.argmax(positive, axis=1)
            out[m.name] = np.where(has_rel, np.where(positive.any(axis=1), 1.0 / (first + 1), 0.0), np.nan)
        else:
            raise ConfigError(f"{m.name} is not a rank metric (expected recall@k, ndcg@k or mrr)")
    return out


def macro(values: np.ndarray) -> float | None:
    """Mean over questions with a defined value (non-empty ``rel``), None if none."""
    values = np.asarray(values, dtype=np.float64)
    mask = ~np.isnan(values)
    return float(values[mask].mean()) if mask.any() else None


def rank_metrics(table: EvidenceTable, measures: Sequence[Measure] = RANK_MEASURES,
                 backend: str = "kernel") -> dict[str, Any]:
    """Per-question arrays and macro values of the SPEC §3.4 metrics of a run.

    ``backend='kernel'`` (default) uses :func:`rank_kernel`; ``'ir_measures'``
    computes the per-question values with ``ir_measures`` (pytrec_eval) from
    the TREC form of the same table, the same numbers about ten times slower.

    Returns ``{'per_question': {name: array}, 'macro': {name: value},
    'n_rel': array, 'n_evaluated': int, 'n_empty_rel': int}``.
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown rank-metric backend {backend!r} (expected kernel or ir_measures)")
    hits = hit_matrix(table)
    if backend == "ir_measures":
        per_q = _ir_measures_per_question(table, hits.n_rel, measures)
    else:
        per_q = rank_kernel(hits.gains, hits.n_rel, measures)
    return rank_result(per_q, hits.n_rel)


def rank_result(per_q: dict[str, np.ndarray], n_rel: np.ndarray) -> dict[str, Any]:
    """Per-question arrays, their macro values and the counts of questions with and without a relevant triple."""
    return {
        "per_question": per_q,
        "macro": {name: macro(v) for name, v in per_q.items()},
        "n_rel": n_rel,
        "n_evaluated": int((n_rel > 0).sum()),
        "n_empty_rel": int((n_rel == 0).sum()),
    }


def _ir_measures_per_question(table: EvidenceTable, n_rel: np.ndarray,
                              measures: Sequence[Measure]) -> dict[str, np.ndarray]:
    """Per-question values from ``ir_measures`` (pytrec_eval backend).

    Runs and qrels are built by :func:`eval.trec.trec_run_and_qrels`; the rank
    order is encoded in strictly decreasing scores so that trec_eval's own
    tie-break cannot reorder anything. A question with relevant triples but no
    retrieved item gets 0 (trec_eval only reports queries present in the run);
    one with an empty ``rel`` gets NaN, as in the kernel.
    """
    import ir_measures
    from ir_measures import RR, R, nDCG

    run, qrels = trec_run_and_qrels(table)
    library = {"recall": lambda k: R @ k, "ndcg": lambda k: nDCG @ k, "mrr": lambda _k: RR}
    names = [m.name for m in measures]
    theirs = [library[m.family](m.cutoff) for m in measures]
    row_of = {str(q.get("id")): i for i, q in enumerate(table.questions)}
    out = {name: np.where(n_rel > 0, 0.0, np.nan) for name in names}
    qrels_list = [ir_measures.Qrel(q, d, rel) for q, docs in qrels.items() for d, rel in docs.items()]
    run_list = [ir_measures.ScoredDoc(q, d, sc) for q, docs in run.items() for d, sc in docs.items()]
    if qrels_list and run_list:
        by_measure = dict(zip(theirs, names, strict=True))
        for m in ir_measures.iter_calc(theirs, qrels_list, run_list):
            out[by_measure[m.measure]][row_of[m.query_id]] = m.value
    return out


def rank_metrics_ir_measures(table: EvidenceTable, measures: Sequence[Measure] = RANK_MEASURES
                             ) -> dict[str, float | None]:
    """Macro values of SPEC §3.4 computed by ``ir_measures`` (see :func:`rank_metrics`)."""
    return rank_metrics(table, measures, backend="ir_measures")["macro"]
