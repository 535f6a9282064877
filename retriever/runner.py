"""Run a configuration over a benchmark split and write the run file (SPEC §6.1).

Questions are processed in contiguous shards of :data:`SHARD_SIZE`, in file
order. Each shard is written atomically into ``<out>.parts/`` (its records plus
a small stats file), named by a fingerprint of everything that determines its
bytes (configuration, sha256 of every input file, split, package version, shard
size). The final file is the concatenation of the shards in question order, so
it is byte-identical whatever the number of workers, and ``resume=True`` reuses
the complete shards of an interrupted run with the same fingerprint: the result
is byte-identical to an uninterrupted run. The parts directory is removed when
the run file and its ``.meta.json`` are written.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import platform
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from retriever.benchmark import load_benchmark
from retriever.bfs import PoolSummary
from retriever.config import RetrieverConfig
from retriever.index import load_index
from retriever.kg import read_edgelist_header
from retriever.pipeline import Retriever
from tempbench_core.atomic import atomic_open
from tempbench_core.digest import sha256_file, sha256_json
from tempbench_core.errors import ConfigError
from tempbench_core.jsonl import dumps_json
from tempbench_core.layout import DataPaths, default_index_cache
from tempbench_core.memory import gc_paused
from tempbench_core.progress import progress
from tempbench_core.runfile import dumps_record, write_meta, written_records
from tempbench_core.schema import select_split
from tempbench_core.version import __version__

SHARD_SIZE = 250
#: At most this many shards per pool worker are left unfreed until the worker ends (a bound on its memory).
UNFREED_SHARDS = 64

# Per-process state of a run: (retriever, questions, parts dir, fingerprint).
_STATE: dict[str, Any] = {}


def _package_version() -> str:
    return __version__


def default_workers() -> int:
    """The worker processes a run uses by default: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def input_fingerprints(data: DataPaths) -> dict[str, dict[str, str] | None]:
    """Path and sha256 of every input file of a run (``None`` for absent optional files)."""
    out: dict[str, dict[str, str] | None] = {}
    for name in ("kg", "labels", "benchmark", "benchmark_ids"):
        path = getattr(data, name)
        out[name] = None if path is None else {"path": str(path), "sha256": sha256_file(path)}
    return out


def run_fingerprint(config: RetrieverConfig, inputs: dict[str, Any], split: str, shard_size: int | None = None) -> str:
    """sha256 over everything that decides the shards' bytes (default shard size: :data:`SHARD_SIZE`)."""
    payload = {
        "config": config.to_dict(),
        "inputs": {k: (None if v is None else v["sha256"]) for k, v in inputs.items()},
        "split": split,
        "version": _package_version(),
        "shard_size": SHARD_SIZE if shard_size is None else int(shard_size),
    }
    return sha256_json(payload)


def _shard_paths(parts: Path, fingerprint: str, i: int) -> tuple[Path, Path]:
    base = f"{fingerprint[:16]}-{i:05d}"
    return parts / f"{base}.jsonl", parts / f"{base}.stats.json"


def _shard_bounds(n: int, size: int | None = None) -> list[tuple[int, int]]:
    size = SHARD_SIZE if size is None else size
    return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


def _compute_shard(i: int) -> int:
    """Retrieve one shard and write it (stats first: the records file marks completion)."""
    retriever = _STATE["retriever"]
    questions = _STATE["questions"]
    lo, hi = _shard_bounds(len(questions), _STATE.get("shard_size"))[i]
    lines = []
    stats = {"ids": [], "anchor_hit": [], "ambiguous_oracle": 0, "pool_rows": 0, "candidates": 0,
             "with_evidence": 0, "no_anchor": 0, "oracle_by_label": 0}
    records = []
    on_shard = _STATE.get("on_shard")
    summaries: list[PoolSummary] = []
    for q in questions[lo:hi]:
        record, st = retriever.retrieve_with_stats(q, keep_pool=on_shard is not None)
        if on_shard is not None:
            summaries.append(st.pool)
        records.append(record)
        lines.append(dumps_record(record))
        stats["ids"].append(record["id"])
        stats["anchor_hit"].append(st.anchor_hit)
        stats["ambiguous_oracle"] += int(st.ambiguous_oracle)
        stats["pool_rows"] += st.pool_rows
        stats["candidates"] += st.candidates
        stats["with_evidence"] += int(bool(record["evidence"]))
        stats["no_anchor"] += int(record["anchor"]["source"] == "none" or record["anchor"]["id"] is None)
        stats["oracle_by_label"] += int(st.oracle_by_label)
    text = "".join(lines)
    if _STATE.get("texts") is not None:  # in-process: the final file is written from memory
        _STATE["texts"][i] = text
    if _STATE.get("keep") is not None:  # in-process: the caller keeps the records themselves
        _STATE["keep"][i] = records
    if on_shard is not None:
        _STATE["shard_results"][i] = on_shard(range(lo, hi), records, summaries)
    unfreed = _STATE.get("unfreed")
    if unfreed is not None and len(unfreed) < UNFREED_SHARDS:
        unfreed.append((records, summaries, lines))
    # the records' checksum: a resumed run recomputes a shard edited or damaged since
    stats["sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    records_path, stats_path = _shard_paths(_STATE["parts"], _STATE["fingerprint"], i)
    # scratch files, checked by their sha256 when a resume reads them: no fsync needed
    with atomic_open(stats_path, "w", fsync=False) as handle:
        handle.write(dumps_json(stats, indent=None) + "\n")
    with atomic_open(records_path, "w", fsync=False) as handle:
        handle.write(text)
    return hi - lo


def _compute_shard_index(i: int) -> tuple[int, Any]:
    """:func:`_compute_shard` in a worker: the shard's index (for a pool's unordered results) and its hook's result.

    A pool worker is terminated when its run ends, which frees nothing one by
    one: a shard's records are kept in ``_STATE["unfreed"]`` rather than
    freed object by object (that took about a tenth of the run's time), up
    to :data:`UNFREED_SHARDS` shards.
    """
    _STATE.setdefault("unfreed", [])
    _compute_shard(i)
    return i, _STATE["shard_results"].pop(i, None)


def _shard_complete(parts: Path, fingerprint: str, i: int, ids: list[Any]) -> bool:
    records_path, stats_path = _shard_paths(parts, fingerprint, i)
    if not (records_path.exists() and stats_path.exists()):
        return False
    try:
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
        digest = sha256_file(records_path)
    except (OSError, ValueError):
        return False
    return isinstance(stats, dict) and stats.get("ids") == ids and stats.get("sha256") == digest


def _ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (it stops the pool and exits 130)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _init_worker(state: dict[str, Any]) -> None:  # pragma: no cover - spawn platforms only
    _ignore_sigint()

    data: DataPaths = state["data"]
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark, cache_dir=state["cache_dir"])
    questions = select_split(load_benchmark(data.benchmark, data.benchmark_ids), state["split"])
    _STATE.update(retriever=Retriever(index, state["config"]), questions=questions, shard_results={},
                  parts=state["parts"], fingerprint=state["fingerprint"], shard_size=state["shard_size"])


def run_to_file(
    config: RetrieverConfig,
    data: DataPaths,
    split: str = "test",
    out_path: str | Path | None = None,
    workers: int = 1,
    resume: bool = False,
    cache_dir: str | Path | None = None,
    show_progress: bool | None = None,
    shard_size: int | None = None,
    index: Any = None,
    questions: list[dict[str, Any]] | None = None,
    records: list[dict[str, Any]] | None = None,
    on_shard: Callable[[range, list[dict[str, Any]], list[PoolSummary]], Any] | None = None,
    shard_results: list[Any] | None = None,
) -> dict[str, Any]:
    """Retrieve every question of ``split`` and write ``<name>.jsonl`` + ``<name>.meta.json``.

    Parameters
    ----------
    config:
        The retriever configuration.
    data:
        Input files (:func:`tempbench.data.resolve_data`).
    split:
        ``test`` (default), ``dev``, ``train`` or ``all``.
    out_path:
        Run file; default ``tempbench-out/runs/<name>.jsonl``.
    workers:
        Processes; the output bytes do not depend on it.
    resume:
        Reuse complete shards of an interrupted run with the same fingerprint.
    cache_dir:
        Index cache directory (default: the per-user cache).
    shard_size:
        Questions per shard (default :data:`SHARD_SIZE`). The run file's bytes
        do not depend on it; a resume reuses only shards of the same size.
    index:
        The :class:`~retriever.index.KGIndex` of ``data`` when the caller has
        loaded it already (else it is loaded from the cache).
    questions:
        The benchmark of ``data`` as :func:`~retriever.benchmark.load_benchmark`
        returns it, when the caller has loaded it already (the whole file; the
        split is selected here).
    records:
        A list that receives the run's records in file order (the same values
        the run file holds), so that a caller scoring the run need not read it
        back.
    on_shard:
        Called once per computed shard, where it was computed (in the worker
        process with several workers), as ``on_shard(positions, records,
        pools)``: the shard's positions among the split's questions, its
        records, and each question's :class:`~retriever.bfs.PoolSummary`
        (counted eligible rows included). What it returns (picklable) goes to
        ``shard_results``. It lets a caller do per-question work while the
        pools are at hand, in the run's processes (``tempbench reproduce``'s
        loss attribution and browser). Needs ``fork`` for several workers
        (elsewhere the run uses one).
    shard_results:
        A list that receives, in shard order, what ``on_shard`` returned
        (``None`` for a shard reused by ``resume``).

    Returns
    -------
    dict
        The metadata written to ``<name>.meta.json`` (counts, anchor recall,
        coverage, mean pool size, timings, fingerprints).
    """

    if workers < 1:
        raise ConfigError(f"--workers must be >= 1 (got {workers})")
    shard_size = SHARD_SIZE if shard_size is None else int(shard_size)
    if shard_size < 1:
        raise ConfigError(f"--shard-size must be >= 1 (got {shard_size})")
    data.require("kg", "benchmark")
    t_start = time.perf_counter()
    out = Path(out_path) if out_path is not None else Path("tempbench-out") / "runs" / f"{config.name}.jsonl"
    cache = Path(cache_dir) if cache_dir is not None else default_index_cache()

    t0 = time.perf_counter()
    if index is None:
        index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark, cache_dir=cache)
    t_index = time.perf_counter() - t0
    t0 = time.perf_counter()
    if questions is None:
        questions = load_benchmark(data.benchmark, data.benchmark_ids)
    questions = select_split(questions, split)
    t_bench = time.perf_counter() - t0
    inputs = input_fingerprints(data)
    fingerprint = run_fingerprint(config, inputs, split, shard_size)
    kg_header = read_edgelist_header(data.kg)

    parts = out.with_name(out.name + ".parts")
    if parts.exists() and not resume:
        shutil.rmtree(parts)
    parts.mkdir(parents=True, exist_ok=True)
    bounds = _shard_bounds(len(questions), shard_size)
    ids = [q.get("id") for q in questions]
    todo = [i for i, (lo, hi) in enumerate(bounds) if not (resume and _shard_complete(parts, fingerprint, i, ids[lo:hi]))]
    reused = len(bounds) - len(todo)

    t0 = time.perf_counter()
    retriever = Retriever(index, config)
    kept: dict[int, list[dict[str, Any]]] = {}
    texts: dict[int, str] = {}
    hooked: dict[int, Any] = {}
    _STATE.update(retriever=retriever, questions=questions, parts=parts, fingerprint=fingerprint,
                  shard_size=shard_size, keep=kept if records is not None else None, texts=texts,
                  on_shard=on_shard, shard_results=hooked)
    if on_shard is not None and "fork" not in multiprocessing.get_all_start_methods():  # pragma: no cover
        workers = 1  # a hook reaches spawned workers only by pickling; keep it in this process
    t_setup = time.perf_counter() - t0
    # The collector is paused while retrieving: the records made and dropped by the hundred
    # thousand would have it walk the index's labels and the benchmark over and over.
    with gc_paused():
        try:
            t0 = time.perf_counter()
            n_todo = sum(bounds[i][1] - bounds[i][0] for i in todo)
            desc = f"run {config.name} ({split})"
            if workers == 1 or len(todo) <= 1:
                for _ in progress((_compute_shard(i) for i in todo), total=len(todo), description=desc, enabled=show_progress):
                    pass
            else:
                methods = multiprocessing.get_all_start_methods()
                if "fork" in methods:
                    # children inherit _STATE (index arrays shared copy-on-write)
                    ctx = multiprocessing.get_context("fork")
                    pool_args: dict[str, Any] = {"initializer": _ignore_sigint}
                else:  # pragma: no cover - non-POSIX
                    ctx = multiprocessing.get_context("spawn")
                    pool_args = {"initializer": _init_worker, "initargs": ({
                        "data": data, "cache_dir": cache, "split": split, "config": config,
                        "parts": parts, "fingerprint": fingerprint, "shard_size": shard_size},)}
                # a worker's records reach the parent through its shard file, its hook's result through the pool
                _STATE["keep"] = _STATE["texts"] = None
                with ctx.Pool(min(workers, len(todo)), **pool_args) as pool:
                    for i, result in progress(pool.imap_unordered(_compute_shard_index, todo), total=len(todo),
                                              description=desc, enabled=show_progress):
                        hooked[i] = result
                        if records is not None:  # parsed while the workers go on with the next shards
                            kept[i] = written_records(_shard_paths(parts, fingerprint, i)[0])
        finally:
            _STATE.clear()
        t_retrieve = time.perf_counter() - t0

        totals = {"ambiguous_oracle": 0, "pool_rows": 0, "candidates": 0, "with_evidence": 0, "no_anchor": 0,
                  "oracle_by_label": 0}
        hits = resolvable = 0
        with atomic_open(out, "wb") as handle:  # bytes: the shards are copied, not decoded and encoded again
            for i in range(len(bounds)):
                records_path, stats_path = _shard_paths(parts, fingerprint, i)
                stats = json.loads(stats_path.read_text(encoding="utf-8"))
                for key in totals:
                    totals[key] += stats.get(key, 0)
                resolvable += sum(h is not None for h in stats["anchor_hit"])
                hits += sum(h is True for h in stats["anchor_hit"])
                if shard_results is not None:
                    shard_results.append(hooked.get(i))
                if i in texts:
                    handle.write(texts[i].encode("utf-8"))
                elif records is None:
                    with open(records_path, "rb") as src:
                        shutil.copyfileobj(src, handle)
                    continue
                else:
                    handle.write(records_path.read_bytes())
                if records is None:
                    continue
                if i in kept:
                    records.extend(kept[i])
                else:  # reused by a resume: the file's own values
                    records.extend(written_records(records_path))
    n = len(questions)
    elapsed = time.perf_counter() - t_start
    meta: dict[str, Any] = {
        "name": config.name,
        "run_file": out.name,
        "split": split,
        "config": config.to_dict(),
        "inputs": inputs,
        "index_fingerprint": getattr(index, "fingerprint", None),
        "run_fingerprint": fingerprint,
        "package": {"name": "tempbench-repro", "version": _package_version()},
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
            "load_index_s": round(t_index, 4),
            "load_benchmark_s": round(t_bench, 4),
            "setup_s": round(t_setup, 4),
            "retrieve_s": round(t_retrieve, 4),
            "total_s": round(elapsed, 4),
            "questions_retrieved": n_todo,
            "questions_per_s": round(n_todo / t_retrieve, 1) if t_retrieve > 0 and n_todo else None,
        },
        "workers": workers,
        "resumed_shards": reused,
        "shards": len(bounds),
        "shard_size": shard_size,
    }
    write_meta(out, meta)
    shutil.rmtree(parts, ignore_errors=True)
    return meta
