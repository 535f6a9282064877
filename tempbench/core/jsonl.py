"""Reading JSON Lines input with errors that name the file and the physical line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tempbench.core.errors import InputError, MissingDataError


def physical_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(1-based physical line number, decoded line)``; BOM dropped from line 1.

    Bytes are split on ``b"\\n"`` only, so numbers match what an editor shows;
    bad UTF-8 raises :class:`InputError` naming the line.
    """
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(path, number, f"invalid UTF-8 at byte {exc.start} of the line", "UTF-8 text") from None


def read_jsonl(path: str | Path, objects_only: bool = True) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded JSON)`` for each non-blank line of ``path``.

    The file is read as bytes and split on ``b"\\n"`` only, so line numbers are
    physical lines (text mode would also break on a lone ``"\\r"``); a UTF-8 BOM
    on line 1 and CRLF endings are accepted; bad UTF-8, malformed or truncated
    JSON, and (with ``objects_only``) a line that is not a JSON object raise
    :class:`InputError` with the file and line.
    """
    path = Path(path)
    if not path.exists():
        raise MissingDataError(f"file not found: {path}")
    if not path.is_file():
        raise InputError(path, None, "is a directory, not a file", "a JSONL file")
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
