"""The lock of a data root (``DIR/tempbench.lock``): what was put there, file by file.

``tempbench fetch`` records in it the size, sha256, source and date of every file
it lays out; ``tempbench check`` compares the root with it (:func:`compare_lock`);
a report copies its digests (:func:`lock_digests`). One module reads, writes and
compares it, so the three can never disagree on what "changed" means.

The file is JSON (sorted keys, two-space indent, one trailing newline)::

    {
      "lock_version": 1,
      "files": {
        "tkgl-smallpedia_edgelist.csv": {
          "bytes": 21357908, "sha256": "...", "fetched_at": "2025-01-31T12:00:00Z",
          "group": "tgb", "member": "tkgl-smallpedia_edgelist.csv",
          "source": "https://object-arbutus.alliancecan.ca/swift/v1/.../tgb/tkgl-smallpedia.zip"
        }
      },
      "sources": {
        "tgb": {"source": "...", "requested": "...", "fetched_at": "...", "tool": "...", "archive": {...}}
      }
    }

``files`` is keyed by the data-root-relative POSIX path; ``group`` names the
entry of ``sources`` that wrote the file (``tgb``, ``release``, ...), which holds
what the whole operation was (the archive, the URL asked for, a revision).
Every URL in the lock is stored redacted (:func:`tempbench_core.urls.redact_url`:
no credentials, query values masked), whatever the caller passes.

A root fetched by an earlier version has ``provenance.json`` instead, with the
same facts per group; it is read as a lock (``legacy=True``) until the next
fetch replaces it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from tempbench_core.atomic import write_text
from tempbench_core.digest import sha256_file
from tempbench_core.errors import InputError
from tempbench_core.jsonl import dumps_json, json_type
from tempbench_core.layout import LOCK_FILE, PROVENANCE
from tempbench_core.urls import redact_url

#: The format version this code reads and writes; a newer one is refused, not guessed at.
LOCK_VERSION = 1
_SHA256 = re.compile(r"[0-9a-f]{64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class LockError(InputError):
    """A lock file that cannot be read as one (the message names it and what is wrong)."""


@dataclass(frozen=True)
class LockedFile:
    """One file of the lock.

    Attributes
    ----------
    path:
        Data-root-relative POSIX path.
    bytes, sha256:
        Size and hex sha256 of the file as it was written.
    source:
        Where it came from: the (redacted) URL or the local path of the archive or folder.
    fetched_at:
        UTC time of the fetch, ISO 8601 with a ``Z``.
    group:
        The operation that wrote it (a key of :attr:`Lock.sources`).
    member:
        Its name inside the archive or folder, when it came from one.
    """

    path: str
    bytes: int
    sha256: str
    source: str
    fetched_at: str
    group: str
    member: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The entry as stored (without the path, which is its key); the source redacted."""
        entry: dict[str, Any] = {"bytes": self.bytes, "sha256": self.sha256, "source": redact_url(self.source),
                                 "fetched_at": self.fetched_at, "group": self.group}
        if self.member is not None:
            entry["member"] = self.member
        return entry


@dataclass(frozen=True)
class Lock:
    """The lock of one data root (empty when the root has none).

    Attributes
    ----------
    path:
        The lock file (it may not exist).
    files:
        Data-root-relative path -> :class:`LockedFile`.
    sources:
        Group -> what that operation recorded about itself.
    legacy:
        Read from an earlier version's ``provenance.json``.
    """

    path: Path
    files: dict[str, LockedFile] = field(default_factory=dict)
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    legacy: bool = False

    def group(self, name: str) -> dict[str, LockedFile]:
        """The files written by the operation ``name``."""
        return {rel: f for rel, f in self.files.items() if f.group == name}

    def with_group(self, name: str, entry: dict[str, Any], files: list[LockedFile]) -> Lock:
        """A new lock in which the operation ``name`` wrote exactly ``files`` (its earlier files are dropped)."""
        kept = {rel: f for rel, f in self.files.items() if f.group != name and rel not in {g.path for g in files}}
        kept.update({f.path: replace(f, group=name) for f in files})
        sources = {**self.sources, name: entry}
        return Lock(self.path, dict(sorted(kept.items())), dict(sorted(sources.items())), legacy=False)

    def to_json(self) -> dict[str, Any]:
        """The document as written, every URL redacted."""
        return {
            "lock_version": LOCK_VERSION,
            "files": {rel: f.to_json() for rel, f in sorted(self.files.items())},
            "sources": {name: _redacted(entry) for name, entry in sorted(self.sources.items())},
        }


def _redacted(value: Any) -> Any:
    """``value`` with every string that is a URL redacted, at any depth."""
    if isinstance(value, str):
        return redact_url(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def safe_relative(rel: str) -> bool:
    """Whether ``rel`` names a file inside a data root: relative, no ``..``, no empty part, no control character."""
    parts = rel.split("/")
    return (bool(rel) and not rel.startswith("/") and "\\" not in rel and not _CONTROL.search(rel)
            and all(p not in ("", ".", "..") for p in parts) and not PurePosixPath(rel).is_absolute())


# --- reading -----------------------------------------------------------------------------------


def read_lock(root: str | Path) -> Lock:
    """The lock of ``root``: its ``tempbench.lock``, else its legacy ``provenance.json``, else an empty one.

    Raises
    ------
    LockError
        The lock file exists but is not a lock: not a regular file, not JSON,
        a newer format, an entry without a valid size or sha256, a path that
        leaves the root.
    """
    root = Path(root)
    path = root / LOCK_FILE
    if path.exists() or path.is_symlink():
        return _parse(path, _load_json(path))
    legacy = root / PROVENANCE
    if legacy.is_file():
        try:
            doc = json.loads(legacy.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return Lock(path)  # an unreadable record of an older version is no record
        return _from_provenance(path, doc)
    return Lock(path)


def _load_json(path: Path) -> Any:
    if not path.is_file():
        raise LockError(path, None, "is not a regular file", "the JSON lock written by 'tempbench fetch'")
    try:
        return json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise LockError(path, None, f"not UTF-8 text ({exc.reason})", "the JSON lock written by 'tempbench fetch'") from None
    except ValueError as exc:
        raise LockError(path, None, f"not valid JSON ({exc})", "the JSON lock written by 'tempbench fetch'") from None
    except OSError as exc:
        raise LockError(path, None, f"cannot be read ({exc.strerror or exc})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(path: Path, doc: Any) -> Lock:
    def bad(problem: str, expected: str) -> LockError:
        return LockError(path, None, problem, expected + " (delete the file and fetch again to rewrite it)")

    if not isinstance(doc, dict):
        raise bad(f"holds a JSON {json_type(doc)}", "an object with lock_version, files and sources")
    version = doc.get("lock_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise bad(f"lock_version is {version!r}", f"the integer {LOCK_VERSION}")
    if version > LOCK_VERSION:
        raise LockError(path, None, f"lock_version {version} was written by a newer tempbench-repro",
                        f"lock_version {LOCK_VERSION}: upgrade tempbench-repro")
    files_doc, sources_doc = doc.get("files", {}), doc.get("sources", {})
    if not isinstance(files_doc, dict) or not isinstance(sources_doc, dict):
        raise bad("files or sources is not an object", "two JSON objects")
    files: dict[str, LockedFile] = {}
    for rel, entry in files_doc.items():
        if not safe_relative(rel):
            raise bad(f"file {rel!r} is not a path inside the data root", "relative paths without '..'")
        if not isinstance(entry, dict):
            raise bad(f"the entry of {rel} is not an object", "{bytes, sha256, source, fetched_at, group}")
        size, digest = entry.get("bytes"), entry.get("sha256")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise bad(f"the size of {rel} is {size!r}", "a byte count")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise bad(f"the sha256 of {rel} is {digest!r}", "64 lowercase hex digits")
        text = {k: entry.get(k) for k in ("source", "fetched_at", "group")}
        if not all(isinstance(v, str) for v in text.values()):
            raise bad(f"the entry of {rel} lacks a source, fetched_at or group string", "three strings")
        member = entry.get("member")
        files[rel] = LockedFile(rel, size, digest, text["source"], text["fetched_at"], text["group"],
                                member if isinstance(member, str) else None)
    sources = {str(k): v for k, v in sources_doc.items() if isinstance(v, dict)}
    return Lock(path, files, sources)


def _from_provenance(path: Path, doc: Any) -> Lock:
    """An earlier version's ``provenance.json`` (group -> {source, fetched_at, files, ...}) as a lock."""
    files: dict[str, LockedFile] = {}
    sources: dict[str, dict[str, Any]] = {}
    for group, entry in (doc.items() if isinstance(doc, dict) else []):
        if not isinstance(entry, dict):
            continue
        source, when = str(entry.get("source", "")), str(entry.get("fetched_at", ""))
        sources[str(group)] = {**{k: v for k, v in entry.items() if k != "files"}, "requested": source}
        for rel, rec in (entry.get("files") or {}).items() if isinstance(entry.get("files"), dict) else []:
            if not (isinstance(rec, dict) and safe_relative(str(rel)) and isinstance(rec.get("bytes"), int)
                    and isinstance(rec.get("sha256"), str) and _SHA256.fullmatch(rec["sha256"])):
                continue
            member = rec.get("from", entry.get("member"))
            files[str(rel)] = LockedFile(str(rel), rec["bytes"], rec["sha256"], source, when, str(group),
                                         member if isinstance(member, str) else None)
    return Lock(path, files, sources, legacy=True)


# --- writing -----------------------------------------------------------------------------------


def _sorted(value: Any) -> Any:
    """``value`` with every mapping's keys in sorted order."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def write_lock(lock: Lock) -> Path:
    """Write ``lock`` to its path atomically (sorted keys, so the same lock is the same bytes)."""
    text = dumps_json(_sorted(lock.to_json())) + "\n"
    write_text(lock.path, text)
    return lock.path


# --- comparing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class LockComparison:
    """A data root beside its lock.

    Attributes
    ----------
    lock:
        The lock compared with.
    ok:
        Files present with their recorded size and sha256.
    changed:
        ``(path, what differs)`` for files present with another size or sha256 (or not a file).
    missing:
        Recorded files that are not there.
    """

    lock: Lock
    ok: list[str]
    changed: list[tuple[str, str]]
    missing: list[str]

    def state(self, rel: str) -> str:
        """``"ok"``, ``"changed"`` or ``"missing"`` for a recorded file."""
        if rel in self.missing:
            return "missing"
        return "changed" if any(r == rel for r, _ in self.changed) else "ok"


def _short(digest: str) -> str:
    return digest[:12]


def compare_lock(root: str | Path, lock: Lock | None = None) -> LockComparison:
    """Compare every file the lock of ``root`` records with what is there now (size first, then sha256).

    Raises
    ------
    LockError
        When ``lock`` is not given and the root's lock cannot be read.
    """
    root = Path(root)
    lock = read_lock(root) if lock is None else lock
    ok: list[str] = []
    changed: list[tuple[str, str]] = []
    missing: list[str] = []
    for rel, entry in sorted(lock.files.items()):
        path = root / rel
        if not path.exists():
            missing.append(rel)
        elif not path.is_file():
            changed.append((rel, "is no longer a regular file"))
        elif path.stat().st_size != entry.bytes:
            changed.append((rel, f"{path.stat().st_size:,} bytes, recorded {entry.bytes:,}"))
        elif (now := sha256_file(path)) != entry.sha256:
            changed.append((rel, f"sha256 {_short(now)}..., recorded {_short(entry.sha256)}..."))
        else:
            ok.append(rel)
    return LockComparison(lock, ok, changed, missing)


def lock_digests(root: str | Path) -> dict[str, dict[str, Any]]:
    """What a report says about the data's lock: per recorded file, its digest, origin and state now.

    Returns
    -------
    dict
        ``path -> {"bytes", "sha256", "source", "fetched_at", "state"}`` in path
        order (``state`` is ``ok``, ``changed`` or ``missing``); empty when
        the root has no lock. The same root and lock give the same value.

    Raises
    ------
    LockError
        The root's lock cannot be read.
    """
    comparison = compare_lock(root)
    return {rel: {"bytes": f.bytes, "sha256": f.sha256, "source": redact_url(f.source), "fetched_at": f.fetched_at,
                  "state": comparison.state(rel)}
            for rel, f in sorted(comparison.lock.files.items())}

