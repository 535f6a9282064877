"""``tempbench fetch`` against a real HTTP server on 127.0.0.1 started by the test (issue 13).

Never the internet: the server is :mod:`http.server` in a thread, serving
archives the test builds in memory; it counts the requests it answers, so
idempotence is measured as "no second request", and it can answer 404, send a
corrupt archive, or close the connection in the middle of the body.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tempbench.cli import main
from tempbench.fetch import TGB_URL, FetchError, fetch_release, fetch_tgb
from tempbench_core.layout import KG_FILE, PROVENANCE

CSV = b"ts,head,tail,relation_type\n1990,Q1,Q2,P1\n1991,Q2,Q3,P2\n"


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


class _Server:
    """Routes: path -> (status, body, mode); mode "cut" sends half the body under the full length."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, bytes, str]] = {}
        self.hits: dict[str, int] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                outer.hits[self.path] = outer.hits.get(self.path, 0) + 1
                status, body, mode = outer.routes.get(self.path, (404, b"", "full"))
                if status != 200:
                    self.send_error(status)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if mode == "cut":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True  # the server hangs up in mid-body
                    return
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return self.base + path

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture()
def server():
    srv = _Server()
    good = _zip({KG_FILE: CSV, "tkgl-smallpedia_static_edgelist.csv": b"x\n", "tkgl-smallpedia_val_ns.pkl": b"\0"})
    srv.routes.update({
        "/tkgl-smallpedia.zip": (200, good, "full"),
        "/garbage.zip": (200, b"this is not an archive at all" * 100, "full"),
        "/crc.zip": (200, _crc_broken(good, CSV * 50), "full"),
        "/nomember.zip": (200, _zip({"something_else.csv": CSV}), "full"),
        "/cut.zip": (200, good + b"\0" * 200_000, "cut"),
        "/nested.tar.gz": (200, _targz({"tkgl_smallpedia/" + KG_FILE: CSV}), "full"),
        "/release.zip": (200, _zip(RELEASE_FILES), "full"),
        "/release.tar.gz": (200, _targz(RELEASE_FILES), "full"),
        "/not-a-release.zip": (200, _zip({"README.md": b"x"}), "full"),
    })
    srv.good = good
    yield srv
    srv.close()


def _leftovers(out: Path) -> list[str]:
    """Temporary files a fetch might have left (everything hidden, or ending in .part)."""
    return sorted(p.name for p in out.rglob("*") if p.name.startswith(".") or p.name.endswith(".part"))


def test_default_url_is_tgbs_own():
    # tgb/utils/info.py DATA_URL_DICT["tkgl-smallpedia"] in the TGB repository.
    assert TGB_URL == "https://object-arbutus.cloud.computecanada.ca/tgb/tkgl-smallpedia.zip"


def test_fetch_tgb_success_then_idempotent(server, tmp_path):
    out = tmp_path / "data"
    url = server.url("/tkgl-smallpedia.zip")
    result = fetch_tgb(out, url=url)
    assert result.downloaded and (out / KG_FILE).read_bytes() == CSV
    # only the edge list is extracted; nothing temporary is left
    assert sorted(p.name for p in out.iterdir()) == sorted([KG_FILE, PROVENANCE])
    prov = json.loads((out / PROVENANCE).read_text())["tgb"]
    assert prov["source"] == url and prov["member"] == KG_FILE
    assert prov["archive"] == {"name": "tkgl-smallpedia.zip", "bytes": len(server.good),
                               "sha256": hashlib.sha256(server.good).hexdigest()}
    assert prov["files"][KG_FILE] == {"bytes": len(CSV), "sha256": hashlib.sha256(CSV).hexdigest()}
    assert server.hits["/tkgl-smallpedia.zip"] == 1

    again = fetch_tgb(out, url=url)
    assert not again.downloaded
    assert server.hits["/tkgl-smallpedia.zip"] == 1  # no second request
    assert json.loads((out / PROVENANCE).read_text())["tgb"] == prov


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
        ("/cut.zip", r"interrupted: received [\d,]+ of [\d,]+ bytes"),
    ],
)
def test_fetch_tgb_failures_leave_nothing(server, tmp_path, path, pattern):
    out = tmp_path / "data"
    url = server.url(path)
    with pytest.raises(FetchError, match=pattern) as info:
        fetch_tgb(out, url=url)
    assert url in str(info.value)
    assert not (out / KG_FILE).exists() and not (out / PROVENANCE).exists()
    assert _leftovers(out) == []


def test_fetch_tgb_cli_exit_codes(server, tmp_path, capsys):
    out = tmp_path / "data"
    assert main(["fetch", "tgb", "--url", server.url("/missing.zip"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert server.url("/missing.zip") in err and "404" in err and "Traceback" not in err
    assert main(["fetch", "tgb", "--url", server.url("/cut.zip"), "--out", str(out)]) == 2
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
    assert json.loads((out / PROVENANCE).read_text())["tgb"]["member"] == "tkgl_smallpedia/" + KG_FILE
    local = tmp_path / "tkgl-smallpedia.zip"
    local.write_bytes(server.good)
    out2 = tmp_path / "b"
    assert fetch_tgb(out2, url=str(local)).downloaded and (out2 / KG_FILE).read_bytes() == CSV
    assert not fetch_tgb(out2, url=str(local)).downloaded


def _expected_layout() -> dict[str, bytes]:
    strip = "tempbench-v1.0.1/"
    keep = {k[len(strip):]: v for k, v in RELEASE_FILES.items() if not k.endswith(("README.md", ".py"))}
    return keep


def _tree(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*")
            if p.is_file() and p.name != PROVENANCE}


def test_fetch_release_from_url_zip_and_tar(server, tmp_path):
    for route in ("/release.zip", "/release.tar.gz"):
        out = tmp_path / route.strip("/").replace(".", "_")
        result = fetch_release(server.url(route), out)
        assert result.downloaded and _tree(out) == _expected_layout()
        prov = json.loads((out / PROVENANCE).read_text())["release"]
        assert prov["left_out"] == 2 and prov["files"]["benchmark/benchmark.jsonl"]["sha256"] == hashlib.sha256(
            RELEASE_FILES["tempbench-v1.0.1/benchmark/benchmark.jsonl"]).hexdigest()
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


def test_fetch_release_failures(server, tmp_path):
    out = tmp_path / "data"
    with pytest.raises(FetchError, match="not a TempBench release"):
        fetch_release(server.url("/not-a-release.zip"), out)
    with pytest.raises(FetchError, match="HTTP error 404"):
        fetch_release(server.url("/nope.zip"), out)
    with pytest.raises(FetchError, match="interrupted"):
        fetch_release(server.url("/cut.zip"), out)
    with pytest.raises(FetchError, match="no such file or folder"):
        fetch_release(str(tmp_path / "absent"), out)
    assert _leftovers(out) == [] and not any(out.iterdir())
    assert main(["fetch", "release", "--from", server.url("/nope.zip"), "--out", str(out)]) == 2
