"""The run reader of ``tempbench repro`` (eval.repro.distinct over tempbench_core.runlines) reads what read_run reads.

On random files (plain SPEC §6.1 records and every other form read_run
accepts or refuses: 5-lists, evidence lines, ``t`` fields, string or boolean
times and scores, missing fields, null cut-off ties, duplicate, unknown and
unusual ids, integers beyond 64 bits, NaN, a BOM, blank lines, CRLF, gzip,
fields the reader skips holding what json reads and others might not,
duplicate and escaped keys, invalid UTF-8):
whenever :func:`~eval.repro.distinct.file_sources` reads a file, read_run
reads it without an error, with the same ids in the same order, and every
row is the one made from read_run's record (what the run-by-run path
resolves). Plain files must take the fast path (otherwise the comparison
would say nothing).
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eval.plain_table import plain_row, rows_table
from eval.repro.distinct import Reader, file_sources
from tempbench_core.errors import TempbenchError
from tempbench_core.runfile import dumps_record, read_run
from tempbench_core.runlines import parse_line, run_lines

IDS = st.one_of(st.sampled_from(["q1", "q2", "q|3", "ä ö", "", " q1", "q1\t", "\u2028", "1"]),
                st.text(max_size=6))
LABELS = st.sampled_from(["Ann", "a|b", "Zoë", "x y", "100%", ""])
TIMES = st.one_of(st.sampled_from([1994, 1994.0, -5, 0.5, 2000]), st.integers(-(2**66), 2**66))
ODD_TIMES = st.sampled_from(["1994", True, None, float("nan"), [1994]])
SCORES = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False), st.integers(-5, 5))
ODD_SCORES = st.sampled_from([True, "1.5", float("nan"), [1.0]])


@st.composite
def plain_item(draw) -> dict:
    item: dict = {}
    space = draw(st.sampled_from(("id", "label", "both")))
    if space in ("label", "both"):
        item.update(s=draw(LABELS), r=draw(LABELS), o=draw(LABELS))
    if space in ("id", "both"):
        item.update(s_id=draw(st.sampled_from(["Q1", "Q2"])), r_id="P1", o_id=draw(st.sampled_from(["Q1", "Q3"])))
    item.update(t_start=draw(st.sampled_from([1994, 1994.0, 2000])), t_end=draw(st.sampled_from([1994, 2001.5])))
    if draw(st.booleans()):
        item["score"] = draw(SCORES)
    if draw(st.booleans()):
        item["line"] = "s | r | o | 1994"
    return item


@st.composite
def odd_item(draw, kind: int):
    base = draw(plain_item())
    if kind == 0:
        return ["Q1", "P1", "Q2", draw(TIMES), 1994]  # a 5-list
    if kind == 1:
        return draw(st.sampled_from(["a | b | c | 1994", "not a line", ""]))  # an evidence line
    if kind == 2:
        base.pop("t_start", None)
        base.pop("t_end", None)
        base["t"] = draw(st.sampled_from(["1994", "1990-1994", "x"]))
        return base
    if kind == 3:
        base[draw(st.sampled_from(["t_start", "t_end"]))] = draw(st.one_of(TIMES, ODD_TIMES))
        return base
    if kind == 4:
        base["score"] = draw(ODD_SCORES)
        return base
    if kind == 5:
        return {k: v for k, v in base.items() if k not in ("s", "s_id")}  # no whole key space
    if kind == 6:
        # a key of either space holding what is not a string (the reader decodes one space and skips the other's)
        base[draw(st.sampled_from(["s", "r", "o", "s_id", "r_id", "o_id"]))] = draw(
            st.sampled_from([5, None, 1.5, True, ["Q1"], {"id": "Q1"}, "\ud800"]))
        return base
    return draw(st.sampled_from([None, 3, {"line": 5}]))


ODDITIES = 14  # 0-7: one odd item; 8: an odd id; 9: no id; 10: no evidence; 11: odd ties; 12: an odd line;
#                13: an odd field spliced into a line (SPLICED)
#: Text spliced into a record after its ``{``: values of fields the reader skips (what json reads, orjson or msgspec
#: might not: NaN, 1e400, integers beyond 64 bits, a lone surrogate escaped or encoded, the two as one pair) and
#: duplicate keys (json takes the last).
SPLICED = ['"x": NaN, ', '"x": 1e400, ', '"x": 123456789012345678901234567890, ', '"x": "\\ud800", ',
           '"x": "\ud800", ', '"x": "\\ud83d\\ude00", ', '"x": [1, {"y": -0}], ', '"id": "q2", ', '"id": 5, ',
           '"evidence": 5, ', '"evidence": [], ', '"cutoff_ties": "x", ', '"\\u0069d": "q2", ']


@st.composite
def record(draw, oddity: int | None):
    rec = {"id": draw(IDS), "evidence": draw(st.lists(plain_item(), max_size=4))}
    ties = draw(st.integers(0, 3))
    if ties == 1:
        rec["cutoff_ties"] = None
    elif ties == 2:
        rec["cutoff_ties"] = draw(st.lists(plain_item(), max_size=2))
    if draw(st.booleans()):
        rec["split"] = "test"
        rec["anchor"] = {"id": "Q1", "n": draw(TIMES)}
    if oddity is None:
        return rec
    if oddity <= 7:
        where = draw(st.sampled_from(["evidence", "cutoff_ties"]))
        items = rec.get(where) or []
        items.insert(draw(st.integers(0, len(items))), draw(odd_item(oddity)))
        rec[where] = items
    elif oddity == 8:
        rec["id"] = draw(st.sampled_from([None, 7, 1.5, True, ["q"]]))
    elif oddity == 9:
        del rec["id"]
    elif oddity == 10:
        del rec["evidence"]
    elif oddity == 11:
        rec["cutoff_ties"] = draw(st.sampled_from([{}, "x", 3]))
    return rec


@st.composite
def run_file(draw):
    oddity = draw(st.one_of(st.none(), st.integers(0, ODDITIES - 1)))
    records = draw(st.lists(record(None), min_size=1, max_size=5))
    if oddity is not None:
        records[draw(st.integers(0, len(records) - 1))] = draw(record(oddity))
    lines = [json.dumps(rec, ensure_ascii=draw(st.booleans())) for rec in records]
    if oddity == 13:
        at = draw(st.integers(0, len(lines) - 1))
        if lines[at].startswith("{"):
            lines[at] = "{" + draw(st.sampled_from(SPLICED)) + lines[at][1:]
    if oddity == 12:
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "  ", "[1, 2]", "{bad"])))
    text = "\n".join(lines) + ("\n" if draw(st.booleans()) else "")
    if oddity is not None and draw(st.integers(0, 5)) == 0:
        text = "\ufeff" + text
    if draw(st.integers(0, 5)) == 0:
        text = text.replace("\n", "\r\n")
    return text, draw(st.booleans()), oddity is not None


def _write(folder: Path, text: str, gz: bool) -> Path:
    path = folder / ("run.jsonl.gz" if gz else "run.jsonl")
    data = text.encode("utf-8", "surrogatepass")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


GOLD = {"id": {"s_id": "Q1", "r_id": "P1", "o_id": "Q3"}, "label": {"s": "Ann", "r": "a|b", "o": "Zoë"}}


def _questions(ids: list, spaces: str, unknown: bool) -> list[dict]:
    keep = list(dict.fromkeys(i for i in ids if isinstance(i, str)))
    if unknown and keep:
        keep = keep[1:]
    gold = {k: v for space in (("id", "label") if spaces == "both" else (spaces,)) for k, v in GOLD[space].items()}
    return [{"id": qid, "t_query": 1994, "S_star": [dict(gold, t_start=1994, t_end=1994)]} for qid in keep]


def _nan_free(row) -> tuple:
    # a decoded line's lists (LineItems) read as plain_items reads the record's
    return (*row[:4], *((part.srots, part.ts, part.te, [x if x == x else "nan" for x in part.scores], part.cls)
                        for part in (row.items, row.extra)))


def file_source(path: Path, reader: Reader):
    return file_sources([path], reader)[0]


def _same_tables(line_rows: list, plain_rows: list) -> None:
    """The table of a file's rows (decoded lines' lists), alone and every other row swapped for read_run's, is
    the table of read_run's rows: the columns read from the decoded items are plain_items' columns."""
    ref = rows_table(plain_rows, "auto", {})
    mixed = [a if i % 2 else b for i, (a, b) in enumerate(zip(line_rows, plain_rows, strict=True))]
    for rows in (line_rows, mixed):
        table = rows_table(rows, "auto", {})
        assert (table is None) == (ref is None)
        if table is None:
            continue
        for part in ("items", "extra"):
            mine, theirs = getattr(table, part).base(), getattr(ref, part).base()
            for name, a in mine.items():
                b = theirs[name]
                assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), (part, name)
        assert table.values == ref.values


def _read_as_read_run(path: Path, questions: list[dict]) -> bool:
    """Whether the reader read the file; when it did, read_run must read the same."""
    source = file_source(path, Reader(questions, "auto", {}))
    if source is None:
        return False
    ref = read_run(path)  # must not raise: the fast path took a file read_run refuses
    by_id = {q["id"]: q for q in questions}
    # a second file of the same lines, some of them changed, read beside it, shares the rows of the lines that are equal
    lines = path.read_bytes().split(b"\n") if not path.name.endswith(".gz") else []
    other = path.with_name("other.jsonl")
    other.write_bytes(b"\n".join(line if i % 2 else line.replace(b'"evidence"', b'"evidence" ')
                                  for i, line in enumerate(lines)))
    first, second = file_sources([path, other], Reader(questions, "auto", {})) if lines else (source, None)
    assert first is not None
    for got in (source, first, second):
        if got is None:
            continue
        assert got.qids == list(ref)
        for qid, row in zip(got.qids, got.rows, strict=True):
            again = plain_row(by_id[qid], ref[qid].get("evidence", []), ref[qid].get("cutoff_ties") or [], "auto", {})
            assert again is not None and _nan_free(row) == _nan_free(again)
        _same_tables(got.rows, [plain_row(by_id[qid], ref[qid].get("evidence", []), ref[qid].get("cutoff_ties") or [],
                                          "auto", {}) for qid in got.qids])
    if second is not None:
        assert all(a is b for a, b in zip(first.rows[1::2], second.rows[1::2], strict=True))
    return True


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_file(), st.sampled_from(["both", "id", "label"]), st.integers(0, 9))
def test_what_the_reader_reads_read_run_reads(case, spaces, unknown) -> None:
    text, gz, odd = case
    ids = [rec.get("id") for rec in map(_loads_or_none, text.split("\n")) if isinstance(rec, dict)]
    questions = _questions(ids, spaces, unknown == 0)
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(Path(tmp), text, gz)
        fast = _read_as_read_run(path, questions)
        if not fast:
            try:
                read_run(path)
            except TempbenchError:
                pass
        # a plain file of unique known ids, items in the gold's space: the fast path (integers of any length too)
        if not odd and unknown and len(set(ids)) == len(ids) and "\ufeff" not in text and _all_carry(
                text, "s_id" if spaces != "label" else "s"):
            assert fast


def _loads_or_none(line: str):
    try:
        return json.loads(line)
    except ValueError:
        return None


def _all_carry(text: str, key: str) -> bool:
    records = [r for r in map(_loads_or_none, text.split("\n")) if isinstance(r, dict)]
    return all(key in it for r in records for it in [*r["evidence"], *(r.get("cutoff_ties") or [])])


def test_a_written_run_file_takes_the_fast_path(tmp_path: Path) -> None:
    records = [{"id": "q1", "evidence": [{"s": "Ann", "r": "a|b", "o": "Zoë", "s_id": "Q1", "r_id": "P1", "o_id": "Q3",
                                          "t_start": 1994, "t_end": 1994, "score": 2.5, "line": "a | p | b | 1994"}],
                "cutoff_ties": []},
               {"id": "q2", "evidence": []}, {"id": "q3", "evidence": [], "cutoff_ties": None}]
    questions = _questions(["q1", "q2", "q3"], "both", False)
    path = tmp_path / "run.jsonl"
    path.write_text("".join(dumps_record(r) for r in records), encoding="utf-8")
    assert _read_as_read_run(path, questions)
    gz = tmp_path / "run.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    assert _read_as_read_run(gz, questions)


@pytest.mark.parametrize("spaces", ["id", "label", "both"])
def test_each_question_is_read_in_its_own_key_space(tmp_path: Path, spaces: str) -> None:
    # the items carry both spaces, the space a question does not read holding what is not a string: read_run keeps
    # them and the scorer never reads them, so the fast path reads them too (decoded in the question's space)
    def item(label: object, ident: object) -> dict:
        return {"s": label, "r": "a|b", "o": "Zoë", "s_id": ident, "r_id": "P1", "o_id": "Q3", "t_start": 1994,
                "t_end": 1994}
    read_in = "label" if spaces == "label" else "id"
    odd = {"id": item(7, "Q1"), "label": item("Ann", 7)}[read_in]
    records = [{"id": "q1", "evidence": [odd, item("Ann", "Q1")]}, {"id": "q2", "evidence": [item("Ann", "Q1")]}]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(dumps_record(r) for r in records), encoding="utf-8")
    questions = _questions(["q1", "q2"], spaces, False)
    assert _read_as_read_run(path, questions)
    rows = file_source(path, Reader(questions, "auto", {})).rows
    assert {row.space for row in rows} == {read_in}
    assert rows[0].items.cls == [0, 0]  # both items are the gold triple in the space read


@pytest.mark.parametrize("spaces", ["id", "label"])
def test_a_line_is_decoded_once_in_a_benchmark_of_one_space(tmp_path: Path, spaces: str, monkeypatch) -> None:
    # the reader decodes first in the space the previous line's question read: a label-only benchmark (a KG without
    # ids) pays a second decode on its first line only
    import eval.repro.distinct as distinct

    decoded: list[str] = []
    real = distinct.parse_line
    monkeypatch.setattr(distinct, "parse_line", lambda line, space: (decoded.append(space), real(line, space))[1])
    ids = [f"q{i}" for i in range(40)]
    item = dict(GOLD["id"] | GOLD["label"], t_start=1994, t_end=1994)
    path = tmp_path / "run.jsonl"
    path.write_text("".join(dumps_record({"id": qid, "evidence": [item]}) for qid in ids), encoding="utf-8")
    source = file_source(path, Reader(_questions(ids, spaces, False), "auto", {}))
    assert source is not None and {row.space for row in source.rows} == {spaces}
    assert len(decoded) == 40 + (spaces == "label") and decoded[-1] == spaces


@pytest.mark.parametrize("text", ["", "\ufeff{}\n", '{"id": "q1", "evidence": []}\n\n{"id": "q2", "evidence": []}\n',
                                  '{"id": "q1", "evidence": []}\n{"id": "q1", "evidence": []}\n',
                                  '{"id": "q1", "evidence": [], "n": NaN}\n',
                                  '{"id": "q1", "evidence": [], "n": "\\udc00"}\n',
                                  '{"id": "q1", "evidence": [{"s": "a", "r": "b", "o": "c", "t_start": NaN, "t_end": 1}]}\n',
                                  '{"id": "q1", "evidence": [{"s": "a", "r": "b", "o": "c", "t_start": 1, "t_end": 1, '
                                  '"score": true}]}\n',
                                  '{"id": "q9", "evidence": []}\n',
                                  '[{"id": "q1", "evidence": []}]\n'])
def test_what_the_fast_path_leaves_to_read_run(tmp_path: Path, text: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(text, encoding="utf-8")
    assert file_source(path, Reader(_questions(["q1", "q2"], "label", False), "auto", {})) is None


@pytest.mark.parametrize("field", [b'"x": "\xff"', b'"x": "\xed\xa0\x80"', b'"x": "\xc0\xaf"', b'"s": "\xff"'])
def test_invalid_utf8_anywhere_is_left_to_read_run(tmp_path: Path, field: bytes) -> None:
    # msgspec skips a field it does not read without checking its bytes; read_run refuses the line
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"id": "q1", ' + field + b', "evidence": []}\n')
    assert file_source(path, Reader(_questions(["q1"], "label", False), "auto", {})) is None
    with pytest.raises(TempbenchError):
        read_run(path)


@pytest.mark.parametrize("depth", [600, 990, 1010, 1500, 100_000])
def test_deep_nesting_in_a_skipped_field(tmp_path: Path, depth: int) -> None:
    # msgspec raises RecursionError (not a DecodeError) past its depth: left to read_run, never a crash;
    # what the reader takes read_run reads (its limit is orjson's 1024 levels, then json's)
    path = tmp_path / "run.jsonl"
    path.write_bytes(b'{"id": "q1", "x": ' + b"[" * depth + b"]" * depth + b', "evidence": []}\n')
    fast = _read_as_read_run(path, _questions(["q1"], "label", False))
    assert fast == (depth <= 600) or depth in (990, 1010)


def test_integers_of_any_length_are_read_as_float_reads_them(tmp_path: Path) -> None:
    # msgspec 0.18 read 20-digit integers just above 2**64 wrapped around (19664286969745051456 as 1.2e18):
    # hence msgspec>=0.19, and these values here
    big = [2**64 + 1, -(2**63) - 1, 10**30 + 7, 123456789012345678901234567890, 19664286969745051456,
           19930674186237374973, 99999999999999999999, -18446744073709551617, 2**65]
    items = [{"s": "Ann", "r": "a|b", "o": "Zoë", "t_start": n, "t_end": n, "score": n} for n in big]
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps({"id": "q1", "evidence": items, "n": 10**40}) + "\n", encoding="utf-8")
    source = file_source(path, Reader(_questions(["q1"], "label", False), "auto", {}))
    assert source is not None
    assert source.rows[0].items.ts == source.rows[0].items.scores == [float(n) for n in big]


def test_a_damaged_gzip_stream_is_left_to_read_run(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"id": "q1", "evidence": []}\n')[:-6])
    assert file_source(path, Reader(_questions(["q1"], "label", False), "auto", {})) is None
    assert run_lines(tmp_path / "run.jsonl.gz") is not None  # the break shows only at the end of the stream
    path.write_bytes(b"\x1f\x8b not gzip")
    assert run_lines(path) is None
    # broken off after some lines: that file is left to read_run, the file read beside it is not
    long = tmp_path / "long.jsonl.gz"
    text = "".join(json.dumps({"id": f"q{i}", "evidence": []}) + "\n" for i in range(3000)).encode()
    long.write_bytes(gzip.compress(text)[:-200])
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(text)
    questions = _questions([f"q{i}" for i in range(3000)], "label", False)
    broken, fine = file_sources([long, whole], Reader(questions, "auto", {}))
    assert broken is None and fine is not None and len(fine.qids) == 3000
    with pytest.raises(TempbenchError, match="gzip"):
        read_run(long)


NUMBER_TEXT = st.builds(lambda sign, whole, frac, exp: f"{sign}{whole}{frac}{exp}",
                        st.sampled_from(["", "-"]), st.from_regex(r"\A(0|[1-9][0-9]{0,40})\Z"),
                        st.one_of(st.just(""), st.from_regex(r"\A\.[0-9]{1,40}\Z")),
                        st.one_of(st.just(""), st.builds(lambda e, n: f"{e}{n}", st.sampled_from(["e", "E", "e+", "e-"]),
                                                         st.integers(0, 400))))


@settings(max_examples=1500, deadline=None)
@given(NUMBER_TEXT)
def test_a_number_is_read_as_json_and_float_read_it(text: str) -> None:
    # every time and score the reader takes is the float of json's value, exactly (sign of zero included);
    # what float() cannot hold (json: inf, or an int too large) is left to read_run
    item = f'{{"s": "a", "r": "b", "o": "c", "t_start": {text}, "t_end": {text}, "score": {text}}}'
    line = f'{{"id": "q1", "evidence": [{item}]}}'.encode()
    value = json.loads(text)
    try:
        want = float(value)
    except OverflowError:
        want = None
    got = parse_line(line, "label")
    if want is None or want in (float("inf"), float("-inf")):
        assert got is None
    else:
        read = got.evidence[0]
        assert repr(read.t_start) == repr(read.t_end) == repr(read.score) == repr(want)
