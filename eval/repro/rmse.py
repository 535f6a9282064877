r"""RMSE and nRMSE: how far apart are the per-question scores of the original and the reproduction?

Per configuration and measure (Breuer et al., SIGIR 2020, §3.2; SPEC §8), over
the questions :math:`q = 1..n` where both runs have a value:

.. math::

    \mathrm{RMSE} = \sqrt{\tfrac{1}{n} \sum_q (o_q - r_q)^2},
    \qquad
    \mathrm{nRMSE} = \mathrm{RMSE} \Big/ \sqrt{\tfrac{1}{n} \sum_q \max(o_q, 1 - o_q)^2}.

The denominator of nRMSE is the largest RMSE any reproduction could reach on a
measure bounded by [0, 1] (each question at the farther end from the
original), so nRMSE is in [0, 1] for such measures. ``repro_eval`` calls it
``nRMSE`` as well.
"""

from __future__ import annotations

import math

import numpy as np

from eval.repro.means import exact_sum


def paired(orig: np.ndarray, rep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two value arrays restricted to the questions where both are defined (not NaN)."""
    both = ~np.isnan(orig) & ~np.isnan(rep)
    return orig[both], rep[both]


def rmse_kernel(orig: np.ndarray, rep: np.ndarray) -> float | None:
    """RMSE of two paired value arrays (no NaN); ``None`` for no question."""
    if not len(orig):
        return None
    diff = orig - rep
    return math.sqrt(exact_sum(diff * diff) / len(diff))


def nrmse_kernel(orig: np.ndarray, rep: np.ndarray) -> float | None:
    """nRMSE of two paired value arrays (no NaN); ``None`` for no question or a zero maximum."""
    error = rmse_kernel(orig, rep)
    if error is None:
        return None
    far = np.maximum(orig, 1.0 - orig)
    worst = math.sqrt(exact_sum(far * far) / len(far))
    return error / worst if worst > 0 else None


def rmse(orig: np.ndarray, rep: np.ndarray) -> float | None:
    """RMSE over the questions where both per-question values are defined (SPEC §8)."""
    return rmse_kernel(*paired(orig, rep))


def nrmse(orig: np.ndarray, rep: np.ndarray) -> float | None:
    """nRMSE over the questions where both per-question values are defined (SPEC §8)."""
    return nrmse_kernel(*paired(orig, rep))
