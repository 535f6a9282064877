"""``tempbench repro`` (SPEC §8) equals ``repro_eval`` 0.5.0 where both define the same figure.

Runs: the four shipped configurations on the small sample's test split, as the
*original* made with a non-default decision option (``cap_counts =
unique_triples``, which changes the stale-blind run), and as the *reproduced*
with the defaults and some questions dropped (empty retrievals). Then:

- KTU and RBO: ``repro_eval`` on our own TREC exports of both folders
  (``tempbench export-trec``), per question, against the command's figures;
- RMSE, nRMSE, the paired t-test, ER and ΔRI: ``repro_eval`` on per-question
  values from the slow references of ``tests/reference/eval.py`` (never from
  ``eval/``), against the command's JSON, at 1e-9;
- bad input: exit 2 with a message saying what was expected.
"""

from __future__ import annotations

import gzip
import json
import math
import shlex
import warnings
from pathlib import Path

import pytest
from reference.eval import published_score, slow_rank

from eval.scoring import evaluate
from eval.trec import question_runs, run_documents
from retriever import Retriever, load_benchmark, load_config
from tempbench.cli import main
from tempbench.data import resolve_data
from tempbench_core.runfile import read_run, write_run

with warnings.catch_warnings():  # repro_eval imports scipy.stats.stats, deprecated
    warnings.simplefilter("ignore", DeprecationWarning)
    from repro_eval.measure.document_order import KTU, RBO
    from repro_eval.measure.effectiveness import RMSE, nRMSE
    from repro_eval.measure.overall_effects import DRI, ER
    from repro_eval.measure.statistics import ttest
    from repro_eval.util import load_run

CONFIGS = ("oracle", "nonoracle", "stale_blind", "hop3_k25")
MEASURES = ("TRP", "CCR", "recall@15", "ndcg@15", "mrr")
TOL = {"rel": 1e-9, "abs": 1e-9}


@pytest.fixture(scope="module")
def folders(small_sample: Path, small_index, tmp_path_factory) -> dict:
    """``orig/`` (cap_counts=unique_triples) and ``rep/`` (defaults, some questions dropped) of the four configurations."""
    paths = resolve_data(data=small_sample)
    questions = load_benchmark(paths.benchmark, paths.benchmark_ids)
    test = [q for q in questions if q["split"] == "test"]
    root = tmp_path_factory.mktemp("repro")
    for side in ("orig", "rep"):
        (root / side).mkdir()
    for name in CONFIGS:
        orig = Retriever(small_index, load_config(name, ["cap_counts=unique_triples"]))
        rep = Retriever(small_index, load_config(name))
        write_run(root / "orig" / f"{name}.jsonl", (orig.retrieve(q) for q in test))
        # dropped questions: absent from the reproduced run, so empty retrievals there
        drop = {"oracle": 7, "stale_blind": 5}.get(name)
        write_run(root / "rep" / f"{name}.jsonl", (rep.retrieve(q) for i, q in enumerate(test) if not drop or i % drop))
    return {"root": root, "questions": questions, "data": small_sample}


def _repro(folders: dict, *extra: str) -> dict:
    out = folders["root"] / ("repro" + "".join(e.strip("-").replace("=", "_") for e in extra) + ".json")
    code = main(["repro", str(folders["root"] / "orig"), str(folders["root"] / "rep"), "--data", str(folders["data"]),
                 "--workers", "1", "--json", str(out), *extra])
    assert code == 0
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def result(folders: dict) -> dict:
    return _repro(folders)


@pytest.fixture(scope="module")
def trec(folders: dict) -> dict:
    """Our TREC exports of both folders (one shared qrels), read back by repro_eval's reader."""
    root = folders["root"]
    runs = [str(root / side / f"{n}.jsonl") for side in ("orig", "rep") for n in CONFIGS]
    out = {}
    for side in ("orig", "rep"):
        target = root / f"trec-{side}"
        files = [r for r in runs if f"/{side}/" in r]
        assert main(["export-trec", *files, "--split", "test", "--out", str(target), "--data", str(folders["data"])]) == 0
        out[side] = {n: load_run(str(target / f"{n}.trec")) for n in CONFIGS}
    return out


def _qids(folders: dict) -> list:
    """The questions compared: every question present in any run, in benchmark order (SPEC §8)."""
    present = set()
    for side in ("orig", "rep"):
        for n in CONFIGS:
            present |= set(read_run(folders["root"] / side / f"{n}.jsonl"))
    return [q["id"] for q in folders["questions"] if q["id"] in present]


def _slow_values(folders: dict, side: str, name: str, trp_empty: str = "zero") -> dict[str, dict]:
    """measure -> {qid: value} from the slow references (a question a measure does not evaluate is absent)."""
    run = read_run(folders["root"] / side / f"{name}.jsonl")
    by_id = {q["id"]: q for q in folders["questions"]}
    out: dict[str, dict] = {m: {} for m in MEASURES}
    for qid in _qids(folders):
        evidence = (run.get(qid) or {}).get("evidence", [])
        row = published_score(by_id[qid], evidence)
        if row["trp"] is not None or trp_empty == "zero":
            out["TRP"][qid] = row["trp"] or 0.0
        out["CCR"][qid] = float(row["ccr"])
        rank = slow_rank(by_id[qid], evidence)
        if rank is not None:
            for m in ("recall@15", "ndcg@15", "mrr"):
                out[m][qid] = rank[m]
    return out


def _one(values: dict, qids) -> dict:
    return {qid: {"m": values[qid]} for qid in qids}


def _pair(a: dict, b: dict) -> tuple[dict, dict]:
    """Both runs of a difference on the questions where both have a value (repro_eval pairs topics by id)."""
    both = [q for q in a if q in b]
    return _one(a, both), _one(b, both)


# ---------------------------------------------------------------- the JSON object
def test_json_has_exactly_the_issue_keys(result: dict) -> None:
    assert list(result) == ["baseline", "measures", "questions", "configs", "effects"]
    assert result["baseline"] == "oracle" and result["measures"] == list(MEASURES)
    assert list(result["configs"]) == list(CONFIGS)
    for c in result["configs"].values():
        assert list(c) == ["ktu", "rbo", "rmse", "nrmse", "p_value", "mean", "tie_sensitive"]
        assert list(c["mean"]) == ["original", "reproduced"]
        for key in ("rmse", "nrmse", "p_value", "tie_sensitive"):
            assert list(c[key]) == list(MEASURES)
    assert list(result["effects"]) == ["nonoracle", "stale_blind", "hop3_k25"]
    assert all(list(e) == ["er", "delta_ri"] for e in result["effects"].values())
    json.dumps(result, allow_nan=False)  # strict JSON


def test_provenance_beside_the_json_reruns_to_the_same_bytes(folders: dict, tmp_path: Path, monkeypatch) -> None:
    """``OUT.meta.json``: the data's origin and a command line that writes the same JSON again, from any folder."""
    out = tmp_path / "first.json"
    assert main(["repro", str(folders["root"] / "orig"), str(folders["root"] / "rep"), "--data", str(folders["data"]),
                 "--workers", "1", "--rbo-p", "0.9", "--json", str(out)]) == 0
    provenance = json.loads((tmp_path / "first.meta.json").read_text(encoding="utf-8"))["provenance"]
    assert provenance["origin"] == "generated" and provenance["data"] == str(Path(folders["data"]).resolve())
    words = shlex.split(provenance["command"])
    assert words[:2] == ["tempbench", "repro"] and "--rbo-p" in words and Path(words[2]).is_absolute()
    first = out.read_bytes()
    out.unlink()
    monkeypatch.chdir(tmp_path.parent)
    assert main(words[1:]) == 0
    assert out.read_bytes() == first


def test_gzip_runs_in_a_folder_are_runs(folders: dict, result: dict, tmp_path: Path) -> None:
    """``<config>.jsonl.gz`` is configuration ``<config>``'s run, read as the plain file is."""
    packed = tmp_path / "packed"
    packed.mkdir()
    for name in CONFIGS:
        (packed / f"{name}.jsonl.gz").write_bytes(gzip.compress((folders["root"] / "rep" / f"{name}.jsonl").read_bytes()))
    out = tmp_path / "gz.json"
    assert main(["repro", str(folders["root"] / "orig"), str(packed), "--data", str(folders["data"]), "--workers", "1",
                 "--json", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8")) == result


def test_measure_keys_as_given(folders: dict) -> None:
    res = _repro(folders, "--measures", "R@15,nDCG@15,TRP")
    assert res["measures"] == ["R@15", "nDCG@15", "TRP"]
    assert list(res["configs"]["oracle"]["rmse"]) == ["R@15", "nDCG@15", "TRP"]


# ---------------------------------------------------------------- document order: repro_eval on our TREC exports
def _trimmed(orig: dict, rep: dict, topics) -> tuple[dict, dict]:
    """Both runs on ``topics``, each question cut to the shorter list (SPEC §8's KTU)."""
    o, r = {}, {}
    for t in topics:
        n = min(len(orig[t]), len(rep[t]))
        o[t] = dict(list(orig[t].items())[:n])
        r[t] = dict(list(rep[t].items())[:n])
    return o, r


def test_ktu_equals_repro_eval_on_trec_exports(result: dict, trec: dict) -> None:
    for name in CONFIGS:
        orig, rep = trec["orig"][name], trec["rep"][name]
        common = [t for t in orig if t in rep and min(len(orig[t]), len(rep[t])) >= 2]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            per_topic = KTU(*_trimmed(orig, rep, common), per_topic=True)
        expected = math.fsum(per_topic.values()) / len(per_topic)
        assert result["configs"][name]["ktu"] == pytest.approx(expected, **TOL), name


def test_rbo_equals_repro_eval_on_trec_exports(result: dict, trec: dict) -> None:
    for name in CONFIGS:
        orig, rep = trec["orig"][name], trec["rep"][name]
        common = [t for t in orig if t in rep]
        per_topic = RBO({t: orig[t] for t in common}, {t: rep[t] for t in common}, p=0.95, depth=1000,
                        pbar=False, per_topic=True)
        one_empty = len(set(orig) ^ set(rep))  # RBO 0 (repro_eval cannot take an empty list)
        expected = math.fsum(per_topic.values()) / (len(per_topic) + one_empty)
        assert result["configs"][name]["rbo"] == pytest.approx(expected, **TOL), name


def test_rbo_options_equal_repro_eval(folders: dict, trec: dict) -> None:
    res = _repro(folders, "--rbo-p", "0.8", "--rbo-depth", "10")
    orig, rep = trec["orig"]["stale_blind"], trec["rep"]["stale_blind"]
    common = [t for t in orig if t in rep]
    per_topic = RBO({t: orig[t] for t in common}, {t: rep[t] for t in common}, p=0.8, depth=10, pbar=False,
                    per_topic=True)
    expected = math.fsum(per_topic.values()) / (len(per_topic) + len(set(orig) ^ set(rep)))
    assert res["configs"]["stale_blind"]["rbo"] == pytest.approx(expected, **TOL)


def test_the_runs_differ_where_the_option_and_the_drops_say(result: dict) -> None:
    # cap_counts=unique_triples changes the stale-blind run; dropped questions change oracle and stale_blind
    assert result["configs"]["stale_blind"]["rmse"]["CCR"] > 0
    assert result["configs"]["oracle"]["rmse"]["CCR"] > 0
    assert result["configs"]["nonoracle"]["rmse"] == dict.fromkeys(MEASURES, 0.0)
    assert result["configs"]["nonoracle"]["p_value"] == dict.fromkeys(MEASURES, 1.0)


# ---------------------------------------------------------------- effectiveness and effects: repro_eval on slow values
@pytest.mark.parametrize("trp_empty", ["zero", "skip"])
def test_effectiveness_equals_repro_eval_on_slow_references(folders: dict, result: dict, trp_empty: str) -> None:
    res = result if trp_empty == "zero" else _repro(folders, "--trp-empty", "skip")
    for name in CONFIGS:
        orig, rep = _slow_values(folders, "orig", name, trp_empty), _slow_values(folders, "rep", name, trp_empty)
        c = res["configs"][name]
        for m in MEASURES:
            both = [q for q in orig[m] if q in rep[m]]
            o, r = _one(orig[m], both), _one(rep[m], both)
            assert c["rmse"][m] == pytest.approx(RMSE(o, r)["m"], **TOL), (name, m)
            assert c["nrmse"][m] == pytest.approx(nRMSE(o, r)["m"], **TOL), (name, m)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p = ttest(o, r)["m"]
            assert c["p_value"][m] == pytest.approx(p, **TOL), (name, m)
            assert c["mean"]["original"][m] == pytest.approx(math.fsum(orig[m][q] for q in both) / len(both), **TOL)
            assert c["mean"]["reproduced"][m] == pytest.approx(math.fsum(rep[m][q] for q in both) / len(both), **TOL)


@pytest.mark.parametrize("trp_empty", ["zero", "skip"])
def test_effects_equal_repro_eval_on_slow_references(folders: dict, result: dict, trp_empty: str) -> None:
    res = result if trp_empty == "zero" else _repro(folders, "--trp-empty", "skip")
    values = {(side, n): _slow_values(folders, side, n, trp_empty) for side in ("orig", "rep") for n in CONFIGS}
    for name in ("nonoracle", "stale_blind", "hop3_k25"):
        e = res["effects"][name]
        for m in MEASURES:
            (oa, ob), (ra, rb) = (_pair(values[(side, name)][m], values[(side, "oracle")][m]) for side in ("orig", "rep"))
            assert e["er"][m] == pytest.approx(ER(oa, ob, ra, rb)["m"], **TOL), (name, m)
            own = {side_n: {q: {"m": v} for q, v in values[side_n][m].items()} for side_n in values}
            expected = DRI(own[("orig", name)], own[("orig", "oracle")], own[("rep", name)], own[("rep", "oracle")])["m"]
            assert e["delta_ri"][m] == pytest.approx(expected, **TOL), (name, m)


# ---------------------------------------------------------------- document ids: the fast path is the export's
def test_fast_document_ids_equal_the_trec_export_rules(folders: dict) -> None:
    for side in ("orig", "rep"):
        run = read_run(folders["root"] / side / "stale_blind.jsonl")
        table = evaluate(run, folders["questions"], None).table
        assert run_documents(table, "id") == [written.docs for _, written in question_runs(table, "id")]


# ---------------------------------------------------------------- tie sensitivity
def test_tie_sensitive_follows_the_tie_range(folders: dict, result: dict) -> None:
    # identical runs: the original's mean is our observed mean, inside [min, max]
    assert result["configs"]["nonoracle"]["tie_sensitive"] == dict.fromkeys(MEASURES, True)
    res = _repro(folders, "--measures", "coverage,CCR")
    assert all(c["tie_sensitive"]["coverage"] is False for c in res["configs"].values())


# ---------------------------------------------------------------- terminal output
def test_tables_and_readings(folders: dict, capsys) -> None:
    assert main(["repro", str(folders["root"] / "orig"), str(folders["root"] / "rep"), "--data",
                 str(folders["data"]), "--workers", "1"]) == 0
    out = capsys.readouterr().out
    for text in ("document order", "effectiveness", "overall effects", "KTU (Kendall's tau Union", "RBO if identical",
                 "nRMSE (0..1)", "p-value (paired", "ER (effect ratio)", "ΔRI", "tie-sensitive"):
        assert text in out, text


def test_undefined_effects_are_null_and_na(folders: dict, tmp_path: Path, capsys) -> None:
    # the original's ablation is the baseline itself: no effect, so ER is undefined
    for side in ("orig", "rep"):
        (tmp_path / side).mkdir()
        for name in ("oracle", "stale_blind"):
            src = folders["root"] / side / f"{name}.jsonl"
            (tmp_path / side / f"{name}.jsonl").write_bytes(src.read_bytes())
    (tmp_path / "orig" / "copy.jsonl").write_bytes((folders["root"] / "orig" / "oracle.jsonl").read_bytes())
    (tmp_path / "rep" / "copy.jsonl").write_bytes((folders["root"] / "rep" / "stale_blind.jsonl").read_bytes())
    out = tmp_path / "r.json"
    assert main(["repro", str(tmp_path / "orig"), str(tmp_path / "rep"), "--data", str(folders["data"]), "--workers",
                 "1", "--json", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["effects"]["copy"]["er"] == dict.fromkeys(MEASURES)
    assert "n/a (original shows no effect)" in capsys.readouterr().out
    assert "Infinity" not in out.read_text() and "NaN" not in out.read_text()


# ---------------------------------------------------------------- bad input: exit 2, saying what was expected
def _fails(capsys, *argv: str) -> str:
    assert main(["repro", *argv]) == 2
    return capsys.readouterr().err


def test_no_configuration_in_common(folders: dict, tmp_path: Path, capsys) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "mine.jsonl").write_bytes((folders["root"] / "rep" / "oracle.jsonl").read_bytes())
    err = _fails(capsys, str(folders["root"] / "orig"), str(tmp_path / "other"), "--data", str(folders["data"]))
    assert "no configuration in common" in err and "expected files <config>.jsonl" in err


def test_baseline_missing_on_one_side(folders: dict, tmp_path: Path, capsys) -> None:
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "stale_blind.jsonl").write_bytes((folders["root"] / "rep" / "stale_blind.jsonl").read_bytes())
    err = _fails(capsys, str(folders["root"] / "orig"), str(tmp_path / "rep"), "--data", str(folders["data"]))
    assert "baseline configuration 'oracle' has no run in REPRODUCED" in err and "expected oracle.jsonl" in err
    err = _fails(capsys, str(folders["root"] / "orig"), str(folders["root"] / "rep"), "--baseline", "nope",
                 "--data", str(folders["data"]))
    assert "--baseline NAME" in err


def test_unknown_measure(folders: dict, capsys) -> None:
    err = _fails(capsys, str(folders["root"] / "orig"), str(folders["root"] / "rep"), "--measures", "TRP,bogus@3")
    assert "unknown measure 'bogus@3'" in err and "recall@15" in err
    err = _fails(capsys, str(folders["root"] / "orig"), str(folders["root"] / "rep"), "--measures", "TRP_micro")
    assert "no per-question value" in err


def test_runs_on_other_data(folders: dict, tmp_path: Path, capsys) -> None:
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "oracle.jsonl").write_bytes((folders["root"] / "rep" / "oracle.jsonl").read_bytes())
    meta = {"inputs": {"benchmark": {"path": "elsewhere/benchmark_labelled.jsonl", "sha256": "0" * 64}}}
    (tmp_path / "rep" / "oracle.meta.json").write_text(json.dumps(meta))
    err = _fails(capsys, str(folders["root"] / "orig"), str(tmp_path / "rep"), "--data", str(folders["data"]))
    assert "made on other data" in err
    (tmp_path / "rep" / "oracle.meta.json").unlink()
    (tmp_path / "rep" / "oracle.jsonl").write_text('{"id": "not-a-question", "evidence": []}\n')
    err = _fails(capsys, str(folders["root"] / "orig"), str(tmp_path / "rep"), "--data", str(folders["data"]))
    assert "not in the benchmark" in err and "oracle.jsonl:1" in err


def test_bad_folders_and_options(folders: dict, tmp_path: Path, capsys) -> None:
    err = _fails(capsys, str(tmp_path / "missing"), str(folders["root"] / "rep"))
    assert "missing not found" in err and "expected a folder of per-question runs" in err
    (tmp_path / "a_file").write_text("", encoding="utf-8")
    err = _fails(capsys, str(tmp_path / "a_file"), str(folders["root"] / "rep"))
    assert "a_file is not a directory" in err and "expected a folder of per-question runs" in err
    err = _fails(capsys, str(folders["root"] / "orig"), str(folders["root"] / "rep"), "--rbo-p", "1.5")
    assert "strictly between 0 and 1" in err
    err = _fails(capsys, str(folders["root"] / "orig"), str(folders["root"] / "rep"), "--rbo-depth", "0")
    assert "integer >= 1" in err


def test_malformed_run_in_a_worker(folders: dict, tmp_path: Path, capsys) -> None:
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "oracle.jsonl").write_text('{"id": "q", "evidence": [}\n')
    err = _fails(capsys, str(folders["root"] / "orig"), str(tmp_path / "rep"), "--data", str(folders["data"]),
                 "--workers", "2")
    assert "oracle.jsonl:1" in err


def test_an_empty_run_file_is_empty_retrievals_and_said_so(folders: dict, tmp_path: Path, capsys) -> None:
    (tmp_path / "rep").mkdir()
    (tmp_path / "rep" / "oracle.jsonl").write_bytes((folders["root"] / "rep" / "oracle.jsonl").read_bytes())
    (tmp_path / "rep" / "stale_blind.jsonl").write_bytes(b"")
    out = tmp_path / "r.json"
    assert main(["repro", str(folders["root"] / "orig"), str(tmp_path / "rep"), "--data", str(folders["data"]),
                 "--workers", "1", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert "stale_blind.jsonl is empty: every question counts as an empty retrieval of 'stale_blind'" in err
    assert "oracle.jsonl is empty" not in err
    res = json.loads(out.read_text())
    assert res["configs"]["stale_blind"]["mean"]["reproduced"] == dict.fromkeys(MEASURES, 0.0)
