"""Is a data root what the pipeline expects, and what will the pipeline see? (SPEC §1, §4)

:func:`check_data` inspects a data root (SPEC §1.5) without running the
retriever and returns a :class:`CheckReport`:

- every input file found or missing, and its form (plain or ``.gz``, TSV or JSON);
- counts (KG rows, entities, relations, years; questions and interval questions
  per split; functional flags on the test split) beside the dataset card's
  (SPEC §1.1, §1.3, §4; the benchmark's from ``configs/paper_numbers.toml``), and a
  "looks like the release v1.0.1" verdict;
- the key spaces the benchmark triples carry, and how many questions have an
  id-space twin in ``benchmark.jsonl`` (SPEC §2.3 fallback otherwise);
- label coverage of the KG's entities and relations (an id without a label is
  rendered as itself, which changes BM25, SPEC §1.2, §2.1);
- the share of gold hops (``S_star`` triples) that exist in the KG at a year
  valid at ``t_query`` (a low share means another KG version);
- oracle anchors (SPEC §2.3) that resolve to a KG entity;
- published baselines (SPEC §1.4) recognised, per file and form.

Each conclusion is a :class:`Finding` with a level: ``error`` (the pipeline
cannot run), ``warning`` (it runs, but its numbers will differ from the
paper's, or some will be missing), ``info``. The generated stand-in (it has a
``MANIFEST.json``) is not the release, so its counts differing from the card
is reported as ``info``; it passes with no warning.

The steps live one concept per module: :mod:`~tempbench.check.files` (the files
and what recorded them), :mod:`~tempbench.check.kg` (the KG and its labels),
:mod:`~tempbench.check.benchmark` (questions, flags, anchors),
:mod:`~tempbench.check.gold` (gold hops in the KG),
:mod:`~tempbench.check.baselines` and :mod:`~tempbench.check.verdict`;
:mod:`~tempbench.check.report` holds what they write into.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from retriever import RetrieverConfig, load_config
from tempbench.check.baselines import check_baselines
from tempbench.check.benchmark import check_anchors, check_benchmark, check_flags
from tempbench.check.files import check_files, check_recorded
from tempbench.check.gold import check_gold_hops, gold_hops_in_kg
from tempbench.check.kg import check_kg, check_labels, whole_year_text
from tempbench.check.origin import find_origin
from tempbench.check.report import (
    GOLD_HOPS_OK,
    KG_CARD,
    LEVELS,
    RAW_LABELS_OK,
    RELEASE,
    CheckReport,
    Finding,
    card_counts,
)
from tempbench.check.verdict import check_verdict
from tempbench_core.layout import DataPaths
from tempbench_core.progress import progress
from tempbench_core.schema import SHIPPED_CONFIGS

__all__ = ["GOLD_HOPS_OK", "KG_CARD", "LEVELS", "RAW_LABELS_OK", "RELEASE", "CheckReport", "Finding", "card_counts",
           "check_data", "gold_hops_in_kg", "whole_year_text"]

#: The steps, in order: each reads what the earlier ones left in the state.
STEPS = (check_files, check_recorded, check_kg, check_labels, check_benchmark, check_flags, check_anchors,
         check_gold_hops, check_baselines, check_verdict)


def check_data(data: DataPaths, paper_numbers: str | Path | None = None, card: dict[str, int] | None = None,
               show_progress: bool | None = None, configs: Sequence[RetrieverConfig] | None = None) -> CheckReport:
    """Inspect the inputs of ``data`` (see the module docstring for what is checked).

    Parameters
    ----------
    data:
        The resolved input files (:func:`tempbench.data.resolve_data`).
    paper_numbers:
        The claims file with the card's benchmark counts (default: the shipped one).
    card:
        Override the card's counts (tests); default :func:`card_counts`.
    show_progress:
        Progress bar over the steps (default: on a terminal).
    configs:
        The retriever configurations the data will be run with, for the
        findings that depend on one (exact duplicate rows and ``cap_counts``);
        default the four shipped ones ``tempbench reproduce`` runs (SPEC §2.6).
    """
    root = Path(data.root) if data.root is not None else None
    report = CheckReport(root=None if root is None else str(root), generated=data.generated)
    card = card_counts(paper_numbers) if card is None else card
    configs = [load_config(name) for name in SHIPPED_CONFIGS] if configs is None else list(configs)
    origin = find_origin(root)
    state: dict[str, Any] = {"data": data, "root": root, "card": card, "found": {}, "configs": configs, "origin": origin}
    for step in progress(STEPS, total=len(STEPS), description="check", enabled=show_progress):
        step(report, state)
    return report
