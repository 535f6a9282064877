"""``tempbench index``: build (or load from the cache) the KG arrays and BM25 index.

Prints the index statistics (SPEC §1.1, §2.1) and the time of each stage.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from retriever import load_index
from tempbench.data import CACHE_DIR_HELP, add_data_arguments, data_from_args
from tempbench_core.console import info, print_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: data selection, cache directory, ``--no-cache``, ``--rebuild``."""
    add_data_arguments(parser, benchmark=True, flags=False)
    parser.add_argument("--cache", "--cache-dir", dest="cache", metavar="DIR", help=CACHE_DIR_HELP)
    parser.add_argument("--no-cache", action="store_true", help="build in memory; neither read nor write the cache")
    parser.add_argument(
        "--no-harvest",
        action="store_true",
        help="do not fill missing labels from the benchmark files (SPEC §1.2)",
    )


def run(args: argparse.Namespace) -> int:
    """Build or load the index and print its statistics table."""

    data = data_from_args(args)
    data.require("kg")
    benchmark_dir = None
    if not args.no_harvest and data.benchmark is not None and Path(data.benchmark).is_file():
        benchmark_dir = data.benchmark
    cache = False if args.no_cache else (args.cache or None)
    start = time.perf_counter()
    index = load_index(data.kg, data.labels, benchmark_dir, cache_dir=cache, progress=info)
    total = time.perf_counter() - start
    kg, bm25 = index.kg, index.bm25
    years = sorted(set(kg.year.tolist())) if kg.n_rows else []
    labelled = sum(1 for e, lab in zip(kg.entity_ids, index.entity_labels, strict=True) if lab != e)
    rows: list[tuple[str, object]] = [
        ("KG file", str(data.kg)),
        ("labels file", str(data.labels) if data.labels else None),
        ("labels harvested from", str(benchmark_dir) if benchmark_dir else None),
        ("rows", kg.n_rows),
        ("entities", kg.n_entities),
        ("entities with a label", labelled),
        ("relations", kg.n_relations),
        ("years", f"{years[0]}-{years[-1]} ({len(years)} distinct)" if years else None),
        ("documents N", bm25.N),
        ("distinct (s, r, o) documents", int(bm25.group_len.shape[0])),
        ("vocabulary", bm25.vocab_size),
        ("avgdl", f"{bm25.avgdl:.6f}"),
        ("fingerprint", index.fingerprint[:16]),
        ("cache", str(index.cache_path) if index.cache_path else "disabled"),
        ("loaded from cache", "yes" if index.from_cache else "no"),
    ]
    for stage in ("fingerprint", "load_csv", "labels", "incidence", "bm25", "cache_save", "cache_load"):
        if stage in index.timings:
            rows.append((f"time: {stage.replace('_', ' ')} (s)", float(index.timings[stage])))
    rows.append(("time: total (s)", total))
    print_table("KG index", ["statistic", "value"], rows)
    return 0
