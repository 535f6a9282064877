"""Where things live: the generated default data, shipped configs, data roots.

The data root follows the release layout (SPEC §1.5). Without ``--data`` every
command uses the generated sample (SPEC §5) under a per-user cache directory,
generating it on first use.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from retriever.errors import MissingDataError

KG_FILE = "tkgl-smallpedia_edgelist.csv"
LABELS_TSV = "labels.tsv"
LABELS_JSON = "labels.json"
BENCHMARK_LABELLED = "benchmark/benchmark_labelled.jsonl"
BENCHMARK_IDS = "benchmark/benchmark.jsonl"
FLAGS_FILE = "benchmark/functional_negatives.jsonl"
BASELINES_DIR = "baselines"

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
    """The ``configs/`` directory, inside the wheel or in a source checkout."""
    packaged = resources.files("retriever") / "configs"
    if packaged.is_dir():
        return Path(str(packaged))
    checkout = Path(__file__).resolve().parent.parent / "configs"
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


def _first_existing(root: Path, *names: str) -> Path | None:
    for name in names:
        if (root / name).exists():
            return root / name
    return None


def resolve_data(
    data: str | Path | None = None,
    kg: str | Path | None = None,
    labels: str | Path | None = None,
    benchmark: str | Path | None = None,
    flags: str | Path | None = None,
) -> DataPaths:
    """Resolve the input files from a data root plus single-file overrides.

    With neither ``data`` nor ``kg``/``benchmark`` given, the generated default
    sample is used (and generated if it is not there yet).
    """
    if data is None and kg is None and benchmark is None:
        root = ensure_default_sample()
    else:
        root = Path(data) if data is not None else None
    if root is not None and not root.is_dir():
        raise MissingDataError(f"data directory not found: {root}")

    def pick(explicit: str | Path | None, *names: str) -> Path | None:
        if explicit is not None:
            return Path(explicit)
        return _first_existing(root, *names) if root is not None else None

    kg_path = pick(kg, KG_FILE)
    bench_path = pick(benchmark, BENCHMARK_LABELLED)
    bench_dir = bench_path.parent if bench_path is not None else None
    ids_path = _first_existing(bench_dir, Path(BENCHMARK_IDS).name) if bench_dir is not None else None
    flags_path = Path(flags) if flags is not None else (
        _first_existing(bench_dir, Path(FLAGS_FILE).name) if bench_dir is not None else None
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


def ensure_default_sample(scale: str = DEFAULT_SCALE, seed: int = DEFAULT_SEED) -> Path:
    """Return the default sample directory, generating it on first use."""
    out = default_sample_dir(scale, seed)
    if not (out / "MANIFEST.json").exists():
        from retriever.sample import generate_sample

        generate_sample(out, scale=scale, seed=seed)
    return out


def add_data_arguments(parser: argparse.ArgumentParser, kg: bool = True, benchmark: bool = True) -> None:
    """The shared ``--data/--kg/--labels/--benchmark/--flags`` options."""
    group = parser.add_argument_group("data (default: the generated sample, SPEC §5)")
    group.add_argument("--data", metavar="DIR", help="data root laid out like the release (SPEC §1.5)")
    if kg:
        group.add_argument("--kg", metavar="CSV", help="TGB edge list; overrides DIR/tkgl-smallpedia_edgelist.csv")
        group.add_argument("--labels", metavar="FILE", help="labels TSV or JSON; overrides DIR/labels.tsv")
    if benchmark:
        group.add_argument("--benchmark", metavar="JSONL", help="benchmark_labelled.jsonl; overrides DIR/benchmark/")
        group.add_argument("--flags", metavar="JSONL", help="functional_negatives.jsonl; default beside the benchmark")


def data_from_args(args: argparse.Namespace) -> DataPaths:
    """:func:`resolve_data` from parsed ``add_data_arguments`` options."""
    return resolve_data(
        data=getattr(args, "data", None),
        kg=getattr(args, "kg", None),
        labels=getattr(args, "labels", None),
        benchmark=getattr(args, "benchmark", None),
        flags=getattr(args, "flags", None),
    )
