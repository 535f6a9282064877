"""Reading text input (JSON Lines, CSV, TSV) with errors that name the file and the physical line.

Every input file may also be gzip-compressed: a name ending in ``.gz`` is read
through :mod:`gzip` transparently (SPEC §1.5 names, plus ``.gz``), so line
numbers and messages are those of the decompressed text. A truncated or corrupt
gzip stream is an :class:`~tempbench_core.errors.InputError`, never a traceback.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import zlib
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from tempbench_core.errors import InputError, MissingDataError
from tempbench_core.text import lone_surrogate

GZIP_SUFFIX = ".gz"
#: What a damaged gzip stream raises while it is read (bad header, bad data, cut short).
GZIP_ERRORS = (gzip.BadGzipFile, EOFError, zlib.error)


#: JSON's names of the types :mod:`json` reads into Python.
_JSON_NAMES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean",
               type(None): "null"}


def json_type(value: Any) -> str:
    """JSON's name of a decoded value's type (``object``, ``array``, ``null``, ...), for messages."""
    return _JSON_NAMES.get(type(value), type(value).__name__)


def is_gzip(path: str | Path) -> bool:
    """Whether ``path`` is read through gzip: its name ends in ``.gz`` (any case)."""
    return Path(path).name.lower().endswith(GZIP_SUFFIX)


def plain_name(path: str | Path) -> str:
    """The file name without a trailing ``.gz`` (``labels.json.gz`` -> ``labels.json``)."""
    name = Path(path).name
    return name[: -len(GZIP_SUFFIX)] if is_gzip(name) else name


def _dangling(path: Path) -> str:
    """Why a path that does not exist may still be listed: a symbolic link to nothing, or in a loop of links."""
    if not path.is_symlink():
        return ""
    try:
        path.resolve(strict=True)
    except RuntimeError:
        return " (a symbolic link in a loop of links)"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return " (a symbolic link in a loop of links)"
    return f" (a symbolic link to {os.readlink(path)}, which does not exist)"


def require_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as a :class:`~pathlib.Path` when it is a regular file, else a clear user error.

    Missing: :class:`MissingDataError`. A directory, a FIFO, a device or
    ``/dev/stdin``: :class:`InputError` naming the path (inputs are read more
    than once, and a pipe can be read only once).
    """
    path = Path(path)
    if not path.exists():
        raise MissingDataError(f"{what} not found: {path}{_dangling(path)}")
    if path.is_dir():
        raise InputError(path, None, "is a directory, not a file", f"a {what}")
    if not path.is_file():
        raise InputError(path, None, "is not a regular file (a pipe, a device or /dev/stdin cannot be read here)",
                         f"a {what} on disk")
    return path


def require_dir(path: str | Path, what: str = "folder") -> Path:
    """``path`` as a :class:`~pathlib.Path` when it is a folder, else a clear user error (missing, or a file)."""
    path = Path(path)
    if not path.exists():
        raise MissingDataError(f"{what} not found: {path}{_dangling(path)}")
    if not path.is_dir():
        raise InputError(path, None, "is a file, not a folder", f"a {what}")
    return path


#: Read buffer of a plain input file. Run and benchmark lines are kilobytes long: with the default 8 KiB a line
#: read by line iteration spans several refills, each joined into the line; 64 KiB reads them ~4x faster.
_READ_BUFFER = 1 << 16


def open_input(path: str | Path) -> IO[bytes]:
    """Open an input file for binary reading, decompressing a ``.gz`` file on the fly."""
    return gzip.open(path, "rb") if is_gzip(path) else open(path, "rb", buffering=_READ_BUFFER)


def gzip_problem(exc: BaseException) -> str:
    """One-line description of a gzip read failure, for :class:`InputError` messages."""
    if isinstance(exc, EOFError):
        return "gzip stream ends early (truncated file)"
    return f"corrupt gzip stream ({exc})"


def _broken_gzip(path: str | Path, line: int | None, exc: BaseException) -> InputError:
    """The error of a gzip stream that could not be read to its end (``line``: where it broke off, when known)."""
    return InputError(path, line, gzip_problem(exc), "a complete gzip file")


def _read_input(path: str | Path, read: Callable[[IO[bytes]], Any]) -> Any:
    """``read(handle)`` on the opened input; a gzip failure is an :class:`InputError` naming the file."""
    try:
        with open_input(path) as handle:
            return read(handle)
    except GZIP_ERRORS as exc:
        raise _broken_gzip(path, None, exc) from None


def read_input_bytes(path: str | Path) -> bytes:
    """The whole (decompressed) content of an input file."""
    return _read_input(path, lambda handle: handle.read())


def iter_input_lines(path: str | Path) -> Generator[bytes, None, None]:
    """The (decompressed) lines of an input file as bytes, one at a time, each with its ``b"\\n"``.

    For readers that keep no line longer than they need it; a damaged gzip
    stream raises :class:`InputError` naming the file where it breaks off.
    """
    try:
        with open_input(path) as handle:
            yield from handle
    except GZIP_ERRORS as exc:
        raise _broken_gzip(path, None, exc) from None


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
                raise _broken_gzip(path, number + 1, exc) from None
            if item is None:
                return
            number, raw = item
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(path, number, f"invalid UTF-8 at byte {exc.start} of the line", "UTF-8 text") from None
            yield number, text


# -- fast JSON with the standard library's exact results -------------------------------------------
#
# orjson parses and writes JSON about ten times faster than the standard library,
# and agrees with it except in a few places, each of which is routed to the
# standard library here so that results stay exactly Python's:
#
# * writing: orjson prints floats below 1e-4 differently (``0.00001`` and
#   ``1e-7`` where Python writes ``1e-05`` and ``1e-07``; above they agree, also
#   in exponent form, ``1e+16``) and NaN/infinity as ``null``: any output
#   containing ``0.0000``, ``e-`` or ``null`` is redone by :func:`json.dumps` (a
#   string that contains them only costs that redo; plain substring tests, much
#   cheaper than a regular expression). Integers beyond 64 bits, float
#   subclasses, non-string keys and lone surrogates make orjson raise: also redone.
# * reading: orjson reads integers beyond 64 bits as floats, and refuses
#   ``NaN``/``Infinity``, ``1e400``, lone surrogate escapes and invalid UTF-8; a
#   line with a run of 19 digits, or one orjson refuses, is read by
#   :func:`json.loads` (which also builds the error message).

# every digit to "0", so that a run of 19 digits is one fast substring test (a regular
# expression scans ten times slower)
_DIGITS_TO_ZERO = bytes(48 if 48 <= i <= 57 else i for i in range(256))
_LONG_RUN = b"0" * 19


def has_long_int(raw: bytes) -> bool:
    """Whether ``raw`` has a run of 19 digits (an integer orjson might read as a float)."""
    return _LONG_RUN in raw.translate(_DIGITS_TO_ZERO)


# Where orjson's floats are written otherwise than Python's repr: below 1e-4 it writes
# 0.00001 (Python: 1e-05) or a one-digit exponent, 2.5e-7 (Python: 2.5e-07). Text that merely
# looks so (a label "type-1") only costs a fallback.
_FLOAT_FORM_DIFFERS = re.compile(rb"0\.0000|e-\d(?!\d)")


_NEGATIVE_EXPONENT = re.compile(rb"e-\d(?!\d)")


def _float_form_differs(out: bytes) -> bool:
    """Whether ``out`` matches :data:`_FLOAT_FORM_DIFFERS`.

    Substring scans instead of a regular-expression scan of the whole text:
    only where ``e-`` occurs (in a label, "Saint-Jean") is the rest tested.
    """
    if b"0.0000" in out:
        return True
    at = out.find(b"e-")
    while at >= 0:
        if _NEGATIVE_EXPONENT.match(out, at):
            return True
        at = out.find(b"e-", at + 2)
    return False


# -- strict JSON out ------------------------------------------------------------------------------
#
# Every JSON the project writes is strict JSON (RFC 8259): Python's json.dumps writes a
# NaN or an infinity as the tokens NaN / Infinity, which no other JSON reader accepts
# (a browser's JSON.parse, jq, orjson). Here such a value is written ``null``, JSON's "no
# value", the same as a metric without a value; where every float is finite the bytes
# are json.dumps's. (Impossible published numbers are refused, or marked, where they are
# read: eval.metric_tables. This is the writers' guarantee, whatever reaches them.)


def _dumps(obj: Any, **options: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False, **options)``, with every NaN or infinity written ``null``."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False, **options)
    except ValueError as exc:
        if "Out of range float" not in str(exc):  # e.g. a circular reference: not ours to map
            raise
    return json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False, **options)


def dumps_json(obj: Any, indent: int | None = 2) -> str:
    """The project's JSON document writer: ``json.dumps(obj, indent=indent, ensure_ascii=False)``, strict.

    Key order is insertion order; a NaN or infinity is written ``null``
    (see above). The bytes of every finite document are json.dumps's.
    """
    return _dumps(obj, indent=indent)


def terminal_json(obj: Any, indent: int | None = 2) -> str:
    """:func:`dumps_json` for a terminal: also every character json leaves raw that drives one.

    JSON escapes the C0 controls itself; DEL, the C1 controls, the line
    separators, the bidirectional overrides and lone surrogates it writes as
    they are (``ensure_ascii=False``). They are written as ``\\uXXXX`` escapes:
    the same JSON value, nothing raw on the terminal.
    """
    text = dumps_json(obj, indent)
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: What :func:`terminal_json` escapes (the C0 controls never reach it: JSON escapes them).
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def dumps_compact(obj: Any) -> str:
    """``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))``, byte for byte, faster; strict JSON.

    Key order is insertion order, floats are Python's shortest ``repr``; a NaN
    or infinity is written ``null`` (strict JSON, as :func:`dumps_json`).
    """
    out = _orjson_compact(obj)
    return _dumps(obj, separators=(",", ":")) if out is None else out.decode("utf-8")


def dumps_compact_bytes(obj: Any, floats_alike: bool = False) -> bytes:
    """:func:`dumps_compact` as UTF-8 bytes, for a writer of bytes (no text decoded only to be encoded again).

    ``floats_alike``: the caller knows that every float of ``obj`` is ``0.0``,
    of magnitude at least ``1e-4``, or not finite. orjson then writes what
    :func:`dumps_compact` writes (strings, integers, ``None`` and such floats
    alike: a NaN or infinity is ``null`` in both), so its output is taken
    without scanning it for the forms where the two differ.
    """
    if floats_alike:
        try:
            return orjson.dumps(obj)
        except (TypeError, orjson.JSONEncodeError):
            pass  # e.g. an integer beyond 64 bits: the standard library's bytes, below
    out = _orjson_compact(obj)
    return _dumps(obj, separators=(",", ":")).encode("utf-8") if out is None else out


def _orjson_compact(obj: Any) -> bytes | None:
    """orjson's bytes of ``obj`` when they are :func:`dumps_compact`'s, else ``None`` (the caller falls back)."""
    try:
        out = orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        return None
    # null: a None, or a NaN/infinity (orjson writes those null too; json.dumps would write NaN)
    if b"null" in out or _float_form_differs(out):
        return None
    return out


def dumps_strict(obj: Any) -> str:
    """:func:`dumps_compact`, except that a NaN or infinity is written ``null`` (valid JSON; json.dumps writes ``NaN``).

    For JSON read by a browser's ``JSON.parse``, which rejects ``NaN``. Where
    every float is finite these are :func:`dumps_compact`'s bytes, and a
    ``None`` costs no fallback.
    """
    return dumps_strict_bytes(obj).decode("utf-8")


def dumps_strict_bytes(obj: Any) -> bytes:
    """:func:`dumps_strict` as UTF-8 bytes (what orjson makes, without decoding a large text only to encode it again)."""
    try:
        out = orjson.dumps(obj)
    except (TypeError, orjson.JSONEncodeError):
        out = None
    if out is None or _float_form_differs(out):
        return _dumps(obj, separators=(",", ":")).encode("utf-8")
    return out


def dumps_fragment_bytes(obj: Any) -> bytes:
    """orjson's compact bytes of ``obj``: a piece of a document that :func:`dumps_strict_bytes` writes whole.

    Not checked here on purpose: the document's writer scans its whole text,
    pieces included (as an ``orjson.Fragment``), for the forms where orjson and
    ``json`` differ, and the document is written by ``json`` when one occurs.
    numpy arrays are written as lists.
    """
    return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY)


def _finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinity replaced by ``None`` (tuples become lists, as JSON writes them)."""
    # isinstance, not type: numpy's float64 is a float subclass, and json writes it as a float
    if isinstance(obj, float):
        return obj if obj - obj == 0 else None
    if isinstance(obj, (list, tuple)):
        return [_finite(x) for x in obj]
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    return obj


def loads_fast(data: bytes | str) -> Any:
    """``json.loads(data)`` (same values and types, same errors), faster."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if not has_long_int(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


def _parse_text(path: Path, number: int, line: str) -> Any:
    """One decoded line through :func:`json.loads`, errors naming file and line."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        problem = "truncated JSON" if not line.endswith("\n") else f"not valid JSON ({exc.msg})"
        raise InputError(path, number, problem, "one JSON object per line") from None
    except (ValueError, RecursionError) as exc:  # a >4300-digit integer, absurd nesting
        raise InputError(path, number, f"unreadable JSON ({type(exc).__name__}: {exc})", "one JSON object per line") from None
    refuse_lone_surrogates(path, number, value, line)
    return value


#: A ``\\uD800``-``\\uDFFF`` escape, the only way a JSON text can hold a lone surrogate (UTF-8
#: decoding refuses encoded ones): only a text with one needs to be walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def refuse_lone_surrogates(path: str | Path, line: int | None, value: Any, text: str | bytes) -> None:
    """An :class:`InputError` when decoded JSON ``value`` (from ``text``) holds a lone surrogate.

    Every JSON input is read under this rule (JSON Lines here; whole-file JSON
    by its readers): such a string is not text, and it would fail only when a
    run, a label file or a report is written, as an ``UnicodeEncodeError`` far
    from its cause. The message names the file, the line and the key path.
    Valid pairs (``\\ud83d\\ude00``) are text and pass.
    """
    raw = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if _SURROGATE_ESCAPE.search(raw) is None:
        return
    hit = lone_surrogate(value)
    if hit is not None:
        where, escape = hit
        subject = where if where.startswith("the key") or where == "a string" else f"the field '{where}'"
        raise InputError(path, line, f"{subject} holds a lone surrogate escape {escape}, which is not text",
                         "Unicode text: a \\ud800-\\udfff escape only as one half of a pair")


def _fast_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of the non-blank lines of a plain file, exactly as the careful path reads them.

    orjson reads each line's raw bytes; a line it refuses or might read
    differently (see above) is decoded and parsed as :func:`physical_lines` and
    :func:`json.loads` would, so values and error messages are the same.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    risky = has_long_int(data)  # one test for the whole file, then per line only when needed
    parts = data.split(b"\n")
    last = len(parts) - 1
    for i, raw in enumerate(parts):
        number = i + 1
        if i == 0 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if i == last and not raw:
            return
        if not (risky and has_long_int(raw)):
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError:
                pass
            else:
                yield number, value
                continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(path, number, f"invalid UTF-8 at byte {exc.start} of the line", "UTF-8 text") from None
        if i < last:
            text += "\n"
        if not text.strip():
            continue
        yield number, _parse_text(path, number, text)


#: JSON's whitespace (RFC 8259): what may follow a JSON document's one value.
_JSON_SPACE = b" \t\n\r"


def first_of_several(path: str | Path) -> Any:
    """Line 1's value, as :func:`read_jsonl` yields it first, when the file is no single JSON document; else ``None``.

    Read from the head of the file only: line 1 must be non-blank and read by
    orjson (as :func:`_fast_jsonl` reads it: no run of 19 digits, a UTF-8 BOM
    dropped), and some byte other than JSON whitespace must follow it, so that
    the whole file cannot be read as one JSON value. ``None`` when it cannot
    tell (a ``.gz`` file, line 1 blank or left to the careful path, nothing
    after it); the caller then reads the file as before.
    """
    if is_gzip(path):
        return None
    with open(path, "rb") as handle:
        raw = handle.readline()
        if raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.endswith(b"\n") or not raw.strip(_JSON_SPACE) or has_long_int(raw):
            return None
        try:
            value = orjson.loads(raw[:-1])
        except orjson.JSONDecodeError:
            return None
        while chunk := handle.read(1 << 16):
            if chunk.strip(_JSON_SPACE):
                return value
    return None


def read_jsonl(path: str | Path, objects_only: bool = True) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded JSON)`` for each non-blank line of ``path``.

    The file is read as bytes and split on ``b"\\n"`` only, so line numbers are
    physical lines (text mode would also break on a lone ``"\\r"``); a UTF-8 BOM
    on line 1 and CRLF endings are accepted; bad UTF-8, malformed or truncated
    JSON, and (with ``objects_only``) a line that is not a JSON object raise
    :class:`InputError` with the file and line. A plain file is parsed with
    orjson (:func:`_fast_jsonl`, the same values), a ``.gz`` file line by line
    with :mod:`json`.
    """
    path = require_file(path, "JSONL file")
    lines = _fast_jsonl(path) if not is_gzip(path) else (
        (number, _parse_text(path, number, line)) for number, line in physical_lines(path) if line.strip())
    for number, obj in lines:
        if objects_only and not isinstance(obj, dict):
            raise InputError(path, number, f"a JSON {json_type(obj)}, not an object", "one JSON object per line")
        yield number, obj
