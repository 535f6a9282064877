"""The reproduction job: the paper's four configurations run, scored, audited, diffed and reported.

Writes into ``out``::

    runs/<config>.jsonl, runs/<config>.meta.json   SPEC §6.1
    scores/<config>.json                           SPEC §6.2
    audit.json                                     SPEC §4
    diff/<baseline>.json                           SPEC §6.3 (when DATA/baselines/ exists)
    explain/<config>.json                          SPEC §7 (where each gold hop is lost)
    report.md, plots/*.png
    report.html                                    report.md plus the question browser, self-contained
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.audit.context import AuditContext
from eval.audit.run import audit_document, run_audit
from eval.baselines import load_baseline
from eval.diff import compare
from eval.explain import Explainer, attribute_run, attribution_json
from eval.report.html import browser_data, write_html
from eval.report.markdown import write_report
from eval.scoring import score_run
from retriever import load_benchmark, load_config, load_flags, load_index, run_to_file
from tempbench.core.atomic import write_json, write_text
from tempbench.core.console import info
from tempbench.core.errors import ConfigError, TempbenchError
from tempbench.core.layout import DataPaths, default_index_cache
from tempbench.core.progress import progress
from tempbench.core.runfile import read_run
from tempbench.core.schema import SHIPPED_CONFIGS

BASELINE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")


@dataclass
class Reproduction:
    """What :func:`reproduce` computed (everything is also written under ``out``)."""

    out: Path
    scores: dict[str, dict[str, Any]]
    audit_rows: list[dict[str, Any]]
    diffs: dict[str, dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)


def match_config(stem: str, configs: list[str]) -> str | None:
    """The configuration a baselines file is about: the longest config name in its stem."""
    lowered = stem.lower().replace("-", "_")
    hits = [c for c in configs if c in lowered]
    return max(hits, key=len) if hits else None


def diff_baselines(baselines_dir: Path, runs: dict[str, dict[Any, Any]], questions: list[dict[str, Any]],
                   flags: Any, out_dir: Path) -> dict[str, dict[str, Any]]:
    """Diff each baselines file against the run of its configuration (default: oracle)."""
    results: dict[str, dict[str, Any]] = {}
    files = sorted(p for p in baselines_dir.rglob("*")
                   if p.is_file() and p.suffix.lower() in BASELINE_SUFFIXES and not p.name.endswith(".meta.json"))
    for path in files:
        name = str(path.relative_to(baselines_dir))
        try:
            baseline = load_baseline(path)
            # A metric table that names configurations is compared per configuration;
            # anything else goes to the configuration its file name names (default oracle).
            named = [c for c in getattr(baseline, "configs", lambda: [])() if c in runs]
            targets = [(f"{name} [{c}]", c) for c in named] if named else [(name, match_config(path.stem, list(runs)) or "oracle")]
            for key, config in targets:
                result = compare(runs[config], baseline, questions, flags, config=config)
                result["config"] = config
                results[key] = result
                write_json(out_dir / "diff" / (key.replace("/", "__").replace(" [", ".").replace("]", "") + ".json"), result)
        except TempbenchError as exc:
            # One unreadable file must not cost the whole reproduction: report and go on.
            info(f"baselines/{name}: skipped: {exc}")
            results[name] = {"error": str(exc)}
    return results


def reproduce(
    data: DataPaths,
    out: str | Path = "tempbench-out",
    split: str = "test",
    workers: int = 1,
    n_boot: int = 1000,
    cache_dir: str | Path | None = None,
    description: dict[str, Any] | None = None,
) -> Reproduction:
    """Run, score, audit, diff and report (the module docstring lists what is written).

    ``description`` is printed at the top of ``report.md`` (data, split, command).
    """
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1 (got {workers})")
    if n_boot < 1:
        raise ConfigError(f"--boot must be >= 1 (got {n_boot})")
    timings: dict[str, float] = {}
    data.require("kg", "benchmark")
    out = Path(out)
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    flags = load_flags(data.flags) if data.flags is not None and Path(data.flags).exists() else None

    runs: dict[str, dict[Any, Any]] = {}
    scores: dict[str, dict[str, Any]] = {}
    for name in SHIPPED_CONFIGS:
        t0 = time.perf_counter()
        info(f"running {name} on the {split} split")
        run_path = out / "runs" / f"{name}.jsonl"
        run_to_file(load_config(name), data, split=split, out_path=run_path, workers=workers, cache_dir=cache_dir)
        timings[f"run {name}"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        runs[name] = read_run(run_path)
        scores[name] = score_run(runs[name], questions, flags, split=None if split == "all" else split, n_boot=n_boot)
        write_json(out / "scores" / f"{name}.json", scores[name])
        timings[f"score {name}"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    ctx = AuditContext(data, runs_dir=out / "runs", split=split, cache_dir=cache_dir, scores=scores)
    ctx.questions = questions  # already loaded; the audit reuses them
    audit_rows = run_audit(ctx)
    write_json(out / "audit.json", audit_document(ctx, audit_rows))
    timings["audit"] = time.perf_counter() - t0

    diffs: dict[str, dict[str, Any]] = {}
    if data.baselines is not None:
        t0 = time.perf_counter()
        diffs = diff_baselines(Path(data.baselines), runs, questions, flags, out)
        timings["diff"] = time.perf_counter() - t0

    # Loss attribution (SPEC §7): every configuration's run, on the index it was made on.
    t0 = time.perf_counter()
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark,
                       cache_dir=Path(cache_dir) if cache_dir is not None else default_index_cache())
    explainers = {name: Explainer(index, load_config(name)) for name in runs}
    attribution: dict[str, dict[str, Any]] = {}
    for name, explainer in explainers.items():
        result = attribute_run(explainer, runs[name], questions)
        write_text(out / "explain" / f"{name}.json", attribution_json(result))
        attribution[name] = result["summary"]
    timings["explain"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    report = write_report(out, scores, audit_rows, diffs, description or {}, attribution=attribution)
    timings["report"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    data_blob = browser_data(questions, runs, explainers,
                             progress=lambda items, total, what: progress(items, total=total, description=what))
    write_html(out, report.read_text(encoding="utf-8"), data_blob)
    timings["report.html"] = time.perf_counter() - t0
    return Reproduction(out, scores, audit_rows, diffs, timings)
