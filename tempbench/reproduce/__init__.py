"""The reproduction job: the paper's four configurations run, scored, audited, diffed and reported.

Writes into ``out``::

    runs/<config>.jsonl, runs/<config>.meta.json   SPEC §6.1
    scores/<config>.json                           SPEC §6.2
    audit.json                                     SPEC §4
    diff/<baseline>.json                           SPEC §6.3 (when DATA/baselines/ exists)
    reproducibility.json                           SPEC §8 (when DATA/baselines/ holds the four runs)
    explain/<config>.json                          SPEC §7 (where each gold hop is lost)
    report.md, plots/*.png
    report.html                                    report.md plus the question browser, self-contained

The pipeline (:func:`reproduce`), each stage data in and data out::

    load (inputs.load_inputs)
      -> every shard retrieved and explained under every configuration in the workers
         (tasks.run_shard: one task per shard, so what depends on its questions alone is made once)
      -> for each configuration, in the browser's order:
           the run file and its metadata written here (retriever.finish_run)
           -> its score made in a worker (tasks.score_run)
           -> its loss attribution and browser rows merged by a thread of this process
      -> the audit in a worker (tasks.audit: the scores, and the runs' anchors from the shards, so that the
         anchor recall does not read a run file back), the plots in the drawing processes (a plot that needs only
         some runs' scores, filtered vs stale-blind, as soon as those are scored: draw_when_scored)
      -> the diff against baselines/ and SPEC §8's measures (eval.report.reproducibility)
      -> report.md and report.html

Two pools of processes do the work (:class:`tempbench_core.workers.WorkerPool`):
:data:`DRAWERS` draw the plots, one plot per task (forked first, they import
matplotlib while the data loads, so its import cycles never reach this process; on
two cores one after the other, :class:`~tempbench_core.workers.OneAtATime`); ``workers`` processes, forked
once the data is loaded, retrieve and score. With one worker everything runs
in this process. Every output is byte-identical for any number of workers.
"""

from __future__ import annotations

import gc
import shutil
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.attribution import attribution_json, summarize
from eval.bootstrap import N_BOOT
from eval.explain import STAGES
from eval.report.html import BrowserBlob, browser_json_bytes, write_html
from eval.report.markdown import ReportInputs, write_report
from eval.report.plots import PARTIAL_PLOTS, SCORE_PLOTS, SCORE_PLOTS_LONGEST_FIRST, import_pyplot_now
from eval.report.reproducibility import reproducibility_report
from retriever import RunOptions, RunSetup, Shard, finish_run, load_config
from tempbench.reproduce.baselines import check_baselines, diff_baselines, diffed_files, merged_diffs
from tempbench.reproduce.inputs import JobInputs, load_inputs
from tempbench.reproduce.tasks import (
    ShardResult,
    audit,
    diff_baseline_file,
    draw_attribution,
    draw_effects,
    draw_scores,
    run_shard,
    score_run,
    scored_from_parts,
)
from tempbench_core.atomic import write_text
from tempbench_core.console import info
from tempbench_core.errors import ConfigError, OutputError
from tempbench_core.memory import gc_paused
from tempbench_core.outputs import DEFAULT_OUT
from tempbench_core.provenance import Provenance, make_provenance
from tempbench_core.runfile import run_records
from tempbench_core.schema import DEFAULT_SPLIT
from tempbench_core.workers import OneAtATime, WorkerPool, can_fork, cpu_count

#: Drawing processes (when there are several workers): the attribution's plot and the score plots are
#: drawn side by side once the runs are scored, the last thing the job waits for.
DRAWERS = 2

#: The name of the job's private folder of shard texts in ``out`` starts so (:func:`text_folder`).
TEXTS_PREFIX = ".shard-texts-"

#: Questions per shard of a run: the retriever's own default (the run files do not depend on it).
SHARD_SIZE = RunOptions().shard_size

__all__ = ["Reproduction", "reproduce", "diff_baselines"]


@dataclass
class Reproduction:
    """What :func:`reproduce` computed (everything is also written under ``out``)."""

    out: Path
    scores: dict[str, dict[str, Any]]
    audit_rows: list[dict[str, Any]]
    diffs: dict[str, dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)


def reproduce(
    data: Any,
    out: str | Path = DEFAULT_OUT,
    split: str = DEFAULT_SPLIT,
    workers: int | None = None,
    n_boot: int = N_BOOT,
    cache_dir: str | Path | None = None,
    description: dict[str, Any] | None = None,
    provenance: Provenance | None = None,
) -> Reproduction:
    """Run, score, audit, diff and report (the module docstring lists what is written).

    Parameters
    ----------
    data:
        The data root's files (:class:`tempbench_core.layout.DataPaths`).
    out:
        The output folder.
    split:
        ``test`` (default), ``dev``, ``train`` or ``all``.
    workers:
        Processes (default: the machine's cores; the outputs do not depend on it).
    n_boot:
        Bootstrap replicates of the intervals (SPEC §3.7).
    cache_dir:
        The index cache (default: the per-user cache).
    description:
        Printed at the top of ``report.md`` (data, split).
    provenance:
        The data's origin and the command line
        (:func:`tempbench_core.provenance.make_provenance`), recorded in every
        output; default: the origin found from ``data``, no command.
    """
    workers = cpu_count() if workers is None else workers
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1 (got {workers})")
    if n_boot < 1:
        raise ConfigError(f"--boot must be >= 1 (got {n_boot})")
    check_baselines(data, split)  # a baseline made for other data is refused before the long work, not diffed after it
    # Millions of small objects live through the whole job (runs, explanations): the cyclic
    # collector would walk them all again and again, and the job makes no cycles worth
    # collecting early. The one library that does (matplotlib, on import) is imported first,
    # in the drawing processes, or here when everything runs here.
    with ExitStack() as stack:
        drawers = min(workers, DRAWERS)
        # with no core to spare beside this process's loading, the drawers import matplotlib one after the
        # other on the core the loading leaves free, rather than both at once beside it
        start = OneAtATime(_drawing_starts) if drawers > 1 and can_fork() and cpu_count() <= drawers else _drawing_starts
        drawer = stack.enter_context(WorkerPool(None, drawers, initializer=start, fork=workers > 1))
        if drawer.in_process:
            import_pyplot_now()
        else:
            drawer.submit(_started)  # forks them now, while this process is small
        stack.enter_context(gc_paused())
        provenance = make_provenance(data) if provenance is None else provenance
        t_start = time.perf_counter()
        inputs = load_inputs(data, split, Path(out), n_boot, cache_dir, provenance)
        timings = {"load": time.perf_counter() - t_start}
        forget_report(inputs.out)
        return _reproduce(inputs, workers, description or {}, _Pools.start(inputs, workers, drawer, stack), timings)


#: The files that present a whole reproduction; written last, so that a folder without them is an unfinished job.
REPORT_FILES = ("report.md", "report.html")


def forget_report(out: Path) -> None:
    """Remove the report of an earlier job in ``out`` before this one writes anything.

    Interrupted, this job leaves some runs and scores of its own beside the
    earlier job's others: without a report the folder says it is unfinished,
    instead of presenting two jobs' files as one.
    """
    for name in REPORT_FILES:
        with suppress(FileNotFoundError):
            (out / name).unlink()


def _drawing_starts() -> None:
    """A drawing process collects cycles (a figure is a web of them) whatever the state it was forked in; pyplot."""
    gc.enable()
    import_pyplot_now()


def _started(_: Any) -> None:
    """A task that does nothing: submitting it starts the drawing processes."""


@dataclass
class _Pools:
    """Where the job's work runs: the retrieving and scoring processes, the drawing processes, and a thread
    of this process that finishes each run (its attribution, its browser rows) while the next goes on."""

    work: WorkerPool[JobInputs]
    drawer: WorkerPool[None]
    finisher: ThreadPoolExecutor
    #: the private folder of the shards' run-file texts (:func:`text_folder`)
    texts: Path

    @classmethod
    def start(cls, inputs: JobInputs, workers: int, drawer: WorkerPool[None], stack: ExitStack) -> _Pools:
        """Fork the workers (with the data loaded) and start the thread; ``stack`` stops them all in every case."""
        # entered before the pool, so removed after its workers have stopped (also on a failure or Ctrl-C)
        texts = stack.enter_context(text_folder(inputs.out))
        pool = stack.enter_context(WorkerPool(inputs, workers))
        finisher = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="tempbench-finish"))
        return cls(pool, drawer, finisher, texts)


@dataclass
class _Runs:
    """Every configuration's run retrieved and written, and what is under way from it."""

    shards: dict[str, list[ShardResult]]
    #: per run, its scores and intervals (tasks.score_run, in a worker)
    scored: dict[str, Future[tuple[dict[str, Any], dict[str, Any]]]]
    #: per run, the summary of its loss attribution (finish_attribution, on the finishing thread)
    finished: dict[str, Future[dict[str, Any]]]
    #: the browser's data, once every run's rows are in
    browser: Future[bytes]
    #: plots drawn while the other runs are still scored (draw_when_scored)
    early: dict[str, Future[Future[dict[str, Path]]]]
    #: the runs' records, when everything runs in this process
    kept: dict[str, Any]
    #: per file of ``DATA/baselines/`` diffed, its diffs (tasks.diff_baseline_file, in a worker)
    diffs: list[Future[dict[str, dict[str, Any]]]]


def _reproduce(inputs: JobInputs, workers: int, description: dict[str, Any], pools: _Pools,
               timings: dict[str, float]) -> Reproduction:
    t0 = time.perf_counter()
    info(f"running {', '.join(inputs.names)} on the {inputs.split} split")
    runs = retrieve_and_submit(inputs, pools, workers)
    timings["runs"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    attribution = {name: runs.finished[name].result() for name in inputs.names}
    attribution_plot = pools.drawer.submit(draw_attribution, inputs.out, attribution)
    results = {name: runs.scored[name].result() for name in inputs.names}
    scores = {name: results[name][0] for name in inputs.names}
    intervals = {name: results[name][1] for name in inputs.names}
    submitted = {plot: pools.drawer.submit(draw_scores, inputs.out, scores, intervals, (plot,))
                 for plot in SCORE_PLOTS_LONGEST_FIRST if plot not in runs.early}
    score_plots = [submitted[plot] for plot in SCORE_PLOTS if plot in submitted]  # the report's order
    anchors = {name: {qid: a for shard in runs.shards[name]
                      for qid, a in zip(shard.stats["ids"], shard.anchors, strict=True)} for name in inputs.names}
    audited = pools.work.submit(audit, scores, runs.kept, anchors)
    timings["runs finished"] = time.perf_counter() - t0
    blob_json = runs.browser.result()
    audit_rows = audited.result()
    pools.work.close()  # the workers' last task is done: they exit (and free their memory) while the report is written
    diffs: dict[str, dict[str, Any]] = {}
    repro = None
    if inputs.data.baselines is not None:
        t0 = time.perf_counter()
        diffs, repro = against_baselines(inputs, runs.diffs, workers, pools.drawer)
        timings["diff and reproducibility"] = time.perf_counter() - t0
    plots = attribution_plot.result()
    for drawing in score_plots:
        plots.update(drawing.result())
    for drawn in runs.early.values():
        plots.update(drawn.result().result())
    t0 = time.perf_counter()
    report = write_report(inputs.out, ReportInputs(scores, audit_rows, diffs, description, attribution, plots, repro,
                                                   inputs.provenance.to_json()))
    write_html(inputs.out, report.read_text(encoding="utf-8"), None, data_json=blob_json)
    timings["report"] = time.perf_counter() - t0
    return Reproduction(inputs.out, scores, audit_rows, diffs, timings)


def retrieve_and_submit(inputs: JobInputs, pools: _Pools, workers: int) -> _Runs:
    """Retrieve every run, write its files, and set its scoring, attribution, browser rows and early plots going."""
    runs = run_configurations(inputs, pools.work, None if pools.work.in_process else pools.texts)
    parts = {name: [shard.table for shard in shards] for name, shards in runs.items()}
    scored: dict[str, Future[tuple[dict[str, Any], dict[str, Any]]]] = {}
    # a run scored from its shards' tables starts in the workers before its run file is written here
    for name, shards in runs.items():
        if scored_from_parts([None if shard.table is None else shard.spaces for shard in shards]):
            scored[name] = pools.work.submit(score_run, name, parts[name])
    write_runs(inputs, runs, workers)
    shutil.rmtree(pools.texts, ignore_errors=True)  # copied into the run files: not kept until the end
    blob = BrowserBlob(inputs.chosen, inputs.names)
    kept: dict[str, Any] = {}
    finished: dict[str, Future[dict[str, Any]]] = {}
    for name, shards in runs.items():
        if pools.work.in_process:
            kept[name] = run_records(inputs.out / "runs" / f"{name}.jsonl",
                                     [r for shard in shards for r in shard.records or ()])
        if name not in scored:
            scored[name] = pools.work.submit(score_run, name, parts[name], kept.get(name))
        finished[name] = pools.finisher.submit(finish_attribution, inputs, name, shards, blob)
    # the diffs against the published baselines, in the workers once they have scored
    diffs = submit_diffs(pools.work, [] if inputs.data.baselines is None else diffed_files(Path(inputs.data.baselines)),
                         kept)
    # the browser's data once every run's rows are in, while the workers still score
    browser = pools.finisher.submit(lambda b: browser_json_bytes(b.finish()), blob)
    # queued on the finishing thread after the attributions and the browser, so that its wait for the scores
    # holds up neither
    early = {plot: pools.finisher.submit(draw_when_scored, pools.drawer, inputs.out, plot, {n: scored[n] for n in needs})
             for plot, needs in PARTIAL_PLOTS.items()
             if not pools.drawer.in_process and all(n in scored for n in needs)}
    return _Runs(runs, scored, finished, browser, early, kept, diffs)


def submit_diffs(pool: WorkerPool[JobInputs], files: list[Path], kept: dict[str, Any]
                 ) -> list[Future[dict[str, dict[str, Any]]]]:
    """Start the diff of each baselines file (tasks.diff_baseline_file); the futures in the order of ``files``.

    The largest files are started first, so that the last task to start is a
    short one and the workers finish together (their diffs' cost grows with
    the files' size).
    """
    largest_first = sorted(range(len(files)), key=lambda i: -files[i].stat().st_size)
    started = {i: pool.submit(diff_baseline_file, files[i], kept) for i in largest_first}
    return [started[i] for i in range(len(files))]


def against_baselines(inputs: JobInputs, diffed: list[Future[dict[str, dict[str, Any]]]], workers: int,
                      drawer: WorkerPool[None]) -> tuple[dict[str, dict[str, Any]], dict[str, Any] | None]:
    """The diffs against ``DATA/baselines/`` (SPEC §6.3), as ``diffed`` gives them, and SPEC §8's measures of its
    per-question runs; their plot drawn by ``drawer`` (matplotlib is imported there, never in this process)."""
    diffs = merged_diffs(pending.result() for pending in diffed)
    # SPEC §8: the published per-question runs of the four configurations against ours
    repro = reproducibility_report(Path(inputs.data.baselines),
                                   {n: inputs.out / "runs" / f"{n}.jsonl" for n in inputs.names},
                                   inputs.questions, inputs.out, inputs.split, workers, inputs.provenance.to_json(),
                                   lambda result, path: drawer.submit(draw_effects, result, path).result())
    return diffs, repro


def run_configurations(inputs: JobInputs, pool: WorkerPool[JobInputs],
                       texts: Path | None = None) -> dict[str, list[ShardResult]]:
    """Retrieve and explain every shard under every configuration (in the workers): each run's shards, in order.

    A shard goes through all the configurations in one task
    (:func:`tasks.run_shard`), so what depends on its questions alone is made
    once. ``texts``: the folder where the tasks leave the shards' run-file texts
    (:func:`text_folder`); else they come with the results.
    """
    bounds = Shard.bounds(len(inputs.chosen), SHARD_SIZE)
    done: list[list[ShardResult] | None] = [None] * len(bounds)
    for i, results in pool.map_unordered(run_shard, [(inputs.names, lo, hi, texts) for lo, hi in bounds]):
        done[i] = results
    return {name: [results[c] for results in done] for c, name in enumerate(inputs.names)}  # type: ignore[index]


@contextmanager
def text_folder(out: Path) -> Iterator[Path]:
    """A private folder in ``out`` for the shards' run-file texts, removed with what it holds in every case.

    Hidden, and its files named ``*.part``: nothing in it looks like a run. An
    ``out`` made here is removed again if the job leaves it empty (a failure).
    """
    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        for stale in out.glob(f"{TEXTS_PREFIX}*"):  # left by a job killed outright (SIGTERM, SIGKILL): no finally ran
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
        folder = Path(tempfile.mkdtemp(prefix=TEXTS_PREFIX, dir=out))
    except OSError as exc:
        raise OutputError(out, exc.strerror or str(exc)) from None
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if made:
            with suppress(OSError):  # not empty: the job wrote its outputs there
                out.rmdir()


def write_runs(inputs: JobInputs, runs: dict[str, list[ShardResult]], workers: int) -> None:
    """Write ``runs/<name>.jsonl`` and its ``.meta.json`` from each run's shards.

    Each run's ``retrieve_s`` is its share of the wall time: the time its
    shards took, summed, over the number of workers.
    """
    for name, shards in runs.items():
        seconds = sum(shard.seconds for shard in shards) / min(workers, len(shards) or 1)
        setup = RunSetup(workers=workers, shard_size=SHARD_SIZE, questions_retrieved=len(inputs.chosen),
                         timings={"retrieve_s": seconds}, provenance=inputs.provenance.to_json())
        finish_run(inputs.out / "runs" / f"{name}.jsonl", load_config(name), inputs.data, inputs.index,
                   inputs.split, [shard.text for shard in shards], [shard.stats for shard in shards], setup)


def draw_when_scored(drawer: WorkerPool[None], out: Path, plot: str,
                     scored: dict[str, Future[tuple[dict[str, Any], dict[str, Any]]]]) -> Future[dict[str, Path]]:
    """Once the runs ``scored`` are, start drawing ``plot`` from their scores alone; the drawing's future.

    Run by the finishing thread: the plot is drawn while the later runs go on,
    not after the last one.
    """
    return drawer.submit(draw_scores, out, {name: future.result()[0] for name, future in scored.items()}, {}, (plot,))


def finish_attribution(inputs: JobInputs, name: str, shards: list[ShardResult], blob: BrowserBlob) -> dict[str, Any]:
    """Write run ``name``'s loss attribution (SPEC §7) and merge its browser rows into ``blob``; its summary."""
    stages: dict[Any, list[str]] = {}
    for shard in shards:
        for question, codes in zip(inputs.chosen[shard.lo:shard.hi], shard.browser["stages"], strict=True):
            stages[question["id"]] = [STAGES[i] for i in codes]
    result = {"questions": stages, "summary": summarize(inputs.chosen, stages, load_config(name))}
    write_text(inputs.out / "explain" / f"{name}.json", attribution_json(result))
    blob.add(name, [shard.browser for shard in shards])
    return result["summary"]

