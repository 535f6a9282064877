"""Small shared pieces of the reproducibility kernels: exact sums and means over defined values, question chunks."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

#: Elements of the largest ``(questions, width, width)`` temporary a kernel makes at once.
CHUNK_ELEMENTS = 4_000_000

#: Below this many values :func:`math.fsum` of a list is faster than :func:`exact_sum`'s array work.
_SHORT = 64
#: :func:`exact_sum` splits each 53-bit significand in two halves of this many bits (and the rest).
_HALF = 26
#: Values of at most this magnitude (and at most :data:`_MOST` of them) have an exact sum far from overflow.
_LARGEST = 2.0 ** 990
#: Sums of this many half-significands (each below ``2**27`` in magnitude) stay exact in a float64 accumulator.
_MOST = 2 ** 25


def exact_sum(values: np.ndarray) -> float:
    """``math.fsum(values.tolist())`` of a float64 array, with array operations where that is faster.

    fsum returns the exact sum correctly rounded (round half to even). Here
    each value is ``m * 2**e`` with an integer significand ``m`` (``|m| <
    2**53``); the significands are split into 26-bit halves and summed per
    exponent as float64 (whole numbers below ``2**53``, so every partial sum
    is exact whatever the order); the exact total is then a Python integer
    times a power of two, and Python's int-to-float conversion and
    int-by-int true division both round it correctly. A zero total (whose
    sign fsum decides), non-finite values, magnitudes near overflow and short
    arrays go to fsum itself.
    """
    if len(values) < _SHORT or len(values) > _MOST or values.dtype != np.float64:
        return math.fsum(values.tolist())
    if not (np.isfinite(values).all() and float(np.abs(values).max()) <= _LARGEST):
        return math.fsum(values.tolist())
    fraction, exponent = np.frexp(values)  # values == fraction * 2**exponent, 0.5 <= |fraction| < 1 (or 0)
    significand = (fraction * 2.0 ** 53).astype(np.int64)  # exact: 53 bits at most
    high = significand >> _HALF  # floor: significand == high * 2**_HALF + low, 0 <= low < 2**_HALF
    low = significand - (high << _HALF)
    power = exponent.astype(np.int64) - 53  # values == significand * 2**power
    base = int(power.min())
    which = power - base  # a bin per power (a few dozen for scores; at most about 2100)
    present = np.flatnonzero(np.bincount(which)).tolist()
    high_sums = np.bincount(which, weights=high).tolist()
    low_sums = np.bincount(which, weights=low).tolist()
    total = 0
    for shift in present:
        total += ((int(high_sums[shift]) << _HALF) + int(low_sums[shift])) << shift
    if total == 0:
        return math.fsum(values.tolist())
    return float(total << base) if base >= 0 else total / (1 << -base)


def fmean(values: np.ndarray) -> float | None:
    """The correctly rounded mean (:func:`math.fsum`) of the non-NaN values; ``None`` when there are none.

    Exact summation makes "the mean is 0" an exact test (SPEC §8: ER and ΔRI are
    undefined then) and the figures independent of summation order.
    """
    kept = values[~np.isnan(values)]
    if not len(kept):
        return None
    return exact_sum(kept) / len(kept)


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
