"""Atomic file output: write to a temporary file beside the target, then rename.

An interrupted run therefore never leaves a file under the final name that looks
complete: either the old file (or none) is there, or the whole new one. The new
file gets the permissions the user's umask gives a new file (a temporary file
starts private), and a failure while writing (a full disk, text that cannot be
encoded) is an :class:`~tempbench_core.errors.OutputError` naming the target,
never the temporary ``.part`` name, with nothing left behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from tempbench_core.errors import OutputError
from tempbench_core.jsonl import dumps_compact, dumps_json


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8", fsync: bool = True) -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that it appears only when the block succeeds.

    ``fsync=False`` skips forcing the bytes to disk before the rename: for
    scratch files whose content is verified when read back (a run's shards
    carry their sha256), where a crash can at worst cost a recomputation.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    except OSError as exc:
        raise OutputError(target, exc.strerror or str(exc)) from None
    binary = "b" in mode
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "\n") as handle:
            yield handle
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~_umask())
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        if isinstance(exc, UnicodeEncodeError):
            bad = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else ""
            raise OutputError(target, f"text that cannot be written as {encoding} ({bad!r}, e.g. a lone surrogate "
                                      "from an input escape such as \\ud800)") from None
        if isinstance(exc, OSError) and not isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
            raise OutputError(target, exc.strerror or str(exc)) from None  # a full disk, an I/O error
        raise


def _umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (UTF-8, ``\\n`` line endings)."""
    with atomic_open(path, "w") as handle:
        handle.write(text)


def write_json(path: str | Path, obj: Any, indent: int | None = 2) -> None:
    """Write ``obj`` as strict JSON atomically (:func:`~tempbench_core.jsonl.dumps_json`: a NaN or infinity is
    ``null``), keys in insertion order, trailing newline."""
    write_text(path, dumps_json(obj, indent=indent) + "\n")


def write_jsonl(path: str | Path, records: Any) -> None:
    """Write an iterable of JSON-serialisable records, one per line, atomically."""
    with atomic_open(path, "w") as handle:
        for record in records:
            handle.write(dumps_compact(record))
            handle.write("\n")
