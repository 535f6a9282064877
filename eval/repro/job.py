"""From paired runs to the SPEC §8 object: choose the questions, score each run once, compare.

The scoring is the project's: each run is resolved once into its evidence
table (:func:`eval.evidence.resolve`) and read by the scoring kernels
(:mod:`eval.repro.values`) and the TREC export's rules
(:func:`eval.trec.run_documents`); this module decides which questions every
run is scored on and hands the results to :func:`eval.repro.compare.compare_runs`.

Questions (SPEC §8): with ``split`` every benchmark question of the split,
else every question present in any of the runs, in benchmark order; a question
absent from a run is an empty retrieval. Each run is scored on its own records
(or on the split); the values of the questions it lacks are those the scorer
gives an empty retrieval (one :func:`~eval.scoring.evaluate` of empty records).

Speed: the runs are read and scored in ``workers`` processes
(:class:`tempbench_core.workers.WorkerPool`; each sends back only its
per-question values and document ids). The result does not depend on the
number of workers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eval.evidence import resolve
from eval.measures import Measure
from eval.repro.compare import ScoredRun, compare_runs
from eval.repro.doclists import encode, one_space, run_space
from eval.repro.options import ReproOptions
from eval.repro.values import RunValues, run_values
from eval.scoring import select, where_in
from eval.trec import run_documents
from tempbench_core.errors import RunMismatchError, TempbenchError
from tempbench_core.runfile import read_run
from tempbench_core.workers import WorkerPool


@dataclass
class Prepared:
    """One run scored on its own questions: ids, per-question values, document ids and their space."""

    qids: list[Any]
    values: RunValues
    docids: list[list[str]]
    space: str | None


def prepare(run: Mapping[Any, Mapping[str, Any]], questions: Sequence[Mapping[str, Any]],
            measures: Sequence[Measure], split: str | None, key: str, trp_empty: str, ties: bool = True,
            shared: dict[Any, Any] | None = None) -> Prepared:
    """Resolve one run (on its records or the split) once, and read its values and documents from the table.

    ``shared``: what depends on the questions alone (their parsed gold), kept across the runs of one process.
    """
    chosen, records, _, _ = select(run, questions, split)
    evidence = [rec.get("evidence", []) if rec is not None else [] for rec in records]
    cutoff = [(rec.get("cutoff_ties") or []) if rec is not None else [] for rec in records]
    table = resolve(chosen, evidence, cutoff, key, where=where_in(run, chosen), shared=shared)
    space = run_space(table, key)
    return Prepared([q["id"] for q in chosen], run_values(table, measures, trp_empty, ties), run_documents(table,
                    space or "id"), space)


def question_ids(prepared: Sequence[Prepared], questions: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Every question of any run, in benchmark order."""
    present: set[Any] = set()
    for p in prepared:
        present.update(p.qids)
    return [q["id"] for q in questions if q["id"] in present]


def spread(p: Prepared, qids: Sequence[Any], empty: Prepared) -> tuple[RunValues, list[list[str]]]:
    """``p``'s values and documents over ``qids``; a question it lacks takes ``empty``'s (an empty retrieval)."""
    if p.qids == list(qids):
        return p.values, p.docids
    at = {qid: i for i, qid in enumerate(p.qids)}
    blank = {qid: i for i, qid in enumerate(empty.qids)}
    mine = np.array([at.get(qid, -1) for qid in qids], dtype=np.int64)
    theirs = np.array([blank.get(qid, -1) for qid in qids], dtype=np.int64)
    has = mine >= 0

    def pick(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty(len(qids))
        out[has] = a[mine[has]]
        out[~has] = b[theirs[~has]]
        return out

    values = RunValues({n: pick(v, empty.values.values[n]) for n, v in p.values.values.items()},
                       {n: pick(v, empty.values.tie_min[n]) for n, v in p.values.tie_min.items()},
                       {n: pick(v, empty.values.tie_max[n]) for n, v in p.values.tie_max.items()})
    docs = [p.docids[i] if i >= 0 else [] for i in mine.tolist()]
    return values, docs


@dataclass
class _Job:
    """What every run's preparation reads (inherited by the workers)."""

    runs: Mapping[tuple[str, str], Any]
    questions: Sequence[Mapping[str, Any]]
    measures: list[Measure]
    split: str | None
    key: str
    trp_empty: str
    #: the questions' parsed gold, filled by the runs a process prepares (each worker its own copy)
    shared: dict[Any, Any] = field(default_factory=dict)


@dataclass
class _Failed:
    """A user error of a worker, sent back as text (error classes with their own ``__init__`` do not unpickle)."""

    message: str


def _prepare_task(job: _Job, slot: tuple[str, str]) -> Prepared | _Failed:
    """Read (when given as a path) and prepare one run: in a worker, or in this process."""
    try:
        run = job.runs[slot]
        if isinstance(run, (str, Path)):
            run = read_run(run)
        # only a reproduction's tie ranges are read (is the original's mean within them?)
        return prepare(run, job.questions, job.measures, job.split, job.key, job.trp_empty,
                       ties=slot[0] == "reproduced", shared=job.shared)
    except TempbenchError as exc:
        return _Failed(str(exc))


def _prepare_all(job: _Job, slots: list[tuple[str, str]], workers: int) -> list[Prepared]:
    with WorkerPool(job, min(workers, len(slots))) as pool:
        done = [pool.submit(_prepare_task, slot) for slot in slots]
        results = [future.result() for future in done]
    for result in results:
        if isinstance(result, _Failed):
            raise TempbenchError(result.message)
    return results  # type: ignore[return-value]


def reproducibility(original: Mapping[str, Any], reproduced: Mapping[str, Any],
                    questions: Sequence[Mapping[str, Any]], measures: Sequence[tuple[str, Measure]],
                    baseline: str = "oracle", options: ReproOptions | None = None, split: str | None = None,
                    key: str = "auto", workers: int = 1, extras: dict[str, Any] | None = None) -> dict[str, Any]:
    """The SPEC §8 object of the configurations both sides hold (:func:`eval.repro.compare.compare_runs`).

    Parameters
    ----------
    original, reproduced:
        Configuration name -> run: a path (read with
        :func:`~tempbench_core.runfile.read_run`, in the worker) or
        ``{question id: record}`` as ``read_run`` returns it.
    questions:
        The benchmark (SPEC §1.3), ids merged.
    measures:
        ``[(name as given, measure)]`` (:func:`eval.repro.values.parse_measures`).
    baseline, options, split, key:
        SPEC §8's baseline configuration, the measures' options, the split
        (``None``: the questions of the runs) and the SPEC §3.1 key space.
    workers:
        Processes that read and score the runs.
    extras:
        Filled as :func:`~eval.repro.compare.compare_runs` fills it, plus
        ``paired`` (the configurations compared).
    """
    options = options or ReproOptions()
    names = [n for n in original if n in reproduced]
    if extras is not None:
        extras["paired"] = list(names)
    if baseline not in names:
        side = "original" if baseline not in original else "reproduced"
        raise RunMismatchError(f"the baseline configuration {baseline!r} has no {side} run (expected "
                               f"{baseline}.jsonl on both sides, or --baseline NAME of a configuration both hold: "
                               f"{', '.join(names) or 'none'})")
    slots = [(side, name) for side in ("original", "reproduced") for name in names]
    runs = {("original", n): original[n] for n in names} | {("reproduced", n): reproduced[n] for n in names}
    job = _Job(runs, questions, [m for _, m in measures], split, key, options.trp_empty)
    prepared = dict(zip(slots, _prepare_all(job, slots, workers), strict=True))
    if split is None:
        qids = question_ids(list(prepared.values()), questions)
        empty_run = {qid: {"id": qid, "evidence": [], "cutoff_ties": []} for qid in qids}
        empty = prepare(empty_run, questions, job.measures, None, key, options.trp_empty)
    else:
        qids = next(iter(prepared.values())).qids
        empty = prepared[slots[0]]
    one_space({f"{side} {name}": p.space for (side, name), p in prepared.items()})
    spread_runs = {slot: spread(p, qids, empty) for slot, p in prepared.items()}
    docs = encode([spread_runs[slot][1] for slot in slots])
    scored = {slot: ScoredRun(spread_runs[slot][0], d) for slot, d in zip(slots, docs, strict=True)}
    return compare_runs({n: scored[("original", n)] for n in names}, {n: scored[("reproduced", n)] for n in names},
                        measures, baseline, len(qids), options, extras)
