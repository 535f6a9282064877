"""Fuzzing the input boundary (issue 7 part 2): only the project's own errors escape.

Hypothesis feeds random bytes, random CSV-like and JSON-like text (random
unicode, NUL bytes, invalid UTF-8, CRLF, BOMs, ragged rows, wrong types) to the
loaders of SPEC §1 (:func:`retriever.kg.load_edgelist`,
:func:`retriever.labels.load_labels`, :func:`retriever.benchmark.load_benchmark`,
:func:`retriever.benchmark.load_flags`, :func:`eval.runs.read_run`), random TOML
and ``--set`` overrides to :func:`retriever.config.load_config`, and arbitrary
questions and evidence items to :func:`eval.score_question` (SPEC §3.1). Each
call must either return or raise a :class:`tempbench_core.errors.TempbenchError`
subclass (``InputError``, ``ConfigError``, ``MissingDataError``,
``tempbench_core.errors.EvidenceError``...), which the CLI turns into exit code 2; any
other exception would be a traceback and exit code 1.

When a loader returns, a few invariants of its result are checked as well, so
that "no exception" cannot hide a wrong answer. The configuration is held to
more: its rules are written out here (from ``configs/README.md``), so each fuzzed
file and ``--set`` must give exactly the error it is made for (an unknown key
names the key and lists the valid keys; a wrong type names the key and what was
expected) or exactly the values it sets.
"""

from __future__ import annotations

import json
import math
import re
import string
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tempbench_core.errors import ConfigError, TempbenchError
from tempbench_core.tomlfile import TOMLDecodeError, loads_toml

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
    from tempbench_core.runfile import read_run

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


# What a configuration may hold, from configs/README.md (written out here, not read
# from retriever/config.py, so the expectations below do not come from the code).
_KEYS = ("name", "description", "anchor", "hops", "caps", "temporal_filter", "k", "cap_scope", "cap_counts",
         "line_template", "linker_match", "linker_min_length", "query_includes_t_query", "oracle_label_ties",
         "tie_break", "homonym_order")
_CHOICE = {"anchor": ("oracle", "linker"), "cap_scope": ("per_hop", "per_node"), "cap_counts": ("rows", "unique_triples"),
           "linker_match": ("substring", "word"), "oracle_label_ties": ("first", "none"),
           "tie_break": ("reverse_lex", "pool_order"), "homonym_order": ("pool", "edge_id")}
_BOOL = ("temporal_filter", "query_includes_t_query")
_INT = ("hops", "k", "linker_min_length")  # integers >= 1
_TEMPLATE_FIELDS = ("s", "r", "o", "t", "s_id", "r_id", "o_id", "t_start", "t_end")
_DEFAULT_CAPS = [60, 200, 400]
_SHIPPED = Path(__file__).resolve().parents[2] / "configs"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _problems(values: dict[str, Any]) -> list[tuple[str, str]]:
    """Every reason ``values`` is not a valid configuration, as ``(text naming the key, phrase)``.

    The ConfigError must name one of them (which one comes first is the code's business).
    """
    unknown = [k for k in values if k not in _KEYS]
    if unknown:  # reported before any value is looked at
        return [(repr(k), "valid keys") for k in unknown]
    out: list[tuple[str, str]] = []
    for key in ("name", "description", "line_template"):
        if key in values and not isinstance(values[key], str):
            out.append((f"'{key}'", "a string"))
    name = values.get("name", "x")
    if isinstance(name, str) and (not name or any(ch in name for ch in "/\\\0")):
        out.append(("'name'", "non-empty file name"))
    elif isinstance(name, str) and _UNPRINTABLE.search(name):
        out.append(("'name'", "printable characters"))
    out += [(f"'{k}'", "one of") for k, allowed in _CHOICE.items() if k in values and values[k] not in allowed]
    out += [(f"'{k}'", "true or false") for k in _BOOL if k in values and not isinstance(values[k], bool)]
    out += [(f"'{k}'", "an integer >= 1") for k in _INT if k in values and not (_is_int(values[k]) and values[k] >= 1)]
    caps = values.get("caps", _DEFAULT_CAPS)
    hops = values.get("hops", 2)
    if not isinstance(caps, list) or not all(_is_int(c) and c >= 0 for c in caps):
        out.append(("'caps'", "a list of integers >= 0"))
    elif _is_int(hops) and hops >= 1 and len(caps) < hops:
        out.append(("'caps'", f"at least hops={hops}"))
    template = values.get("line_template", "")
    if isinstance(template, str) and not _template_ok(template):
        out.append(("'line_template'", "str.format template"))
    return out


#: What a name or an evidence line may not hold (configs/README.md): control characters (C0, DEL,
#: C1), line/paragraph separators, bidirectional overrides and isolates, lone surrogates.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_INT_FIELDS = ("t_start", "t_end")


def _template_ok(template: str) -> bool:
    """configs/README.md's line_template rules, written out independently of retriever/config.py."""
    if _UNPRINTABLE.search(template):
        return False
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError:
        return False
    for _, field, spec, conversion in parts:
        if field is None:
            continue
        if field not in _TEMPLATE_FIELDS or conversion not in (None, "s", "r") or "{" in spec or "}" in spec:
            return False
        if any(int(n) > 100 for n in re.findall(r"\d+", re.sub(r"^.?[<>=^]", "", spec))):
            return False  # a width or a precision above 100 (a fill digit is not a width)
        kind = spec[-1:] if spec[-1:].isalpha() or spec[-1:] == "%" else ""
        if kind and kind not in ("s" if field not in _INT_FIELDS or conversion else "bdoxXeEfFgG%"):
            return False
    try:
        for year in (2000, -44):
            template.format(**{f: year if f in _INT_FIELDS else "Ada" for f in _TEMPLATE_FIELDS})
    except (ValueError, TypeError):
        return False
    return True


def _expected_outcome(base_values: dict[str, Any] | None, base_problem: tuple[str, str] | None,
                      overrides: list[str]) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """``(problems, final values)`` that ``load_config`` must report or return (configs/README.md's rules)."""
    if base_problem is not None:
        return [base_problem], {}
    assert base_values is not None
    nested = [k for k, v in base_values.items() if isinstance(v, dict)]
    if nested:  # keys are flat: a table is an error before anything else
        return [(k, "tables are not allowed") for k in nested], {}
    values = dict(base_values)
    problems = _problems(values)
    if problems or not overrides:
        return problems, values
    for item in overrides:  # each --set is parsed in turn; the first bad one is the error
        if "=" not in item:
            return [(repr(item), "expected key=value")], {}
        key, raw = (part.strip() for part in item.split("=", 1))
        if key not in _KEYS:
            return [(repr(key), "valid keys")], {}
        try:
            value = loads_toml(f"v = {raw}")["v"]
        except TOMLDecodeError:
            value = raw  # not TOML: a bare string
        if key in _BOOL and isinstance(value, str) and value.lower() in ("true", "false"):
            return [(key, "lowercase")], {}
        if key == "caps" and isinstance(value, str) and re.match(r"^\s*\d+(\s*,\s*\d+)+\s*$", value):
            return [("caps", "brackets")], {}
        values[key] = value
    keys = [item.split("=", 1)[0].strip() for item in overrides]
    twice = [k for k in dict.fromkeys(keys) if keys.count(k) > 1]
    if twice:  # which of two values was meant cannot be known (issue 26)
        return [(repr(twice[0]), "given")], {}
    if not any(item.split("=", 1)[0].strip() == "name" for item in overrides):
        values.pop("name")  # the configuration is renamed after its overrides (always a valid file name)
    return _problems(values), values


def _load_expecting(name: str | Path, overrides: list[str], problems: list[tuple[str, str]], values: dict[str, Any]):
    """Call ``load_config``; a ConfigError naming one of ``problems`` when there are any, else ``values``."""
    from retriever.config import RetrieverConfig, load_config

    try:
        cfg = load_config(name, overrides)
    except ConfigError as exc:
        message = str(exc)
        assert problems, f"unexpected ConfigError: {message}"
        assert any(key in message and phrase in message for key, phrase in problems), (message, problems)
        return None
    assert not problems, f"load_config accepted {name!r} {overrides!r}; expected an error about {problems}"
    assert isinstance(cfg, RetrieverConfig)
    got = cfg.to_dict()
    for key, value in values.items():
        assert got[key] == value and type(got[key]) is type(value), (key, got[key], value)
    assert cfg.hops >= 1 and cfg.k >= 1 and len(cfg.caps) >= cfg.hops
    json.dumps(got)  # the run metadata must be able to record it
    return cfg


@FUZZ
@given(
    base=st.sampled_from(["oracle", "nonoracle", "stale_blind", "hop3_k25", "FILE", "missing"]),
    toml=st.lists(st.tuples(_CONFIG_KEYS, _TOML_VALUES), max_size=5),
    garbage=st.one_of(st.none(), _TEXT),
    overrides=st.lists(_override(), max_size=4),
)
def test_load_config_fuzz(base: str, toml: list[tuple[str, str]], garbage: str | None, overrides: list[str]) -> None:
    """Random files and ``--set`` overrides: exactly the documented errors, or exactly the documented values."""
    base_values: dict[str, Any] | None = None
    base_problem = None
    if base == "FILE":
        text = "\n".join(f"{k} = {v}" for k, v in toml).encode("utf-8", errors="surrogatepass")
        data = garbage.encode("utf-8", errors="surrogatepass") if garbage is not None else text
        path = _write("config.toml", data)
        name: str | Path = path
        try:
            base_values = {"name": "config", **loads_toml(data.decode("utf-8"))}  # a file without name: its stem
        except (UnicodeDecodeError, TOMLDecodeError):
            base_problem = (str(path), "not valid TOML")
    elif base == "missing":
        name = _DIR / "no-such-config.toml"
        base_problem = ("no-such-config.toml", "not found")
    else:
        name = base
        base_values = loads_toml((_SHIPPED / f"{base}.toml").read_text(encoding="utf-8"))
    problems, values = _expected_outcome(base_values, base_problem, overrides)
    _load_expecting(name, overrides, problems, values)


_SAFE_KEY = st.text(alphabet=st.characters(categories=["L", "N"], include_characters="_-"), min_size=1, max_size=12)


@FUZZ
@given(key=_SAFE_KEY.filter(lambda k: k not in _KEYS), value=st.sampled_from(["1", "true", '"x"', "[1, 2]"]),
       via=st.sampled_from(["file", "set"]))
def test_load_config_fuzz_unknown_key(key: str, value: str, via: str) -> None:
    """A fuzzed unknown key, in a file or in ``--set``: a ConfigError naming it and listing the valid keys."""
    from retriever.config import load_config

    if via == "file":
        path = _write("unknown.toml", f"k = 3\n{json.dumps(key, ensure_ascii=False)} = {value}\n".encode())
        args: tuple[Any, list[str]] = (path, [])
    else:
        args = ("oracle", ["k=3", f"{key}={value}"])
    with pytest.raises(ConfigError) as info:
        load_config(*args)
    message = str(info.value)
    assert repr(key) in message and "valid keys" in message
    assert all(k in message for k in _KEYS)  # the list is complete


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return "[" + ", ".join(_toml_value(v) for v in value) + "]"


_WRONG_SCALAR = st.one_of(st.integers(-5, 5), st.floats(allow_nan=False, allow_infinity=False, width=32), st.booleans(),
                          st.text(alphabet="abcxyz ,", max_size=4))


@st.composite
def _wrong_value(draw: st.DrawFn) -> tuple[str, Any, tuple[str, ...]]:
    """``(key, a value of the wrong type or range for it, phrases one of which the error must say)``."""
    key = draw(st.sampled_from(_KEYS))
    candidates = st.one_of(_WRONG_SCALAR, st.lists(_WRONG_SCALAR, max_size=3))
    if key in ("name", "description", "line_template"):
        return key, draw(candidates.filter(lambda v: not isinstance(v, str))), ("a string",)
    if key in _CHOICE:
        return key, draw(candidates.filter(lambda v: v not in _CHOICE[key])), ("one of",)
    if key in _BOOL:
        wrong = candidates.filter(lambda v: not isinstance(v, bool) and not (isinstance(v, str) and v.lower() in ("true", "false")))
        return key, draw(wrong), ("true or false",)
    if key in _INT:
        return key, draw(candidates.filter(lambda v: not (_is_int(v) and v >= 1))), ("an integer >= 1",)
    assert key == "caps"
    bad = candidates.filter(lambda v: not (isinstance(v, list) and all(_is_int(c) and c >= 0 for c in v)))
    return key, draw(bad), ("a list of integers >= 0", "brackets")


@FUZZ
@given(case=_wrong_value(), via=st.sampled_from(["file", "set"]))
def test_load_config_fuzz_wrong_type(case: tuple[str, Any, tuple[str, ...]], via: str) -> None:
    """A fuzzed value of the wrong type (or out of range): a ConfigError naming the key and what was expected."""
    from retriever.config import load_config

    key, value, phrases = case
    if via == "file":
        args: tuple[Any, list[str]] = (_write("wrong.toml", f"{key} = {_toml_value(value)}\n".encode()), [])
    else:
        args = ("oracle", [f"{key}={_toml_value(value)}"])
    with pytest.raises(ConfigError) as info:
        load_config(*args)
    message = str(info.value)
    assert f"'{key}'" in message or f"--set '{key}=" in message, message
    assert any(p in message for p in phrases), (message, phrases)


@pytest.mark.parametrize("what", ["invalid-utf8", "directory"])
def test_load_config_unreadable_file_is_a_config_error(what: str) -> None:
    from retriever.config import load_config

    if what == "invalid-utf8":
        path = _write("latin1.toml", 'name = "caf\xe9"\n'.encode("latin-1"))
    else:
        path = _DIR / "a-directory.toml"
        path.mkdir(exist_ok=True)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)  # names the file


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
