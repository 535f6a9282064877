r"""Kendall's tau Union (KTU): do two runs put the documents they share at the top in the same order?

Per question (Breuer et al., "How to Measure the Reproducibility of
System-oriented IR Experiments", SIGIR 2020, §3.1; SPEC §8): cut both ranked
lists to the shorter length :math:`n`; let :math:`U` be the sorted union of
the two cut lists' document ids; map each list to the positions of its
documents in :math:`U` and take Kendall's tau between the two sequences:

.. math::

    \mathrm{KTU} = \frac{\sum_{i<j} \operatorname{sgn}(x_i - x_j)\,\operatorname{sgn}(y_i - y_j)}{n(n-1)/2},
    \qquad x_i = U.\mathrm{index}(o_i),\; y_i = U.\mathrm{index}(r_i).

Within one list the documents are distinct (repeats are removed before), so
neither sequence has ties and tau-b (``scipy.stats.kendalltau``, what
``repro_eval`` calls) equals this tau-a. :math:`U.\mathrm{index}` is monotone
in the sort order of document ids, so the kernel compares global codes that
sort like the ids (:class:`eval.repro.doclists.DocLists`) instead of building
:math:`U`. The figure of a configuration is the mean over questions with
:math:`n \ge 2` (a tau of fewer than two items is undefined). Two lists that
are one list of distinct documents (:func:`~eval.repro.doclists.same_lists`,
most questions of a close reproduction) have every pair concordant: KTU 1,
with no pairs to count.
"""

from __future__ import annotations

import numpy as np

from eval.repro.doclists import DocLists, same_lists
from eval.repro.means import chunks, fmean


def ktu_kernel(orig: np.ndarray, orig_len: np.ndarray, rep: np.ndarray, rep_len: np.ndarray,
               cut: str = "shorter") -> np.ndarray:
    """Per-question KTU of two padded code matrices; NaN where it is undefined.

    Parameters
    ----------
    orig, rep:
        ``(questions, width)`` integer codes of each question's ranked
        documents (sorting like the document ids), padded with ``-1``.
    orig_len, rep_len:
        The lengths of the lists.
    cut:
        ``"shorter"`` (SPEC §8): both lists cut to the shorter length;
        ``"equal"``: NaN for questions whose lengths differ.

    Returns
    -------
    numpy.ndarray
        ``float64`` per question; NaN where fewer than two items are compared
        (or, under ``"equal"``, where the lengths differ).
    """
    n = np.minimum(orig_len, rep_len)
    out = np.full(len(n), np.nan)
    same = same_lists(orig, orig_len, rep, rep_len)
    out[same & (n >= 2)] = 1.0  # one list of distinct documents: every pair concordant
    rest = np.flatnonzero(~same)
    for part in chunks(n[rest]):
        rows = rest[part]
        width = int(n[rows].max())
        if width < 2:
            continue
        m = n[rows]
        x = orig[rows, :width].astype(np.int64)
        y = rep[rows, :width].astype(np.int64)
        # the pairs i < j of the width, counted where j < n (then i < n too)
        first, second = np.triu_indices(width, k=1)
        sx = np.sign(x[:, first] - x[:, second]).astype(np.int8)
        sy = np.sign(y[:, first] - y[:, second]).astype(np.int8)
        concordance = np.where(second[None, :] < m[:, None], sx * sy, 0).sum(axis=1, dtype=np.int64)
        defined = m >= 2
        out[rows[defined]] = concordance[defined] / (m[defined] * (m[defined] - 1) / 2.0)
    if cut == "equal":
        out[orig_len != rep_len] = np.nan
    return out


def ktu(orig: DocLists, rep: DocLists, cut: str = "shorter") -> tuple[float | None, np.ndarray]:
    """``(mean KTU, per-question KTU)`` of two runs over the same questions (SPEC §8).

    The mean is over the questions where KTU is defined; ``None`` when none is.
    """
    per_q = ktu_kernel(orig.codes, orig.lengths, rep.codes, rep.lengths, cut)
    return fmean(per_q), per_q
