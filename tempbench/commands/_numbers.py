"""Numeric options with their ranges, checked where argparse reads them (issue 25, class 7).

A number outside what the code below can use must be a usage error (exit 2,
naming the option, the value and the range), never a ``ValueError`` from
``numpy.random.default_rng(-1)``, a ``ZeroDivisionError`` from zero
permutations or a ``MemoryError`` from a billion bootstrap replicates. Each
option states its range once, here, and its help text can quote it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

#: Seeds: what ``numpy.random.default_rng`` accepts (an integer >= 0), bounded so that a seed
#: that names a folder (the default sample's) stays a short name.
SEED_RANGE = (0, 2**64 - 1)
#: Bootstrap replicates and permutations: each is a row of a (replicates x questions) matrix.
#: 100,000 is a hundred times the default and ten times what papers report.
RESAMPLES_RANGE = (1, 100_000)
#: Worker processes: each is a forked process; beyond a thousand a typo, not a machine.
WORKERS_RANGE = (1, 1024)
#: Questions per shard, questions shown: any positive / non-negative count.
SHARD_RANGE = (1, 10**9)
SHOWN_RANGE = (0, 10**9)


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse ``type``: an integer from ``low`` to ``high`` (inclusive), else a usage error saying so."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
        if not low <= value <= high:
            shown = f"{value:,}" if len(text) <= 30 else f"{text.strip()[:20]}... ({len(text.strip())} characters)"
            raise argparse.ArgumentTypeError(f"expected an integer from {low:,} to {high:,}, got {shown}")
        return value

    parse.__name__ = "int"  # argparse names the type in its own messages
    return parse


def seed(text: str) -> int:
    """``--seed``: an integer in :data:`SEED_RANGE`."""
    return int_in(*SEED_RANGE)(text)


seed.__name__ = "int"
