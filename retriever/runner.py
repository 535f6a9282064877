"""Run a configuration over a benchmark split and write the run file (SPEC §6.1).

Questions are retrieved in contiguous shards (:mod:`retriever.shards`), in file
order, by ``workers`` processes. Each shard is written atomically into
``<out>.parts/`` (its records plus a small stats file), named by a fingerprint
of everything that determines its bytes (configuration, sha256 of every input
file, split, package version, shard size). The final file is the concatenation
of the shards in question order, so it is byte-identical whatever the number
of workers, and ``resume=True`` reuses the complete shards of an interrupted
run with the same fingerprint: the result is byte-identical to an
uninterrupted run. The parts directory is removed when the run file and its
``.meta.json`` are written.

A failure to write (a full disk, an I/O error) while the shards, the run
file or its metadata are written is an :class:`~tempbench_core.errors.OutputError`
naming the run file (what the user asked for, never a shard) and leaves no
part of the run: the parts directory goes (even with ``resume``: the space is
what is missing), temporary files go with their writes, and a run file whose
metadata could not be written goes with the metadata of the run before (which
no longer describes it). A failure before the run file is replaced leaves the
run of before as it was. An interruption (Ctrl-C, a signal) keeps the parts
for a resume.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from retriever.benchmark import load_benchmark
from retriever.config import RetrieverConfig
from retriever.index import KGIndex, load_index
from retriever.pipeline import Retriever
from retriever.shards import (
    RunSetup,
    Shard,
    input_fingerprints,
    remove_run,
    retrieve_shard,
    run_fingerprint,
    run_meta,
    write_run,
)
from tempbench_core.atomic import atomic_open
from tempbench_core.digest import sha256_file
from tempbench_core.errors import ConfigError, OutputError
from tempbench_core.jsonl import dumps_json
from tempbench_core.layout import DataPaths, default_index_cache
from tempbench_core.memory import gc_paused
from tempbench_core.outputs import DEFAULT_OUT
from tempbench_core.progress import progress
from tempbench_core.schema import DEFAULT_SPLIT, require_split
from tempbench_core.workers import WorkerPool

#: Questions per shard unless a run asks otherwise (the run file does not depend on it).
SHARD_SIZE = 250


@dataclass
class RunOptions:
    """How :func:`run_to_file` runs; none of it changes the run file's bytes.

    Attributes
    ----------
    workers:
        Processes.
    resume:
        Reuse complete shards of an interrupted run with the same fingerprint.
    cache_dir:
        Index cache directory (default: the per-user cache).
    shard_size:
        Questions per shard (default :data:`SHARD_SIZE`); a resume reuses only
        shards of the same size.
    show_progress:
        A progress bar (default: on a terminal only).
    index, questions:
        The :class:`~retriever.index.KGIndex` and the whole benchmark
        (:func:`~retriever.benchmark.load_benchmark`) of the data, when the
        caller has loaded them already.
    provenance:
        The data's origin and the command line, as
        :meth:`tempbench_core.provenance.Provenance.to_json` gives them: the
        ``.meta.json`` records it (default: the origin found from the data,
        no command).
    """

    workers: int = 1
    resume: bool = False
    cache_dir: str | Path | None = None
    shard_size: int | None = None
    show_progress: bool | None = None
    index: KGIndex | None = None
    questions: list[dict[str, Any]] | None = None
    provenance: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"--workers must be >= 1 (got {self.workers})")
        self.shard_size = SHARD_SIZE if self.shard_size is None else int(self.shard_size)
        if self.shard_size < 1:
            raise ConfigError(f"--shard-size must be >= 1 (got {self.shard_size})")


def run_options(options: RunOptions | None, settings: Mapping[str, Any]) -> RunOptions:
    """``options``, or one made from keyword settings (an unknown name is an error that lists the valid ones)."""
    if options is not None and settings:
        raise TypeError("give run options either as RunOptions or as keywords, not both")
    if options is not None:
        return options
    names = [f.name for f in fields(RunOptions)]
    unknown = [k for k in settings if k not in names]
    if unknown:
        raise TypeError(f"unknown run option {unknown[0]!r} (expected one of {', '.join(names)})")
    return RunOptions(**settings)


@dataclass
class _RunContext:
    """What every shard of a run needs: the retriever, the split's questions, where the shards go."""

    retriever: Retriever
    questions: list[dict[str, Any]]
    parts: Path
    fingerprint: str
    bounds: list[tuple[int, int]]


def _shard_paths(ctx: _RunContext, i: int) -> tuple[Path, Path]:
    base = f"{ctx.fingerprint[:16]}-{i:05d}"
    return ctx.parts / f"{base}.jsonl", ctx.parts / f"{base}.stats.json"


def _write_shard(ctx: _RunContext, i: int) -> int:
    """Retrieve shard ``i`` and write it (stats first: the records file marks completion); its question count."""
    lo, hi = ctx.bounds[i]
    shard = retrieve_shard(ctx.retriever, ctx.questions, lo, hi)
    # the records' checksum: a resumed run recomputes a shard edited or damaged since
    stats = {**shard.stats, "sha256": hashlib.sha256(shard.text).hexdigest()}
    records_path, stats_path = _shard_paths(ctx, i)
    # scratch files, checked by their sha256 when a resume reads them: no fsync needed
    with atomic_open(stats_path, "w", fsync=False) as handle:
        handle.write(dumps_json(stats, indent=None) + "\n")
    with atomic_open(records_path, "wb", fsync=False) as handle:
        handle.write(shard.text)
    return hi - lo


def _shard_complete(ctx: _RunContext, i: int) -> bool:
    lo, hi = ctx.bounds[i]
    records_path, stats_path = _shard_paths(ctx, i)
    if not (records_path.exists() and stats_path.exists()):
        return False
    try:
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
        digest = sha256_file(records_path)
    except (OSError, ValueError):
        return False
    ids = [q.get("id") for q in ctx.questions[lo:hi]]
    return isinstance(stats, dict) and stats.get("ids") == ids and stats.get("sha256") == digest


def run_to_file(
    config: RetrieverConfig,
    data: DataPaths,
    split: str = DEFAULT_SPLIT,
    out_path: str | Path | None = None,
    options: RunOptions | None = None,
    **settings: Any,
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
    options, **settings:
        How the run is made (:class:`RunOptions`), or its fields as keywords
        (``workers=2, resume=True``).

    Returns
    -------
    dict
        The metadata written to ``<name>.meta.json`` (counts, anchor recall,
        coverage, mean pool size, timings, fingerprints).
    """
    opts = run_options(options, settings)
    data.require("kg", "benchmark")
    t_start = time.perf_counter()
    out = Path(out_path) if out_path is not None else Path(DEFAULT_OUT) / "runs" / f"{config.name}.jsonl"
    cache = Path(opts.cache_dir) if opts.cache_dir is not None else default_index_cache()

    t0 = time.perf_counter()
    index = opts.index if opts.index is not None else load_index(data.kg, data.labels, benchmark_dir=data.benchmark,
                                                                   cache_dir=cache)
    t_index = time.perf_counter() - t0
    t0 = time.perf_counter()
    questions = opts.questions if opts.questions is not None else load_benchmark(data.benchmark, data.benchmark_ids)
    questions = require_split(questions, split)
    t_bench = time.perf_counter() - t0

    parts = out.with_name(out.name + ".parts")
    t0 = time.perf_counter()
    inputs = input_fingerprints(data)  # read before: a failure in the block is one of writing
    check_parts_folder(out, parts)  # before the block, which removes the folder on a failure
    with _whole_or_nothing(out, parts) as replaced:
        if parts.exists() and not opts.resume:
            shutil.rmtree(parts)
        parts.mkdir(parents=True, exist_ok=True)
        (parts / PARTS_MARK).touch()
        ctx = _RunContext(Retriever(index, config), questions, parts,
                          run_fingerprint(config, inputs, split, opts.shard_size),
                          Shard.bounds(len(questions), opts.shard_size))
        todo = [i for i in range(len(ctx.bounds)) if not (opts.resume and _shard_complete(ctx, i))]
        t_setup = time.perf_counter() - t0
        workers = opts.workers if len(todo) > 1 else 1
        # The collector is paused while retrieving: the records made and dropped by the hundred
        # thousand would have it walk the index's labels and the benchmark over and over.
        with gc_paused():
            t0 = time.perf_counter()
            desc = f"run {config.name} ({split})"
            with WorkerPool(ctx, workers) as pool:
                done = pool.map_unordered(_write_shard, [(i,) for i in todo])
                for _ in progress(done, total=len(todo), description=desc, enabled=opts.show_progress):
                    pass
            t_retrieve = time.perf_counter() - t0
            shard_files = [_shard_paths(ctx, i) for i in range(len(ctx.bounds))]
            stats = [json.loads(stats_path.read_text(encoding="utf-8")) for _, stats_path in shard_files]
            write_run(out, [records_path for records_path, _ in shard_files])
            replaced.append(out)
        setup = RunSetup(workers=opts.workers, shard_size=opts.shard_size, resumed_shards=len(ctx.bounds) - len(todo),
                         questions_retrieved=sum(ctx.bounds[i][1] - ctx.bounds[i][0] for i in todo),
                         timings={"load_index_s": t_index, "load_benchmark_s": t_bench, "setup_s": t_setup,
                                  "retrieve_s": t_retrieve, "total_s": time.perf_counter() - t_start},
                         provenance=opts.provenance)
        meta = run_meta(config, data, index, split, out, stats, setup)
    return meta


#: The file that marks ``<out>.parts/`` as the shard folder tempbench made (the only one it removes or resumes).
PARTS_MARK = ".tempbench-parts"


def check_parts_folder(out: Path, parts: Path) -> None:
    """Refuse a ``parts`` folder that tempbench did not make: it is removed (or resumed) by the run of ``out``.

    Ours holds :data:`PARTS_MARK`; an empty folder is taken too. A symbolic
    link, a file, or a folder of other files is someone's and is left alone.
    """
    if parts.is_symlink() or (parts.exists() and not parts.is_dir()):
        raise OutputError(out, f"its shard folder {parts} is a link or a file, not a folder tempbench made; move it "
                               "away (tempbench would remove it)")
    if parts.is_dir() and any(parts.iterdir()) and not (parts / PARTS_MARK).is_file():
        raise OutputError(out, f"its shard folder {parts} holds files tempbench did not write (no {PARTS_MARK} in it); "
                               "move it away (tempbench would remove it)")


@contextlib.contextmanager
def _whole_or_nothing(out: Path, parts: Path) -> Iterator[list[Path]]:
    """Remove ``parts`` after the block; on a failure to write, every part of the run too (module docstring).

    The block appends ``out`` to the list it is given once the new run file
    has replaced the old one. The failure becomes an
    :class:`~tempbench_core.errors.OutputError` naming ``out``, with the
    problem of the write that failed (e.g. the OS's "No space left on device").
    """
    replaced: list[Path] = []
    try:
        yield replaced
    except (OutputError, OSError) as exc:
        shutil.rmtree(parts, ignore_errors=True)
        if replaced:
            remove_run(out)
        problem = exc.problem if isinstance(exc, OutputError) else (exc.strerror or str(exc))
        raise OutputError(out, problem) from None
    shutil.rmtree(parts, ignore_errors=True)
