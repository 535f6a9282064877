"""The reproduction report: Markdown tables plus PNG plots (SPEC §6.2, §4, §6.3).

Input is plain data: the SPEC §6.2 score object of each configuration, the audit
rows of :func:`eval.audit.run_audit` and optional diff summaries. Plots are drawn
with matplotlib's Agg backend (no display needed) and written atomically; the
report links only plots that were written.

Plots
-----
``by_complexity.png``
    TRP and CCR per complexity slice, one bar per configuration.
``by_operator.png``
    TRP and CCR per operator slice, one bar per configuration.
``filtered_vs_stale_blind.png``
    The oracle retriever with and without the temporal filter: CCR per operator
    and the stale-negative hit rates (SPEC §3.3).
``ties.png``
    Tie-aware ranges (SPEC §3.5): observed value, expected value and the
    [min, max] over tie orderings as error bars, per metric and configuration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tempbench.core.atomic import atomic_open, write_text

CONFIG_ORDER = ("oracle", "nonoracle", "stale_blind", "hop3_k25")
TIE_METRICS = ("TRP", "CCR", "recall@1", "recall@5", "ndcg@10", "mrr")
PLOTS = ("by_complexity", "by_operator", "filtered_vs_stale_blind", "ties")


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        text = f"{value:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.000"
    return str(value)


def _ci(scores: Mapping[str, Any], *names: str) -> list[float] | None:
    ci = scores.get("ci") or {}
    for name in names:
        if ci.get(name) is not None:
            return ci[name]
    return None


def _fmt_ci(interval: Sequence[float] | None) -> str:
    return "–" if not interval else f"[{interval[0]:.3f}, {interval[1]:.3f}]"


def _tie_range(scores: Mapping[str, Any], metric: str) -> str:
    t = (scores.get("ties") or {}).get(metric)
    if not t or t.get("min") is None:
        return "–"
    return f"{t['min']:.3f}–{t['max']:.3f}"


def ordered(scores: Mapping[str, Any]) -> list[str]:
    """Configuration names: the paper's four first, then the rest as given."""
    return [c for c in CONFIG_ORDER if c in scores] + [c for c in scores if c not in CONFIG_ORDER]


def headline_rows(scores: Mapping[str, Mapping[str, Any]], compact: bool = False) -> tuple[list[str], list[list[Any]]]:
    """The headline table: one row per configuration (coverage always beside TRP, SPEC §3.2).

    ``compact=True`` gives the terminal version (fits 80 columns): no tie ranges,
    intervals as ``low-high``.
    """
    if compact:
        columns = ["config", "n", "coverage", "TRP", "TRP 95% CI", "CCR", "CCR 95% CI"]
    else:
        columns = ["config", "questions", "coverage", "TRP", "TRP 95% CI", "CCR", "CCR 95% CI", "TRP tie range", "CCR tie range"]
    rows = []
    for name in ordered(scores):
        s = scores[name]
        agg = s.get("trp_ccr") or {}
        trp_ci, ccr_ci = _ci(s, "TRP", "TRP_macro"), _ci(s, "CCR")
        row = [name, agg.get("n_questions", 0), agg.get("coverage"), agg.get("TRP_macro")]
        if compact:
            row += [_short_ci(trp_ci), agg.get("CCR"), _short_ci(ccr_ci)]
        else:
            row += [_fmt_ci(trp_ci), agg.get("CCR"), _fmt_ci(ccr_ci), _tie_range(s, "TRP"), _tie_range(s, "CCR")]
        rows.append(row)
    return columns, rows


def _short_ci(interval: Sequence[float] | None) -> str:
    return "-" if not interval else f"{interval[0]:.3f}-{interval[1]:.3f}"


def _slice_values(scores: Mapping[str, Mapping[str, Any]], field: str) -> list[str]:
    values: set[str] = set()
    for s in scores.values():
        values |= set(((s.get("trp_ccr") or {}).get(f"by_{field}") or {}).keys())
    return sorted(values, key=str)


def slice_rows(scores: Mapping[str, Mapping[str, Any]], field: str) -> tuple[list[str], list[list[Any]]]:
    """Per-slice table: n, coverage, TRP, CCR for every configuration."""
    names = ordered(scores)
    columns = [field, "n"]
    for name in names:
        columns += [f"{name} cov", f"{name} TRP", f"{name} CCR"]
    rows = []
    for value in _slice_values(scores, field):
        n = None
        row: list[Any] = [value]
        cells: list[Any] = []
        for name in names:
            per = ((scores[name].get("trp_ccr") or {}).get(f"by_{field}") or {}).get(value)
            cov = ((scores[name].get("coverage") or {}).get(f"by_{field}") or {}).get(value)
            if per is not None and n is None:
                n = per.get("n")
            cells += [cov, None if per is None else per.get("TRP"), None if per is None else per.get("CCR")]
        rows.append(row + [n] + cells)
    return columns, rows


def _md_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    head = "| " + " | ".join(columns) + " |"
    sep = "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(columns))) + "|"
    body = ["| " + " | ".join(_fmt(v).replace("|", "\\|") for v in row) + " |" for row in rows]
    return "\n".join([head, sep, *body])


# --------------------------------------------------------------------------- plots


def _save(fig: Any, path: Path) -> None:
    import matplotlib.pyplot as plt

    with atomic_open(path, "wb", encoding=None) as handle:
        # No Software/date metadata: the same data gives the same bytes.
        fig.savefig(handle, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)


def _grouped_bars(ax: Any, groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str) -> None:
    import numpy as np

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
    groups = _slice_values(scores, field)
    if not groups:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pair = {filtered: scores[filtered], blind: scores[blind]}
    groups = _slice_values(pair, "operator")
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
    import numpy as np

    names = [n for n in ordered(scores) if scores[n].get("ties")]
    present = [m for m in metrics if any((scores[n]["ties"].get(m) or {}).get("min") is not None for n in names)]
    if not names or not present:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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


def write_plots(scores: Mapping[str, Mapping[str, Any]], plots_dir: Path) -> dict[str, Path]:
    """Draw every plot that the scores allow; returns ``name -> path`` of those written."""
    plots_dir = Path(plots_dir)
    written: dict[str, Path] = {}
    jobs = {
        "by_complexity": lambda p: plot_by_slice(scores, "complexity", p),
        "by_operator": lambda p: plot_by_slice(scores, "operator", p),
        "filtered_vs_stale_blind": lambda p: plot_filtered_vs_blind(scores, p),
        "ties": lambda p: plot_ties(scores, p),
    }
    for name, job in jobs.items():
        path = plots_dir / f"{name}.png"
        if job(path):
            written[name] = path
    return written


# --------------------------------------------------------------------------- Markdown


def audit_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The audit as Markdown: claim, paper, reproduced, delta, verdict, note."""
    from eval.audit import format_delta, format_value

    out = []
    for r in rows:
        reproduced = format_value(r["reproduced"], r["kind"], r["of"], like=r["paper"])
        note = r.get("reason") or r.get("note") or ""
        out.append([f"`{r['id']}` {r['what']}", format_value(r["paper"], r["kind"], r["paper_of"]), reproduced,
                    format_delta(r["delta"], r["kind"], like=r["paper"]), r["verdict"], note])
    return _md_table(["claim", "paper", "reproduced", "delta", "verdict", "note"], out)


def write_report(
    out_dir: str | Path,
    scores: Mapping[str, Mapping[str, Any]],
    audit_rows: Sequence[Mapping[str, Any]] = (),
    diffs: Mapping[str, Mapping[str, Any]] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``plots/*.png`` and ``report.md`` into ``out_dir``; returns the report path.

    Parameters
    ----------
    scores:
        Configuration name -> SPEC §6.2 score object.
    audit_rows:
        Rows of :func:`eval.audit.run_audit`.
    diffs:
        Baseline file name -> diff result (``summary`` plus optional ``metrics``
        rows and ``config``).
    meta:
        Free ``key -> value`` facts printed at the top (data root, split, timings).
    """
    out = Path(out_dir)
    plots = write_plots(scores, out / "plots")
    lines: list[str] = ["# TempBench reproduction report", ""]
    for key, value in (meta or {}).items():
        lines.append(f"- **{key}**: {value}")
    if meta:
        lines.append("")
    cols, rows = headline_rows(scores)
    lines += ["## Headline (SPEC §3.2, §3.5, §3.7)", "",
              "TRP is the macro mean over questions with evidence; coverage is the share of questions with evidence. "
              "CI: 95% bootstrap over questions. Tie range: min–max over orderings of equal BM25 scores.", "",
              _md_table(cols, rows), ""]

    def image(name: str, caption: str) -> None:
        if name in plots:
            lines.extend([f"![{caption}](plots/{name}.png)", ""])

    for field in ("complexity", "operator"):
        cols, rows = slice_rows(scores, field)
        lines += [f"## By {field}", "", _md_table(cols, rows), ""]
        image(f"by_{field}", f"TRP and CCR by {field}")
    if "oracle" in scores and "stale_blind" in scores:
        lines += ["## Filtered vs stale-blind (SPEC §2.4, §3.3)", ""]
    neg_names = sorted({n for s in scores.values() for n in (s.get("negatives") or {}) if isinstance((s.get("negatives") or {}).get(n), dict)})
    if neg_names:
        if "oracle" not in scores or "stale_blind" not in scores:
            lines += ["## Typed negatives (SPEC §3.3)", ""]
        neg_rows = []
        for name in ordered(scores):
            neg = scores[name].get("negatives") or {}
            neg_rows.append([name] + [
                f"{_fmt(neg[n].get('rate'))} (n={neg[n].get('n')})" if isinstance(neg.get(n), dict) else "–" for n in neg_names
            ])
        lines += [_md_table(["config", *neg_names], neg_rows), ""]
    image("filtered_vs_stale_blind", "filtered vs stale-blind")
    rank_names = [m for m in ("recall@1", "recall@5", "recall@10", "recall@15", "recall@25", "ndcg@10", "ndcg@15", "ndcg@25", "mrr")
                  if any(m in (s.get("rank") or {}) for s in scores.values())]
    if rank_names:
        rank_rows = [[name] + [(scores[name].get("rank") or {}).get(m) for m in rank_names] for name in ordered(scores)]
        lines += ["## Rank metrics (SPEC §3.4)", "", _md_table(["config", *rank_names], rank_rows), ""]
    tie_rows = []
    for name in ordered(scores):
        for metric, t in (scores[name].get("ties") or {}).items():
            if isinstance(t, dict) and metric in TIE_METRICS:
                tie_rows.append([name, metric, t.get("observed"), t.get("expected"), t.get("min"), t.get("max"), t.get("bias")])
    if tie_rows:
        lines += ["## Tie-aware evaluation (SPEC §3.5)", "",
                  "Every metric at every depth is in `scores/<config>.json` under `ties`.", "",
                  _md_table(["config", "metric", "observed", "expected", "min", "max", "bias"], tie_rows), ""]
        image("ties", "tie-aware ranges")
    if audit_rows:
        from eval.audit import verdict_counts

        counts = verdict_counts(audit_rows)
        summary = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        lines += ["## Audit of the card's claims (SPEC §4)", "",
                  f"Verdicts: {summary}. Tolerances: `configs/paper_numbers.toml`. On data other than the real "
                  "release the reproduced column shows that data's values, and FAIL is expected.", "",
                  audit_table(audit_rows), ""]
    if diffs:
        lines += ["## Diff against published baselines (SPEC §6.3)", ""]
        for name, d in diffs.items():
            lines += [f"### `{name}`", ""]
            if d.get("error"):
                lines += [f"Skipped: {d['error']}", ""]
                continue
            if d.get("config"):
                lines.append(f"Compared with run `{d['config']}`.")
                lines.append("")
            summ = d.get("summary")
            if summ:
                lines += [f"Exact match: {summ['exact']:,} of {summ['baseline_questions']:,} baseline questions "
                          f"({summ['exact_share']:.1%}), items compared by {d.get('space')}.", "",
                          _md_table(["measure", "value"], [[k, v] for k, v in summ.items() if k not in ("exact", "exact_share")]), ""]
                if summ["exact"] < summ["baseline_questions"]:
                    lines += [f"Per-question differences: `diff/`. To find the decision options (SPEC §2) that reproduce "
                              f"this baseline: `tempbench diff runs/{d.get('config')}.jsonl BASELINE --sweep`.", ""]
            metric_rows = d.get("metrics") or []
            differ = [m for m in metric_rows if m["delta"] is None or abs(m["delta"]) > 1e-12]
            if metric_rows and not differ:
                lines += [f"All {len(metric_rows)} (slice, metric) values equal.", ""]
            elif differ:
                shown = differ[:40]
                lines += [f"{len(differ)} of {len(metric_rows)} (slice, metric) values differ"
                          + (" (the first 40 shown; all in `diff/`)" if len(differ) > 40 else "") + ":", "",
                          _md_table(["slice", "metric", "run", "baseline", "delta"],
                                    [[m["slice"], m["metric"], m["run"], m["baseline"], m["delta"]] for m in shown]), ""]
            if d.get("metrics_note"):
                lines += [d["metrics_note"], ""]
    report = out / "report.md"
    write_text(report, "\n".join(lines).rstrip() + "\n")
    return report
