"""An output never overwrites an input, and never lands in a folder that is not ours (issue 12, class 1).

Every case goes through the real CLI and checks exit code 2, the message, and
that the input's bytes are unchanged afterwards.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from reference.tiny import good_root

from tempbench.cli import main
from tempbench_core.outputs import LEDGER


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    return good_root(tmp_path / "data")


def _refused(argv: list[str], protected: Path, capsys, expect: str) -> None:
    before = _digest(protected)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expect in err and "Traceback" not in err, err
    assert _digest(protected) == before


def test_run_out_is_an_input(data, capsys):
    bench = data / "benchmark" / "benchmark_labelled.jsonl"
    _refused(["run", "--config", "oracle", "--data", str(data), "--out", str(bench)], bench, capsys, "is an input")


def test_run_out_is_a_symlink_to_an_input(data, tmp_path, capsys):
    link = tmp_path / "run.jsonl"
    os.symlink(data / "tkgl-smallpedia_edgelist.csv", link)
    _refused(["run", "--config", "oracle", "--data", str(data), "--out", str(link)], data / "tkgl-smallpedia_edgelist.csv",
             capsys, "is an input")


def test_run_config_file_is_not_overwritten(data, tmp_path, capsys):
    cfg = tmp_path / "mine.toml"
    cfg.write_text('name = "mine"\n', encoding="utf-8")
    # the run's .meta.json would be mine.meta.json; the run file itself is the config
    _refused(["run", "--config", str(cfg), "--data", str(data), "--out", str(cfg)], cfg, capsys, "is an input")


def test_score_json_over_the_run_and_labels_out_over_the_labels(data, tmp_path, capsys):
    run = tmp_path / "r.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(data), "--out", str(run), "--split", "all"]) == 0
    capsys.readouterr()
    _refused(["score", str(run), "--data", str(data), "--json", str(run)], run, capsys, "is an input")
    _refused(["diff", str(run), str(run), "--data", str(data), "--json", str(run)], run, capsys, "is an input")
    labels = data / "labels.tsv"
    _refused(["labels", "--data", str(data), "--out", str(labels)], labels, capsys, "is an input")


def test_no_output_lands_on_a_runs_meta_json(data, tmp_path, capsys):
    """A run's ``.meta.json`` is read with the run (its inputs' digests): score, diff, repro and export never write it."""
    runs = tmp_path / "runs"
    runs.mkdir()
    run = runs / "oracle.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(data), "--out", str(run), "--split", "all"]) == 0
    capsys.readouterr()
    meta = runs / "oracle.meta.json"
    _refused(["score", str(run), "--data", str(data), "--json", str(meta)], meta, capsys, "is an input")
    _refused(["score", str(run), "--data", str(data), "--per-question", str(meta)], meta, capsys, "is an input")
    _refused(["diff", str(run), str(run), "--data", str(data), "--json", str(meta)], meta, capsys, "is an input")
    # repro --json runs/oracle.json would put its own .meta.json on the run's
    _refused(["repro", str(runs), str(runs), "--data", str(data), "--json", str(runs / "oracle.json")], meta, capsys,
             "is an input")
    assert not (runs / "oracle.json").exists()


def test_an_output_in_a_missing_folder_is_an_error(data, tmp_path, capsys):
    run = tmp_path / "r.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(data), "--out", str(run), "--split", "all"]) == 0
    capsys.readouterr()
    assert main(["score", str(run), "--data", str(data), "--json", str(tmp_path / "no" / "such" / "s.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


def test_a_directory_output_refuses_a_data_root_and_a_folder_of_notes(data, tmp_path, capsys):
    kg = data / "tkgl-smallpedia_edgelist.csv"
    # the KG's own folder may be --out (issue 24), but not over the benchmark files someone else put there
    bench = data / "benchmark" / "benchmark_labelled.jsonl"
    _refused(["build-benchmark", "--kg", str(kg), "--out", str(data)], bench, capsys,
             "a benchmark file this command did not write is already there")
    other = tmp_path / "other"
    other.mkdir()
    _refused(["build-benchmark", "--kg", str(kg), "--out", str(other.parent / "data" / "benchmark")], bench, capsys,
             "holds files tempbench did not write")
    notes = tmp_path / "mine"
    notes.mkdir()
    (notes / "notes.txt").write_text("my notes\n", encoding="utf-8")
    _refused(["build-benchmark", "--kg", str(kg), "--out", str(notes)], notes / "notes.txt", capsys,
             "holds files tempbench did not write")


def test_regenerating_our_own_folder_keeps_files_we_did_not_write(data, tmp_path, capsys):
    kg = data / "tkgl-smallpedia_edgelist.csv"
    out = tmp_path / "built"
    argv = ["build-benchmark", "--kg", str(kg), "--labels", str(data / "labels.tsv"), "--out", str(out), "--target-n", "5"]
    assert main(argv) == 0
    assert (out / LEDGER).is_file()
    (out / "notes.txt").write_text("added later\n", encoding="utf-8")
    assert main(argv) == 0
    assert (out / "notes.txt").read_text(encoding="utf-8") == "added later\n"
    capsys.readouterr()


def test_outputs_get_the_users_umask(data, tmp_path, capsys):
    run = tmp_path / "r.jsonl"
    old = os.umask(0o027)
    try:
        assert main(["run", "--config", "oracle", "--data", str(data), "--out", str(run), "--split", "all"]) == 0
    finally:
        os.umask(old)
    assert (run.stat().st_mode & 0o777) == 0o640
    capsys.readouterr()


def test_regenerating_a_sample_keeps_the_users_files(tmp_path, capsys):
    out = tmp_path / "sample"
    assert main(["sample", "--scale", "tiny", "--seed", "3", "--out", str(out)]) == 0
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    (out / "baselines").mkdir()
    (out / "baselines" / "b.jsonl").write_text("{}\n", encoding="utf-8")
    kg = (out / "tkgl-smallpedia_edgelist.csv").read_bytes()
    assert main(["sample", "--scale", "tiny", "--seed", "3", "--out", str(out)]) == 0
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine\n" and (out / "baselines" / "b.jsonl").is_file()
    assert (out / "tkgl-smallpedia_edgelist.csv").read_bytes() == kg and (out / "MANIFEST.json").is_file()
    assert not list(tmp_path.glob(".sample*"))  # no temporary folder left behind
    capsys.readouterr()
