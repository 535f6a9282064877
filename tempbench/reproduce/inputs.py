"""What the reproduction job reads once and every one of its steps and worker processes shares."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.explain import Explainer
from eval.question_detail import question_negatives
from eval.report.html import row_sources
from eval.report.tables import ordered
from retriever import KGIndex, load_benchmark, load_config, load_flags, load_index
from tempbench_core.layout import DataPaths, default_index_cache
from tempbench_core.provenance import Provenance
from tempbench_core.schema import SHIPPED_CONFIGS, require_split

#: At most this many shards' results a worker keeps until it ends rather than free them one object at a time
#: (the process ends without freeing anything: that took about a tenth of a run's time).
KEPT_SHARDS = 64


@dataclass
class JobInputs:
    """The job's inputs, loaded once (and inherited, not copied, by forked workers).

    Attributes
    ----------
    data:
        The data root's files.
    questions, flags, index:
        The whole benchmark, the functional flags (``None`` when absent), the
        KG index.
    split, chosen:
        The split and its questions, in benchmark order: every run covers them,
        so a shard's positions in its run are its positions in the browser.
    names:
        The configurations in the browser's (and the runs') order.
    rows_from:
        Per configuration, the questions whose browser row it describes.
    shared:
        What depends on a question alone (its parsed gold, its negatives),
        made once for every configuration.
    out, n_boot, cache_dir:
        Where the job writes, the bootstrap replicates, the index cache.
    provenance:
        The data's origin and the command line, recorded in every output.
    """

    data: DataPaths
    questions: list[dict[str, Any]]
    flags: Mapping[Any, Mapping[str, bool]] | None
    index: KGIndex
    split: str
    chosen: list[dict[str, Any]]
    names: list[str]
    rows_from: dict[str, list[int]]
    shared: dict[Any, Any]
    out: Path
    n_boot: int
    cache_dir: str | Path | None
    provenance: Provenance
    # per process (a worker's own copy after the fork): one explainer per configuration, the bootstrap's
    # replicates (the same for every run: eval.bootstrap.kept_resamples), and what the process keeps
    # unfreed until it ends
    explainers: dict[str, Explainer] = field(default_factory=dict)
    boot_resamples: dict[Any, Any] = field(default_factory=dict)
    kept: list[Any] = field(default_factory=list)

    @property
    def scored_split(self) -> str | None:
        """The split as the scorer takes it (``None``: all questions)."""
        return None if self.split == "all" else self.split

    def explainer(self, name: str) -> Explainer:
        """This process's :class:`~eval.explain.Explainer` of configuration ``name``."""
        explainer = self.explainers.get(name)
        if explainer is None:
            explainer = self.explainers[name] = Explainer(self.index, load_config(name), shared=self.shared)
        return explainer

    def keep(self, leftovers: Any) -> bool:
        """Keep what a finished task made until the process ends (up to :data:`KEPT_SHARDS`); whether it was kept."""
        if len(self.kept) >= KEPT_SHARDS:
            return False
        self.kept.append(leftovers)
        return True


def load_inputs(data: DataPaths, split: str, out: Path, n_boot: int, cache_dir: str | Path | None,
                provenance: Provenance) -> JobInputs:
    """Load the benchmark, flags and index of ``data`` and prepare what every configuration's run shares."""
    data.require("kg", "benchmark")
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    chosen = require_split(questions, split)  # a split with no question is refused before anything is written
    flags = load_flags(data.flags) if data.flags is not None and Path(data.flags).exists() else None
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark,
                       cache_dir=Path(cache_dir) if cache_dir is not None else default_index_cache())
    names = ordered(dict.fromkeys(SHIPPED_CONFIGS))
    every = dict.fromkeys(names, {q["id"] for q in chosen})
    shared: dict[Any, Any] = {}
    for q in chosen:  # what the browser shows of a question under every configuration, made once
        question_negatives(q, shared=shared)
    return JobInputs(data=data, questions=questions, flags=flags, index=index, split=split, chosen=chosen,
                     names=list(names), rows_from=row_sources(chosen, names, every), shared=shared, out=out,
                     n_boot=n_boot, cache_dir=cache_dir, provenance=provenance)


def positions(inputs: JobInputs, lo: int, hi: int) -> Sequence[dict[str, Any]]:
    """The split's questions ``lo`` to ``hi``."""
    return inputs.chosen[lo:hi]
