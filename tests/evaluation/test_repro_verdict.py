"""The verdict tolerance rule of the audit (SPEC §4), tested at its boundaries."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.audit.claims import load_claims, shipped_tolerances
from eval.audit.verdict import FAIL, NA, OK, OKISH, delta, tolerances_from_toml, verdict

#: The classes of the shipped configs/paper_numbers.toml, which the boundaries below pin.
TOL = shipped_tolerances()


def _verdict(paper, reproduced, kind, override=None):
    """The verdict under the shipped class of ``kind``, with a claim's ``override``."""
    return verdict(paper, reproduced, kind, {**TOL.get(kind, {}), **(override or {})})


@pytest.mark.parametrize(
    ("paper", "reproduced", "expected"),
    [
        (1743, 1743, OK),
        (1000, 1010, OKISH),   # |d| = 1% of paper: on the boundary
        (1000, 990, OKISH),
        (1000, 1011, FAIL),
        (1000, 989, FAIL),
        (1743, 1744, OKISH),
        (0, 0, OK),
        (0, 1, FAIL),          # max(|paper|, 1) * 1% = 0.01 < 1
        (2, 3, FAIL),
        (864, 864.0, OK),
    ],
)
def test_count_boundaries(paper, reproduced, expected):
    assert _verdict(paper, reproduced, "count") == expected


@pytest.mark.parametrize(
    ("paper", "reproduced", "expected"),
    [
        (0.203, 0.203, OK),
        (0.203, 0.208, OK),      # exactly ok_abs above (decimal), despite binary floats
        (0.203, 0.198, OK),
        (0.203, 0.2081, OKISH),
        (0.203, 0.223, OKISH),   # exactly okish_abs above
        (0.203, 0.183, OKISH),
        (0.203, 0.2231, FAIL),
        (0.203, 0.1829, FAIL),
        (1.0, 0.995, OK),
        (1.0, 0.9949, OKISH),
        (0.0, 0.02, OKISH),
        (0.0, 0.0201, FAIL),
    ],
)
def test_rate_boundaries(paper, reproduced, expected):
    assert _verdict(paper, reproduced, "rate") == expected


@pytest.mark.parametrize(
    ("reproduced", "expected_delta", "expected"),
    [
        ([0.03, 0.08], 0.0, OK),
        ([0.04, 0.05], 0.0, OK),          # inside the range
        ([0.025, 0.08], 0.005, OK),       # reaches 0.005 below: boundary
        ([0.024, 0.08], 0.006, OKISH),
        ([0.03, 0.10], 0.02, OKISH),      # okish boundary
        ([0.03, 0.1001], 0.0201, FAIL),
        ([0.0, 0.5], 0.42, FAIL),         # the worse side counts
    ],
)
def test_range_boundaries(reproduced, expected_delta, expected):
    assert delta([0.03, 0.08], reproduced, "range") == pytest.approx(expected_delta)
    assert _verdict([0.03, 0.08], reproduced, "range") == expected


def test_not_computable_and_bad_kind():
    assert _verdict(0.5, None, "rate") == NA
    assert delta(0.5, None, "rate") is None
    with pytest.raises(ValueError, match="unknown claim kind"):
        _verdict(1, 1, "ratio")
    with pytest.raises(ValueError, match=r"\[low, high\]"):
        _verdict([0.1], [0.1, 0.2], "range")


def test_override_and_signed_delta():
    assert _verdict(0.5, 0.51, "rate", {"ok_abs": 0.01}) == OK
    assert _verdict(0.5, 0.51, "rate") == OKISH
    assert _verdict(100, 103, "count", {"okish_rel": 0.05}) == OKISH
    assert delta(1237, 234, "count") == -1003
    assert isinstance(delta(1237, 234, "count"), int)
    assert delta(0.5, 0.25, "rate") == -0.25


def test_a_claims_file_of_ones_own_starts_from_the_shipped_classes(tmp_path):
    # the tolerances are written once, in the shipped file: a file without them gets those,
    # one that changes a bound keeps the others
    claim = ('[[claim]]\nid = "x"\nsection = "4"\ngroup = "g"\nwhat = "w"\npaper = 0.5\nkind = "rate"\n'
             'compute = "split_questions"\nparams = { split = "test" }\ncommand = "c"\n')
    bare = tmp_path / "bare.toml"
    bare.write_text(claim, encoding="utf-8")
    assert load_claims(bare)[1] == TOL
    tighter = tmp_path / "tighter.toml"
    tighter.write_text("[tolerance.rate]\nok_abs = 0.001\n\n" + claim, encoding="utf-8")
    got = load_claims(tighter)[1]
    assert got["rate"] == {**TOL["rate"], "ok_abs": 0.001} and got["count"] == TOL["count"]
    assert TOL["rate"]["ok_abs"] != 0.001


def test_a_class_without_its_bounds_is_an_error():
    with pytest.raises(ValueError, match="rate lacks ok_abs, okish_abs"):
        tolerances_from_toml({"count": {"okish_rel": 0.01}, "range": {"ok_abs": 0.005, "okish_abs": 0.02}})
    with pytest.raises(ValueError, match="needs the tolerance okish_abs"):
        verdict(0.5, 0.6, "rate", {"ok_abs": 0.01})


@given(st.integers(0, 10_000), st.integers(0, 10_000))
def test_rate_rule_matches_exact_integer_arithmetic(i, j):
    # Values with four decimals: compare the float rule with exact integer arithmetic
    # in units of 1e-4 (ok: |d| <= 50, okish: |d| <= 200).
    diff = abs(i - j)
    expected = OK if diff <= 50 else OKISH if diff <= 200 else FAIL
    assert _verdict(i / 10_000, j / 10_000, "rate") == expected


@given(st.integers(0, 100_000), st.integers(-3_000, 3_000))
def test_count_rule_matches_exact_integer_arithmetic(paper, d):
    reproduced = paper + d
    # okish when 100 * |d| <= max(paper, 1), exactly
    expected = OK if d == 0 else OKISH if 100 * abs(d) <= max(paper, 1) else FAIL
    assert _verdict(paper, reproduced, "count") == expected


@given(st.floats(0, 1), st.floats(0, 0.1), st.floats(0, 0.1))
def test_verdict_never_improves_as_the_error_grows(paper, small, extra):
    order = {OK: 0, OKISH: 1, FAIL: 2}
    near = _verdict(paper, paper + small, "rate")
    far = _verdict(paper, paper + small + extra, "rate")
    assert order[far] >= order[near]
