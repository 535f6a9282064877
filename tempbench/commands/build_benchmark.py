"""``tempbench build-benchmark``: a TempBench-style benchmark from any TGB edge list (SPEC §1.3), as a data root.

Reads the KG with :func:`retriever.kg.load_edgelist` and the labels with
:func:`retriever.labels.load_labels`, builds the questions with
:func:`tempbench.sample.builder.build_benchmark` and writes
``OUT/benchmark/benchmark_labelled.jsonl``, ``benchmark.jsonl`` and
``functional_negatives.jsonl``; then places the KG and labels in ``OUT`` under
their layout names (a hard link, else a copy, never a move) and records it all
in ``OUT/tempbench.lock`` (:mod:`tempbench.commands._data_root` has the rules),
so that ``tempbench check --data OUT`` and ``reproduce --data OUT`` take ``OUT``
as it is. ``--out`` may be the KG's own folder.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from retriever import load_edgelist, load_labels
from tempbench.check.origin import command_line
from tempbench.commands import _data_root as root_files
from tempbench.commands._numbers import SEED_RANGE, TARGET_N_RANGE, check_numbers
from tempbench.commands.sample import summary_rows
from tempbench.sample.builder import (
    DEFAULT_BUILD_SEED,
    DEFAULT_TARGET_N,
    Benchmark,
    EdgeColumns,
    build_benchmark,
    split_plan,
)
from tempbench_core import atomic
from tempbench_core.console import info, print_table
from tempbench_core.errors import ConfigError
from tempbench_core.jsonl import require_file
from tempbench_core.layout import BENCHMARK_IDS, BENCHMARK_LABELLED, FLAGS_FILE
from tempbench_core.lock import read_lock
from tempbench_core.outputs import claim_output_dir, owning_ledger
from tempbench_core.version import __version__

BENCHMARK_FILES = (BENCHMARK_LABELLED, BENCHMARK_IDS, FLAGS_FILE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: ``--kg``, ``--labels``, ``--out``, ``--target-n``, ``--seed``."""
    parser.add_argument("--kg", metavar="CSV", required=True, help="TGB edge list (ts,head,tail,relation_type)")
    parser.add_argument("--labels", metavar="FILE", help="labels TSV or JSON (ids without a label render as the id)")
    parser.add_argument("--out", metavar="DIR", required=True,
                        help="output data root (may be the KG's folder): DIR/benchmark/, the KG and labels under "
                             "their layout names (hard links, else copies) and DIR/tempbench.lock")
    parser.add_argument("--target-n", type=int, default=DEFAULT_TARGET_N, metavar="N",
                        help=f"number of questions, at most {TARGET_N_RANGE[1]:,} (default %(default)s)")
    parser.add_argument("--seed", type=int, default=DEFAULT_BUILD_SEED, metavar="N",
                        help=f"random seed, {SEED_RANGE[0]} to {SEED_RANGE[1]:,} (default %(default)s)")


def recorded_command(kg: Path, labels: Path | None, out: Path, target_n: int, seed: int) -> str:
    """The command line that rebuilds this root: every option given explicitly, paths absolute."""
    words = ["tempbench", "build-benchmark", "--kg", str(kg)]
    if labels is not None:
        words += ["--labels", str(labels)]
    words += ["--out", str(out), "--target-n", str(target_n), "--seed", str(seed)]
    return command_line(words)


def _inputs(args: argparse.Namespace) -> tuple[Path, Path | None, Path]:
    kg = Path(args.kg)
    labels = Path(args.labels) if args.labels else None
    for flag, path in (("--kg", kg), ("--labels", labels)):
        if path is not None:
            require_file(path, f"{flag} file")
    out = Path(args.out)
    return kg.resolve(), None if labels is None else labels.resolve(), out


def _claim(out: Path, kg: Path, labels: Path | None, create: bool) -> tuple[Path, bool]:
    """``out`` as the output root, and whether its benchmark files are ours to rewrite."""
    if root_files.is_kg_folder(out, kg):
        # the user's own folder: no ledger written (it must not become a folder other commands may fill); a
        # generated root's benchmark (its MANIFEST.json) is sample's, not ours: the lock decides file by file
        owner = owning_ledger(out)
        return out, owner is not None and owner[1] == "data-root"
    return claim_output_dir(out, "data-root", [kg, labels], create=create), True


def check_splits(stats: dict[str, Any], target_n: int) -> None:
    """Refuse a benchmark in which a split of the plan got no question (the KG ran out before it).

    The questions are drawn split by split (train, then dev, then test), so a
    KG that cannot fill ``--target-n`` runs out in the last splits: a root
    without test questions cannot be run on its default split.
    """
    built = stats.get("per_split", {})
    plan = {name: size for name, size, _ in split_plan(target_n)}
    empty = [name for name, size in plan.items() if size and not built.get(name)]
    if empty and stats.get("built"):
        counts = ", ".join(f"{name} {built.get(name, 0):,}" for name in plan)
        raise ConfigError(f"the KG filled {stats['built']:,} of the {target_n:,} questions asked, and none of split "
                          f"{', '.join(map(repr, empty))} ({counts}): the splits are filled in turn, so ask for fewer "
                          f"(try --target-n {max(1, stats['built'] // 2):,})")
    shares = {name: built.get(name, 0) / max(stats.get("built", 0), 1) for name in plan}
    if any(shares[name] < plan[name] / target_n / 2 for name in plan):
        info("warning: the KG ran out before the last splits were filled: their shares are "
             + ", ".join(f"{name} {shares[name]:.0%}" for name in plan) + " (planned "
             + ", ".join(f"{plan[name] / target_n:.0%}" for name in plan)
             + f"); ask for fewer to keep them (try --target-n {max(1, stats['built'] // 2):,})")


def run(args: argparse.Namespace) -> int:
    """Build and write the benchmark, place the KG and labels, write the lock, then print the summary tables."""
    if args.target_n < 1:
        raise ConfigError(f"--target-n must be a positive integer, got {args.target_n}")
    check_numbers(args, "target_n", "seed")
    kg_path, labels_path, out = _inputs(args)
    out, claimed = _claim(out, kg_path, labels_path, create=False)  # fail before the slow part
    lock = read_lock(out)  # an unreadable lock is an error before the slow part; none is an empty one
    placements = root_files.plan_placements(out, kg_path, labels_path, lock)
    root_files.check_benchmark_targets(out, list(BENCHMARK_FILES), lock, claimed)
    kg = load_edgelist(kg_path)
    labels = load_labels(labels_path) if labels_path else {}
    bench = build_benchmark(EdgeColumns.of(kg), labels, target_n=args.target_n, seed=args.seed)
    check_splits(bench.stats, args.target_n)
    out, _ = _claim(out, kg_path, labels_path, create=True)
    # the three files are read as one benchmark: an interrupt while writing leaves none of them
    atomic.write_jsonl_together({out / BENCHMARK_LABELLED: bench.labelled, out / BENCHMARK_IDS: bench.ids,
                                 out / FLAGS_FILE: bench.flags})
    info(f"wrote {len(bench.labelled)} questions to {out / 'benchmark'}")
    for p in placements:
        if not p.keep:
            how = root_files.place(p.source, out / p.rel)
            info(f"{how} {p.source} as {out / p.rel}")
    command = recorded_command(kg_path, labels_path, out.resolve(), args.target_n, args.seed)
    entry = root_files.build_entry(kg_path, labels_path, args.seed, args.target_n, len(bench.labelled),
                                   f"tempbench {__version__}", command)
    inputs = [kg_path] + ([labels_path] if labels_path is not None else [])
    lock_path = root_files.write_root_lock(out, placements, list(BENCHMARK_FILES), inputs, entry)
    info(f"wrote {lock_path}; next: tempbench check --data {out}")
    if bench.stats.get("skipped"):
        info(f"{bench.stats['skipped']} question slots could not be filled from this KG")
    _print_summary(bench)
    return 0


def _print_summary(bench: Benchmark) -> None:
    print_table("Questions by split x complexity x operator", *summary_rows(bench.labelled))
    n = max(1, len(bench.flags))
    stale = sum(f["stale_functional"] for f in bench.flags)
    dist = sum(f["dist_functional"] for f in bench.flags)
    print_table("Functional negatives", ["type", "functional", "share"],
                [("stale", stale, stale / n), ("distractor", dist, dist / n)])

