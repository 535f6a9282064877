"""Fingerprints: sha256 of a file's bytes and of a JSON-serialisable value."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from tempbench_core.jsonl import dumps_json
from tempbench_core.layout import cache_home


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in chunks.

    Remembered by path, size, modification time, change time and inode: per
    process, so the several checks of one command read a large input once, and
    across processes in the per-user cache (``digests/``), so a command that
    only needs the fingerprint of a 300 MB edge list it has seen does not read
    it again. The change time cannot be set back by a user: a file rewritten
    in any way is hashed again.
    """
    resolved = str(Path(path).resolve())
    stat = os.stat(resolved)
    key = (resolved, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino)
    known = _SEEN.get(key)
    if known is None:
        known = _remembered(key)
    if known is None:
        digest = hashlib.sha256()
        with open(resolved, "rb") as handle:
            while block := handle.read(chunk):
                digest.update(block)
        known = digest.hexdigest()
        _remember(key, known)
    _SEEN[key] = known
    return known


_SEEN: dict[tuple[str, int, int, int, int], str] = {}
#: Files smaller than this are hashed again rather than looked up (reading them costs less).
_REMEMBERED_FROM = 1 << 22


def _memo_path(resolved: str) -> Path:
    return cache_home() / "digests" / (hashlib.sha256(resolved.encode("utf-8", "surrogatepass")).hexdigest() + ".json")


def _remembered(key: tuple[str, int, int, int, int]) -> str | None:
    if key[1] < _REMEMBERED_FROM:
        return None
    try:
        stored = json.loads(_memo_path(key[0]).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("stat") != list(key):
        return None
    digest = stored.get("sha256")
    return digest if isinstance(digest, str) and len(digest) == 64 else None


def _remember(key: tuple[str, int, int, int, int], digest: str) -> None:
    if key[1] < _REMEMBERED_FROM:
        return
    target = _memo_path(key[0])
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".digest.", dir=target.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dumps_json({"stat": list(key), "sha256": digest}, indent=None))
        os.replace(tmp, target)
    except OSError:
        pass  # a read-only cache: the digest is only not remembered


def sha256_json(value: Any) -> str:
    """Hex sha256 of ``value`` as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
