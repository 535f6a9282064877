"""Regression tests for the rough edges found walking through the README as a new user.

Each test pins one fix: table layout in pipes and logs, progress bars on stderr,
ablation runs not overwriting the shipped run, a clear error for two runs with
no question in common, option aliases and defaults shown in ``--help``.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tempbench import cli


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of one in-process CLI call (argparse exits included)."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


LONG_VARIANT = "cap_scope='per_hop', cap_counts='unique_triples', line_template='({s}, {r}, {o}, {t})', query_includes_t_query=true"
LONG_PATH = "/a/very/long/cache/directory/tempbench/sample/small-seed42/benchmark/benchmark_labelled.jsonl"


def test_table_in_a_pipe_is_not_wrapped_or_truncated(capsys: pytest.CaptureFixture[str]) -> None:
    """Bug: piped tables were cut at 80 columns: paths ended in '…', rows and titles wrapped."""
    from tempbench_core.console import print_table

    title = "diff: exact match 275 of 300 baseline questions (91.7%), compared by id"
    print_table(title, ["variant", "exact", "share"], [["a", "1 of 2", 0.5], [LONG_VARIANT, "300 of 300", 1.0], [LONG_PATH, "-", None]])
    out = capsys.readouterr().out
    assert "…" not in out
    lines = out.splitlines()
    assert any(title in line for line in lines)  # title on one line
    assert any(LONG_VARIANT in line and "300 of 300" in line for line in lines)  # row on one line
    assert any(LONG_PATH in line for line in lines)
    # text column left-aligned, numeric columns right-aligned
    row_a = next(line for line in lines if line.startswith("| a "))
    assert row_a.rstrip().endswith("0.500 |")
    assert "1 of 2 |" in row_a


def test_numeric_column_detection() -> None:
    from tempbench_core.console import _numeric_column

    assert _numeric_column([1, 2.5, None, "-", "1,500", "[0.1, 0.2]", "-0.003", "300 of 300"])
    assert not _numeric_column(["yes", 3])
    assert not _numeric_column(["/tmp/x", "1"])
    assert not _numeric_column([None, ""])


class _FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_goes_to_stderr_not_stdout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bug: the bar used rich's default console (stdout): `tempbench run | tee log`
    in a terminal showed no bar, and the bar could land among the tables."""
    from tempbench_core.progress import progress

    out, err = io.StringIO(), _FakeTTY()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.delenv("TERM", raising=False)
    assert list(progress(range(5), total=5, description="walkthrough", enabled=True)) == [0, 1, 2, 3, 4]
    assert out.getvalue() == ""
    assert err.getvalue() != ""


def test_progress_silent_when_not_a_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    from tempbench_core.progress import progress

    assert list(progress(range(3), total=3, description="x")) == [0, 1, 2]
    out, err = capsys.readouterr()
    assert out == "" and err == ""


def test_default_run_name_appends_overrides() -> None:
    from retriever.config import override_name as default_run_name

    assert default_run_name("oracle", []) == "oracle"
    assert default_run_name("oracle", ["k=5"]) == "oracle+k=5"
    named = default_run_name("oracle", ["caps=[60, 200]", "anchor=linker"])
    assert named.startswith("oracle+caps=_60_200+anchor=linker+") and len(named.rsplit("+", 1)[1]) == 8
    # two overrides that clean to the same text never share a name
    assert default_run_name("oracle", ['line_template="{s}/{r}"']) != default_run_name("oracle", ['line_template="{s}:{r}"'])
    assert "/" not in default_run_name("oracle", ['line_template="{s}/{r}"'])


@pytest.fixture()
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_run_with_set_does_not_overwrite_shipped_run(small_sample: Path, in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bug: `run --config oracle --set k=5` wrote tempbench-out/runs/oracle.jsonl, the file
    `reproduce`/`audit --runs` read as the shipped oracle run."""
    code, _, err = _main(["run", "--config", "oracle", "--set", "k=5", "--data", str(small_sample)], capsys)
    assert code == 0, err
    runs = in_tmp / "tempbench-out" / "runs"
    assert (runs / "oracle+k=5.jsonl").exists()
    assert (runs / "oracle+k=5.meta.json").exists()
    assert not (runs / "oracle.jsonl").exists()
    code, _, err = _main(["run", "--config", "oracle", "--data", str(small_sample)], capsys)
    assert code == 0, err
    assert (runs / "oracle.jsonl").exists()


def test_diff_of_runs_with_no_common_question_is_a_user_error(small_sample: Path, in_tmp: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Bug: diffing runs of different splits/datasets exited 0 listing every id as 'only in'."""
    data = ["--data", str(small_sample)]
    assert _main(["run", "--config", "oracle", "--split", "test", "--out", "t.jsonl", *data], capsys)[0] == 0
    assert _main(["run", "--config", "oracle", "--split", "dev", "--out", "d.jsonl", *data], capsys)[0] == 0
    code, out, err = _main(["diff", "t.jsonl", "d.jsonl", *data], capsys)
    assert code == 2
    assert "no question in common" in err and "same benchmark" in err
    assert "Traceback" not in err and "only in the baseline" not in err + out
    # the same run against itself still diffs fine, with --key as an alias of --space
    code, out, err = _main(["diff", "t.jsonl", "t.jsonl", "--key", "id", *data], capsys)
    assert code == 0, err
    assert "exact match 300 of 300" in out


def test_score_json_reports_the_file(small_sample: Path, in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Bug: `score --json OUT` (and score-answers, compare) wrote OUT without saying so."""
    data = ["--data", str(small_sample)]
    assert _main(["run", "--config", "oracle", "--out", "o.jsonl", *data], capsys)[0] == 0
    code, _, err = _main(["score", "o.jsonl", "--json", "s.json", "--boot", "10", *data], capsys)
    assert code == 0, err
    assert "wrote s.json" in err and (in_tmp / "s.json").exists()
    code, _, err = _main(["compare", "o.jsonl", "o.jsonl", "--json", "c.json", "--boot", "10", "--perm", "10", *data], capsys)
    assert code == 0, err
    assert "wrote c.json" in err and (in_tmp / "c.json").exists()


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("score", "default: exactly the questions in the run"),
        ("compare", "default: exactly the questions in the run"),
        ("export-trec", "default: exactly the questions in the run"),
        ("export-trec", "default auto"),
        ("export-trec", "DIR/qrels.txt"),
        ("diff", "--space {auto,id,label,line}, --key {auto,id,label,line}"),
        ("build-benchmark", "--target-n N"),
    ],
)
def test_help_states_defaults_and_aliases(command: str, expected: str, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # argparse wraps help at the terminal width
    code, out, _ = _main([command, "--help"], capsys)
    assert code == 0
    assert expected in " ".join(out.split())


def test_split_all_scores_every_benchmark_question() -> None:
    """``--split all``: every question of every split; absent ones count as empty (SPEC §3.2)."""
    from eval.scoring import select

    questions = [{"id": "a", "split": "train"}, {"id": "b", "split": "test"}, {"id": "c", "split": "dev"}]
    run = {"b": {"id": "b", "evidence": []}}
    chosen, records, missing, outside = select(run, questions, "all")
    assert [q["id"] for q in chosen] == ["a", "b", "c"]
    assert records == [None, run["b"], None] and missing == 2 and outside == 0


def test_audit_runs_directory_must_exist(tmp_path, capsys) -> None:
    from tempbench.cli import main

    assert main(["audit", "--runs", str(tmp_path / "nope")]) == 2
    assert "--runs directory not found" in capsys.readouterr().err
