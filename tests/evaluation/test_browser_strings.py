"""The browser's string table numbers a whole column of texts (``_Strings.numbers``) as one call per text does."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eval.report.browser import _Strings

_texts = st.lists(st.sampled_from(["a", "b", "c", "d", "e", ""]), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts, min_size=1, max_size=5))
def test_numbers_are_first_use_numbers(columns):
    strings, plain = _Strings(), _Strings()
    for column in columns:
        assert strings.numbers(column) == [plain(text) for text in column]
        assert list(strings.items()) == list(plain.items())


def test_a_text_met_again_keeps_its_number():
    strings = _Strings()
    assert strings.numbers(["x", "y", "x"]) == [0, 1, 0]
    assert strings.numbers(["z", "y", "w", "z"]) == [2, 1, 3, 2]
    assert list(strings) == ["x", "y", "z", "w"]
