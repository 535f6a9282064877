"""A run stands for the configuration it was made with, and outputs stay out of the data they are made from.

Each case goes through the real CLI: exit code 2, a message that says what was
expected, and the inputs' bytes unchanged afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest
from reference.tiny import good_root

from eval.attribution import longer_than_k, role_problem, role_settings
from retriever import load_config
from tempbench.cli import main
from tempbench_core.runfile import read_run


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    return good_root(tmp_path / "data")


@pytest.fixture()
def runs(data: Path, tmp_path: Path) -> Path:
    """Runs of oracle, nonoracle and oracle with another decision option, each with its .meta.json."""
    folder = tmp_path / "runs"
    folder.mkdir()
    for name, extra in (("oracle", []), ("nonoracle", []), ("oracle_unique", ["--set", "cap_counts=unique_triples"])):
        config = name.split("_unique")[0]
        assert main(["run", "--config", config, *extra, "--data", str(data), "--split", "all",
                     "--out", str(folder / f"{name}.jsonl")]) == 0
    return folder


def _copy_run(source: Path, target: Path) -> None:
    shutil.copy(source, target)
    shutil.copy(source.with_suffix(".meta.json"), target.with_suffix(".meta.json"))


@pytest.mark.parametrize("record", ["MANIFEST.json", "tempbench.lock", "provenance.json"])
def test_no_output_over_the_roots_records(data, runs, capsys, record):
    """The root's records of where its files came from are inputs of every command (the provenance reads them)."""
    target = data / record
    target.write_text("{}\n", encoding="utf-8")
    before = _digest(target)
    for argv in (["check", "--data", str(data), "--json", str(target)],
                 ["score", str(runs / "oracle.jsonl"), "--data", str(data), "--json", str(target)],
                 ["run", "--config", "oracle", "--data", str(data), "--out", str(target)]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err, err
        assert "is an input of this command" in err, err
        assert _digest(target) == before


@pytest.mark.parametrize("manifest", ["[1]\n", '{"files": {"labels.tsv": 3}}\n', '{"files": [1]}\n'])
def test_a_manifest_of_another_shape_is_a_finding_not_a_crash(data, capsys, manifest):
    (data / "MANIFEST.json").write_text(manifest, encoding="utf-8")
    code = main(["check", "--data", str(data)])
    out = capsys.readouterr()
    assert code in (0, 2) and "internal error" not in out.err and "Traceback" not in out.err, out.err
    assert "the generated data cannot be verified" in out.out
    assert "'tempbench sample' writes" in out.out


@pytest.mark.parametrize("inside", ["baselines", ".", "benchmark/sub"])
def test_reproduce_never_writes_into_the_data_root(data, capsys, inside):
    out = data / inside
    existed = out.exists()
    assert main(["reproduce", "--data", str(data), "--out", str(out), "--boot", "10"]) == 2
    err = capsys.readouterr().err
    assert ("inside the data root" in err or "it is the data root" in err) and "give a folder outside it" in err, err
    assert out.exists() == existed
    assert not (data / "baselines").exists()


def test_a_failed_reproduce_leaves_no_output_folder(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "out"
    assert main(["reproduce", "--data", str(tmp_path / "empty"), "--out", str(out), "--boot", "10"]) == 2
    assert "not found" in capsys.readouterr().err
    assert not out.exists()


def test_a_failed_reproduce_keeps_a_folder_it_did_not_make(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    assert main(["reproduce", "--data", str(tmp_path / "empty"), "--out", str(out), "--boot", "10"]) == 2
    capsys.readouterr()
    assert out.is_dir()


def test_the_settings_that_make_a_role_are_read_from_the_shipped_configurations():
    assert set(role_settings()) == {"anchor", "hops", "k", "temporal_filter"}


def test_role_problem(runs):
    assert role_problem(runs / "oracle.jsonl", "oracle") is None
    assert role_problem(runs / "oracle_unique.jsonl", "oracle") is None  # a decision option: what repro compares
    problem = role_problem(runs / "nonoracle.jsonl", "oracle")
    assert problem is not None and "anchor='linker'" in problem and "it is a run of 'nonoracle'" in problem
    assert role_problem(runs / "nonoracle.jsonl", "my_own_name") is None  # no shipped configuration: taken as it is


def test_repro_refuses_runs_filed_under_another_configuration(runs, data, tmp_path, capsys):
    original, reproduced = tmp_path / "original", tmp_path / "reproduced"
    original.mkdir()
    reproduced.mkdir()
    for name in ("oracle", "nonoracle"):
        _copy_run(runs / f"{name}.jsonl", original / f"{name}.jsonl")
    _copy_run(runs / "nonoracle.jsonl", reproduced / "oracle.jsonl")  # swapped
    _copy_run(runs / "oracle.jsonl", reproduced / "nonoracle.jsonl")
    args = ["repro", str(original), str(reproduced), "--data", str(data)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "stands for configuration" in err and "--force" in err and "Traceback" not in err, err
    assert main([*args, "--force"]) == 0
    assert "warning (--force)" in capsys.readouterr().err
    # a reproduction with another decision option is what repro is for
    _copy_run(runs / "oracle_unique.jsonl", reproduced / "oracle.jsonl")
    os.remove(reproduced / "nonoracle.jsonl")
    os.remove(reproduced / "nonoracle.meta.json")
    assert main(args) == 0, capsys.readouterr().err


def test_reproduce_refuses_a_baseline_of_another_configuration(runs, data, tmp_path, capsys):
    (data / "baselines").mkdir()
    _copy_run(runs / "nonoracle.jsonl", data / "baselines" / "oracle.jsonl")
    assert main(["reproduce", "--data", str(data), "--out", str(tmp_path / "out"), "--boot", "10"]) == 2
    err = capsys.readouterr().err
    assert "stands for configuration 'oracle'" in err and "take the file out of baselines/" in err, err
    assert not (tmp_path / "out").exists()


def test_explain_refuses_a_config_whose_k_the_run_exceeds(runs, data, tmp_path, capsys):
    records = read_run(runs / "oracle.jsonl")
    longest = max(len(r["evidence"]) for r in records.values())
    assert longest >= 2  # the check has something to find
    shutil.copy(runs / "oracle.jsonl", tmp_path / "bare.jsonl")  # no .meta.json: --config is taken
    small_k = tmp_path / "small_k.toml"
    small_k.write_text(f'name = "small_k"\nk = {longest - 1}\n', encoding="utf-8")
    args = ["explain", str(tmp_path / "bare.jsonl"), "--config", str(small_k), "--data", str(data)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"more than the k={longest - 1}" in err and "bare.jsonl:" in err and "Traceback" not in err, err
    assert main([*args, "--force"]) == 0
    capsys.readouterr()
    assert longer_than_k(records, load_config("oracle")) is None


def test_a_symbolic_link_loop_is_named(tmp_path, data, capsys):
    os.symlink(tmp_path / "b.jsonl", tmp_path / "a.jsonl")
    os.symlink(tmp_path / "a.jsonl", tmp_path / "b.jsonl")
    os.symlink(tmp_path / "nowhere.jsonl", tmp_path / "dangling.jsonl")
    assert main(["score", str(tmp_path / "a.jsonl"), "--data", str(data)]) == 2
    assert "a loop of links" in capsys.readouterr().err
    assert main(["score", str(tmp_path / "dangling.jsonl"), "--data", str(data)]) == 2
    assert "which does not exist" in capsys.readouterr().err


def test_a_failed_run_leaves_no_default_output_folder(tmp_path, capsys, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--config", "oracle", "--data", "empty"]) == 2
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "tempbench-out").exists()


def test_run_never_makes_its_default_folder_inside_the_data_root(data, capsys, monkeypatch):
    monkeypatch.chdir(data)
    assert main(["run", "--config", "oracle", "--data", "."]) == 2
    assert "the data root" in capsys.readouterr().err
    assert not (data / "tempbench-out").exists()


def test_reproduce_refuses_a_split_with_no_question_before_writing_anything(data, tmp_path, capsys):
    bench = data / "benchmark" / "benchmark_labelled.jsonl"
    records = [json.loads(line) for line in bench.read_text(encoding="utf-8").splitlines() if line.strip()]
    bench.write_text("".join(json.dumps({**r, "split": "train"}) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["reproduce", "--data", str(data), "--out", str(out), "--boot", "10"]) == 2
    assert "no benchmark question has split 'test'" in capsys.readouterr().err
    assert not out.exists()  # no empty run files that look like runs


def test_build_benchmark_takes_a_year_of_eighteen_digits(tmp_path, capsys):
    """A year the KG reader accepts (up to 18 digits) is no reason for a dense array per year."""
    kg = good_root(tmp_path / "data") / "tkgl-smallpedia_edgelist.csv"
    lines = kg.read_text(encoding="utf-8").splitlines()
    far = tmp_path / "far.csv"
    far.write_text("\n".join([lines[0], "99999999999999999,Q1,Q2,P1", *lines[1:]]) + "\n", encoding="utf-8")
    code = main(["build-benchmark", "--kg", str(far), "--out", str(tmp_path / "built"), "--target-n", "5"])
    err = capsys.readouterr().err
    assert code in (0, 2) and "internal error" not in err and "Traceback" not in err, err


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda text: text.replace("paper = 6096", 'paper = 6096\ntolerance = "x"', 1), "not a table"),
    (lambda text: text.replace("[tolerance.count]\nokish_rel = 0.01", '[tolerance.count]\nokish_rel = "x"', 1),
     "tolerance count.okish_rel = 'x' (expected a finite number >= 0)"),
    (lambda text: "", "no [[claim]] tables"),
    (lambda text: text.replace('params = { split = "train" }', 'params = { split = "nosplit" }', 1),
     "params split = 'nosplit' (expected one of"),
])
def test_a_paper_numbers_file_of_another_shape_is_a_user_error(tmp_path, capsys, edit, expected):
    from tempbench_core.layout import shipped_configs_dir

    text = (shipped_configs_dir() / "paper_numbers.toml").read_text(encoding="utf-8")
    changed = edit(text)
    assert changed != text
    claims = tmp_path / "claims.toml"
    claims.write_text(changed, encoding="utf-8")
    data = good_root(tmp_path / "data")
    assert main(["audit", "--data", str(data), "--paper-numbers", str(claims)]) == 2
    err = capsys.readouterr().err
    assert expected in err and str(claims) in err and "internal error" not in err, err


def test_build_benchmark_refuses_a_target_that_leaves_a_split_empty(tmp_path, small_sample, capsys):
    """Splits are filled in turn: a KG that runs out first starves test; such a root could not be run."""
    lines = (small_sample / "tkgl-smallpedia_edgelist.csv").read_text(encoding="utf-8").splitlines()
    kg = tmp_path / "kg.csv"
    kg.write_text("\n".join(lines[:60]) + "\n", encoding="utf-8")
    out = tmp_path / "built"
    assert main(["build-benchmark", "--kg", str(kg), "--out", str(out), "--target-n", "5000"]) == 2
    err = capsys.readouterr().err
    assert "none of split" in err and "'test'" in err and "try --target-n" in err, err
    assert not (out / "benchmark").exists()


@pytest.mark.parametrize("command", [["show", "q1", "--run"], ["explain"], ["score"], ["diff"]])
def test_a_missing_run_is_said_missing(data, tmp_path, capsys, command):
    missing = str(tmp_path / "missing.jsonl")
    argv = [*command, missing] + ([missing] if command == ["diff"] else []) + ["--data", str(data)]
    assert main(argv) == 2
    assert "run file not found" in capsys.readouterr().err


def test_run_never_removes_a_parts_folder_it_did_not_make(data, tmp_path, capsys):
    """``R.jsonl.parts`` is the run's shard folder only when tempbench made it (its mark); else it is someone's."""
    out = tmp_path / "notes.jsonl"
    theirs = tmp_path / "notes.jsonl.parts"
    theirs.mkdir()
    (theirs / "thesis.txt").write_text("precious\n", encoding="utf-8")
    for extra in ([], ["--resume"]):
        assert main(["run", "--config", "oracle", "--data", str(data), "--out", str(out), *extra]) == 2
        assert "holds files tempbench did not write" in capsys.readouterr().err
        assert (theirs / "thesis.txt").read_text(encoding="utf-8") == "precious\n" and not out.exists()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, tmp_path / "x.jsonl.parts")
    assert main(["run", "--config", "oracle", "--data", str(data), "--out", str(tmp_path / "x.jsonl"), "--resume"]) == 2
    assert "is a link or a file" in capsys.readouterr().err and not any(elsewhere.iterdir())
    # a folder tempbench made (an interrupted run's) is resumed or replaced as before
    assert main(["run", "--config", "oracle", "--data", str(data), "--out", str(tmp_path / "ok.jsonl")]) == 0
    assert not (tmp_path / "ok.jsonl.parts").exists()


def test_an_interrupt_before_the_command_starts_is_exit_130_without_a_traceback(monkeypatch, capsys):
    import tempbench.cli as cli

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["run", "--config", "oracle"]) == 130
    assert capsys.readouterr().err == "tempbench: interrupted\n"


def test_reproduce_clears_what_a_killed_job_left_and_the_report_of_before(data, tmp_path, capsys, monkeypatch):
    import tempbench.reproduce as job

    out = tmp_path / "out"
    assert main(["reproduce", "--data", str(data), "--out", str(out), "--boot", "10", "--split", "all"]) == 0
    stale = out / ".shard-texts-killed"
    stale.mkdir()
    (stale / "0.0.part").write_bytes(b"{}\n")
    # a second job interrupted once it has loaded: the first job's report is gone, so the folder says unfinished
    monkeypatch.setattr(job, "_reproduce", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert main(["reproduce", "--data", str(data), "--out", str(out), "--boot", "10", "--split", "all"]) == 130
    assert not (out / "report.md").exists() and not (out / "report.html").exists()
    assert not stale.exists()
    capsys.readouterr()
