"""``load_baseline`` tells a run's JSONL from its first line (``first_of_several``) and reads it once.

Every file here is read twice: as the loader reads it now, and with the first
line's test turned off (the whole-document attempt, then the peek through
``read_jsonl``, as before). The records, how the file was read, or the error,
must be the same.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import eval.baselines as baselines
from eval.baselines import load_baseline
from tempbench_core.jsonl import first_of_several
from tempbench_core.runfile import RunRecords

RECORD = {"id": "q1", "evidence": [{"s": "a", "r": "b", "o": "c", "t_start": 2000, "t_end": 2000}]}
LINE = json.dumps(RECORD).encode()
OTHER = json.dumps({"id": "q2", "evidence": []}).encode()

FILES: dict[str, bytes] = {
    "two records": LINE + b"\n" + OTHER + b"\n",
    "no newline at the end": LINE + b"\n" + OTHER,
    "one record": LINE + b"\n",
    "one record, no newline": LINE,
    "one record, blank lines after": LINE + b"\n \n\r\n\t\n",
    "BOM": b"\xef\xbb\xbf" + LINE + b"\n" + OTHER + b"\n",
    "CRLF": LINE + b"\r\n" + OTHER + b"\r\n",
    "blank first line": b"\n" + LINE + b"\n" + OTHER + b"\n",
    "a bad second line": LINE + b"\n{not json\n",
    "a second line that is no object": LINE + b"\n[1, 2]\n",
    "invalid UTF-8 later": LINE + b"\n" + OTHER[:-1] + b', "x": "\xff"}\n',
    "a long integer on line 1": json.dumps({**RECORD, "n": 10**30}).encode() + b"\n" + OTHER + b"\n",
    "a form feed after line 1": LINE + b"\n\x0c\n",
    "a JSON list over lines": b"[\n" + LINE + b",\n" + OTHER + b"\n]\n",
    "a metric row first": b'{"config": "oracle", "TRP": 0.5}\n' + LINE + b"\n",
    "a lone surrogate in one record": b'{"id": "q1", "evidence": [], "x": "\\ud800"}\n',
    "a lone surrogate, then a record": b'{"id": "q1", "evidence": [], "x": "\\ud800"}\n' + OTHER + b"\n",
    "NaN on line 1": b'{"id": "q1", "evidence": [], "x": NaN}\n' + OTHER + b"\n",
    "a repeated id": LINE + b"\n" + LINE + b"\n",
}


def _read(path: Path, first_line: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    with monkeypatch.context() as patch:
        if not first_line:
            patch.setattr(baselines, "first_of_several", lambda _: None)
        try:
            got = load_baseline(path)
        except Exception as exc:  # noqa: BLE001 - the error itself is compared
            return "error", (type(exc).__name__, str(exc))
    if isinstance(got, RunRecords):
        return "run", (dict(got), got.lines, got.id_key, got.evidence_key, got.item_form, got.path)
    return type(got).__name__, got


@pytest.mark.parametrize("name", sorted(FILES))
def test_as_before(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "oracle.jsonl"
    path.write_bytes(FILES[name])
    assert _read(path, True, monkeypatch) == _read(path, False, monkeypatch)


def test_what_it_tells(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(FILES["two records"])
    assert first_of_several(path) == RECORD
    for name in ("one record", "one record, no newline", "one record, blank lines after", "blank first line",
                 "a long integer on line 1", "a JSON list over lines", "NaN on line 1"):
        path.write_bytes(FILES[name])
        assert first_of_several(path) is None, name
    path.write_bytes(FILES["a form feed after line 1"])  # not JSON whitespace: no single document
    assert first_of_several(path) == RECORD
    gz = tmp_path / "run.jsonl.gz"
    gz.write_bytes(gzip.compress(FILES["two records"]))
    assert first_of_several(gz) is None


def test_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run's JSONL is read by read_run alone: no whole-document attempt, no peek."""
    path = tmp_path / "oracle.jsonl"
    path.write_bytes(FILES["two records"])
    monkeypatch.setattr(baselines, "read_jsonl", lambda *_a, **_k: pytest.fail("peeked"))
    monkeypatch.setattr(baselines.json, "loads", lambda *_a, **_k: pytest.fail("read as one document"))
    assert list(load_baseline(path)) == ["q1", "q2"]


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_ITEM = st.fixed_dictionaries({"s": _TEXT, "r": _TEXT, "o": _TEXT,
                               "t_start": st.integers(1900, 2030), "t_end": st.integers(1900, 2030)})
_RECORD = st.fixed_dictionaries({"id": _TEXT, "evidence": st.lists(_ITEM, max_size=3)})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(_RECORD, min_size=1, max_size=4), bom=st.booleans(), crlf=st.booleans(),
       tail=st.sampled_from([b"", b"\n", b"\n\n", b" \n", b"\n{", b"\n[]"]))
def test_as_before_generated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: list[dict[str, Any]],
                             bom: bool, crlf: bool, tail: bytes) -> None:
    end = b"\r\n" if crlf else b"\n"
    data = (b"\xef\xbb\xbf" if bom else b"") + end.join(json.dumps(r).encode() for r in records) + tail
    path = tmp_path / "oracle.jsonl"
    path.write_bytes(data)
    assert _read(path, True, monkeypatch) == _read(path, False, monkeypatch)
