"""Issue 25, classes 6-8 and its "Also" list, through the real CLI.

6. Labels, question texts and file names with ESC, BEL, C1 controls, bidi
   overrides or line breaks never reach the terminal raw (``show``, ``check``,
   ``reproduce``, error messages), never add a line, a heading, a row or a cell
   to ``report.md``, and a run name cannot hold one.
7. Numbers that numpy or the renderer cannot use (a negative seed, a
   billion-wide template field, zero permutations) are exit 2 with a message.
8. A published value no metric can have is an ``error`` in ``check``, marked
   ``invalid`` in the report and the diff, never a number; no JSON written
   holds ``NaN``/``Infinity``.
Also: a lone surrogate in any JSON input is an input error naming the file and
the place; an over-long ``ts`` is "out of range", with the range.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from reference.tiny import good_root

from tempbench import cli

#: Characters that drive a terminal or reshape a line: C0 (but the line feed), DEL, C1,
#: separators, bidi overrides and isolates, surrogates.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
NASTY = "\x1b]0;owned\x07\x1b[31mred\x1b[0m\x9b2J\u202eevil"


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit code, stdout, stderr of one in-process CLI call (argparse exits included)."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def _clean(*texts: str) -> None:
    for text in texts:
        found = RAW.search(text)
        assert found is None, f"raw {found.group()!r} in: {text[max(0, found.start() - 60):found.end() + 60]!r}"


def _no_constant(name: str) -> None:
    pytest.fail(f"{name} written: not JSON")


def _fails(argv: list[str], capsys, *expected: str) -> str:
    code, out, err = _main(argv, capsys)
    assert code == 2, (code, err)
    assert "Traceback" not in err and "internal error" not in err, err
    for text in expected:
        assert text in err, err
    _clean(out, err)
    return err


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    return good_root(tmp_path / "data")


def _edit_question(root: Path, **changes) -> None:
    path = root / "benchmark" / "benchmark_labelled.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record.update(changes)
    lines[0] = json.dumps(record)  # ASCII escapes: "\u001b", "\ud800"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ------------------------------------------------------------------ class 6: the terminal


def test_show_writes_labels_and_question_texts_escaped(root, capsys):
    labels = root / "labels.tsv"
    labels.write_text(labels.read_text(encoding="utf-8").replace("Beta", f"Be{NASTY}ta"), encoding="utf-8")
    _edit_question(root, question=f"Whom did Alpha {NASTY} know?\n# not a line", answer=f"Be{NASTY}ta")
    code, out, err = _main(["show", "q1", "--data", str(root)], capsys)
    assert code == 0, err
    _clean(out, err)
    assert "\\x1b]0;owned\\x07" in out and "\\x9b" in out and "\\u202e" in out  # shown, as escapes
    code, out, err = _main(["show", "q1", "--data", str(root), "--json"], capsys)
    assert code == 0, err
    _clean(out.replace("\n", ""), err)
    assert json.loads(out)["question"].startswith(f"Whom did Alpha {NASTY}")  # the same value, escaped as JSON


def test_check_and_error_messages_write_file_names_escaped(root, tmp_path, capsys):
    (root / "baselines").mkdir()
    (root / "baselines" / f"run{NASTY}\nfake line.jsonl").write_text('{"id": "q1", "evidence": []}\n', encoding="utf-8")
    code, out, err = _main(["check", "--data", str(root)], capsys)
    _clean(out, err)
    assert "run\\x1b]0;owned\\x07" in out
    missing = tmp_path / f"no{NASTY}\nsuch.jsonl"
    _fails(["score", str(missing), "--data", str(root)], capsys, "no\\x1b]0;owned\\x07", "\\nsuch.jsonl")
    _fails(["run", "--config", "oracle", f"stray{NASTY}"], capsys, "stray\\x1b")  # argparse quotes it too


@pytest.mark.parametrize("name", ['"a\\nb"', '"tab\\there"', '"esc\\u001b[2J"', '"bidi\\u202e"'])
def test_a_run_name_with_a_control_character_is_refused(root, tmp_path, capsys, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    _fails(["run", "--config", "oracle", "--set", f"name={name}", "--data", str(root)], capsys, "'name'", "printable")
    config = tmp_path / "mine.toml"
    config.write_text(f"name = {name}\n", encoding="utf-8")
    _fails(["run", "--config", str(config), "--data", str(root)], capsys, "'name'")
    assert not (tmp_path / "tempbench-out").exists() or not list((tmp_path / "tempbench-out").rglob("*.jsonl"))


# ------------------------------------------------ classes 6 and 8: report.md, diff/, check


def test_reproduce_keeps_the_report_s_shape_and_marks_impossible_numbers(root, tmp_path, capsys):
    baselines = root / "baselines"
    baselines.mkdir()
    table = "metric,slice,value\nTRP,all,nan\nCCR,all,inf\ncoverage,all,-0.25\nrecall@10,all,1.5\n"
    (baselines / "oracle_metrics.csv").write_text(table, encoding="utf-8")
    injected = "x\n# Injected heading\n| a | b |\n.csv"
    (baselines / injected).write_text(table, encoding="utf-8")
    (baselines / f"e`v|i``l{NASTY}.jsonl").write_text('{"id": "q1", "evidence": ["Alpha | knows | Beta | 2000"]}\n',
                                                     encoding="utf-8")
    json_table = {"TRP_macro": float("nan"), "CCR": 2.0, "coverage": 0.5, "n_questions": -3}
    (baselines / "oracle_scores.json").write_text(json.dumps(json_table), encoding="utf-8")  # NaN as json writes it

    code, out, err = _main(["check", "--data", str(root)], capsys)
    assert code == 2, err  # impossible published numbers are errors
    _clean(out, err)
    assert out.count("impossible value(s)") == 3 and "error" in out
    assert "TRP (all) = nan" in out and "coverage (all) = -0.25" in out and "n (all) = -3" in out

    out_dir = tmp_path / "out"
    code, out, err = _main(["reproduce", "--data", str(root), "--out", str(out_dir), "--workers", "1", "--boot", "5"], capsys)
    assert code == 0, err
    _clean(out, err)
    report = (out_dir / "report.md").read_text(encoding="utf-8")
    _clean(report.replace("\n", ""))
    assert "# Injected heading" not in report.splitlines()  # no new heading ...
    assert not any(line.startswith("| a | b |") for line in report.splitlines())  # ... nor a new row
    headings = [line for line in report.splitlines() if line.startswith("### ")]
    assert len(headings) == 4, headings  # one per baselines file, each one line
    for line in report.splitlines():  # every table row has its table's number of cells
        if line.startswith("|"):
            assert len(re.split(r"(?<!\\)\|", line)) - 2 in (2, 5, 6, 7, 9, 10, 12, 13, 14), line
    # the name's longest run of backticks is 2: its code spans are fenced by 3
    assert re.search(r"(?<!`)```e`v", report) and not re.search(r"(?<!`)``?e`v", report)
    assert re.search(r"\bnan\b|\binf\b", report.replace("= nan", "").replace("= inf", "").replace(": nan", "").replace(": inf", "")) is None
    assert "invalid: nan" in report and "invalid: inf" in report and "invalid: -0.25" in report
    assert "delta" in report and "±inf" not in report
    html = (out_dir / "report.html").read_text(encoding="utf-8")
    _clean(html.replace("\n", ""))
    assert "<h1" in html and html.count("Injected heading") == 1 and "<h1 id=\"injected" not in html
    for path in (out_dir / "diff").iterdir():
        _clean(path.name)  # the project's own file names hold no control character
    for path in out_dir.rglob("*.json"):  # every JSON written is strict: no NaN, no Infinity
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\b(NaN|-?Infinity)\b", text), path
        json.loads(text, parse_constant=_no_constant)


def test_diff_marks_an_impossible_value_and_writes_strict_json(root, tmp_path, capsys):
    run = tmp_path / "r.jsonl"
    assert _main(["run", "--config", "oracle", "--data", str(root), "--out", str(run)], capsys)[0] == 0
    table = tmp_path / "t.csv"
    table.write_text("metric,slice,value\nTRP,all,NaN\nCCR,all,-inf\ncoverage,all,1\n", encoding="utf-8")
    out_json = tmp_path / "d.json"
    code, out, err = _main(["diff", str(run), str(table), "--data", str(root), "--json", str(out_json)], capsys)
    assert code == 0, err
    assert "invalid: NaN" in out and "invalid: -inf" in out and "impossible" in err
    result = json.loads(out_json.read_text(encoding="utf-8"), parse_constant=lambda c: pytest.fail(c))
    bad = {m["metric"]: m for m in result["metrics"] if m.get("invalid")}
    assert set(bad) == {"TRP", "CCR"} and all(m["baseline"] is None and m["delta"] is None for m in bad.values())


def test_paper_numbers_no_claim_can_have_are_refused(root, tmp_path, capsys):
    shipped = Path(cli.__file__).resolve().parents[1] / "configs" / "paper_numbers.toml"
    text = shipped.read_text(encoding="utf-8")
    first_rate = re.search(r"^paper = 0\.\d+$", text, flags=re.M)
    assert first_rate
    for bad in ("nan", "inf", "-0.1", "1.5"):
        numbers = tmp_path / f"numbers-{bad}.toml"
        numbers.write_text(text[:first_rate.start()] + f"paper = {bad}" + text[first_rate.end():], encoding="utf-8")
        _fails(["audit", "--data", str(root), "--paper-numbers", str(numbers)], capsys, str(numbers), "paper")


# ------------------------------------------------------------------ class 7: crashes


@pytest.mark.parametrize("template", [
    "'{s!r:>99999999999}'", "'{s:.99999999999}'", "'{s:>{t_start}}'", "'{s.__class__}'", "'{s[0]}'", "'{t_start:c}'",
    "'{t_start:n}'", "'{}'", "'{s!a}'", '"{s}\\u001b[2J"', '"{s}\\n{r}"',
])
def test_a_template_that_cannot_render_every_line_is_refused(root, tmp_path, capsys, template):
    _fails(["run", "--config", "oracle", "--set", f"line_template={template}", "--data", str(root),
            "--out", str(tmp_path / "r.jsonl")], capsys, "line_template")
    assert not (tmp_path / "r.jsonl").exists()


def test_templates_that_render_still_run(root, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    code, _, err = _main(["run", "--config", "oracle", "--set", "line_template='{s!r:<12} {r:.20} {t_start:05d}'",
                          "--data", str(root), "--out", str(out)], capsys)
    assert code == 0, err
    line = json.loads(out.read_text(encoding="utf-8").splitlines()[0])["evidence"][0]["line"]
    assert line.startswith("'Alpha'      knows 02000") or line.startswith("'Alpha'")


@pytest.mark.parametrize(("argv", "option"), [
    (["sample", "--scale", "tiny", "--seed", "-1", "--out", "{tmp}/s"], "--seed"),
    (["score", "{run}", "--data", "{root}", "--seed", "-1"], "--seed"),
    (["score", "{run}", "--data", "{root}", "--boot", "10000000000"], "--boot"),
    (["score-answers", "{run}", "--data", "{root}", "--seed", "-2"], "--seed"),
    (["compare", "{run}", "{run}", "--data", "{root}", "--perm", "-1"], "--perm"),
    (["compare", "{run}", "{run}", "--data", "{root}", "--perm", "0"], "--perm"),
    (["compare", "{run}", "{run}", "--data", "{root}", "--seed", "-1"], "--seed"),
    (["diff", "{run}", "{run}", "--data", "{root}", "--show", "-1"], "--show"),
    (["run", "--config", "oracle", "--data", "{root}", "--out", "{tmp}/x.jsonl", "--workers", "100000"], "--workers"),
    (["build-benchmark", "--kg", "{root}/tkgl-smallpedia_edgelist.csv", "--out", "{tmp}/b", "--seed", "-1"], "--seed"),
    (["build-benchmark", "--kg", "{root}/tkgl-smallpedia_edgelist.csv", "--out", "{tmp}/b", "--target-n", "99999999999999"],
     "--target-n"),
    (["score", "{run}", "--data", "{root}", "--seed", "1" + "0" * 5000], "--seed"),
])
def test_numbers_numpy_cannot_use_are_usage_errors(root, tmp_path, capsys, argv, option):
    run = tmp_path / "r.jsonl"
    if not run.exists():
        assert _main(["run", "--config", "oracle", "--data", str(root), "--out", str(run)], capsys)[0] == 0
    argv = [a.format(tmp=tmp_path, root=root, run=run) for a in argv]
    _fails(argv, capsys, option)


def test_reproduce_refuses_thousands_of_workers_before_forking_any(tmp_path, capsys):
    # on a data root that does not exist: were the bound lost, the missing data would stop it
    # (and fail this test) before 5,000 processes are forked
    _fails(["reproduce", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "o"), "--workers", "5000"], capsys,
           "--workers", "1,024")


def test_the_builder_s_bound_is_the_option_s():
    from tempbench.commands._numbers import TARGET_N_RANGE
    from tempbench.sample.builder import MAX_TARGET_N

    assert TARGET_N_RANGE == (1, MAX_TARGET_N)


def test_the_library_refuses_them_too():
    from eval.bootstrap import count_matrix
    from tempbench.sample import generate_sample
    from tempbench.sample.builder import EdgeColumns, build_benchmark
    from tempbench_core.errors import ConfigError

    with pytest.raises(ConfigError, match="seed"):
        count_matrix(10, 5, seed=-1)
    with pytest.raises(ConfigError, match="at most"):
        count_matrix(10_000, 10**6)
    with pytest.raises(ConfigError, match="seed"):
        generate_sample(Path("/nonexistent/never-written"), scale="tiny", seed=-1)
    with pytest.raises(ConfigError, match="seed"):
        build_benchmark(EdgeColumns(*([[]] * 4), [], []), {}, seed=-1)


# ------------------------------------------------------------------ also


def test_a_lone_surrogate_in_labels_json_names_the_file_and_the_id(root, tmp_path, capsys):
    (root / "labels.tsv").unlink()
    (root / "labels.json").write_text('{"Q1": "Alpha", "Q2": "\\ud800 x"}', encoding="utf-8")
    _fails(["run", "--config", "oracle", "--data", str(root), "--out", str(tmp_path / "r.jsonl")], capsys,
           str(root / "labels.json"), "'Q2'", "\\ud800")
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(("field", "value", "where"), [
    ("question", "Whom did \ud800 know?", "'question'"),
    ("answer", "Be\udfffta", "'answer'"),
    ("S_dist", [{"s": "Alpha\ud800", "r": "knows", "o": "Gamma", "t_start": 2001, "t_end": 2001}], "'S_dist[0].s'"),
])
def test_a_lone_surrogate_in_the_benchmark_names_the_file_line_and_field(root, tmp_path, capsys, field, value, where):
    _edit_question(root, **{field: value})
    bench = root / "benchmark" / "benchmark_labelled.jsonl"
    for argv in (["run", "--config", "oracle", "--data", str(root), "--out", str(tmp_path / "r.jsonl")],
                 ["labels", "--data", str(root), "--out", str(tmp_path / "l.tsv")],
                 ["show", "q1", "--data", str(root)]):
        _fails(argv, capsys, f"{bench}:1", where, "lone surrogate")


def test_a_lone_surrogate_in_evidence_and_tables_is_an_input_error(root, tmp_path, capsys):
    evidence = tmp_path / "e.jsonl"
    evidence.write_text('{"id": "q1", "evidence": ["a \\udfff | b | c | 2000"]}\n', encoding="utf-8")
    _fails(["score", str(evidence), "--data", str(root)], capsys, f"{evidence}:1", "evidence[0]")
    whole = tmp_path / "e.json"
    whole.write_text('[{"id": "q1", "evidence": ["a \\udfff | b | c | 2000"]}]', encoding="utf-8")
    _fails(["score", str(whole), "--data", str(root)], capsys, str(whole), "lone surrogate")
    run = tmp_path / "r.jsonl"
    assert _main(["run", "--config", "oracle", "--data", str(root), "--out", str(run)], capsys)[0] == 0
    table = tmp_path / "t.json"
    table.write_text('{"TRP_macro": 0.1, "CCR": 0.2, "by_complexity": {"\\ud800": {"TRP": 0.1}}}', encoding="utf-8")
    _fails(["diff", str(run), str(table), "--data", str(root)], capsys, str(table), "lone surrogate")


@pytest.mark.parametrize("ts", ["9223372036854775807", "-9223372036854775808", "1" * 40])
def test_an_overlong_timestamp_is_out_of_range_not_non_integer(root, capsys, ts):
    kg = root / "tkgl-smallpedia_edgelist.csv"
    kg.write_text(kg.read_text(encoding="utf-8") + f"{ts},Q1,Q2,P1\n", encoding="utf-8")
    err = _fails(["index", "--data", str(root), "--no-cache"], capsys, f"{kg}:5", "out of range",
                 "999999999999999999 (18 digits)")
    assert "non-integer" not in err
