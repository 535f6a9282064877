"""``tempbench fetch`` against hostile archives, servers and sources (issue 25, classes 1-5).

One section per class of the security review; each test failed on the code
before the fix. Everything runs against :class:`fetch_server.FetchServer` on
127.0.0.1 or local files: nothing is downloaded. The probes that already held
(zip-slip, absolute members, symlink and device members, redirects to
``file://``, stalled servers) are kept here too, so they keep holding.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import stat
import subprocess
import sys
import tarfile
import time
import warnings
import zipfile
from pathlib import Path

import pytest
from fetch_server import FetchServer, Route

from tempbench.cli import main
from tempbench.fetch import FetchError, fetch_release, fetch_tgb
from tempbench_core.layout import KG_FILE

CSV = b"ts,head,tail,relation_type\n1990,Q1,Q2,P1\n1991,Q2,Q3,P2\n"
BENCH = {
    "benchmark/benchmark_labelled.jsonl": b'{"id": "q1"}\n',
    "benchmark/benchmark.jsonl": b'{"id": "q1", "ids": true}\n',
    "benchmark/functional_negatives.jsonl": b'{"id": "q1"}\n',
}
LOCK = "tempbench.lock"
REPO = Path(__file__).resolve().parents[2]


def _zip(members: list[tuple[str, bytes]] | dict[str, bytes]) -> bytes:
    items = members.items() if isinstance(members, dict) else members
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate names some tests want
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, data in items:
                zf.writestr(name, data)
    return buf.getvalue()


def _tar(members: list[tuple[str, bytes]] | dict[str, bytes], mode: str = "w:gz") -> bytes:
    items = members.items() if isinstance(members, dict) else members
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in items:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _leftovers(out: Path) -> list[str]:
    """Temporary files or folders a fetch might leave (hidden, or ending in .part)."""
    if not out.exists():
        return []
    return sorted(p.relative_to(out).as_posix() for p in out.rglob("*")
                  if p.name.startswith(".") or p.name.endswith(".part"))


def _tree(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name not in (LOCK, "provenance.json")}


@pytest.fixture()
def server():
    srv = FetchServer()
    yield srv
    srv.close()


def _fetch_cli(*args: str) -> list[str]:
    return ["fetch", *args]


# --- 1. archive layouts --------------------------------------------------------------------


def test_tar_made_with_dot_lays_out_the_release(tmp_path):
    rel = tmp_path / "rel"
    for name, data in {**BENCH, "baselines/oracle.jsonl": b'{"id": "q1", "evidence": []}\n'}.items():
        (rel / name).parent.mkdir(parents=True, exist_ok=True)
        (rel / name).write_bytes(data)
    archive = tmp_path / "r.tgz"
    with tarfile.open(archive, "w:gz") as tf:  # what `tar -czf r.tgz -C rel .` makes
        tf.add(rel, arcname=".")
    assert any(m.startswith("./benchmark/") for m in tarfile.open(archive).getnames())
    out = tmp_path / "data"
    result = fetch_release(str(archive), out)
    assert result.downloaded and _tree(out) == {**BENCH, "baselines/oracle.jsonl": b'{"id": "q1", "evidence": []}\n'}


def test_zip_with_dot_names_lays_out_the_release(tmp_path):
    archive = tmp_path / "r.zip"
    archive.write_bytes(_zip({f"./{k}": v for k, v in BENCH.items()} | {"./baselines/./x.csv": b"metric,value\n"}))
    out = tmp_path / "data"
    fetch_release(str(archive), out)
    assert _tree(out) == {**BENCH, "baselines/x.csv": b"metric,value\n"}


def test_a_release_that_lays_out_no_benchmark_is_never_ok(tmp_path):
    archive = tmp_path / "r.zip"
    archive.write_bytes(_zip({"./README.md": b"x", "./code/benchmark_labelled.jsonl.txt": b"x"}))
    with pytest.raises(FetchError, match="not a TempBench release"):
        fetch_release(str(archive), tmp_path / "data")
    assert not (tmp_path / "data" / LOCK).exists()


def test_file_and_folder_of_the_same_name_fail_cleanly_then_a_retry_works(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_bytes(_zip({**BENCH, "baselines/a": b"file\n", "baselines/a/b": b"inside\n"}))
    out = tmp_path / "data"
    with pytest.raises(FetchError, match=r"baselines/a.*both a file and a folder"):
        fetch_release(str(bad), out)
    assert _tree(out) == {} and _leftovers(out) == [] and not (out / LOCK).exists()
    # the same archive again: the same clean refusal, not "exists and is not the file a previous fetch recorded"
    with pytest.raises(FetchError, match="both a file and a folder"):
        fetch_release(str(bad), out)
    good = tmp_path / "good.zip"
    good.write_bytes(_zip({**BENCH, "baselines/a/b": b"inside\n"}))
    assert fetch_release(str(good), out).downloaded
    assert _tree(out) == {**BENCH, "baselines/a/b": b"inside\n"}


def test_a_member_that_collides_with_the_data_root_leaves_nothing(tmp_path):
    out = tmp_path / "data"
    (out / "baselines").mkdir(parents=True)
    (out / "baselines" / "a").write_bytes(b"my own notes\n")  # a file where the release has a folder
    archive = tmp_path / "r.zip"
    archive.write_bytes(_zip({**BENCH, "baselines/a/b": b"inside\n"}))
    with pytest.raises(FetchError, match=r"baselines/a is a file"):
        fetch_release(str(archive), out)
    assert _tree(out) == {"baselines/a": b"my own notes\n"} and _leftovers(out) == []


def test_a_failure_while_moving_into_place_restores_the_previous_files(tmp_path, monkeypatch):
    import tempbench.fetch.staging as staging

    v1 = tmp_path / "v1.zip"
    v1.write_bytes(_zip(BENCH))
    out = tmp_path / "data"
    fetch_release(str(v1), out)
    before = _tree(out), (out / LOCK).read_bytes()
    v2 = tmp_path / "v2.zip"
    v2.write_bytes(_zip({k: v + b"\n" for k, v in BENCH.items()}))
    real, calls = os.replace, []

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 5:  # in the middle of moving the new files into place
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(staging.os, "replace", flaky)
    with pytest.raises(FetchError, match="No space left"):
        fetch_release(str(v2), out)
    monkeypatch.setattr(staging.os, "replace", real)
    assert (_tree(out), (out / LOCK).read_bytes()) == before and _leftovers(out) == []


@pytest.mark.parametrize("make", [_zip, _tar])
@pytest.mark.parametrize("names", [("benchmark/benchmark.jsonl", "benchmark/benchmark.jsonl"),
                                   ("benchmark/benchmark.jsonl", "./benchmark/benchmark.jsonl"),
                                   ("baselines/x", "baselines//x")])
def test_duplicate_member_names_are_an_error(tmp_path, make, names):
    members = [(k, v) for k, v in BENCH.items() if k != "benchmark/benchmark.jsonl"]
    members += [(names[0], b'{"id": "first"}\n'), (names[1], b'{"id": "second"}\n')]
    archive = tmp_path / "dup.bin"
    archive.write_bytes(make(members))
    out = tmp_path / "data"
    with pytest.raises(FetchError, match=r"appears 2 times"):
        fetch_release(str(archive), out)
    assert _tree(out) == {} and _leftovers(out) == []


def test_names_that_one_file_system_would_merge_are_an_error(tmp_path):
    # distinct in the archive, one file on macOS or Windows: which one survives would be the file system's accident
    for pair in (("baselines/Run.jsonl", "baselines/run.jsonl"), ("baselines/caf\u00e9", "baselines/cafe\u0301")):
        archive = tmp_path / "case.zip"
        archive.write_bytes(_zip({**BENCH, pair[0]: b"1\n", pair[1]: b"2\n"}))
        with pytest.raises(FetchError, match="differ only by case or Unicode form"):
            fetch_release(str(archive), tmp_path / "data")
    assert _tree(tmp_path / "data") == {}


@pytest.mark.parametrize("name", ["../evil.txt", "baselines/../../evil.txt", "/abs/baselines/x",
                                  "baselines/..\\..\\evil.txt"])
def test_unsafe_member_names_are_refused(tmp_path, name):
    # zip-slip and absolute members: held before, must keep holding
    archive = tmp_path / "slip.zip"
    archive.write_bytes(_zip({**BENCH, name: b"pwned\n"}))
    out = tmp_path / "sub" / "data"
    with pytest.raises(FetchError, match="unsafe member name"):
        fetch_release(str(archive), out)
    assert not any(p.name == "evil.txt" for p in tmp_path.rglob("*")) and _tree(out) == {}


def test_a_member_name_that_is_not_utf8_is_refused_by_name(tmp_path):
    """tarfile keeps such bytes as surrogate escapes: refused as the archive's, not as a staging file's failure."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT, errors="surrogateescape") as tar:
        for name, data in [*BENCH.items(), ("baselines/\udcff\udcfe.jsonl", b"{}\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive = tmp_path / "names.tar"
    archive.write_bytes(buf.getvalue())
    with pytest.raises(FetchError, match="is not valid UTF-8"):
        fetch_release(str(archive), tmp_path / "data")
    assert _tree(tmp_path / "data") == {}


def test_symlink_hardlink_and_device_members_are_never_written(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in BENCH.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        for name, kind in (("baselines/link", tarfile.SYMTYPE), ("baselines/hard", tarfile.LNKTYPE),
                           ("baselines/dev", tarfile.CHRTYPE), ("baselines/fifo", tarfile.FIFOTYPE)):
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = "/etc/passwd"
            tf.addfile(info)
    archive = tmp_path / "links.tgz"
    archive.write_bytes(buf.getvalue())
    out = tmp_path / "data"
    result = fetch_release(str(archive), out)
    assert _tree(out) == BENCH and not (out / "baselines").exists()
    said = [n for n in result.notes if "no regular file" in n]  # and said, not skipped silently
    assert len(said) == 1 and "4 member(s)" in said[0] and "baselines/link" in said[0], result.notes
    # a zip member whose mode says "symlink" is not a file either
    zbuf = io.BytesIO()
    with zipfile.ZipFile(zbuf, "w") as zf:
        for name, data in BENCH.items():
            zf.writestr(name, data)
        link = zipfile.ZipInfo("baselines/link")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
    zarchive = tmp_path / "links.zip"
    zarchive.write_bytes(zbuf.getvalue())
    out2 = tmp_path / "data2"
    fetch_release(str(zarchive), out2)
    assert _tree(out2) == BENCH


# --- 2. unbounded sizes -------------------------------------------------------------------


def test_a_zip_bomb_is_refused_by_its_expansion_ratio(tmp_path):
    zeros = b"\0" * (24 << 20)
    archive = tmp_path / "bomb.zip"
    archive.write_bytes(_zip({**BENCH, "baselines/zeros.jsonl": zeros}))
    assert archive.stat().st_size < 200_000
    out = tmp_path / "data"
    with pytest.raises(FetchError, match=r"baselines/zeros\.jsonl.*expands.*--max-ratio") as info:
        fetch_release(str(archive), out)
    assert str(archive) in str(info.value)
    assert _tree(out) == {} and _leftovers(out) == []
    # the bound is an option: raised, the same archive is laid out
    assert main(_fetch_cli("release", "--from", str(archive), "--out", str(out), "--max-ratio", "5000")) == 0
    assert (out / "baselines" / "zeros.jsonl").stat().st_size == len(zeros)


def test_a_tar_bomb_is_refused_before_it_is_read_to_the_end(tmp_path):
    archive = tmp_path / "bomb.tgz"
    archive.write_bytes(_tar({**BENCH, "code/zeros.bin": b"\0" * (40 << 20)}))
    with pytest.raises(FetchError, match=r"expands.*--max-ratio"):
        fetch_release(str(archive), tmp_path / "data")
    assert _leftovers(tmp_path / "data") == []


def test_the_total_size_of_what_is_extracted_is_bounded(tmp_path, capsys):
    archive = tmp_path / "r.zip"
    archive.write_bytes(_zip({**BENCH, "baselines/big.csv": b"metric,value\n" * 2000}))
    out = tmp_path / "data"
    assert main(_fetch_cli("release", "--from", str(archive), "--out", str(out), "--max-extract", "10K")) == 2
    err = capsys.readouterr().err
    assert "--max-extract" in err and "10,240" in err and "Traceback" not in err
    assert _tree(out) == {} and _leftovers(out) == []
    assert main(_fetch_cli("release", "--from", str(archive), "--out", str(out), "--max-extract", "1M")) == 0


def test_a_download_without_content_length_stops_at_the_maximum(server, tmp_path, capsys):
    server.routes["/endless.zip"] = Route(endless=True)
    out = tmp_path / "data"
    url = server.url("/endless.zip")
    assert main(_fetch_cli("tgb", "--url", url, "--out", str(out), "--max-download", "2M")) == 2
    err = capsys.readouterr().err
    assert url in err and "more than the maximum download size" in err and "--max-download" in err
    assert _leftovers(out) == [] and not (out / KG_FILE).exists()


def test_an_announced_length_past_the_maximum_is_refused_before_the_body(server, tmp_path, capsys):
    server.routes["/big.zip"] = Route(body=b"x" * 5000)
    out = tmp_path / "data"
    assert main(_fetch_cli("tgb", "--url", server.url("/big.zip"), "--out", str(out), "--max-download", "1K")) == 2
    assert "announces 5,000 bytes" in capsys.readouterr().err and _leftovers(out) == []


def test_the_default_bounds_fit_the_real_data():
    from tempbench.fetch import FetchOptions

    options = FetchOptions()
    # TGB's largest KG archive (tkgl-wikidata / tkgl-icews, a few GB) and the release (well under 1 GB)
    assert options.max_download >= 16 << 30 and options.max_extract >= 32 << 30
    # text (CSV, JSON Lines) deflates 5-20x; zeros deflate ~1000x
    assert 50 <= options.max_ratio <= 500


# --- 3. leftovers ---------------------------------------------------------------------------


def _wait_for(predicate, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def _partial(out: Path) -> bool:
    return any(p.is_file() and p.stat().st_size > 0 for p in out.rglob("*") if p.name.endswith(".part")) if out.exists() else False


def _spawn(code: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")])}
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_sigterm_during_download_leaves_nothing(server, tmp_path):
    server.routes["/slow.zip"] = Route(body=os.urandom(1 << 20), cut=5, stall=60)
    out = tmp_path / "data"
    proc = _spawn(f"from tempbench.cli import main; main(['fetch', 'tgb', '--url', {server.url('/slow.zip')!r}, "
                  f"'--out', {str(out)!r}])")
    try:
        _wait_for(lambda: _partial(out))
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    assert "terminated" in proc.stderr.read().decode()
    assert not out.exists()  # the data root this fetch created is removed again, left empty


def test_sigterm_during_extraction_leaves_nothing(tmp_path):
    archive = tmp_path / "r.zip"
    archive.write_bytes(_zip({**BENCH, "baselines/run.jsonl": os.urandom(4 << 20)}))
    out = tmp_path / "data"
    # the member is read slowly, so the signal arrives while it is being extracted
    code = ("import time, zipfile\n"
            "real = zipfile.ZipExtFile.read\n"
            "def slow(self, n=-1):\n"
            "    time.sleep(0.2)\n"
            "    return real(self, min(n, 1 << 16) if n and n > 0 else 1 << 16)\n"
            "zipfile.ZipExtFile.read = slow\n"
            "from tempbench.cli import main\n"
            f"main(['fetch', 'release', '--from', {str(archive)!r}, '--out', {str(out)!r}])\n")
    proc = _spawn(code)
    try:
        _wait_for(lambda: _partial(out))
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM
    assert _leftovers(out) == [] and _tree(out) == {}


def test_the_next_fetch_removes_what_a_killed_one_left(tmp_path):
    out = tmp_path / "data"
    # what kill -9 leaves: a staging folder, this version's and the previous version's, and part files
    for folder in (".tempbench-fetch-k1ll3d", ".tempbench-release-abc123"):
        (out / folder).mkdir(parents=True)
        (out / folder / "x.part").write_bytes(b"\0" * 1000)
    for name in (".tkgl-smallpedia.zip.a1b2c3d4.part", f".{KG_FILE}.zz9_abcd.part", ".tempbench.lock.q1w2e3r4.part"):
        (out / name).write_bytes(b"\0" * 1000)
    (out / ".my-notes").write_text("mine\n")              # not ours: kept
    (out / ".labels.tsv.abcdefgh.part").write_text("x\n")  # another command's: kept
    archive = tmp_path / "tgb.zip"
    archive.write_bytes(_zip({KG_FILE: CSV}))
    result = fetch_tgb(out, url=str(archive))
    assert sorted(p.name for p in out.iterdir()) == sorted([".my-notes", ".labels.tsv.abcdefgh.part", KG_FILE, LOCK])
    assert any("left by an interrupted fetch" in n for n in result.notes)


def test_two_fetches_into_one_root_do_not_run_at_once(server, tmp_path):
    server.routes["/slow.zip"] = Route(body=os.urandom(1 << 20), cut=5, stall=60)
    out = tmp_path / "data"
    proc = _spawn(f"from tempbench.cli import main; main(['fetch', 'tgb', '--url', {server.url('/slow.zip')!r}, "
                  f"'--out', {str(out)!r}])")
    try:
        _wait_for(lambda: _partial(out))
        archive = tmp_path / "tgb.zip"
        archive.write_bytes(_zip({KG_FILE: CSV}))
        with pytest.raises(FetchError, match="another 'tempbench fetch' is writing into"):
            fetch_tgb(out, url=str(archive))
        assert _partial(out)  # the running fetch's files were not touched
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        proc.kill()


# --- 4. inputs that are not what they claim --------------------------------------------------


def _cli_subprocess(*args: str, timeout: float = 30) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "tempbench.cli", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("what", ["tgb", "release"])
@pytest.mark.parametrize("source", ["/dev/zero", "file:///dev/zero", "fifo"])
def test_device_and_fifo_sources_are_refused(tmp_path, what, source):
    if source == "fifo":
        source = str(tmp_path / "pipe.zip")
        os.mkfifo(source)
    flag = "--url" if what == "tgb" else "--from"
    done = _cli_subprocess("fetch", what, flag, source, "--out", str(tmp_path / "data"))
    assert done.returncode == 2, done.stderr
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/tkgl-smallpedia.zip", "data:application/zip;base64,AAAA",
                                 "gopher://x/y"])
def test_other_url_schemes_are_refused(tmp_path, capsys, url):
    assert main(_fetch_cli("tgb", "--url", url, "--out", str(tmp_path / "data"))) == 2
    err = capsys.readouterr().err
    assert "http(s)" in err and "Traceback" not in err


# "²".isdigit() is true and int() refuses it; int() accepts "+12" and "1_000", which are not byte counts either.
@pytest.mark.parametrize("length", ["²", "12abc", "-1", " ", "1e3", "+12", "1_000", "12, 12"])
def test_a_content_length_that_is_not_a_number_is_a_clear_error(server, tmp_path, capsys, length):
    server.routes["/weird.zip"] = Route(body=_zip({KG_FILE: CSV}), length=length)
    url = server.url("/weird.zip")
    assert main(_fetch_cli("tgb", "--url", url, "--out", str(tmp_path / "data"))) == 2
    err = capsys.readouterr().err
    assert url in err and "Content-Length" in err and "internal error" not in err
    assert _leftovers(tmp_path / "data") == []


def test_redirects_go_only_to_http(server, tmp_path):
    # file:// redirects held before; ftp:// was followed by urllib
    for target in ("file:///etc/passwd", "ftp://127.0.0.1/x.zip"):
        server.routes["/redirect.zip"] = Route(status=302, location=target)
        with pytest.raises(FetchError, match=r"redirect.*only http\(s\)"):
            fetch_tgb(tmp_path / "data", url=server.url("/redirect.zip"))
    assert _leftovers(tmp_path / "data") == []


def test_a_stalled_server_is_a_timeout(server, tmp_path, capsys):
    server.routes["/stall.zip"] = Route(body=_zip({KG_FILE: CSV}) * 10, cut=10, stall=30)
    out = tmp_path / "data"
    started = time.monotonic()
    code = main(_fetch_cli("tgb", "--url", server.url("/stall.zip"), "--out", str(out), "--timeout", "0.5",
                           "--retries", "1"))
    assert code == 2 and time.monotonic() - started < 20
    err = capsys.readouterr().err
    assert "no data for 0.5 s" in err and "2 attempt(s)" in err
    assert _leftovers(out) == []


# --- 5. secrets ----------------------------------------------------------------------------


def test_tokens_and_passwords_are_never_stored_or_printed(server, tmp_path, capsys):
    import base64

    auth = "Basic " + base64.b64encode(b"alice:s3cr3tpw").decode()
    server.routes["/private.zip"] = Route(body=_zip({KG_FILE: CSV}), auth=auth)
    url = f"http://alice:s3cr3tpw@127.0.0.1:{server.port}/private.zip?token=T0KEN123&x=1"
    out = tmp_path / "data"
    assert main(_fetch_cli("tgb", "--url", url, "--out", str(out))) == 0
    assert (out / KG_FILE).read_bytes() == CSV  # the credentials were used, as HTTP Basic auth
    printed = capsys.readouterr()
    stored = "".join(p.read_text() for p in out.iterdir() if p.is_file() and p.name != KG_FILE)
    for text in (printed.out + printed.err, stored):
        assert "s3cr3tpw" not in text and "T0KEN123" not in text and "alice" not in text
    lock = json.loads((out / LOCK).read_text())
    assert lock["files"][KG_FILE]["source"] == f"http://127.0.0.1:{server.port}/private.zip?token=***&x=***"
    # and in error messages
    bad = f"http://bob:hunter22@127.0.0.1:{server.port}/missing.zip?sig=S1GNATURE"
    assert main(_fetch_cli("tgb", "--url", bad, "--out", str(tmp_path / "other"))) == 2
    err = capsys.readouterr().err
    assert "404" in err and "hunter22" not in err and "S1GNATURE" not in err and "bob" not in err
    # a malformed port echoes the netloc in urllib's own message
    assert main(_fetch_cli("tgb", "--url", "http://carol:pw9999x@127.0.0.1:notaport/x.zip",
                           "--out", str(tmp_path / "other"))) == 2
    assert "pw9999x" not in capsys.readouterr().err


def test_credentials_do_not_follow_a_redirect_to_another_host(server, tmp_path):
    server.routes["/moved.zip"] = Route(status=302, location=f"http://localhost:{server.port}/real.zip")
    server.routes["/real.zip"] = Route(body=_zip({KG_FILE: CSV}))
    fetch_tgb(tmp_path / "data", url=f"http://dave:pa55word@127.0.0.1:{server.port}/moved.zip")
    assert "authorization" in server.requests["/moved.zip"][0]
    assert "authorization" not in server.requests["/real.zip"][0]


def test_the_release_source_is_stored_masked(server, tmp_path):
    server.routes["/release.zip"] = Route(body=_zip(BENCH))
    out = tmp_path / "data"
    result = fetch_release(server.url("/release.zip?X-Amz-Signature=abcdef0123&X-Amz-Expires=300"), out)
    text = (out / LOCK).read_text() + " ".join(result.notes)
    assert "abcdef0123" not in text and "X-Amz-Signature=***" in text
    digest = hashlib.sha256(BENCH["benchmark/benchmark.jsonl"]).hexdigest()
    assert json.loads((out / LOCK).read_text())["files"]["benchmark/benchmark.jsonl"]["sha256"] == digest
