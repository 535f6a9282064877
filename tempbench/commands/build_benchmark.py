"""``tempbench build-benchmark``: a TempBench-style benchmark from any TGB edge list (SPEC §1.3).

Reads the KG with :func:`retriever.kg.load_edgelist` and the labels with
:func:`retriever.labels.load_labels`, builds the questions with
:func:`tempbench.sample.builder.build_benchmark` and writes
``OUT/benchmark/benchmark_labelled.jsonl``, ``benchmark.jsonl`` and
``functional_negatives.jsonl``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from retriever import load_edgelist, load_labels
from tempbench.commands._numbers import SEED_RANGE, TARGET_N_RANGE, check_numbers
from tempbench.commands.sample import summary_rows
from tempbench.sample.builder import build_benchmark
from tempbench_core import atomic
from tempbench_core.console import info, print_table
from tempbench_core.errors import ConfigError
from tempbench_core.layout import BENCHMARK_IDS, BENCHMARK_LABELLED, FLAGS_FILE
from tempbench_core.outputs import claim_output_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: ``--kg``, ``--labels``, ``--out``, ``--target-n``, ``--seed``."""
    parser.add_argument("--kg", metavar="CSV", required=True, help="TGB edge list (ts,head,tail,relation_type)")
    parser.add_argument("--labels", metavar="FILE", help="labels TSV or JSON (ids without a label render as the id)")
    parser.add_argument("--out", metavar="DIR", required=True, help="output data root; files go to DIR/benchmark/")
    parser.add_argument("--target-n", type=int, default=10000, metavar="N",
                        help=f"number of questions, at most {TARGET_N_RANGE[1]:,} (default %(default)s)")
    parser.add_argument("--seed", type=int, default=42, metavar="N",
                        help=f"random seed, {SEED_RANGE[0]} to {SEED_RANGE[1]:,} (default %(default)s)")


def run(args: argparse.Namespace) -> int:
    """Build and write the benchmark, then print its summary tables."""
    if args.target_n < 1:
        raise ConfigError(f"--target-n must be a positive integer, got {args.target_n}")
    check_numbers(args, "target_n", "seed")
    claim_output_dir(args.out, "data-root", [args.kg, args.labels], create=False)  # fail before the slow part
    kg = load_edgelist(Path(args.kg))
    labels = load_labels(Path(args.labels)) if args.labels else {}
    bench = build_benchmark(kg.head, kg.tail, kg.relation, kg.year, kg.entity_ids, kg.relation_ids, labels,
                            target_n=args.target_n, seed=args.seed)
    out = claim_output_dir(args.out, "data-root", [args.kg, args.labels])
    atomic.write_jsonl(out / BENCHMARK_LABELLED, bench.labelled)
    atomic.write_jsonl(out / BENCHMARK_IDS, bench.ids)
    atomic.write_jsonl(out / FLAGS_FILE, bench.flags)
    info(f"wrote {len(bench.labelled)} questions to {out / 'benchmark'}")
    if bench.stats.get("skipped"):
        info(f"{bench.stats['skipped']} question slots could not be filled from this KG")
    print_table("Questions by split x complexity x operator", *summary_rows(bench.labelled))
    n = max(1, len(bench.flags))
    stale = sum(f["stale_functional"] for f in bench.flags)
    dist = sum(f["dist_functional"] for f in bench.flags)
    print_table("Functional negatives", ["type", "functional", "share"],
                [("stale", stale, stale / n), ("distractor", dist, dist / n)])
    return 0
