"""The report's plots (PNG, matplotlib's Agg backend, no display needed), written atomically.

``by_complexity.png`` / ``by_operator.png``
    TRP and CCR per slice, one bar per configuration with its value written
    above it and, when the per-slice intervals are given, its 95% bootstrap
    interval as whiskers; each panel's axis is scaled to its data.
``filtered_vs_stale_blind.png``
    The oracle retriever with and without the temporal filter: CCR per operator
    and the stale-negative hit rates (SPEC §3.3).
``ties.png``
    Tie-aware ranges (SPEC §3.5): per metric a panel with its own axis, the
    [min, max] over tie orderings as a bar per configuration, the observed
    value as a tick and the expected value as a diamond.
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

# Colour-blind-safe colours: the Okabe-Ito palette (Okabe & Ito 2008) and, past its eight,
# Paul Tol's "muted" scheme. Stages next to each other in the stacked bars and the four a
# reader must tell apart (filtered, capped, unreachable, too_deep) differ in lightness as
# well as hue, so they stay apart under protanopia, deuteranopia and tritanopia alike.
#: One colour per SPEC §7 stage (green: retrieved; blues: not in any pool; yellow/vermillion:
#: removed by the filter or the caps; black/grey: lost in the ranking).
STAGE_COLOURS: dict[str, str] = {
    "retrieved": "#009E73", "wrong_time": "#E69F00", "no_anchor": "#332288", "not_in_kg": "#882255",
    "wrong_anchor": "#CC79A7", "too_deep": "#56B4E9", "unreachable": "#0072B2", "filtered": "#F0E442",
    "capped": "#D55E00", "tie_cut": "#000000", "outranked": "#BBBBBB",
}
#: Colours for a stage that has none above (taken in STAGES order, so each still gets its own).
_SPARE_COLOURS = ("#44AA99", "#999933", "#AA4499", "#DDCC77", "#117733", "#88CCEE", "#CC6677", "#666666")
#: Configuration colours (Okabe-Ito), the same in every plot; other configurations take the rest in order.
CONFIG_COLOURS: dict[str, str] = {"oracle": "#0072B2", "nonoracle": "#E69F00", "stale_blind": "#CC79A7",
                                  "hop3_k25": "#009E73"}
_SPARE_CONFIG_COLOURS = ("#56B4E9", "#D55E00", "#F0E442", "#000000", "#999999")


def stage_colours(stages: Sequence[str] = STAGES) -> dict[str, str]:
    """A colour for every stage of ``stages`` (default: SPEC §7's :data:`~eval.explain.STAGES`).

    A stage of :data:`STAGE_COLOURS` keeps its colour; any other takes the next
    spare one, so a stage added to :data:`~eval.explain.STAGES` gets its own
    colour in the plot and the browser without an edit here.
    """
    spare = iter(c for c in _SPARE_COLOURS if c not in STAGE_COLOURS.values())
    return {s: STAGE_COLOURS[s] if s in STAGE_COLOURS else next(spare, "#777777") for s in stages}


def config_colours(names: Sequence[str]) -> dict[str, str]:
    """A colour per configuration: the shipped ones fixed (:data:`CONFIG_COLOURS`), others in order."""
    spare = iter(_SPARE_CONFIG_COLOURS)
    return {n: CONFIG_COLOURS[n] if n in CONFIG_COLOURS else next(spare, "#777777") for n in names}


def text_colour(background: str) -> str:
    """Black or white text, whichever reads better on ``background`` (``#rrggbb``; WCAG relative luminance)."""
    rgb = [int(background[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    luminance = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    # contrast with black (L + 0.05) / 0.05 against white 1.05 / (L + 0.05): equal at L ~ 0.179
    return "#111111" if luminance > 0.179 else "#ffffff"


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


#: Pixels per inch of the saved plots.
SAVE_DPI = 110


def _save(fig: Any, path: Path) -> None:
    plt = pyplot()
    layout = fig.get_layout_engine()
    if layout is not None:
        # What savefig would do first, done here alone: the layout at the saving resolution. savefig then draws
        # once, instead of a whole figure drawn with nothing rendered to lay it out, then drawn again.
        screen_dpi = fig.dpi
        fig.dpi = SAVE_DPI
        layout.execute(fig)
        fig.set_layout_engine(None)
        fig.dpi = screen_dpi
    with atomic_open(path, "wb", encoding=None) as handle:
        # No Software/date metadata: the same data gives the same bytes.
        fig.savefig(handle, format="png", dpi=SAVE_DPI, metadata={"Software": None})
    plt.close(fig)


def _top(values: Sequence[float]) -> float:
    """The upper end of an axis that starts at 0: the data's maximum plus room for the value labels.

    The values are shares (at most 1), so the axis never needs to go far past 1.
    """
    finite = [v for v in values if v is not None and np.isfinite(v)]
    top = max(finite, default=0.0)
    return min(top * 1.15 + 0.01, 1.12) if top > 0 else 0.1


def _grouped_bars(ax: Any, groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str,
                  intervals: Mapping[str, Sequence[Sequence[float] | None]] | None = None,
                  labels: Sequence[str] | None = None) -> None:
    """Bars per group, one per series, each with its value written above it (a 0.000 bar is otherwise invisible).

    ``intervals``: per series, a ``[low, high]`` per group (or ``None``), drawn
    as whiskers. The axis runs from 0 to just above the largest value or
    interval end, so small values are not flattened by an axis made for 1.0.
    """
    colours = config_colours(list(series))
    n_bars = max(len(series), 1) * max(len(groups), 1)
    width = 0.8 / max(len(series), 1)
    x = np.arange(len(groups))
    tops: list[float] = []
    for i, (name, values) in enumerate(series.items()):
        vals = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
        pos = x + (i - (len(series) - 1) / 2) * width
        ax.bar(pos, vals, width, label=name, color=colours[name], edgecolor="white", linewidth=0.5)
        ends = vals.copy()
        ci = (intervals or {}).get(name)
        if ci is not None:
            lo = np.array([np.nan if c is None or v is None else max(v - c[0], 0.0) for c, v in zip(ci, values, strict=True)])
            hi = np.array([np.nan if c is None or v is None else max(c[1] - v, 0.0) for c, v in zip(ci, values, strict=True)])
            shown = ~np.isnan(lo)
            if shown.any():
                ax.errorbar(pos[shown], vals[shown], yerr=[lo[shown], hi[shown]], fmt="none", ecolor="#333333",
                            elinewidth=0.9, capsize=2.5)
            ends = np.where(shown, vals + np.nan_to_num(hi), vals)
        tops += [float(e) for e in ends if np.isfinite(e)]
        # the label sits above the whisker, so it never hides the interval
        for p, v, e in zip(pos, vals, ends, strict=True):
            if np.isfinite(v):
                ax.annotate(f"{v:.3f}", (p, e), xytext=(0, 2), textcoords="offset points", ha="center", va="bottom",
                            fontsize=6.5, rotation=90 if n_bars > 12 else 0)
    ax.set_xticks(x)
    ax.set_xticklabels(labels or groups, rotation=20 if max((len(g) for g in groups), default=0) > 8 else 0)
    top = _top(tops)
    ax.set_ylim(0, top * (1.12 if n_bars > 12 else 1.0))  # vertical labels need more room
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)


def _slice_labels(scores: Mapping[str, Mapping[str, Any]], field: str, groups: Sequence[str]) -> list[str]:
    """``"1hop\\n(n=100)"``: each slice with its number of questions (the first configuration that has it)."""
    out = []
    for g in groups:
        n = next((per[g]["n"] for s in scores.values()
                  if (per := (s.get("trp_ccr") or {}).get(f"by_{field}") or {}).get(g) and "n" in per[g]), None)
        out.append(g if n is None else f"{g}\n(n={n:,})")
    return out


def plot_by_slice(scores: Mapping[str, Mapping[str, Any]], field: str, path: Path,
                  intervals: Mapping[str, Mapping[str, Any]] | None = None) -> bool:
    """TRP and CCR per slice of ``field`` for each configuration; False when nothing to plot.

    ``intervals``: configuration -> :func:`eval.per_question.slice_intervals`
    of its run; each bar then gets its 95% bootstrap interval as whiskers.
    """
    groups = slice_values(scores, field)
    if not groups:
        return False
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4), constrained_layout=True)
    with_ci = False
    for ax, metric in zip(axes, ("TRP", "CCR"), strict=True):
        series, cis = {}, {}
        for name in ordered(scores):
            per = (scores[name].get("trp_ccr") or {}).get(f"by_{field}") or {}
            series[name] = [(per.get(g) or {}).get(metric) for g in groups]
            own = ((intervals or {}).get(name) or {}).get(field)
            if own:
                cis[name] = [(own.get(str(g)) or {}).get(metric) for g in groups]
                with_ci = True
        _grouped_bars(ax, groups, series, f"{metric} by {field}", cis, _slice_labels(scores, field, groups))
        ax.set_ylabel(f"{metric} (macro over the slice's questions)" if metric == "TRP" else "CCR (share of questions)")
    axes[0].legend(fontsize=8, loc="upper right")
    if with_ci:
        fig.suptitle(f"TRP and CCR by {field}; whiskers: 95% bootstrap interval of each slice (SPEC §3.7)", fontsize=10)
    _save(fig, path)
    return True


#: The two configurations the filtered vs stale-blind plot compares.
FILTERED_VS_BLIND = ("oracle", "stale_blind")


def plot_filtered_vs_blind(scores: Mapping[str, Mapping[str, Any]], path: Path,
                           filtered: str = FILTERED_VS_BLIND[0], blind: str = FILTERED_VS_BLIND[1]) -> bool:
    """CCR per operator and stale hit rates, filtered vs stale-blind; False without both runs."""
    if filtered not in scores or blind not in scores:
        return False
    plt = pyplot()

    pair = {filtered: scores[filtered], blind: scores[blind]}
    groups = slice_values(pair, "operator")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    series = {
        name: [((s.get("trp_ccr") or {}).get("by_operator") or {}).get(g, {}).get("CCR") for g in groups]
        for name, s in pair.items()
    }
    _grouped_bars(axes[0], groups, series, "CCR by operator")
    names = ("stale_exact", "stale_same_fact", "stale_same_relation")
    neg_series = {
        name: [((s.get("negatives") or {}).get(n) or {}).get("rate") for n in names] for name, s in pair.items()
    }
    _grouped_bars(axes[1], [n.replace("stale_", "") for n in names], neg_series, "stale-negative hit rate (functional)")
    for ax in axes:
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles, [f"{n} ({'filter on' if n == filtered else 'filter off'})" for n in labels], fontsize=8)
    _save(fig, path)
    return True


def plot_ties(scores: Mapping[str, Mapping[str, Any]], path: Path, metrics: Sequence[str] = TIE_METRICS) -> bool:
    """Tie-aware ranges (SPEC §3.5): per metric, one bar per configuration from the minimum to the maximum.

    One panel per metric, each with its own axis around its values (the
    ranges are narrow: on a shared 0-1 axis they vanish under their markers);
    the observed value is a black tick across the bar, the expected value a
    white diamond, and each row is labelled with the three numbers.
    """
    names = [n for n in ordered(scores) if scores[n].get("ties")]
    present = [m for m in metrics if any((scores[n]["ties"].get(m) or {}).get("min") is not None for n in names)]
    if not names or not present:
        return False
    plt = pyplot()

    colours = config_colours(names)
    cols = min(3, len(present))
    rows_n = -(-len(present) // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.6 * cols, 0.55 * len(names) * rows_n + 1.3 * rows_n + 0.4),
                             constrained_layout=True, squeeze=False)
    y = np.arange(len(names))[::-1]
    for ax, metric in zip(axes.ravel(), present, strict=False):
        ends: list[float] = []
        for row, name in zip(y, names, strict=True):
            t = scores[name]["ties"].get(metric) or {}
            lo, hi, obs, exp = t.get("min"), t.get("max"), t.get("observed"), t.get("expected")
            if lo is None or hi is None:
                continue
            ends += [lo, hi]
            ax.barh(row, hi - lo, left=lo, height=0.55, color=colours[name], alpha=0.45, edgecolor=colours[name])
            if obs is not None:
                ax.plot([obs, obs], [row - 0.34, row + 0.34], color="black", linewidth=2)
            if exp is not None:
                ax.plot(exp, row, "D", markersize=5, markerfacecolor="white", markeredgecolor="black")
        lo_all, hi_all = min(ends), max(ends)
        pad = max((hi_all - lo_all) * 0.08, 0.004)
        ax.set_xlim(lo_all - pad, hi_all + pad)
        ax.set_yticks(y)
        ax.set_yticklabels([_tie_label(name, scores[name]["ties"].get(metric) or {}) for name in names], fontsize=7.5)
        ax.set_ylim(-0.6, len(names) - 0.4)
        ax.set_title(metric)
        ax.grid(axis="x", alpha=0.3)
        ax.tick_params(axis="x", labelsize=7.5)
    for ax in axes.ravel()[len(present):]:
        ax.set_visible(False)
    handles = [
        plt.Rectangle((0, 0), 1, 1, color="#999999", alpha=0.45),
        plt.Line2D([], [], color="black", linewidth=2),
        plt.Line2D([], [], marker="D", linestyle="none", markerfacecolor="white", markeredgecolor="black"),
    ]
    fig.legend(handles, ["[min, max] over the orderings of tied scores", "observed (the run's own order)",
                         "expected over tie orderings"], loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    fig.suptitle("Tie-aware ranges (SPEC §3.5); each panel's axis is scaled to its values", fontsize=10)
    _save(fig, path)
    return True


def _tie_label(name: str, t: Mapping[str, Any]) -> str:
    """``"oracle\\n0.680 [0.672, 0.690]"``: the configuration, its observed value and its range."""
    if t.get("min") is None:
        return f"{name}\n-"
    obs = "-" if t.get("observed") is None else f"{t['observed']:.3f}"
    return f"{name}\n{obs} [{t['min']:.3f}, {t['max']:.3f}]"


def plot_attribution(attribution: Mapping[str, Mapping[str, Any]], path: Path, field: str = "complexity") -> bool:
    """Stacked bars "where the gold evidence is lost" (SPEC §7): one panel per configuration.

    ``attribution`` maps a configuration to the ``summary`` of
    :func:`eval.attribution.attribute_run`; each panel has a bar for all hops and
    one per slice of ``field``, stacked by stage share. The stages are the
    summaries' own (``summary["stages"]``, else :data:`~eval.explain.STAGES`),
    each in its colour of :func:`stage_colours`.
    """
    names = [n for n in ordered(attribution) if (attribution[n] or {}).get("n_hops")]
    if not names:
        return False
    plt = pyplot()

    stages = list(dict.fromkeys(s for n in names for s in (attribution[n].get("stages") or STAGES)))
    colours = stage_colours(stages)
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names) + 2.4, 4.4), sharey=True,
                             constrained_layout=True, squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        summary = attribution[name]
        groups = {"all": summary, **(summary.get(f"by_{field}") or {})}
        x = np.arange(len(groups))
        bottom = np.zeros(len(groups))
        for stage in stages:
            vals = np.array([(g.get("shares") or {}).get(stage) or 0.0 for g in groups.values()])
            ax.bar(x, vals, 0.7, bottom=bottom, color=colours[stage], label=stage, edgecolor="white", linewidth=0.4)
            bottom += vals
        ax.set_xticks(x)
        ax.set_xticklabels([f"{g}\n({v.get('n_hops', 0):,} hops)" for g, v in groups.items()], fontsize=7.5,
                           rotation=20 if len(groups) > 4 else 0)
        ax.set_ylim(0, 1.0)
        ax.set_title(name)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("share of gold hops")
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(handles[::-1], labels[::-1], fontsize=7.5, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                       title="stage (top to bottom)", title_fontsize=7.5)
    fig.suptitle("Where the gold evidence is lost (SPEC §7)")
    _save(fig, path)
    return True


#: The plots drawn from the scores alone (the attribution plot also needs SPEC §7's summaries).
SCORE_PLOTS = ("by_complexity", "by_operator", "filtered_vs_stale_blind", "ties")
#: The score plots that need only some configurations' scores (and no intervals): plot -> those configurations.
PARTIAL_PLOTS = {"filtered_vs_stale_blind": FILTERED_VS_BLIND}
#: :data:`SCORE_PLOTS`, the longest to draw first (ties has six panels, the slice plots two each): drawn by a few
#: processes at the end of a job, the last one left drawing alone is then a short one.
SCORE_PLOTS_LONGEST_FIRST = ("ties", "by_operator", "by_complexity", "filtered_vs_stale_blind")


def write_plots(scores: Mapping[str, Mapping[str, Any]], plots_dir: Path,
                attribution: Mapping[str, Mapping[str, Any]] | None = None,
                only: Sequence[str] | None = None,
                intervals: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Path]:
    """Draw every plot that the scores (and the attribution, when given) allow; returns ``name -> path``.

    ``only``: draw just these (names of :data:`SCORE_PLOTS` and ``attribution``).
    ``intervals``: configuration -> :func:`eval.per_question.slice_intervals`
    of its run, the whiskers of the per-slice plots (none without).
    """
    plots_dir = Path(plots_dir)
    written: dict[str, Path] = {}
    jobs = {
        "by_complexity": lambda p: plot_by_slice(scores, "complexity", p, intervals),
        "by_operator": lambda p: plot_by_slice(scores, "operator", p, intervals),
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
