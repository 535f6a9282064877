"""Small shared pieces of the reproducibility kernels: exact means over defined values, question chunks."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

#: Elements of the largest ``(questions, width, width)`` temporary a kernel makes at once.
CHUNK_ELEMENTS = 4_000_000


def fmean(values: np.ndarray) -> float | None:
    """The correctly rounded mean (:func:`math.fsum`) of the non-NaN values; ``None`` when there are none.

    Exact summation makes "the mean is 0" an exact test (SPEC §8: ER and ΔRI are
    undefined then) and the figures independent of summation order.
    """
    kept = values[~np.isnan(values)]
    if not len(kept):
        return None
    return math.fsum(kept.tolist()) / len(kept)


def chunks(lengths: np.ndarray, elements: int = CHUNK_ELEMENTS) -> Iterator[np.ndarray]:
    """Index arrays of consecutive questions whose ``count * width**2`` stays near ``elements``.

    ``lengths`` are the per-question list lengths; a question longer than the
    budget allows still gets a chunk of its own.
    """
    n = len(lengths)
    start = 0
    while start < n:
        stop = start
        width = 0
        while stop < n:
            w = max(width, int(lengths[stop]))
            if stop > start and (stop - start + 1) * max(w, 1) ** 2 > elements:
                break
            width = w
            stop += 1
        yield np.arange(start, stop)
        start = stop
