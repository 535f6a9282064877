"""Bootstrap intervals and paired tests over questions (SPEC §3.7).

Every headline metric here is a ratio of sums over questions,
``M = sum_q num_q / sum_q den_q`` (a macro mean has ``den_q`` = 1 for the
questions it averages over, 0 for the others; TRP_micro has ``num = hits``,
``den = n_ret``). A bootstrap replicate ``b`` draws ``n`` questions with
replacement; with ``C[b, q]`` the number of times question ``q`` was drawn::

    M_b = (C @ num)[b] / (C @ den)[b]

so one count matrix, drawn once from a fixed seed, serves every metric (its
products are summed in one fixed order by numpy, never by BLAS, whose threads
would make the last digits depend on the machine: :meth:`Resamples.sums`), and the
95% interval is the 2.5th and 97.5th percentile of ``M_b`` (percentile
bootstrap). Replicates whose denominator is 0 take the metric's empty value
(0.0 for the published TRP, NaN otherwise, then ignored).

Paired comparison of runs A and B on the same questions: the bootstrap interval
of ``M_A - M_B`` from the same count matrix, and a paired permutation test that
swaps A and B per question with probability 1/2::

    p = (1 + #{|delta_perm| >= |delta_obs|}) / (P + 1)

with ``P`` the permutations whose metric is defined (denominator > 0).
Several rows tested at once are corrected with Holm's step-down procedure.

References
----------
- B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman &
  Hall, 1993 (percentile intervals).
- M. D. Smucker, J. Allan and B. Carterette, "A Comparison of Statistical
  Significance Tests for Information Retrieval Evaluation", CIKM 2007 (paired
  randomization and bootstrap tests over topics).
- S. Holm, "A Simple Sequentially Rejective Multiple Test Procedure",
  Scandinavian Journal of Statistics 6(2), 1979.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tempbench_core.errors import ConfigError

#: The most resampling draws (replicates x questions) one matrix may hold: 2**28 cells are
#: 2 GiB of float64 counts (plus the int32 draws); beyond, the allocation is refused with a
#: message instead of ending in a MemoryError (the default, 1,000 x 8,710, is 8.7M).
MAX_DRAWS = 2**28

#: SPEC §3.7's defaults, read by every function and command that resamples: bootstrap
#: replicates, permutations of the paired test, the fixed seed, the intervals' level.
N_BOOT = 1000
N_PERM = 1000
SEED = 0
LEVEL = 0.95


def check_draws(n: int, count: int, seed: int, what: str = "bootstrap replicates", low: int = 0) -> None:
    """Refuse, with a :class:`~tempbench_core.errors.ConfigError`, draws numpy cannot or should not make.

    ``seed`` must be an integer >= 0 (``numpy.random.default_rng`` refuses a
    negative one), ``count`` an integer >= ``low`` whose matrix of ``count x
    n`` cells stays within :data:`MAX_DRAWS`.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"the seed must be an integer >= 0 (got {seed!r})")
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < low:
        raise ConfigError(f"the number of {what} must be an integer >= {low} (got {count!r})")
    if count * max(n, 1) > MAX_DRAWS:
        raise ConfigError(f"{count:,} {what} over {n:,} questions is {count * n:,} draws, more than the {MAX_DRAWS:,} "
                          f"this machine-independent bound allows: at most {MAX_DRAWS // max(n, 1):,} {what} here")


@dataclass(frozen=True)
class RatioMetric:
    """``sum(num) / sum(den)``; ``empty`` when the denominator is 0."""

    num: np.ndarray
    den: np.ndarray
    empty: float = float("nan")

    def value(self) -> float | None:
        total = float(np.sum(self.den))
        if total == 0:
            return None if np.isnan(self.empty) else self.empty
        return float(np.sum(self.num)) / total


def mean_metric(values: np.ndarray, empty: float = float("nan")) -> RatioMetric:
    """Macro mean over the non-NaN entries of ``values``."""
    values = np.asarray(values, dtype=np.float64)
    mask = ~np.isnan(values)
    return RatioMetric(np.where(mask, values, 0.0), mask.astype(np.float64), empty)


#: Replicates whose counts are made (and summed) at once: a block of counts stays in the cache.
BLOCK = 32


def weighted_sums(weights: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``weights @ columns.T`` (``weights``: ``rows x n``; ``columns``: ``k x n``), by numpy's own loops.

    Never by BLAS: a threaded BLAS splits a product's sums by the machine's
    cores, so its last bits (and an interval's last digits) would depend on the
    machine. numpy sums each of the ``rows x k`` products along ``n`` in one
    fixed order, whatever the number of rows.
    """
    return np.einsum("bq,kq->bk", weights, columns)


class Resamples:
    """The bootstrap's draws: ``n_boot`` replicates of ``n`` questions drawn with replacement from ``seed``.

    The draws are ``numpy.random.default_rng(seed).integers(0, n, (n_boot, n),
    dtype=int32)`` (row ``b`` lists the questions of replicate ``b``). What is
    kept of them is the count matrix ``C`` (``C[b, q]``: how often replicate
    ``b`` drew question ``q``), counted once :data:`BLOCK` rows at a time and
    kept in the smallest unsigned type that holds it (one byte a cell in
    practice): every run scored against the same replicates reads it instead
    of counting the draws again. It is summed against the values a block at a
    time (:meth:`sums`), so that no ``n_boot x n`` matrix of floats is ever made.
    """

    def __init__(self, n: int, n_boot: int = N_BOOT, seed: int = SEED) -> None:
        check_draws(n, n_boot, seed)
        self.n, self.n_boot, self.seed = int(n), int(n_boot), int(seed)
        self.table = self._count(self.draws)

    @property
    def draws(self) -> np.ndarray:
        """The draws themselves (``n_boot x n``, int32), drawn again from the seed: only the counts are kept."""
        if self.n == 0 or self.n_boot == 0:
            return np.zeros((self.n_boot, self.n), dtype=np.int32)
        return np.random.default_rng(self.seed).integers(0, self.n, size=(self.n_boot, self.n), dtype=np.int32)

    def _count(self, draws: np.ndarray) -> np.ndarray:
        """The count matrix of ``draws``, one byte a cell unless some replicate draws a question over 255 times."""
        n = self.n
        table = np.zeros((self.n_boot, n), dtype=np.uint8)
        offsets = (np.arange(BLOCK, dtype=np.int64) * n)[:, None]
        for start in range(0, self.n_boot if n else 0, BLOCK):
            rows = draws[start:start + BLOCK]
            counts = np.bincount((rows + offsets[: len(rows)]).ravel(), minlength=len(rows) * n)
            if counts.max() > np.iinfo(table.dtype).max:  # a count no byte holds (only a tiny n makes one likely)
                table = table.astype(np.min_scalar_type(n))
            table[start:start + len(rows)] = counts.reshape(len(rows), n)
        return table

    def blocks(self, dtype: Any = np.float64) -> Iterator[tuple[int, np.ndarray]]:
        """``(first replicate, its counts)`` for each block of rows of ``C`` (``rows x n``, of ``dtype``)."""
        for start in range(0, self.n_boot, BLOCK):
            yield start, self.table[start:start + BLOCK].astype(dtype)

    def counts(self) -> np.ndarray:
        """The whole count matrix ``C`` (``n_boot x n``, float64)."""
        return self.table.astype(np.float64)

    def sums(self, values: np.ndarray) -> np.ndarray:
        """``C @ values`` (``values``: ``n`` or ``n x k``) by :func:`weighted_sums`, block by block.

        The sum of a replicate does not depend on :data:`BLOCK` (nor on BLAS or
        the machine's cores). Columns of whole numbers (counts, 0/1 masks) are
        summed in int32 instead (:func:`_whole_columns`): their float sums are
        exact, so any order of the additions gives the same bits, and numpy's
        integer loops run about three times as fast.
        """
        columns = np.ascontiguousarray(np.atleast_2d(np.asarray(values, dtype=np.float64).T))
        out = np.zeros((self.n_boot, len(columns)), dtype=np.float64)
        whole = _whole_columns(columns, self.n)
        # (the type a part is summed in, where its columns go in out, the columns in that type)
        parts = [(dtype, index, columns[index].astype(dtype))
                 for dtype, index in ((np.float64, np.flatnonzero(~whole)), (np.int32, np.flatnonzero(whole)))
                 if len(index)]
        if self.n:
            for start in range(0, self.n_boot, BLOCK):
                rows = self.table[start:start + BLOCK]
                for dtype, index, part in parts:
                    out[start:start + len(rows), index] = weighted_sums(rows.astype(dtype), part)
        return out if np.ndim(values) == 2 else out[:, 0]


def _whole_columns(columns: np.ndarray, n: int) -> np.ndarray:
    """Which rows of ``columns`` (``k x n`` floats) hold whole numbers whose resampled sums fit in int32.

    A replicate's sum is a sum of ``n`` counts times values, at most ``n *
    max|value|`` in size along the way: below 2**31 it is exact in int32 and
    (far below 2**53) in float64, whatever the order of the additions.
    """
    if columns.size == 0:
        return np.zeros(len(columns), dtype=bool)
    with np.errstate(invalid="ignore"):
        whole = np.all(columns == np.trunc(columns), axis=1)  # NaN and infinities are not whole
        return whole & (np.max(np.abs(columns), axis=1) * max(n, 1) < 2**31)


def count_matrix(n: int, n_boot: int = N_BOOT, seed: int = SEED) -> np.ndarray:
    """``(n_boot, n)`` resampling counts (:class:`Resamples`' matrix ``C``)."""
    return Resamples(n, n_boot, seed).counts()


def kept_resamples(memo: dict[Any, Resamples] | None, n: int, n_boot: int = N_BOOT, seed: int = SEED) -> Resamples:
    """:class:`Resamples` ``(n, n_boot, seed)``, kept in the caller's ``memo`` (drawn each time without one).

    Runs scored in one process draw the same replicates (same sizes, same seed): each set is drawn once.
    """
    if memo is None:
        return Resamples(n, n_boot, seed)
    key = (int(n), int(n_boot), int(seed))
    kept = memo.get(key)
    if kept is None:
        kept = memo[key] = Resamples(n, n_boot, seed)
    return kept


def _replicates(resamples: Resamples, metrics: Mapping[Any, RatioMetric]) -> dict[Any, np.ndarray]:
    if not metrics:
        return {}
    names = list(metrics)
    # every distinct column summed once (denominators repeat: all ones, one mask for many measures)
    slot: dict[bytes, int] = {}
    distinct: list[np.ndarray] = []
    index = []
    for column in (np.asarray(getattr(metrics[k], part), dtype=np.float64) for part in ("num", "den") for k in names):
        key = column.tobytes()
        if key not in slot:
            slot[key] = len(distinct)
            distinct.append(column)
        index.append(slot[key])
    sums = resamples.sums(np.stack(distinct, axis=1))[:, index]
    top, bottom = sums[:, :len(names)], sums[:, len(names):]
    empty = np.array([metrics[k].empty for k in names])
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), empty[None, :])
    return {k: vals[:, i] for i, k in enumerate(names)}


def _interval(values: np.ndarray, level: float) -> list[float] | None:
    values = values[~np.isnan(values)]
    if values.size == 0:
        return None
    alpha = (1.0 - level) / 2.0
    low, high = np.percentile(values, [100 * alpha, 100 * (1 - alpha)])
    return [float(low), float(high)]


def bootstrap_ci(
    metrics: Mapping[str, RatioMetric], n_boot: int = N_BOOT, seed: int = SEED, level: float = LEVEL,
    resamples: Resamples | None = None,
) -> dict[str, list[float] | None]:
    """Percentile bootstrap interval per metric (all from one set of replicates; ``resamples``: drawn already)."""
    if not metrics:
        return {}
    n = len(next(iter(metrics.values())).num)
    if resamples is None:
        resamples = Resamples(n, n_boot, seed)
    reps = _replicates(resamples, metrics)
    return {k: _interval(v, level) for k, v in reps.items()}


def paired_test(
    a: Mapping[str, RatioMetric],
    b: Mapping[str, RatioMetric],
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, dict[str, float | list[float] | None]]:
    """Per metric: ``a``, ``b``, ``delta = a - b``, bootstrap ``ci`` of delta, permutation ``p``.

    Also ``n_differ``: the questions whose contribution (numerator or
    denominator) differs between A and B, the only ones a swap can move; and
    ``p_min = 1 / (P + 1)``, the smallest p the test can report with ``P``
    permutations (a ``p`` equal to it means "below every permutation").
    """
    names = [k for k in a if k in b]
    if not names:
        return {}
    n = len(a[names[0]].num)
    check_draws(n, n_perm, seed, "permutations", low=1)  # p_min = 1 / (n_perm + 1): at least one permutation
    resamples = Resamples(n, n_boot, seed)
    # both runs' replicates from one pass over the counts (their denominators are mostly the same columns)
    reps = _replicates(resamples, {**{("a", k): a[k] for k in names}, **{("b", k): b[k] for k in names}})
    rep_a, rep_b = ({k: reps[side, k] for k in names} for side in ("a", "b"))
    rng = np.random.default_rng(seed + 1)
    swap = rng.random((n_perm, n)) < 0.5 if n else np.zeros((n_perm, 0), dtype=bool)
    swap_f = swap.astype(np.float64)
    out: dict[str, dict[str, float | list[float] | None]] = {}
    for k in names:
        va, vb = a[k].value(), b[k].value()
        delta = None if va is None or vb is None else va - vb
        ci = _interval(rep_a[k] - rep_b[k], level)
        p = None
        if delta is not None and n:
            # Swapping question q moves (num, den) of A to B and back.
            d_num = b[k].num - a[k].num
            d_den = b[k].den - a[k].den
            moved_num, moved_den = weighted_sums(swap_f, np.stack([d_num, d_den])).T
            num_a = a[k].num.sum() + moved_num
            den_a = a[k].den.sum() + moved_den
            num_b = b[k].num.sum() - moved_num
            den_b = b[k].den.sum() - moved_den
            empty = a[k].empty
            with np.errstate(divide="ignore", invalid="ignore"):
                ma = np.where(den_a > 0, num_a / np.where(den_a > 0, den_a, 1), empty)
                mb = np.where(den_b > 0, num_b / np.where(den_b > 0, den_b, 1), empty)
            perm = ma - mb
            ok = ~np.isnan(perm)
            extreme = np.abs(perm[ok]) >= abs(delta) - 1e-12
            p = float((1 + extreme.sum()) / (ok.sum() + 1))
        n_differ = int(((a[k].num != b[k].num) | (a[k].den != b[k].den)).sum())
        out[k] = {"a": va, "b": vb, "delta": delta, "ci": ci, "p": p, "n_differ": n_differ, "p_min": 1.0 / (n_perm + 1)}
    return out


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of a family of p-values (``None`` entries are left out of the family).

    With the ``m`` defined p-values sorted ascending, ``p_(i)`` becomes
    ``max_{j <= i} min(1, (m - j + 1) p_(j))`` (Holm 1979), returned in input order.
    """
    defined = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    m = len(defined)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(defined)):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out
