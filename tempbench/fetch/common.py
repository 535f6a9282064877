"""What every part of ``tempbench fetch`` shares: its error, its options and bounds, its sources.

A source is what the user names with ``--url`` / ``--from``: an http(s) URL, or a
local path (a ``file://`` URL is taken as the path it names). Anything else
(another URL scheme) is refused before anything is opened, so ``ftp://``,
``data:`` or ``gopher://`` never reach :mod:`urllib`.
"""

from __future__ import annotations

import os
import re
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone

from tempbench_core.errors import TempbenchError
from tempbench_core.urls import is_web_url, redact_url

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
#: Bytes read or written at a time.
CHUNK = MiB
#: Below this many bytes a member (or a tar stream) is never refused for its
#: expansion ratio: a small file of repeated text can deflate 500x and harms nothing.
RATIO_FLOOR = 16 * MiB
#: More members than this is not a release or a TGB archive; a long list of
#: names is itself a way to exhaust memory.
MAX_MEMBERS = 1_000_000


class FetchError(TempbenchError):
    """A download, a source or an archive that failed; the message names it (URLs redacted) and what is wrong."""


class LimitError(FetchError):
    """A bound of :class:`FetchOptions` was reached; another mirror would not help, a larger bound would."""


@dataclass(frozen=True)
class FetchOptions:
    """How a fetch talks to servers and how much it accepts.

    The default bounds fit TGB's largest knowledge graph (``tkgl-icews``, 15.5 M
    edges, and ``tkgl-wikidata`` with its static edges: archives of a few GB) and
    the TempBench release (well under 1 GB), with room to spare, yet stop an
    endless stream or a zip bomb long before a disk fills.

    Attributes
    ----------
    timeout:
        Seconds without any byte from the server before an attempt is declared stalled.
    retries:
        Further attempts after a failed one (a stall, a dropped connection, a
        5xx answer); each resumes with an HTTP Range request where the server allows it.
    backoff:
        Seconds before the first retry, doubled for each next one (at most 30).
    max_download:
        Bytes one download may receive, with or without a ``Content-Length``.
    max_extract:
        Bytes one fetch may write from an archive or folder (all files taken together).
    max_ratio:
        Largest expansion (uncompressed / compressed bytes) of a zip member, or
        of a whole tar stream, once past :data:`RATIO_FLOOR` bytes.
    """

    timeout: float = 60.0
    retries: int = 3
    backoff: float = 1.0
    max_download: int = 16 * GiB
    max_extract: int = 32 * GiB
    max_ratio: float = 200.0

    def __post_init__(self) -> None:
        for name in ("timeout", "max_download", "max_extract", "max_ratio"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and value > 0 and value == value and value != float("inf")):
                raise FetchError(f"{name.replace('_', '-')} must be a positive finite number, not {value!r}")
        if not (isinstance(self.retries, int) and self.retries >= 0):
            raise FetchError(f"retries must be a non-negative integer, not {self.retries!r}")
        if not (isinstance(self.backoff, (int, float)) and 0 <= self.backoff < float("inf")):
            raise FetchError(f"backoff must be a non-negative number of seconds, not {self.backoff!r}")


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)", re.IGNORECASE)
_UNITS = {"": 1, "k": KiB, "m": MiB, "g": GiB, "t": 1 << 40}


def parse_size(text: str) -> int:
    """A byte count written ``1000``, ``500K``, ``16G``, ``2GiB`` (binary units, case ignored).

    Raises
    ------
    FetchError
        Anything else, or zero.
    """
    match = _SIZE.fullmatch(text.strip())
    if not match or (match.group(3) and not match.group(2) and match.group(3).lower() != "b"):
        raise FetchError(f"size {text!r} is not a byte count (expected e.g. 1000, 500K, 16G, 2GiB)")
    value = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if value <= 0:
        raise FetchError(f"size {text!r} must be more than 0 bytes")
    return value


def now() -> str:
    """UTC time now, ISO 8601 to the second with a ``Z``."""
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Source:
    """A source as the user named it, resolved to what is opened.

    Attributes
    ----------
    given:
        The text as given (may hold credentials: never shown).
    url:
        The http(s) URL to download, or ``None`` for a local path.
    path:
        The local path (``None`` for a URL).
    """

    given: str
    url: str | None
    path: str | None

    @property
    def shown(self) -> str:
        """How the source is printed and stored: a redacted URL or the path."""
        return redact_url(self.url) if self.url is not None else str(self.path)

    @property
    def key(self) -> str:
        """What identifies the source across fetches: the redacted URL or the absolute path."""
        return self.shown if self.url is not None else os.path.abspath(str(self.path))

    @property
    def name(self) -> str:
        """The last component of its path (``tkgl-smallpedia.zip``)."""
        tail = urllib.parse.urlsplit(self.url).path if self.url is not None else str(self.path)
        return tail.rstrip("/").rsplit("/", 1)[-1] or "download"


def resolve_source(given: str) -> Source:
    """Classify ``given`` as an http(s) URL or a local path (``file://`` URLs become paths).

    Raises
    ------
    FetchError
        Another URL scheme: only http(s) is downloaded.
    """
    if is_web_url(given):
        return Source(given, given, None)
    scheme = urllib.parse.urlsplit(given).scheme.lower() if ":" in given else ""
    if scheme == "file" and "://" in given:
        parts = urllib.parse.urlsplit(given)
        if parts.netloc not in ("", "localhost"):
            raise FetchError(f"{redact_url(given)}: a file:// URL on another host cannot be read (expected file:///path)")
        return Source(given, None, urllib.request.url2pathname(parts.path))
    # "data:...", "ftp://...", "C:\\x" (a drive letter is one character, and no "//")
    if len(scheme) > 1 and (given[len(scheme):].startswith("://") or scheme in ("data", "javascript", "mailto")):
        raise FetchError(f"{redact_url(given)}: unsupported URL scheme {scheme!r} "
                         "(expected an http(s) URL or a local path)")
    return Source(given, None, given)
