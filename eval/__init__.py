"""Evaluation of TempBench retrieval runs (SPEC §3).

``from eval import score_question, aggregate`` gives the drop-in equivalents of
the dataset's published scorer (SPEC §3.1, §3.2).
"""

from __future__ import annotations

from eval.trp_ccr import aggregate, score_question

__all__ = ["score_question", "aggregate"]
