"""Per-question values of the SPEC §8 measures, from the project's scoring kernels over a run's evidence table.

Nothing is scored here: TRP and CCR come from :func:`eval.trp_ccr.trp_ccr_arrays`
(SPEC §3.1), the rank measures from :func:`eval.rank.rank_kernel` over
:func:`eval.relevance.hit_matrix` (SPEC §3.4, NaN for a question with an empty
``rel``), and the tie ranges from :func:`eval.ties.tie_report`'s per-question
``[min, max]`` over the orderings of equal scores (SPEC §3.5). A NaN value means
"not evaluated": every SPEC §8 figure leaves such a question out.

The measures a comparison may ask for are the per-question ones of
:mod:`eval.measures`: ``TRP``, ``CCR``, ``coverage`` (no tie range: the order of
equal scores cannot change it) and the rank measures the scorer computes
(``recall@k``, ``ndcg@k`` for k in 1, 5, 10, 15, 25, and ``mrr``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from eval.evidence import EvidenceTable
from eval.measures import CCR, COVERAGE, RANK_MEASURES, TRP, Measure, find, valid_names
from eval.rank import rank_kernel
from eval.relevance import hit_matrix
from eval.ties import tie_report
from eval.trp_ccr import trp_ccr_arrays
from tempbench_core.errors import ConfigError

#: The measures with per-question values, in the order :func:`per_question_names` lists them.
PER_QUESTION: tuple[Measure, ...] = (TRP, CCR, COVERAGE, *RANK_MEASURES)


def per_question_names() -> list[str]:
    """Every measure name :func:`parse_measures` accepts."""
    return [m.name for m in PER_QUESTION]


def parse_measures(names: Sequence[str]) -> list[tuple[str, Measure]]:
    """``[(name as given, measure)]`` for the names of ``--measures``; unknown or unsupported names are a ConfigError.

    The name as given is the key of every output (so ``R@10`` stays ``R@10``).
    """
    out: list[tuple[str, Measure]] = []
    seen: dict[Measure, str] = {}
    if not names:
        raise ConfigError(f"--measures is empty; expected a comma-separated list of {', '.join(per_question_names())}")
    for name in names:
        measure = find(name)
        if measure is None:
            raise ConfigError(f"unknown measure {name!r} in --measures (a measure of SPEC §3: "
                              f"{', '.join(valid_names())}; with per-question values: {', '.join(per_question_names())})")
        if measure not in PER_QUESTION:
            raise ConfigError(f"measure {name!r} has no per-question value that SPEC §8 can compare (expected one of "
                              f"{', '.join(per_question_names())}; TRP_micro, precision and answer metrics are not "
                              "means over questions or are not scored from runs)")
        if measure in seen:
            raise ConfigError(f"--measures names {measure.name} twice ({seen[measure]!r} and {name!r})")
        seen[measure] = name
        out.append((name, measure))
    return out


#: From this share of a table's rows on, the tie ranges of some rows are read from the whole table's.
WHOLE_TABLE_SHARE = 0.9


def tie_ranges(table: EvidenceTable, measures: Sequence[Measure], rows: np.ndarray | None = None,
               whole_share: float = WHOLE_TABLE_SHARE) -> dict[str, np.ndarray]:
    """:func:`~eval.ties.tie_report`'s per-question arrays of the rows ``rows`` (sorted, distinct; NaN elsewhere).

    A question's tie range depends on its own row alone, so the rows' ranges
    are the same whether read from the table of those rows
    (:meth:`~eval.evidence.EvidenceTable.take`) or from the whole table; when
    they are most of it (``whole_share`` or more), the whole table is read and
    the other rows set to NaN: no copy of the table, no second pass over its
    hits.
    """
    if rows is None or len(rows) == table.n:  # sorted and distinct: every row
        return tie_report(table, measures)["per_question"]
    if len(rows) >= whole_share * table.n:
        out = tie_report(table, measures)["per_question"]
        others = np.ones(table.n, dtype=bool)
        others[rows] = False
        for part in out.values():
            part[others] = np.nan
        return out
    out = {}
    for name, part in tie_report(table.take(rows), measures)["per_question"].items():
        out[name] = np.full((table.n, *np.shape(part)[1:]), np.nan)
        out[name][rows] = part
    return out


@dataclass
class RunValues:
    """One run's per-question values over the compared questions (NaN: not evaluated).

    ``values[name]``, ``tie_min[name]`` and ``tie_max[name]`` are keyed by the
    measure's canonical name (:attr:`eval.measures.Measure.name`);
    ``tie_min``/``tie_max`` only for the measures SPEC §3.5 gives a range.
    """

    values: dict[str, np.ndarray]
    tie_min: dict[str, np.ndarray]
    tie_max: dict[str, np.ndarray]


def run_values(table: EvidenceTable, measures: Sequence[Measure], trp_empty: str = "zero",
               ties: bool = True, tie_rows: np.ndarray | None = None) -> RunValues:
    """The per-question values of ``measures`` of one run's :class:`~eval.evidence.EvidenceTable`.

    ``trp_empty``: ``"zero"`` gives an empty retrieval TRP 0 (and a tie range of
    [0, 0]); ``"skip"`` leaves it NaN (SPEC §8's decision). ``ties``: also the
    tie ranges (only a reproduced run's are read); ``tie_rows``: of these
    questions only (sorted, distinct; NaN for the others), default all. A question's tie range
    depends on its own row alone, so it is the same either way.
    """
    n_ret, hits, ccr = trp_ccr_arrays(table)
    rank_names = [m for m in measures if m not in (TRP, CCR, COVERAGE)]
    per_rank = {}
    if rank_names:
        matrix = hit_matrix(table)
        per_rank = rank_kernel(matrix.gains, matrix.n_rel, rank_names)
    tie_measures = [m for m in RANK_MEASURES if m in rank_names] or RANK_MEASURES[:1]
    tie_q = tie_ranges(table, tie_measures, tie_rows) if ties else {}
    values: dict[str, np.ndarray] = {}
    lo: dict[str, np.ndarray] = {}
    hi: dict[str, np.ndarray] = {}
    for m in measures:
        name = m.name
        if m == TRP:
            v = np.where(n_ret > 0, hits / np.where(n_ret > 0, n_ret, 1), np.nan)
        elif m == CCR:
            v = ccr.astype(np.float64)
        elif m == COVERAGE:
            v = (n_ret > 0).astype(np.float64)
        else:
            v = np.asarray(per_rank[name], dtype=np.float64)
        values[name] = v
        if name in tie_q:
            lo[name] = np.asarray(tie_q[name][:, 2], dtype=np.float64).copy()
            hi[name] = np.asarray(tie_q[name][:, 3], dtype=np.float64).copy()
        if m == TRP and trp_empty == "zero":
            empty = np.isnan(v)
            v[empty] = 0.0
            if name in lo:
                lo[name][empty] = 0.0
                hi[name][empty] = 0.0
    return RunValues(values, lo, hi)
