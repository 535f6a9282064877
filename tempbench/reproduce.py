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
step. Side processes are forked while this process is small: one draws the
plots (forked first, it imports matplotlib while the data loads), ``workers``
of them score the runs. Each run uses ``workers`` processes (default: the
machine's cores), and its hook works on each shard where it was retrieved,
with its records and pools at hand: the shard's part of the question browser,
the loss attribution included, and its scoring columns (the attribution's own
resolution, :func:`eval.columnar.columns_part`). A run is scored from those
parts as soon as it is made, while the next run goes on (from its file when a
question needed the reference resolution), and a thread of this process
finishes it meanwhile: its loss attribution is written and its browser parts
are merged (the runs go in the browser's configuration order). At the end a
scoring process audits while the plots are drawn and this process writes the
browser's JSON. With one worker everything happens in this process and the
records are kept in memory. The cyclic garbage collector is paused for the
job. Every output is byte-identical for any number of workers.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from eval.audit.context import AuditContext
from eval.audit.run import audit_document, run_audit
from eval.baselines import is_baseline_file, load_baseline, match_config
from eval.diff import compare, diff_file_name
from eval.evidence import TablePart, table_of, table_part
from eval.explain import STAGES, Explainer, attribution_json, summarize
from eval.key_space_effect import part_other_space, parts_suffice
from eval.per_question import slice_intervals
from eval.question_detail import question_negatives
from eval.report.html import BrowserBlob, browser_json, browser_part, row_sources, write_html
from eval.report.markdown import write_report
from eval.report.plots import SCORE_PLOTS, import_pyplot_now, write_plots
from eval.report.reproducibility import reproducibility_report
from eval.report.tables import ordered
from eval.scoring import evaluate, evaluate_parts, to_json
from retriever import UNFREED_SHARDS, default_workers, load_benchmark, load_config, load_flags, load_index, run_to_file
from tempbench_core.atomic import write_json, write_text
from tempbench_core.console import info
from tempbench_core.errors import ConfigError, TempbenchError
from tempbench_core.layout import DataPaths, default_index_cache
from tempbench_core.memory import gc_paused
from tempbench_core.runfile import read_written_run, run_records
from tempbench_core.schema import SHIPPED_CONFIGS, select_split

# What the run hook and the scoring workers read (inherited through fork).
_POST: dict[str, Any] = {}
# Per worker process: one explainer per configuration (its pools are set per shard).
_EXPLAINERS: dict[str, Explainer] = {}
# Per worker process: what its shards made and no longer need, left for the process's end.
_UNFREED: list[Any] = []


def _browse_shard(name: str, positions: range, records: list[dict[str, Any]], pools: list[Any]) -> dict[str, Any]:
    """The hook of run ``name`` (``run_to_file(on_shard=...)``): a shard's part of the browser, its loss attribution included.

    Runs where the shard was retrieved, with the pools at hand, so nothing is
    expanded or sent twice; the positions of the run's questions are those of
    the browser's (every run covers the split).
    """
    explainer = _EXPLAINERS.get(name)
    if explainer is None:
        explainer = _EXPLAINERS[name] = Explainer(_POST["index"], load_config(name), shared=_POST["shared"])
    # each question is explained once: nothing from earlier shards is needed (a forked worker,
    # terminated at the end of the run, keeps it rather than free it object by object)
    in_worker = multiprocessing.parent_process() is not None and len(_UNFREED) < UNFREED_SHARDS
    explainer.forget(into=_UNFREED if in_worker else None)
    explainer.pools = {record["id"]: summary for record, summary in zip(records, pools, strict=True)}
    run = {record["id"]: record for record in records}
    chosen = _POST["chosen"]
    part = browser_part(chosen, name, run, explainer, _POST["rows_from"][name], span=positions, shared=_POST["shared"])
    # the scorer's resolution of the shard is the attribution's (key auto, evidence and cut-off ties)
    questions = [chosen[j] for j in positions]
    reads = [explainer.explain(q, record).read for q, record in zip(questions, records, strict=True)]
    table = table_of(questions, reads, "auto", [record.get("evidence") for record in records], _POST["shared"])
    return {"browser": part, "columns": table_part(table, part_other_space(table))}


def _score_task(name: str, parts: list[TablePart | None]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Score one run and write ``scores/<name>.json`` (in a side process or in this one); also its per-slice intervals.

    From the run's columns parts, resolved by the run's hook, when they
    suffice; else from the records, this process's when it kept them (one
    process) or the run file's.
    """
    if all(part is not None for part in parts) and parts_suffice(parts):  # type: ignore[arg-type]
        # what depends on the question alone is kept for the next run this process scores
        ev = evaluate_parts(parts, _POST["chosen"], _POST["questions"], _POST["flags"],  # type: ignore[arg-type]
                            shared=_POST.setdefault("scoring_shared", {}))
    else:
        run = _POST["runs"].get(name)
        if run is None:
            run = read_written_run(_POST["out"] / "runs" / f"{name}.jsonl")
        ev = evaluate(run, _POST["questions"], _POST["flags"], split=_POST["split"])
    score = to_json(ev, n_boot=_POST["n_boot"])  # score_parts / score_run, keeping ev for the slices' intervals
    write_json(_POST["out"] / "scores" / f"{name}.json", score)
    return score, slice_intervals(ev, n_boot=_POST["n_boot"])


def _plot_task(out: Path, scores: Mapping[str, Any] | None, attribution: Mapping[str, Any] | None,
               intervals: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """The attribution plot (no scores given) or the score plots (in the drawing process or in this one)."""
    if scores is None:
        return write_plots({}, out / "plots", attribution=attribution, only=("attribution",))
    return write_plots(scores, out / "plots", only=SCORE_PLOTS, intervals=intervals)


def _audit_task(scores: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Recompute the card's claims and write ``audit.json`` (in a scoring process or in this one)."""
    out = _POST["out"]
    # the differing triples of every question were made before the runs (the browser's negatives)
    ctx = AuditContext(_POST["data"], runs_dir=out / "runs", split=_POST["split_name"], cache_dir=_POST["cache_dir"],
                       scores=scores, index=_POST["index"], memo=_POST["shared"])
    ctx.questions = _POST["questions"]  # already loaded; the audit reuses them
    for name, run in _POST["runs"].items():
        ctx.offer_run(name, out / "runs" / f"{name}.jsonl", run)
    rows = run_audit(ctx)
    write_json(out / "audit.json", audit_document(ctx, rows))
    return rows


def _forking(workers: int) -> bool:
    """Whether the job's side tasks go to forked processes (else they run in this one)."""
    return workers > 1 and "fork" in multiprocessing.get_all_start_methods()


class _Side:
    """Where the side tasks run: processes forked early, while this one is small, or this process.

    Forked before the runs, the side processes share little with this one,
    whose memory then grows (runs, browser parts): no copy-on-write of it on
    either side. One process draws the plots: forked first, it imports
    matplotlib while this one loads the data (its import cycles, see
    :func:`eval.report.plots.import_pyplot_now`, never reach this process).
    ``workers`` processes, forked once the data is loaded
    (:meth:`start_scorers`), score the runs, each as soon as it is made. The
    processes are stopped when ``stack`` closes.
    """

    def __init__(self, workers: int, stack: ExitStack) -> None:
        self.workers, self.stack = workers, stack
        self.scorers = self.drawer = None
        if _forking(workers):
            self.drawer = multiprocessing.get_context("fork").Pool(1, initializer=_start_drawer)
            stack.callback(_stop, self.drawer)

    def start_scorers(self) -> None:
        if _forking(self.workers):
            self.scorers = multiprocessing.get_context("fork").Pool(self.workers, initializer=_ignore_sigint)
            self.stack.callback(_stop, self.scorers)

    def score(self, name: str, parts: list[TablePart | None]) -> Callable[[], tuple[dict[str, Any], dict[str, Any]]]:
        if self.scorers is None:
            return lambda: _score_task(name, parts)
        return self.scorers.apply_async(_score_task, (name, parts)).get

    def audit(self, scores: Mapping[str, Any]) -> Callable[[], list[dict[str, Any]]]:
        if self.scorers is None:
            return lambda: _audit_task(scores)
        return self.scorers.apply_async(_audit_task, (dict(scores),)).get

    def plot(self, out: Path, scores: Mapping[str, Any] | None, attribution: Mapping[str, Any] | None,
             intervals: Mapping[str, Any] | None = None) -> Callable[[], dict[str, Path]]:
        if self.drawer is None:
            return lambda: _plot_task(out, scores, attribution, intervals)
        return self.drawer.apply_async(_plot_task, (out, scores, attribution, intervals)).get


def _stop(pool: Any) -> None:
    pool.terminate()
    pool.join()


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_drawer() -> None:
    """The drawing process's initializer: :func:`_ignore_sigint`, and matplotlib imported before any plot is asked for."""
    _ignore_sigint()
    import_pyplot_now()


def _attribution(chosen: list[Mapping[str, Any]], parts: list[tuple[Mapping[str, Any], range]],
                 config: Any) -> dict[str, Any]:
    """The loss attribution of a run over ``chosen`` (as :func:`eval.explain.attribute_run` makes it) from its browser parts."""
    stages: dict[Any, list[str]] = {}
    for part, positions in parts:
        for position, entry in zip(positions, part["entries"], strict=True):
            stages[chosen[position]["id"]] = [STAGES[i] for i in entry["st"]]
    return {"questions": stages, "summary": summarize(chosen, stages, config)}


def _finish_run(name: str, parts: list[tuple[dict[str, Any], range]], blob: BrowserBlob,
                chosen: list[Mapping[str, Any]], out: Path) -> dict[str, Any]:
    """Write run ``name``'s loss attribution and merge its browser parts into ``blob``; returns the attribution's summary."""
    result = _attribution(chosen, parts, load_config(name))
    write_text(out / "explain" / f"{name}.json", attribution_json(result))
    blob.add(name, [part for part, _ in parts])
    return result["summary"]


class _RunsOnDisk(Mapping[str, Any]):
    """The runs this job wrote, read from their files when first asked for (the diff's input)."""

    def __init__(self, runs_dir: Path, names: list[str], kept: Mapping[str, Any]) -> None:
        self.runs_dir, self.names, self.kept = runs_dir, names, dict(kept)

    def __getitem__(self, name: str) -> Any:
        if name not in self.names:
            raise KeyError(name)
        if name not in self.kept:
            self.kept[name] = read_written_run(self.runs_dir / f"{name}.jsonl")
        return self.kept[name]

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


@dataclass
class Reproduction:
    """What :func:`reproduce` computed (everything is also written under ``out``)."""

    out: Path
    scores: dict[str, dict[str, Any]]
    audit_rows: list[dict[str, Any]]
    diffs: dict[str, dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)


def diff_baselines(baselines_dir: Path, runs: Mapping[str, Any], questions: list[dict[str, Any]],
                   flags: Any, out_dir: Path) -> dict[str, dict[str, Any]]:
    """Diff each baselines file against the run of its configuration (default: oracle)."""
    results: dict[str, dict[str, Any]] = {}
    files = sorted(p for p in baselines_dir.rglob("*") if p.is_file() and is_baseline_file(p))
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
                write_json(out_dir / "diff" / diff_file_name(key), result)
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
    if not _forking(workers):
        import_pyplot_now()  # the plots are drawn in this process (else in a worker)
    with gc_paused():
        return _reproduce(data, Path(out), split, workers, n_boot, cache_dir, description)


def _reproduce(data: DataPaths, out: Path, split: str, workers: int, n_boot: int, cache_dir: str | Path | None,
               description: dict[str, Any] | None) -> Reproduction:
    timings: dict[str, float] = {}
    t_start = time.perf_counter()
    data.require("kg", "benchmark")
    kept: dict[str, Any] = {}  # the runs' records, kept only when everything happens in this process
    with ExitStack() as stack:
        # side processes stopped and shared state dropped however this ends
        side = _Side(workers, stack)
        stack.callback(_EXPLAINERS.clear)
        stack.callback(_POST.clear)
        # Loaded once, shared by every step (and by the processes forked from this one).
        questions = load_benchmark(data.benchmark, data.benchmark_ids)
        flags = load_flags(data.flags) if data.flags is not None and Path(data.flags).exists() else None
        index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark,
                           cache_dir=Path(cache_dir) if cache_dir is not None else default_index_cache())
        timings["load"] = time.perf_counter() - t_start

        # The browser's questions are the split's: every run covers them, in this order, so a
        # shard's positions in its run are its positions in the browser.
        names = ordered(dict.fromkeys(SHIPPED_CONFIGS))
        chosen = select_split(questions, split)
        every = dict.fromkeys(names, {q["id"] for q in chosen})
        # what the browser shows of a question under every configuration, made once (workers inherit it)
        shared: dict[Any, Any] = {}
        for q in chosen:
            question_negatives(q, shared=shared)
        _POST.update(index=index, chosen=chosen, rows_from=row_sources(chosen, names, every), shared=shared)
        _EXPLAINERS.clear()
        _POST.update(runs=kept, questions=questions, out=out, flags=flags, split=None if split == "all" else split,
                     n_boot=n_boot, data=data, split_name=split, cache_dir=cache_dir)
        side.start_scorers()
        pending: dict[str, Callable[[], tuple[dict[str, Any], dict[str, Any]]]] = {}
        # A thread of this process finishes each run while the next one goes on (this process
        # mostly waits for its workers then): the run's loss attribution (SPEC §7) is written and
        # its browser parts are merged, configurations in the browser's order, the runs' order.
        blob = BrowserBlob(chosen, names)
        finisher = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="tempbench-finish"))
        finished: dict[str, Future[dict[str, Any]]] = {}
        for name in names:
            t0 = time.perf_counter()
            info(f"running {name} on the {split} split")
            run_path = out / "runs" / f"{name}.jsonl"
            records: list[dict[str, Any]] | None = None if _forking(workers) else []
            shard_parts: list[dict[str, Any]] = []
            meta = run_to_file(load_config(name), data, split=split, out_path=run_path, workers=workers,
                               cache_dir=cache_dir, index=index, questions=questions, records=records,
                               on_shard=partial(_browse_shard, name), shard_results=shard_parts)
            if records is not None:
                kept[name] = run_records(run_path, records)
            size = meta["shard_size"]
            parts = [(part["browser"], range(k * size, min((k + 1) * size, len(chosen))))
                     for k, part in enumerate(shard_parts)]
            # scored (from its columns parts) and finished while the next run goes on
            pending[name] = side.score(name, [part["columns"] for part in shard_parts])
            finished[name] = finisher.submit(_finish_run, name, parts, blob, chosen, out)
            del shard_parts, parts
            timings[f"run {name} (with its browser part)"] = time.perf_counter() - t0

        # Then the last scores are finished; a scoring process audits while the drawing process
        # draws the plots and this one writes the browser's JSON.
        t0 = time.perf_counter()
        attribution = {name: finished[name].result() for name in names}
        attribution_plot = side.plot(out, None, attribution)
        timings["attribution and browser (waited for)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        scored = {name: pending[name]() for name in SHIPPED_CONFIGS}
        scores = {name: score for name, (score, _) in scored.items()}
        score_plots = side.plot(out, scores, None, {name: cis for name, (_, cis) in scored.items()})
        audited = side.audit(scores)
        timings["scores (waited for)"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        blob_json = browser_json(blob.finish())
        timings["browser JSON"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        del blob
        timings["browser freed"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        audit_rows = audited()
        timings["audit (waited for)"] = time.perf_counter() - t0

        diffs: dict[str, dict[str, Any]] = {}
        if data.baselines is not None:
            t0 = time.perf_counter()
            runs = _RunsOnDisk(out / "runs", list(SHIPPED_CONFIGS), kept)
            diffs = diff_baselines(Path(data.baselines), runs, questions, flags, out)
            timings["diff"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        plots = {**attribution_plot(), **score_plots()}
        timings["plots (waited for)"] = time.perf_counter() - t0

    repro = None
    if data.baselines is not None:
        # SPEC §8: the published per-question runs of the four configurations against ours
        t0 = time.perf_counter()
        runs_dir = out / "runs"
        repro = reproducibility_report(Path(data.baselines), {n: runs_dir / f"{n}.jsonl" for n in SHIPPED_CONFIGS},
                                       questions, out, split, workers)
        timings["reproducibility"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = write_report(out, scores, audit_rows, diffs, description or {}, attribution=attribution, plots=plots,
                          reproducibility=repro)
    write_html(out, report.read_text(encoding="utf-8"), None, data_json=blob_json)
    timings["report"] = time.perf_counter() - t0
    return Reproduction(out, scores, audit_rows, diffs, timings)
