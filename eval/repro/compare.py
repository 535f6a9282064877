"""The SPEC §8 figures of paired original and reproduced runs, as one JSON-ready object.

Input: per configuration, the original's and the reproduction's per-question
values (:class:`~eval.repro.values.RunValues`) and ranked documents
(:class:`~eval.repro.doclists.DocLists`), over the same questions in the same
order. Output (the keys of issue 23, measure keys as the user gave them)::

    {"baseline": "oracle", "measures": [...], "questions": N,
     "configs": {"<name>": {"ktu": x, "rbo": x,
                            "rmse": {"<m>": x}, "nrmse": {"<m>": x}, "p_value": {"<m>": x},
                            "mean": {"original": {"<m>": x}, "reproduced": {"<m>": x}},
                            "tie_sensitive": {"<m>": true|false}}},
     "effects": {"<advanced>": {"er": {"<m>": x|null}, "delta_ri": {"<m>": x|null}}}}

A figure that is undefined is ``None`` (JSON ``null``), never NaN or infinity.

Populations: a configuration's RMSE, nRMSE, p-value, means and tie range are
over the questions where both its runs have a value of the measure (every
question, except the rank measures' empty-``rel`` questions, which no run
evaluates, and with ``trp_empty='skip'`` TRP's empty retrievals); an effect's
mean improvement over the questions where both runs of the difference have
one, a mean score (ΔRI) over its own run's.

Tie sensitivity (SPEC §3.5, §8): for a measure with a tie range, the
configuration is tie-sensitive when the original's mean lies within the
reproduction's [min, max] over the orderings of equal scores (means over the
same questions, up to :data:`TIE_TOLERANCE`): the difference may come from the
order of equal BM25 scores alone. A measure without a tie range (coverage) is
never tie-sensitive.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval.measures import Measure
from eval.repro.doclists import DocLists
from eval.repro.effects import delta_ri, effect_ratio
from eval.repro.ktu import ktu
from eval.repro.means import fmean
from eval.repro.options import ReproOptions
from eval.repro.rbo import rbo, rbo_ceiling_kernel
from eval.repro.rmse import nrmse, rmse
from eval.repro.ttest import p_value
from eval.repro.values import RunValues
from tempbench_core.schema import SHIPPED_CONFIGS

#: Rounding slack of the tie-range test (the per-question ranges are closed forms).
TIE_TOLERANCE = 1e-12


@dataclass
class ScoredRun:
    """One run ready to compare: its per-question values and its ranked documents."""

    values: RunValues
    docs: DocLists


def config_order(names: Sequence[str], baseline: str) -> list[str]:
    """The baseline first, then the shipped configurations in SPEC §2.6 order, then the others by name."""
    shipped = [n for n in SHIPPED_CONFIGS if n in names and n != baseline]
    rest = sorted(n for n in names if n != baseline and n not in SHIPPED_CONFIGS)
    return ([baseline] if baseline in names else []) + shipped + rest


def _both(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return ~np.isnan(a) & ~np.isnan(b)


def tie_sensitive(orig: RunValues, rep: RunValues, name: str) -> bool:
    """Whether the original's mean of ``name`` lies within the reproduction's tie range (module docstring)."""
    if name not in rep.tie_min:
        return False
    both = _both(orig.values[name], rep.values[name])
    mean, lo, hi = (fmean(a[both]) for a in (orig.values[name], rep.tie_min[name], rep.tie_max[name]))
    if mean is None or lo is None or hi is None:
        return False
    return lo - TIE_TOLERANCE <= mean <= hi + TIE_TOLERANCE


#: ``(ktu(...), rbo(...))`` of a configuration's two runs: each ``(mean, per-question array)``.
OrderFigures = tuple[tuple[float | None, np.ndarray], tuple[float | None, np.ndarray]]


def order_figures(orig: DocLists, rep: DocLists, options: ReproOptions) -> OrderFigures:
    """KTU and RBO of two runs' documents (:func:`~eval.repro.ktu.ktu`, :func:`~eval.repro.rbo.rbo`)."""
    return (ktu(orig, rep, options.ktu_cut),
            rbo(orig, rep, options.rbo_p, options.rbo_depth, options.rbo_both_empty))


def config_figures(orig: ScoredRun, rep: ScoredRun, measures: Sequence[tuple[str, Measure]],
                   options: ReproOptions, orders: OrderFigures | None = None) -> dict[str, Any]:
    """The per-configuration object: KTU, RBO, and per measure RMSE, nRMSE, p-value, means, tie sensitivity.

    ``orders``: :func:`order_figures` of the two runs, when already computed.
    """
    (ktu_mean, _), (rbo_mean, _) = orders if orders is not None else order_figures(orig.docs, rep.docs, options)
    out: dict[str, Any] = {"ktu": ktu_mean, "rbo": rbo_mean, "rmse": {}, "nrmse": {}, "p_value": {},
                           "mean": {"original": {}, "reproduced": {}}, "tie_sensitive": {}}
    for given, m in measures:
        o, r = orig.values.values[m.name], rep.values.values[m.name]
        both = _both(o, r)
        out["rmse"][given] = rmse(o, r)
        out["nrmse"][given] = nrmse(o, r)
        out["p_value"][given] = p_value(o, r)
        out["mean"]["original"][given] = fmean(o[both])
        out["mean"]["reproduced"][given] = fmean(r[both])
        out["tie_sensitive"][given] = tie_sensitive(orig.values, rep.values, m.name)
    return out


def effect_figures(orig_a: RunValues, orig_b: RunValues, rep_a: RunValues, rep_b: RunValues,
                   measures: Sequence[tuple[str, Measure]]) -> dict[str, Any]:
    """ER and ΔRI of one advanced configuration, per measure (``None`` where undefined)."""
    er: dict[str, float | None] = {}
    dri: dict[str, float | None] = {}
    for given, m in measures:
        args = (orig_a.values[m.name], orig_b.values[m.name], rep_a.values[m.name], rep_b.values[m.name])
        er[given] = effect_ratio(*args)
        dri[given] = delta_ri(*args)
    return {"er": er, "delta_ri": dri}


def compare_runs(original: Mapping[str, ScoredRun], reproduced: Mapping[str, ScoredRun],
                 measures: Sequence[tuple[str, Measure]], baseline: str, n_questions: int,
                 options: ReproOptions | None = None, extras: dict[str, Any] | None = None,
                 orders: Mapping[str, OrderFigures] | None = None) -> dict[str, Any]:
    """The SPEC §8 object of the configurations present on both sides (module docstring).

    Parameters
    ----------
    original, reproduced:
        Configuration name -> :class:`ScoredRun`, every one over the same
        ``n_questions`` questions in the same order.
    extras:
        Filled, when given, with what the tables show beside the object:
        ``rbo_ceiling`` (configuration -> the mean of
        :func:`~eval.repro.rbo.rbo_ceiling_kernel`, the RBO of a perfect
        reproduction with these list lengths) and ``ktu_questions``
        (configuration -> the number of questions KTU is defined on).
    measures:
        ``[(name as given, measure)]`` (:func:`eval.repro.values.parse_measures`).
    baseline:
        The configuration the others' effects are measured against; it must be on both sides.
    orders:
        Configuration -> :func:`order_figures` of its two runs, where already
        computed (where the runs were prepared); the others are computed here.
    """
    options = options or ReproOptions()
    names = config_order([n for n in original if n in reproduced], baseline)
    result: dict[str, Any] = {"baseline": baseline, "measures": [given for given, _ in measures],
                              "questions": n_questions, "configs": {}, "effects": {}}
    for name in names:
        o, r = original[name].docs, reproduced[name].docs
        pair = (orders or {}).get(name) or order_figures(o, r, options)
        result["configs"][name] = config_figures(original[name], reproduced[name], measures, options, pair)
        if extras is not None:
            ceiling = rbo_ceiling_kernel(o.lengths, r.lengths, options.rbo_p, options.rbo_depth, options.rbo_both_empty)
            extras.setdefault("rbo_ceiling", {})[name] = fmean(ceiling)
            extras.setdefault("ktu_questions", {})[name] = int((~np.isnan(pair[0][1])).sum())
    if baseline in names:
        for name in names:
            if name != baseline:
                result["effects"][name] = effect_figures(original[name].values, original[baseline].values,
                                                         reproduced[name].values, reproduced[baseline].values, measures)
    return result
