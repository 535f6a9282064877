"""SPEC §1.1 loader: load order, formats accepted, errors with file and line."""

from __future__ import annotations

import csv
import gzip
import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import retriever.kg as kg_module
from retriever.incidence import Incidence
from retriever.kg import load_edgelist
from tempbench_core.errors import InputError, MissingDataError

HEADER = "ts,head,tail,relation_type"


def write(tmp_path: Path, text: str | bytes, name: str = "kg.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def slow_load(text: str) -> tuple[list[tuple[str, str, str, int]], list[str], list[str]]:
    """Independent reference: csv module, per-row Python objects."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff"), newline=""))
    names = [n.strip() for n in next(reader)]
    pos = {("ts" if n == "timestamp" else n): i for i, n in enumerate(names)}
    rows, ents, rels = [], [], []
    for fields in reader:
        if not fields or (len(fields) == 1 and not fields[0].strip()):
            continue
        h, t, r = fields[pos["head"]], fields[pos["tail"]], fields[pos["relation_type"]]
        rows.append((h, r, t, int(fields[pos["ts"]])))
        for e in (h, t):
            if e not in ents:
                ents.append(e)
        if r not in rels:
            rels.append(r)
    return rows, ents, rels


def as_tuples(kg) -> list[tuple[str, str, str, int]]:
    return [
        (kg.entity_ids[h], kg.relation_ids[r], kg.entity_ids[t], y)
        for h, r, t, y in zip(kg.head.tolist(), kg.relation.tolist(), kg.tail.tolist(), kg.year.tolist(), strict=True)
    ]


def test_entity_load_order_head_before_tail(tmp_path: Path) -> None:
    path = write(tmp_path, f"{HEADER}\n2000,Q5,Q3,P9\n1990,Q3,Q7,P2\n1995,Q1,Q5,P9\n")
    kg = load_edgelist(path)
    assert kg.entity_ids == ["Q5", "Q3", "Q7", "Q1"]
    assert kg.relation_ids == ["P9", "P2"]
    assert kg.head.tolist() == [0, 1, 3] and kg.tail.tolist() == [1, 2, 0]
    assert kg.year.tolist() == [2000, 1990, 1995]  # unsorted rows keep CSV order
    assert kg.head.dtype == np.int32 and kg.relation.dtype == np.int32 and kg.year.dtype == np.int64
    assert (kg.n_rows, kg.n_entities, kg.n_relations) == (3, 4, 2)
    assert kg.entity_index["Q7"] == 2 and kg.relation_index["P2"] == 1


def test_crlf_bom_blank_lines_alias_and_column_order(tmp_path: Path) -> None:
    text = "\ufeffrelation_type,timestamp,tail,head\r\nP1,1990,Q2,Q1\r\n\r\n   \r\nP2,-5,Q1,Q3\r\n\r\n"
    kg = load_edgelist(write(tmp_path, text))
    assert as_tuples(kg) == [("Q1", "P1", "Q2", 1990), ("Q3", "P2", "Q1", -5)]
    assert kg.entity_ids == ["Q1", "Q2", "Q3"]


def test_extra_columns_are_ignored(tmp_path: Path) -> None:
    kg = load_edgelist(write(tmp_path, "ts,head,tail,relation_type,weight\n1990,Q1,Q2,P1,0.5\n"))
    assert as_tuples(kg) == [("Q1", "P1", "Q2", 1990)]


def test_numeric_looking_ids_stay_strings(tmp_path: Path) -> None:
    kg = load_edgelist(write(tmp_path, f"{HEADER}\n1990,007,7,01\n"))
    assert kg.entity_ids == ["007", "7"] and kg.relation_ids == ["01"]


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("ts,head,tail\n1990,Q1,Q2\n", 1, "missing column(s) relation_type"),
        ("ts,timestamp,head,tail,relation_type\n", 1, "appears twice"),
        ("\n" + HEADER + "\n1990,Q1,Q2,P1\n", 1, "empty first line"),
        ("", 1, "empty first line"),
        (f"{HEADER}\n1990,Q1,Q2,P1\n1991,Q1,Q2\n", 3, "too few fields"),
        (f"{HEADER}\n1990,Q1,Q2,P1\n1991,Q1,Q2,P1,\n", 3, "too many fields"),
        (f"{HEADER}\n1990,Q1,Q2,P1\n\n\n1991,Q1,Q2,P1,x\n", 5, "too many fields"),
        (f"{HEADER}\r\n1990,Q1,Q2,P1\r\n\r\n1991\r\n", 4, "too few fields"),
        (f"{HEADER}\n1990,Q1,Q2,P1\nabc,Q1,Q2,P1\n", 3, "non-integer ts 'abc'"),
        (f"{HEADER}\n1990.0,Q1,Q2,P1\n", 2, "non-integer ts '1990.0'"),
        (f"{HEADER}\n,Q1,Q2,P1\n", 2, "non-integer ts ''"),
        (f"{HEADER}\n1990,Q1,Q2,P1\n1990,,Q2,P1\n", 3, "empty head id"),
        (f"{HEADER}\n1990,Q1,  ,P1\n", 2, "empty tail id"),
        (f"{HEADER}\n1990,Q1,Q2,\n", 2, "empty relation_type id"),
        (f"{HEADER}\n" + "1990,Q1,Q2,P1\n" * 3 + "1990,Q1,\"Q2\nstill Q2\",P1\n1990,Q1,Q2\n", 7, "too few fields"),
        ("\ufeff" + f"{HEADER}\n1990,Q1,Q2,P1\n\n2000,Q1,Q2\n", 4, "too few fields"),
        (f"{HEADER}\n", None, "no data rows"),
        # every row one field too many: pandas alone would read the first field as an index
        (f"{HEADER}\nzz,1990,Q1,Q2,P1\nyy,1991,Q3,Q4,P2\n", 2, "too many fields"),
        (f"{HEADER}\n" + "1990,Q1,Q2,P1\n" * 4 + "zz,1990,Q1,Q2,P1\nyy,1991,Q3,Q4,P2\n", 6, "too many fields"),
    ],
)
@pytest.mark.parametrize("parts", [1, 3])
def test_malformed_input_names_file_and_line(tmp_path: Path, text: str, line: int | None, fragment: str,
                                             parts: int) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        load_edgelist(path, parts=parts)
    assert info.value.path == str(path)
    assert info.value.line == line
    assert fragment in info.value.problem
    assert str(path) in str(info.value)


@pytest.mark.parametrize("parts", [1, 2])
def test_invalid_utf8_line(tmp_path: Path, parts: int) -> None:
    path = write(tmp_path, f"{HEADER}\n1990,Q1,Q2,P1\n1990,Q\xff,Q2,P1\n".encode("latin-1"))
    with pytest.raises(InputError) as info:
        load_edgelist(path, parts=parts)
    assert info.value.line == 3


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError):
        load_edgelist(tmp_path / "nope.csv")


_ID = st.sampled_from(["Q1", "Q2", "Q3", "Q10", "Q42", "Q7"])
_ROW = st.tuples(st.integers(-50, 3000), _ID, _ID, st.sampled_from(["P1", "P31", "P2"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_ROW, min_size=1, max_size=40), crlf=st.booleans(), bom=st.booleans(), blanks=st.booleans())
def test_matches_slow_reference(tmp_path: Path, rows, crlf: bool, bom: bool, blanks: bool) -> None:
    eol = "\r\n" if crlf else "\n"
    lines = [HEADER] + [f"{ts},{h},{t},{r}" for ts, h, t, r in rows]
    if blanks:
        lines = [x for line in lines for x in (line, "")]
    text = ("\ufeff" if bom else "") + eol.join(lines) + eol
    kg = load_edgelist(write(tmp_path, text))
    expected_rows, ents, rels = slow_load(text)
    assert as_tuples(kg) == expected_rows
    assert kg.entity_ids == ents and kg.relation_ids == rels


_MANY_IDS = st.sampled_from([f"Q{i}" for i in range(12)] + ["Q 1", " Q2", "é", "Q1\t"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(-50, 3000), _MANY_IDS, _MANY_IDS, _MANY_IDS), min_size=1, max_size=60),
       crlf=st.booleans(), bom=st.booleans(), blanks=st.integers(0, 3), extra=st.booleans(),
       parts=st.integers(2, 6))
def test_parts_parsed_side_by_side_read_as_one(tmp_path: Path, rows, crlf: bool, bom: bool, blanks: int,
                                               extra: bool, parts: int) -> None:
    """A file cut into parts parsed in processes of their own gives the rows, ids and order of one pass."""
    eol = "\r\n" if crlf else "\n"
    header = HEADER + (",note" if extra else "")
    lines = [header] + [f"{ts},{h},{t},{r}" + (",x" if extra else "") for ts, h, t, r in rows]
    if blanks:
        lines = [x for i, line in enumerate(lines) for x in ([line] + [""] * (i % (blanks + 1)))]
    text = ("\ufeff" if bom else "") + eol.join(lines) + eol + eol * blanks
    path = write(tmp_path, text)
    one, cut = load_edgelist(path, parts=1), load_edgelist(path, parts=parts)
    for name in ("head", "tail", "relation", "year"):
        assert np.array_equal(getattr(one, name), getattr(cut, name))
        assert getattr(one, name).dtype == getattr(cut, name).dtype
    assert (one.entity_ids, one.relation_ids) == (cut.entity_ids, cut.relation_ids)
    expected_rows, ents, rels = slow_load(text)
    assert as_tuples(cut) == expected_rows
    assert cut.entity_ids == ents and cut.relation_ids == rels


def test_a_file_with_quotes_or_compressed_is_read_in_one_part(tmp_path: Path) -> None:
    quoted = write(tmp_path, f'{HEADER}\n1990,Q1,"Q2\nstill Q2",P1\n' + "1991,Q3,Q4,P1\n" * 50)
    assert load_edgelist(quoted, parts=4).entity_ids == ["Q1", "Q2\nstill Q2", "Q3", "Q4"]
    assert kg_module._spans(quoted, 4) == [(0, None)]
    gz = tmp_path / "kg.csv.gz"
    gz.write_bytes(gzip.compress((f"{HEADER}\n" + "1990,Q1,Q2,P1\n" * 3).encode()))
    assert kg_module._spans(gz, 4) == [(0, None)]
    assert load_edgelist(gz, parts=4).entity_ids == ["Q1", "Q2"]
    trailing = write(tmp_path, f"{HEADER}\n1990,Q1,Q2,P1\n" + "\n" * 200, "blank.csv")
    assert len(kg_module._spans(trailing, 4)) == 4  # the later parts hold blank lines only
    assert load_edgelist(trailing, parts=4).entity_ids == ["Q1", "Q2"]
    plain = write(tmp_path, f"{HEADER}\n" + "1990,Q1,Q2,P1\n" * 40)
    spans = kg_module._spans(plain, 4)
    assert len(spans) == 4 and spans[0][0] == 0 and spans[-1][1] is None
    data = plain.read_bytes()
    assert all(data[stop - 1:stop] == b"\n" for _, stop in spans[:-1])


def test_a_file_that_cannot_be_mapped_is_read_in_one_part(tmp_path: Path, monkeypatch) -> None:
    plain = write(tmp_path, f"{HEADER}\n" + "1990,Q1,Q2,P1\n" * 40)

    class Unmappable(kg_module.mmap.mmap):
        def __new__(cls, *_args, **_kwargs):
            raise OSError(19, "No such device")

    monkeypatch.setattr(kg_module.mmap, "mmap", Unmappable)
    assert kg_module._spans(plain, 4) == [(0, None)]
    assert load_edgelist(plain, parts=4).n_rows == 40


def test_networkx_view(tmp_path: Path) -> None:
    kg = load_edgelist(write(tmp_path, f"{HEADER}\n1990,Q1,Q2,P1\n1991,Q1,Q2,P1\n1992,Q2,Q2,P3\n"))
    graph = kg.to_networkx()
    assert list(graph.nodes) == ["Q1", "Q2"]
    assert graph.number_of_edges() == 3
    assert graph.get_edge_data("Q2", "Q1", key=1) == {"relation": "P1", "year": 1991, "row": 1}
    assert graph.get_edge_data("Q2", "Q2", key=2) == {"relation": "P3", "year": 1992, "row": 2}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(_ROW, min_size=1, max_size=60))
def test_incidence_matches_loop(tmp_path: Path, rows) -> None:
    text = HEADER + "\n" + "".join(f"{ts},{h},{t},{r}\n" for ts, h, t, r in rows)
    kg = load_edgelist(write(tmp_path, text))
    inc = Incidence.build(kg)
    years = sorted({ts for ts, *_ in rows}) + [-1000, 1990.5]
    for e, name in enumerate(kg.entity_ids):
        expected = [i for i, (_, h, t, _) in enumerate(rows) if name in (h, t)]
        assert inc.rows_of(e).tolist() == expected  # a self-loop row once, ascending
        for y in years:
            at = [i for i in expected if rows[i][0] == y]
            assert inc.rows_at(e, y).tolist() == at
    for group in ([0], list(range(kg.n_entities)), [kg.n_entities - 1, 0]):
        names = {kg.entity_ids[e] for e in group}
        expected = [i for i, (_, h, t, _) in enumerate(rows) if h in names or t in names]
        assert inc.rows_of_many(group).tolist() == expected
        for y in years:
            assert inc.rows_at_many(group, y).tolist() == [i for i in expected if rows[i][0] == y]
    assert inc.rows_at_many([], 1990).tolist() == []
