"""sha256 of an input remembered across processes (tempbench_core.digest): used while the file is unchanged, never after."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

from tempbench_core import digest


def test_a_large_file_is_hashed_once_and_again_when_it_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("TEMPBENCH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "big.csv"
    data = os.urandom(digest._REMEMBERED_FROM + 10)
    path.write_bytes(data)
    first = digest.sha256_file(path)
    assert first == hashlib.sha256(data).hexdigest()
    assert list((tmp_path / "cache" / "digests").glob("*.json"))
    # another process reads the remembered digest without reading the file
    code = ("import sys, builtins; from tempbench_core import digest; real = builtins.open\n"
            "def guard(p, *a, **k):\n"
            "    assert 'big.csv' not in str(p), 'the file was read again'\n"
            "    return real(p, *a, **k)\n"
            "builtins.open = guard; print(digest.sha256_file(sys.argv[1]))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                         env=dict(os.environ, TEMPBENCH_CACHE=str(tmp_path / "cache")), check=True)
    assert out.stdout.strip() == first
    # the same size and modification time, other bytes: the change time differs, so it is hashed again
    stat = path.stat()
    changed = bytes([data[0] ^ 1]) + data[1:]
    path.write_bytes(changed)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    digest._SEEN.clear()
    assert digest.sha256_file(path) == hashlib.sha256(changed).hexdigest() != first
