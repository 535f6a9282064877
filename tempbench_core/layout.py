"""Where things live: the data-root layout (SPEC §1.5), caches and the shipped configs.

A data root holds the release files under fixed names; explicit single-file
paths override them. Each file may also be stored gzip-compressed under the same
name plus ``.gz`` (``tkgl-smallpedia_edgelist.csv.gz``, ``labels.tsv.gz``,
``benchmark/benchmark.jsonl.gz``, ...); the plain file wins when both exist, and
readers decompress transparently (:func:`tempbench_core.jsonl.open_input`).
This module only *finds* files: generating the default sample when no root is
given is the application's job (:mod:`tempbench.data`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tempbench_core.errors import MissingDataError
from tempbench_core.jsonl import require_dir

KG_FILE = "tkgl-smallpedia_edgelist.csv"
LABELS_TSV = "labels.tsv"
LABELS_JSON = "labels.json"
BENCHMARK_DIR = "benchmark"
BENCHMARK_LABELLED = "benchmark/benchmark_labelled.jsonl"
BENCHMARK_IDS = "benchmark/benchmark.jsonl"
FLAGS_FILE = "benchmark/functional_negatives.jsonl"
BASELINES_DIR = "baselines"
MANIFEST = "MANIFEST.json"
#: Where ``tempbench fetch`` records what it fetched: size, sha256, source and date of
#: every file it laid out (:mod:`tempbench_core.lock`).
LOCK_FILE = "tempbench.lock"
#: The record of earlier versions of ``tempbench fetch``; read (as a lock) when a root
#: has no ``tempbench.lock``, replaced by one at the next fetch.
PROVENANCE = "provenance.json"
#: Suffix of a gzip-compressed input found under a layout name (SPEC §1.5 names + ``.gz``).
GZ = ".gz"

#: The generated sample that stands in for the data when none is given (SPEC §5): its scale and seed.
DEFAULT_SCALE = "small"
DEFAULT_SEED = 42


def cache_home() -> Path:
    """Per-user cache root: ``$TEMPBENCH_CACHE``, else ``$XDG_CACHE_HOME/tempbench``."""
    explicit = os.environ.get("TEMPBENCH_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tempbench"


def default_sample_dir(scale: str = DEFAULT_SCALE, seed: int = DEFAULT_SEED) -> Path:
    """Directory of the generated sample for ``scale`` and ``seed``."""
    return cache_home() / "sample" / f"{scale}-seed{seed}"


def default_index_cache() -> Path:
    """Directory for cached KG/BM25 indexes."""
    return cache_home() / "index"


def shipped_configs_dir() -> Path:
    """The ``configs/`` directory, inside the wheel (``tempbench_core/configs``) or in a source checkout."""
    packaged = resources.files("tempbench_core") / "configs"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parents[1] / "configs"
    if checkout.is_dir():
        return checkout
    raise MissingDataError("the shipped configs/ directory is missing from this installation")


@dataclass(frozen=True)
class DataPaths:
    """Resolved input files of one data root (SPEC §1.5)."""

    root: Path | None
    kg: Path
    labels: Path | None
    benchmark: Path
    benchmark_ids: Path | None
    flags: Path | None
    baselines: Path | None

    def require(self, *names: str) -> None:
        """Raise a clear error when one of the named files does not exist."""
        for name in names:
            path = getattr(self, name)
            if path is None or not Path(path).exists():
                raise MissingDataError(f"{name} file not found: {path} (give --{name.replace('_', '-')} or --data DIR)")

    def input_files(self) -> list[Path]:
        """The input files that exist (an output must never be one of them).

        Besides the data files, the root's records of where they came from
        (:data:`MANIFEST`, :data:`LOCK_FILE`, :data:`PROVENANCE`): every command
        reads them for its outputs' provenance, and the root is not verifiable
        without them.
        """
        files = [self.kg, self.labels, self.benchmark, self.benchmark_ids, self.flags]
        if self.root is not None:
            files += [Path(self.root) / name for name in (MANIFEST, LOCK_FILE, PROVENANCE)]
        return [Path(f) for f in files if f is not None and Path(f).is_file()]

    @property
    def generated(self) -> bool:
        """Whether the root was written by ``tempbench sample`` (it holds the sample's manifest)."""
        return self.root is not None and (Path(self.root) / MANIFEST).exists()


def layout_candidates(*names: str) -> list[str]:
    """Each layout name followed by its ``.gz`` form, in lookup order (plain first)."""
    return [candidate for name in names for candidate in (name, name + GZ)]


def first_existing(root: Path, *names: str) -> Path | None:
    """The first of ``names`` (each also with ``.gz``) that exists under ``root``, or ``None``."""
    for name in layout_candidates(*names):
        if (root / name).exists():
            return root / name
    return None


def find_inputs(
    root: str | Path | None,
    kg: str | Path | None = None,
    labels: str | Path | None = None,
    benchmark: str | Path | None = None,
    flags: str | Path | None = None,
) -> DataPaths:
    """The input files of a data root, each overridable by an explicit path (SPEC §1.5).

    ``benchmark.jsonl`` and ``functional_negatives.jsonl`` are looked up beside
    the labelled benchmark file; ``baselines/`` only under a root. Every name is
    also found with ``.gz`` appended (the plain file first).
    """
    root = Path(root) if root is not None else None
    if root is not None:
        require_dir(root, "data directory")

    def pick(explicit: str | Path | None, *names: str) -> Path | None:
        if explicit is not None:
            return Path(explicit)
        return first_existing(root, *names) if root is not None else None

    kg_path = pick(kg, KG_FILE)
    bench_path = pick(benchmark, BENCHMARK_LABELLED)
    bench_dir = bench_path.parent if bench_path is not None else None
    ids_path = first_existing(bench_dir, Path(BENCHMARK_IDS).name) if bench_dir is not None else None
    flags_path = Path(flags) if flags is not None else (
        first_existing(bench_dir, Path(FLAGS_FILE).name) if bench_dir is not None else None
    )
    baselines = root / BASELINES_DIR if root is not None and (root / BASELINES_DIR).is_dir() else None
    return DataPaths(
        root=root,
        kg=kg_path if kg_path is not None else (root / KG_FILE if root else Path(KG_FILE)),
        labels=pick(labels, LABELS_TSV, LABELS_JSON),
        benchmark=bench_path if bench_path is not None else (root / BENCHMARK_LABELLED if root else Path(BENCHMARK_LABELLED)),
        benchmark_ids=ids_path,
        flags=flags_path,
        baselines=baselines,
    )
