"""``tempbench build-benchmark`` writes a complete data root (issue 24 item 4), and ``check``'s hints fit its origin.

The KG is a generated tiny sample's, copied under a name of the user's choosing,
so the root is made only of what ``build-benchmark`` put there. Expected values
(sizes, digests, inode numbers) are read from the files here, never from the
command's own report.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from tempbench.cli import main
from tempbench_core.layout import BENCHMARK_IDS, BENCHMARK_LABELLED, FLAGS_FILE, KG_FILE, LOCK_FILE, MANIFEST
from tempbench_core.lock import Lock, LockedFile, read_lock, write_lock
from tempbench_core.version import __version__

BENCH = (BENCHMARK_LABELLED, BENCHMARK_IDS, FLAGS_FILE)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("tiny")
    assert main(["sample", "--scale", "tiny", "--seed", "3", "--out", str(src / "sample")]) == 0
    return src / "sample"


@pytest.fixture()
def user(tiny, tmp_path) -> Path:
    """The user's folder: a KG and labels under their own names, nothing else."""
    home = tmp_path / "icews"
    home.mkdir()
    shutil.copy(tiny / KG_FILE, home / "icews-2005-15.csv")
    shutil.copy(tiny / "labels.tsv", home / "names.tsv")
    return home


def _build(kg: Path, out: Path, labels: Path | None = None, *extra: str) -> int:
    argv = ["build-benchmark", "--kg", str(kg), "--out", str(out), "--target-n", "60", "--seed", "7", *extra]
    return main(argv + (["--labels", str(labels)] if labels is not None else []))


def test_a_new_folder_becomes_a_data_root_check_and_reproduce_take_as_it_is(user, tmp_path, capsys):
    kg, labels, out = user / "icews-2005-15.csv", user / "names.tsv", tmp_path / "root"
    kg_bytes, labels_bytes = kg.read_bytes(), labels.read_bytes()
    assert _build(kg, out, labels) == 0
    # hard links: the same file, not a copy; the user's files untouched and still there
    assert os.path.samefile(out / KG_FILE, kg) and os.path.samefile(out / "labels.tsv", labels)
    assert kg.read_bytes() == kg_bytes and labels.read_bytes() == labels_bytes
    lock = json.loads((out / LOCK_FILE).read_text(encoding="utf-8"))
    files = lock["files"]
    assert sorted(files) == sorted([KG_FILE, "labels.tsv", *BENCH])
    for rel, entry in files.items():
        assert entry["bytes"] == (out / rel).stat().st_size and entry["sha256"] == _sha(out / rel)
        assert entry["group"] == "build-benchmark"
    assert files[KG_FILE]["source"] == str(kg.resolve()) and files["labels.tsv"]["source"] == str(labels.resolve())
    build = lock["sources"]["build-benchmark"]
    questions = len((out / BENCHMARK_LABELLED).read_text(encoding="utf-8").splitlines())
    assert build["kg"] == {"file": "icews-2005-15.csv", "sha256": _sha(kg)}
    assert build["labels"] == {"file": "names.tsv", "sha256": _sha(labels)}
    assert (build["seed"], build["target_n"], build["questions"]) == (7, 60, questions)
    assert build["tool"] == f"tempbench {__version__}"
    assert shlex.split(build["command"]) == [
        "tempbench", "build-benchmark", "--kg", str(kg.resolve()), "--labels", str(labels.resolve()),
        "--out", str(out.resolve()), "--target-n", "60", "--seed", "7"]
    capsys.readouterr()
    assert main(["check", "--data", str(out), "--json", str(tmp_path / "check.json")]) == 0
    doc = json.loads((tmp_path / "check.json").read_text(encoding="utf-8"))
    assert doc["summary"]["error"] == 0
    codes = {f["code"] for f in doc["findings"]}
    assert {"built", "lock.ok"} <= codes and not codes & {"kg.missing", "lock.changed", "lock.missing"}
    assert main(["reproduce", "--data", str(out), "--split", "dev", "--workers", "1", "--boot", "10",
                 "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "report.md").is_file()


def test_the_recorded_command_reruns_to_the_same_bytes(user, tmp_path, capsys):
    out = tmp_path / "root"
    assert _build(user / "icews-2005-15.csv", out, user / "names.tsv") == 0
    before = {rel: (out / rel).read_bytes() for rel in (*BENCH, LOCK_FILE)}
    command = read_lock(out).sources["build-benchmark"]["command"]
    assert main(shlex.split(command)[1:]) == 0
    assert {rel: (out / rel).read_bytes() for rel in before} == before


def test_out_may_be_the_kgs_own_folder(user, capsys):
    kg = user / "icews-2005-15.csv"
    assert _build(kg, user) == 0
    assert os.path.samefile(user / KG_FILE, kg)  # linked under the layout name, beside the user's name
    assert not (user / ".tempbench-output.json").exists()  # the user's folder is not made one of ours
    assert main(["check", "--data", str(user)]) == 0
    # again, now that the layout name is there: nothing to link, same benchmark
    before = (user / BENCHMARK_LABELLED).read_bytes()
    assert _build(user / KG_FILE, user) == 0
    assert (user / BENCHMARK_LABELLED).read_bytes() == before


def test_a_kg_under_its_layout_name_in_its_folder_is_left_as_it_is(user, capsys):
    kg = user / KG_FILE
    (user / "icews-2005-15.csv").rename(kg)
    inode = kg.stat().st_ino
    assert _build(kg, user) == 0
    assert kg.stat().st_ino == inode and kg.stat().st_nlink == 1
    assert read_lock(user).files[KG_FILE].source == str(kg.resolve())


def test_a_different_file_under_a_layout_name_is_an_error_naming_it(user, tmp_path, capsys):
    out = tmp_path / "root"
    out.mkdir()
    theirs = out / KG_FILE
    theirs.write_text("ts,head,tail,relation_type\n2000,Q1,Q2,P1\n", encoding="utf-8")
    (out / MANIFEST).write_text("{}", encoding="utf-8")  # a folder of ours otherwise (a generated root)
    digest = _sha(theirs)
    capsys.readouterr()
    assert _build(user / "icews-2005-15.csv", out) == 2
    err = capsys.readouterr().err
    assert str(theirs) in err and "different file" in err and "Traceback" not in err
    assert _sha(theirs) == digest and not (out / "benchmark").exists() and not (out / LOCK_FILE).exists()


def test_an_identical_file_under_a_layout_name_is_fine(user, tmp_path, capsys):
    out = tmp_path / "root"
    out.mkdir()
    (out / MANIFEST).write_text("{}", encoding="utf-8")
    shutil.copy(user / "icews-2005-15.csv", out / KG_FILE)
    inode = (out / KG_FILE).stat().st_ino
    assert _build(user / "icews-2005-15.csv", out) == 0
    assert (out / KG_FILE).stat().st_ino == inode  # kept, not replaced


def test_another_form_that_would_be_read_first_is_an_error(user, tmp_path, capsys):
    packed = user / "names.json.gz"
    with gzip.open(packed, "wt", encoding="utf-8") as handle:
        json.dump({"Q1": "one"}, handle)
    out = tmp_path / "root"
    out.mkdir()
    (out / MANIFEST).write_text("{}", encoding="utf-8")
    (out / "labels.tsv").write_text("Q1\tsomething else\n", encoding="utf-8")
    assert _build(user / "icews-2005-15.csv", out, packed) == 2
    assert "would be read instead of labels.json.gz" in capsys.readouterr().err


def test_formats_are_kept_json_labels_and_gz(user, tmp_path, capsys):
    kg = user / "events.csv.gz"
    kg.write_bytes(gzip.compress((user / "icews-2005-15.csv").read_bytes()))
    labels = user / "names.json"
    labels.write_text(json.dumps(dict(line.split("\t", 1) for line in
                                      (user / "names.tsv").read_text(encoding="utf-8").splitlines())),
                      encoding="utf-8")
    out = tmp_path / "root"
    assert _build(kg, out, labels) == 0
    assert os.path.samefile(out / (KG_FILE + ".gz"), kg) and os.path.samefile(out / "labels.json", labels)
    assert not (out / KG_FILE).exists() and not (out / "labels.tsv").exists()
    assert main(["check", "--data", str(out)]) == 0


def test_a_copy_when_a_link_is_impossible(user, tmp_path, monkeypatch, capsys):
    def no_link(src, dst, *args, **kwargs):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", no_link)
    out = tmp_path / "root"
    kg = user / "icews-2005-15.csv"
    assert _build(kg, out) == 0
    assert not os.path.samefile(out / KG_FILE, kg) and (out / KG_FILE).read_bytes() == kg.read_bytes()
    assert kg.exists()  # copied, never moved
    assert "copied" in capsys.readouterr().err


def test_the_locks_other_groups_are_kept(user, tmp_path, capsys):
    out = tmp_path / "root"
    out.mkdir()
    (out / MANIFEST).write_text("{}", encoding="utf-8")
    notes = out / "release-notes.txt"
    notes.write_text("fetched\n", encoding="utf-8")
    fetched = LockedFile("release-notes.txt", notes.stat().st_size, _sha(notes), "https://example.org/r.zip",
                         "2025-01-31T12:00:00Z", "release")
    write_lock(Lock(out / LOCK_FILE).with_group("release", {"source": "https://example.org/r.zip"}, [fetched]))
    assert _build(user / "icews-2005-15.csv", out) == 0
    lock = read_lock(out)
    assert set(lock.sources) == {"release", "build-benchmark"}
    assert lock.files["release-notes.txt"] == fetched and KG_FILE in lock.files


# --- check's hints by origin -------------------------------------------------------------------


def _messages(capsys, *args: str) -> str:
    capsys.readouterr()
    main(["check", *args])
    return capsys.readouterr().out


def test_hints_of_a_built_root(user, tmp_path, capsys):
    out = tmp_path / "root"
    assert _build(user / "icews-2005-15.csv", out, user / "names.tsv") == 0
    command = read_lock(out).sources["build-benchmark"]["command"]
    (out / KG_FILE).unlink()
    (out / BENCHMARK_LABELLED).unlink()
    text = _messages(capsys, "--data", str(out), "--json", str(tmp_path / "c.json"))
    findings = {f["code"]: f["message"] for f in json.loads((tmp_path / "c.json").read_text())["findings"]}
    assert f"restore {KG_FILE} from {(user / 'icews-2005-15.csv').resolve()}" in findings["kg.missing"]
    assert f"rebuild it with '{command}'" in findings["benchmark.missing"]
    assert "fetch tgb" not in text and "fetch release" not in text


def test_hints_of_a_generated_root(tiny, tmp_path, capsys):
    root = tmp_path / "gen"
    shutil.copytree(tiny, root)
    (root / KG_FILE).unlink()
    text = _messages(capsys, "--data", str(root))
    assert "regenerate the root with 'tempbench sample --scale tiny --seed 3 --out DIR'" in text
    assert "fetch tgb" not in text


def test_hints_of_a_fetched_and_of_an_unknown_root(tiny, tmp_path, capsys):
    for name, group in (("fetched", "tgb"), ("unknown", None)):
        root = tmp_path / name
        root.mkdir()
        shutil.copytree(tiny / "benchmark", root / "benchmark")
        if group is not None:
            bench = root / BENCHMARK_LABELLED
            entry = LockedFile(BENCHMARK_LABELLED, bench.stat().st_size, _sha(bench), "https://example.org/x.zip",
                               "2025-01-31T12:00:00Z", group)
            write_lock(Lock(root / LOCK_FILE).with_group(group, {"source": "https://example.org/x.zip"}, [entry]))
        assert "KG edge list not found: the pipeline cannot run (get it with 'tempbench fetch tgb --out DIR')" \
            in " ".join(_messages(capsys, "--data", str(root)).split())
