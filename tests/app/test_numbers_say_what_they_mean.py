"""Numbers and messages that say what they mean (issue 26, item 4).

``compare --holm`` says when no row can reach 0.05 and which ``--perm`` can;
``diff --sweep`` names the keys without effect and the reproducing group's
members, and lists no metric row whose delta rounds to 0.000; a key given twice
to ``--set`` is an error; ``export-trec`` writes into a folder of tempbench's own
outputs; SPEC §6.1.1 and the README name the same run forms, the reader's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from eval.diff import differing_metrics, metrics_agreement
from eval.paired import holm_reach
from eval.sweep import keys_without_effect
from retriever import load_config
from tempbench.cli import main
from tempbench_core.outputs import LEDGER, claim_output_dir, owning_ledger
from tempbench_core.runfile import EVIDENCE_FIELDS, ID_FIELDS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def runs(small_sample, tmp_path_factory):
    """The oracle run, a run that differs in tie_break only, and the nonoracle run, on the small sample."""
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for name, argv in (("oracle", ["--config", "oracle"]), ("pool_order", ["--config", "oracle", "--set", "tie_break=pool_order"]),
                       ("nonoracle", ["--config", "nonoracle"])):
        out[name] = root / f"{name}.jsonl"
        assert main(["run", *argv, "--data", str(small_sample), "--out", str(out[name])]) == 0
    return out


# -- compare --holm ---------------------------------------------------------------------------

def test_holm_reach_is_exact():
    # m / (P + 1) <= 0.05 exactly when P + 1 >= 20 m
    for m in (1, 3, 7, 60):
        need = holm_reach(m, 10)["perm_needed"]
        assert need == 20 * m - 1
        assert holm_reach(m, need)["reachable"] and not holm_reach(m, need - 1)["reachable"]
        assert holm_reach(m, need)["smallest"] == pytest.approx(0.05)


def test_compare_holm_says_when_no_row_can_be_significant(runs, small_sample, tmp_path, capsys):
    capsys.readouterr()
    out = tmp_path / "cmp.json"
    assert main(["compare", str(runs["oracle"]), str(runs["nonoracle"]), "--data", str(small_sample), "--holm",
                 "--boot", "20", "--perm", "200", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    result = json.loads(out.read_text(encoding="utf-8"))
    m = int(re.search(r"Holm over all (\d+) reported rows", result["correction"]).group(1))
    assert m * 20 > 201  # this family is too large for 200 permutations
    assert result["holm_reach"] == {"smallest": m / 201, "reachable": False, "perm_needed": 20 * m - 1, "alpha": 0.05}
    assert f"Holm over all {m} reported rows; with 200 permutations the smallest p is 1/(200 + 1)" in err
    assert f"no row can be significant at 0.05; --perm {20 * m - 1:,} (or more) can" in err
    # every adjusted p is indeed at least m / (P + 1)
    tests = [t for t in result["overall"].values() if isinstance(t, dict) and t["p_holm"] is not None]
    assert tests and min(t["p_holm"] for t in tests) >= min(1.0, m / 201) - 1e-12


# -- diff --sweep -----------------------------------------------------------------------------

def test_keys_without_effect_by_hand():
    base = load_config("oracle")
    keys = ["tie_break", "query_includes_t_query", "cap_scope"]
    variants = [{}, {"query_includes_t_query": True}, {"tie_break": "pool_order"},
                {"tie_break": "pool_order", "query_includes_t_query": True}]
    # tie_break changes the evidence, query_includes_t_query does not; cap_scope is not varied at all
    assert keys_without_effect(base, keys, variants, [0, 0, 1, 1]) == ["query_includes_t_query"]
    assert keys_without_effect(base, keys, variants, [0, 1, 2, 3]) == []
    # one pair that differs is enough to give a key an effect
    assert keys_without_effect(base, keys, variants, [0, 0, 1, 2]) == []


def test_metric_rows_that_round_to_zero_do_not_differ():
    rows = [{"slice": "all", "metric": "TRP", "run": 0.1, "baseline": 0.1, "delta": 0.0},
            {"slice": "all", "metric": "CCR", "run": 0.5004, "baseline": 0.5, "delta": 0.0004},
            {"slice": "1hop", "metric": "CCR", "run": 0.5006, "baseline": 0.5, "delta": 0.0006},
            {"slice": "2hop", "metric": "CCR", "run": None, "baseline": 0.5, "delta": None}]
    assert [r["slice"] + r["metric"] for r in differing_metrics(rows)] == ["1hopCCR", "2hopCCR"]
    assert metrics_agreement(rows[:2]) == "all 2 (slice, metric) values equal to 3 decimals"
    assert metrics_agreement(rows[:1]) == "all 1 (slice, metric) values equal"


def test_diff_sweep_names_keys_without_effect_and_the_group(runs, small_sample, tmp_path, capsys):
    capsys.readouterr()
    out = tmp_path / "diff.json"
    assert main(["diff", str(runs["oracle"]), str(runs["pool_order"]), "--data", str(small_sample), "--sweep",
                 "--keys", "query_includes_t_query,tie_break", "--show", "0", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    sweep = json.loads(out.read_text(encoding="utf-8"))["sweep"]
    assert sweep["reproduced"] and sweep["rows"][0]["changes"] == {"tie_break": "pool_order"}
    assert sweep["no_effect"] == ["query_includes_t_query"] and sweep["no_effect_combinations"] == 2
    assert "query_includes_t_query: no effect here" in captured.err and "tie_break: no effect" not in captured.err
    assert ("its group, 2 variants with identical evidence: tie_break='pool_order', whatever the value of "
            "query_includes_t_query") in captured.err
    # the metric table lists only rows that differ at 3 decimals
    result = json.loads(out.read_text(encoding="utf-8"))
    shown = re.search(r"metric deltas \(run - baseline\): (\d+) of (\d+) differ", captured.out)
    if shown:
        assert int(shown.group(1)) == len(differing_metrics(result["metrics"]))
        for line in captured.out.splitlines():
            assert not re.search(r"\|\s+-?0\.000 \|$", line), line


# -- --set twice ------------------------------------------------------------------------------

def test_a_key_set_twice_is_an_error(small_sample, tmp_path, capsys):
    capsys.readouterr()
    assert main(["run", "--config", "oracle", "--set", "k=5", "--set", "k=7", "--data", str(small_sample),
                 "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "--set k=5 --set k=7: the key 'k' is given 2 times; give each key once" in err and "Traceback" not in err
    assert not (tmp_path / "x.jsonl").exists() and not (tmp_path / "x.meta.json").exists()


# -- export-trec into tempbench's own folders --------------------------------------------------

def test_export_trec_writes_into_a_folder_of_our_outputs(runs, small_sample, tmp_path, capsys):
    out = tmp_path / "tempbench-out"
    claim_output_dir(out, "outputs")
    (out / "runs").mkdir()
    run = out / "runs" / "oracle.jsonl"
    run.write_bytes(runs["oracle"].read_bytes())
    (out / "runs" / "oracle.meta.json").write_bytes(runs["oracle"].with_suffix(".meta.json").read_bytes())
    capsys.readouterr()
    assert main(["export-trec", str(run), "--data", str(small_sample), "--out", str(out / "runs")]) == 0
    assert (out / "runs" / "qrels.txt").is_file() and (out / "runs" / "oracle.trec").is_file()
    assert not (out / "runs" / LEDGER).exists()  # the folder above covers it
    assert owning_ledger(out / "runs") == (out.resolve(), "outputs")
    assert "did not write" not in capsys.readouterr().err


def test_a_folder_inside_a_data_root_or_without_ledger_is_still_refused(runs, small_sample, tmp_path, capsys):
    root = tmp_path / "data"
    claim_output_dir(root, "data-root")
    (root / "benchmark").mkdir()
    (root / "benchmark" / "benchmark.jsonl").write_text("{}\n", encoding="utf-8")
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "mine.txt").write_text("x\n", encoding="utf-8")
    for folder, why in ((root / "benchmark", "a tempbench folder of another kind (data-root)"),
                        (notes, f"no tempbench ledger ({LEDGER}) in it or in a folder above it")):
        capsys.readouterr()
        assert main(["export-trec", str(runs["oracle"]), "--data", str(small_sample), "--out", str(folder)]) == 2
        err = capsys.readouterr().err
        assert "holds files tempbench did not write" in err and why in err
        assert not (folder / "qrels.txt").exists()


# -- the run forms, in SPEC §6.1.1 and the README ----------------------------------------------

def _section(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0]


def test_spec_and_readme_name_the_same_run_forms():
    spec = _section((REPO / "docs" / "specification.md").read_text(encoding="utf-8"), "#### 6.1.1", "### 6.2")
    readme = _section((REPO / "README.md").read_text(encoding="utf-8"), "Every command that reads a run", "\n\n")
    for text in (spec, readme):
        flat = " ".join(text.split())
        for command in ("score", "compare", "export-trec", "diff", "explain", "show", "audit --runs"):
            assert f"`{command}`" in flat, command
        for key in (*ID_FIELDS, *EVIDENCE_FIELDS):
            assert f"`{key}`" in flat or f"/`{key}`" in flat or f"`{key}`/" in flat, key
        assert "[s, r, o, t_start, t_end]" in flat and "s | r | o | t" in flat and "single `t`" in flat
        assert "JSON list" in flat and "§1.4" in flat
    assert "wider still" not in spec  # no form is read by one command only
