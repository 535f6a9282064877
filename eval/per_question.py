"""Per-question results: one row per scored question, as a table, a CSV file or a ``pandas.DataFrame``.

The aggregates of a score object (SPEC §6.2) are means over these rows; the
rows let a user slice them any other way::

    from eval.per_question import per_question_frame
    df = per_question_frame("tempbench-out/runs/oracle.jsonl")   # on the data its .meta.json records
    print(df.groupby("complexity")[["TRP", "CCR", "ndcg@10"]].mean())

Columns (:data:`BASE_COLUMNS`, then the rank measures, then the stages):

``id, split, complexity, operator``
    the question (``operator`` is the benchmark's ``operator_type``);
``n_ret, hits, n_gold, TRP, CCR``
    SPEC §3.1 per question: ``TRP`` is empty (NaN) when nothing was retrieved,
    as the published aggregate leaves such questions out of TRP macro;
``recall@k, ndcg@k, mrr``
    SPEC §3.4 per question, empty for a question without a relevant triple
    (left out of the macro means);
``stages``, ``stage_<name>``
    SPEC §7 loss attribution, when known: the stage of every distinct gold hop
    in hop order (``retrieved|capped``), and the number of hops at each stage of
    :data:`eval.explain.STAGES` (one column per stage). Empty when the run's
    configuration or the KG is not at hand, and for questions absent from the
    run.

It also holds the per-slice bootstrap intervals of the report's plots
(:func:`slice_intervals`), drawn from these per-question values.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from eval.attribution import attribute_run, run_config
from eval.bootstrap import LEVEL, N_BOOT, SEED, RatioMetric, bootstrap_ci, kept_resamples, mean_metric
from eval.explain import STAGES, Explainer
from eval.keyspace import DEFAULT_KEY
from eval.scoring import BY, Evaluation, evaluate
from retriever import RetrieverConfig, load_benchmark, load_config, load_flags, load_index
from tempbench_core.atomic import write_text
from tempbench_core.digest import sha256_file
from tempbench_core.errors import MissingDataError
from tempbench_core.layout import DataPaths, default_index_cache, find_inputs
from tempbench_core.runfile import meta_path, read_meta, read_run

if TYPE_CHECKING:  # pandas is imported only when a frame is asked for (it is slow to import)
    import pandas as pd

#: The columns every table has, in order (the rank measures and the stages follow).
BASE_COLUMNS = ("id", "split", "complexity", "operator", "n_ret", "hits", "n_gold", "TRP", "CCR")
#: The loss-attribution columns: the hops' stages in order, then one count per stage of SPEC §7.
STAGE_COLUMNS = ("stages", *(f"stage_{s}" for s in STAGES))
#: Which field of a question each slice of the plots groups by (as in SPEC §3.2's ``by_<field>``).
_SLICE_FIELD = {"complexity": "complexity", "operator": "operator"}


def columns(ev: Evaluation) -> list[str]:
    """The table's columns for ``ev``: :data:`BASE_COLUMNS`, its rank measures, :data:`STAGE_COLUMNS`."""
    return [*BASE_COLUMNS, *ev.rank["per_question"], *STAGE_COLUMNS]


def _number(value: Any) -> float | None:
    """A finite float, else ``None`` (NaN marks "not defined" in the per-question arrays)."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def per_question_rows(ev: Evaluation, stages: Mapping[Any, Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """One dict per scored question, in scoring order, with the keys of :func:`columns`.

    Parameters
    ----------
    ev:
        :func:`eval.scoring.evaluate` of the run.
    stages:
        ``{question id: [stage, ...]}`` (SPEC §7, ``attribute_run(...)["questions"]``),
        when known; the stage columns are ``None`` for questions it lacks.

    Returns
    -------
    list of dict
        Undefined values (TRP of an empty retrieval, a rank measure without a
        relevant triple, unknown stages) are ``None``.
    """
    per_q = ev.rank["per_question"]
    out: list[dict[str, Any]] = []
    for i, (question, row) in enumerate(zip(ev.questions, ev.rows, strict=True)):
        entry: dict[str, Any] = {
            "id": row["id"], "split": question.get("split"), "complexity": row["complexity"],
            "operator": row["operator"], "n_ret": row["n_ret"], "hits": row["hits"], "n_gold": row["n_gold"],
            "TRP": row["trp"], "CCR": row["ccr"],
        }
        for name, values in per_q.items():
            entry[name] = _number(values[i])
        hop_stages = None if stages is None else stages.get(row["id"])
        if hop_stages is None:
            entry.update(dict.fromkeys(STAGE_COLUMNS))
        else:
            entry["stages"] = "|".join(hop_stages)
            for s in STAGES:
                entry[f"stage_{s}"] = sum(1 for h in hop_stages if h == s)
        out.append(entry)
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # shortest round-trip form: the same bytes for the same values
    return str(value)


def csv_text(rows: Sequence[Mapping[str, Any]], header: Sequence[str]) -> str:
    """The rows as CSV (comma-separated, ``\\n`` line ends, empty cells for undefined values)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in header])
    return buffer.getvalue()


def write_per_question_csv(path: str | Path, ev: Evaluation, stages: Mapping[Any, Sequence[str]] | None = None) -> Path:
    """Write :func:`per_question_rows` of ``ev`` to ``path`` as CSV (atomically); returns the path."""
    target = Path(path)
    write_text(target, csv_text(per_question_rows(ev, stages), columns(ev)))
    return target


def frame_of(ev: Evaluation, stages: Mapping[Any, Sequence[str]] | None = None) -> pd.DataFrame:
    """:func:`per_question_rows` as a ``pandas.DataFrame`` (one row per question, columns of :func:`columns`).

    Counts are integers (the stage counts nullable ``Int64``, empty when
    unknown); TRP and the rank measures are floats with NaN where undefined.
    """
    import pandas as pd

    frame = pd.DataFrame(per_question_rows(ev, stages), columns=columns(ev))
    for name in ("TRP", *ev.rank["per_question"]):
        frame[name] = frame[name].astype("float64")
    for name in STAGE_COLUMNS[1:]:
        frame[name] = frame[name].astype("Int64")
    return frame


def recorded_data(run_path: str | Path) -> DataPaths:
    """The input files a run was made on, as its ``.meta.json`` records them (paths checked by sha256).

    The functional flags are looked up beside the benchmark, as in a data root.

    Raises
    ------
    MissingDataError
        The run has no metadata naming its benchmark, or a recorded file is
        gone or has changed since (then the data must be given).
    """
    recorded = (read_meta(run_path) or {}).get("inputs") or {}
    paths: dict[str, Path | None] = {}
    for name in ("kg", "labels", "benchmark"):
        entry = recorded.get(name)
        path = Path(entry["path"]) if isinstance(entry, Mapping) and isinstance(entry.get("path"), str) else None
        if path is not None and (not path.is_file() or (entry.get("sha256") and sha256_file(path) != entry["sha256"])):
            raise MissingDataError(f"{meta_path(run_path)} records the {name} file {path}, which is "
                                   f"{'gone' if not path.is_file() else 'not the same file any more (sha256)'}; "
                                   "give the data the run was made on (data=resolve_data('DIR'))")
        paths[name] = path
    if paths["benchmark"] is None:
        raise MissingDataError(f"{run_path}: no .meta.json recording the benchmark it was made on; give data= "
                               "(tempbench.data.resolve_data() for the generated default, resolve_data('DIR') else)")
    return find_inputs(None, kg=paths["kg"], labels=paths["labels"], benchmark=paths["benchmark"])


def per_question_frame(
    run: str | Path | Mapping[Any, Mapping[str, Any]],
    data: DataPaths | str | Path | None = None,
    split: str | None = None,
    key: str = DEFAULT_KEY,
    stages: bool = True,
    config: Any = None,
    cache_dir: str | Path | None = None,
) -> pd.DataFrame:
    """The per-question results of a run as a ``pandas.DataFrame`` (the columns of the module docstring).

    Parameters
    ----------
    run:
        A run file or any evidence form of SPEC §1.4 (a path), or its records
        (``{question id: record}``, :func:`tempbench_core.runfile.read_run`).
    data:
        The data the run was made on: a data root (``"DIR"``, SPEC §1.5) or its
        :class:`~tempbench_core.layout.DataPaths` (``tempbench.data.resolve_data()``
        for the generated default); default: the files the run's ``.meta.json``
        records (:func:`recorded_data`).
    split:
        As ``tempbench score --split``: every question of the split, the ones
        absent from the run as empty retrievals (default: the run's questions).
    key:
        Key space for matching evidence to gold (SPEC §3.1).
    stages:
        Add the SPEC §7 stage columns when the run's configuration (its
        ``.meta.json``, or ``config``) and the KG are at hand; ``False`` skips
        the attribution (it needs the KG index).
    config:
        The run's configuration (a :class:`retriever.RetrieverConfig` or a
        name), when ``run`` has no ``.meta.json``.
    cache_dir:
        The index cache (default: the per-user cache).

    Returns
    -------
    pandas.DataFrame
        One row per scored question, in scoring order.
    """
    if data is None:
        if not isinstance(run, (str, Path)):
            raise MissingDataError("per_question_frame: give data= with run records (a run file's .meta.json can "
                                   "name its data)")
        data = recorded_data(run)
    elif not isinstance(data, DataPaths):
        data = find_inputs(data)
    data.require("benchmark")
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    flags = load_flags(data.flags) if data.flags is not None and Path(data.flags).exists() else None
    records = read_run(run) if isinstance(run, (str, Path)) else run
    ev = evaluate(records, questions, flags, split=split, key=key)
    known = None
    if stages:
        known = run_stages(records, questions, data, run if isinstance(run, (str, Path)) else None, config, cache_dir)
    return frame_of(ev, known)


def has_config(run_path: str | Path) -> bool:
    """Whether the run's ``.meta.json`` records its configuration (SPEC §6.1)."""
    return isinstance((read_meta(run_path) or {}).get("config"), Mapping)


def run_stages(records: Mapping[Any, Mapping[str, Any]], questions: Sequence[Mapping[str, Any]], data: DataPaths,
               run_path: str | Path | None = None, config: Any = None,
               cache_dir: str | Path | None = None) -> dict[Any, list[str]] | None:
    """The SPEC §7 stages of every question of the run, or ``None`` when they cannot be known here.

    They are known when the run's configuration is (``config``, else the
    run's ``.meta.json``) and the KG file exists; they are computed, never
    read from an earlier ``explain`` output, which may be of another run.
    """
    if config is not None and not isinstance(config, RetrieverConfig):
        config = load_config(config)
    if config is None and run_path is not None and has_config(run_path):
        config, _ = run_config(run_path)
    if config is None or data.kg is None or not Path(data.kg).exists():
        return None
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark,
                       cache_dir=Path(cache_dir) if cache_dir is not None else default_index_cache())
    return attribute_run(Explainer(index, config), records, questions)["questions"]


def _slice_metrics(trp: np.ndarray, ccr: np.ndarray) -> dict[str, RatioMetric]:
    """TRP (macro inside the slice, 0.0 when no question of it has evidence) and CCR, as SPEC §3.2 slices them.

    ``trp``, ``ccr``: the slice's questions' values (NaN: TRP of an empty retrieval).
    """
    return {"TRP": mean_metric(trp, empty=0.0), "CCR": RatioMetric(ccr, np.ones(len(ccr)))}


def slice_intervals(ev: Evaluation, by: Sequence[str] = BY, n_boot: int = N_BOOT, seed: int = SEED,
                    level: float = LEVEL, memo: dict[Any, Any] | None = None
                    ) -> dict[str, dict[str, dict[str, list[float] | None]]]:
    """Percentile bootstrap intervals of TRP and CCR inside every slice (SPEC §3.7 applied per slice).

    Each slice is resampled on its own (its questions drawn with replacement,
    :class:`eval.bootstrap.Resamples` with ``seed``), so an interval says how
    well that slice's value is known. Slice values are keyed by ``str(value)``,
    as the score object's ``by_<field>``.

    ``memo``: a cache of the replicates (:func:`eval.bootstrap.kept_resamples`)
    kept by a caller that scores several runs of the same questions.

    Returns
    -------
    dict
        ``{field: {value: {"TRP": [low, high], "CCR": [low, high]}}}``.
    """
    # every question's values read out of the rows once, each slice taking its part
    trp = np.array([np.nan if row["trp"] is None else row["trp"] for row in ev.rows], dtype=np.float64)
    ccr = np.array([row["ccr"] for row in ev.rows], dtype=np.float64)
    out: dict[str, dict[str, dict[str, list[float] | None]]] = {}
    for field in by:
        key = _SLICE_FIELD.get(field, field)
        groups: dict[Any, list[int]] = {}
        for i, row in enumerate(ev.rows):
            groups.setdefault(row.get(key), []).append(i)
        out[field] = {}
        for value in sorted(groups, key=str):
            index = np.asarray(groups[value], dtype=np.int64)
            out[field][str(value)] = bootstrap_ci(_slice_metrics(trp[index], ccr[index]), n_boot=n_boot, seed=seed,
                                                  level=level, resamples=kept_resamples(memo, len(index), n_boot, seed))
    return out
