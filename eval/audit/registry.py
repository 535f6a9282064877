"""The computations the claims of ``configs/paper_numbers.toml`` may name (its ``compute`` key)."""

from __future__ import annotations

from collections.abc import Callable

from eval.audit import pairs, questions, retrieval
from eval.audit.values import Value

COMPUTE: dict[str, Callable[..., Value]] = {
    "split_questions": questions.split_questions,
    "split_interval": questions.split_interval,
    "split_interval_share": questions.split_interval_share,
    "leak_interval_count": questions.leak_interval_count,
    "leak_rate": questions.leak_rate,
    "text_contains_year": questions.text_contains_year,
    "stale_functional": pairs.stale_functional,
    "stale_valid": pairs.stale_valid,
    "stale_ties": pairs.stale_ties,
    "dist_compare": pairs.dist_compare,
    "dist_invalid": pairs.dist_invalid,
    "bm25_documents": retrieval.bm25_documents,
    "anchor_recall": retrieval.anchor_recall,
    "slice_metric": retrieval.slice_metric,
    "slice_metric_range": retrieval.slice_metric_range,
    "negative_rate": retrieval.negative_rate,
    "copy_tquery_em": questions.copy_tquery_em,
}
