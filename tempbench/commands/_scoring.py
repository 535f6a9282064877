"""Shared pieces of the evaluation subcommands: loading data, printing tables."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eval.bootstrap import LEVEL, N_BOOT, SEED
from eval.keyspace import DEFAULT_KEY, KEY_CHOICES
from retriever import load_benchmark, load_flags
from tempbench.commands._numbers import RESAMPLES_RANGE, SEED_RANGE, check_numbers
from tempbench.data import add_data_arguments, data_from_args
from tempbench_core.console import info
from tempbench_core.errors import ConfigError, MissingDataError
from tempbench_core.runfile import check_run_inputs
from tempbench_core.schema import SPLIT_CHOICES


def add_scoring_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``score`` and ``compare``."""
    parser.add_argument("--split", choices=SPLIT_CHOICES, help="score every benchmark question of this split; "
                        "questions absent from the run count as empty retrievals (SPEC §3.2) "
                        "(default: exactly the questions in the run)")
    parser.add_argument("--key", choices=KEY_CHOICES, default=DEFAULT_KEY,
                        help=f"key space for matching evidence to gold (SPEC §3.1; default {DEFAULT_KEY})")
    add_bootstrap_arguments(parser)
    add_force_argument(parser)
    add_data_arguments(parser, kg=False)


def add_bootstrap_arguments(parser: argparse.ArgumentParser, seed: bool = True) -> None:
    """``--boot`` (and ``--seed``): the bootstrap's replicates and seed, SPEC §3.7's defaults."""
    # argparse %-formats the help: the level's percent sign is doubled
    parser.add_argument("--boot", type=int, default=N_BOOT, metavar="N",
                        help=f"bootstrap replicates for the {LEVEL:.0%}% intervals, 1 to {RESAMPLES_RANGE[1]:,} "
                             f"(default {N_BOOT})")
    if seed:
        parser.add_argument("--seed", type=int, default=SEED, help=f"bootstrap seed, 0 to {SEED_RANGE[1]:,} "
                                                                    f"(default {SEED})")


def add_force_argument(parser: argparse.ArgumentParser) -> None:
    """``--force``: proceed when a run's metadata names other input files than the data given."""
    parser.add_argument("--force", action="store_true",
                        help="proceed even when a run's .meta.json says it was made on other data (other sha256) "
                             "than the data given here")


def check_runs(args: argparse.Namespace, *run_paths: str, names: tuple[str, ...] = ("benchmark", "benchmark_ids")) -> None:
    """Refuse (or, with ``--force``, warn about) runs made on other data than ``args`` names."""
    data = data_from_args(args)
    for path in run_paths:
        for problem in check_run_inputs(path, data, names, force=getattr(args, "force", False)):
            info(f"warning (--force): {path}: {problem}")


def load_inputs(args: argparse.Namespace, read_flags: bool = True
                ) -> tuple[list[dict[str, Any]], dict[str, dict[str, bool]] | None, Path | None]:
    """Benchmark records (id spaces merged when ``benchmark.jsonl`` is beside it) and flags.

    ``read_flags=False``: for a command that does not use them, no flags are
    read (``None``); a ``--flags`` file given must still exist.
    """
    paths = data_from_args(args)
    paths.require("benchmark")
    ids = paths.benchmark_ids if paths.benchmark_ids is not None and Path(paths.benchmark_ids) != Path(paths.benchmark) else None
    questions = load_benchmark(paths.benchmark, ids_path=ids)
    flags = None
    if paths.flags is not None and Path(paths.flags).exists():
        if read_flags:
            flags = load_flags(paths.flags)
    elif getattr(args, "flags", None):
        raise MissingDataError(f"flags file not found: {args.flags}")
    return questions, flags, paths.flags if flags is not None else None


def check_boot(args: argparse.Namespace) -> None:

    if args.boot < 1:
        raise ConfigError(f"--boot must be at least 1, got {args.boot}")
    check_numbers(args, "boot", "seed", "perm")


def ci_text(ci: list[float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"
