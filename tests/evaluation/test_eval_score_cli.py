"""``score_run`` and the score / score-answers / compare / export-trec commands (SPEC §3.2, §6.2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference.eval import published_score, slow_rank
from reference.synthetic import synthetic

from eval.scoring import ScoreOptions, score_run
from tempbench.cli import main
from tempbench_core.errors import RunMismatchError


def write_jsonl(path: Path, records) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def small():
    return synthetic(n=300, seed=5)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, small):
    questions, run, flags = small
    root = tmp_path_factory.mktemp("data")
    labelled = [{**q, "S_star": [{k: v for k, v in t.items() if not k.endswith("_id")} for t in q["S_star"]],
                 "S_dist": [{k: v for k, v in t.items() if not k.endswith("_id")} for t in q["S_dist"]],
                 "S_stale": [{k: v for k, v in t.items() if not k.endswith("_id")} for t in q["S_stale"]]} for q in questions]
    id_only = [{**q, "S_star": [{k: v for k, v in t.items() if k not in ("s", "r", "o")} for t in q["S_star"]],
                "S_dist": [{k: v for k, v in t.items() if k not in ("s", "r", "o")} for t in q["S_dist"]],
                "S_stale": [{k: v for k, v in t.items() if k not in ("s", "r", "o")} for t in q["S_stale"]]} for q in questions]
    write_jsonl(root / "benchmark" / "benchmark_labelled.jsonl", labelled)
    write_jsonl(root / "benchmark" / "benchmark.jsonl", id_only)
    write_jsonl(root / "benchmark" / "functional_negatives.jsonl", [{"id": k, **v} for k, v in flags.items()])
    test_ids = [q["id"] for q in questions if q["split"] == "test"]
    write_jsonl(root / "run.jsonl", [run[qid] for qid in test_ids[:-3]])  # three test questions missing
    return root


def test_score_run_matches_slow_loops(small):
    questions, run, flags = small
    out = score_run(run, questions, flags, options=ScoreOptions(n_boot=100))
    assert list(out)[:6] == ["trp_ccr", "coverage", "negatives", "rank", "ties", "ci"]
    slow = [published_score(q, run[q["id"]]["evidence"]) for q in questions]
    trps = [r["trp"] for r in slow if r["trp"] is not None]
    assert out["trp_ccr"]["TRP_macro"] == pytest.approx(sum(trps) / len(trps), abs=1e-12)
    assert out["trp_ccr"]["CCR"] == pytest.approx(sum(r["ccr"] for r in slow) / len(slow), abs=1e-12)
    ranks = [r for r in (slow_rank(q, run[q["id"]]["evidence"]) for q in questions) if r is not None]
    assert out["rank"]["mrr"] == pytest.approx(sum(r["mrr"] for r in ranks) / len(ranks), abs=1e-12)
    assert out["counts"]["rank_evaluated"] == len(ranks)
    for name, ci in out["ci"].items():
        if ci is not None and name in out["rank"]:
            assert ci[0] <= out["rank"][name] + 1e-12 and out["rank"][name] <= ci[1] + 1e-12
    for name, t in out["ties"].items():
        assert t["min"] - 1e-12 <= t["expected"] <= t["max"] + 1e-12, name
    assert set(out["negatives"]) == {"stale_exact", "stale_same_fact", "stale_same_relation",
                                     "dist_exact", "dist_same_triple", "dist_same_relation"}


def test_split_missing_and_unknown_ids(small):
    questions, run, flags = small
    test_ids = [q["id"] for q in questions if q["split"] == "test"]
    partial = {qid: run[qid] for qid in test_ids[:-2]}
    out = score_run(partial, questions, flags, options=ScoreOptions(split="test", n_boot=10))
    assert out["missing"] == 2 and out["trp_ccr"]["n_questions"] == len(test_ids)
    out2 = score_run(partial, questions, flags, options=ScoreOptions(n_boot=10))
    assert out2["missing"] == 0 and out2["trp_ccr"]["n_questions"] == len(test_ids) - 2
    with pytest.raises(RunMismatchError, match="not in the benchmark"):
        score_run({"nope": {"id": "nope", "evidence": []}}, questions, flags)
    no_flags = score_run(partial, questions, None, options=ScoreOptions(n_boot=10))
    assert no_flags["negatives"]["flags_found"] is False


def test_score_command_json(data_dir, tmp_path, capsys):
    out = tmp_path / "scores.json"
    bench = data_dir / "benchmark" / "benchmark_labelled.jsonl"
    qs = [json.loads(x) for x in bench.read_text().splitlines()]
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": q["id"], "prediction": q["answer"]} for q in qs[:10]])
    code = main(["score", str(data_dir / "run.jsonl"), "--benchmark", str(bench),
                 "--split", "test", "--json", str(out), "--boot", "50", "--predictions", str(preds)])
    assert code == 0
    result = json.loads(out.read_text())
    assert list(result)[:7] == ["trp_ccr", "coverage", "negatives", "rank", "ties", "ci", "answers"]
    assert result["missing"] == 3 and result["answers"]["n"] == sum(q["split"] == "test" for q in qs)
    assert "EM" in result["ci"] and result["answers"]["interval_leak_contaminated"] in (True, False)
    assert result["negatives"]["stale_exact"]["n"] > 0
    printed = capsys.readouterr().out
    assert "coverage" in printed and "by complexity" in printed and "by operator" in printed


def test_score_command_evidence_file_and_errors(data_dir, tmp_path, capsys):
    bench = str(data_dir / "benchmark" / "benchmark_labelled.jsonl")
    lines = (data_dir / "run.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    ev = [[t["s"], t["r"], t["o"], t["t_start"], t["t_end"]] for t in first["evidence"]]
    path = write_jsonl(tmp_path / "ev.jsonl", [{"id": first["id"], "evidence": ev}])
    assert main(["score", str(path), "--benchmark", bench, "--boot", "10"]) == 0
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": first["id"], "evidence": [["a", "b", "c", 1994]]}])
    assert main(["score", str(bad), "--benchmark", bench]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
    unknown = write_jsonl(tmp_path / "unknown.jsonl", [{"id": "zzz", "evidence": []}])
    assert main(["score", str(unknown), "--benchmark", bench]) == 2
    assert "not in the benchmark" in capsys.readouterr().err


def test_score_answers_command(data_dir, tmp_path, capsys):
    bench = data_dir / "benchmark" / "benchmark_labelled.jsonl"
    qs = [json.loads(x) for x in bench.read_text().splitlines()][:20]
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": q["id"], "prediction": q["answer"]} for q in qs])
    out = tmp_path / "a.json"
    assert main(["score-answers", str(preds), "--benchmark", str(bench), "--json", str(out), "--boot", "20"]) == 0
    result = json.loads(out.read_text())
    assert result["EM"] == 1.0 and result["n"] == 20 and "EM_without_interval" in result
    assert "without interval" in capsys.readouterr().out


def test_compare_and_export_trec(data_dir, tmp_path):
    bench = str(data_dir / "benchmark" / "benchmark_labelled.jsonl")
    records = [json.loads(x) for x in (data_dir / "run.jsonl").read_text().splitlines()]
    worse = [{**r, "evidence": r["evidence"][5:]} for r in records]
    b_path = write_jsonl(tmp_path / "b.jsonl", worse)
    out = tmp_path / "cmp.json"
    assert main(["compare", str(data_dir / "run.jsonl"), str(b_path), "--benchmark", bench, "--json", str(out),
                 "--boot", "50", "--perm", "50"]) == 0
    cmp = json.loads(out.read_text())
    assert cmp["overall"]["CCR"]["delta"] >= 0 and "by_complexity" in cmp and "by_operator" in cmp
    assert main(["compare", str(data_dir / "run.jsonl"), str(write_jsonl(tmp_path / "c.jsonl", worse[:3])), "--benchmark", bench]) == 2
    assert main(["export-trec", str(data_dir / "run.jsonl"), str(b_path), "--benchmark", bench,
                 "--out", str(tmp_path / "trec")]) == 0
    run_lines = (tmp_path / "trec" / "run.trec").read_text().splitlines()
    qrels_lines = (tmp_path / "trec" / "qrels.txt").read_text().splitlines()
    assert len((tmp_path / "trec" / "b.trec").read_text().splitlines()) < len(run_lines)
    assert run_lines and all(len(x.split()) == 6 for x in run_lines)
    assert qrels_lines and all(len(x.split()) == 4 for x in qrels_lines)
