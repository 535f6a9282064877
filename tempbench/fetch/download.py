"""One http(s) download into a file, bounded, retried, resumed (issue 24 item 1; issue 25 classes 2, 4, 5).

:func:`download` streams a URL into a file the caller names (inside its staging
folder) and returns its size and sha256. What it guarantees:

- **bounded**: a ``Content-Length`` past ``max_download`` is refused before the
  body; without one, the transfer stops with an error at ``max_download``
  bytes; a length that does not fit in the free space is refused up front;
- **strict headers**: ``Content-Length`` and ``Content-Range`` must be ASCII
  decimal numbers (``"²".isdigit()`` is true, ``int("²")`` fails): anything else
  is a :class:`~tempbench.fetch.common.FetchError`, never a ``ValueError``;
- **retried and resumed**: a stall (no byte for ``timeout`` seconds), a dropped
  connection, a short body or a 5xx/408/429 answer is retried ``retries`` times
  with a growing pause; each retry asks for the rest (``Range: bytes=N-``, with
  ``If-Range`` on the first answer's validator). A 206 must start where we
  stopped; a 200 means the server ignored the range (or the file changed), so
  the file is started again from byte 0;
- **redirects only to http(s)** (urllib would also follow ``ftp://``);
- **no secrets out**: credentials in the URL are sent as HTTP Basic
  authorisation on the first host only (an unredirected header, so a redirect
  to another host does not carry them), and every message shows the redacted
  URL, including text quoted from :mod:`urllib`'s own exceptions.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import re
import shutil
import ssl
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tempbench.fetch.common import CHUNK, FetchError, FetchOptions, LimitError, MiB
from tempbench_core.progress import progress
from tempbench_core.urls import redact_url, scrub
from tempbench_core.version import __version__

_DECIMAL = re.compile(r"[0-9]+")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTENT_RANGE = re.compile(r"bytes ([0-9]+)-([0-9]+)/([0-9]+|\*)")
#: Answers worth another attempt: the server may do better in a moment.
_RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}


def _printable(text: object) -> str:
    """Text the server chose (a reason phrase) without control characters, which would drive the terminal."""
    return _UNPRINTABLE.sub("?", str(text))


class _Transient(Exception):
    """An attempt that failed in a way another attempt may not (its text says how)."""


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects to http(s) URLs only (urllib's own rule also lets ``ftp://`` through).

    The target is checked before urllib's handler sees it, so the refusal is
    our message (with the redacted URL), not an HTTPError quoting the raw one.
    """

    def http_error_302(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                       headers: Any) -> Any:
        location = headers.get("location") or headers.get("uri")
        if location:
            target = urllib.parse.urljoin(req.full_url, location)
            scheme = urllib.parse.urlsplit(target).scheme.lower()
            if scheme not in ("http", "https"):
                raise FetchError(f"{redact_url(req.full_url)}: HTTP {code} redirect to {redact_url(target)} "
                                 "refused: only http(s) redirects are followed")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def _strip_credentials(url: str) -> tuple[str, str | None]:
    """``url`` without its userinfo, and the Basic ``Authorization`` value that userinfo stands for."""
    parts = urllib.parse.urlsplit(url)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return url, None
    user, _, password = userinfo.partition(":")
    token = f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}".encode()
    bare = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return bare, "Basic " + base64.b64encode(token).decode("ascii")


def _header_number(headers: Any, name: str, shown: str) -> int | None:
    """A header that must be one decimal number (``Content-Length``), or ``None`` when absent."""
    values = {v.strip() for v in headers.get_all(name) or []}
    if not values:
        return None
    if len(values) > 1:
        raise FetchError(f"{shown}: the server sent {len(values)} different {name} headers "
                         f"({', '.join(sorted(map(repr, values)))}); expected one byte count")
    (value,) = values
    if not _DECIMAL.fullmatch(value):
        raise FetchError(f"{shown}: invalid {name} header {value!r} from the server (expected a decimal byte count)")
    return int(value)


def _content_range(headers: Any, shown: str) -> tuple[int, int, int | None]:
    value = (headers.get("Content-Range") or "").strip()
    match = _CONTENT_RANGE.fullmatch(value)
    if not match or int(match.group(2)) < int(match.group(1)):
        raise FetchError(f"{shown}: invalid Content-Range header {value!r} in a 206 answer "
                         "(expected 'bytes START-END/TOTAL')")
    total = None if match.group(3) == "*" else int(match.group(3))
    return int(match.group(1)), int(match.group(2)), total


@dataclass
class _Partial:
    """What has been received so far, across attempts."""

    handle: IO[bytes]
    received: int = 0
    total: int | None = None
    validator: str | None = None
    digest: Any = field(default_factory=hashlib.sha256)

    def restart(self) -> None:
        """Back to byte 0 (the server cannot resume, or the resource changed)."""
        self.handle.seek(0)
        self.handle.truncate()
        self.received = 0
        self.digest = hashlib.sha256()


def download(url: str, target: Path, options: FetchOptions, show_progress: bool | None = None) -> dict[str, Any]:
    """Stream the http(s) ``url`` into ``target`` (created or truncated).

    Returns
    -------
    dict
        ``{"bytes", "sha256"}`` of what was received.

    Raises
    ------
    FetchError
        An HTTP error status, an unreachable server, a transfer that keeps
        failing after ``options.retries`` retries, an invalid header, a
        disallowed redirect; :class:`~tempbench.fetch.common.LimitError` for a
        bound. The caller removes ``target`` (it lives in a staging folder).
    """
    shown = redact_url(url)
    bare, authorization = _strip_credentials(url)
    opener = urllib.request.build_opener(_HttpOnlyRedirects)
    failures: list[str] = []
    with open(target, "wb") as handle:
        state = _Partial(handle)
        for attempt in range(options.retries + 1):
            if attempt:
                time.sleep(min(options.backoff * 2 ** (attempt - 1), 30.0))
            try:
                _attempt(opener, bare, authorization, state, options, shown, show_progress)
                break
            except _Transient as exc:
                failures.append(scrub(str(exc), url, bare))
            except FetchError as exc:
                raise type(exc)(scrub(str(exc), url, bare)) from None
        else:
            attempts = options.retries + 1
            raise FetchError(f"{shown}: {failures[-1]}; gave up after {attempts} attempt(s)")
    return {"bytes": state.received, "sha256": state.digest.hexdigest()}


def _attempt(opener: urllib.request.OpenerDirector, url: str, authorization: str | None, state: _Partial,
             options: FetchOptions, shown: str, show_progress: bool | None) -> None:
    """One request: the whole resource, or the rest of it; raises :class:`_Transient` when worth retrying."""
    request = urllib.request.Request(url, headers={"User-Agent": f"tempbench-repro/{__version__}",
                                                   "Accept-Encoding": "identity"})
    if authorization is not None:
        # Unredirected: urllib copies ordinary headers to a redirect's target, whatever its host.
        request.add_unredirected_header("Authorization", authorization)
    resuming = state.received > 0
    if resuming:
        request.add_header("Range", f"bytes={state.received}-")
        if state.validator:
            request.add_header("If-Range", state.validator)
    try:
        response = opener.open(request, timeout=options.timeout)
    except urllib.error.HTTPError as exc:
        exc.close()
        if exc.code == 416 and resuming:  # the range no longer fits the resource: start again
            state.restart()
            raise _Transient("the server refused to resume (HTTP 416)") from None
        if exc.code in _RETRY_STATUS:
            raise _Transient(f"HTTP error {exc.code} {_printable(exc.reason)}") from None
        raise FetchError(f"{shown}: HTTP error {exc.code} {_printable(exc.reason)}") from None
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, ssl.SSLError):
            raise FetchError(f"{shown}: TLS error ({reason})") from None
        if isinstance(reason, TimeoutError):
            raise _Transient(f"no answer for {options.timeout:g} s (stalled server)") from None
        raise _Transient(f"cannot reach it ({reason})") from None
    except TimeoutError:
        raise _Transient(f"no data for {options.timeout:g} s (stalled server)") from None
    except (http.client.InvalidURL, ValueError) as exc:
        raise FetchError(f"{shown}: invalid URL ({exc})") from None
    except (OSError, http.client.HTTPException) as exc:
        raise _Transient(f"cannot download it ({type(exc).__name__}: {exc})") from None
    with response:
        _receive(response, state, options, shown, show_progress)


def _receive(response: Any, state: _Partial, options: FetchOptions, shown: str, show_progress: bool | None) -> None:
    headers = response.headers
    chunked = "chunked" in (headers.get("Transfer-Encoding") or "").lower()
    length = _header_number(headers, "Content-Length", shown)
    if chunked:
        length = None  # RFC 9112: a chunked body's length is the chunks', whatever Content-Length says
    status = response.status
    if status == 206:
        start, end, total = _content_range(headers, shown)
        if start != state.received or (state.total is not None and total is not None and total != state.total):
            # Not the rest of what we have (or another version of it): start again from byte 0.
            problem = f"the server resumed at byte {start:,} of {total or '?'}, not {state.received:,} of {state.total}"
            state.restart()
            raise _Transient(problem)
        state.total = total if total is not None else state.total
        expected = end - start + 1
    elif status == 200:
        if state.received:
            state.restart()  # the server ignored the Range header (or the file changed): the whole body follows
        state.total = length
        expected = length
        etag = headers.get("ETag")
        state.validator = etag if etag and not etag.startswith("W/") else headers.get("Last-Modified")
    else:
        raise FetchError(f"{shown}: unexpected HTTP status {status} (expected 200, or 206 for a resumed transfer)")
    if state.total is not None and state.total > options.max_download:
        raise LimitError(f"{shown}: the server announces {state.total:,} bytes, more than the maximum download "
                         f"size {options.max_download:,} (raise it with --max-download)")
    need = (state.total - state.received) if state.total is not None else 0
    free = shutil.disk_usage(Path(state.handle.name).parent).free
    if need > free:
        raise LimitError(f"{shown}: {need:,} bytes to download, only {free:,} free in {Path(state.handle.name).parent.parent}")
    body = 0

    def blocks() -> Iterator[bytes]:
        # read1: what has arrived (up to CHUNK), so that a stall or a drop loses nothing already received.
        while block := response.read1(CHUNK):
            yield block

    total_chunks = None if expected is None else max(1, -(-expected // CHUNK))
    size = "" if state.total is None else f" ({state.total / MiB:,.1f} MiB)"
    desc = f"download {shown.rsplit('/', 1)[-1].split('?', 1)[0]}{size}" + (" (resumed)" if state.received else "")
    try:
        for block in progress(blocks(), total=total_chunks, description=desc, enabled=show_progress):
            if state.received + len(block) > options.max_download:
                raise LimitError(f"{shown}: the download grew past {options.max_download:,} bytes, more than the "
                                 "maximum download size (raise it with --max-download)")
            try:
                state.handle.write(block)
            except OSError as exc:
                raise FetchError(f"{shown}: cannot store the download ({exc.strerror or exc})") from None
            state.digest.update(block)
            state.received += len(block)
            body += len(block)
    except TimeoutError:
        raise _Transient(f"no data for {options.timeout:g} s after {state.received:,} bytes (stalled server)") from None
    except (OSError, http.client.HTTPException) as exc:
        raise _Transient(f"transfer interrupted after {state.received:,} bytes ({type(exc).__name__}: {exc})") from None
    if expected is not None and body != expected:
        # urllib returns b"" when the server hangs up early: the announced length is the only witness.
        of = f"{state.total:,}" if state.total is not None else f"{state.received - body + expected:,}"
        raise _Transient(f"transfer interrupted: received {state.received:,} of {of} bytes (truncated download)")
    if state.total is not None and state.received != state.total:
        raise _Transient(f"transfer interrupted: received {state.received:,} of {state.total:,} bytes")
