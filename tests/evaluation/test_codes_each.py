"""``Codes.each`` (the table's interning of s, r, o values, a C loop) gives what one ``codes[value]`` per value gives."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from eval.evidence import Codes

_NAN = math.nan
# equal values of other types (1, 1.0, True) and one NaN object met again: dict keys decide, as for __missing__
_values = st.sampled_from(["a", "b", "Q1", "", 1, 1.0, True, 0, False, _NAN, ("a", "b")]) | st.builds(float, st.just("nan"))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_values, max_size=15), min_size=1, max_size=4))
def test_each_is_getitem_in_turn(columns):
    codes, plain = Codes(), Codes()
    for column in columns:
        assert list(codes.each(column)) == [plain[value] for value in column]
        assert list(codes.items()) == list(plain.items())
        assert all(a is b for a, b in zip(codes, plain, strict=True))  # the same first-met objects are kept


def test_each_numbers_new_values_in_order_of_first_use():
    codes = Codes()
    assert list(codes.each(["x", "y", "x"])) == [0, 1, 0]
    assert list(codes.each(["z", "y"])) == [2, 1]
    assert list(codes) == ["x", "y", "z"]
