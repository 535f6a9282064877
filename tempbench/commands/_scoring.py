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
from tempbench_core.jsonl import require_file
from tempbench_core.runchecks import check_run_count, check_run_inputs, check_run_split
from tempbench_core.schema import SPLIT_CHOICES, select_split


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
    """``--force``: proceed, with a warning, when a run's ``.meta.json`` says it is not what it is used as."""
    parser.add_argument("--force", action="store_true",
                        help="proceed (with a warning) even when a run's .meta.json says it was made on other data "
                             "(other sha256) than the data given here, on another split than --split, or with "
                             "another number of records than its file holds")


#: The inputs a run is checked against by default: those that decide its scores.
SCORED_INPUTS = ("benchmark", "benchmark_ids")
#: The inputs a run is checked against by a command that retrieves or explains with the KG.
RETRIEVAL_INPUTS = ("kg", "labels", "benchmark", "benchmark_ids")


def check_runs(args: argparse.Namespace, *run_paths: str, names: tuple[str, ...] = SCORED_INPUTS) -> None:
    """Refuse (or, with ``--force``, warn about) runs that are not what their ``.meta.json`` says they are for.

    In order, each a refusal of its own (:mod:`tempbench_core.runfile`): a
    ``.meta.json`` that is no JSON object; one that names other input files
    (``names``, by sha256) than ``args`` gives; then :func:`check_run_contents`
    (the number of records, the split).
    """
    for path in run_paths:
        require_file(path, "run file")  # a missing run is said so, not as a missing .meta.json
    data = data_from_args(args)
    force = getattr(args, "force", False)
    for path in run_paths:
        for problem in check_run_inputs(path, data, names, force=force):
            info(f"warning (--force): {path}: {problem}")
    check_run_contents(args, *run_paths)


def check_run_contents(args: argparse.Namespace, *run_paths: str | Path) -> None:
    """Refuse (or, with ``--force``, warn about) runs whose records do not fit their ``.meta.json`` or ``--split``.

    The number of records against the ``.meta.json``'s ``counts.questions``
    (:func:`~tempbench_core.runchecks.check_run_count`); when ``args.split`` is
    set, the run's split against it (:func:`~tempbench_core.runchecks.check_run_split`:
    the one rule of every command that takes ``--split`` and a run).
    """
    force = getattr(args, "force", False)
    split = getattr(args, "split", None)
    found: dict[str, set[str] | None] = {}

    def split_ids() -> set[str] | None:
        """The ids of ``--split``'s benchmark questions, read once and only for a run without a recorded split."""
        if "ids" not in found:
            paths = data_from_args(args)
            found["ids"] = None
            if paths.benchmark is not None and Path(paths.benchmark).is_file():
                found["ids"] = {str(q["id"]) for q in select_split(load_benchmark(paths.benchmark), split)}
        return found["ids"]

    for path in run_paths:
        for problem in check_run_count(path, force=force):
            info(f"warning (--force): {problem}")
        if split is not None:
            for problem in check_run_split(path, split, split_ids, force=force):
                info(f"warning (--force): {problem}")


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
