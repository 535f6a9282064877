"""Answer metrics (SPEC §3.6)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.answers import answer_rows, answers_report, exact_match, gold_aliases, normalize, token_f1


def test_normalize():
    assert normalize("  The  Quick, brown FOX! ") == "quick brown fox"
    assert normalize("An apple a day") == "apple day"
    assert normalize("...") == ""


@pytest.mark.parametrize(
    ("pred", "aliases", "em"),
    [
        ("Paris", ["paris"], 1),
        ("the city of Paris", ["Paris"], 1),  # gold contained in prediction
        ("Paris", ["Paris, France"], 1),  # prediction contained in gold
        ("", ["Paris"], 0),  # empty prediction never matches
        ("the", ["Paris"], 0),  # normalises to empty
        ("Lyon", ["Paris"], 0),
        ("1994", [1994.0], 1),
        ("x", ["", "..."], 0),  # empty aliases never match
    ],
)
def test_exact_match(pred, aliases, em):
    assert exact_match(pred, gold_aliases({"answer": aliases})) == em


def test_token_f1():
    assert token_f1("Paris France", ["Paris"]) == pytest.approx(2 * 0.5 * 1 / 1.5)
    assert token_f1("", ["Paris"]) == 0.0
    assert token_f1("a b", ["c", "b a"]) == 1.0


def test_aliases_fields():
    assert gold_aliases({"answer": "x", "answer_aliases": ["y"], "aliases": "z"}) == ["x", "y", "z"]
    assert gold_aliases({"answer": 1994.0}) == ["1994"]


def test_report_side_by_side_and_leak_flag():
    qs = [
        {"id": 1, "operator_type": "interval", "answer": "1994"},
        {"id": 2, "operator_type": "point_in_time", "answer": "Paris"},
        {"id": 3, "operator_type": "point_in_time", "answer": "Rome"},
    ]
    rows = answer_rows(qs, {1: "1994", 2: "paris"})
    rep = answers_report(rows)
    assert rep["EM"] == pytest.approx(2 / 3) and rep["EM_without_interval"] == 0.5
    assert rep["missing_predictions"] == 1 and rep["interval_leak_contaminated"] is True
    assert answers_report(rows, t_query_exposed=False)["interval_leak_contaminated"] is False
    assert rep["by_operator"]["interval"] == {"n": 1, "EM": 1.0, "F1": 1.0}


@given(st.text(max_size=20), st.lists(st.text(max_size=20), max_size=3))
def test_properties(pred, aliases):
    em = exact_match(pred, aliases)
    f1 = token_f1(pred, aliases)
    assert em in (0, 1) and 0.0 <= f1 <= 1.0
    if not normalize(pred):
        assert em == 0 and f1 == 0.0
    if f1 == 1.0:
        assert em == 1
