"""Invariants of the SPEC §8 kernels (hypothesis), and the kernels against repro_eval / scipy on random lists.

Identical runs: KTU = 1, RBO = its ceiling (1 when the depth is within the
lists), RMSE = nRMSE = 0, p = 1; identical effects: ER = 1, ΔRI = 0; a zero
denominator: None, never NaN or infinity; KTU and RBO symmetric, RBO at most
its ceiling.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau, ttest_rel

from eval.repro.doclists import encode
from eval.repro.effects import delta_ri, effect_ratio
from eval.repro.ktu import ktu
from eval.repro.rbo import rbo, rbo_ceiling_kernel
from eval.repro.rmse import nrmse, rmse
from eval.repro.ttest import p_value

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from repro_eval.measure.document_order import RBO

DOCS = [f"Q{i}|P1|Q{i % 7}|{1990 + i % 3}" for i in range(40)]

ranked = st.lists(st.sampled_from(DOCS), max_size=25, unique=True)
runs = st.lists(ranked, min_size=1, max_size=12)
values01 = st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=40)


def _pair(a: list[list[str]], b: list[list[str]]):
    n = min(len(a), len(b))
    return encode([a[:n], b[:n]])


def _literal_ktu(o: list[str], r: list[str]) -> float:
    n = min(len(o), len(r))
    o, r = o[:n], r[:n]
    union = sorted(set(o + r))
    return float(kendalltau([union.index(d) for d in o], [union.index(d) for d in r]).correlation)


@settings(max_examples=80, deadline=None)
@given(runs, runs)
def test_ktu_equals_scipy_on_the_union_positions(a, b) -> None:
    lo, lr = _pair(a, b)
    _, per_q = ktu(lo, lr)
    for i, (o, r) in enumerate(zip(a, b, strict=False)):
        if min(len(o), len(r)) < 2:
            assert math.isnan(per_q[i])
        else:
            assert per_q[i] == pytest.approx(_literal_ktu(o, r), abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(runs, runs, st.floats(0.05, 0.99), st.integers(1, 40))
def test_rbo_equals_repro_eval(a, b, p, depth) -> None:
    lo, lr = _pair(a, b)
    _, per_q = rbo(lo, lr, p, depth)
    ceiling = rbo_ceiling_kernel(lo.lengths, lr.lengths, p, depth)
    for i, (o, r) in enumerate(zip(a, b, strict=False)):
        if not o and not r:
            assert math.isnan(per_q[i])
            continue
        if o and r:
            # strictly decreasing scores: repro_eval re-sorts ties by document id
            expected = RBO({"q": {d: float(-j) for j, d in enumerate(o)}}, {"q": {d: float(-j) for j, d in enumerate(r)}},
                           p=p, depth=depth, pbar=False, per_topic=True)["q"]
        else:
            expected = 0.0
        assert per_q[i] == pytest.approx(expected, abs=1e-12)
        assert per_q[i] <= ceiling[i] + 1e-12


@settings(max_examples=60, deadline=None)
@given(runs, runs)
def test_ktu_and_rbo_are_symmetric(a, b) -> None:
    lo, lr = _pair(a, b)
    assert np.array_equal(ktu(lo, lr)[1], ktu(lr, lo)[1], equal_nan=True)
    assert np.allclose(rbo(lo, lr)[1], rbo(lr, lo)[1], equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(runs, st.integers(1, 30))
def test_identical_runs_agree_perfectly(a, depth) -> None:
    lo, lr = encode([a, a])
    mean, per_q = ktu(lo, lr)
    assert all(v == 1.0 for v in per_q[~np.isnan(per_q)])
    _, per_rbo = rbo(lo, lr, 0.9, depth)
    ceiling = rbo_ceiling_kernel(lo.lengths, lr.lengths, 0.9, depth)
    assert np.allclose(per_rbo, ceiling, equal_nan=True)
    within = lo.lengths >= depth
    assert np.allclose(per_rbo[within], 1.0)


@settings(max_examples=60, deadline=None)
@given(values01)
def test_identical_scores(values) -> None:
    v = np.array(values)
    assert rmse(v, v) == 0.0 and nrmse(v, v) == 0.0 and p_value(v, v) == 1.0


@settings(max_examples=80, deadline=None)
@given(values01, st.data())
def test_rmse_and_ttest_equal_their_definitions(values, data) -> None:
    o = np.array(values)
    r = np.array(data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=len(o), max_size=len(o))))
    assert rmse(o, r) == pytest.approx(math.sqrt(np.mean((o - r) ** 2)), abs=1e-12)
    assert nrmse(o, r) == pytest.approx(rmse(o, r) / math.sqrt(np.mean(np.maximum(o, 1 - o) ** 2)), abs=1e-12)
    p = p_value(o, r)
    if np.array_equal(o, r):
        assert p == 1.0
    elif len(o) >= 2 and np.var(o - r) > 1e-20:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert p == pytest.approx(float(ttest_rel(o, r).pvalue), rel=1e-9, abs=1e-12)


def test_nan_values_are_left_out_of_the_pairs() -> None:
    o = np.array([0.5, np.nan, 1.0])
    r = np.array([0.5, 0.2, np.nan])
    assert rmse(o, r) == 0.0 and p_value(o, r) == 1.0
    assert rmse(np.array([np.nan]), np.array([1.0])) is None and p_value(np.array([1.0]), np.array([0.0])) is None


@settings(max_examples=60, deadline=None)
@given(values01, st.data())
def test_identical_effects(values, data) -> None:
    b = np.array(values)
    a = np.array(data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=len(b), max_size=len(b))))
    er = effect_ratio(a, b, a.copy(), b.copy())
    # "no effect" is a mean improvement of 0, also when a nonzero sum underflows in the division (a subnormal)
    if math.fsum(a - b) / len(a) == 0.0:
        assert er is None
    else:
        assert er == pytest.approx(1.0)
    dri = delta_ri(a, b, a.copy(), b.copy())
    mean_a, mean_b = math.fsum(a) / len(a), math.fsum(b) / len(b)
    overflows = mean_b != 0.0 and not math.isfinite((mean_a - mean_b) / mean_b)  # a subnormal baseline mean
    assert (dri is None) == (mean_b == 0.0 or overflows)
    if dri is not None:
        assert dri == 0.0


def test_a_vanishing_baseline_mean_gives_no_delta_ri() -> None:
    """A subnormal baseline mean makes RI overflow: ΔRI is undefined (None), not ``inf - inf``."""
    tiny = np.array([5e-324])
    assert delta_ri(np.array([0.5]), tiny, np.array([0.5]), tiny) is None
    assert delta_ri(np.array([0.5]), np.array([0.25]), np.array([0.5]), np.array([0.25])) == 0.0
    # the same for ER: an original improvement of one subnormal against a reproduced one of 0.5
    assert effect_ratio(np.array([5e-324]), np.array([0.0]), np.array([0.5]), np.array([0.0])) is None
    # a nonzero improvement whose mean underflows to 0 is no effect: ER undefined, not 1
    twice = np.array([5e-324, 0.0])
    assert effect_ratio(twice, np.zeros(2), twice.copy(), np.zeros(2)) is None


def test_zero_denominators_are_none_never_inf() -> None:
    same = np.array([0.2, 0.4])
    assert effect_ratio(same, same, np.array([0.5, 0.5]), same) is None
    zero = np.zeros(2)
    assert delta_ri(same, zero, same, np.array([0.1, 0.1])) is None
    assert delta_ri(same, np.array([0.1, 0.1]), same, zero) is None


def _near_copies(a: list[list[str]], changes: list[int]) -> list[list[str]]:
    """``a`` with some lists kept as they are and others reversed, cut or emptied."""
    out = []
    for ranked_list, change in zip(a, changes + [0] * len(a), strict=False):
        out.append([ranked_list, ranked_list[::-1], ranked_list[:1], []][change % 4])
    return out


@settings(max_examples=120, deadline=None)
@given(runs, st.lists(st.integers(0, 3), max_size=12), st.floats(0.05, 0.99), st.integers(1, 40),
       st.sampled_from(["shorter", "equal"]), st.sampled_from(["skip", "one"]))
def test_one_list_on_both_sides_takes_the_kernels_own_value(a, changes, p, depth, cut, both_empty) -> None:
    """The closed forms for two identical lists (most questions of a close reproduction) are the kernels'
    own floats, bit for bit: the same figures with the closed forms and with every question counted."""
    from eval.repro import ktu as ktu_module
    from eval.repro import rbo as rbo_module

    lo, lr = _pair(a, _near_copies(a, changes))
    fast = (ktu_module.ktu_kernel(lo.codes, lo.lengths, lr.codes, lr.lengths, cut),
            rbo_module.rbo_kernel(lo.codes, lo.lengths, lr.codes, lr.lengths, p, depth, both_empty))
    with pytest.MonkeyPatch.context() as patch:
        for module in (ktu_module, rbo_module):
            patch.setattr(module, "same_lists", lambda orig, *_: np.zeros(len(orig), dtype=bool))
        counted = (ktu_module.ktu_kernel(lo.codes, lo.lengths, lr.codes, lr.lengths, cut),
                   rbo_module.rbo_kernel(lo.codes, lo.lengths, lr.codes, lr.lengths, p, depth, both_empty))
    for got, want in zip(fast, counted, strict=True):
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=True)
        assert got.tobytes() == want.tobytes()  # the same bits, -0.0 and NaN payloads included


def test_repeated_codes_in_one_list_are_counted() -> None:
    """A list that repeats a code is not one list of distinct documents: the kernels count it."""
    from eval.repro.doclists import same_lists

    codes = np.array([[3, 3, 5], [1, 2, -1]], dtype=np.int64)
    lengths = np.array([3, 2], dtype=np.int64)
    assert same_lists(codes, lengths, codes.copy(), lengths.copy()).tolist() == [False, True]
