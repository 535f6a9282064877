"""``tempbench fetch`` against a real HTTP server on 127.0.0.1 started by the test (issues 13 and 24).

Never the internet: the server (:class:`fetch_server.FetchServer`) runs in a
thread, serving archives the test builds in memory; it counts the requests it
answers, so idempotence is measured as "no second request", and it can answer
404, send a corrupt archive, hang up in the middle of the body, ignore Range
requests, or stall. Issue 24: TGB's current host with the old one as a
fallback mirror, retries that resume, and the lock (``tempbench.lock``) that
``check`` compares a root with.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from fetch_server import FetchServer, Route

import tempbench.fetch as fetch_module
from tempbench.check import check_data
from tempbench.cli import main
from tempbench.data import resolve_data
from tempbench.fetch import TGB_URL, TGB_URLS, FetchError, FetchOptions, fetch_release, fetch_tgb
from tempbench_core.layout import KG_FILE, LOCK_FILE, PROVENANCE
from tempbench_core.lock import compare_lock, lock_digests, read_lock

CSV = b"ts,head,tail,relation_type\n1990,Q1,Q2,P1\n1991,Q2,Q3,P2\n"
#: No pause between retries: the tests measure behaviour, not patience.
FAST = FetchOptions(backoff=0)


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _targz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _crc_broken(archive: bytes, payload: bytes) -> bytes:
    # Stored (uncompressed) member: flip one byte of the payload so only the CRC check can notice.
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(KG_FILE, payload)
    data = bytearray(buf.getvalue())
    at = bytes(data).index(payload) + len(payload) // 2
    data[at] ^= 0xFF
    return bytes(data)


RELEASE_FILES = {
    "tempbench-v1.0.1/benchmark/benchmark_labelled.jsonl": b'{"id": "q1"}\n',
    "tempbench-v1.0.1/benchmark/benchmark.jsonl": b'{"id": "q1", "ids": true}\n',
    "tempbench-v1.0.1/benchmark/functional_negatives.jsonl": b'{"id": "q1", "stale_functional": true, "dist_functional": false}\n',
    "tempbench-v1.0.1/baselines/oracle/run.jsonl": b'{"id": "q1", "evidence": []}\n',
    "tempbench-v1.0.1/labels.tsv": b"id\tlabel\nQ1\tone\n",
    "tempbench-v1.0.1/README.md": b"# card\n",
    "tempbench-v1.0.1/code/build_benchmark.py": b"print()\n",
}


@pytest.fixture()
def server():
    srv = FetchServer()
    good = _zip({KG_FILE: CSV, "tkgl-smallpedia_static_edgelist.csv": b"x\n", "tkgl-smallpedia_val_ns.pkl": b"\0"})
    srv.routes.update({
        "/tkgl-smallpedia.zip": Route(good),
        "/garbage.zip": Route(b"this is not an archive at all" * 100),
        "/crc.zip": Route(_crc_broken(good, CSV * 50)),
        "/nomember.zip": Route(_zip({"something_else.csv": CSV})),
        "/cut.zip": Route(good + b"\0" * 200_000, cut=1000, ranges=False),
        "/nested.tar.gz": Route(_targz({"tkgl_smallpedia/" + KG_FILE: CSV})),
        "/release.zip": Route(_zip(RELEASE_FILES)),
        "/release.tar.gz": Route(_targz(RELEASE_FILES)),
        "/not-a-release.zip": Route(_zip({"README.md": b"x"})),
    })
    srv.good = good
    yield srv
    srv.close()


def _leftovers(out: Path) -> list[str]:
    """Temporary files a fetch might have left (everything hidden, or ending in .part)."""
    return sorted(p.name for p in out.rglob("*") if p.name.startswith(".") or p.name.endswith(".part"))


def _lock(out: Path) -> dict:
    return json.loads((out / LOCK_FILE).read_text())


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_default_urls_are_tgbs_current_host_then_the_old_one():
    # TGB's object store moved: the old bucket (tgb/utils/info.py DATA_URL_DICT) answers NoSuchBucket.
    assert TGB_URLS == (
        "https://object-arbutus.alliancecan.ca/swift/v1/14c95234f6cd4a21a47deafe20cce2a7/tgb/tkgl-smallpedia.zip",
        "https://object-arbutus.cloud.computecanada.ca/tgb/tkgl-smallpedia.zip",
    )
    assert TGB_URL == TGB_URLS[0]


def test_fetch_tgb_success_then_idempotent(server, tmp_path):
    out = tmp_path / "data"
    url = server.url("/tkgl-smallpedia.zip")
    result = fetch_tgb(out, url=url)
    assert result.downloaded and (out / KG_FILE).read_bytes() == CSV
    # only the edge list is extracted; nothing temporary is left
    assert sorted(p.name for p in out.iterdir()) == sorted([KG_FILE, LOCK_FILE])
    lock = _lock(out)
    assert lock["lock_version"] == 1
    entry = lock["files"][KG_FILE]
    assert entry["bytes"] == len(CSV) and entry["sha256"] == _sha(CSV)
    assert entry["source"] == url and entry["member"] == KG_FILE and entry["group"] == "tgb"
    assert entry["fetched_at"].endswith("Z")
    tgb = lock["sources"]["tgb"]
    assert tgb["requested"] == url and tgb["source"] == url
    assert tgb["archive"] == {"name": "tkgl-smallpedia.zip", "bytes": len(server.good), "sha256": _sha(server.good)}
    assert server.hits["/tkgl-smallpedia.zip"] == 1

    before = (out / LOCK_FILE).read_bytes()
    again = fetch_tgb(out, url=url)
    assert not again.downloaded
    assert server.hits["/tkgl-smallpedia.zip"] == 1  # no second request
    assert (out / LOCK_FILE).read_bytes() == before


def test_fetch_tgb_refuses_to_replace_a_changed_file_unless_forced(server, tmp_path):
    out = tmp_path / "data"
    url = server.url("/tkgl-smallpedia.zip")
    fetch_tgb(out, url=url)
    (out / KG_FILE).write_bytes(CSV + b"1992,Q3,Q4,P1\n")
    with pytest.raises(FetchError, match="--force"):
        fetch_tgb(out, url=url)
    assert server.hits["/tkgl-smallpedia.zip"] == 1
    assert fetch_tgb(out, url=url, force=True).downloaded
    assert server.hits["/tkgl-smallpedia.zip"] == 2 and (out / KG_FILE).read_bytes() == CSV


@pytest.mark.parametrize(
    ("path", "pattern"),
    [
        ("/missing.zip", r"HTTP error 404"),
        ("/garbage.zip", r"not a zip or tar archive"),
        ("/crc.zip", r"corrupt archive.*Bad CRC"),
        ("/nomember.zip", r"has no tkgl-smallpedia_edgelist\.csv.*something_else\.csv"),
        ("/cut.zip", r"interrupted: received [\d,]+ of [\d,]+ bytes.*gave up after 4 attempt"),
    ],
)
def test_fetch_tgb_failures_leave_nothing(server, tmp_path, path, pattern):
    out = tmp_path / "data"
    url = server.url(path)
    with pytest.raises(FetchError, match=pattern) as info:
        fetch_tgb(out, url=url, options=FAST)
    assert url in str(info.value)
    assert not (out / KG_FILE).exists() and not (out / LOCK_FILE).exists()
    assert _leftovers(out) == []


def test_fetch_tgb_cli_exit_codes(server, tmp_path, capsys):
    out = tmp_path / "data"
    assert main(["fetch", "tgb", "--url", server.url("/missing.zip"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert server.url("/missing.zip") in err and "404" in err and "Traceback" not in err
    assert main(["fetch", "tgb", "--url", server.url("/cut.zip"), "--out", str(out), "--retries", "0"]) == 2
    assert "interrupted" in capsys.readouterr().err and _leftovers(out) == []
    assert main(["fetch", "tgb", "--url", server.url("/tkgl-smallpedia.zip"), "--out", str(out)]) == 0
    assert "tempbench check --data" in capsys.readouterr().err
    assert main(["fetch", "tgb", "--url", server.url("/tkgl-smallpedia.zip"), "--out", str(out)]) == 0
    assert "nothing downloaded" in capsys.readouterr().err
    assert server.hits["/tkgl-smallpedia.zip"] == 1


def test_fetch_tgb_tar_gz_and_local_archive(server, tmp_path):
    out = tmp_path / "a"
    fetch_tgb(out, url=server.url("/nested.tar.gz"))
    assert (out / KG_FILE).read_bytes() == CSV
    assert _lock(out)["files"][KG_FILE]["member"] == "tkgl_smallpedia/" + KG_FILE
    local = tmp_path / "tkgl-smallpedia.zip"
    local.write_bytes(server.good)
    out2 = tmp_path / "b"
    assert fetch_tgb(out2, url=str(local)).downloaded and (out2 / KG_FILE).read_bytes() == CSV
    assert _lock(out2)["files"][KG_FILE]["source"] == str(local)
    assert not fetch_tgb(out2, url=str(local)).downloaded


# --- issue 24: mirrors, retries with resume -------------------------------------------------


def test_the_old_host_is_a_fallback_mirror(server, tmp_path, monkeypatch):
    mirrors = (server.url("/gone/tkgl-smallpedia.zip"), server.url("/tkgl-smallpedia.zip"))
    monkeypatch.setattr(fetch_module, "TGB_URLS", mirrors)
    out = tmp_path / "data"
    result = fetch_tgb(out, options=FAST)
    assert result.downloaded and (out / KG_FILE).read_bytes() == CSV
    assert any("tried first" in n and "404" in n for n in result.notes)
    lock = _lock(out)
    assert lock["files"][KG_FILE]["source"] == mirrors[1] and lock["sources"]["tgb"]["requested"] == "default"
    # the default request again: nothing downloaded, whichever mirror gave the file
    assert not fetch_tgb(out, options=FAST).downloaded and server.hits["/tkgl-smallpedia.zip"] == 1
    # every mirror failing: one error naming each
    monkeypatch.setattr(fetch_module, "TGB_URLS", (server.url("/a.zip"), server.url("/garbage.zip")))
    with pytest.raises(FetchError, match=r"any of its 2 sources: .*/a\.zip: HTTP error 404.*garbage\.zip: not a zip"):
        fetch_tgb(tmp_path / "other", options=FAST)


def test_a_dropped_transfer_is_resumed_with_a_range_request(server, tmp_path):
    body = _zip({KG_FILE: CSV * 20_000, "pad.bin": bytes(range(256)) * 4000})
    server.routes["/flaky.zip"] = Route(body, cut=1)
    out = tmp_path / "data"
    result = fetch_tgb(out, url=server.url("/flaky.zip"), options=FAST)
    assert result.downloaded and (out / KG_FILE).read_bytes() == CSV * 20_000
    first, second = server.requests["/flaky.zip"]
    assert "range" not in first and second["range"] == f"bytes={len(body) // 2}-"
    assert second["if-range"] == '"v1"'  # resumed only if it is still the same file
    assert _lock(out)["sources"]["tgb"]["archive"]["sha256"] == _sha(body)


def test_a_server_that_ignores_range_gets_a_fresh_start(server, tmp_path):
    body = _zip({KG_FILE: CSV * 20_000, "pad.bin": bytes(range(256)) * 4000})
    server.routes["/norange.zip"] = Route(body, cut=2, ranges=False)  # 200 with the whole body, never 206
    out = tmp_path / "data"
    fetch_tgb(out, url=server.url("/norange.zip"), options=FAST)
    assert (out / KG_FILE).read_bytes() == CSV * 20_000
    assert server.hits["/norange.zip"] == 3
    assert _lock(out)["sources"]["tgb"]["archive"] == {"name": "norange.zip", "bytes": len(body), "sha256": _sha(body)}


def test_server_errors_are_retried_not_client_errors(server, tmp_path):
    server.routes["/busy.zip"] = Route(status=503)
    with pytest.raises(FetchError, match=r"HTTP error 503.*gave up after 3 attempt"):
        fetch_tgb(tmp_path / "data", url=server.url("/busy.zip"), options=FetchOptions(backoff=0, retries=2))
    assert server.hits["/busy.zip"] == 3
    with pytest.raises(FetchError, match="HTTP error 404"):
        fetch_tgb(tmp_path / "data", url=server.url("/nope.zip"), options=FAST)
    assert server.hits["/nope.zip"] == 1


# --- TempBench release ----------------------------------------------------------------------


def _expected_layout() -> dict[str, bytes]:
    strip = "tempbench-v1.0.1/"
    keep = {k[len(strip):]: v for k, v in RELEASE_FILES.items() if not k.endswith(("README.md", ".py"))}
    return keep


def _tree(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
            if p.is_file() and p.name != LOCK_FILE}


def test_fetch_release_from_url_zip_and_tar(server, tmp_path):
    for route in ("/release.zip", "/release.tar.gz"):
        out = tmp_path / route.strip("/").replace(".", "_")
        result = fetch_release(server.url(route), out)
        assert result.downloaded and _tree(out) == _expected_layout()
        lock = _lock(out)
        assert lock["sources"]["release"]["left_out"] == 2 and lock["sources"]["release"]["revision"] is None
        entry = lock["files"]["benchmark/benchmark.jsonl"]
        assert entry["sha256"] == _sha(RELEASE_FILES["tempbench-v1.0.1/benchmark/benchmark.jsonl"])
        assert entry["member"] == "tempbench-v1.0.1/benchmark/benchmark.jsonl" and entry["source"] == server.url(route)
        assert sorted(lock["files"]) == sorted(_expected_layout())
        assert _leftovers(out) == []
        assert not fetch_release(server.url(route), out).downloaded
        assert server.hits[route] == 1


def test_fetch_release_from_folder_like_hf_download(tmp_path):
    src = tmp_path / "hf"
    for name, data in RELEASE_FILES.items():
        path = src / name.removeprefix("tempbench-v1.0.1/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # hf download --local-dir keeps its bookkeeping under .cache/: never taken
    junk = src / ".cache" / "huggingface" / "download" / "benchmark" / "benchmark_labelled.jsonl"
    junk.parent.mkdir(parents=True)
    junk.write_bytes(b"not me\n")
    out = tmp_path / "data"
    assert fetch_release(str(src), out).downloaded
    assert _tree(out) == _expected_layout()
    assert not fetch_release(str(src), out).downloaded
    # the source changed: fetched again
    (src / "benchmark" / "benchmark.jsonl").write_bytes(b'{"id": "q1", "v": 2}\n')
    assert fetch_release(str(src), out).downloaded
    assert (out / "benchmark" / "benchmark.jsonl").read_bytes() == b'{"id": "q1", "v": 2}\n'
    # a file the new version no longer has goes (it was ours and is unchanged)
    (src / "baselines" / "oracle" / "run.jsonl").unlink()
    result = fetch_release(str(src), out)
    assert not (out / "baselines" / "oracle" / "run.jsonl").exists()
    assert any("removed 1 file(s) of the previous release" in n for n in result.notes)
    assert "baselines/oracle/run.jsonl" not in _lock(out)["files"]


def test_fetch_release_records_the_revision(tmp_path, capsys):
    src = tmp_path / "hf"
    for name, data in RELEASE_FILES.items():
        path = src / name.removeprefix("tempbench-v1.0.1/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    out = tmp_path / "data"
    assert main(["fetch", "release", "--from", str(src), "--out", str(out), "--revision", "v1.0.1"]) == 0
    assert _lock(out)["sources"]["release"]["revision"] == "v1.0.1"
    assert "revision v1.0.1" in capsys.readouterr().err
    # another revision is another request, even with the same files
    assert fetch_release(str(src), out, revision="0123456789abcdef0123456789abcdef01234567").downloaded
    assert not fetch_release(str(src), out, revision="0123456789abcdef0123456789abcdef01234567").downloaded
    assert main(["fetch", "release", "--from", str(src), "--out", str(out), "--revision", "x y\n"]) == 2
    assert "not a Hugging Face revision" in capsys.readouterr().err


def test_fetch_release_failures(server, tmp_path):
    out = tmp_path / "data"
    with pytest.raises(FetchError, match="not a TempBench release"):
        fetch_release(server.url("/not-a-release.zip"), out)
    with pytest.raises(FetchError, match="HTTP error 404"):
        fetch_release(server.url("/nope.zip"), out)
    with pytest.raises(FetchError, match="interrupted"):
        fetch_release(server.url("/cut.zip"), out, options=FAST)
    with pytest.raises(FetchError, match="no such file or folder"):
        fetch_release(str(tmp_path / "absent"), out)
    assert not out.exists()  # each failed fetch removes the data root it created
    assert main(["fetch", "release", "--from", server.url("/nope.zip"), "--out", str(out)]) == 2
    assert not out.exists()


# --- the lock: check compares a root with it; a report copies its digests ------------------


def test_check_reports_files_changed_or_missing_since_the_lock(server, tmp_path):
    out = tmp_path / "data"
    fetch_tgb(out, url=server.url("/tkgl-smallpedia.zip"))
    fetch_release(server.url("/release.zip"), out)
    codes = {f.code for f in check_data(resolve_data(data=out), show_progress=False).findings}
    assert "lock.ok" in codes and not codes & {"lock.changed", "lock.missing"}
    (out / "benchmark" / "benchmark.jsonl").write_bytes(b'{"id": "q1", "edited": true}\n')
    (out / "baselines" / "oracle" / "run.jsonl").unlink()
    report = check_data(resolve_data(data=out), show_progress=False)
    found = {(f.code, f.file): f for f in report.findings if f.code.startswith("lock.")}
    changed = found[("lock.changed", "benchmark/benchmark.jsonl")]
    assert changed.level == "warning" and "tempbench fetch release" in changed.message
    assert found[("lock.missing", "baselines/oracle/run.jsonl")].level == "warning"
    assert report.facts["lock"]["changed"] == ["benchmark/benchmark.jsonl"]
    assert report.facts["lock"]["missing"] == ["baselines/oracle/run.jsonl"]
    comparison = compare_lock(out)
    assert comparison.state(KG_FILE) == "ok" and comparison.state("benchmark/benchmark.jsonl") == "changed"
    digests = lock_digests(out)
    assert list(digests) == sorted(digests) and digests[KG_FILE]["sha256"] == _sha(CSV)
    assert digests["baselines/oracle/run.jsonl"]["state"] == "missing"
    assert digests[KG_FILE]["source"] == server.url("/tkgl-smallpedia.zip")


def test_check_reports_an_unreadable_lock(tmp_path):
    out = tmp_path / "data"
    out.mkdir()
    (out / LOCK_FILE).write_text("{not json")
    report = check_data(resolve_data(data=out), show_progress=False)
    assert [f.level for f in report.findings if f.code == "lock.unreadable"] == ["warning"]


def test_a_root_fetched_by_an_earlier_version_is_taken_as_it_is(server, tmp_path):
    out = tmp_path / "data"
    out.mkdir()
    (out / KG_FILE).write_bytes(CSV)
    legacy = {"tgb": {"source": TGB_URLS[1], "fetched_at": "2025-01-01T00:00:00Z", "member": KG_FILE,
                      "files": {KG_FILE: {"bytes": len(CSV), "sha256": _sha(CSV)}}}}
    (out / PROVENANCE).write_text(json.dumps(legacy))
    lock = read_lock(out)
    assert lock.legacy and lock.files[KG_FILE].sha256 == _sha(CSV)
    # the default request: the old default URL counts as the same request, nothing is downloaded
    assert not fetch_tgb(out).downloaded
    # a fetch that writes: the lock replaces provenance.json
    fetch_release(server.url("/release.zip"), out)
    assert not (out / PROVENANCE).exists() and KG_FILE in _lock(out)["files"]
