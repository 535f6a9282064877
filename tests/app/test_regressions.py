"""The regression matrix ``configs/regressions.toml``: pinned headline numbers of ``tempbench reproduce``.

The small entries (default data, test and all splits) are checked in every run:
their commands run once per session (``tempbench_commands`` in ``tests/conftest.py``)
and every pinned value must be reproduced to 1e-9. The full entries (the
real-size generated data, about a minute) only with ``TEMPBENCH_FULL=1``.
``scripts/regressions.py`` (the same check for people) is exercised here too.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CONFIGS = ("oracle", "nonoracle", "stale_blind", "hop3_k25")
PINNED = ("trp_ccr.n_questions", "trp_ccr.coverage", "trp_ccr.TRP_macro", "trp_ccr.TRP_micro", "trp_ccr.CCR",
          "rank.recall@10", "rank.ndcg@10", "rank.mrr")

_spec = importlib.util.spec_from_file_location("regressions_script", REPO / "scripts" / "regressions.py")
assert _spec is not None and _spec.loader is not None
regressions = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = regressions  # dataclasses look their module up there
_spec.loader.exec_module(regressions)

ENTRIES, TOLERANCES = regressions.load_matrix(REPO / "configs" / "regressions.toml")
SMALL = [e for e in ENTRIES if e.scale == "small"]
FULL = [e for e in ENTRIES if e.scale == "full"]
FULL_ON = os.environ.get("TEMPBENCH_FULL") == "1"


def _lookup(doc, path: str):
    for part in path.split("."):
        doc = doc[part]
    return doc


def _check_entry(entry, run) -> None:
    for command in entry.commands:
        run(command)
    scores = json.loads((run.workdir / entry.scores).read_text(encoding="utf-8"))
    for key, pinned in entry.expected.items():
        got = _lookup(scores, key)
        if isinstance(pinned, int):
            assert got == pinned, (entry.id, key, got, pinned)
        else:
            assert abs(got - pinned) <= 1e-9, (entry.id, key, got, pinned)
    # the script's verdicts agree: every value OK
    assert {r["verdict"] for r in regressions.check([entry], TOLERANCES, run.workdir)} == {"OK"}


def test_matrix_covers_every_configuration_of_every_setting():
    settings = {("small", "test"), ("small", "all"), ("full", "all")}
    assert {(e.scale, e.split, e.config) for e in ENTRIES} == {(s, sp, c) for s, sp in settings for c in CONFIGS}
    assert len(ENTRIES) == 12
    for e in ENTRIES:
        assert e.id == f"{e.scale}.{e.split}.{e.config}"
        assert list(e.expected) == list(PINNED), e.id
        assert e.scores.endswith(f"/scores/{e.config}.json"), e.id
        words = shlex.split(e.command)
        assert words[:2] == ["tempbench", "reproduce"], e.id
        # the command says what the entry says: the split (test is the default), the data, the output
        assert (words[words.index("--split") + 1] if "--split" in words else "test") == e.split, e.id
        out = words[words.index("--out") + 1] if "--out" in words else "tempbench-out"
        assert e.scores == f"{out}/scores/{e.config}.json", e.id
        if e.scale == "full":
            data = words[words.index("--data") + 1]
            assert e.setup == (f"tempbench sample --scale full --out {data}",), e.id
        else:
            assert "--data" not in words and e.setup == (), e.id  # the default data is the small sample
        assert isinstance(e.expected["trp_ccr.n_questions"], int)
    # splits have the generated data's sizes: 300 test and 1,500 questions in all (small), 8,710 (full)
    assert {e.expected["trp_ccr.n_questions"] for e in ENTRIES if e.scale == "small" and e.split == "test"} == {300}
    assert {e.expected["trp_ccr.n_questions"] for e in ENTRIES if e.scale == "small" and e.split == "all"} == {1500}
    assert {e.expected["trp_ccr.n_questions"] for e in FULL} == {8710}


def test_tolerance_class_rule(tmp_path):
    # verdicts by the file's own "exact" class on hand-made scores: d = 0, 5e-9, 1e-6, and a count off by one
    assert TOLERANCES["exact"] == {"ok_abs": 1e-9, "okish_abs": 1e-8}
    entry = regressions.Entry("x", "small", "test", "oracle", (), "tempbench reproduce", "s.json", "exact",
                              {"a.n": 300, "a.same": 0.5, "a.noise": 0.5, "a.moved": 0.5, "a.gone": 0.5})
    (tmp_path / "s.json").write_text(json.dumps({"a": {"n": 301, "same": 0.5, "noise": 0.5 + 5e-9, "moved": 0.500001}}))
    got = {r["value"]: r["verdict"] for r in regressions.check([entry], TOLERANCES, tmp_path)}
    assert got == {"a.n": "FAIL", "a.same": "OK", "a.noise": "OKish", "a.moved": "FAIL", "a.gone": "FAIL"}
    # a missing scores file FAILs every value
    missing = regressions.Entry("y", "small", "test", "oracle", (), "tempbench reproduce", "nope.json", "exact", {"a.n": 1})
    assert [r["verdict"] for r in regressions.check([missing], TOLERANCES, tmp_path)] == ["FAIL"]


def _params(entries, run: bool):
    # the marker starts the commands in the background when the session starts (tests/conftest.py)
    return [pytest.param(e, id=e.id, marks=[pytest.mark.tempbench_commands(*e.commands)] if run else []) for e in entries]


@pytest.mark.parametrize("entry", _params(SMALL, run=True))
def test_small_regressions(entry, tempbench_commands):
    _check_entry(entry, tempbench_commands)


@pytest.mark.skipif(not FULL_ON, reason="full-scale data: about a minute to generate and reproduce; set TEMPBENCH_FULL=1")
@pytest.mark.parametrize("entry", _params(FULL, run=FULL_ON))
def test_full_regressions(entry, tempbench_commands):
    _check_entry(entry, tempbench_commands)


@pytest.mark.tempbench_commands(*(c for e in SMALL for c in e.commands))
def test_script_prints_ok_and_exits_nonzero_on_a_change(tempbench_commands, tmp_path, capsys):
    for entry in SMALL:
        for command in entry.commands:
            tempbench_commands(command)
    workdir = tempbench_commands.workdir
    assert regressions.main(["--scale", "small", "--workdir", str(workdir), "--no-run"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith(("OK ", "OKish ", "FAIL "))]
    assert len(rows) == len(SMALL) * len(PINNED) and all(line.startswith("OK ") for line in rows)
    # one changed number in a copy of the outputs: FAIL and exit status 1
    entry = SMALL[0]
    scores = json.loads((workdir / entry.scores).read_text(encoding="utf-8"))
    scores["trp_ccr"]["CCR"] += 1 / 300
    (tmp_path / entry.scores).parent.mkdir(parents=True)
    (tmp_path / entry.scores).write_text(json.dumps(scores), encoding="utf-8")
    assert regressions.main(["--only", entry.id, "--workdir", str(tmp_path), "--no-run"]) == 1
    out = capsys.readouterr().out
    assert f"FAIL   {entry.id}" in out and "trp_ccr.CCR" in out
