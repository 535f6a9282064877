"""The reproduction job's units of work: plain functions of the job's inputs, data in and data out.

Each runs in a worker process (:class:`tempbench_core.workers.WorkerPool`) or
in the job's own process, with the same result; none writes anything but its
own output file.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.audit.context import AuditContext
from eval.audit.run import audit_document, run_audit
from eval.evidence import TablePart, table_of, table_part
from eval.key_space_effect import PartSpaces, part_other_space, parts_suffice
from eval.per_question import slice_intervals
from eval.report.browser import PartSpan, SharedStrings, browser_part
from eval.report.plots import SCORE_PLOTS, plot_effects, write_plots
from eval.scoring import evaluate, evaluate_parts, to_json
from retriever import retrieve_shard
from tempbench.reproduce.baselines import diff_file, runs_on_disk
from tempbench.reproduce.inputs import JobInputs
from tempbench_core.atomic import write_json
from tempbench_core.errors import OutputError
from tempbench_core.runfile import read_written_run
from tempbench_core.workers import Packed


@dataclass
class ShardResult:
    """What one shard of a configuration's run gives the job.

    ``text`` and ``stats``: the run file's lines (or the part file holding them, when the task was given a
    folder for them) and counts (:class:`retriever.Shard`);
    ``browser``: the shard's part of the question browser, loss attribution
    included; ``table``: its resolved evidence for the scorer (:class:`~tempbench_core.workers.Packed` by the worker
    that made it: the job passes the same bytes on to the scorer instead of pickling the part again); ``anchors``: each
    record's ``anchor.id`` (what the audit's anchor recall reads of the run);
    ``records``: the records themselves, only when the task ran in the job's own
    process; ``seconds``: how long the shard took under this configuration; ``spaces``: what
    :func:`scored_from_parts` reads of ``table``, so that the job decides without unpacking it.
    """

    lo: int
    hi: int
    text: bytes | Path
    stats: dict[str, Any]
    browser: dict[str, Any]
    table: TablePart | Packed[TablePart] | None
    anchors: list[Any]
    records: list[dict[str, Any]] | None = None
    seconds: float = 0.0
    spaces: PartSpaces | None = None


def run_shard(inputs: JobInputs, names: Sequence[str], lo: int, hi: int,
              texts: Path | None = None) -> list[ShardResult]:
    """Questions ``lo`` to ``hi`` of the split retrieved and explained under each configuration of ``names``.

    One task takes a shard through every configuration so that what depends on
    the question alone (``inputs.shared``: its parsed gold, negatives, valid
    rows, counterfactual reaches) is made once in one process, not once per
    process that happens to meet the question, and a configuration that finds
    an earlier one's anchor takes its pool and ranking; their browser parts
    share one string table (mostly the same evidence lines).

    ``texts``: a folder where each configuration's run-file text is left as a
    part file (its result names the file): from a worker, the megabytes of a
    run go through the disk's cache once rather than be pickled, piped and
    unpickled.
    """
    retrieved: dict[Any, Any] = {}  # the shard's pools and rankings, for the configurations that agree on them
    strings = SharedStrings(lo)
    return [_run_configuration_shard(inputs, name, lo, hi, retrieved, strings,
                                     None if texts is None else texts / f"{lo}.{c}.part")
            for c, name in enumerate(names)]


def _text_part(path: Path, text: bytes, run: Path) -> Path:
    """``text`` written to ``path`` (a scratch file of the job); a failure names the run file it is for."""
    try:
        path.write_bytes(text)
    except OSError as exc:
        raise OutputError(run, exc.strerror or str(exc)) from None
    return path


def _run_configuration_shard(inputs: JobInputs, name: str, lo: int, hi: int, retrieved: dict[Any, Any],
                             strings: SharedStrings, text_file: Path | None) -> ShardResult:
    """One configuration's part of :func:`run_shard` (SPEC §2, §7); its run-file text left in ``text_file`` if given.

    The pools are at hand here, so the loss attribution reads them instead of
    expanding them again, and the scorer's resolution of the evidence is the
    attribution's.
    """
    t0 = time.perf_counter()
    explainer = inputs.explainer(name)
    shard = retrieve_shard(explainer.retriever, inputs.chosen, lo, hi, keep_pools=True, shared=retrieved)
    in_worker = multiprocessing.parent_process() is not None
    # each question is explained once: nothing of an earlier shard is needed again
    explained = explainer.forget(keep=in_worker)
    explainer.pools = {record["id"]: pool for record, pool in zip(shard.records, shard.pools, strict=True)}
    questions = inputs.chosen[lo:hi]
    explainer.prepare(list(zip(questions, shard.records, strict=True)))
    run = {record["id"]: record for record in shard.records}
    part = browser_part(inputs.chosen, name, run, explainer, inputs.rows_from[name],
                        span=PartSpan(range(lo, hi), inputs.shared, strings))
    reads = [explainer.explain(q, record).read for q, record in zip(questions, shard.records, strict=True)]
    table = table_of(questions, reads, "auto", [record.get("evidence") for record in shard.records], inputs.shared)
    if in_worker:
        inputs.keep((explained, shard))  # freed with the process, not object by object
    anchors = [record["anchor"]["id"] for record in shard.records]
    text = shard.text if text_file is None else _text_part(text_file, shard.text, inputs.out / "runs" / f"{name}.jsonl")
    table_part = make_part(table)
    return ShardResult(lo, hi, text, shard.stats, part, Packed(table_part) if in_worker else table_part, anchors,
                       None if in_worker else shard.records, time.perf_counter() - t0,
                       None if table_part is None else PartSpaces.of(table_part))


def make_part(table: Any) -> TablePart:
    """The scorer's part of a shard: the table's arrays and its reading in the other key space."""
    return table_part(table, part_other_space(table))


def unpacked(part: TablePart | PartSpaces | Packed[TablePart] | None) -> TablePart | PartSpaces | None:
    """A shard's table part, unpacked if it came :class:`~tempbench_core.workers.Packed`."""
    return part.unpack() if isinstance(part, Packed) else part


def scored_from_parts(parts: Sequence[TablePart | PartSpaces | Packed[TablePart] | None]) -> bool:
    """Whether :func:`score_run` scores from the shards' table parts alone (else it reads the run's records).

    A part may be given by its :class:`~eval.key_space_effect.PartSpaces`, all this reads of it.
    """
    parts = [unpacked(part) for part in parts]
    return bool(parts) and all(part is not None for part in parts) and parts_suffice(parts)  # type: ignore[arg-type]


def score_run(inputs: JobInputs, name: str, parts: Sequence[TablePart | Packed[TablePart] | None],
              records: Mapping[Any, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Score run ``name`` (SPEC §6.2) and write ``scores/<name>.json``; also its per-slice intervals.

    From the shards' table parts when they carry all it needs; else from the
    run's records (``records``, or its file).
    """
    parts = [unpacked(part) for part in parts]
    if scored_from_parts(parts):
        ev = evaluate_parts(parts, inputs.chosen, inputs.questions, inputs.flags,  # type: ignore[arg-type]
                            shared=inputs.shared)
    else:
        run = records if records is not None else read_written_run(inputs.out / "runs" / f"{name}.jsonl")
        ev = evaluate(run, inputs.questions, inputs.flags, split=inputs.scored_split)
    score = to_json(ev, n_boot=inputs.n_boot, memo=inputs.boot_resamples)
    write_json(inputs.out / "scores" / f"{name}.json", {**score, "provenance": inputs.provenance.to_json()})
    return score, slice_intervals(ev, n_boot=inputs.n_boot, memo=inputs.boot_resamples)


def audit(inputs: JobInputs, scores: Mapping[str, Any], runs: Mapping[str, Any],
          anchors: Mapping[str, Mapping[Any, Any]]) -> list[dict[str, Any]]:
    """Recompute the card's claims (SPEC §4) and write ``audit.json``.

    ``runs``: the runs kept in memory; ``anchors``: each run's anchor ids by question (read instead of the run file).
    """
    out = inputs.out
    ctx = AuditContext(inputs.data, runs_dir=out / "runs", split=inputs.split, cache_dir=inputs.cache_dir,
                       scores=scores, index=inputs.index, memo=inputs.shared, provenance=inputs.provenance)
    ctx.questions = inputs.questions  # already loaded; the audit reuses them
    for name, run in runs.items():
        ctx.offer_run(name, out / "runs" / f"{name}.jsonl", run)
    for name, by_question in anchors.items():
        ctx.offer_anchors(name, out / "runs" / f"{name}.jsonl", by_question)
    rows = run_audit(ctx)
    write_json(out / "audit.json", audit_document(ctx, rows))
    return rows


def diff_baseline_file(inputs: JobInputs, path: Path, kept: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """One file of ``DATA/baselines/`` diffed against the job's run of its configuration (SPEC §6.3).

    ``kept``: the runs kept in memory; the others are read from ``runs/``
    (:func:`tempbench.reproduce.baselines.diff_file`).
    """
    runs = runs_on_disk(inputs.out / "runs", inputs.names, kept)
    return diff_file(path, Path(inputs.data.baselines), runs, inputs.questions, inputs.flags, inputs.out)


def draw_attribution(_: Any, out: Path, attribution: Mapping[str, Any]) -> dict[str, Path]:
    """The stacked bars of the loss attribution (SPEC §7)."""
    return write_plots({}, out / "plots", attribution=attribution, only=("attribution",))


def draw_scores(_: Any, out: Path, scores: Mapping[str, Any], intervals: Mapping[str, Any],
                only: Sequence[str] = SCORE_PLOTS) -> dict[str, Path]:
    """The score plots (by slice, filtered vs stale-blind, ties), or ``only`` these."""
    return write_plots(scores, out / "plots", only=only, intervals=intervals)


def draw_effects(_: Any, result: Mapping[str, Any], path: Path) -> bool:
    """The plot of ER against ΔRI of SPEC §8's measures (:func:`eval.report.plots.plot_effects`)."""
    return plot_effects(result, path)
