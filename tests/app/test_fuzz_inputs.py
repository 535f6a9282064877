"""Fuzzing the input boundary (issue 7 part 2): only the project's own errors escape.

Hypothesis feeds random bytes, random CSV-like and JSON-like text (random
unicode, NUL bytes, invalid UTF-8, CRLF, BOMs, ragged rows, wrong types) to the
loaders of SPEC §1 (:func:`retriever.kg.load_edgelist`,
:func:`retriever.labels.load_labels`, :func:`retriever.benchmark.load_benchmark`,
:func:`retriever.benchmark.load_flags`, :func:`eval.runs.read_run`), random TOML
and ``--set`` overrides to :func:`retriever.config.load_config`, and arbitrary
questions and evidence items to :func:`eval.score_question` (SPEC §3.1). Each
call must either return or raise a :class:`tempbench.core.errors.TempbenchError`
subclass (``InputError``, ``ConfigError``, ``MissingDataError``,
``tempbench.core.errors.EvidenceError``...), which the CLI turns into exit code 2; any
other exception would be a traceback and exit code 1.

When a loader returns, a few invariants of its result are checked as well, so
that "no exception" cannot hide a wrong answer.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempbench.core.errors import TempbenchError

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_DIR = Path(tempfile.mkdtemp(prefix="tempbench-fuzz-"))


def _write(name: str, data: bytes) -> Path:
    path = _DIR / name
    path.write_bytes(data)
    return path


def _only_own_errors(fn: Callable[[], Any]) -> Any:
    """Call ``fn``; a TempbenchError is fine (returns None), anything else fails the test."""
    try:
        return fn()
    except TempbenchError as exc:
        assert str(exc)  # a message for the user, never empty
        return None


# ----------------------------------------------------------------- strategies

# Text that stresses decoders and splitters: NUL, CR, tabs, quotes, commas,
# surrogate-free unicode of every category.
_ATOMS = st.sampled_from(["", ",", '"', "\t", "\r", "\n", "\r\n", "\x00", "\ufeff", " ", "{", "}", "[", "]", ":", "\\"])
_TEXT = st.lists(st.one_of(_ATOMS, st.text(max_size=6)), max_size=30).map("".join)
_ENCODINGS = st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"])


@st.composite
def _encoded(draw: st.DrawFn, text: st.SearchStrategy[str]) -> bytes:
    value = draw(text)
    data = value.encode(draw(_ENCODINGS), errors="replace")
    if draw(st.booleans()):  # splice in raw garbage: invalid UTF-8, NULs
        pos = draw(st.integers(0, len(data)))
        data = data[:pos] + draw(st.binary(max_size=8)) + data[pos:]
    return data


_ID = st.one_of(st.sampled_from(["Q1", "Q2", "Q3", "P1", "P2", "", " ", "Q1,Q2", '"Q1"']), st.text(max_size=5))
_YEAR = st.one_of(st.integers(-3000, 3000).map(str), st.sampled_from(["", "20x1", "1994.0", "1e3", "+7", " 12 ", "１２"]),
                  st.text(max_size=4))
_HEADER = st.one_of(
    st.just("ts,head,tail,relation_type"),
    st.just("timestamp,head,tail,relation_type"),
    st.permutations(["ts", "head", "tail", "relation_type", "extra"]).map(",".join),
    st.lists(st.sampled_from(["ts", "head", "tail", "relation_type", "timestamp", "x", ""]), max_size=6).map(",".join),
)


@st.composite
def _csv_like(draw: st.DrawFn) -> str:
    header = draw(_HEADER)
    width = len(header.split(","))
    rows = []
    for _ in range(draw(st.integers(0, 8))):
        n = draw(st.one_of(st.just(width), st.integers(0, width + 2)))
        fields = [draw(_YEAR) if i == 0 else draw(_ID) for i in range(n)]
        rows.append(",".join(fields))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return header + newline + newline.join(rows) + draw(st.sampled_from(["", newline, newline * 2]))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
_TRIPLE_KEYS = ["s", "r", "o", "s_id", "r_id", "o_id", "t_start", "t_end", "score", "line"]
_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.floats(allow_nan=True),
                    st.text(max_size=5), st.sampled_from(["2000", "Alpha", "Q1", 10**400, -10**400]),
                    st.lists(st.text(max_size=2), max_size=2), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))
_TRIPLE = st.one_of(
    st.dictionaries(st.sampled_from(_TRIPLE_KEYS), _SCALAR, max_size=8),
    st.lists(_SCALAR, min_size=3, max_size=6),
    _JSON,
)
_FIELDS = {
    "id": st.one_of(st.text(max_size=3), st.integers(0, 3), _JSON),
    "split": st.one_of(st.sampled_from(["train", "dev", "test", "validation"]), _JSON),
    "question": st.one_of(st.text(max_size=10), _JSON),
    "answer": _JSON,
    "t_query": st.one_of(st.integers(1990, 2010), st.floats(allow_nan=True), st.just(10**400 // 10**390), _JSON),
    "complexity": st.one_of(st.sampled_from(["1hop", "2hop", "3+hop"]), _JSON),
    "operator_type": st.one_of(st.sampled_from(["point_in_time", "interval"]), _JSON),
    "S_star": st.one_of(st.lists(_TRIPLE, max_size=3), _JSON),
    "S_dist": st.one_of(st.lists(_TRIPLE, max_size=3), _JSON),
    "S_stale": st.one_of(st.lists(_TRIPLE, max_size=3), _JSON),
    "stale_functional": st.one_of(st.booleans(), _JSON),
    "dist_functional": st.one_of(st.booleans(), _JSON),
    "evidence": st.one_of(st.lists(_TRIPLE, max_size=4), _JSON),
    "cutoff_ties": st.one_of(st.lists(_TRIPLE, max_size=2), _JSON),
}


@st.composite
def _record(draw: st.DrawFn) -> dict[str, Any]:
    keys = draw(st.lists(st.sampled_from(sorted(_FIELDS)), unique=True, min_size=0, max_size=len(_FIELDS)))
    return {k: draw(_FIELDS[k]) for k in keys}


@st.composite
def _jsonl_like(draw: st.DrawFn) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["record", "record", "record", "json", "text", "truncated", "blank"]))
        if kind == "record":
            lines.append(json.dumps(draw(_record())))
        elif kind == "json":
            lines.append(json.dumps(draw(_JSON)))
        elif kind == "text":
            lines.append(draw(_TEXT))
        elif kind == "truncated":
            full = json.dumps(draw(_record()))
            lines.append(full[: draw(st.integers(0, len(full)))])
        else:
            lines.append("")
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    data = newline.join(lines).encode("utf-8", errors="surrogatepass")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data


def _valid_question(draw: st.DrawFn) -> dict[str, Any]:
    base = {
        "id": "q1", "split": "test", "question": "Whom did Alpha know?", "answer": "Beta", "t_query": 2000.0,
        "complexity": "1hop", "operator_type": "point_in_time",
        "S_star": [{"s": "Alpha", "r": "knows", "o": "Beta", "s_id": "Q1", "r_id": "P1", "o_id": "Q2",
                    "t_start": 2000, "t_end": 2000}],
        "S_dist": [], "S_stale": [],
    }
    for key in draw(st.lists(st.sampled_from(sorted(_FIELDS)), unique=True, max_size=3)):
        base[key] = draw(_FIELDS[key])
    return base


# --------------------------------------------------------------------- KG CSV


@FUZZ
@given(data=st.one_of(st.binary(max_size=200), _encoded(_TEXT), _encoded(_csv_like()), _csv_like().map(str.encode)))
def test_load_edgelist_fuzz(data: bytes) -> None:
    from retriever.kg import load_edgelist

    kg = _only_own_errors(lambda: load_edgelist(_write("kg.csv", data)))
    if kg is not None:
        n = kg.n_rows
        assert n > 0
        assert kg.head.shape == kg.tail.shape == kg.relation.shape == kg.year.shape == (n,)
        assert kg.head.max() < kg.n_entities and kg.tail.max() < kg.n_entities and kg.relation.max() < kg.n_relations
        assert all(e.strip() for e in kg.entity_ids) and all(r.strip() for r in kg.relation_ids)


def test_load_edgelist_fuzz_finds_a_known_bad_row() -> None:
    # The harness itself must notice a wrong answer: a valid file loads exactly.
    from retriever.kg import load_edgelist

    kg = load_edgelist(_write("ok.csv", b"\xef\xbb\xbfts,head,tail,relation_type\r\n2000,Q1,Q2,P1\r\n\r\n"))
    assert (kg.entity_ids, kg.relation_ids, kg.year.tolist()) == (["Q1", "Q2"], ["P1"], [2000])


# --------------------------------------------------------------------- labels


@st.composite
def _tsv_like(draw: st.DrawFn) -> str:
    rows = [draw(st.sampled_from(["id\tlabel", "id\tname", ""]))]
    for _ in range(draw(st.integers(0, 6))):
        rows.append(draw(_ID) + draw(st.sampled_from(["\t", "", "\t\t", " "])) + draw(_TEXT))
    return draw(st.sampled_from(["\n", "\r\n"])).join(rows)


@FUZZ
@given(
    data=st.one_of(st.binary(max_size=200), _encoded(_tsv_like()), _JSON.map(lambda v: json.dumps(v).encode()),
                   _encoded(_TEXT)),
    suffix=st.sampled_from([".tsv", ".json", ".txt"]),
)
def test_load_labels_fuzz(data: bytes, suffix: str) -> None:
    from retriever.labels import load_labels

    labels = _only_own_errors(lambda: load_labels(_write("labels" + suffix, data)))
    if labels is not None:
        assert all(isinstance(k, str) and k.strip() and isinstance(v, str) for k, v in labels.items())


# ------------------------------------------------------------ benchmark files


@FUZZ
@given(data=st.one_of(st.binary(max_size=200), _jsonl_like(), _encoded(_TEXT)))
def test_load_benchmark_fuzz(data: bytes) -> None:
    from retriever.benchmark import SPLITS, load_benchmark

    records = _only_own_errors(lambda: load_benchmark(_write("bench.jsonl", data)))
    if records is not None:
        for r in records:
            assert r["split"] in SPLITS and isinstance(r["S_star"], list) and r["S_star"]
            assert isinstance(r["t_query"], (int, float)) and not isinstance(r["t_query"], bool)


@FUZZ
@given(labelled=_jsonl_like(), ids=st.one_of(_jsonl_like(), st.binary(max_size=100)))
def test_load_benchmark_with_ids_fuzz(labelled: bytes, ids: bytes) -> None:
    from retriever.benchmark import load_benchmark

    _only_own_errors(lambda: load_benchmark(_write("bl.jsonl", labelled), ids_path=_write("bi.jsonl", ids)))


@FUZZ
@given(data=st.one_of(st.binary(max_size=200), _jsonl_like(), _encoded(_TEXT)))
def test_load_flags_fuzz(data: bytes) -> None:
    from retriever.benchmark import load_flags

    flags = _only_own_errors(lambda: load_flags(_write("flags.jsonl", data)))
    if flags is not None:
        for entry in flags.values():
            assert set(entry) == {"stale_functional", "dist_functional"}
            assert all(isinstance(v, bool) for v in entry.values())


@FUZZ
@given(data=st.one_of(st.binary(max_size=200), _jsonl_like(), _encoded(_TEXT)))
def test_read_run_fuzz(data: bytes) -> None:
    from eval.answers import read_predictions
    from tempbench.core.runfile import read_run

    path = _write("run.jsonl", data)
    _only_own_errors(lambda: read_run(path))
    _only_own_errors(lambda: read_predictions(path))


# ------------------------------------------------------------- configuration

_CONFIG_KEYS = st.sampled_from(["name", "description", "anchor", "hops", "caps", "temporal_filter", "k", "cap_scope",
                                "cap_counts", "line_template", "linker_match", "linker_min_length",
                                "query_includes_t_query", "oracle_label_ties", "tie_break", "homonym_order",
                                "nosuchkey", "", " k", "K"])
_TOML_VALUES = st.one_of(
    st.sampled_from(["1", "0", "-3", "15", "true", "false", '"x"', "'oracle'", "linker", "[60, 200]", "[]", '[1, "2"]',
                     "1.5", "nan", "inf", "{a = 1}", '"{s} | {r}"', '"{nope}"', '"{0}"', '"{s!x}"', '"{"', "2024-01-01",
                     "99999999999999999999999", "", "=", '"/etc/x"', '"a/b"']),
    _TEXT,
)


@st.composite
def _override(draw: st.DrawFn) -> str:
    return draw(_CONFIG_KEYS) + draw(st.sampled_from(["=", "", "==", " = "])) + draw(_TOML_VALUES)


@FUZZ
@given(
    base=st.sampled_from(["oracle", "nonoracle", "stale_blind", "hop3_k25", "FILE", "missing"]),
    toml=st.lists(st.tuples(_CONFIG_KEYS, _TOML_VALUES), max_size=5),
    garbage=st.one_of(st.none(), _TEXT),
    overrides=st.lists(_override(), max_size=4),
)
def test_load_config_fuzz(base: str, toml: list[tuple[str, str]], garbage: str | None, overrides: list[str]) -> None:
    from retriever.config import RetrieverConfig, load_config

    if base == "FILE":
        text = "\n".join(f"{k} = {v}" for k, v in toml).encode("utf-8", errors="surrogatepass")
        path = _write("config.toml", garbage.encode("utf-8", errors="surrogatepass") if garbage is not None else text)
        name: str | Path = path
    elif base == "missing":
        name = _DIR / "no-such-config.toml"
    else:
        name = base
    cfg = _only_own_errors(lambda: load_config(name, overrides))
    if cfg is not None:
        assert isinstance(cfg, RetrieverConfig)
        assert cfg.hops >= 1 and cfg.k >= 1 and len(cfg.caps) >= cfg.hops
        json.dumps(cfg.to_dict())  # the run metadata must be able to record it


@pytest.mark.parametrize("what", ["invalid-utf8", "directory"])
def test_load_config_unreadable_file_is_a_config_error(what: str) -> None:
    from retriever.config import load_config

    if what == "invalid-utf8":
        path = _write("latin1.toml", 'name = "caf\xe9"\n'.encode("latin-1"))
    else:
        path = _DIR / "a-directory.toml"
        path.mkdir(exist_ok=True)
    _only_own_errors(lambda: load_config(path))


# -------------------------------------------------------------------- scorer


@st.composite
def _evidence(draw: st.DrawFn) -> Any:
    items = draw(st.lists(_TRIPLE, max_size=5))
    container = draw(st.sampled_from(["list", "tuple", "generator", "raw"]))
    if container == "tuple":
        return tuple(items)
    if container == "generator":
        return (x for x in items)
    if container == "raw":
        return draw(_JSON)
    return items


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), key=st.sampled_from(["auto", "label", "id", "auto", "nonsense"]))
def test_score_question_fuzz(data: st.DataObject, key: str) -> None:
    from eval import score_question

    question = data.draw(st.one_of(st.composite(_valid_question)(), _record(), _JSON))
    evidence = data.draw(_evidence())
    row = _only_own_errors(lambda: score_question(question, evidence, key=key))
    if row is not None:
        assert set(row) == {"id", "complexity", "operator", "n_ret", "hits", "n_gold", "trp", "ccr"}
        assert 0 <= row["hits"] <= row["n_ret"]
        assert row["ccr"] in (0, 1)
        if row["n_ret"]:
            assert 0.0 <= row["trp"] <= 1.0 and not math.isnan(row["trp"])
        else:
            assert row["trp"] is None


@pytest.mark.parametrize(
    "evidence",
    [
        [{"s": "Alpha", "r": "knows", "o": "Beta", "t_start": float("nan"), "t_end": 2000}],
        [{"s": "Alpha", "r": "knows", "o": "Beta", "t_start": 10**400, "t_end": 2000}],
        [["Alpha", "knows", "Beta", "2000", "2000"]],
        [{"s": ["Alpha"], "r": "knows", "o": "Beta", "t_start": 2000, "t_end": 2000}],  # unhashable key value
        [{"s": "Alpha", "r": "knows", "o": "Beta", "t_start": 2000, "t_end": 2000, "score": "high"}],
    ],
)
def test_score_question_edge_items(evidence: list[Any]) -> None:
    # Regression corner cases found while fuzzing; each must be a row or an EvidenceError.
    from eval import score_question

    question = {"id": "q", "t_query": 2000.0, "S_star": [{"s": "Alpha", "r": "knows", "o": "Beta", "t_start": 2000, "t_end": 2000}]}
    _only_own_errors(lambda: score_question(question, evidence))
