"""Per-question values of the SPEC §8 measures, read from the project's scoring (:func:`eval.scoring.evaluate`).

Nothing is scored here: TRP and CCR are the :class:`~eval.scoring.Evaluation`'s
rows (SPEC §3.1), the rank measures its per-question arrays (SPEC §3.4, NaN for a
question with an empty ``rel``), and the tie ranges its per-question
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
from typing import Any

import numpy as np

from eval.measures import CCR, COVERAGE, RANK_MEASURES, TRP, Measure, find, valid_names
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


def run_values(evaluation: Any, measures: Sequence[Measure], trp_empty: str = "zero") -> RunValues:
    """The per-question values of ``measures`` from one :class:`~eval.scoring.Evaluation`.

    ``trp_empty``: ``"zero"`` gives an empty retrieval TRP 0 (and a tie range of
    [0, 0]); ``"skip"`` leaves it NaN (SPEC §8's decision).
    """
    rows = evaluation.rows
    n = len(rows)
    values: dict[str, np.ndarray] = {}
    lo: dict[str, np.ndarray] = {}
    hi: dict[str, np.ndarray] = {}
    ties = evaluation.ties["per_question"]
    for m in measures:
        name = m.name
        if m == TRP:
            v = np.fromiter((np.nan if r["trp"] is None else r["trp"] for r in rows), dtype=np.float64, count=n)
        elif m == CCR:
            v = np.fromiter((r["ccr"] for r in rows), dtype=np.float64, count=n)
        elif m == COVERAGE:
            v = np.fromiter((r["n_ret"] > 0 for r in rows), dtype=np.float64, count=n)
        else:
            v = np.asarray(evaluation.rank["per_question"][name], dtype=np.float64)
        values[name] = v
        if name in ties:
            lo[name] = np.asarray(ties[name][:, 2], dtype=np.float64).copy()
            hi[name] = np.asarray(ties[name][:, 3], dtype=np.float64).copy()
        if m == TRP and trp_empty == "zero":
            empty = np.isnan(v)
            v[empty] = 0.0
            lo[name][empty] = 0.0
            hi[name][empty] = 0.0
    return RunValues(values, lo, hi)
