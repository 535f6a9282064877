"""The reproduction job: the paper's four configurations run, scored, audited, diffed and reported.

Writes into ``out``::

    runs/<config>.jsonl, runs/<config>.meta.json   SPEC §6.1
    scores/<config>.json                           SPEC §6.2
    audit.json                                     SPEC §4
    diff/<baseline>.json                           SPEC §6.3 (when DATA/baselines/ exists)
    explain/<config>.json                          SPEC §7 (where each gold hop is lost)
    report.md, plots/*.png
    report.html                                    report.md plus the question browser, self-contained

How (issue 15): the benchmark and the index are loaded once and shared by every
step; each run keeps its records in memory as it writes them (nothing is read
back); runs use ``workers`` processes (default: the machine's cores); the loss
attribution and the browser's part of each configuration are made in forked
worker processes while this one scores and audits; the cyclic garbage collector
is paused for the job. Every output is byte-identical for any number of workers.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.audit.context import AuditContext
from eval.audit.run import audit_document, run_audit
from eval.baselines import load_baseline
from eval.diff import compare
from eval.explain import Explainer, attribute_run, attribution_json
from eval.report.html import browser_part, browser_questions, merge_parts, row_sources, write_html
from eval.report.markdown import write_report
from eval.report.tables import ordered
from eval.scoring import score_run
from retriever import default_workers, load_benchmark, load_config, load_flags, load_index, run_to_file
from tempbench.core.atomic import write_json, write_text
from tempbench.core.console import info
from tempbench.core.errors import ConfigError, TempbenchError
from tempbench.core.jsonl import dumps_compact, loads_fast
from tempbench.core.layout import DataPaths, default_index_cache
from tempbench.core.memory import gc_paused
from tempbench.core.runfile import run_records
from tempbench.core.schema import SHIPPED_CONFIGS

BASELINE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")


# What the post-processing workers read (inherited through fork): index, runs, questions, out, chosen, rows_from.
_POST: dict[str, Any] = {}


def _post_config(name: str) -> str:
    """One configuration's loss attribution (``explain/<name>.json`` written here) and browser part, as JSON text.

    Runs in a worker process or in this one; either way the result goes
    through JSON, so both give the same values.
    """
    explainer = Explainer(_POST["index"], load_config(name))
    result = attribute_run(explainer, _POST["runs"][name], _POST["questions"])
    write_text(_POST["out"] / "explain" / f"{name}.json", attribution_json(result))
    part = browser_part(_POST["chosen"], name, _POST["runs"][name], explainer, _POST["rows_from"][name])
    return dumps_compact({"name": name, "summary": result["summary"], "part": part})


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_post_processing(names: list[str], workers: int) -> Callable[[], dict[str, dict[str, Any]]]:
    """Start :func:`_post_config` for every configuration (largest first); returns a function that waits for them."""
    if workers > 1 and len(names) > 1 and "fork" in multiprocessing.get_all_start_methods():
        pool = multiprocessing.get_context("fork").Pool(min(workers, len(names)), initializer=_ignore_sigint)
        pending = pool.map_async(_post_config, names, chunksize=1)

        def collect() -> dict[str, dict[str, Any]]:
            try:
                texts = pending.get()
            finally:
                pool.terminate()
                pool.join()
            return {d["name"]: d for d in map(loads_fast, texts)}

        return collect
    return lambda: {d["name"]: d for d in (loads_fast(_post_config(n)) for n in names)}


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
    workers: int | None = None,
    n_boot: int = 1000,
    cache_dir: str | Path | None = None,
    description: dict[str, Any] | None = None,
) -> Reproduction:
    """Run, score, audit, diff and report (the module docstring lists what is written).

    ``description`` is printed at the top of ``report.md`` (data, split, command).
    ``workers`` defaults to the machine's cores (the outputs do not depend on it).
    """
    if workers is None:
        workers = default_workers()
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1 (got {workers})")
    if n_boot < 1:
        raise ConfigError(f"--boot must be >= 1 (got {n_boot})")
    # Millions of small objects live through the whole job (runs, explanations): the
    # cyclic collector would walk them all again and again, and the job makes no cycles
    # worth collecting early.
    with gc_paused():
        return _reproduce(data, Path(out), split, workers, n_boot, cache_dir, description)


def _reproduce(data: DataPaths, out: Path, split: str, workers: int, n_boot: int, cache_dir: str | Path | None,
               description: dict[str, Any] | None) -> Reproduction:
    timings: dict[str, float] = {}
    data.require("kg", "benchmark")
    # Loaded once, shared by every step: the benchmark, the index, and each run's records
    # (kept in memory as written, so nothing is read back).
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    flags = load_flags(data.flags) if data.flags is not None and Path(data.flags).exists() else None
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark,
                       cache_dir=Path(cache_dir) if cache_dir is not None else default_index_cache())

    runs: dict[str, dict[Any, Any]] = {}
    for name in SHIPPED_CONFIGS:
        t0 = time.perf_counter()
        info(f"running {name} on the {split} split")
        run_path = out / "runs" / f"{name}.jsonl"
        records: list[dict[str, Any]] = []
        run_to_file(load_config(name), data, split=split, out_path=run_path, workers=workers, cache_dir=cache_dir,
                    index=index, questions=questions, records=records)
        runs[name] = run_records(run_path, records)
        timings[f"run {name}"] = time.perf_counter() - t0

    # Loss attribution (SPEC §7) and each configuration's part of the question browser:
    # in `workers` forked processes, while this one scores and audits.
    t_post = time.perf_counter()
    names = ordered(runs)
    chosen = browser_questions(questions, runs)
    _POST.update(index=index, runs=runs, questions=questions, out=out, chosen=chosen,
                 rows_from=row_sources(chosen, names, runs))
    collect = _start_post_processing(sorted(runs, key=lambda n: -sum(len(r["evidence"]) for r in runs[n].values())),
                                      workers)

    scores: dict[str, dict[str, Any]] = {}
    for name in runs:
        t0 = time.perf_counter()
        scores[name] = score_run(runs[name], questions, flags, split=None if split == "all" else split, n_boot=n_boot)
        write_json(out / "scores" / f"{name}.json", scores[name])
        timings[f"score {name}"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    ctx = AuditContext(data, runs_dir=out / "runs", split=split, cache_dir=cache_dir, scores=scores, index=index)
    ctx.questions = questions  # already loaded; the audit reuses them
    for name, run in runs.items():
        ctx.offer_run(name, out / "runs" / f"{name}.jsonl", run)
    audit_rows = run_audit(ctx)
    write_json(out / "audit.json", audit_document(ctx, audit_rows))
    timings["audit"] = time.perf_counter() - t0

    diffs: dict[str, dict[str, Any]] = {}
    if data.baselines is not None:
        t0 = time.perf_counter()
        diffs = diff_baselines(Path(data.baselines), runs, questions, flags, out)
        timings["diff"] = time.perf_counter() - t0

    post = collect()
    _POST.clear()
    attribution = {name: post[name]["summary"] for name in runs}
    timings["explain and browser (wall, in parallel)"] = time.perf_counter() - t_post

    t0 = time.perf_counter()
    report = write_report(out, scores, audit_rows, diffs, description or {}, attribution=attribution)
    timings["report"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_html(out, report.read_text(encoding="utf-8"), merge_parts(chosen, names, {n: post[n]["part"] for n in names}))
    timings["report.html"] = time.perf_counter() - t0
    return Reproduction(out, scores, audit_rows, diffs, timings)
