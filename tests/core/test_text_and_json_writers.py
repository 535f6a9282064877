"""The foundation's two text rules and its JSON writers (issue 25, classes 6 and 8).

* terminal text: no character that drives a terminal is ever written raw, and
  printable text (non-ASCII letters included) is unchanged;
* Markdown: a cell stays one cell of one row, a code span one span;
* every JSON the project writes is strict JSON (no ``NaN``/``Infinity``), and
  no other module writes JSON on its own (a scan of the sources).
"""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempbench_core.atomic import write_json, write_jsonl
from tempbench_core.jsonl import (
    dumps_compact,
    dumps_fragment_bytes,
    dumps_json,
    dumps_strict,
    dumps_strict_bytes,
    terminal_json,
)
from tempbench_core.runfile import write_meta
from tempbench_core.text import (
    lone_surrogate,
    markdown_cell,
    markdown_code,
    markdown_text,
    terminal_text,
    unsafe_characters,
)

REPO = Path(__file__).resolve().parents[2]
#: What must never reach a terminal raw: C0, DEL, C1, separators, bidi overrides/isolates, surrogates.
RAW = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
HOSTILE = ["\x1b[2J\x1b]0;title\x07", "a\nb", "tab\there", "cr\roverwrite", "\x9b31m", "\x7f", "\u202eevil",
           "\u2066iso\u2069", "line\u2028sep", "half \ud800 pair", "\x00nul"]


@pytest.mark.parametrize("text", HOSTILE)
def test_terminal_text_leaves_nothing_raw_and_shows_what_it_escaped(text: str) -> None:
    shown = terminal_text(text)
    assert not RAW.search(shown), repr(shown)
    assert unsafe_characters(text) and all(e in shown for e in unsafe_characters(text))
    shown.encode("utf-8")  # a lone surrogate is escaped too: the text can be written


def test_printable_text_is_unchanged() -> None:
    for text in ["Zürich", "Ådä | x | y | 1850", "日本語", "Ελληνικά", "a\\x1b (a backslash)", "زبان\u200cفارسی", ""]:
        assert terminal_text(text) is text or terminal_text(text) == text
        assert markdown_code(text) == f"`{text}`" or "`" in text
        assert markdown_cell(text) == text.replace("|", "\\|")


def test_keep_newlines_keeps_only_the_line_feed() -> None:
    assert terminal_text("one\ntwo\r\x1b", keep_newlines=True) == "one\ntwo\\r\\x1b"


def _gfm_cells(row: str) -> list[str]:
    """Cells of a GFM table row as GitHub splits them: an escaped character (``\\\\x``) is never a bar."""
    cells, cur, i = [], "", 0
    body = row.strip()[1:-1] if row.strip().startswith("|") and row.strip().endswith("|") else row.strip()
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            cur += body[i:i + 2]
            i += 2
            continue
        if body[i] == "|":
            cells.append(cur)
            cur = ""
        else:
            cur += body[i]
        i += 1
    cells.append(cur)
    return cells


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab|\\`\n\r\t\x1b#*- ")), max_size=12), min_size=1, max_size=4))
def test_a_markdown_cell_stays_one_cell_of_one_row(cells: list[str]) -> None:
    row = "| " + " | ".join(markdown_cell(c) for c in cells) + " |"
    assert "\n" not in row and "\r" not in row
    assert len(_gfm_cells(row)) == len(cells), row


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab`| \n\x1b")), max_size=10))
def test_a_code_span_cannot_be_closed_by_its_text(text: str) -> None:
    from eval.report.markdown_html import _inline

    span = markdown_code(text)
    assert "\n" not in span and not RAW.search(span)
    html = _inline(span)  # the report's own Markdown reader: exactly one code element, the whole text
    if terminal_text(text).strip(" "):
        assert html.count("<code>") == 1 and html.startswith("<code>") and html.endswith("</code>"), (span, html)


def test_markdown_text_is_one_line() -> None:
    assert markdown_text("x\n# heading\n| a | b |") == "x\\n# heading\\n| a | b |"


def test_lone_surrogates_are_found_with_their_key_path() -> None:
    assert lone_surrogate({"id": "q1", "S_star": [{"s": "a\ud800"}]}) == ("S_star[0].s", "\\ud800")
    assert lone_surrogate(["ok", {"\udfffk": 1}])[0].startswith("the key")
    assert lone_surrogate({"a": "\U0001F600 a valid pair"}) is None


# ------------------------------------------------------------------ strict JSON out

NON_FINITE = {"nan": float("nan"), "inf": [float("inf"), -math.inf], "np": np.float64("nan"), "ok": 0.25,
              "nested": {"t": (1.5, float("nan"))}}


def _strict(text: str) -> object:
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} written: not JSON"))


def test_every_writer_writes_strict_json(tmp_path: Path) -> None:
    write_json(tmp_path / "a.json", NON_FINITE)
    write_jsonl(tmp_path / "b.jsonl", [NON_FINITE, {"x": float("-inf")}])
    write_meta(tmp_path / "r.jsonl", {"config": {"name": "x"}, "coverage": float("nan")})
    texts = [(tmp_path / "a.json").read_text(encoding="utf-8"), *(tmp_path / "b.jsonl").read_text(encoding="utf-8").split("\n")[:2],
             (tmp_path / "r.meta.json").read_text(encoding="utf-8"), dumps_compact(NON_FINITE), dumps_strict(NON_FINITE),
             dumps_strict_bytes(NON_FINITE).decode("utf-8"), dumps_json(NON_FINITE), dumps_json(NON_FINITE, indent=None),
             terminal_json(NON_FINITE)]
    for text in texts:
        value = _strict(text)
        assert "NaN" not in text and "Infinity" not in text, text
        if isinstance(value, dict) and "nan" in value:
            assert value["nan"] is None and value["ok"] == 0.25 and value["inf"] == [None, None]


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                              st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)),
                    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                    max_leaves=12), st.sampled_from([None, 2]))
def test_finite_documents_keep_the_standard_librarys_bytes(value: object, indent: int | None) -> None:
    assert dumps_json(value, indent=indent) == json.dumps(value, indent=indent, ensure_ascii=False)


def test_terminal_json_is_the_same_value_with_nothing_raw() -> None:
    value = {"q": "Whom \x1b]0;x\x07 \x9b31m \u202e \ud800 \x7f?", "n": [1, 2.5]}
    text = terminal_json(value)
    assert not RAW.search(text.replace("\n", "")), text
    assert json.loads(text) == value


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@given(_JSON_VALUES)
@settings(max_examples=300, deadline=None)
def test_a_fragment_in_a_strict_document_is_written_as_its_value(value: object) -> None:
    # the strict writer either takes the fragment as it is, with the bytes the plain value gets,
    # or refuses it (TypeError: json cannot write a fragment) where orjson's forms would differ
    try:
        whole = dumps_strict_bytes({"x": [orjson.Fragment(dumps_fragment_bytes(value))]})
    except TypeError:
        return
    assert whole == dumps_strict_bytes({"x": [value]})


def test_fragment_writes_numpy_arrays_as_lists() -> None:
    assert dumps_fragment_bytes(np.array([3, -1, 2**40], dtype=np.int64)) == b"[3,-1,1099511627776]"
    assert dumps_fragment_bytes([]) == b"[]"


# The modules allowed to call json.dumps / orjson.dumps themselves: the writers, and two calls
# that write nothing (a digest of a value; the text of a key searched for in a file's text).
_WRITERS = {"tempbench_core/jsonl.py"}
_NOT_WRITING = {("tempbench_core/digest.py", "sha256_json"), ("retriever/labels.py", "_json_line")}


def _dumps_calls(path: Path) -> list[tuple[str, int]]:
    """``(enclosing function, line)`` of every ``json.dumps``/``orjson.dumps`` call in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr in ("dumps", "dump")
                    and isinstance(child.func.value, ast.Name) and child.func.value.id in ("json", "orjson")):
                found.append((function, child.lineno))
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_no_module_writes_json_but_through_the_strict_writers() -> None:
    offenders = []
    for package in ("tempbench_core", "retriever", "eval", "tempbench"):
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in _WRITERS:
                continue
            for function, line in _dumps_calls(path):
                if (rel, function) not in _NOT_WRITING:
                    offenders.append(f"{rel}:{line} ({function})")
    assert not offenders, "JSON written without tempbench_core.jsonl's strict writers: " + ", ".join(offenders)
