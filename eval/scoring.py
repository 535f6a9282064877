"""Score a whole run: the SPEC §6.2 object from a run, the benchmark and the flags.

Which questions are scored (SPEC §3.2): the records of the run, in run order;
with ``split`` every benchmark question of that split, in benchmark order, a
question absent from the run counting as an empty retrieval (``missing``). A
run record whose id is not in the benchmark is an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eval import columnar
from eval.answers import answer_rows as make_answer_rows
from eval.answers import answers_report
from eval.bootstrap import RatioMetric, bootstrap_ci, mean_metric
from eval.keyspace import Resolved, resolve_question
from eval.negatives import negatives_report
from eval.rank import rank_metrics
from eval.ties import tie_report
from eval.trp_ccr import aggregate, coverage_by, row_from_resolved
from tempbench_core.errors import EvidenceError, RunMismatchError
from tempbench_core.memory import gc_paused
from tempbench_core.schema import select_split

BY = ("complexity", "operator")


@dataclass
class Evaluation:
    """Everything per question that the metrics and the bootstrap need."""

    questions: list[Mapping[str, Any]]
    resolved: list[Resolved]
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
    chosen = select_split(questions, split)
    if not chosen:
        splits = sorted({str(q.get("split")) for q in questions})
        raise RunMismatchError(f"no benchmark question has split {split!r} (splits: {', '.join(splits)})")
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
    key: str = "auto",
    rank_backend: str = "kernel",
) -> Evaluation:
    """Resolve every scored question once and compute all per-question metrics.

    The run is resolved into columns (:mod:`eval.columnar`) and every metric is
    computed over all questions at once; :func:`evaluate_reference` computes
    the same :class:`Evaluation` question by question (the test suite checks
    they agree). ``ev.resolved`` gives a question's
    :class:`~eval.keyspace.Resolved` (:func:`eval.keyspace.resolve_question`'s
    values) when it is read.
    """
    chosen, records, missing, outside = select(run, questions, split)
    evidence = [rec.get("evidence", []) if rec is not None else [] for rec in records]
    ties = [(rec.get("cutoff_ties") or []) if rec is not None else [] for rec in records]
    with gc_paused():
        cols = columnar.resolve_columns(chosen, evidence, ties, key, where=lambda i: _where(run, chosen[i]["id"]))
        return _evaluate_columns(cols, questions, flags, missing, outside, predictions, rank_backend)


def evaluate_parts(
    parts: Sequence[columnar.ColumnsPart],
    chosen: Sequence[Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    flags: Mapping[Any, Mapping[str, bool]] | None,
    predictions: Mapping[Any, str] | None = None,
    shared: dict[Any, Any] | None = None,
) -> Evaluation:
    """:func:`evaluate` (key ``auto``) of a run resolved in parts where it was made (:func:`eval.columnar.columns_part`).

    ``chosen``: the scored questions, the parts' questions in order (every
    one with its record: nothing ``missing``); ``questions``: the whole
    benchmark. The parts must suffice (:func:`eval.columnar.parts_suffice`).
    The same :class:`Evaluation` as :func:`evaluate` of the run's records.
    ``shared``: a cache of what depends on the question alone, kept by a
    caller scoring several runs (:func:`eval.columnar.negatives_report`).
    """
    with gc_paused():
        cols = columnar.columns_from_parts(chosen, parts)
        return _evaluate_columns(cols, questions, flags, 0, 0, predictions, "kernel", parts, shared)


def _evaluate_columns(cols: columnar.Columns, questions: Sequence[Mapping[str, Any]],
                      flags: Mapping[Any, Mapping[str, bool]] | None, missing: int, outside: int,
                      predictions: Mapping[Any, str] | None, rank_backend: str,
                      parts: Sequence[columnar.ColumnsPart] | None = None,
                      shared: dict[Any, Any] | None = None) -> Evaluation:
    rows = columnar.rows(cols)
    key_space = columnar.key_space_effect(cols, rows, parts)
    resolved = _LazyResolved(cols)
    return Evaluation(
        questions=list(cols.questions),
        resolved=resolved,  # type: ignore[arg-type]
        rows=rows,
        missing=missing,
        outside_split=outside,
        rank=columnar.rank_metrics(cols) if rank_backend == "kernel" else rank_metrics(resolved, backend=rank_backend),
        ties=columnar.tie_report(cols),
        negatives=columnar.negatives_report(cols, flags, shared),
        flags_found=flags is not None,
        answer_rows=_answer_rows(questions, cols.questions, predictions),
        extra={"key_space": key_space},
    )


class _LazyResolved(Sequence):
    """``Evaluation.resolved`` of the columnar path: each question resolved when first read."""

    def __init__(self, cols: columnar.Columns) -> None:
        self._cols = cols

    def __len__(self) -> int:
        return self._cols.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._cols.resolved(j) for j in range(*i.indices(self._cols.n))]
        if i < 0:
            i += self._cols.n
        if not 0 <= i < self._cols.n:
            raise IndexError(i)
        return self._cols.resolved(i)


def _answer_rows(questions: Sequence[Mapping[str, Any]], chosen: Sequence[Mapping[str, Any]],
                 predictions: Mapping[Any, str] | None) -> list[dict[str, Any]] | None:
    if predictions is None:
        return None
    known = {q["id"] for q in questions}
    unknown = [qid for qid in predictions if qid not in known]
    if unknown:
        raise RunMismatchError(f"{len(unknown)} prediction(s) have ids not in the benchmark, e.g. {unknown[0]!r}")
    return make_answer_rows(chosen, predictions)


def evaluate_reference(
    run: Mapping[Any, Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    flags: Mapping[Any, Mapping[str, bool]] | None,
    split: str | None = None,
    predictions: Mapping[Any, str] | None = None,
    key: str = "auto",
    rank_backend: str = "kernel",
) -> Evaluation:
    """:func:`evaluate` question by question: :func:`eval.keyspace.resolve_question` and the per-question metrics.

    The reference of the columnar path (slower; the same results).
    """
    chosen, records, missing, outside = select(run, questions, split)
    resolved = []
    for q, rec in zip(chosen, records, strict=True):
        evidence = rec.get("evidence", []) if rec is not None else []
        ties = (rec.get("cutoff_ties") or []) if rec is not None else []
        try:
            resolved.append(resolve_question(q, evidence, key, extra=ties))
        except EvidenceError as exc:
            raise EvidenceError(f"{_where(run, q['id'])}{exc}") from None
    rows = [row_from_resolved(r) for r in resolved]
    key_space = key_space_effect(chosen, records, resolved, rows)
    return Evaluation(
        questions=list(chosen),
        resolved=resolved,
        rows=rows,
        missing=missing,
        outside_split=outside,
        rank=rank_metrics(resolved, backend=rank_backend),
        ties=tie_report(resolved),
        negatives=negatives_report(chosen, resolved, flags),
        flags_found=flags is not None,
        answer_rows=_answer_rows(questions, chosen, predictions),
        extra={"key_space": key_space},
    )


def key_space_effect(
    questions: Sequence[Mapping[str, Any]],
    records: Sequence[Mapping[str, Any] | None],
    resolved: Sequence[Resolved],
    rows: Sequence[Mapping[str, Any]],
) -> dict[str, Any]:
    """Which key space the questions were matched in, and how many would score otherwise in the other one.

    Matching on ids (the default when both sides carry them, with
    ``benchmark.jsonl`` merged into the gold) or on labels (what the published
    scorer does with ``benchmark_labelled.jsonl`` alone) can differ where
    homonyms occur (SPEC §3.1). Returns ``{"used", "other", "questions_differing"}``:
    ``used`` is ``"id"``, ``"label"`` or ``"mixed"``; ``questions_differing`` counts
    the questions whose hits or CCR change when both sides are forced into the
    other space (``None`` when some item or gold triple does not carry it).
    """
    spaces = {r.gold_space for r in resolved if r.items} or {r.gold_space for r in resolved}
    used = spaces.pop() if len(spaces) == 1 else ("mixed" if spaces else "id")
    other = {"id": "label", "label": "id"}.get(used)
    differing = None
    if other is not None:
        try:
            differing = 0
            for q, rec, row in zip(questions, records, rows, strict=True):
                evidence = rec.get("evidence", []) if rec is not None else []
                alt = row_from_resolved(resolve_question(q, evidence, other))
                differing += (alt["hits"], alt["ccr"]) != (row["hits"], row["ccr"])
        except EvidenceError:
            differing = None
    return {"used": used, "other": other, "questions_differing": differing}


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
    ev: Evaluation, n_boot: int = 1000, seed: int = 0, t_query_exposed: bool = True, by: Sequence[str] = BY
) -> dict[str, Any]:
    """The SPEC §6.2 object."""
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
    out["ci"] = bootstrap_ci(headline_metrics(ev), n_boot=n_boot, seed=seed)
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
        "bootstrap": {"n_boot": n_boot, "seed": seed, "level": 0.95},
        "key_space": ev.extra.get("key_space"),
    }
    return out


def score_run(
    run: dict[Any, dict[str, Any]],
    questions: list[dict[str, Any]],
    flags: dict[Any, dict[str, bool]] | None,
    split: str | None = None,
    predictions: dict[Any, str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    key: str = "auto",
    t_query_exposed: bool = True,
) -> dict[str, Any]:
    """Score a run (``{id: record}``) against benchmark ``questions``: the SPEC §6.2 object.

    Keys: ``trp_ccr`` (exactly the published aggregate), ``coverage``,
    ``negatives`` (name -> ``{rate, n}``), ``rank`` (macro values), ``ties``
    (name -> ``{observed, expected, min, max, bias}``), ``ci`` (name -> ``[low,
    high]``), ``answers`` when ``predictions`` are given, then ``missing`` and
    ``counts``.
    """
    ev = evaluate(run, questions, flags, split=split, predictions=predictions, key=key)
    return to_json(ev, n_boot=n_boot, seed=seed, t_query_exposed=t_query_exposed)


def score_parts(
    parts: Sequence[columnar.ColumnsPart],
    chosen: Sequence[Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    flags: Mapping[Any, Mapping[str, bool]] | None,
    n_boot: int = 1000,
    seed: int = 0,
    shared: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """:func:`score_run` of a run from its parts (:func:`evaluate_parts`): the same SPEC §6.2 object."""
    return to_json(evaluate_parts(parts, chosen, questions, flags, shared=shared), n_boot=n_boot, seed=seed)
