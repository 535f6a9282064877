"""What a hostile-input probe of the CLI found computing on nothing or comparing the wrong fields, now refused.

Each case exits 2 with a message that says what is wrong and what was expected, through the CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference.tiny import good_root

from tempbench.cli import main


@pytest.fixture()
def tiny_run(tmp_path: Path) -> tuple[Path, Path]:
    """A tiny data root and an oracle run of it."""
    root = good_root(tmp_path / "root")
    run = tmp_path / "r.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(root), "--out", str(run)]) == 0
    return root, run


def test_running_a_split_without_questions_is_refused(tmp_path: Path, capsys) -> None:
    root = good_root(tmp_path / "root")  # one question, of split test
    out = tmp_path / "dev.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(root), "--split", "dev", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no benchmark question has split 'dev'" in err and "splits: test" in err
    assert not out.exists()
    (root / "benchmark" / "benchmark_labelled.jsonl").write_text("", encoding="utf-8")
    assert main(["run", "--config", "oracle", "--data", str(root), "--out", str(out)]) == 2
    assert "the benchmark holds no question" in capsys.readouterr().err
    assert not out.exists()


def test_diff_in_a_space_the_baseline_lacks_is_refused(tiny_run: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    root, run = tiny_run
    record = json.loads(run.read_text(encoding="utf-8").splitlines()[0])
    assert record["evidence"], "the tiny root's question retrieves evidence"
    for item in record["evidence"] + record.get("cutoff_ties", []):
        for key in ("s_id", "r_id", "o_id"):
            item.pop(key, None)
    labels_only = tmp_path / "labels_only.jsonl"
    labels_only.write_text(json.dumps(record) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["diff", str(run), str(labels_only), "--data", str(root), "--space", "id"]) == 2
    err = capsys.readouterr().err
    assert "cannot compare evidence in the id space" in err and "s_id/r_id/o_id" in err
    # the same evidence in a space both carry is one exact match
    assert main(["diff", str(run), str(labels_only), "--data", str(root), "--space", "label"]) == 0
    assert "exact match 1 of 1" in capsys.readouterr().out


def test_check_calls_an_empty_benchmark_an_error(tmp_path: Path, capsys) -> None:
    root = good_root(tmp_path / "root")
    assert main(["check", "--data", str(root)]) == 0
    capsys.readouterr()
    (root / "benchmark" / "benchmark_labelled.jsonl").write_text("", encoding="utf-8")
    assert main(["check", "--data", str(root)]) == 2
    out = capsys.readouterr()
    assert "holds no question" in out.out + out.err


def test_build_benchmark_leaves_a_generated_roots_benchmark_alone(tmp_path: Path, capsys) -> None:
    root = good_root(tmp_path / "root")
    (root / "MANIFEST.json").write_text("{}", encoding="utf-8")  # as `tempbench sample` leaves it
    bench = root / "benchmark" / "benchmark_labelled.jsonl"
    before = bench.read_bytes()
    assert main(["build-benchmark", "--kg", str(root / "tkgl-smallpedia_edgelist.csv"), "--out", str(root),
                 "--target-n", "5"]) == 2
    err = capsys.readouterr().err
    assert str(bench) in err and "did not write" in err
    assert bench.read_bytes() == before and not (root / "benchmark" / "benchmark.jsonl").exists()


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens there once closed


def test_a_failed_fetch_says_what_to_do_and_leaves_no_empty_root(tmp_path: Path, capsys, monkeypatch) -> None:
    import tempbench.fetch as fetch

    urls = tuple(f"http://127.0.0.1:{_closed_port()}/tkgl-smallpedia.zip" for _ in range(2))
    monkeypatch.setattr(fetch, "TGB_URLS", urls)
    out = tmp_path / "new-root"
    assert main(["fetch", "tgb", "--out", str(out), "--retries", "0"]) == 2
    err = capsys.readouterr().err
    assert "from any of its 2 sources" in err and f"download {urls[0]}" in err and "--url FILE" in err
    assert not out.exists()  # created for this fetch, left empty: removed again
    kept = tmp_path / "kept-root"
    kept.mkdir()
    assert main(["fetch", "tgb", "--out", str(kept), "--retries", "0"]) == 2
    assert kept.is_dir() and not any(kept.iterdir())  # the user's folder stays


def test_labels_out_must_be_a_name_read_back_as_tsv(tmp_path: Path, capsys) -> None:
    root = good_root(tmp_path / "root")
    for name in ("lab.json", "lab.tsv.gz"):
        assert main(["labels", "--data", str(root), "--out", str(tmp_path / name)]) == 2
        assert "writes plain TSV" in capsys.readouterr().err and not (tmp_path / name).exists()
    assert main(["labels", "--data", str(root), "--out", str(tmp_path / "lab.tsv")]) == 0


@pytest.mark.parametrize(("name", "content", "words"), [
    ("oracle.jsonl", "", "unrecognised baselines file: the file is empty"),
    ("oracle_metrics.json", '{"TRP": {"all": 0.2, "all": 0.3}, "CCR": {"all": 0.1}}', "the key 'all' appears twice"),
])
def test_a_baselines_file_that_cannot_be_read_as_meant_says_why(tiny_run: tuple[Path, Path], tmp_path: Path, capsys,
                                                                 name: str, content: str, words: str) -> None:
    root, run = tiny_run
    baseline = tmp_path / name
    baseline.write_text(content, encoding="utf-8")
    capsys.readouterr()
    assert main(["diff", str(run), str(baseline), "--data", str(root)]) == 2
    err = capsys.readouterr().err
    assert str(baseline) in err and words in err


def test_a_folder_given_for_a_file_and_a_file_for_a_folder_are_named_so(tmp_path: Path, capsys) -> None:
    root = good_root(tmp_path / "root")
    kg = root / "tkgl-smallpedia_edgelist.csv"
    cases = [(["check", "--data", str(kg)], "is a file, not a folder"),
             (["index", "--kg", str(root)], "is a directory, not a file (expected a KG edge list)"),
             (["index", "--data", str(root), "--labels", str(root)], "is a directory, not a file (expected a labels"),
             (["build-benchmark", "--kg", str(root), "--out", str(tmp_path / "b")], "is a directory, not a file"),
             (["run", "--config", f"{root}/", "--data", str(root)], "is a folder; expected a configuration TOML")]
    for argv, words in cases:
        assert main(argv) == 2, argv
        assert words in capsys.readouterr().err, argv


def test_run_refuses_a_gz_name_it_would_write_plain(tmp_path: Path, capsys) -> None:
    root = good_root(tmp_path / "root")
    out = tmp_path / "oracle.jsonl.gz"
    assert main(["run", "--config", "oracle", "--data", str(root), "--out", str(out)]) == 2
    assert "written as plain JSON Lines" in capsys.readouterr().err and not out.exists()


def test_score_answers_refuses_predictions_of_no_question_of_the_split(small_sample: Path, tmp_path: Path,
                                                                        capsys) -> None:
    bench = small_sample / "benchmark" / "benchmark_labelled.jsonl"
    dev = [json.loads(line)["id"] for line in bench.read_text(encoding="utf-8").splitlines()
           if json.loads(line)["split"] == "dev"][:5]
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text("".join(json.dumps({"id": qid, "prediction": "1994"}) + "\n" for qid in dev),
                           encoding="utf-8")
    data = ["--data", str(small_sample), "--boot", "10"]
    assert main(["score-answers", str(predictions), "--split", "test", *data]) == 2
    assert "none of the 5 questions" in capsys.readouterr().err
    assert main(["score-answers", str(predictions), "--split", "test", "--force", *data]) == 0
    assert "warning (--force)" in capsys.readouterr().err
    assert main(["score-answers", str(predictions), "--split", "dev", *data]) == 0
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text(json.dumps({"id": "no-such-question", "prediction": "x"}) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["score-answers", str(unknown), *data]) == 2
    assert f"{unknown}: 1 prediction(s) have ids not in the benchmark" in capsys.readouterr().err


def test_a_claim_with_params_its_compute_does_not_take_is_refused_when_read(tmp_path: Path, capsys) -> None:
    import re

    from tempbench import cli

    root = good_root(tmp_path / "root")
    shipped = Path(cli.__file__).resolve().parents[1] / "configs" / "paper_numbers.toml"
    text = shipped.read_text(encoding="utf-8")
    first = re.search(r'^params = \{ split = "train" \}$', text, flags=re.M)
    assert first
    numbers = tmp_path / "numbers.toml"
    numbers.write_text(text[:first.start()] + 'params = { split = "train", spilt = "dev" }' + text[first.end():],
                       encoding="utf-8")
    assert main(["audit", "--data", str(root), "--paper-numbers", str(numbers)]) == 2
    err = capsys.readouterr().err
    assert str(numbers) in err and "takes no param 'spilt'" in err and "its params: " in err
    assert "unexpected keyword" not in err


def test_an_empty_keys_list_is_refused_not_read_as_every_key(tiny_run: tuple[Path, Path], tmp_path: Path, capsys) -> None:
    root, run = tiny_run
    for keys in ("", ",,"):
        capsys.readouterr()
        with pytest.raises(SystemExit) as stop:  # argparse's usage error
            main(["diff", str(run), str(run), "--data", str(root), "--sweep", "--keys", keys])
        assert stop.value.code == 2 and "no key given" in capsys.readouterr().err


def test_export_trec_writes_no_control_character_into_a_file_name(tmp_path: Path, capsys) -> None:
    root = good_root(tmp_path / "root")
    run = tmp_path / "my\trun.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(root), "--out", str(run)]) == 0
    out = tmp_path / "trec"
    out.mkdir()
    assert main(["export-trec", str(run), "--data", str(root), "--out", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert "my\\trun.trec" in names and not any("\t" in n for n in names)


def test_json_dash_is_refused_not_a_file_named_dash(tiny_run: tuple[Path, Path], tmp_path: Path, capsys, monkeypatch) -> None:
    root, run = tiny_run
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["score", str(run), "--data", str(root), "--boot", "10", "--json", "-"]) == 2
    assert "a file named '-'" in capsys.readouterr().err and not (tmp_path / "-").exists()
