"""The fast JSON paths (orjson) give exactly the standard library's bytes and values.

``dumps_compact`` must equal ``json.dumps(obj, ensure_ascii=False,
separators=(",", ":"))`` byte for byte (run files, the report's blob), except
that a NaN or infinity is written ``null`` (strict JSON, issue 25), and
``read_jsonl``/``loads_fast`` must give ``json.loads``'s values, types and
errors, on random records: non-ASCII and control characters, floats of every
magnitude (orjson writes some of them differently), integers beyond 64 bits,
NaN and infinities, nesting.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempbench_core.errors import InputError
from tempbench_core.jsonl import dumps_compact, dumps_compact_bytes, dumps_strict, loads_fast, read_jsonl

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # surrogate-free: writable as UTF-8
FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-9, max_value=1e-3),  # orjson writes 0.00001 where Python writes 1e-05
    st.floats(min_value=1e15, max_value=1e18),
    st.sampled_from([0.0, -0.0, 1e-4, 1e-5, 1e-7, 1e16, 1e22, 5e-324, 1.7976931348623157e308, 0.1, 2.5]),
)
INTS = st.one_of(st.integers(-(2**70), 2**70), st.integers(-10, 10))
SCALARS = st.one_of(st.none(), st.booleans(), INTS, FLOATS, TEXT)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(TEXT, inner, max_size=4)), max_leaves=20)


def _std(obj) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _std_strict(obj) -> str:
    """json.dumps with every NaN/infinity as null (what a browser's JSON.parse accepts)."""
    def finite(o):
        if isinstance(o, float):
            return o if math.isfinite(o) else None
        if isinstance(o, (list, tuple)):
            return [finite(x) for x in o]
        if isinstance(o, dict):
            return {k: finite(v) for k, v in o.items()}
        return o
    return json.dumps(finite(obj), ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=1500, deadline=None)
@given(VALUES)
def test_dumps_compact_is_the_standard_librarys_bytes(value):
    assert dumps_compact(value) == _std_strict(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.fixed_dictionaries({"id": TEXT, "score": FLOATS, "t_start": INTS, "line": TEXT,
                                       "anchor": st.one_of(st.none(), TEXT)}), max_size=5))
def test_run_records_are_written_as_before(items):
    record = {"id": "q1", "split": "test", "evidence": items, "cutoff_ties": []}
    assert dumps_compact(record) == _std_strict(record)


# floats that orjson and json.dumps write alike (a NaN or infinity is null in both); text that looks like the others
ALIKE_FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: x == 0 or not abs(x) < 1e-4),
                         st.sampled_from([0.0, -0.0, 1e-4, -1e-4, 1e16, 5e22, math.nan, math.inf]))
LOOKALIKE_TEXT = st.one_of(TEXT, st.sampled_from(["e-5", "0.00001", "null", "Saint-Jean e-1", "\u2028\x7f\x00"]))
ALIKE_VALUES = st.recursive(st.one_of(st.none(), st.booleans(), INTS, ALIKE_FLOATS, LOOKALIKE_TEXT),
                            lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                    st.dictionaries(LOOKALIKE_TEXT, inner, max_size=4)),
                            max_leaves=20)


@settings(max_examples=1500, deadline=None)
@given(ALIKE_VALUES)
def test_floats_alike_skips_only_the_scan(value):
    # the caller's word that every float is 0 or at least 1e-4 (or not finite) gives the same bytes, unscanned;
    # integers beyond 64 bits still go to the standard library
    assert dumps_compact_bytes(value, floats_alike=True) == dumps_compact_bytes(value) == _std_strict(value).encode()


def test_tuples_and_odd_keys_are_written_as_the_standard_library_writes_them():
    for value in [(1, 2.5, "x"), {1: "a", 2.5: "b", None: "c", False: "d"}, {"a": (1e-7,)}, "\u2028\u2029\x7f\x00\x1f"]:
        assert dumps_compact(value) == _std(value)


def _same(a, b) -> bool:
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False) and type(a) is type(b)


@settings(max_examples=800, deadline=None)
@given(VALUES)
def test_loads_fast_is_json_loads(value):
    text = _std(value)
    got, want = loads_fast(text), json.loads(text)
    assert _same(got, want)
    assert _same(loads_fast(text.encode("utf-8")), want)


def test_loads_fast_reads_what_only_the_standard_library_reads():
    for text in ['{"a": NaN}', "[Infinity, -Infinity]", "1e400", '"\\ud800"', "123456789012345678901234567890",
                 '{"a": 1, "a": 2}', "[18446744073709551616, 9223372036854775808]"]:
        got, want = loads_fast(text), json.loads(text)
        assert repr(got) == repr(want)
        if isinstance(want, float) and math.isnan(want):
            assert math.isnan(got)
    with pytest.raises(json.JSONDecodeError):
        loads_fast("{")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(TEXT, SCALARS, max_size=4), max_size=6), st.booleans(), st.booleans())
def test_read_jsonl_equals_line_by_line_json(records, crlf, bom):
    end = "\r\n" if crlf else "\n"
    text = ("\ufeff" if bom else "") + "".join(_std(r) + end + ("  " + end if i % 2 else "") for i, r in enumerate(records))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.jsonl"
        path.write_bytes(text.encode("utf-8"))
        got = list(read_jsonl(path))
    want = []
    for number, line in enumerate(text.lstrip("\ufeff").split("\n"), start=1):
        if line.strip():
            want.append((number, json.loads(line)))
    assert [(n, json.dumps(v)) for n, v in got] == [(n, json.dumps(v)) for n, v in want]


def test_read_jsonl_errors_name_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": NaN}\n{"c": 123456789012345678901234567890}\n{"d": \n')
    rows = []
    with pytest.raises(InputError) as exc:
        for row in read_jsonl(path):
            rows.append(row)
    assert [n for n, _ in rows] == [1, 2, 3]
    assert math.isnan(rows[1][1]["b"]) and rows[2][1]["c"] == 123456789012345678901234567890
    assert ":4" in str(exc.value) and "not valid JSON" in str(exc.value)
    path.write_bytes(b'{"a": 1}\n\xff\n')
    with pytest.raises(InputError, match="invalid UTF-8"):
        list(read_jsonl(path))
    path.write_bytes(b'{"a": 1}\n{"b": 2')
    with pytest.raises(InputError, match="truncated JSON"):
        list(read_jsonl(path))


@settings(max_examples=1500, deadline=None)
@given(VALUES)
def test_dumps_strict_is_the_standard_librarys_bytes_with_non_finite_as_null(value):
    got = dumps_strict(value)
    assert got == _std_strict(value)
    json.loads(got, parse_constant=lambda name: pytest.fail(f"{name} written"))  # strict JSON


def test_dumps_strict_equals_dumps_compact_where_floats_are_finite():
    for value in [{"a": None, "b": [1.5, 2e-7, "type-1", "e-5"]}, [0.00001, None, "0.0000"], {"x": (1e16, -0.0)}]:
        assert dumps_strict(value) == dumps_compact(value)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="e-0.123x", max_size=30))
def test_the_float_form_test_is_the_regular_expressions(text):
    """The substring-driven test finds what a search with the regular expression finds (``e-`` runs included)."""
    from tempbench_core.jsonl import _FLOAT_FORM_DIFFERS, _float_form_differs

    raw = text.encode()
    assert _float_form_differs(raw) == (_FLOAT_FORM_DIFFERS.search(raw) is not None)


def test_a_late_exponent_after_many_label_dashes_is_found():
    value = {"labels": ["Saint-Jean e-12 type-x"] * 50, "score": 2e-7}
    assert dumps_compact(value) == _std(value)
    assert dumps_strict(value) == _std(value)
