"""SPEC §1.2 labels: TSV/JSON, harvesting, combination, raw-id fallback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from retriever.labels import combine_labels, harvest_labels, load_labels, render
from tempbench_core.errors import InputError, MissingDataError


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def test_tsv_with_header_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "labels.tsv", "\ufeffid\tlabel\r\nQ1\tBarack Obama\r\n\r\nP31\tinstance of\tx\r\nQ2\t\r\n")
    assert load_labels(path) == {"Q1": "Barack Obama", "P31": "instance of\tx", "Q2": ""}


def test_tsv_first_line_is_data_unless_exact_header(tmp_path: Path) -> None:
    path = write(tmp_path, "labels.tsv", "ID\tLabel\nQ1\tx\n")
    assert load_labels(path) == {"ID": "Label", "Q1": "x"}


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("id\tlabel\nQ1\ta\nQ1\tb\n", 3, "given twice (first on line 2)"),
        ("Q1\ta\n\nQ2 no tab\n", 3, "without a tab"),
        ("Q1\ta\n\tb\n", 2, "empty id"),
    ],
)
def test_tsv_errors(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = write(tmp_path, "labels.tsv", text)
    with pytest.raises(InputError) as info:
        load_labels(path)
    assert (info.value.path, info.value.line) == (str(path), line)
    assert fragment in info.value.problem


def test_json(tmp_path: Path) -> None:
    path = write(tmp_path, "labels.json", json.dumps({"Q1": "Ö", "P2": None, "Q3": ""}))
    assert load_labels(path) == {"Q1": "Ö", "Q3": ""}


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ('{\n"Q1": "a",\n"Q1": "b"\n}', 3, "given twice"),
        ('{\n"Q1": 5\n}', 2, "is int"),
        ('{\n"Q1": "a",\n}', 3, "invalid JSON"),
        ("[1, 2]", 1, "top-level JSON list"),
    ],
)
def test_json_errors(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = write(tmp_path, "labels.json", text)
    with pytest.raises(InputError) as info:
        load_labels(path)
    assert info.value.line == line
    assert fragment in info.value.problem


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError):
        load_labels(tmp_path / "none.tsv")


def test_render_falls_back_to_raw_id() -> None:
    labels = {"Q1": "Obama", "Q2": ""}
    assert [render(labels, i) for i in ("Q1", "Q2", "Q3")] == ["Obama", "Q2", "Q3"]


def _q(qid: str, star: list[dict], dist: list[dict] | None = None, stale: list[dict] | None = None) -> dict:
    return {"id": qid, "question": "?", "S_star": star, "S_dist": dist or [], "S_stale": stale or []}


def test_harvest_pairs_by_question_id_and_position(tmp_path: Path) -> None:
    labelled = [
        _q("b", [{"s": "Bob", "r": "born in", "o": "Paris"}], stale=[{"s": "Bob", "r": "lives in", "o": "Rome"}]),
        _q("a", [{"s": "Ann", "r": "born in", "o": "Oslo"}, {"s": "Oslo", "r": "capital of", "o": "Norway"}]),
        _q("c", [{"s": "Cy", "s_id": "Q9", "r": "x", "o": "y"}]),  # both fields in one triple
    ]
    ids = [
        _q("a", [{"s_id": "Q1", "r_id": "P19", "o_id": "Q2"}, {"s_id": "Q2", "r_id": "P1376", "o_id": "Q3"}]),
        _q("b", [{"s_id": "Q4", "r_id": "P19", "o_id": "Q5"}], stale=[{"s_id": "Q4", "r_id": "P551", "o_id": "Q6"}]),
    ]
    lab = write(tmp_path, "benchmark_labelled.jsonl", "\n".join(json.dumps(r) for r in labelled) + "\n")
    idp = write(tmp_path, "benchmark.jsonl", "\n".join(json.dumps(r) for r in ids) + "\n\n")
    got = harvest_labels(lab, idp)
    assert got == {
        "Q4": "Bob", "P19": "born in", "Q5": "Paris", "P551": "lives in", "Q6": "Rome",
        "Q1": "Ann", "Q2": "Oslo", "P1376": "capital of", "Q3": "Norway", "Q9": "Cy",
    }  # fmt: skip
    assert got.conflicts == {}
    only_labelled = harvest_labels(lab)
    assert only_labelled == {"Q9": "Cy"}


def test_harvest_conflict_keeps_first(tmp_path: Path) -> None:
    lab = write(tmp_path, "l.jsonl", json.dumps(_q("a", [{"s_id": "Q1", "s": "One"}, {"s_id": "Q1", "s": "Uno"}])) + "\n")
    got = harvest_labels(lab)
    assert got == {"Q1": "One"} and got.conflicts == {"Q1": ["Uno"]}


def test_harvest_bad_line(tmp_path: Path) -> None:
    lab = write(tmp_path, "l.jsonl", json.dumps(_q("a", [])) + "\n{oops\n")
    with pytest.raises(InputError) as info:
        harvest_labels(lab)
    assert info.value.line == 2


def test_combine_file_wins_harvest_fills_gaps() -> None:
    combined = combine_labels({"Q1": "file", "Q2": ""}, {"Q1": "harvest", "Q2": "h2", "Q3": "h3"})
    # Q2 is listed by the file (empty label): the file wins, so it renders as "Q2".
    assert combined == {"Q1": "file", "Q2": "", "Q3": "h3"}
