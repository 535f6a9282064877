"""``tempbench sample`` and ``tempbench build-benchmark`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from reference.sample_checks import check_root

from tempbench.cli import main


def test_sample_command_writes_and_summarises(tmp_path: Path, capsys) -> None:
    out = tmp_path / "data"
    assert main(["sample", "--scale", "tiny", "--seed", "11", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Questions by split x complexity x operator" in printed
    assert "Functional negatives" in printed
    for op in ("point_in_time", "interval"):
        assert op in printed or op[:7] in printed
    manifest = json.loads((out / "MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["scale"] == "tiny" and manifest["seed"] == 11
    check_root(out)


def test_build_benchmark_on_a_tgb_file(tmp_path: Path, capsys) -> None:
    src = tmp_path / "src"
    assert main(["sample", "--scale", "tiny", "--seed", "4", "--out", str(src)]) == 0
    out = tmp_path / "bench"
    code = main(["build-benchmark", "--kg", str(src / "tkgl-smallpedia_edgelist.csv"), "--labels", str(src / "labels.tsv"),
                 "--out", str(out), "--target-n", "120", "--seed", "5"])
    assert code == 0
    assert "Questions by split" in capsys.readouterr().out
    # reuse the checker: the KG and labels beside the new benchmark
    for name in ("tkgl-smallpedia_edgelist.csv", "labels.tsv"):
        (out / name).write_bytes((src / name).read_bytes())
    labelled = (out / "benchmark" / "benchmark_labelled.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(labelled) == 120
    check_root(out)
    # same inputs and seed, same bytes
    again = tmp_path / "again"
    assert main(["build-benchmark", "--kg", str(src / "tkgl-smallpedia_edgelist.csv"), "--labels", str(src / "labels.tsv"),
                 "--out", str(again), "--target-n", "120", "--seed", "5"]) == 0
    for name in ("benchmark_labelled.jsonl", "benchmark.jsonl", "functional_negatives.jsonl"):
        assert (again / "benchmark" / name).read_bytes() == (out / "benchmark" / name).read_bytes()


def test_build_benchmark_user_errors_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["build-benchmark", "--kg", str(tmp_path / "missing.csv"), "--out", str(tmp_path / "o")]) == 2
    assert "error:" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("ts,head,tail,relation_type\nabc,Q1,Q2,P1\n", encoding="utf-8")
    assert main(["build-benchmark", "--kg", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:2" in err
    good = tmp_path / "good.csv"
    good.write_text("ts,head,tail,relation_type\n2000,Q1,Q2,P1\n", encoding="utf-8")
    assert main(["build-benchmark", "--kg", str(good), "--out", str(tmp_path / "o"), "--target-n", "0"]) == 2
    assert not (tmp_path / "o").exists()


def test_build_benchmark_without_labels_uses_raw_ids(tmp_path: Path) -> None:
    kg = tmp_path / "kg.csv"
    kg.write_text("ts,head,tail,relation_type\n2000,Q1,Q2,P1\n2001,Q1,Q2,P1\n2000,Q2,Q3,P2\n", encoding="utf-8")
    assert main(["build-benchmark", "--kg", str(kg), "--out", str(tmp_path / "o"), "--target-n", "5", "--seed", "1"]) == 0
    recs = [json.loads(x) for x in (tmp_path / "o" / "benchmark" / "benchmark_labelled.jsonl").read_text().splitlines()]
    assert recs
    for r in recs:
        for t in r["S_star"]:
            assert t["s"] in {"Q1", "Q2"} and t["r"] in {"P1", "P2"} and t["o"] in {"Q2", "Q3"}
