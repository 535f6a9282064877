"""``tempbench explain`` and ``tempbench show`` from the command line (SPEC §7)."""

from __future__ import annotations

import json
import shutil

import pytest

from eval.explain import STAGES
from retriever import load_config, run_to_file
from tempbench.cli import main
from tempbench.data import resolve_data


@pytest.fixture(scope="module")
def runs(small_sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("explain-cli")
    data = resolve_data(data=small_sample)
    paths = {}
    for name in ("oracle", "nonoracle"):
        paths[name] = out / f"{name}.jsonl"
        run_to_file(load_config(name), data, split="test", out_path=paths[name], show_progress=False)
    return paths


@pytest.fixture(scope="module")
def explained(runs, small_sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("explain-json") / "oracle.explain.json"
    assert main(["explain", str(runs["oracle"]), "--data", str(small_sample), "--json", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_explain_json_and_tables(runs, small_sample, explained, tmp_path, capsys):
    ids = [json.loads(line)["id"] for line in runs["oracle"].read_text(encoding="utf-8").splitlines()]
    assert list(explained["questions"]) == ids
    assert set(explained) == {"questions", "summary", "provenance"}  # the command's; reproduce's files have none
    summary = explained["summary"]
    assert summary["config"]["name"] == "oracle" and summary["stages"] == list(STAGES)
    assert summary["n_hops"] == sum(len(s) for s in explained["questions"].values())
    assert main(["explain", str(runs["oracle"]), "--data", str(small_sample)]) == 0
    captured = capsys.readouterr()
    for heading in ("by complexity", "by operator", "by hop position"):
        assert heading in captured.out
    for stage in STAGES:
        assert stage in captured.out
    assert f"{summary['counts']['retrieved']:,} retrieved" in captured.err


def test_explain_without_meta_needs_config(runs, small_sample, explained, tmp_path, capsys):
    bare = tmp_path / "bare.jsonl"
    shutil.copy(runs["oracle"], bare)  # no .meta.json beside it
    assert main(["explain", str(bare), "--data", str(small_sample)]) == 2
    err = capsys.readouterr().err
    assert "--config" in err and "Traceback" not in err
    out = tmp_path / "bare.json"
    assert main(["explain", str(bare), "--config", "oracle", "--data", str(small_sample), "--json", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["questions"] == explained["questions"]


def test_explain_meta_wins_over_config(runs, small_sample, tmp_path, capsys):
    out = tmp_path / "x.json"
    assert main(["explain", str(runs["nonoracle"]), "--config", "oracle", "--data", str(small_sample), "--json", str(out)]) == 0
    assert "ignored" in capsys.readouterr().err
    assert json.loads(out.read_text(encoding="utf-8"))["summary"]["config"]["anchor"] == "linker"


def test_explain_refuses_to_write_over_its_input(runs, small_sample, capsys):
    assert main(["explain", str(runs["oracle"]), "--data", str(small_sample), "--json", str(runs["oracle"])]) == 2
    assert "input" in capsys.readouterr().err


def _pick(explained, stage):
    return next(qid for qid, st in explained["questions"].items() if stage in st)


@pytest.mark.parametrize("stage", ["retrieved", "too_deep", "capped", "tie_cut"])
def test_show_fits_80_columns_and_names_the_stages(runs, small_sample, explained, capsys, stage):
    qid = _pick(explained, stage)
    assert main(["show", qid, "--run", str(runs["oracle"]), "--data", str(small_sample)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert f"question {qid}" in out and "gold chain" in out and "evidence, ranked" in out and "pool (SPEC" in out
    for s in explained["questions"][qid]:
        assert s in out
    if stage == "tie_cut":
        assert "cut-off ties" in out and "*" in out


def test_show_json_matches_explain(runs, small_sample, explained, capsys):
    qid = _pick(explained, "outranked")
    assert main(["show", qid, "--run", str(runs["oracle"]), "--data", str(small_sample), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["id"] == qid and d["config"] == "oracle"
    assert [h["stage"] for h in d["hops"]] == explained["questions"][qid]
    assert {"question", "t_query", "answer", "operator", "complexity", "replacements", "anchor", "pool", "evidence",
            "cutoff_ties"} <= set(d)
    assert len(d["pool"]["rows"]) == len(d["pool"]["caps"]) == len(d["pool"]["cap_hit"]) == 2


def test_show_without_run_runs_the_configuration(runs, small_sample, capsys):
    out_path = runs["nonoracle"].with_name("nonoracle.explain.json")
    assert main(["explain", str(runs["nonoracle"]), "--data", str(small_sample), "--json", str(out_path)]) == 0
    exp = json.loads(out_path.read_text(encoding="utf-8"))
    qid = _pick(exp, "wrong_anchor")
    capsys.readouterr()
    assert main(["show", qid, "--config", "nonoracle", "--data", str(small_sample), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["stages"] == exp["questions"][qid]
    assert d["anchor"]["hit"] is False and d["anchor"]["rule"] == "linker"
    assert d["anchor"]["id"] != d["anchor"]["gold_id"]  # the label may be a homonym of the gold one


def test_show_unknown_question(runs, small_sample, capsys):
    assert main(["show", "no-such-question", "--run", str(runs["oracle"]), "--data", str(small_sample)]) == 2
    err = capsys.readouterr().err
    assert "no-such-question" in err and "Traceback" not in err
