"""Reproducibility of published runs, measured as IR measures it (SPEC §8; Breuer et al., SIGIR 2020).

One module per measure, each a numpy kernel and a typed wrapper with its
formula: :mod:`~eval.repro.ktu` (Kendall's tau Union), :mod:`~eval.repro.rbo`
(rank-biased overlap), :mod:`~eval.repro.rmse` (RMSE, nRMSE),
:mod:`~eval.repro.ttest` (paired t-test), :mod:`~eval.repro.effects` (ER,
ΔRI). Around them: :mod:`~eval.repro.options` (the named decisions),
:mod:`~eval.repro.values` (per-question values from the project's scoring),
:mod:`~eval.repro.doclists` (ranked documents as shared codes),
:mod:`~eval.repro.compare` (the JSON object), :mod:`~eval.repro.folders`
(folders of runs), :mod:`~eval.repro.job` (runs to the object) and
:mod:`~eval.repro.reading` (what each figure says, for the terminal and the report).
"""

from eval.repro.compare import compare_runs
from eval.repro.job import Scope, reproducibility
from eval.repro.options import DEFAULT_BASELINE, DEFAULT_MEASURES, ReproOptions
from eval.repro.values import parse_measures

__all__ = ["DEFAULT_BASELINE", "DEFAULT_MEASURES", "ReproOptions", "Scope", "compare_runs", "parse_measures", "reproducibility"]
