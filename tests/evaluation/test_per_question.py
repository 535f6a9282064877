"""Per-question results (issue 26, item 5): the table's means are the score's, its stages are ``explain``'s.

Also the README's pandas snippet, run as written, and the Python API's overrides
(item 6), which must equal ``--set``.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from eval.attribution import attribute_run
from eval.explain import STAGES, Explainer
from eval.per_question import (
    BASE_COLUMNS,
    STAGE_COLUMNS,
    columns,
    frame_of,
    per_question_frame,
    per_question_rows,
    write_per_question_csv,
)
from eval.scoring import to_json
from retriever import load_config
from tempbench.cli import main
from tempbench_core.errors import ConfigError, MissingDataError

REPO = Path(__file__).resolve().parents[2]


def _mean(values):
    kept = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(kept) / len(kept) if kept else None


def test_rows_average_to_the_score(oracle_evaluation):
    ev = oracle_evaluation
    rows = per_question_rows(ev)
    score = to_json(ev, n_boot=1)
    assert [r["id"] for r in rows] == [r["id"] for r in ev.rows]
    assert list(rows[0]) == columns(ev) and columns(ev)[: len(BASE_COLUMNS)] == list(BASE_COLUMNS)
    assert _mean([r["TRP"] for r in rows]) == pytest.approx(score["trp_ccr"]["TRP_macro"])
    assert _mean([r["CCR"] for r in rows]) == pytest.approx(score["trp_ccr"]["CCR"])
    assert sum(r["hits"] for r in rows) / sum(r["n_ret"] for r in rows) == pytest.approx(score["trp_ccr"]["TRP_micro"])
    for name, value in score["rank"].items():
        assert _mean([r[name] for r in rows]) == pytest.approx(value), name
    for value, sliced in score["trp_ccr"]["by_complexity"].items():
        mine = [r for r in rows if r["complexity"] == value]
        assert len(mine) == sliced["n"] and _mean([r["CCR"] for r in mine]) == pytest.approx(sliced["CCR"])
    # no stages given: the stage columns are there, empty
    assert all(r[c] is None for r in rows for c in STAGE_COLUMNS)
    assert {r["split"] for r in rows} == {"test"}


def test_stage_columns_are_the_attribution(oracle_run, oracle_evaluation, small_index):
    questions, _, run = oracle_run
    stages = attribute_run(Explainer(small_index, load_config("oracle")), run, questions)["questions"]
    rows = per_question_rows(oracle_evaluation, stages)
    assert STAGE_COLUMNS == ("stages", *(f"stage_{s}" for s in STAGES))  # one column per SPEC §7 stage
    for row in rows:
        hops = stages[row["id"]]
        assert row["stages"] == "|".join(hops)
        assert [row[f"stage_{s}"] for s in STAGES] == [hops.count(s) for s in STAGES]
        # retrieved hops are the distinct gold hits: CCR is 1 exactly when every hop is retrieved
        assert row["CCR"] == (1 if hops and row["stage_retrieved"] == len(hops) else 0)


def test_csv_reads_back_as_the_frame(oracle_evaluation, tmp_path):
    ev = oracle_evaluation
    stages = {r["id"]: ["retrieved"] * r["n_gold"] for r in ev.rows[:5]}  # known for some questions only
    path = write_per_question_csv(tmp_path / "pq.csv", ev, stages)
    again = write_per_question_csv(tmp_path / "pq2.csv", ev, stages)
    assert path.read_bytes() == again.read_bytes()
    frame = frame_of(ev, stages)
    read = pd.read_csv(path, keep_default_na=True)
    assert list(read.columns) == list(frame.columns) == columns(ev)
    assert len(read) == len(frame) == len(ev.rows)
    for name in ("TRP", "CCR", "ndcg@10", "mrr", "n_ret", "hits"):
        pd.testing.assert_series_equal(read[name].astype("float64"), frame[name].astype("float64"), check_names=False)
    assert frame["stage_retrieved"].isna().sum() == len(ev.rows) - 5 and str(frame["stage_retrieved"].dtype) == "Int64"
    assert frame["TRP"].dtype == "float64"


def test_score_per_question_cli_with_and_without_stages(small_sample, tmp_path, capsys):
    run = tmp_path / "hop3.jsonl"
    assert main(["run", "--config", "hop3_k25", "--data", str(small_sample), "--out", str(run)]) == 0
    capsys.readouterr()
    out = tmp_path / "pq.csv"
    assert main(["score", str(run), "--data", str(small_sample), "--boot", "10", "--per-question", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"wrote {out}: 300 questions" in err and "left empty" not in err
    explained = tmp_path / "explain.json"
    assert main(["explain", str(run), "--data", str(small_sample), "--json", str(explained)]) == 0
    stages = json.loads(explained.read_text(encoding="utf-8"))["questions"]
    table = pd.read_csv(out, dtype={"id": str, "stages": str})
    assert dict(zip(table["id"], table["stages"], strict=True)) == {q: "|".join(s) for q, s in stages.items()}

    bare = tmp_path / "bare.jsonl"  # evidence without metadata: the stages cannot be known
    bare.write_bytes(run.read_bytes())
    capsys.readouterr()
    assert main(["score", str(bare), "--data", str(small_sample), "--boot", "10", "--per-question",
                 str(tmp_path / "bare.csv")]) == 0
    assert f"stage columns left empty: {bare} has no .meta.json with its configuration" in capsys.readouterr().err
    assert pd.read_csv(tmp_path / "bare.csv")["stages"].isna().all()
    # an output over an input is refused, as for --json
    assert main(["score", str(run), "--data", str(small_sample), "--per-question", str(run)]) == 2


def _readme_block(containing: str) -> str:
    blocks = re.findall(r"^```python\n(.*?)^```", (REPO / "README.md").read_text(encoding="utf-8"), re.S | re.M)
    found = [b for b in blocks if containing in b]
    assert len(found) == 1, f"README.md has {len(found)} python blocks with {containing!r}"
    return found[0]


def test_readme_pandas_snippet_runs_as_written(small_sample, tmp_path, capsys):
    snippet = _readme_block("per_question_frame")
    assert len(snippet.strip().splitlines()) == 3 and ".groupby(" in snippet
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        # the default run file of `tempbench run --config oracle`, made on the default data
        assert main(["run", "--config", "oracle", "--data", str(small_sample)]) == 0
        capsys.readouterr()
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(snippet, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    lines = printed.getvalue().splitlines()
    assert lines[0].split() == ["TRP", "CCR", "ndcg@10"] and lines[1].split() == ["complexity"]
    by = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in lines[2:]}
    assert sorted(by) == ["1hop", "2hop", "3+hop"]
    scores = tmp_path / "s.json"
    assert main(["score", str(tmp_path / "tempbench-out" / "runs" / "oracle.jsonl"), "--data", str(small_sample),
                 "--boot", "10", "--json", str(scores)]) == 0
    sliced = json.loads(scores.read_text(encoding="utf-8"))["trp_ccr"]["by_complexity"]
    for value, (trp, ccr, _) in by.items():
        assert trp == pytest.approx(sliced[value]["TRP"], abs=5e-7) and ccr == pytest.approx(sliced[value]["CCR"], abs=5e-7)


def test_frame_needs_data_it_can_trust(oracle_run, tmp_path):
    _, _, run = oracle_run
    with pytest.raises(MissingDataError, match="give data="):
        per_question_frame(run)
    bare = tmp_path / "bare.jsonl"
    bare.write_text("", encoding="utf-8")
    with pytest.raises(MissingDataError, match="no .meta.json"):
        per_question_frame(bare)


# -- item 6: overrides from Python ---------------------------------------------------------------

def test_python_overrides_are_set_overrides():
    for settings, cli in (({"k": 5}, ["k=5"]), ({"temporal_filter": False, "k": 5}, ["temporal_filter=false", "k=5"]),
                          ({"caps": [60, 200]}, ["caps=[60,200]"]), ({"anchor": "linker"}, ["anchor=linker"]),
                          ({"caps": (1, 2, 3), "hops": 3}, ["caps=[1,2,3]", "hops=3"])):
        assert load_config("oracle", **settings).to_dict() == load_config("oracle", cli).to_dict(), settings
    assert load_config("oracle", k=5).name == "oracle+k=5"
    assert load_config("oracle", name="mine", k=3).name == "mine"
    assert load_config("oracle", ["k=5"], hops=3).to_dict() == load_config("oracle", ["k=5", "hops=3"]).to_dict()


@pytest.mark.parametrize(("settings", "message"), [
    ({"kk": 5}, "unknown config key 'kk' (did you mean 'k'?)"),
    ({"k": 0}, "config key 'k' has invalid value 0 (expected an integer >= 1)"),
    ({"anchor": "linkr"}, "did you mean 'linker'?"),
    ({"temporal_filter": "false"}, "config key 'temporal_filter' has invalid value 'false' (expected true or false)"),
])
def test_python_overrides_are_validated_like_set(settings, message):
    with pytest.raises(ConfigError) as info:
        load_config("oracle", **settings)
    assert message in str(info.value)


def test_a_key_in_both_overrides_and_settings_is_given_twice():
    with pytest.raises(ConfigError, match="the key 'k' is given 2 times"):
        load_config("oracle", ["k=5"], k=7)


def test_readme_api_snippet_runs_and_prints_what_it_says(small_sample):
    """The README's Python API block, run as written on the default data: each print gives its comment."""
    snippet = _readme_block('load_config("oracle", k=5')
    assert "--set k=5 --set temporal_filter=false" in snippet
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(snippet, "README.md", "exec"), {})
    promised = [line.split("#", 1)[1].strip() for line in snippet.splitlines() if line.startswith("print(")]
    assert printed.getvalue().splitlines() == promised
