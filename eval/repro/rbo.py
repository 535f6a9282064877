r"""Rank-biased overlap (RBO): how much two ranked lists share, weighted towards the top.

Per question (Webber, Moffat and Zobel, "A Similarity Measure for Indefinite
Rankings", TOIS 2010; as Breuer et al., SIGIR 2020, and ``repro_eval`` compute
it; SPEC §8), with persistence :math:`p` and depth :math:`d`:

.. math::

    \mathrm{RBO} = \frac{\sum_{i=1}^{d} p^{i-1}\,|O_{:i} \cap R_{:i}| / i}{\sum_{i=1}^{d} p^{i-1}}

where :math:`O_{:i}` is the set of the first :math:`i` documents of the
original list (all of it when it is shorter). A document at position
:math:`a` of one list and :math:`b` of the other (0-based) is in every
overlap from depth :math:`m = \max(a, b) + 1` on, so the numerator is the sum,
over the documents both lists hold, of :math:`S(m) = \sum_{i=m}^{d} p^{i-1}/i`:
the kernel computes :math:`S` once and adds it up per question, with no loop
over depths. A question where one list is empty has RBO 0; one where both are
is left out of the mean (SPEC §8) or, as an option, counts as 1.
"""

from __future__ import annotations

import numpy as np

from eval.repro.doclists import DocLists, same_lists
from eval.repro.means import chunks, fmean

#: RBO's persistence and evaluation depth by default (SPEC §8; repro_eval's defaults).
DEFAULT_P = 0.95
DEFAULT_DEPTH = 1000


def suffix_weights(p: float, depth: int) -> tuple[np.ndarray, float]:
    """``(S, norm)``: ``S[m - 1] = sum_{i=m..d} p**(i-1) / i`` for m = 1..d, and ``norm = sum_{i=1..d} p**(i-1)``."""
    i = np.arange(1, depth + 1, dtype=np.float64)
    weight = float(p) ** (i - 1)
    suffix = np.cumsum((weight / i)[::-1])[::-1]
    return suffix, float(weight.sum())


def rbo_kernel(orig: np.ndarray, orig_len: np.ndarray, rep: np.ndarray, rep_len: np.ndarray,
               p: float = DEFAULT_P, depth: int = DEFAULT_DEPTH, both_empty: str = "skip") -> np.ndarray:
    """Per-question RBO of two padded code matrices (``-1`` = no document).

    Parameters
    ----------
    orig, rep:
        ``(questions, width)`` integer document codes in rank order, padded with ``-1``.
    orig_len, rep_len:
        The lengths of the lists.
    p, depth:
        RBO's persistence and evaluation depth.
    both_empty:
        ``"skip"``: NaN where both lists are empty; ``"one"``: 1.0 there.

    Returns
    -------
    numpy.ndarray
        ``float64`` per question.
    """
    suffix, norm = suffix_weights(p, depth)
    n = len(orig_len)
    total = np.zeros(n)
    longest = np.maximum(orig_len, rep_len)
    same = same_lists(orig, orig_len, rep, rep_len)
    # one list of distinct documents of length L: its i-th document meets itself at depth i, so the sum is
    # S(1) + ... + S(L), added in that order as below (a running sum: the same float)
    running = np.concatenate([[0.0], np.cumsum(suffix)])
    total[same] = running[np.minimum(orig_len[same], depth)]
    rest = np.flatnonzero(~same)
    for part in chunks(longest[rest]):
        rows = rest[part]
        wo, wr = int(orig_len[rows].max(initial=0)), int(rep_len[rows].max(initial=0))
        if not wo or not wr:
            continue
        o, r = orig[rows, :wo], rep[rows, :wr]
        same = (o[:, :, None] == r[:, None, :]) & (o[:, :, None] >= 0)
        q, a, b = np.nonzero(same)
        m = np.maximum(a, b)  # 0-based first depth of the overlap
        inside = m < depth
        total[rows] = np.bincount(q[inside], weights=suffix[m[inside]], minlength=len(rows))
    out = total / norm
    empty = (orig_len == 0) & (rep_len == 0)
    out[empty] = np.nan if both_empty == "skip" else 1.0
    return out


def rbo(orig: DocLists, rep: DocLists, p: float = DEFAULT_P, depth: int = DEFAULT_DEPTH,
        both_empty: str = "skip") -> tuple[float | None, np.ndarray]:
    """``(mean RBO, per-question RBO)`` of two runs over the same questions (SPEC §8)."""
    per_q = rbo_kernel(orig.codes, orig.lengths, rep.codes, rep.lengths, p, depth, both_empty)
    return fmean(per_q), per_q


def rbo_ceiling_kernel(orig_len: np.ndarray, rep_len: np.ndarray, p: float = DEFAULT_P, depth: int = DEFAULT_DEPTH,
                       both_empty: str = "skip") -> np.ndarray:
    r"""Per question, the largest RBO two lists of these lengths can reach: identical up to the shorter length ``m``.

    .. math:: \Big(\sum_{i=1}^{\min(m, d)} p^{i-1} + m \sum_{i=m+1}^{d} p^{i-1}/i\Big) \Big/ \sum_{i=1}^{d} p^{i-1}

    Below 1 whenever ``m < d``: with SPEC §8's depth 1000 and k = 15 lists, two
    identical runs score about 0.70. NaN (or 1) where both lists are empty, as :func:`rbo_kernel`.
    """
    suffix, norm = suffix_weights(p, depth)
    i = np.arange(1, depth + 1, dtype=np.float64)
    head = np.concatenate([[0.0], np.cumsum(float(p) ** (i - 1))])  # head[m] = sum_{i<=m} p^(i-1)
    tail = np.concatenate([suffix, [0.0]])  # tail[m] = S(m + 1), 0 beyond the depth
    m = np.minimum(np.minimum(orig_len, rep_len), depth)
    out = (head[m] + m * tail[m]) / norm
    empty = (orig_len == 0) & (rep_len == 0)
    out[empty] = np.nan if both_empty == "skip" else 1.0
    return out
