"""Every module that implements a published formula cites its source (issue 22 item 6), as bm25s and ranx do."""

from __future__ import annotations

import importlib

import pytest

#: module -> the authors its docstring names; ``True``: in a numpydoc "References" section.
CITED = {
    "retriever.bm25": (("Robertson", "Zaragoza", "Kamphuis"), True),
    "eval.rank": (("Järvelin", "Kekäläinen", "Voorhees"), True),
    "eval.tie_forms": (("McSherry", "Najork"), True),
    "eval.ties": (("McSherry", "Najork"), True),
    "eval.bootstrap": (("Efron", "Tibshirani", "Smucker", "Holm"), True),
    "eval.paired": (("Smucker", "Holm"), True),
    # the reproducibility measures cite in their prose (eval/repro/ is another helper's)
    "eval.repro": (("Breuer",), False),
    "eval.repro.ktu": (("Breuer",), False),
    "eval.repro.rbo": (("Webber", "Moffat", "Zobel"), False),
    "eval.repro.rmse": (("Breuer",), False),
    "eval.repro.ttest": (("Breuer",), False),
    "eval.repro.effects": (("Breuer",), False),
}


@pytest.mark.parametrize("name", sorted(CITED))
def test_the_formula_cites_its_source(name):
    doc = importlib.import_module(name).__doc__ or ""
    authors, section = CITED[name]
    assert [a for a in authors if a not in doc] == [], name
    if section:
        assert "References\n----------\n" in doc, f"{name}: no numpydoc References section"
