"""A run in contiguous shards of questions: each retrieved into data, the file written from them (SPEC §6.1).

:func:`retrieve_shard` retrieves a slice of a split and returns its records,
their run-file text, the per-question pool summaries (SPEC §7 needs them) and
the counts of the run's metadata, as a :class:`Shard`. The run file is the
concatenation of the shards' texts in question order (:func:`write_run`), so
its bytes do not depend on how the shards were computed or how many processes
computed them; :func:`run_meta` makes its ``.meta.json`` from the shards'
counts.
"""

from __future__ import annotations

import contextlib
import platform
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any

from retriever.bfs import PoolSummary
from retriever.config import RetrieverConfig
from retriever.kg import read_edgelist_header
from retriever.pipeline import Retriever
from tempbench_core.atomic import atomic_open
from tempbench_core.digest import sha256_file, sha256_json
from tempbench_core.errors import OutputError
from tempbench_core.layout import DataPaths
from tempbench_core.provenance import absolute, make_provenance
from tempbench_core.runfile import dumps_record_bytes, meta_path, write_meta
from tempbench_core.version import __version__

#: The counts a shard keeps of its questions (summed over the shards into the run's metadata).
COUNTS = ("ambiguous_oracle", "pool_rows", "candidates", "with_evidence", "no_anchor", "oracle_by_label")


@dataclass
class Shard:
    """One shard of a run: what was retrieved for questions ``lo`` to ``hi`` of the split.

    Attributes
    ----------
    lo, hi:
        The shard's positions among the split's questions.
    text:
        Its records as run-file lines (UTF-8).
    stats:
        ``ids``, ``anchor_hit`` per question and the sums of :data:`COUNTS`.
    records:
        The records themselves (SPEC §6.1), when kept.
    pools:
        Each question's :class:`~retriever.bfs.PoolSummary` (pool rows, per-hop
        sizes and eligible rows), when asked for.
    """

    lo: int
    hi: int
    text: bytes
    stats: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    pools: list[PoolSummary] = field(default_factory=list)

    @staticmethod
    def bounds(n: int, size: int) -> list[tuple[int, int]]:
        """``(lo, hi)`` of each shard of ``n`` questions, ``size`` at a time."""
        return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


def retrieve_shard(retriever: Retriever, questions: Sequence[Mapping[str, Any]], lo: int, hi: int,
                   keep_pools: bool = False, shared: dict[Any, Any] | None = None) -> Shard:
    """Retrieve questions ``lo`` to ``hi`` of ``questions`` (with their pools' summaries when ``keep_pools``).

    ``shared``: a cache for the retrievers of several configurations that
    retrieve the same shard (:meth:`~retriever.pipeline.Retriever.retrieve_with_stats`).
    """
    lines = []
    records = []
    pools: list[PoolSummary] = []
    stats: dict[str, Any] = {"ids": [], "anchor_hit": [], **dict.fromkeys(COUNTS, 0)}
    # every positive score of the index at least 1e-4: no record's scores need be read for _floats_alike
    scores_alike = retriever.index.bm25.positive_score_floor >= _ALIKE_FROM
    for record, st in retriever.retrieve_many(questions[lo:hi], keep_pool=keep_pools, shared=shared):  # type: ignore[arg-type]
        if keep_pools:
            pools.append(st.pool)  # type: ignore[arg-type]
        records.append(record)
        lines.append(dumps_record_bytes(record, _floats_alike(record, scores_alike)))
        stats["ids"].append(record["id"])
        stats["anchor_hit"].append(st.anchor_hit)
        stats["ambiguous_oracle"] += int(st.ambiguous_oracle)
        stats["pool_rows"] += st.pool_rows
        stats["candidates"] += st.candidates
        stats["with_evidence"] += int(bool(record["evidence"]))
        stats["no_anchor"] += int(record["anchor"]["source"] == "none" or record["anchor"]["id"] is None)
        stats["oracle_by_label"] += int(st.oracle_by_label)
    return Shard(lo, hi, b"".join(lines), stats, records, pools)


#: What a record's id, split and anchor fields may be for :func:`_floats_alike` (a bool is an int).
_NO_FLOAT = (str, int, type(None))
_SCORE = itemgetter("score")
#: The least magnitude from which orjson and Python's ``repr`` write every float alike (below: ``0.000015``
#: against ``1.5e-05``); see ``floats_alike`` of :func:`~tempbench_core.jsonl.dumps_compact_bytes`.
_ALIKE_FROM = 1e-4


def _floats_alike(record: Mapping[str, Any], scores_alike: bool = False) -> bool:
    """Whether every float of a retrieved record is ``0.0`` or at least ``1e-4`` (``floats_alike`` of
    :func:`~tempbench_core.jsonl.dumps_compact_bytes`: its line is then written without a scan).

    An evidence item holds the KG's strings and integer years and one float,
    its score; the id, the split and the anchor (an ``s_id`` absent from the
    KG, SPEC §2.3) come from the question and may be anything.
    ``scores_alike``: the caller knows that every score is ``0.0`` or at
    least ``1e-4`` (:attr:`~retriever.bm25.BM25.positive_score_floor`), so
    they are not read.
    """
    if not all(isinstance(value, _NO_FLOAT) for value in (record["id"], record["split"], *record["anchor"].values())):
        return False
    if scores_alike:
        return True
    # filter(None, ...) leaves out the zero scores (0.0 and -0.0 are false): C loops, no Python test per score
    return min(filter(None, map(_SCORE, chain(record["evidence"], record["cutoff_ties"]))), default=1.0) >= _ALIKE_FROM


def input_fingerprints(data: DataPaths) -> dict[str, dict[str, str] | None]:
    """Absolute path and sha256 of every input file of a run (``None`` for absent optional files).

    Absolute, so that the metadata names the files whatever folder it is read from.
    """
    out: dict[str, dict[str, str] | None] = {}
    for name in ("kg", "labels", "benchmark", "benchmark_ids"):
        path = getattr(data, name)
        out[name] = None if path is None else {"path": absolute(path), "sha256": sha256_file(path)}
    return out


def run_fingerprint(config: RetrieverConfig, inputs: Mapping[str, Any], split: str, shard_size: int) -> str:
    """sha256 over everything that decides the shards' bytes."""
    payload = {
        "config": config.to_dict(),
        "inputs": {k: (None if v is None else v["sha256"]) for k, v in inputs.items()},
        "split": split,
        "version": __version__,
        "shard_size": int(shard_size),
    }
    return sha256_json(payload)


def write_run(out: Path, texts: Iterable[bytes | Path]) -> None:
    """Write the run file from its shards' texts (or shard files), in order, atomically."""
    with atomic_open(out, "wb") as handle:  # bytes: the shards are copied, not decoded and encoded again
        for text in texts:
            handle.write(text.read_bytes() if isinstance(text, Path) else text)


@dataclass
class RunSetup:
    """How a run was made, for its metadata: workers, shard size, resumed shards, timings (seconds).

    ``provenance`` is the data's origin and the command that made the run
    (:meth:`tempbench_core.provenance.Provenance.to_json`); without one the
    metadata records the origin found from the data and no command.
    """

    workers: int
    shard_size: int
    resumed_shards: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    questions_retrieved: int = 0
    provenance: Mapping[str, Any] | None = None


def run_meta(config: RetrieverConfig, data: DataPaths, index: Any, split: str, out: Path,
             stats: Sequence[Mapping[str, Any]], setup: RunSetup) -> dict[str, Any]:
    """The run's ``.meta.json`` (SPEC §6.1): configuration, inputs' sha256, counts, timings; written beside ``out``."""
    inputs = input_fingerprints(data)
    kg_header = read_edgelist_header(data.kg)
    totals = dict.fromkeys(COUNTS, 0)
    hits = resolvable = n = 0
    for st in stats:
        for key in totals:
            totals[key] += st.get(key, 0)
        resolvable += sum(h is not None for h in st["anchor_hit"])
        hits += sum(h is True for h in st["anchor_hit"])
        n += len(st["ids"])
    t = setup.timings
    retrieve_s = t.get("retrieve_s", 0.0)
    meta: dict[str, Any] = {
        "name": config.name,
        "run_file": out.name,
        # its size as written: a reader tells a file cut short or edited from one stat (runchecks.check_run_count)
        "run_bytes": out.stat().st_size,
        "split": split,
        "config": config.to_dict(),
        "inputs": inputs,
        "index_fingerprint": getattr(index, "fingerprint", None),
        "run_fingerprint": run_fingerprint(config, inputs, split, setup.shard_size),
        "package": {"name": "tempbench-repro", "version": __version__},
        "provenance": dict(setup.provenance) if setup.provenance is not None else make_provenance(data).to_json(),
        "environment": {"python": platform.python_version(), "numpy": __import__("numpy").__version__},
        "counts": {
            "questions": n,
            "with_evidence": totals["with_evidence"],
            "empty": n - totals["with_evidence"],
            "no_anchor": totals["no_anchor"],
            "gold_anchor_resolvable": resolvable,
            "anchor_hits": hits,
            "ambiguous_oracle": totals["ambiguous_oracle"],
            # gold first-hop subjects without an id (no benchmark.jsonl twin): resolved by label (SPEC §2.3)
            "oracle_by_label": totals["oracle_by_label"],
            "kg_rows": index.kg.n_rows,
            "kg_entities": index.kg.n_entities,
        },
        # How the edge list's first line was read: by name, or by position as TGB's loader does.
        "kg_header": {"columns": list(kg_header.names), "read_by_position": kg_header.by_position},
        "coverage": totals["with_evidence"] / n if n else 0.0,
        "anchor_recall": hits / resolvable if resolvable else None,
        "mean_pool_rows": totals["pool_rows"] / n if n else 0.0,
        "mean_pool_size": totals["candidates"] / n if n else 0.0,
        "timings": {
            **{key: round(value, 4) for key, value in t.items()},
            "questions_retrieved": setup.questions_retrieved,
            "questions_per_s": (round(setup.questions_retrieved / retrieve_s, 1)
                                if retrieve_s > 0 and setup.questions_retrieved else None),
        },
        "workers": setup.workers,
        "resumed_shards": setup.resumed_shards,
        "shards": len(stats),
        "shard_size": setup.shard_size,
    }
    write_meta(out, meta)
    return meta


def finish_run(out: Path, config: RetrieverConfig, data: DataPaths, index: Any, split: str,
               texts: Sequence[bytes | Path], stats: Sequence[Mapping[str, Any]], setup: RunSetup) -> dict[str, Any]:
    """Write a run file from its shards' texts (in order) and its ``.meta.json`` from their counts; the metadata.

    When the metadata cannot be written (a full disk), the new run file is
    removed with the old metadata (:func:`remove_run`) before the error goes on.
    """
    write_run(out, texts)
    try:
        return run_meta(config, data, index, split, out, stats, setup)
    except (OutputError, OSError):
        remove_run(out)
        raise


def remove_run(out: Path) -> None:
    """Remove a run file and its ``.meta.json``: a run file whose metadata failed to be written.

    The metadata there, if any, is the run's of before, which no longer
    describes the file; neither is left (a failure to remove is ignored: the
    error that led here is the one to report).
    """
    for path in (meta_path(out), out):
        with contextlib.suppress(OSError):
            path.unlink()
