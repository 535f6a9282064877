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
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.audit.context import AuditContext
from eval.audit.run import audit_document, run_audit
from eval.baselines import load_baseline
from eval.diff import compare
from eval.explain import STAGES, Explainer, attribution_json, run_questions, summarize
from eval.report.html import browser_part, browser_questions, merge_parts, row_sources, write_html
from eval.report.markdown import write_report
from eval.report.plots import SCORE_PLOTS, import_pyplot_now, write_plots
from eval.report.tables import ordered
from eval.scoring import score_run
from retriever import default_workers, load_benchmark, load_config, load_flags, load_index, run_to_file
from tempbench.core.atomic import write_json, write_text
from tempbench.core.console import info
from tempbench.core.errors import ConfigError, TempbenchError
from tempbench.core.layout import DataPaths, default_index_cache
from tempbench.core.memory import gc_paused
from tempbench.core.runfile import run_records
from tempbench.core.schema import SHIPPED_CONFIGS

BASELINE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")


# What the post-processing tasks read (inherited through fork): index, runs, questions, explainers, ...
_POST: dict[str, Any] = {}
#: Questions per browser/attribution task: small enough to balance the workers, large enough to amortize.
SLICE_SIZE = 250


def _post_task(task: tuple[Any, ...]) -> tuple[Any, ...]:
    """One task after the runs, in a worker process or in this one.

    ``("score", name)``: score the run and write ``scores/<name>.json``.
    ``("slice", lo, hi)``: the browser parts of every configuration for the
    questions ``chosen[lo:hi]`` (their loss attribution is in the parts); what
    depends on the question alone is made once for all configurations.
    """
    if task[0] == "score":
        name = task[1]
        score = score_run(_POST["runs"][name], _POST["questions"], _POST["flags"], split=_POST["split"],
                          n_boot=_POST["n_boot"])
        write_json(_POST["out"] / "scores" / f"{name}.json", score)
        return task, score
    _kind, lo, hi = task
    shared: dict[Any, Any] = {}
    parts = {name: browser_part(_POST["chosen"], name, _POST["runs"][name], _POST["explainers"][name],
                                _POST["rows_from"][name], span=range(lo, hi), shared=shared)
             for name in _POST["names"]}
    return task, parts


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_post_tasks(tasks: list[tuple[Any, ...]], workers: int) -> Iterator[tuple[Any, ...]]:
    """The results of :func:`_post_task` over ``tasks``, as they finish (in ``workers`` forked processes)."""
    if workers > 1 and len(tasks) > 1 and "fork" in multiprocessing.get_all_start_methods():
        pool = multiprocessing.get_context("fork").Pool(min(workers, len(tasks)), initializer=_ignore_sigint)
        try:
            yield from pool.imap_unordered(_post_task, tasks, chunksize=1)
        finally:
            pool.terminate()
            pool.join()
    else:
        yield from map(_post_task, tasks)


def _attribution(chosen: list[Mapping[str, Any]], run: Mapping[Any, Any], parts: list[Mapping[str, Any]],
                 explainer: Explainer) -> dict[str, Any]:
    """The loss attribution of a run (as :func:`eval.explain.attribute_run` makes it) from its browser parts."""
    by_id: dict[Any, list[str]] = {}
    position = 0
    for part in parts:
        for entry in part["entries"]:
            if entry is not None:
                by_id[chosen[position]["id"]] = [STAGES[i] for i in entry["st"]]
            position += 1
    pairs = run_questions(run, chosen)
    stages = {q["id"]: by_id[q["id"]] for q, _record in pairs}
    return {"questions": stages, "summary": summarize([q for q, _ in pairs], stages, explainer.config)}


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
    # worth collecting early. The one library that does (matplotlib, on import) is
    # imported first, so that its cycles hold none of the job's data.
    import_pyplot_now()
    with gc_paused():
        return _reproduce(data, Path(out), split, workers, n_boot, cache_dir, description)


def _reproduce(data: DataPaths, out: Path, split: str, workers: int, n_boot: int, cache_dir: str | Path | None,
               description: dict[str, Any] | None) -> Reproduction:
    timings: dict[str, float] = {}
    t_start = time.perf_counter()
    data.require("kg", "benchmark")
    # Loaded once, shared by every step: the benchmark, the index, and each run's records
    # (kept in memory as written, so nothing is read back).
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    flags = load_flags(data.flags) if data.flags is not None and Path(data.flags).exists() else None
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark,
                       cache_dir=Path(cache_dir) if cache_dir is not None else default_index_cache())
    timings["load"] = time.perf_counter() - t_start

    runs: dict[str, dict[Any, Any]] = {}
    pools: dict[str, dict[Any, Any]] = {}
    for name in SHIPPED_CONFIGS:
        t0 = time.perf_counter()
        info(f"running {name} on the {split} split")
        run_path = out / "runs" / f"{name}.jsonl"
        records: list[dict[str, Any]] = []
        summaries: list[Any] = []
        run_to_file(load_config(name), data, split=split, out_path=run_path, workers=workers, cache_dir=cache_dir,
                    index=index, questions=questions, records=records, pools=summaries)
        runs[name] = run_records(run_path, records)
        pools[name] = {record["id"]: summary for record, summary in zip(records, summaries, strict=True)}
        timings[f"run {name}"] = time.perf_counter() - t0

    # After the runs, in `workers` forked processes: the scores (largest run first), then the
    # question browser and loss attribution (SPEC §7) in slices of questions; this process
    # audits as soon as the scores are in.
    t_post = time.perf_counter()
    names = ordered(runs)
    chosen = browser_questions(questions, runs)
    explainers = {name: Explainer(index, load_config(name), pools[name]) for name in names}
    _POST.update(index=index, runs=runs, questions=questions, out=out, chosen=chosen, names=names,
                 rows_from=row_sources(chosen, names, runs), explainers=explainers, flags=flags,
                 split=None if split == "all" else split, n_boot=n_boot)
    by_size = sorted(runs, key=lambda n: -sum(len(r["evidence"]) for r in runs[n].values()))
    tasks = [("score", name) for name in by_size]
    tasks += [("slice", lo, min(lo + SLICE_SIZE, len(chosen))) for lo in range(0, len(chosen), SLICE_SIZE)]
    scores: dict[str, dict[str, Any]] = {}
    slices: dict[int, dict[str, Any]] = {}
    audit_rows: list[dict[str, Any]] = []
    diffs: dict[str, dict[str, Any]] = {}
    plots: dict[str, Path] = {}
    try:
        for task, result in _run_post_tasks(tasks, workers):
            if task[0] == "slice":
                slices[task[1]] = result
                continue
            scores[task[1]] = result
            if len(scores) < len(runs):
                continue
            scores = {name: scores[name] for name in runs}  # run order, whatever order they finished in
            timings["score (all runs)"] = time.perf_counter() - t_post
            t0 = time.perf_counter()
            ctx = AuditContext(data, runs_dir=out / "runs", split=split, cache_dir=cache_dir, scores=scores,
                               index=index)
            ctx.questions = questions  # already loaded; the audit reuses them
            for name, run in runs.items():
                ctx.offer_run(name, out / "runs" / f"{name}.jsonl", run)
            audit_rows = run_audit(ctx)
            write_json(out / "audit.json", audit_document(ctx, audit_rows))
            timings["audit"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            plots = write_plots(scores, out / "plots", only=SCORE_PLOTS)  # while the workers go on
            timings["plots"] = time.perf_counter() - t0
            if data.baselines is not None:
                t0 = time.perf_counter()
                diffs = diff_baselines(Path(data.baselines), runs, questions, flags, out)
                timings["diff"] = time.perf_counter() - t0
    finally:
        _POST.clear()
    parts = {name: [slices[lo][name] for lo in sorted(slices)] for name in names}
    attribution = {}
    for name in names:
        result = _attribution(chosen, runs[name], parts[name], explainers[name])
        write_text(out / "explain" / f"{name}.json", attribution_json(result))
        attribution[name] = result["summary"]
    timings["post-processing (wall, in parallel)"] = time.perf_counter() - t_post

    t0 = time.perf_counter()
    plots.update(write_plots(scores, out / "plots", attribution=attribution, only=("attribution",)))
    report = write_report(out, scores, audit_rows, diffs, description or {}, attribution=attribution, plots=plots)
    timings["report"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    write_html(out, report.read_text(encoding="utf-8"), merge_parts(chosen, names, parts))
    timings["report.html"] = time.perf_counter() - t0
    return Reproduction(out, scores, audit_rows, diffs, timings)
