"""``tempbench check`` on the generated data and on roots made wrong on purpose (issue 13).

Each expected number is counted here independently (the csv module, plain
sets and dicts), never taken from the checker's own output.
"""

from __future__ import annotations

import csv
import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tempbench.check import check_data, gold_hops_in_kg
from tempbench.cli import main
from tempbench.sample import generate_sample
from tempbench_core.layout import MANIFEST, find_inputs

IDS = ("s_id", "r_id", "o_id")


def _codes(report, level=None):
    return [f.code for f in report.findings if level is None or f.level == level]


def _finding(report, code):
    hits = [f for f in report.findings if f.code == code]
    assert hits, f"no finding {code}: {[f.to_dict() for f in report.findings]}"
    return hits[0]


@pytest.fixture()
def root(small_sample, tmp_path) -> Path:
    """A copy of the generated sample; the manifest is dropped, so it reads as a user's root."""
    out = tmp_path / "root"
    shutil.copytree(small_sample, out)
    (out / MANIFEST).unlink()
    return out


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _slow_gold_hops(root: Path) -> tuple[int, int, int]:
    """(hops, at any year, at the year of t_query) with plain sets over the CSV rows."""
    rows = _rows(root / "tkgl-smallpedia_edgelist.csv")[1:]
    at = {(h, r, t, int(ts)) for ts, h, t, r in rows}
    anywhere = {(h, r, t) for ts, h, t, r in rows}
    total = any_year = valid = 0
    for q in _questions(root / "benchmark" / "benchmark.jsonl"):
        for hop in q["S_star"]:
            total += 1
            key = tuple(hop[k] for k in IDS)
            any_year += key in anywhere
            valid += float(q["t_query"]).is_integer() and (*key, int(q["t_query"])) in at
    return total, any_year, valid


def test_generated_data_pass_with_no_warning(small_sample, tmp_path, capsys):
    report = check_data(find_inputs(small_sample))
    assert report.ok and _codes(report, "warning") == [] and _codes(report, "error") == []
    assert report.generated and not report.looks_like_release
    assert _finding(report, "generated").level == "info"
    assert _finding(report, "release.verdict").level == "info"
    total, any_year, valid = _slow_gold_hops(small_sample)
    assert report.facts["gold_hops"] == {"hops": total, "by_id": total, "by_label": 0,
                                         "in_kg_any_year": any_year, "in_kg_valid_year": valid}
    manifest = json.loads((small_sample / MANIFEST).read_text())["counts"]
    counts = {c["quantity"]: c for c in report.counts}
    assert counts["kg rows"]["found"] == manifest["rows"] and counts["kg rows"]["card"] == 550_376
    assert counts["kg entities"]["card"] == 47_433 and counts["kg relations"]["card"] == 283
    assert counts["questions (all)"]["found"] == manifest["questions"] and counts["questions (all)"]["card"] == 8_710
    assert counts["questions (test)"]["card"] == 1_743 and counts["interval questions (all)"]["card"] == 864
    assert counts["functional stale (test)"]["card"] == 1_429
    out = tmp_path / "check.json"
    assert main(["check", "--data", str(small_sample), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["summary"]["warning"] == 0 and doc["summary"]["error"] == 0
    assert all(set(f) >= {"level", "file", "message"} for f in doc["findings"])
    assert "does not look like the release v1.0.1" in capsys.readouterr().err


def test_looks_like_release_when_every_count_matches(small_sample):
    base = check_data(find_inputs(small_sample))
    card = {c["quantity"]: c["found"] for c in base.counts}
    report = check_data(find_inputs(small_sample), card=card)
    assert report.looks_like_release
    assert "looks like the release v1.0.1" in _finding(report, "release.verdict").message


def test_user_root_with_other_counts_warns_per_file(root):
    report = check_data(find_inputs(root))
    files = sorted(f.file for f in report.findings if f.code == "release.counts")
    assert files == ["benchmark/benchmark_labelled.jsonl", "benchmark/functional_negatives.jsonl",
                     "tkgl-smallpedia_edgelist.csv"]
    assert report.ok  # warnings only: exit 0
    assert main(["check", "--data", str(root)]) == 0


def test_kg_without_some_gold_hops(root):
    kg_path = root / "tkgl-smallpedia_edgelist.csv"
    questions = _questions(root / "benchmark" / "benchmark.jsonl")
    drop = {(q["S_star"][0]["s_id"], q["S_star"][0]["r_id"], q["S_star"][0]["o_id"], str(int(q["t_query"])))
            for q in questions[::4]}
    rows = _rows(kg_path)
    kept = [rows[0]] + [r for r in rows[1:] if (r[1], r[3], r[2], r[0]) not in drop]
    assert len(kept) < len(rows)
    with kg_path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, lineterminator="\n").writerows(kept)
    total, any_year, valid = _slow_gold_hops(root)
    assert valid / total < 0.99
    report = check_data(find_inputs(root))
    finding = _finding(report, "kg.gold_hops")
    assert finding.level == "warning" and finding.file == "tkgl-smallpedia_edgelist.csv"
    assert f"{valid:,} of {total:,} gold hops" in finding.message and "another version" in finding.message
    assert report.facts["gold_hops"]["in_kg_valid_year"] == valid
    assert report.facts["gold_hops"]["in_kg_any_year"] == any_year


def test_half_the_labels_gone(root):
    labels = root / "labels.tsv"
    lines = labels.read_text(encoding="utf-8").splitlines()
    kept = [lines[0]] + lines[1::2]
    labels.write_text("\n".join(kept) + "\n", encoding="utf-8")
    labelled = {line.split("\t", 1)[0] for line in kept[1:] if line.split("\t", 1)[1]}
    # harvested: the twin's id and the labelled triple's text at the same place, when the
    # text is a real label (the benchmark itself writes an unlabelled id as the raw id)
    harvested = {ti[k] for ql, qi in zip(_questions(root / "benchmark" / "benchmark_labelled.jsonl"),
                                         _questions(root / "benchmark" / "benchmark.jsonl"), strict=True)
                 for lst in ("S_star", "S_dist", "S_stale") for tl, ti in zip(ql[lst], qi[lst], strict=True)
                 for k, lk in zip(IDS, ("s", "r", "o"), strict=True) if tl[lk] and tl[lk] != ti[k]}
    entities = {e for r in _rows(root / "tkgl-smallpedia_edgelist.csv")[1:] for e in (r[1], r[2])}
    raw = len(entities - labelled - harvested)
    report = check_data(find_inputs(root))
    finding = _finding(report, "labels.coverage")
    assert finding.level == "warning" and finding.file == "labels.tsv"
    assert report.facts["labels"]["entities_raw"] == raw
    assert f"{raw:,} of {len(entities):,} KG entities" in finding.message


def test_foreign_kg(root, tmp_path):
    other = generate_sample(tmp_path / "other", scale="tiny", seed=7)
    shutil.copy(other / "tkgl-smallpedia_edgelist.csv", root / "tkgl-smallpedia_edgelist.csv")
    report = check_data(find_inputs(root))
    gold = _finding(report, "kg.gold_hops")
    assert gold.level == "warning" and "foreign KG" in gold.message
    _, any_year, valid = _slow_gold_hops(root)
    assert report.facts["gold_hops"]["in_kg_valid_year"] == valid and valid == 0 == any_year
    assert _finding(report, "anchors.unresolved").level == "warning"
    assert report.ok


def test_baselines_recognised_and_not(root, small_sample):
    base = root / "baselines"
    base.mkdir()
    qs = _questions(root / "benchmark" / "benchmark_labelled.jsonl")[:3]
    (base / "stale_blind_outputs.jsonl").write_text(
        "".join(json.dumps({"qid": q["id"], "retrieved": ["a | b | c | 1990"]}) + "\n" for q in qs), encoding="utf-8")
    (base / "junk.jsonl").write_text(json.dumps({"foo": 1, "bar": [1]}) + "\n", encoding="utf-8")
    (base / "notes.txt").write_text("hello\n", encoding="utf-8")
    (base / "metrics.json").write_text(json.dumps({"n_questions": 3, "coverage": 1.0, "TRP_macro": 0.3,
                                                   "TRP_micro": 0.2, "CCR": 0.1}), encoding="utf-8")
    report = check_data(find_inputs(root))
    by_file = {f.file: f for f in report.findings if f.code.startswith("baselines.")}
    assert by_file["baselines/junk.jsonl"].level == "warning" and by_file["baselines/junk.jsonl"].code == "baselines.unrecognised"
    assert "foo" in by_file["baselines/junk.jsonl"].message
    rec = by_file["baselines/stale_blind_outputs.jsonl"]
    assert rec.level == "info" and "3 records" in rec.message and "stale_blind run" in rec.message and "'qid'" in rec.message
    assert by_file["baselines/notes.txt"].code == "baselines.ignored"
    assert by_file["baselines/metrics.json"].code == "baselines.recognised"
    assert "baselines.missing" not in _codes(report)


def test_missing_files(root, tmp_path, capsys):
    (root / "benchmark" / "functional_negatives.jsonl").unlink()
    (root / "benchmark" / "benchmark.jsonl").unlink()
    report = check_data(find_inputs(root))
    assert _finding(report, "flags.missing").level == "warning"
    assert _finding(report, "benchmark_ids.missing").level == "warning"
    counts = {c["quantity"]: c["found"] for c in report.counts}
    assert counts["functional stale (test)"] is None
    (root / "tkgl-smallpedia_edgelist.csv").unlink()
    out = tmp_path / "c.json"
    assert main(["check", "--data", str(root), "--json", str(out)]) == 2
    doc = json.loads(out.read_text())
    errors = [f for f in doc["findings"] if f["level"] == "error"]
    assert [f["file"] for f in errors] == ["tkgl-smallpedia_edgelist.csv"] and "tempbench fetch tgb" in errors[0]["message"]
    assert "Traceback" not in capsys.readouterr().err


def test_unreadable_file_is_an_error(root):
    with (root / "benchmark" / "benchmark_labelled.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "broken", ')
    report = check_data(find_inputs(root))
    error = _finding(report, "benchmark.unreadable")
    assert error.level == "error" and error.file == "benchmark/benchmark_labelled.jsonl" and "truncated" in error.message


def test_partial_id_twin(root):
    ids = root / "benchmark" / "benchmark.jsonl"
    lines = ids.read_text(encoding="utf-8").splitlines()
    ids.write_text("\n".join(lines[::2]) + "\n", encoding="utf-8")
    missing = len(lines) - len(lines[::2])
    report = check_data(find_inputs(root))
    finding = _finding(report, "benchmark_ids.partial")
    assert finding.level == "warning" and finding.message.startswith(f"{missing:,} of {len(lines):,} questions")
    assert report.facts["benchmark"]["oracle_by_label"] == missing
    assert report.facts["oracle_anchors"]["by_label"] + report.facts["oracle_anchors"]["label_not_found"] == missing
    # the label-space hops are still found in the KG, by label
    assert report.facts["gold_hops"]["by_label"] > 0


def test_triples_without_ids_in_twin(root):
    ids = root / "benchmark" / "benchmark.jsonl"
    qs = _questions(ids)
    for q in qs[:5]:
        del q["S_dist"][0]["o_id"]
    ids.write_text("".join(json.dumps(q) + "\n" for q in qs), encoding="utf-8")
    finding = _finding(check_data(find_inputs(root)), "benchmark_ids.triples_without_ids")
    assert finding.level == "warning" and finding.message.startswith("5 of ")


def test_header_by_position_and_header_that_is_data(root):
    kg = root / "tkgl-smallpedia_edgelist.csv"
    text = kg.read_text(encoding="utf-8").split("\n", 1)[1]
    kg.write_text("year,subject,object,property\n" + text, encoding="utf-8")
    report = check_data(find_inputs(root))
    assert _finding(report, "kg.header_by_position").level == "info"
    assert _codes(report, "error") == [] and "kg.gold_hops" in _codes(report, "info")
    kg.write_text(text, encoding="utf-8")  # no header at all: line 1 is a data row
    report = check_data(find_inputs(root))
    assert _finding(report, "kg.header_is_data").level == "warning"
    assert report.facts["kg"]["read_by_position"] is True


def test_gzipped_root_reads_the_same(root, tmp_path):
    plain = check_data(find_inputs(root))
    gz = tmp_path / "gz"
    for path in sorted(root.rglob("*")):
        if path.is_file():
            target = gz / (path.relative_to(root).as_posix() + ".gz")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    report = check_data(find_inputs(gz))
    assert report.counts == plain.counts and report.facts["gold_hops"] == plain.facts["gold_hops"]
    assert report.facts["labels"] == plain.facts["labels"]
    assert {f["role"]: f["form"] for f in report.files if f["found"]} == {
        "kg": "csv.gz", "labels": "tsv.gz", "benchmark": "jsonl.gz", "benchmark_ids": "jsonl.gz", "flags": "jsonl.gz"}
    assert sorted(_codes(report, "warning")) == sorted(_codes(plain, "warning"))


def test_flags_of_another_version(root):
    flags = root / "benchmark" / "functional_negatives.jsonl"
    lines = flags.read_text(encoding="utf-8").splitlines()
    extra = json.dumps({"id": "zz-not-a-question", "stale_functional": True, "dist_functional": False})
    flags.write_text("\n".join(lines[1:] + [extra]) + "\n", encoding="utf-8")
    report = check_data(find_inputs(root))
    assert _finding(report, "flags.unknown_ids").level == "warning"
    assert _finding(report, "flags.incomplete").message.startswith("1 of ")


def test_gold_hops_in_kg_matches_brute_force():
    rng = np.random.default_rng(3)
    n = 400
    kg = [rng.integers(0, 6, n), rng.integers(0, 3, n), rng.integers(0, 6, n)]
    year = rng.integers(1990, 1996, n)
    m = 300
    hops = [rng.integers(-1, 7, m), rng.integers(-1, 4, m), rng.integers(-1, 7, m)]
    hop_year = rng.integers(1985, 2000, m)
    any_year, valid = gold_hops_in_kg(tuple(kg), year, tuple(hops), hop_year)
    rows = list(zip(*(c.tolist() for c in kg), year.tolist(), strict=True))
    for i in range(m):
        s, r, o, y = (int(hops[0][i]), int(hops[1][i]), int(hops[2][i]), int(hop_year[i]))
        assert any_year[i] == any(row[:3] == (s, r, o) for row in rows)
        assert valid[i] == ((s, r, o, y) in rows)
