r"""Effect ratio (ER) and delta relative improvement (ΔRI): is an ablation's effect reproduced?

For an advanced configuration :math:`a` measured against the baseline
:math:`b` (Breuer et al., SIGIR 2020, §3.3; SPEC §8), with :math:`O` the
original runs and :math:`R` the reproduced ones:

.. math::

    \mathrm{ER} = \frac{\operatorname{mean}_q \big(R_a(q) - R_b(q)\big)}
                       {\operatorname{mean}_q \big(O_a(q) - O_b(q)\big)},
    \qquad
    \Delta\mathrm{RI} = \mathrm{RI}_O - \mathrm{RI}_R,\quad
    \mathrm{RI} = \frac{\bar v(a) - \bar v(b)}{\bar v(b)}.

ER = 1 and ΔRI = 0 is a perfect reproduction of the effect; ER > 1 a larger
effect than the original's, 0 < ER < 1 a smaller one, ER < 0 the opposite
direction. ER is undefined (``None``) when the original mean improvement is 0,
ΔRI when a baseline mean is 0 (or so near 0 that the relative improvement
overflows): never a division error or an infinity. A mean
improvement is over the questions where both runs of the difference have a
value; a mean score :math:`\bar v` over the questions where its run has one.
Sums are exact (:func:`math.fsum`), so "is 0" is an exact test.
"""

from __future__ import annotations

import math

import numpy as np

from eval.repro.means import fmean


def mean_improvement(advanced: np.ndarray, baseline: np.ndarray) -> float | None:
    """``mean_q(advanced(q) - baseline(q))`` over the questions where both are defined."""
    both = ~np.isnan(advanced) & ~np.isnan(baseline)
    return fmean(advanced[both] - baseline[both])


def effect_ratio(orig_a: np.ndarray, orig_b: np.ndarray, rep_a: np.ndarray, rep_b: np.ndarray) -> float | None:
    """ER of one measure; ``None`` when the original mean improvement is 0 (or either is undefined)."""
    original = mean_improvement(orig_a, orig_b)
    reproduced = mean_improvement(rep_a, rep_b)
    if original is None or reproduced is None or original == 0.0:
        return None
    ratio = reproduced / original
    return ratio if math.isfinite(ratio) else None  # an original improvement so small that the ratio overflows


def relative_improvement(advanced: np.ndarray, baseline: np.ndarray) -> float | None:
    """``(mean(a) - mean(b)) / mean(b)``; ``None`` when ``mean(b)`` is 0 or a mean is undefined.

    Also ``None`` when the quotient overflows (a baseline mean so near 0, a
    subnormal, that the relative improvement is not a finite number): an
    infinity would make ΔRI ``inf - inf``, never a figure.
    """
    mean_a, mean_b = fmean(advanced), fmean(baseline)
    if mean_a is None or mean_b is None or mean_b == 0.0:
        return None
    ri = (mean_a - mean_b) / mean_b
    return ri if math.isfinite(ri) else None


def delta_ri(orig_a: np.ndarray, orig_b: np.ndarray, rep_a: np.ndarray, rep_b: np.ndarray) -> float | None:
    """ΔRI of one measure; ``None`` when a baseline mean is 0 (or a mean is undefined)."""
    original = relative_improvement(orig_a, orig_b)
    reproduced = relative_improvement(rep_a, rep_b)
    if original is None or reproduced is None:
        return None
    return original - reproduced
