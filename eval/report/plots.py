"""The report's plots (PNG, matplotlib's Agg backend, no display needed), written atomically.

``by_complexity.png`` / ``by_operator.png``
    TRP and CCR per slice, one bar per configuration.
``filtered_vs_stale_blind.png``
    The oracle retriever with and without the temporal filter: CCR per operator
    and the stale-negative hit rates (SPEC §3.3).
``ties.png``
    Tie-aware ranges (SPEC §3.5): observed value, expected value and the
    [min, max] over tie orderings as error bars, per metric and configuration.
``attribution.png``
    Where the gold evidence is lost (SPEC §7): for each configuration, the
    share of gold hops at each stage, overall and per complexity, as stacked
    bars (only when the attribution is given).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eval.explain import STAGES
from eval.measures import Measure
from eval.report.tables import ordered, slice_values
from tempbench_core.atomic import atomic_open

#: The metrics of the tie plot and table (SPEC §3.5).
TIE_METRICS = ("TRP", "CCR", *(m.name for m in (Measure("recall", 1), Measure("recall", 5), Measure("ndcg", 10), Measure("mrr"))))
PLOTS = ("by_complexity", "by_operator", "filtered_vs_stale_blind", "ties", "attribution")
#: One colour per SPEC §7 stage (green: retrieved; warm: lost before the pool; blue/grey: lost in ranking).
STAGE_COLOURS = {
    "retrieved": "#2e7d32", "wrong_time": "#9e9d24", "no_anchor": "#4a148c", "not_in_kg": "#795548",
    "wrong_anchor": "#ec407a", "unreachable": "#e65100", "filtered": "#f9a825", "capped": "#c62828",
    "tie_cut": "#1565c0", "outranked": "#78909c",
}


def pyplot() -> Any:
    """matplotlib's ``pyplot`` on the Agg backend, imported on first use."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def import_pyplot_now() -> None:
    """Import ``pyplot`` now and collect the reference cycles the import leaves.

    Importing matplotlib leaves cycles (pyparsing keeps tracebacks of its
    parses) that hold every frame on the stack at that moment, locals
    included, until the cyclic collector runs. A job that pauses the collector
    (:func:`tempbench_core.memory.gc_paused`) and draws its plots last would
    keep all its data alive that way, to be walked once the collector is back.
    Called first, while the job's frames hold nothing large, the collection is
    cheap and nothing is kept.
    """
    if "matplotlib.pyplot" not in sys.modules:
        pyplot()
        gc.collect()


def _save(fig: Any, path: Path) -> None:
    plt = pyplot()
    with atomic_open(path, "wb", encoding=None) as handle:
        # No Software/date metadata: the same data gives the same bytes.
        fig.savefig(handle, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)


def _grouped_bars(ax: Any, groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str) -> None:
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(groups))
    for i, (name, values) in enumerate(series.items()):
        vals = [np.nan if v is None else v for v in values]
        ax.bar(x + (i - (len(series) - 1) / 2) * width, vals, width, label=name)
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=20 if max((len(g) for g in groups), default=0) > 8 else 0)
    ax.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)


def plot_by_slice(scores: Mapping[str, Mapping[str, Any]], field: str, path: Path) -> bool:
    """TRP and CCR per slice of ``field`` for each configuration; False when nothing to plot."""
    groups = slice_values(scores, field)
    if not groups:
        return False
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    for ax, metric in zip(axes, ("TRP", "CCR"), strict=True):
        series = {}
        for name in ordered(scores):
            per = (scores[name].get("trp_ccr") or {}).get(f"by_{field}") or {}
            series[name] = [(per.get(g) or {}).get(metric) for g in groups]
        _grouped_bars(ax, groups, series, f"{metric} by {field}")
    axes[0].legend(fontsize=8)
    _save(fig, path)
    return True


def plot_filtered_vs_blind(scores: Mapping[str, Mapping[str, Any]], path: Path,
                           filtered: str = "oracle", blind: str = "stale_blind") -> bool:
    """CCR per operator and stale hit rates, filtered vs stale-blind; False without both runs."""
    if filtered not in scores or blind not in scores:
        return False
    plt = pyplot()

    pair = {filtered: scores[filtered], blind: scores[blind]}
    groups = slice_values(pair, "operator")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    series = {
        f"{name} ({'filter on' if name == filtered else 'filter off'})":
            [((s.get("trp_ccr") or {}).get("by_operator") or {}).get(g, {}).get("CCR") for g in groups]
        for name, s in pair.items()
    }
    _grouped_bars(axes[0], groups, series, "CCR by operator")
    axes[0].legend(fontsize=8)
    names = ("stale_exact", "stale_same_fact", "stale_same_relation")
    neg_series = {
        name: [((s.get("negatives") or {}).get(n) or {}).get("rate") for n in names] for name, s in pair.items()
    }
    _grouped_bars(axes[1], [n.replace("stale_", "") for n in names], neg_series, "stale-negative hit rate (functional)")
    for container in axes[1].containers:
        axes[1].bar_label(container, fmt="%.3f", fontsize=7)  # a 0.000 bar is otherwise invisible
    axes[1].legend(fontsize=8)
    _save(fig, path)
    return True


def plot_ties(scores: Mapping[str, Mapping[str, Any]], path: Path, metrics: Sequence[str] = TIE_METRICS) -> bool:
    """Observed value with the tie-aware [min, max] as error bars and the expected value."""
    names = [n for n in ordered(scores) if scores[n].get("ties")]
    present = [m for m in metrics if any((scores[n]["ties"].get(m) or {}).get("min") is not None for n in names)]
    if not names or not present:
        return False
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(11, 4), constrained_layout=True)
    width = 0.8 / len(names)
    x = np.arange(len(present))
    for i, name in enumerate(names):
        obs, exp, lo, hi = [], [], [], []
        for m in present:
            t = scores[name]["ties"].get(m) or {}
            o = t.get("observed")
            obs.append(np.nan if o is None else o)
            exp.append(np.nan if t.get("expected") is None else t["expected"])
            lo.append(0.0 if o is None or t.get("min") is None else max(o - t["min"], 0.0))
            hi.append(0.0 if o is None or t.get("max") is None else max(t["max"] - o, 0.0))
        pos = x + (i - (len(names) - 1) / 2) * width
        ax.errorbar(pos, obs, yerr=[lo, hi], fmt="o", capsize=4, label=f"{name} observed [min, max]")
        ax.plot(pos, exp, "x", color="black", markersize=6, label="expected over tie orderings" if i == 0 else None)
    ax.set_xticks(x)
    ax.set_xticklabels(present)
    ax.set_ylim(-0.02, 1.05)
    ax.set_title("Tie-aware ranges (SPEC §3.5)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    _save(fig, path)
    return True


def plot_attribution(attribution: Mapping[str, Mapping[str, Any]], path: Path, field: str = "complexity") -> bool:
    """Stacked bars "where the gold evidence is lost" (SPEC §7): one panel per configuration.

    ``attribution`` maps a configuration to the ``summary`` of
    :func:`eval.explain.attribute_run`; each panel has a bar for all hops and
    one per slice of ``field``, stacked by stage share.
    """
    names = [n for n in ordered(attribution) if (attribution[n] or {}).get("n_hops")]
    if not names:
        return False
    plt = pyplot()

    stages = list(STAGES)
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names) + 2.2, 4.2), sharey=True,
                             constrained_layout=True, squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        summary = attribution[name]
        groups = {"all": summary, **(summary.get(f"by_{field}") or {})}
        x = np.arange(len(groups))
        bottom = np.zeros(len(groups))
        for stage in stages:
            vals = np.array([(g.get("shares") or {}).get(stage) or 0.0 for g in groups.values()])
            ax.bar(x, vals, 0.7, bottom=bottom, color=STAGE_COLOURS[stage], label=stage)
            bottom += vals
        ax.set_xticks(x)
        ax.set_xticklabels(list(groups), rotation=20 if len(groups) > 4 else 0)
        ax.set_ylim(0, 1.0)
        ax.set_title(name)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("share of gold hops")
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(handles[::-1], labels[::-1], fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle("Where the gold evidence is lost (SPEC §7)")
    _save(fig, path)
    return True


#: The plots drawn from the scores alone (the attribution plot also needs SPEC §7's summaries).
SCORE_PLOTS = ("by_complexity", "by_operator", "filtered_vs_stale_blind", "ties")


def write_plots(scores: Mapping[str, Mapping[str, Any]], plots_dir: Path,
                attribution: Mapping[str, Mapping[str, Any]] | None = None,
                only: Sequence[str] | None = None) -> dict[str, Path]:
    """Draw every plot that the scores (and the attribution, when given) allow; returns ``name -> path``.

    ``only``: draw just these (names of :data:`SCORE_PLOTS` and ``attribution``).
    """
    plots_dir = Path(plots_dir)
    written: dict[str, Path] = {}
    jobs = {
        "by_complexity": lambda p: plot_by_slice(scores, "complexity", p),
        "by_operator": lambda p: plot_by_slice(scores, "operator", p),
        "filtered_vs_stale_blind": lambda p: plot_filtered_vs_blind(scores, p),
        "ties": lambda p: plot_ties(scores, p),
        "attribution": lambda p: bool(attribution) and plot_attribution(attribution, p),
    }
    for name, job in jobs.items():
        if only is not None and name not in only:
            continue
        path = plots_dir / f"{name}.png"
        if job(path):
            written[name] = path
    return written


def plot_effects(result: Mapping[str, Any], path: Path) -> bool:
    """ER against ΔRI (SPEC §8), one point per ablation and measure; (1, 0) is perfect reproduction.

    ``result`` is the object of :func:`eval.repro.compare.compare_runs`.
    Undefined points (no effect in the original) are left out; False when
    none is left.
    """
    points = [(name, m, e["er"][m], e["delta_ri"][m]) for name, e in result.get("effects", {}).items()
              for m in result.get("measures", []) if e["er"][m] is not None and e["delta_ri"][m] is not None]
    if not points:
        return False
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 5), constrained_layout=True)
    ax.axvline(1.0, color="#999999", lw=0.8)
    ax.axhline(0.0, color="#999999", lw=0.8)
    ax.plot([1.0], [0.0], marker="*", ms=18, color="#bdbdbd", ls="none", zorder=1, label="perfect reproduction (1, 0)")
    names = list(dict.fromkeys(p[0] for p in points))
    markers = dict(zip(result["measures"], "osD^vP<>", strict=False))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, name in enumerate(names):
        for _, m, er, dri in (p for p in points if p[0] == name):
            ax.plot([er], [dri], marker=markers.get(m, "o"), ls="none", color=colours[i % len(colours)], zorder=3,
                    label=f"{name} {m}")
    ax.set_xlabel("ER (effect ratio)")
    ax.set_ylabel("ΔRI (delta relative improvement)")
    ax.set_title(f"reproduced effects against {result.get('baseline')}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    _save(fig, path)
    return True
