r"""The paired two-sided t-test of the original's per-question scores against the reproduction's.

Per configuration and measure (Breuer et al., SIGIR 2020, §3.2, following
Student's paired t-test; SPEC §8), over the :math:`n` questions where both
runs have a value, with :math:`d_q = o_q - r_q`:

.. math::

    t = \frac{\bar d}{s_d / \sqrt{n}}, \qquad p = 2\,P(T_{n-1} \ge |t|),

:math:`s_d` the sample standard deviation (``ddof = 1``), as
``scipy.stats.ttest_rel`` (what ``repro_eval`` calls). A large p-value means
the test finds no difference between the two score distributions. SPEC §8:
``p = 1`` when the two are identical (scipy gives NaN there); with fewer than
two questions, or every difference equal and non-zero (then ``t`` is
infinite and ``p = 0``), the usual limits hold; undefined is ``None``.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from eval.repro.means import exact_sum
from eval.repro.rmse import paired


@cache
def _stdtr() -> Any:
    # scipy.special takes about a quarter of a second to import: not at start-up, but when first
    # needed or earlier by load_distribution (tempbench repro: while the workers read the runs)
    from scipy.special import stdtr
    return stdtr


def load_distribution() -> None:
    """Import Student's t distribution now (scipy.special), e.g. while other processes do the long work."""
    _stdtr()


def ttest_kernel(orig: np.ndarray, rep: np.ndarray) -> float | None:
    """Two-sided paired t-test p-value of two paired value arrays (no NaN)."""
    n = len(orig)
    if n and np.array_equal(orig, rep):
        return 1.0
    if n < 2:
        return None
    diff = orig - rep
    mean = exact_sum(diff) / n
    centred = diff - mean
    var = exact_sum(centred * centred) / (n - 1)
    if var == 0.0:
        return 0.0 if mean != 0.0 else 1.0
    t = mean / math.sqrt(var / n)
    return float(2.0 * _stdtr()(n - 1, -abs(t)))


def p_value(orig: np.ndarray, rep: np.ndarray) -> float | None:
    """The paired t-test p-value over the questions where both values are defined (SPEC §8)."""
    return ttest_kernel(*paired(orig, rep))
