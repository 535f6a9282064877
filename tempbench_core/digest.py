"""Fingerprints: sha256 of a file's bytes and of a JSON-serialisable value."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes, read in chunks.

    Remembered per process by path, size and modification time, so the several
    checks of one command read a large input once.
    """
    stat = os.stat(path)
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)
    known = _SEEN.get(key)
    if known is None:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            while block := handle.read(chunk):
                digest.update(block)
        known = _SEEN[key] = digest.hexdigest()
    return known


_SEEN: dict[tuple[str, int, int], str] = {}


def sha256_json(value: Any) -> str:
    """Hex sha256 of ``value`` as canonical JSON (sorted keys)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
