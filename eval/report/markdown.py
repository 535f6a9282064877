"""The reproduction report as Markdown (``report.md``), with the plots it links (SPEC §4, §6.2, §6.3).

Input is plain data: the SPEC §6.2 score object of each configuration, the
audit rows of :func:`eval.audit.run.run_audit`, optional diff summaries and
the data's provenance (:class:`tempbench_core.provenance.Provenance`, as its
JSON): its *Provenance* section names the data's origin, the KG's sha256, the
lock's files with their sha256 (the first 12 hex digits; all 64 are in
``audit.json`` and ``scores/*.json``) and whether each changed since the lock,
and the command that writes the same report again. The report links only
plots that were written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.audit.format import data_kind_note, verdict_summary
from eval.diff import baseline_cell, differing_metrics, metrics_agreement
from eval.explain import STAGE_HELP, STAGES
from eval.measures import FAMILIES, RANK_MEASURES
from eval.published import published_rows
from eval.report.plots import TIE_METRICS, write_plots
from eval.report.reproducibility import reproducibility_lines
from eval.report.tables import audit_table, fmt, headline_rows, md_table, ordered, slice_rows
from tempbench_core.atomic import write_text
from tempbench_core.provenance import describe_origin
from tempbench_core.text import markdown_code, markdown_text

#: How the lock's state of a file reads in the report.
LOCK_STATES = {"ok": "unchanged since the lock", "changed": "CHANGED since the lock", "missing": "MISSING"}

#: Rank metrics shown in the report (every one is in ``scores/<config>.json``).
REPORT_RANK_MEASURES = tuple(m for m in RANK_MEASURES if not (m.family == "ndcg" and m.cutoff < 10))


def attribution_lines(attribution: Mapping[str, Mapping[str, Any]], plots: Mapping[str, Path]) -> list[str]:
    """The report section "where the gold evidence is lost" (SPEC §7) as Markdown lines.

    ``attribution`` maps a configuration to the ``summary`` of
    :func:`eval.attribution.attribute_run`.
    """
    names = [n for n in ordered(attribution) if attribution[n].get("n_hops")]
    if not names:
        return []
    lines = ["## Where the gold evidence is lost (SPEC §7)", "",
             "Every distinct gold hop of every question is attributed to the first stage below that applies; the "
             "tables give the share of gold hops at each stage. The `retrieved` hops are the distinct gold triples "
             "the TRP/CCR scorer counts as hits. Per question: `explain/<config>.json`, `tempbench show QID`, and "
             "the question browser of `report.html`.", "",
             md_table(["stage", "the gold hop ..."], [[f"`{s}`", STAGE_HELP[s]] for s in STAGES]), ""]
    rows = [[name, attribution[name]["n_hops"], *(attribution[name]["shares"][s] for s in STAGES)] for name in names]
    lines += [md_table(["config", "gold hops", *STAGES], rows), ""]
    slice_rows_ = []
    for name in names:
        for value, g in (attribution[name].get("by_complexity") or {}).items():
            slice_rows_.append([name, value, g["n_hops"], *(g["shares"][s] for s in STAGES)])
    if slice_rows_:
        lines += ["By complexity (share of the slice's gold hops):", "",
                  md_table(["config", "complexity", "gold hops", *STAGES], slice_rows_), ""]
    if "attribution" in plots:
        lines += ["![where the gold evidence is lost](plots/attribution.png)", ""]
    return lines


def provenance_lines(provenance: Mapping[str, Any] | None) -> list[str]:
    """The report section "Provenance": origin, KG digest, lock digests, the command that rewrites the report."""
    if not provenance:
        return []
    kg = provenance.get("kg")
    lines = ["## Provenance", "",
             f"- **origin**: {markdown_code(provenance['origin'])}: "
             f"{markdown_text(describe_origin(provenance['origin'], provenance.get('detail') or {}, kg))}"]
    if provenance.get("data"):
        lines.append(f"- **data root**: {markdown_code(provenance['data'])}")
    if kg:
        lines.append(f"- **KG**: {markdown_code(kg['path'])}, sha256 {markdown_code(kg['sha256'])}")
    detail = provenance.get("detail") or {}
    for key in ("kg", "labels"):
        built = detail.get(key) if provenance["origin"] == "built" else None
        if isinstance(built, Mapping) and built:
            lines.append(f"- **built from {key}**: {markdown_code(built.get('file', '?'))}, sha256 "
                         f"{markdown_code(built.get('sha256', '?'))}")
    lines.append(f"- **tool**: {markdown_text(provenance.get('tool'))}")
    if provenance.get("command"):
        lines.append(f"- **command** (writes this report again): {markdown_code(provenance['command'])}")
    lines.append("")
    lock = provenance.get("lock") or {}
    if lock:
        changed = sum(entry.get("state") != "ok" for entry in lock.values())
        lines += [f"The data root's lock (`tempbench.lock`) records {len(lock):,} file(s); "
                  + (f"{changed:,} differ from it now." if changed else "every one is as recorded.")
                  + " sha256 shown to 12 hex digits (all 64 in `audit.json`).", ""]
        rows = [[markdown_code(rel), f"{entry.get('bytes', 0):,}", markdown_code(str(entry.get("sha256", ""))[:12]),
                 markdown_text(entry.get("source")), LOCK_STATES.get(str(entry.get("state")), str(entry.get("state")))]
                for rel, entry in lock.items()]
        lines += [md_table(["file", "bytes", "sha256", "source", "state"], rows), ""]
    return lines


def definition_lines(scores: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What the headline numbers mean (from :mod:`eval.measures`) and which key space matched evidence to gold."""
    out = []
    for name in ("TRP", "CCR", "coverage", "TRP_micro"):
        f = FAMILIES[name]
        out.append(f"- **{f.title}**: {f.definition}; over {f.population}.")
    out.append("- Empty retrievals count as 0 for CCR, coverage and the rank metrics and are left out of TRP; "
               "repeated items count again for TRP and CCR. CI: 95% bootstrap over questions. Tie range: min–max "
               "over orderings of equal BM25 scores. Definitions: SPEC §3 (`docs/specification.md`).")
    spaces = {name: (s.get("counts") or {}).get("key_space") for name, s in scores.items()}
    known = {n: k for n, k in spaces.items() if k}
    if known:
        parts = []
        for name, k in known.items():
            n = k.get("questions_differing")
            other = "" if n is None else f"; {n:,} question(s) score otherwise on {k['other']}s"
            parts.append(f"{markdown_text(name)}: {k['used']}{other}")
        out.append("- Key space (SPEC §3.1): evidence matched to gold on " + "; ".join(parts) + ".")
    return out


def _image(plots: Mapping[str, Path], name: str, caption: str) -> list[str]:
    """The Markdown lines linking plot ``name``, or none when it was not drawn."""
    return [f"![{caption}](plots/{name}.png)", ""] if name in plots else []


def meta_lines(meta: Mapping[str, Any] | None) -> list[str]:
    """The free ``key -> value`` facts printed under the report's title."""
    lines = [f"- **{key}**: {markdown_text(value)}" for key, value in (meta or {}).items()]
    return lines + [""] if meta else lines


def headline_lines(scores: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The report section "Headline": the definitions and one row per configuration."""
    cols, rows = headline_rows(scores)
    return ["## Headline (SPEC §3.2, §3.5, §3.7)", "", *definition_lines(scores), "", md_table(cols, rows), ""]


def published_lines(scores: Mapping[str, Mapping[str, Any]], diffs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The report section comparing the run with the published outputs (SPEC §1.4), if there are any."""
    pub_cols, pub_rows = published_rows(scores, diffs)
    if not pub_rows:
        return []
    return ["## Published outputs beside the reproduction (SPEC §1.4)", "",
            "Ours: this reproduction's run. Reported: the value a published metric table gives. Of their "
            "evidence: the published per-question evidence scored by this scorer. Details per file under "
            "*Diff against published baselines*.", "", md_table(pub_cols, pub_rows), ""]


def slice_lines(scores: Mapping[str, Mapping[str, Any]], plots: Mapping[str, Path]) -> list[str]:
    """The report sections "By complexity" and "By operator", each with its plot."""
    lines: list[str] = []
    for field in ("complexity", "operator"):
        cols, rows = slice_rows(scores, field)
        lines += [f"## By {field}", "", md_table(cols, rows), ""]
        lines += _image(plots, f"by_{field}", f"TRP and CCR by {field}")
    return lines


def negatives_lines(scores: Mapping[str, Mapping[str, Any]], plots: Mapping[str, Path]) -> list[str]:
    """The report section on typed negatives (SPEC §2.4, §3.3): filtered vs stale-blind when both ran."""
    both = "oracle" in scores and "stale_blind" in scores
    lines = ["## Filtered vs stale-blind (SPEC §2.4, §3.3)", ""] if both else []
    neg_names = sorted({n for s in scores.values() for n in (s.get("negatives") or {})
                        if isinstance((s.get("negatives") or {}).get(n), dict)})
    if neg_names:
        if not both:
            lines += ["## Typed negatives (SPEC §3.3)", ""]
        neg_rows = []
        for name in ordered(scores):
            neg = scores[name].get("negatives") or {}
            neg_rows.append([name] + [
                f"{fmt(neg[n].get('rate'))} (n={neg[n].get('n')})" if isinstance(neg.get(n), dict) else "–"
                for n in neg_names
            ])
        lines += [md_table(["config", *neg_names], neg_rows), ""]
    return lines + _image(plots, "filtered_vs_stale_blind", "filtered vs stale-blind")


def rank_lines(scores: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The report section "Rank metrics" (SPEC §3.4): the metrics of :data:`REPORT_RANK_MEASURES` that were scored."""
    rank_names = [m.name for m in REPORT_RANK_MEASURES if any(m.name in (s.get("rank") or {}) for s in scores.values())]
    if not rank_names:
        return []
    rank_rows = [[name] + [(scores[name].get("rank") or {}).get(m) for m in rank_names] for name in ordered(scores)]
    return ["## Rank metrics (SPEC §3.4)", "", md_table(["config", *rank_names], rank_rows), ""]


def tie_lines(scores: Mapping[str, Mapping[str, Any]], plots: Mapping[str, Path]) -> list[str]:
    """The report section "Tie-aware evaluation" (SPEC §3.5): the metrics of :data:`TIE_METRICS`, with the plot."""
    tie_rows = []
    for name in ordered(scores):
        for metric, t in (scores[name].get("ties") or {}).items():
            if isinstance(t, dict) and metric in TIE_METRICS:
                tie_rows.append([name, metric, t.get("observed"), t.get("expected"), t.get("min"), t.get("max"),
                                 t.get("bias")])
    if not tie_rows:
        return []
    return ["## Tie-aware evaluation (SPEC §3.5)", "",
            "Every metric at every depth is in `scores/<config>.json` under `ties`.", "",
            md_table(["config", "metric", "observed", "expected", "min", "max", "bias"], tie_rows), "",
            *_image(plots, "ties", "tie-aware ranges")]


def audit_lines(audit_rows: Sequence[Mapping[str, Any]], provenance: Mapping[str, Any] | None) -> list[str]:
    """The report section "Audit of the card's claims" (SPEC §4), if there are audit rows."""
    if not audit_rows:
        return []
    return ["## Audit of the card's claims (SPEC §4)", "",
            f"Verdicts: {verdict_summary(audit_rows)}. "
            + (f"{markdown_text(data_kind_note(provenance))} " if provenance else "")
            + "Tolerances: "
            "`configs/paper_numbers.toml`. On data other than the real release the reproduced column shows that "
            "data's values; a count that only grows with the data's size is marked `scale` and its share row "
            "beside it decides; a claim that tempbench's builder makes true is `by-construction` on the data "
            "it made.", "",
            audit_table(audit_rows), ""]


def diff_summary_lines(d: Mapping[str, Any]) -> list[str]:
    """One baseline's exact-match summary, and how to look for the options that reproduce it."""
    summ = d.get("summary")
    if not summ:
        return []
    lines = [f"Exact match: {summ['exact']:,} of {summ['baseline_questions']:,} baseline questions "
             f"({summ['exact_share']:.1%}), items compared by {d.get('space')}.", "",
             md_table(["measure", "value"], [[k, v] for k, v in summ.items() if k not in ("exact", "exact_share")]), ""]
    if summ["exact"] < summ["baseline_questions"]:
        sweep = markdown_code(f"tempbench diff runs/{d.get('config')}.jsonl BASELINE --sweep")
        lines += [f"Per-question differences: `diff/`. To find the decision options (SPEC §2) that reproduce "
                  f"this baseline: {sweep}.", ""]
    return lines


def diff_metric_lines(metric_rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One baseline's published metric values against the run's: agreement, the differing ones, the impossible ones."""
    lines: list[str] = []
    differ = differing_metrics(metric_rows)  # as the table shows them, to 3 decimals
    if metric_rows and not differ:
        text = metrics_agreement(metric_rows)
        lines += [f"{text[0].upper()}{text[1:]}.", ""]
    elif differ:
        shown = differ[:40]
        lines += [f"{len(differ)} of {len(metric_rows)} (slice, metric) values differ"
                  + (" (the first 40 shown; all in `diff/`)" if len(differ) > 40 else "") + ":", "",
                  md_table(["slice", "metric", "run", "baseline", "delta"],
                           [[m["slice"], m["metric"], m["run"], baseline_cell(m), m["delta"]] for m in shown]), ""]
    invalid = [m for m in metric_rows if m.get("invalid")]
    if invalid:
        lines += [f"{len(invalid)} published value(s) are impossible and were not compared (marked `invalid`): "
                  + markdown_text("; ".join(f"{m['metric']} ({m['slice']}) = {m['invalid']['given']}: "
                                            f"{m['invalid']['problem']}" for m in invalid[:10])
                                  + (" ..." if len(invalid) > 10 else "")) + ".", ""]
    return lines


def diff_lines(diffs: Mapping[str, Mapping[str, Any]] | None) -> list[str]:
    """The report section "Diff against published baselines" (SPEC §6.3): a subsection per baseline file."""
    if not diffs:
        return []
    lines = ["## Diff against published baselines (SPEC §6.3)", ""]
    for name, d in diffs.items():
        # a baseline's name is a file name from the data: one line, a code span it cannot close
        lines += [f"### {markdown_code(name)}", ""]
        if d.get("error"):
            lines += [f"Skipped: {markdown_text(d['error'])}", ""]
            continue
        if d.get("config"):
            lines += [f"Compared with run {markdown_code(d['config'])}.", ""]
        lines += diff_summary_lines(d)
        lines += diff_metric_lines(d.get("metrics") or [])
        if d.get("metrics_note"):
            lines += [markdown_text(d["metrics_note"]), ""]
    return lines


@dataclass(frozen=True)
class ReportInputs:
    """What :func:`write_report` reports: plain data, every part but the scores optional.

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
    attribution:
        Configuration -> loss-attribution summary (SPEC §7,
        :func:`eval.attribution.attribute_run`); adds its section and plot.
    plots:
        The plots already drawn (:func:`eval.report.plots.write_plots` of the
        same scores and attribution); default: drawn by :func:`write_report`.
    reproducibility:
        The SPEC §8 comparison with the published per-question runs
        (:func:`eval.report.reproducibility.reproducibility_report`); adds the
        *Reproducibility* section.
    provenance:
        The data's :class:`~tempbench_core.provenance.Provenance` as JSON; adds
        the *Provenance* section and says on what data the audit's verdicts
        were computed.
    """

    scores: Mapping[str, Mapping[str, Any]]
    audit_rows: Sequence[Mapping[str, Any]] = ()
    diffs: Mapping[str, Mapping[str, Any]] | None = None
    meta: Mapping[str, Any] | None = None
    attribution: Mapping[str, Mapping[str, Any]] | None = None
    plots: Mapping[str, Path] | None = None
    reproducibility: Mapping[str, Any] | None = None
    provenance: Mapping[str, Any] | None = None


def write_report(out_dir: str | Path, inputs: ReportInputs) -> Path:
    """Write ``plots/*.png`` (unless ``inputs.plots`` are given) and ``report.md`` into ``out_dir``; the report's path."""
    out = Path(out_dir)
    scores = inputs.scores
    plots = inputs.plots
    if plots is None:
        plots = write_plots(scores, out / "plots", attribution=inputs.attribution)
    lines = ["# TempBench reproduction report", "",
             *meta_lines(inputs.meta),
             *provenance_lines(inputs.provenance),
             *headline_lines(scores),
             *published_lines(scores, inputs.diffs or {}),
             *slice_lines(scores, plots),
             *negatives_lines(scores, plots),
             *rank_lines(scores),
             *tie_lines(scores, plots),
             *attribution_lines(inputs.attribution or {}, plots),
             *reproducibility_lines(inputs.reproducibility),
             *audit_lines(inputs.audit_rows, inputs.provenance),
             *diff_lines(inputs.diffs)]
    report = out / "report.md"
    write_text(report, "\n".join(lines).rstrip() + "\n")
    return report
