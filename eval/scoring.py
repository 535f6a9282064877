"""Score a whole run: the SPEC §6.2 object from a run, the benchmark and the flags.

Which questions are scored (SPEC §3.2): the records of the run, in run order;
with ``split`` every benchmark question of that split, in benchmark order, a
question absent from the run counting as an empty retrieval (``missing``). A
run record whose id is not in the benchmark is an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eval.answers import answer_rows as make_answer_rows
from eval.answers import answers_report
from eval.bootstrap import LEVEL, N_BOOT, SEED, RatioMetric, bootstrap_ci, kept_resamples, mean_metric
from eval.evidence import EvidenceTable, TablePart, join_parts, resolve
from eval.key_space_effect import key_space_effect
from eval.keyspace import DEFAULT_KEY
from eval.negatives import negatives_report
from eval.rank import rank_metrics
from eval.ties import tie_report
from eval.trp_ccr import aggregate, coverage_by, rows
from tempbench_core.errors import RunMismatchError
from tempbench_core.memory import gc_paused
from tempbench_core.schema import require_split

BY = ("complexity", "operator")


@dataclass
class Evaluation:
    """Everything per question that the metrics and the bootstrap need.

    ``table``: the run resolved against its questions (SPEC §3.1), from which
    every metric was computed; ``table.question(i)`` is question ``i``'s view.
    """

    questions: list[Mapping[str, Any]]
    table: EvidenceTable
    rows: list[dict[str, Any]]
    missing: int
    outside_split: int
    rank: dict[str, Any]
    ties: dict[str, Any]
    negatives: dict[str, Any]
    flags_found: bool
    answer_rows: list[dict[str, Any]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _where(run: Mapping[Any, Any], qid: Any) -> str:
    """``"path:line: "`` of a run record when the run was read from a file, else ``""``."""
    where = getattr(run, "where", None)
    return f"{where(qid)}: " if callable(where) and getattr(run, "path", None) is not None else ""


def where_in(run: Mapping[Any, Any], chosen: Sequence[Mapping[str, Any]]) -> Callable[[int], str]:
    """``where(i)``: the ``"path:line: "`` prefix of the record of ``chosen[i]`` (:func:`eval.evidence.resolve`)."""
    return lambda i: _where(run, chosen[i]["id"])


def select(
    run: Mapping[Any, Mapping[str, Any]], questions: Sequence[Mapping[str, Any]], split: str | None
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any] | None], int, int]:
    """``(questions, run records or None, missing, outside_split)`` per SPEC §3.2."""
    by_id = {q["id"]: q for q in questions}
    unknown = [qid for qid in run if qid not in by_id]
    if unknown:
        raise RunMismatchError(
            f"{_where(run, unknown[0])}{len(unknown)} run record(s) have ids that are not in the benchmark, e.g. {unknown[0]!r} "
            "(wrong --benchmark or --data?)"
        )
    if split is None:
        chosen = [by_id[qid] for qid in run]
        return chosen, [run[q["id"]] for q in chosen], 0, 0
    chosen = require_split(questions, split)
    records = [run.get(q["id"]) for q in chosen]
    missing = sum(1 for r in records if r is None)
    outside = 0 if split == "all" else sum(1 for qid in run if by_id[qid].get("split") != split)
    return chosen, records, missing, outside


def evaluate(
    run: Mapping[Any, Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    flags: Mapping[Any, Mapping[str, bool]] | None,
    split: str | None = None,
    predictions: Mapping[Any, str] | None = None,
    key: str = DEFAULT_KEY,
    rank_backend: str = "kernel",
    shared: dict[Any, Any] | None = None,
) -> Evaluation:
    """Resolve every scored question once (:func:`eval.evidence.resolve`) and compute all per-question metrics.

    Parameters
    ----------
    run:
        ``{question id: record}`` (:func:`tempbench_core.runfile.read_run`).
    questions:
        The benchmark (:func:`retriever.load_benchmark`).
    flags:
        The functional flags, ``None`` when not found.
    split:
        Which questions are scored (SPEC §3.2): ``None`` for the run's own.
    predictions:
        ``{question id: answer}`` for the answer metrics (SPEC §3.6).
    key:
        SPEC §3.1's key-space option.
    rank_backend:
        ``kernel`` or ``ir_measures`` (:func:`eval.rank.rank_metrics`).
    shared:
        A cache of what depends on the question alone, kept by a caller
        scoring several runs of the same question objects.
    """
    chosen, records, missing, outside = select(run, questions, split)
    evidence = [rec.get("evidence", []) if rec is not None else [] for rec in records]
    ties = [(rec.get("cutoff_ties") or []) if rec is not None else [] for rec in records]
    with gc_paused():
        table = resolve(chosen, evidence, ties, key, where=where_in(run, chosen), shared=shared)
        return evaluate_table(table, questions, flags, missing, outside, predictions, rank_backend)


def evaluate_parts(
    parts: Sequence[TablePart],
    chosen: Sequence[Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    flags: Mapping[Any, Mapping[str, bool]] | None,
    shared: dict[Any, Any] | None = None,
) -> Evaluation:
    """:func:`evaluate` (key ``auto``) of a run resolved in parts where it was made (:func:`eval.evidence.table_part`).

    ``chosen``: the scored questions, the parts' questions in order (every
    one with its record: nothing ``missing``); ``questions``: the whole
    benchmark. The parts must carry their other-space readings
    (:func:`eval.key_space_effect.parts_suffice`).
    """
    with gc_paused():
        table = join_parts(chosen, parts, shared)
        return evaluate_table(table, questions, flags, parts=parts)


def evaluate_table(table: EvidenceTable, questions: Sequence[Mapping[str, Any]],
                   flags: Mapping[Any, Mapping[str, bool]] | None, missing: int = 0, outside: int = 0,
                   predictions: Mapping[Any, str] | None = None, rank_backend: str = "kernel",
                   parts: Sequence[TablePart] | None = None) -> Evaluation:
    """Every metric of a resolved run (the kernels of :mod:`eval.trp_ccr`, :mod:`eval.rank`, :mod:`eval.ties`,
    :mod:`eval.negatives`, :mod:`eval.key_space_effect`)."""
    row_list = rows(table)
    return Evaluation(
        questions=list(table.questions),
        table=table,
        rows=row_list,
        missing=missing,
        outside_split=outside,
        rank=rank_metrics(table, backend=rank_backend),
        ties=tie_report(table),
        negatives=negatives_report(table, flags),
        flags_found=flags is not None,
        answer_rows=_answer_rows(questions, table.questions, predictions),
        extra={"key_space": key_space_effect(table, row_list, parts)},
    )


def _answer_rows(questions: Sequence[Mapping[str, Any]], chosen: Sequence[Mapping[str, Any]],
                 predictions: Mapping[Any, str] | None) -> list[dict[str, Any]] | None:
    if predictions is None:
        return None
    known = {q["id"] for q in questions}
    unknown = [qid for qid in predictions if qid not in known]
    if unknown:
        raise RunMismatchError(f"{len(unknown)} prediction(s) have ids not in the benchmark, e.g. {unknown[0]!r}")
    return make_answer_rows(chosen, predictions)


def headline_metrics(ev: Evaluation, index: np.ndarray | None = None) -> dict[str, Any]:
    """Every headline metric as a :class:`~eval.bootstrap.RatioMetric` (optionally on a subset)."""
    sel = np.arange(len(ev.rows)) if index is None else np.asarray(index, dtype=np.int64)
    n_ret = np.array([r["n_ret"] for r in ev.rows], dtype=np.float64)[sel]
    hits = np.array([r["hits"] for r in ev.rows], dtype=np.float64)[sel]
    trp = np.array([r["trp"] if r["trp"] is not None else np.nan for r in ev.rows], dtype=np.float64)[sel]
    ccr = np.array([r["ccr"] for r in ev.rows], dtype=np.float64)[sel]
    ones = np.ones(len(sel))
    out = {
        "coverage": RatioMetric((n_ret > 0).astype(np.float64), ones),
        "TRP_macro": mean_metric(trp, empty=0.0),
        "TRP_micro": RatioMetric(hits, n_ret, 0.0),
        "CCR": RatioMetric(ccr, ones),
    }
    for name, values in ev.rank["per_question"].items():
        out[name] = mean_metric(values[sel])
    if ev.flags_found:
        for name, vals in ev.negatives["indicators"].items():
            arr = np.array([np.nan if v is None else v for v in vals], dtype=np.float64)
            out[name] = mean_metric(arr[sel] if len(arr) else arr)
    if ev.answer_rows is not None:
        em = np.array([r["em"] for r in ev.answer_rows], dtype=np.float64)[sel]
        f1 = np.array([r["f1"] for r in ev.answer_rows], dtype=np.float64)[sel]
        no_iv = np.array([r["operator"] != "interval" for r in ev.answer_rows], dtype=bool)[sel]
        out["EM"] = mean_metric(em)
        out["EM_without_interval"] = mean_metric(np.where(no_iv, em, np.nan))
        out["F1"] = mean_metric(f1)
    return out


def to_json(
    ev: Evaluation, n_boot: int = N_BOOT, seed: int = SEED, t_query_exposed: bool = True, by: Sequence[str] = BY,
    memo: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """The SPEC §6.2 object.

    ``memo``: a cache of the bootstrap's replicates (:func:`eval.bootstrap.kept_resamples`), kept by a
    caller that scores several runs of the same questions (the intervals are the same with or without).
    """
    out: dict[str, Any] = {
        "trp_ccr": aggregate(ev.rows, by=by),
        "coverage": coverage_by(ev.rows, by=by),
    }
    if ev.flags_found:
        out["negatives"] = ev.negatives["rates"]
    else:
        out["negatives"] = {
            "flags_found": False,
            "message": "functional flags not found (give --flags, or put functional_negatives.jsonl beside the benchmark)",
        }
    out["rank"] = dict(ev.rank["macro"])
    out["ties"] = ev.ties["summary"]
    headline = headline_metrics(ev)
    out["ci"] = bootstrap_ci(headline, n_boot=n_boot, seed=seed,
                             resamples=kept_resamples(memo, len(next(iter(headline.values())).num), n_boot, seed))
    if ev.answer_rows is not None:
        out["answers"] = answers_report(ev.answer_rows, t_query_exposed=t_query_exposed)
    out["missing"] = ev.missing
    out["counts"] = {
        "n_questions": len(ev.rows),
        "missing": ev.missing,
        "run_records_outside_split": ev.outside_split,
        "rank_evaluated": ev.rank["n_evaluated"],
        "rank_empty_rel": ev.rank["n_empty_rel"],
        "negatives": ev.negatives["counts"],
        "bootstrap": {"n_boot": n_boot, "seed": seed, "level": LEVEL},
        "key_space": ev.extra.get("key_space"),
    }
    return out


@dataclass(frozen=True)
class ScoreOptions:
    """How :func:`score_run` scores a run; the defaults are SPEC's.

    Parameters
    ----------
    split:
        Which questions are scored (SPEC §3.2): ``None`` for the run's own.
    key:
        SPEC §3.1's key-space option.
    n_boot, seed:
        The bootstrap's replicates and seed (SPEC §3.7).
    t_query_exposed:
        Whether the protocol showed ``t_query`` to the generator: the answer
        metrics then flag the interval slice as leak-contaminated (SPEC §3.6).
    """

    split: str | None = None
    key: str = DEFAULT_KEY
    n_boot: int = N_BOOT
    seed: int = SEED
    t_query_exposed: bool = True


def score_run(
    run: dict[Any, dict[str, Any]],
    questions: list[dict[str, Any]],
    flags: dict[Any, dict[str, bool]] | None,
    predictions: dict[Any, str] | None = None,
    options: ScoreOptions = ScoreOptions(),
) -> dict[str, Any]:
    """Score a run (``{id: record}``) against benchmark ``questions``: the SPEC §6.2 object.

    Keys: ``trp_ccr`` (exactly the published aggregate), ``coverage``,
    ``negatives`` (name -> ``{rate, n}``), ``rank`` (macro values), ``ties``
    (name -> ``{observed, expected, min, max, bias}``), ``ci`` (name -> ``[low,
    high]``), ``answers`` when ``predictions`` are given, then ``missing`` and
    ``counts``.
    """
    ev = evaluate(run, questions, flags, split=options.split, predictions=predictions, key=options.key)
    return to_json(ev, n_boot=options.n_boot, seed=options.seed, t_query_exposed=options.t_query_exposed)


def score_parts(
    parts: Sequence[TablePart],
    chosen: Sequence[Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    flags: Mapping[Any, Mapping[str, bool]] | None,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    shared: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """:func:`score_run` of a run from its parts (:func:`evaluate_parts`): the same SPEC §6.2 object."""
    return to_json(evaluate_parts(parts, chosen, questions, flags, shared=shared), n_boot=n_boot, seed=seed)
