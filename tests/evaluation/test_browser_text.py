"""The browser's entries as JSON text with holes (:mod:`eval.report.browser`), against plain JSON of the values.

A part writes its entries with a hole wherever a string number goes; the
merge fills the holes and the blob holds the text as :class:`RawJSON`. The
page's JSON must be what writing the plain values gives, whichever writer
(orjson, or json where orjson's bytes would differ) writes it.
"""

from __future__ import annotations

import math

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.report.browser import _HOLE, RawJSON, _filled, _json_for_script
from tempbench_core.jsonl import dumps_strict_bytes

# values an entry holds, and strings JSON must escape (NUL among them: the hole's byte, raw)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1), st.floats(allow_nan=True),
                     st.lists(st.sampled_from(["a", "\x00", '"', "\\", "<", "&", "é", "😀", "\n", "0.00001", "e-5"]),
                              max_size=4).map("".join))
_slot = st.tuples(st.just("slot"), st.integers(0, 10**9))
_values = st.recursive(st.one_of(_scalars, _slot), lambda kids: st.lists(kids, max_size=4)
                       | st.dictionaries(st.sampled_from(["st", "a", "ev"]), kids, max_size=3), max_leaves=30)


def _with(value, fill):
    """``value`` with each slot replaced by ``fill(number)``."""
    if isinstance(value, tuple) and value[:1] == ("slot",):
        return fill(value[1])
    if isinstance(value, list):
        return [_with(v, fill) for v in value]
    if isinstance(value, dict):
        return {k: _with(v, fill) for k, v in value.items()}
    return value


def _numbers(value):
    out: list[int] = []
    _with(value, out.append)
    return out


@settings(max_examples=400, deadline=None)
@given(_values)
def test_filled_text_is_the_json_of_the_values(value):
    text = orjson.dumps(_with(value, lambda _: _HOLE))
    numbers = np.array(_numbers(value), dtype=np.int64)
    assert _filled(text, numbers) == orjson.dumps(_with(value, lambda n: n))


def test_a_count_of_holes_that_does_not_match_is_refused():
    with pytest.raises(ValueError, match="holes"):
        _filled(orjson.dumps([_HOLE, _HOLE]), np.array([1], dtype=np.int64))
    assert _filled(b"[1,2]", np.array([], dtype=np.int64)) == b"[1,2]"


def _plain_json(data) -> str:
    raw = dumps_strict_bytes(data)
    return raw.replace(b"&", b"\\u0026").replace(b"<", b"\\u003c").replace(b">", b"\\u003e").decode("utf-8")


@pytest.mark.parametrize("extra", [
    "plain",
    "label 0.00001 wide",          # text that makes the writer fall back to json
    2**70,                          # an integer orjson cannot write: json writes it
    math.nan,                       # written null by both
    "<&> é",
])
def test_raw_text_is_written_as_the_values_would_be(extra):
    runs = {"x": [{"st": [0], "a": ["oracle", 3, None, 1, 2, True, None], "ev": [[3, 1.2346, 9], [4, None, 0]]}, None],
            "y": []}
    data = {"configs": ["x", "y"], "strings": ["a<b", extra if isinstance(extra, str) else "s"],
            "questions": [{"a": extra}], "runs": runs, "settings": {"x": {"k": 15}}}
    raw = {**data, "runs": {name: RawJSON(orjson.dumps(entries)) for name, entries in runs.items()}}
    assert _json_for_script(raw) == _plain_json(data)


@settings(max_examples=200, deadline=None)
@given(st.lists(_values, max_size=4), _scalars)
def test_raw_text_of_any_values(entries, other):
    value = _with(entries, lambda n: n)
    try:
        text = orjson.dumps(value)
    except orjson.JSONEncodeError:  # a string orjson cannot write is no entry
        return
    data = {"questions": [other], "runs": {"x": value}}
    try:
        plain = _plain_json(data)
    except UnicodeEncodeError:
        return
    assert _json_for_script({"questions": [other], "runs": {"x": RawJSON(text)}}) == plain
