"""Reading text input (JSON Lines, CSV, TSV) with errors that name the file and the physical line.

Every input file may also be gzip-compressed: a name ending in ``.gz`` is read
through :mod:`gzip` transparently (SPEC §1.5 names, plus ``.gz``), so line
numbers and messages are those of the decompressed text. A truncated or corrupt
gzip stream is an :class:`~tempbench.core.errors.InputError`, never a traceback.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from tempbench.core.errors import InputError, MissingDataError

GZIP_SUFFIX = ".gz"
#: What a damaged gzip stream raises while it is read (bad header, bad data, cut short).
GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


def is_gzip(path: str | Path) -> bool:
    """Whether ``path`` is read through gzip: its name ends in ``.gz`` (any case)."""
    return Path(path).name.lower().endswith(GZIP_SUFFIX)


def plain_name(path: str | Path) -> str:
    """The file name without a trailing ``.gz`` (``labels.json.gz`` -> ``labels.json``)."""
    name = Path(path).name
    return name[: -len(GZIP_SUFFIX)] if is_gzip(name) else name


def require_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as a :class:`~pathlib.Path` when it is a regular file, else a clear user error.

    Missing: :class:`MissingDataError`. A directory, a FIFO, a device or
    ``/dev/stdin``: :class:`InputError` naming the path (inputs are read more
    than once, and a pipe can be read only once).
    """
    path = Path(path)
    if not path.exists():
        raise MissingDataError(f"{what} not found: {path}")
    if path.is_dir():
        raise InputError(path, None, "is a directory, not a file", f"a {what}")
    if not path.is_file():
        raise InputError(path, None, "is not a regular file (a pipe, a device or /dev/stdin cannot be read here)",
                         f"a {what} on disk")
    return path


def open_input(path: str | Path) -> IO[bytes]:
    """Open an input file for binary reading, decompressing a ``.gz`` file on the fly."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")


def gzip_problem(exc: BaseException) -> str:
    """One-line description of a gzip read failure, for :class:`InputError` messages."""
    if isinstance(exc, EOFError):
        return "gzip stream ends early (truncated file)"
    return f"corrupt gzip stream ({exc})"


def read_input_bytes(path: str | Path) -> bytes:
    """The whole (decompressed) content of an input file."""
    try:
        with open_input(path) as handle:
            return handle.read()
    except GZIP_ERRORS as exc:
        raise InputError(path, None, gzip_problem(exc), "a complete gzip file") from None


def physical_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(1-based physical line number, decoded line)``; BOM dropped from line 1.

    Bytes are split on ``b"\\n"`` only, so numbers match what an editor shows;
    bad UTF-8 raises :class:`InputError` naming the line. A ``.gz`` file is
    decompressed on the fly; a damaged stream raises :class:`InputError` naming
    the line where it broke off.
    """
    number = 0
    with open_input(path) as handle:
        lines = enumerate(handle, start=1)
        while True:
            try:
                item = next(lines, None)
            except GZIP_ERRORS as exc:
                raise InputError(path, number + 1, gzip_problem(exc), "a complete gzip file") from None
            if item is None:
                return
            number, raw = item
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(path, number, f"invalid UTF-8 at byte {exc.start} of the line", "UTF-8 text") from None
            yield number, text


def read_jsonl(path: str | Path, objects_only: bool = True) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded JSON)`` for each non-blank line of ``path``.

    The file is read as bytes and split on ``b"\\n"`` only, so line numbers are
    physical lines (text mode would also break on a lone ``"\\r"``); a UTF-8 BOM
    on line 1 and CRLF endings are accepted; bad UTF-8, malformed or truncated
    JSON, and (with ``objects_only``) a line that is not a JSON object raise
    :class:`InputError` with the file and line.
    """
    path = require_file(path, "JSONL file")
    for number, line in physical_lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problem = "truncated JSON" if not line.endswith("\n") else f"not valid JSON ({exc.msg})"
            raise InputError(path, number, problem, "one JSON object per line") from None
        except (ValueError, RecursionError) as exc:  # a >4300-digit integer, absurd nesting
            raise InputError(path, number, f"unreadable JSON ({type(exc).__name__}: {exc})", "one JSON object per line") from None
        if objects_only and not isinstance(obj, dict):
            raise InputError(path, number, f"a JSON {type(obj).__name__}, not an object", "one JSON object per line")
        yield number, obj
