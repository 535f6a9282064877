"""Every command that reads a run reads every baseline form of SPEC §1.4, with the same result (issue 11 §1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tempbench.cli import main
from tempbench_core.runfile import read_run


@pytest.fixture(scope="module")
def oracle_run(small_sample, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("forms") / "oracle.jsonl"
    assert main(["run", "--config", "oracle", "--data", str(small_sample), "--out", str(out)]) == 0
    return out


def _forms(run: Path, where: Path) -> dict[str, Path]:
    records = list(read_run(run).values())
    forms = {
        # question id and evidence under other keys, items as id-space dicts
        "qid_retrieved_ids": [{"qid": r["id"], "retrieved": [{k: it[k] for k in ("s_id", "r_id", "o_id", "t_start", "t_end")}
                                                           for it in r["evidence"]]} for r in records],
        # label-space dicts with a single time field
        "question_id_triples_t": [{"question_id": r["id"], "triples": [{"s": it["s"], "r": it["r"], "o": it["o"],
                                                                        "t": str(it["t_start"])} for it in r["evidence"]]}
                                  for r in records],
        # 5-lists in the id space
        "context_5lists": [{"id": r["id"], "context": [[it["s_id"], it["r_id"], it["o_id"], it["t_start"], it["t_end"]]
                                                       for it in r["evidence"]]} for r in records],
        # rendered evidence lines
        "lines": [{"id": r["id"], "evidence": [it["line"] for it in r["evidence"]]} for r in records],
    }
    paths = {}
    for name, recs in forms.items():
        path = where / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        paths[name] = path
    # one JSON document holding a list of records
    doc = where / "document.json"
    doc.write_text(json.dumps(forms["qid_retrieved_ids"]), encoding="utf-8")
    paths["document"] = doc
    return paths


def _score(path: Path, data: Path, out: Path, *extra: str) -> dict:
    assert main(["score", str(path), "--data", str(data), "--json", str(out), "--boot", "10", *extra]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


#: Forms that carry labels only: their twin is the run file matched on labels (homonyms differ from ids).
LABEL_FORMS = {"question_id_triples_t", "lines"}


def test_a_baseline_scores_like_its_run_file_twin(oracle_run, small_sample, tmp_path, capsys):
    on_ids = _score(oracle_run, small_sample, tmp_path / "ids.json")
    on_labels = _score(oracle_run, small_sample, tmp_path / "labels.json", "--key", "label")
    for name, path in _forms(oracle_run, tmp_path).items():
        got = _score(path, small_sample, tmp_path / f"{name}.score.json")
        twin = on_labels if name in LABEL_FORMS else on_ids
        for key in ("trp_ccr", "coverage", "rank", "negatives"):  # no scores in these forms: no tie groups
            assert got[key] == twin[key], (name, key)
    capsys.readouterr()


def test_compare_explain_and_export_read_baseline_forms(oracle_run, small_sample, tmp_path, capsys):
    forms = _forms(oracle_run, tmp_path)
    assert main(["compare", str(oracle_run), str(forms["qid_retrieved_ids"]), "--data", str(small_sample),
                 "--boot", "10", "--perm", "10"]) == 0
    assert main(["export-trec", str(forms["context_5lists"]), "--data", str(small_sample),
                 "--out", str(tmp_path / "trec")]) == 0
    assert (tmp_path / "trec" / "qrels.txt").is_file()
    capsys.readouterr()
