"""From paired runs to the SPEC §8 object: choose the questions, score each run once, compare.

The scoring is the project's: each run's records are resolved once into an
evidence table (:func:`eval.evidence.resolve`, or for the records of
:mod:`eval.repro.distinct` the same table made column-wise) and read by the
scoring kernels (:mod:`eval.repro.values`) and the TREC export's rules
(:func:`eval.trec.run_documents`); this module decides which questions every
run is scored on and hands the results to :func:`eval.repro.compare.compare_runs`.

Questions (SPEC §8): with ``split`` every benchmark question of the split,
else every question present in any of the runs, in benchmark order; a question
absent from a run is an empty retrieval. Each run is scored on its own records
(or on the split); the values of the questions it lacks are those the scorer
gives an empty retrieval (one :func:`~eval.scoring.evaluate` of empty records).

Speed: the two runs of a configuration are read, resolved and scored together,
each distinct record once (:mod:`eval.repro.distinct`; a run it does not cover
is prepared on its own, :func:`prepare`), the configurations spread over
``workers`` processes (:class:`tempbench_core.workers.WorkerPool`; each sends
back only its runs' per-question values and document codes). The result does
not depend on the number of workers.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eval.evidence import resolve
from eval.keyspace import DEFAULT_KEY
from eval.measures import Measure
from eval.repro.compare import OrderFigures, ScoredRun, compare_runs, order_figures
from eval.repro.distinct import Reader, file_sources, group_codes, mapping_source, score_group, values_of
from eval.repro.doclists import DocLists, one_space, run_space
from eval.repro.options import DEFAULT_BASELINE, ReproOptions
from eval.repro.ttest import load_distribution
from eval.repro.values import RunValues, run_values
from eval.scoring import select, where_in
from eval.trec import run_documents
from tempbench_core.errors import RunMismatchError, TempbenchError
from tempbench_core.memory import gc_paused
from tempbench_core.runfile import read_run
from tempbench_core.schema import select_split
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


@dataclass
class Coded:
    """One run ready to spread: :class:`Prepared` with its documents coded among its configuration's runs."""

    qids: list[Any]
    values: RunValues
    docs: DocLists
    space: str | None
    #: of a reproduction: KTU and RBO against its original over these same questions, made with the runs
    orders: OrderFigures | None = None


def question_ids(prepared: Sequence[Coded], questions: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Every question of any run, in benchmark order."""
    present: set[Any] = set()
    for p in prepared:
        present.update(p.qids)
    return [q["id"] for q in questions if q["id"] in present]


def spread(p: Coded, qids: Sequence[Any], empty: Callable[[], Prepared]) -> tuple[RunValues, DocLists]:
    """``p``'s values and documents over ``qids``; a question it lacks takes ``empty()``'s values (an empty retrieval)."""
    if p.qids == list(qids):
        return p.values, p.docs
    blank_run = empty()
    at = {qid: i for i, qid in enumerate(p.qids)}
    blank = {qid: i for i, qid in enumerate(blank_run.qids)}
    mine = np.array([at.get(qid, -1) for qid in qids], dtype=np.int64)
    theirs = np.array([blank.get(qid, -1) for qid in qids], dtype=np.int64)
    has = mine >= 0

    def pick(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty(len(qids))
        out[has] = a[mine[has]]
        out[~has] = b[theirs[~has]]
        return out

    empty_values = blank_run.values
    values = RunValues({n: pick(v, empty_values.values[n]) for n, v in p.values.values.items()},
                       {n: pick(v, empty_values.tie_min[n]) for n, v in p.values.tie_min.items()},
                       {n: pick(v, empty_values.tie_max[n]) for n, v in p.values.tie_max.items()})
    codes = np.full((len(qids), p.docs.codes.shape[1]), -1, dtype=np.int64)
    codes[has] = p.docs.codes[mine[has]]
    lengths = np.zeros(len(qids), dtype=np.int64)
    lengths[has] = p.docs.lengths[mine[has]]
    return values, DocLists(codes, lengths)


@dataclass
class _Job:
    """What every run's preparation reads (inherited by the workers)."""

    runs: Mapping[tuple[str, str], Any]
    questions: Sequence[Mapping[str, Any]]
    measures: list[Measure]
    split: str | None
    key: str
    trp_empty: str
    #: the figures' options (KTU and RBO are computed with the runs when given)
    options: ReproOptions | None = None
    #: the questions' parsed gold, filled by the runs a process prepares (each worker its own copy)
    shared: dict[Any, Any] = field(default_factory=dict)
    #: in a worker, what its finished tasks made (:meth:`keep`)
    kept: list[Any] = field(default_factory=list)

    def keep(self, leftovers: Any) -> None:
        """Keep a finished task's leftovers until the process ends, in a worker only.

        A group leaves millions of objects (its rows, their items); a worker
        ends with ``os._exit`` and never frees them one by one, whereas
        letting them die with the task would. The calling process frees them
        as usual.
        """
        if multiprocessing.parent_process() is not None:
            self.kept.append(leftovers)


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


def _group_task(job: _Job, slots: list[tuple[str, str]]) -> list[Coded | _Failed]:
    """Prepare the runs of one configuration together (:mod:`eval.repro.distinct`), the others on their own."""
    with gc_paused():  # millions of objects stay alive while the rows are made: no collection walks them again and again
        return _prepare_group(job, slots)


def _prepare_group(job: _Job, slots: list[tuple[str, str]]) -> list[Coded | _Failed]:
    reader = Reader(job.questions, job.key, job.shared)
    files = [slot for slot in slots if isinstance(job.runs[slot], (str, Path))]
    read = dict(zip(files, file_sources([job.runs[slot] for slot in files], reader), strict=True))
    sources = {}
    for slot in slots:
        source = read[slot] if slot in read else mapping_source(job.runs[slot], reader)
        if source is not None:
            sources[slot] = source
    split_questions = select_split(job.questions, job.split) if job.split is not None else None
    group = None
    if sources and (split_questions is None or split_questions):
        group = score_group(sources, split_questions, reader,
                            lambda table, tie_rows: run_values(table, job.measures, job.trp_empty,
                                                               tie_rows is not None, tie_rows),
                            lambda slot: slot[0] == "reproduced")
    done = group.chosen if group is not None else {}
    alone = {slot: _prepare_task(job, slot) for slot in slots if slot not in done}
    codes = group_codes(group.docs if group is not None else None, {s: c.rows for s, c in done.items()},
                        {s: p.docids for s, p in alone.items() if isinstance(p, Prepared)})
    out: list[Coded | _Failed] = []
    for slot in slots:
        if slot in done:
            c = done[slot]
            out.append(Coded(c.qids, values_of(group.values, c.rows, c.reproduced), codes[slot],  # type: ignore[union-attr]
                             group.spaces[slot]))  # type: ignore[union-attr]
        else:
            p = alone[slot]
            out.append(p if isinstance(p, _Failed) else Coded(p.qids, p.values, codes[slot], p.space))
    orig, rep = out
    if job.options is not None and isinstance(orig, Coded) and isinstance(rep, Coded) and orig.qids == rep.qids:
        rep.orders = order_figures(orig.docs, rep.docs, job.options)
    job.keep((reader, sources, group, alone))
    return out


def _size(run: Any) -> int:
    return Path(run).stat().st_size if isinstance(run, (str, Path)) and Path(run).is_file() else 0


def _prepare_all(job: _Job, names: list[str], workers: int) -> dict[tuple[str, str], Coded]:
    """Every run prepared, one task per configuration, the largest first (the processes finish together)."""
    groups = [[("original", n), ("reproduced", n)] for n in names]
    groups.sort(key=lambda g: -sum(_size(job.runs[slot]) for slot in g))
    # forked with the collector paused, the workers never walk what they keep alive (the questions' parsed gold):
    # a first collection after a task would visit it all once more
    with gc_paused(), WorkerPool(job, min(workers, len(groups))) as pool:
        done = [pool.submit(_group_task, group) for group in groups]
        load_distribution()  # the comparison's slow import, made while the workers read the runs
        results = {slot: r for group, future in zip(groups, done, strict=True)
                   for slot, r in zip(group, future.result(), strict=True)}
    slots = [(side, name) for side in ("original", "reproduced") for name in names]
    for slot in slots:
        if isinstance(results[slot], _Failed):
            raise TempbenchError(results[slot].message)  # type: ignore[union-attr]
    return {slot: results[slot] for slot in slots}  # type: ignore[misc]


@dataclass(frozen=True)
class Scope:
    """What is compared: SPEC §8's baseline configuration, the split (``None``: the runs' questions), the key space."""

    baseline: str = DEFAULT_BASELINE
    split: str | None = None
    key: str = DEFAULT_KEY


def reproducibility(original: Mapping[str, Any], reproduced: Mapping[str, Any],
                    questions: Sequence[Mapping[str, Any]], measures: Sequence[tuple[str, Measure]],
                    scope: Scope = Scope(), options: ReproOptions | None = None, workers: int = 1,
                    extras: dict[str, Any] | None = None) -> dict[str, Any]:
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
    scope:
        SPEC §8's baseline configuration, the split (``None``: the questions
        of the runs) and the SPEC §3.1 key space (:class:`Scope`).
    options:
        The measures' options (default :class:`~eval.repro.options.ReproOptions`).
    workers:
        Processes that read and score the runs.
    extras:
        Filled as :func:`~eval.repro.compare.compare_runs` fills it, plus
        ``paired`` (the configurations compared).
    """
    options = options or ReproOptions()
    baseline, split, key = scope.baseline, scope.split, scope.key
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
    job = _Job(runs, questions, [m for _, m in measures], split, key, options.trp_empty, options)
    prepared = _prepare_all(job, names, workers)
    made: list[Prepared] = []

    def empty() -> Prepared:
        # an empty retrieval of every compared question, made only when a run lacks some
        if not made:
            if split is None:
                empty_run = {qid: {"id": qid, "evidence": [], "cutoff_ties": []} for qid in qids}
                made.append(prepare(empty_run, questions, job.measures, None, key, options.trp_empty))
            else:
                first = prepared[slots[0]]
                made.append(Prepared(first.qids, first.values, [], first.space))
        return made[0]

    if split is None:
        qids = question_ids(list(prepared.values()), questions)
    else:
        qids = next(iter(prepared.values())).qids
    one_space({f"{side} {name}": p.space for (side, name), p in prepared.items()})
    spread_runs = {slot: spread(p, qids, empty) for slot, p in prepared.items()}
    scored = {slot: ScoredRun(*spread_runs[slot]) for slot in slots}
    # made with the runs, over the very documents compared (both runs over every compared question, in order)
    orders = {n: prepared[("reproduced", n)].orders for n in names if prepared[("reproduced", n)].orders is not None
              and prepared[("reproduced", n)].qids == list(qids)}
    return compare_runs({n: scored[("original", n)] for n in names}, {n: scored[("reproduced", n)] for n in names},
                        measures, baseline, len(qids), options, extras, orders)  # type: ignore[arg-type]
