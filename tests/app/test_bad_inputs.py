"""The malformed-input corpus (issue 7 part 1) and the exit codes (part 5).

Every case of ``tests/data/bad/cases.toml`` runs the real command line
(:func:`tempbench.cli.main`, in-process for speed) on one file of the corpus and
checks: the exit code (2 for a user error, 0 for accepted variants such as CRLF,
a BOM or blank lines), that the message names the file and the 1-based line
(``path:line:``, SPEC §1.1/§1.3) and says what was expected, and that no
traceback is printed. A few subprocess tests check the same through
``python -m tempbench.cli`` and the ``--debug`` flag on both sides of the
subcommand.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tempbench import cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
GOOD = BAD / "good"
CASES = tomllib.loads((BAD / "cases.toml").read_text(encoding="utf-8"))["case"]
COMMON_RUN = ["--kg", str(GOOD / "kg.csv"), "--labels", str(GOOD / "labels.tsv"),
              "--benchmark", str(GOOD / "benchmark_labelled.jsonl")]


def _expand(args: list[str], file: Path, tmp: Path) -> list[str]:
    return [a.replace("{file}", str(file)).replace("{good}", str(GOOD)).replace("{tmp}", str(tmp)) for a in args]


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of one in-process CLI call (argparse exits included)."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run from an empty directory so that no relative default path can be picked up."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_corpus_case(case: dict, in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    file = BAD / case["file"]
    assert file.is_file(), file
    code, out, err = _main(_expand(case["command"], file, in_tmp), capsys)
    assert "Traceback" not in err + out
    assert code == case["exit"], err
    if case["exit"] == 0:
        assert "error" not in err
        return
    assert "internal error" not in err
    assert f"tempbench {case['command'][0]}: error: " in err
    if case["line"]:
        assert f"{file}:{case['line']}: " in err, err
    else:
        assert str(file) in err, err
        assert not re.search(re.escape(str(file)) + r":\d", err), err
    for fragment in case["expect"]:
        assert fragment in err, (fragment, err)


def test_every_corpus_file_has_a_case() -> None:
    listed = {c["file"] for c in CASES}
    on_disk = {str(p.relative_to(BAD)) for p in BAD.rglob("*") if p.is_file() and p.parent != BAD and p.parent != GOOD}
    assert on_disk == listed


def test_every_error_case_names_a_line_unless_it_cannot() -> None:
    # Line 0 is allowed only where no single line is at fault.
    for case in CASES:
        if case["exit"] != 0 and case["line"] == 0:
            assert case["file"].startswith("config/") or "header_only" in case["file"], case


# ------------------------------------------------ accepted variants, exactly


def test_accepted_kg_variants_load_the_same_rows() -> None:
    from retriever.kg import load_edgelist

    good = load_edgelist(GOOD / "kg.csv")
    crlf = load_edgelist(BAD / "kg" / "bom_crlf_blank_ok.csv")
    for name in ("head", "tail", "relation", "year"):
        np.testing.assert_array_equal(getattr(crlf, name), getattr(good, name))
    assert crlf.entity_ids == good.entity_ids == ["Q1", "Q2", "Q3"]
    assert crlf.relation_ids == good.relation_ids

    quoted = load_edgelist(BAD / "kg" / "quoted_comma_ok.csv")
    assert quoted.entity_ids == ["Q1,Q9", "Q2", "Q3"]  # one field, comma kept
    assert quoted.n_rows == 2

    extra = load_edgelist(BAD / "kg" / "extra_columns_ok.csv")
    assert extra.entity_ids == ["Q1", "Q2", "Q3"] and extra.relation_ids == ["P1", "P2"]

    alias = load_edgelist(BAD / "kg" / "timestamp_alias_ok.csv")
    assert (alias.entity_ids, alias.relation_ids, alias.year.tolist()) == (["Q1", "Q2"], ["P1"], [2000])


def test_accepted_labels_and_benchmark_variants() -> None:
    from retriever.benchmark import load_benchmark
    from retriever.labels import load_labels

    assert load_labels(BAD / "labels" / "bom_crlf_blank_ok.tsv") == load_labels(GOOD / "labels.tsv")
    records = load_benchmark(BAD / "benchmark" / "bom_crlf_blank_ok.jsonl")
    assert [r["id"] for r in records] == ["q1", "q2"]
    assert records[0] == load_benchmark(GOOD / "benchmark_labelled.jsonl")[0]


def test_accepted_evidence_variant_scores_like_the_good_file(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    outs = []
    for name, run in (("good", GOOD / "evidence.jsonl"), ("bom", BAD / "evidence" / "bom_crlf_blank_ok.jsonl")):
        code, _, err = _main(["score", str(run), "--benchmark", str(GOOD / "benchmark_labelled.jsonl"),
                              "--boot", "2", "--json", str(in_tmp / f"{name}.json")], capsys)
        assert code == 0, err
        outs.append(json.loads((in_tmp / f"{name}.json").read_text())["trp_ccr"])
    # The BOM file repeats the gold triple as a 5-list: two hits of two, CCR 1.
    assert outs[0]["CCR"] == outs[1]["CCR"] == 1.0
    assert outs[1]["TRP_micro"] == 1.0


# ------------------------------------------------------------- a 1 MB line


HUGE = "Q" + "7" * (1 << 20)  # a 1 MB id, far above the csv module's default field limit


@pytest.mark.parametrize(
    "text",
    [
        f"ts,head,tail,relation_type\n2000,Q1,Q2,P1\n2001,{HUGE},Q2,P1\n",
        f"ts,head,tail,relation_type,note\n2000,Q1,Q2,P1,a\n2001,{HUGE},Q2,P1,b\n",  # extra column: line-by-line pass too
    ],
    ids=["plain", "extra-column"],
)
def test_one_megabyte_id_is_accepted(text: str, tmp_path: Path) -> None:
    from retriever.kg import load_edgelist

    path = tmp_path / "kg.csv"
    path.write_text(text, encoding="utf-8")
    kg = load_edgelist(path)
    assert kg.entity_ids == ["Q1", "Q2", HUGE]
    assert kg.year.tolist() == [2000, 2001]


@pytest.mark.parametrize(
    ("rows", "line", "fragment"),
    [
        (f"2001,{HUGE},Q2,P1\n20x2,Q1,Q2,P1\n", 4, "non-integer ts '20x2'"),  # error after a long valid line
        (f"20x1{HUGE},Q1,Q2,P1\n", 3, "non-integer ts '20x1Q777"),  # the long field is the bad one
        (f"2001,{HUGE},Q2\n", 3, "ragged row: too few fields (3)"),
        (f'2001,"{HUGE}\nQ2,P1\n2002,Q1,Q2,P1\n', 3, "unclosed quote"),
    ],
    ids=["after", "inside", "ragged", "unclosed-quote"],
)
def test_errors_around_a_one_megabyte_line_name_their_line(
    rows: str, line: int, fragment: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = in_tmp / "kg.csv"
    path.write_text("ts,head,tail,relation_type\n2000,Q1,Q2,P1\n" + rows, encoding="utf-8")
    code, _, err = _main(["index", "--kg", str(path), "--labels", str(GOOD / "labels.tsv"), "--no-cache", "--no-harvest"], capsys)
    assert code == 2, err[:500]
    assert f"{path}:{line}: " in err and fragment in err, err[:500]
    assert "Traceback" not in err
    assert len(err) < 5000  # the 1 MB field is not echoed back


# --------------------------------------------------------- config overrides


@pytest.mark.parametrize(
    ("override", "fragments"),
    [
        ("nosuchkey=1", ["--set 'nosuchkey=1'", "unknown config key 'nosuchkey'", "valid keys:"]),
        ('k="x"', ["config key 'k' has invalid value 'x'", "expected an integer >= 1"]),
        ("k", ["--set 'k'", "expected key=value"]),
        ("hops=0", ["config key 'hops' has invalid value 0", "expected an integer >= 1"]),
        ("anchor=psychic", ["config key 'anchor'", "'oracle', 'linker'"]),
        ("temporal_filter=maybe", ["config key 'temporal_filter'", "expected true or false"]),
        ("caps=[1]", ["config key 'caps'", "one cap per hop"]),
    ],
)
def test_set_override_errors(override: str, fragments: list[str], in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _main(["run", "--config", "oracle", "--set", override, *COMMON_RUN, "--out", str(in_tmp / "r.jsonl")], capsys)
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)
    assert not (in_tmp / "r.jsonl").exists()


def test_unknown_config_name(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _main(["run", "--config", "no_such_config", *COMMON_RUN, "--out", str(in_tmp / "r.jsonl")], capsys)
    assert code == 2
    assert "unknown configuration 'no_such_config'" in err and "the shipped ones are oracle" in err


# ------------------------------------------------ missing files, bad arguments


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["index", "--kg", "{tmp}/nope.csv", "--labels", "{good}/labels.tsv", "--no-cache"], "nope.csv"),
        (["index", "--kg", "{good}/kg.csv", "--labels", "{tmp}/nope.tsv", "--no-cache", "--no-harvest"], "nope.tsv"),
        (["index", "--kg", "{tmp}", "--labels", "{good}/labels.tsv", "--no-cache", "--no-harvest"], "is a directory, not a file"),
        (["index", "--data", "{tmp}/no_such_dir", "--no-cache"], "data directory not found"),
        (["score", "{tmp}/nope.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl"], "nope.jsonl"),
        (["score", "{good}/evidence.jsonl", "--benchmark", "{tmp}/nope.jsonl"], "nope.jsonl"),
        (["score", "{good}/evidence.jsonl", "--benchmark", "{tmp}"], "{tmp}"),
        (["score", "{tmp}", "--benchmark", "{good}/benchmark_labelled.jsonl"], "is a directory"),
        (["score", "{good}/evidence.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl", "--flags", "{tmp}/f.jsonl"], "f.jsonl"),
        (["score", "{good}/evidence.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl", "--predictions", "{tmp}/p.jsonl",
          "--boot", "2"], "p.jsonl"),
        (["score", "{good}/evidence.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl", "--boot", "0"], "--boot"),
        (["score", "{good}/evidence.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl", "--split", "dev", "--boot", "2"],
         "no benchmark question has split 'dev'"),
        (["score", "{good}/evidence.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl", "--split", "validation"],
         "invalid choice: 'validation'"),
        (["score", "{good}/evidence.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl", "--boot", "many"],
         "invalid int value"),
        (["score-answers", "{tmp}/p.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl"], "p.jsonl"),
        (["export-trec", "{tmp}/nope.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl"], "nope.jsonl"),
        (["compare", "{good}/evidence.jsonl", "{tmp}/b.jsonl", "--benchmark", "{good}/benchmark_labelled.jsonl"], "b.jsonl"),
        (["labels", "--benchmark", "{tmp}/nope.jsonl", "--out", "{tmp}/l.tsv"], "nope.jsonl"),
        (["build-benchmark", "--kg", "{tmp}/nope.csv", "--out", "{tmp}/o"], "nope.csv"),
        (["sample", "--scale", "tiny", "--out", "{tmp}/precious"], "holds files tempbench did not write"),
        (["sample", "--scale", "tiny", "--out", "{tmp}/precious/tkgl-smallpedia_edgelist.csv"], "is an existing file"),
        (["build-benchmark", "--kg", "{good}/kg.csv", "--out", "{tmp}/o", "--target-n", "0"], "--target-n"),
        (["run", "--config", "oracle", "--kg", "{tmp}/nope.csv", "--benchmark", "{good}/benchmark_labelled.jsonl",
          "--out", "{tmp}/r.jsonl"], "nope.csv"),
        (["run", "--config", "oracle", "--split", "validation", *COMMON_RUN], "invalid choice: 'validation'"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_user_mistakes_exit_2_without_traceback(
    argv: list[str], fragment: str, in_tmp: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    precious = in_tmp / "precious"  # a user's data root: `sample --out` must not replace it
    precious.mkdir()
    (precious / "tkgl-smallpedia_edgelist.csv").write_text("ts,head,tail,relation_type\n", encoding="utf-8")
    argv = _expand(argv, in_tmp / "x", in_tmp)
    code, out, err = _main(argv, capsys)
    assert (precious / "tkgl-smallpedia_edgelist.csv").is_file()
    assert code == 2, err
    assert "Traceback" not in err + out
    assert "internal error" not in err
    assert fragment.replace("{tmp}", str(in_tmp)) in err, err


# ------------------------------------------------------------------- --debug


def _subprocess(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tempbench.cli", *args], capture_output=True, text=True,
                          check=False, cwd=cwd, env=_env())


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


BAD_INDEX = ["index", "--kg", str(BAD / "kg" / "nonint_year.csv"), "--labels", str(GOOD / "labels.tsv"),
             "--no-cache", "--no-harvest"]


def test_user_error_in_a_subprocess_is_clean(tmp_path: Path) -> None:
    proc = _subprocess(*BAD_INDEX, cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{BAD / 'kg' / 'nonint_year.csv'}:4: non-integer ts '20x1'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback_before_or_after_the_subcommand(where: str, tmp_path: Path) -> None:
    argv = ["--debug", *BAD_INDEX] if where == "before" else [*BAD_INDEX, "--debug"]
    proc = _subprocess(*argv, cwd=tmp_path)
    assert proc.returncode != 0
    assert "Traceback (most recent call last)" in proc.stderr
    assert "tempbench_core.errors.InputError" in proc.stderr
    assert "non-integer ts '20x1'" in proc.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_reraises_user_and_internal_errors_in_process(
    where: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tempbench_core.errors import InputError

    module = type(sys)("fake_hardening_cmd")
    module.add_arguments = lambda parser: parser.add_argument("--what", default="user")

    def run(args: object) -> int:
        if args.what == "user":
            raise InputError("x.csv", 3, "bad", "good")
        raise KeyError("bug")

    module.run = run
    monkeypatch.setitem(sys.modules, "fake_hardening_cmd", module)
    monkeypatch.setitem(cli.COMMANDS, "fakecmd", ("fake_hardening_cmd", "fake"))

    def argv(*rest: str) -> list[str]:
        return ["--debug", "fakecmd", *rest] if where == "before" else ["fakecmd", *rest, "--debug"]

    with pytest.raises(InputError):
        cli.main(argv())
    with pytest.raises(KeyError):
        cli.main(argv("--what", "bug"))
    # Without --debug: exit codes 2 and 1, no traceback.
    assert cli.main(["fakecmd"]) == 2
    assert cli.main(["fakecmd", "--what", "bug"]) == 1
    err = capsys.readouterr().err
    assert "x.csv:3: bad (expected good)" in err and "internal error: KeyError" in err
    assert "Traceback" not in err
