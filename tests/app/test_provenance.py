"""Provenance in every output (issue 24): the data's origin, the KG's sha256, the lock's digests, and a
recorded command line that reruns to the same bytes; verdicts by construction on data tempbench made."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest

from eval.audit.claims import load_claims
from eval.audit.context import AuditContext
from eval.audit.run import audit_document, run_audit
from tempbench.cli import main
from tempbench.sample import generate_sample
from tempbench_core.digest import sha256_file
from tempbench_core.layout import KG_FILE, LABELS_TSV, LOCK_FILE, find_inputs
from tempbench_core.lock import Lock, LockedFile, write_lock
from tempbench_core.provenance import (
    BUILD_GROUP,
    KG_CARD,
    RELEASE_QUESTIONS,
    detect_origin,
    kg_data_rows,
    make_provenance,
    render_command,
)

FILES = (KG_FILE, LABELS_TSV, "benchmark/benchmark_labelled.jsonl", "benchmark/benchmark.jsonl",
         "benchmark/functional_negatives.jsonl")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A tiny generated sample (the project's own generator)."""
    return generate_sample(tmp_path_factory.mktemp("tiny") / "root", scale="tiny", seed=7)


def _copy_root(source: Path, target: Path) -> Path:
    """The sample's files without its manifest: data tempbench did not say it made."""
    for rel in FILES:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / rel, target / rel)
    return target


def _lock_as_built(root: Path, entry: dict, wrong_sha_for: str | None = None) -> None:
    """A lock as build-benchmark writes it: its source entry and every file it wrote."""
    files = []
    for rel in FILES:
        path = root / rel
        digest = "0" * 64 if rel == wrong_sha_for else sha256_file(path)
        files.append(LockedFile(rel, path.stat().st_size, digest, str(root / KG_FILE), "", BUILD_GROUP))
    write_lock(Lock(root / LOCK_FILE).with_group(BUILD_GROUP, entry, files))


def test_a_generated_sample_is_generated_with_its_scale_and_seed(tiny):
    prov = make_provenance(find_inputs(tiny), command="tempbench audit")
    assert (prov.origin, prov.detail) == ("generated", {"scale": "tiny", "seed": 7})
    assert prov.kg == {"file": KG_FILE, "path": str(tiny / KG_FILE), "sha256": sha256_file(tiny / KG_FILE)}
    assert prov.data == str(tiny) and prov.lock == {} and prov.tool.startswith("tempbench-repro ")
    assert "scale tiny, seed 7" in prov.describe()


def test_a_built_root_is_read_from_its_lock(tiny, tmp_path):
    root = _copy_root(tiny, tmp_path / "built")
    kg_sha = sha256_file(root / KG_FILE)
    entry = {"kg": {"file": "events.csv", "sha256": kg_sha}, "labels": None, "seed": 5, "target_n": 300,
             "tool": "tempbench 0.1.0", "extra": "ignored"}
    _lock_as_built(root, entry)
    origin, detail = detect_origin(find_inputs(root))
    assert origin == "built"
    assert detail == {"kg": {"file": "events.csv", "sha256": kg_sha}, "labels": None, "seed": 5, "target_n": 300,
                      "tool": "tempbench 0.1.0"}
    prov = make_provenance(find_inputs(root))
    assert set(prov.lock) == set(FILES) and {e["state"] for e in prov.lock.values()} == {"ok"}
    assert "from the KG events.csv" in prov.describe() and "seed 5" in prov.describe()


def test_a_built_lock_without_its_optional_fields_is_still_built(tiny, tmp_path):
    root = _copy_root(tiny, tmp_path / "built")
    _lock_as_built(root, {"kg": {"file": KG_FILE}})
    assert detect_origin(find_inputs(root)) == ("built", {"kg": {"file": KG_FILE}})


def test_data_of_no_stated_origin_is_unknown_and_names_its_kg(tiny, tmp_path):
    root = _copy_root(tiny, tmp_path / "mine")
    prov = make_provenance(find_inputs(root))
    assert (prov.origin, prov.detail) == ("unknown", {})
    assert prov.kg["sha256"] == sha256_file(root / KG_FILE) and KG_FILE in prov.describe()
    # a lock of another operation (a fetch) does not make the data built
    write_lock(Lock(root / LOCK_FILE).with_group("tgb", {"source": "https://example.org/x.zip"}, []))
    assert detect_origin(find_inputs(root))[0] == "unknown"


def test_the_release_is_recognised_by_its_counts(tmp_path):
    root = tmp_path / "release"
    (root / "benchmark").mkdir(parents=True)
    rows = KG_CARD["kg rows"]
    (root / KG_FILE).write_text("ts,head,tail,relation_type\n" + "1990,Q1,Q2,P1\n" * rows, encoding="utf-8")
    bench = root / "benchmark" / "benchmark_labelled.jsonl"
    bench.write_text('{"id": "q"}\n' * RELEASE_QUESTIONS, encoding="utf-8")
    assert kg_data_rows(root / KG_FILE) == rows
    assert detect_origin(find_inputs(root)) == ("release", {"release": "v1.0.1", "kg_rows": rows,
                                                            "questions": RELEASE_QUESTIONS})
    bench.write_text('{"id": "q"}\n' * (RELEASE_QUESTIONS - 1), encoding="utf-8")  # one question short
    assert detect_origin(find_inputs(root))[0] == "unknown"


def test_the_command_line_is_shell_quoted_and_parses_back():
    words = ["score", "/a b/run's.jsonl"]
    line = render_command(words, [("--split", None), ("--set", ["k=1", "t=$x"]), ("--force", True),
                                  ("--key", "auto"), ("--hidden", False)])
    assert shlex.split(line) == ["tempbench", *words, "--set", "k=1", "--set", "t=$x", "--force", "--key", "auto"]


def test_no_by_construction_claim_reads_ok_on_generated_data(tiny):
    claims, tolerances = load_claims()
    rows = run_audit(AuditContext(find_inputs(tiny)), claims, tolerances)
    constructed = {c.id for c in claims if "generated" in c.by_construction}
    assert {"split.all.interval_share", "leak.interval.rate", "leak.other.rate", "leak.text_year.share",
            "stale.valid_at_tquery", "stale.valid_at_tquery.share"} <= constructed
    for row in rows:
        if row["id"] in constructed:
            assert row["verdict"] in ("by-construction", "n/a"), row
        assert not (row["id"] in constructed and row["verdict"] == "OK")
    assert any(r["verdict"] == "by-construction" for r in rows)


def test_on_data_of_unknown_origin_the_verdicts_are_computed(tiny, tmp_path):
    root = _copy_root(tiny, tmp_path / "mine")
    claims, tolerances = load_claims()
    ctx = AuditContext(find_inputs(root))
    rows = {r["id"]: r for r in run_audit(ctx, claims, tolerances)}
    assert rows["leak.interval.rate"]["verdict"] == "OK"  # nothing says tempbench made it
    doc = audit_document(ctx, list(rows.values()))
    assert doc["origin"] == "unknown" and doc["provenance"]["kg"]["sha256"] == sha256_file(root / KG_FILE)


def test_a_by_construction_origin_must_be_one_tempbench_makes(tmp_path):
    bad = tmp_path / "claims.toml"
    bad.write_text('[[claim]]\nid = "x"\nsection = "4"\ngroup = "g"\nwhat = "w"\npaper = 1.0\nkind = "rate"\n'
                   'compute = "leak_rate"\nparams = { operator = "interval" }\ncommand = "c"\n'
                   'by_construction = ["release"]\n', encoding="utf-8")
    with pytest.raises(Exception, match=r"has by_construction = \['release'\]"):
        load_claims(bad)


def _outputs(out: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.suffix != ".png":
            data = path.read_bytes()
            if path.name.endswith(".meta.json"):
                meta = json.loads(data)
                meta.pop("timings")
                meta.pop("workers")  # not recorded: the outputs are the same for any number
                data = json.dumps(meta).encode()
            files[str(path.relative_to(out))] = data
    return files


def test_reproduce_on_a_built_root_records_a_command_that_reruns_to_the_same_bytes(tiny, tmp_path, monkeypatch,
                                                                                     capsys):
    root = _copy_root(tiny, tmp_path / "built")
    kg_sha = sha256_file(root / KG_FILE)
    _lock_as_built(root, {"kg": {"file": "events.csv", "sha256": kg_sha}, "labels": None, "seed": 5,
                          "target_n": 300, "tool": "tempbench 0.1.0"}, wrong_sha_for=LABELS_TSV)
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    assert main(["reproduce", "--data", "../built", "--out", "out", "--boot", "20", "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "audit of the card's claims (SPEC §4) on a benchmark built by tempbench build-benchmark" in err
    out = tmp_path / "here" / "out"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "## Provenance" in report and "`built`" in report and kg_sha in report
    assert f"| `{LABELS_TSV}` |" in report and "CHANGED since the lock" in report
    assert f"`{sha256_file(root / KG_FILE)[:12]}`" in report  # the lock's digest, short in the table
    audit = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    assert audit["provenance"]["lock"][LABELS_TSV]["state"] == "changed"
    assert audit["provenance"]["lock"][KG_FILE]["sha256"] == kg_sha  # in full in the JSON
    assert "OK" not in {r["verdict"] for r in audit["claims"] if r["id"].startswith(("leak.", "split."))}
    meta = json.loads((out / "runs" / "oracle.meta.json").read_text(encoding="utf-8"))
    assert all(Path(v["path"]).is_absolute() for v in meta["inputs"].values() if v)
    score = json.loads((out / "scores" / "oracle.json").read_text(encoding="utf-8"))
    command = score["provenance"]["command"]
    assert command == meta["provenance"]["command"] == audit["provenance"]["command"]
    words = shlex.split(command)
    assert words[:2] == ["tempbench", "reproduce"] and "--workers" not in words
    assert words[words.index("--data") + 1] == str(root) and words[words.index("--out") + 1] == str(out)
    assert words[words.index("--boot") + 1] == "20" and words[words.index("--split") + 1] == "test"
    first = _outputs(out)
    shutil.move(out, tmp_path / "first")
    monkeypatch.chdir(tmp_path)  # from another folder: the recorded paths are absolute
    assert main(words[1:]) == 0
    assert _outputs(out) == first


def test_run_and_score_record_absolute_paths_and_a_command_that_reruns(tiny, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(tiny, work / "data")
    monkeypatch.chdir(work)
    assert main(["run", "--config", "oracle", "--set", "k=5", "--data", "data", "--out", "oracle.jsonl"]) == 0
    meta = json.loads((work / "oracle.meta.json").read_text(encoding="utf-8"))
    assert meta["inputs"]["kg"]["path"] == str(work / "data" / KG_FILE)
    run_words = shlex.split(meta["provenance"]["command"])
    assert run_words[:6] == ["tempbench", "run", "--config", "oracle", "--set", "k=5"]
    assert meta["provenance"]["origin"] == "generated"
    assert main(["score", "oracle.jsonl", "--data", "data", "--json", "score.json", "--boot", "30"]) == 0
    capsys.readouterr()
    first = (work / "score.json").read_bytes()
    command = json.loads(first)["provenance"]["command"]
    words = shlex.split(command)
    assert words[:3] == ["tempbench", "score", str(work / "oracle.jsonl")] and "--kg" not in words
    assert words[words.index("--json") + 1] == str(work / "score.json")
    (work / "score.json").rename(work / "first.json")
    monkeypatch.chdir(tmp_path)
    assert main(words[1:]) == 0
    assert (work / "score.json").read_bytes() == first


@pytest.mark.parametrize("command", [
    ["diff", "oracle.jsonl", "oracle.jsonl", "--data", "data", "--json", "out.json"],
    ["explain", "oracle.jsonl", "--data", "data", "--json", "out.json"],
    ["check", "--data", "data", "--json", "out.json", "--config", "oracle"],
    ["compare", "oracle.jsonl", "oracle.jsonl", "--data", "data", "--json", "out.json", "--boot", "20", "--perm", "20"],
])
def test_every_json_of_a_command_records_a_command_that_reruns(tiny, tmp_path, monkeypatch, capsys, command):
    """diff, explain, check and compare: the data's origin and a command line that writes the same bytes again."""
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(tiny, work / "data")
    monkeypatch.chdir(work)
    assert main(["run", "--config", "oracle", "--data", "data", "--out", "oracle.jsonl"]) == 0
    assert main(command) in (0, 2)  # check exits 2 on an error finding, and still writes its JSON
    capsys.readouterr()
    first = (work / "out.json").read_bytes()
    provenance = json.loads(first)["provenance"]
    assert provenance["origin"] == "generated"
    words = shlex.split(provenance["command"])
    assert words[:2] == ["tempbench", command[0]]
    assert words[words.index("--json") + 1] == str(work / "out.json")
    (work / "out.json").rename(work / "first.json")
    monkeypatch.chdir(tmp_path)
    main(words[1:])
    capsys.readouterr()
    assert (work / "out.json").read_bytes() == first


def test_export_trec_writes_its_provenance_beside_the_trec_files(tiny, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(tiny, work / "data")
    monkeypatch.chdir(work)
    assert main(["run", "--config", "oracle", "--data", "data", "--out", "oracle.jsonl"]) == 0
    assert main(["export-trec", "oracle.jsonl", "--data", "data", "--out", "trec"]) == 0
    capsys.readouterr()
    doc = json.loads((work / "trec" / "export.meta.json").read_text(encoding="utf-8"))
    assert doc["files"] == ["qrels.txt", "oracle.trec"] and doc["provenance"]["origin"] == "generated"
    first = {name: (work / "trec" / name).read_bytes() for name in ("qrels.txt", "oracle.trec", "export.meta.json")}
    for name in first:
        (work / "trec" / name).unlink()
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(doc["provenance"]["command"])[1:]) == 0
    assert {name: (work / "trec" / name).read_bytes() for name in first} == first


def test_a_generated_root_read_with_a_kg_from_elsewhere_is_of_unknown_origin(tiny, tmp_path):
    """The manifest vouches for the root's own files only: a --kg from another folder is not what was generated."""
    other = tmp_path / "kg.csv"
    shutil.copyfile(tiny / KG_FILE, other)
    with open(other, "a", encoding="utf-8") as handle:
        handle.write("2001,Q1,Q2,P1\n")
    assert make_provenance(find_inputs(tiny)).origin == "generated"
    mixed = make_provenance(find_inputs(tiny, kg=other))
    assert mixed.origin == "unknown" and mixed.kg["path"] == str(other)
