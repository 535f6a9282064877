"""The data root's lock (``tempbench_core.lock``) and redacted URLs (``tempbench_core.urls``).

The lock is read by three commands (fetch, check, reproduce's report), so its
reader must refuse anything it did not write instead of guessing, its writer
must give the same bytes for the same lock, and no URL it stores may carry a
credential or a query value, whatever the caller hands it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tempbench_core.errors import TempbenchError
from tempbench_core.layout import LOCK_FILE
from tempbench_core.lock import Lock, LockedFile, LockError, compare_lock, lock_digests, read_lock, write_lock
from tempbench_core.urls import redact_url, scrub


@pytest.mark.parametrize(("url", "shown"), [
    ("https://alice:pw@host.org:8443/a/b.zip?token=xyz&v=2#frag", "https://host.org:8443/a/b.zip?token=***&v=***#***"),
    ("https://host.org/a.zip", "https://host.org/a.zip"),
    ("http://u@h/x?SECRETBARE", "http://h/x?***"),
    ("http://h/x?a=&b=1", "http://h/x?a=&b=***"),
    ("http://[::1]:80/x?sig=1", "http://[::1]:80/x?sig=***"),
    ("/local/path/with?question=mark", "/local/path/with?question=mark"),
    ("relative.zip", "relative.zip"),
])
def test_redact_url(url, shown):
    assert redact_url(url) == shown
    assert redact_url(shown) == shown  # idempotent: storing a shown URL again changes nothing


def test_scrub_masks_what_an_exception_quotes():
    url = "http://bob:hunter%2122@h:1/x.zip?sig=S1GNATURE"
    text = f"InvalidURL: nonnumeric port 'hunter%2122@h' in {url}; password hunter!22; S1GNATURE"
    out = scrub(text, url)
    assert "hunter" not in out and "S1GNATURE" not in out and "bob" not in out
    assert "http://h:1/x.zip?sig=***" in out


def _file(rel: str, data: bytes, group: str = "tgb", source: str = "https://h/x.zip") -> LockedFile:
    return LockedFile(rel, len(data), hashlib.sha256(data).hexdigest(), source, "2025-01-01T00:00:00Z", group, rel)


def test_write_then_read_is_the_same_lock_and_the_same_bytes(tmp_path):
    lock = Lock(tmp_path / LOCK_FILE).with_group(
        "tgb", {"source": "https://u:p@h/x.zip?t=1", "archive": {"name": "x.zip"}, "mirrors": ["https://h/y?k=v"]},
        [_file("b.csv", b"b", source="https://u:p@h/x.zip?t=1"), _file("a/c.csv", b"c")])
    write_lock(lock)
    first = (tmp_path / LOCK_FILE).read_bytes()
    text = first.decode()
    assert "u:p@" not in text and "t=1" not in text and "k=v" not in text  # redacted on write, at any depth
    again = read_lock(tmp_path)
    assert sorted(again.files) == ["a/c.csv", "b.csv"] and again.files["b.csv"].source == "https://h/x.zip?t=***"
    write_lock(again)
    assert (tmp_path / LOCK_FILE).read_bytes() == first
    assert list(json.loads(first)) == ["files", "lock_version", "sources"]  # sorted keys


def test_a_group_replaces_only_its_own_files(tmp_path):
    lock = Lock(tmp_path / LOCK_FILE)
    lock = lock.with_group("tgb", {}, [_file("kg.csv", b"k")])
    lock = lock.with_group("release", {}, [_file("benchmark/a.jsonl", b"a"), _file("baselines/x", b"x")])
    lock = lock.with_group("release", {"revision": "v2"}, [_file("benchmark/a.jsonl", b"a2")])
    assert sorted(lock.files) == ["benchmark/a.jsonl", "kg.csv"]
    assert lock.group("release")["benchmark/a.jsonl"].bytes == 2 and lock.sources["release"] == {"revision": "v2"}


@pytest.mark.parametrize(("content", "problem"), [
    ("{not json", "not valid JSON"),
    ("[]", "holds a JSON array"),
    ('{"lock_version": 2, "files": {}}', "newer tempbench-repro"),
    ('{"lock_version": true}', "lock_version is True"),
    ('{"lock_version": 1, "files": {"../etc/passwd": {}}}', "not a path inside the data root"),
    ('{"lock_version": 1, "files": {"/abs": {}}}', "not a path inside the data root"),
    ('{"lock_version": 1, "files": {"a": {"bytes": true, "sha256": "0"}}}', "the size of a"),
    ('{"lock_version": 1, "files": {"a": {"bytes": 1, "sha256": "xyz"}}}', "the sha256 of a"),
    ('{"lock_version": 1, "files": {"a": {"bytes": NaN}}}', "not valid JSON"),
    ('{"lock_version": 1, "files": {"a": {"bytes": 1, "sha256": "' + "0" * 64 + '"}}}', "lacks a source"),
])
def test_a_lock_that_is_not_one_is_refused(tmp_path, content, problem):
    (tmp_path / LOCK_FILE).write_text(content)
    with pytest.raises(LockError, match=problem) as info:
        read_lock(tmp_path)
    assert isinstance(info.value, TempbenchError) and str(tmp_path / LOCK_FILE) in str(info.value)


def test_a_folder_named_like_the_lock_is_refused(tmp_path):
    (tmp_path / LOCK_FILE).mkdir()
    with pytest.raises(LockError, match="not a regular file"):
        read_lock(tmp_path)


def test_no_lock_is_an_empty_lock(tmp_path):
    lock = read_lock(tmp_path)
    assert lock.files == {} and lock.path == tmp_path / LOCK_FILE and not lock.legacy
    assert lock_digests(tmp_path) == {}


def test_compare_and_digests(tmp_path: Path):
    for rel, data in (("same", b"same"), ("size", b"size"), ("edit", b"edit"), ("gone", b"gone")):
        (tmp_path / rel).write_bytes(data)
    (tmp_path / "dir").mkdir()
    files = [_file(rel, rel.encode()) for rel in ("same", "size", "edit", "gone")] + [_file("dir", b"d")]
    write_lock(Lock(tmp_path / LOCK_FILE).with_group("release", {}, files))
    (tmp_path / "size").write_bytes(b"longer now")
    (tmp_path / "edit").write_bytes(b"EDIT")  # same size, other bytes
    (tmp_path / "gone").unlink()
    comparison = compare_lock(tmp_path)
    assert comparison.ok == ["same"] and comparison.missing == ["gone"]
    assert [rel for rel, _ in comparison.changed] == ["dir", "edit", "size"]
    assert "sha256" in dict(comparison.changed)["edit"] and "10 bytes, recorded 4" in dict(comparison.changed)["size"]
    digests = lock_digests(tmp_path)
    assert list(digests) == ["dir", "edit", "gone", "same", "size"]
    assert {k: v["state"] for k, v in digests.items()} == {"dir": "changed", "edit": "changed", "gone": "missing",
                                                          "same": "ok", "size": "changed"}
    assert digests["same"] == {"bytes": 4, "sha256": hashlib.sha256(b"same").hexdigest(), "source": "https://h/x.zip",
                               "fetched_at": "2025-01-01T00:00:00Z", "state": "ok"}
    assert lock_digests(tmp_path) == digests
