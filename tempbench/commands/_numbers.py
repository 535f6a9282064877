"""Numeric options and their ranges, checked before a command does anything (issue 25, class 7).

A number outside what the code can use must be a user error (a
:class:`~tempbench_core.errors.ConfigError`: exit 2, naming the option, the
value and the range), never a ``ValueError`` from ``numpy.random.default_rng(-1)``,
a ``ZeroDivisionError`` from no permutations, a ``MemoryError`` from a billion
bootstrap replicates or thousands of forked workers. Each option's range is
stated once, here; the options' help texts quote it, and each command calls
:func:`check_numbers` first.
"""

from __future__ import annotations

import argparse

from tempbench_core.errors import ConfigError

#: Seeds: what ``numpy.random.default_rng`` accepts (an integer >= 0), bounded so that a seed
#: that names a folder (the default sample's) stays a short name.
SEED_RANGE = (0, 2**64 - 1)
#: Bootstrap replicates and permutations: each is a row of a (replicates x questions) matrix.
#: 100,000 is a hundred times the default and ten times what papers report.
RESAMPLES_RANGE = (1, 100_000)
#: Worker processes: each is a forked process; beyond a thousand a typo, not a machine.
WORKERS_RANGE = (1, 1024)
#: Questions per shard; questions shown in detail.
SHARD_RANGE = (1, 10**9)
SHOWN_RANGE = (0, 10**9)
#: Questions of a built benchmark (TempBench has 8,710): the builder's own bound
#: (tempbench.sample.builder.MAX_TARGET_N, not imported here: that would load numpy for every command).
TARGET_N_RANGE = (1, 1_000_000)

#: Option destination -> its range.
RANGES: dict[str, tuple[int, int]] = {
    "seed": SEED_RANGE, "boot": RESAMPLES_RANGE, "perm": RESAMPLES_RANGE, "workers": WORKERS_RANGE,
    "shard_size": SHARD_RANGE, "show": SHOWN_RANGE, "target_n": TARGET_N_RANGE,
}


def check_numbers(args: argparse.Namespace, *dests: str) -> None:
    """Refuse any of the options ``dests`` (argparse destinations) outside its range in :data:`RANGES`.

    An option left at ``None`` (its default means "choose for me") is not checked.
    """
    for dest in dests:
        value = getattr(args, dest, None)
        if value is None:
            continue
        low, high = RANGES[dest]
        if not low <= value <= high:
            raise ConfigError(f"--{dest.replace('_', '-')} must be an integer from {low:,} to {high:,}, got {value:,}")
