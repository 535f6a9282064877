"""Run files (SPEC §6.1): ``<name>.jsonl`` plus ``<name>.meta.json``.

One JSON object per line, compact separators, UTF-8 (``ensure_ascii=False``),
keys in the order the retriever builds them, floats as Python's shortest
round-trip ``repr``: the same run always gives the same bytes. Both files are
written atomically (:mod:`tempbench.core.atomic`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tempbench.core.atomic import atomic_open, write_json
from tempbench.core.errors import InputError


def dumps_record(record: dict[str, Any]) -> str:
    """One run-file line (with its trailing newline)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def meta_path(run_path: str | Path) -> Path:
    """``runs/oracle.jsonl`` -> ``runs/oracle.meta.json``."""
    path = Path(run_path)
    stem = path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name
    return path.with_name(stem + ".meta.json")


def write_run(path: str | Path, records: Iterable[dict[str, Any]]) -> int:
    """Write run records atomically; returns the number written."""
    n = 0
    with atomic_open(path, "w") as handle:
        for record in records:
            handle.write(dumps_record(record))
            n += 1
    return n


def write_meta(run_path: str | Path, meta: dict[str, Any]) -> Path:
    """Write the run's metadata beside it, atomically."""
    target = meta_path(run_path)
    write_json(target, meta)
    return target


def read_run(path: str | Path) -> list[dict[str, Any]]:
    """Records of a run file written by :func:`write_run` (errors name file and line)."""
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, number, f"not valid JSON ({exc.msg})", "one JSON object per line") from None
            if not isinstance(record, dict):
                raise InputError(path, number, "not a JSON object", "one JSON object per line")
            records.append(record)
    return records


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()
