"""A release or TGB archive read as untrusted input (issue 25, classes 1, 2 and 4).

:class:`Archive` gives one view of a local folder, a zip or a tar archive: its
regular files by *normalised* member name, each with its declared size.
Normalising means reading ``./benchmark/x``, ``benchmark//x`` and
``benchmark/./x`` as ``benchmark/x`` (what ``tar -czf r.tgz -C rel .`` and some
zip tools write). The whole archive is refused, before anything is extracted,
when

- a member name is absolute, has a drive letter or a ``..`` part (with ``/`` or
  ``\\`` as separator), or a control character;
- two file members have the same normalised name (which one would win is the
  archive tool's accident, not a fact of the release);
- a name is both a file and a folder (``baselines/a`` and ``baselines/a/b``);
- it has more than :data:`~tempbench.fetch.common.MAX_MEMBERS` members, or its
  tar stream expands past ``max_ratio`` (checked while its headers are read,
  so a tar bomb is not decompressed to the end).

Only regular files are members: symlinks, hard links, devices and FIFOs (in a
tar, or a zip entry whose mode says so) are ignored, never written. Local
sources are opened without blocking and must be regular files (or a folder):
``/dev/zero``, a FIFO or a socket is refused, not read forever.

:meth:`Archive.extract` copies one member into a file the caller names,
bounded by an :class:`ExtractBudget` (the total of a fetch, ``max_extract``)
and, for a zip member, by its expansion ratio.
"""

from __future__ import annotations

import hashlib
import lzma
import os
import re
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from tempbench.fetch.common import CHUNK, MAX_MEMBERS, RATIO_FLOOR, FetchError, FetchOptions, LimitError
from tempbench_core.text import lone_surrogate

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"[A-Za-z]:")
#: What reading a corrupt archive raises, whatever its compression.
_READ_ERRORS = (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, lzma.LZMAError, OSError,
                RuntimeError, NotImplementedError, ValueError)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISDIR, "folder")):
        if test(mode):
            return name
    return "special file"


def open_regular(path: str | Path, shown: str) -> IO[bytes]:
    """Open ``path`` for reading only if it is a regular file (checked on the open descriptor).

    ``O_NONBLOCK`` makes opening a FIFO return at once instead of waiting for a
    writer; the check on the descriptor (not on the name) leaves no gap for the
    file to be swapped in between.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FetchError(f"{shown}: no such file or folder") from None
    except OSError as exc:
        raise FetchError(f"{shown}: cannot be read ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise FetchError(f"{shown}: not a regular file (a {_kind(mode)}): refused "
                         "(expected a .zip/.tar.gz archive, a release folder or an http(s) URL)")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def member_name(raw: str, shown: str) -> str:
    """The normalised POSIX form of a member name (``""`` for the archive's root folder).

    Raises
    ------
    FetchError
        An absolute name, a drive letter, a ``..`` part or a control character.
    """
    pieces = re.split(r"[\\/]", raw)
    if raw.startswith(("/", "\\")) or _DRIVE.match(raw) or ".." in pieces:
        raise FetchError(f"{shown}: unsafe member name {raw!r} (absolute, or with a '..' part): the archive is refused")
    if _CONTROL.search(raw):
        raise FetchError(f"{shown}: member name {raw!r} holds a control character: the archive is refused")
    if lone_surrogate(raw) is not None:  # bytes that are no UTF-8 (tarfile keeps them as surrogate escapes)
        raise FetchError(f"{shown}: member name {raw!r} is not valid UTF-8 (expected UTF-8 file names): the archive "
                         "is refused")
    return "/".join(p for p in raw.split("/") if p not in ("", "."))


@dataclass
class Member:
    """One regular file of the archive.

    Attributes
    ----------
    name:
        Normalised name.
    size:
        Declared size in bytes (the zip directory's, the tar header's, the file's).
    packed:
        Compressed size (zip members only).
    order:
        Position in the archive (a tar is read in this order without seeking back).
    handle:
        The zip/tar entry, or ``None`` for a folder's file.
    """

    name: str
    size: int
    packed: int | None
    order: int
    handle: Any = field(default=None, repr=False)


@dataclass
class ExtractBudget:
    """Bytes one fetch may still write from archives (``max_extract``), shared by its members."""

    options: FetchOptions
    used: int = 0

    def reserve(self, size: int, what: str) -> None:
        """Refuse ``what`` when its declared ``size`` would not fit."""
        if self.used + size > self.options.max_extract:
            raise LimitError(f"{what}: {self.used + size:,} bytes to extract, more than the maximum total size "
                             f"{self.options.max_extract:,} (raise it with --max-extract)")

    def add(self, size: int, what: str) -> None:
        """Count ``size`` bytes written for ``what``."""
        self.used += size
        if self.used > self.options.max_extract:
            raise LimitError(f"{what}: more than the maximum total size {self.options.max_extract:,} bytes "
                             "extracted (raise it with --max-extract)")


class Archive:
    """Read access to a folder, a zip or a tar archive by normalised member names.

    Parameters
    ----------
    path:
        The folder or archive file.
    shown:
        How the source is named in messages (a redacted URL or the path).
    options:
        The bounds (``max_ratio`` for a tar stream).
    """

    def __init__(self, path: Path, shown: str, options: FetchOptions) -> None:
        self.path = path
        self.shown = shown
        self.options = options
        self._file: IO[bytes] | None = None
        self._zip: zipfile.ZipFile | None = None
        self._tar: tarfile.TarFile | None = None
        self.members: dict[str, Member] = {}
        #: members that are no regular file (links, devices, FIFOs): never written, named in the fetch's notes
        self.not_files: list[str] = []
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            raise FetchError(f"{shown}: no such file or folder") from None
        except OSError as exc:
            raise FetchError(f"{shown}: cannot be read ({exc.strerror or exc})") from None
        if stat.S_ISDIR(mode):
            self.kind = "folder"
            self._list_folder()
            return
        self._file = open_regular(path, shown)
        try:
            if zipfile.is_zipfile(self._file):
                self.kind = "zip"
                self._file.seek(0)
                self._zip = zipfile.ZipFile(self._file)
                self._list_zip()
            else:
                self._file.seek(0)
                if not tarfile.is_tarfile(self._file):
                    raise FetchError(f"{shown}: not a zip or tar archive (corrupt or truncated download?)")
                self.kind = "tar"
                self._file.seek(0)
                self._tar = tarfile.open(fileobj=self._file, mode="r:*")
                self._list_tar()
        except FetchError:
            self.close()
            raise
        except _READ_ERRORS as exc:
            self.close()
            raise FetchError(f"{shown}: corrupt archive ({type(exc).__name__}: {exc})") from None

    # --- listing -------------------------------------------------------------------------

    def _list_folder(self) -> None:
        entries: list[tuple[str, int]] = []
        for dirpath, dirnames, filenames in os.walk(self.path):
            # Hidden folders (hf download's .cache/, .git/) are bookkeeping, not release files.
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fname in sorted(filenames):
                full = Path(dirpath) / fname
                if fname.startswith(".") or not full.is_file():  # symlinks to regular files are followed
                    continue
                entries.append((full.relative_to(self.path).as_posix(), full.stat().st_size))
                if len(entries) > MAX_MEMBERS:
                    raise LimitError(f"{self.shown}: more than {MAX_MEMBERS:,} files: not a release")
        self._index((name, size, None, None) for name, size in entries)

    def _list_zip(self) -> None:
        assert self._zip is not None
        infos = self._zip.infolist()
        if len(infos) > MAX_MEMBERS:
            raise LimitError(f"{self.shown}: {len(infos):,} members, more than {MAX_MEMBERS:,}: not a release")
        rows = []
        for info in infos:
            fmt = stat.S_IFMT(info.external_attr >> 16)
            if info.is_dir():
                rows.append((info.filename, -1, None, None))
            elif fmt in (0, stat.S_IFREG):  # 0: a zip from a tool that records no Unix mode
                rows.append((info.filename, info.file_size, info.compress_size, info))
            else:
                self.not_files.append(member_name(info.filename, self.shown))  # a symlink's name must still be safe
        self._index(rows)

    def _list_tar(self) -> None:
        assert self._tar is not None and self._file is not None
        packed = os.fstat(self._file.fileno()).st_size
        declared = 0
        rows = []
        for count, info in enumerate(self._tar, start=1):
            if count > MAX_MEMBERS:
                raise LimitError(f"{self.shown}: more than {MAX_MEMBERS:,} members: not a release")
            if info.isdir():
                rows.append((info.name, -1, None, None))
                continue
            if not info.isfile():
                self.not_files.append(member_name(info.name, self.shown))
                continue
            rows.append((info.name, info.size, None, info))
            declared += info.size
            # Checked before the member's data is skipped: skipping a compressed member means decompressing it.
            if declared > RATIO_FLOOR and declared > self.options.max_ratio * max(packed, 1):
                raise LimitError(f"{self.shown}: the tar stream expands to more than {declared:,} bytes from "
                                 f"{packed:,} (ratio above {self.options.max_ratio:g}): a decompression bomb? "
                                 "(raise the bound with --max-ratio)")
        self._index(rows)

    def _index(self, rows: Any) -> None:
        """Normalise, then refuse duplicates and names that are both a file and a folder."""
        counts: dict[str, int] = {}
        folders: set[str] = set()
        for order, (raw, size, packed, handle) in enumerate(rows):
            name = member_name(raw, self.shown)
            if not name:
                continue
            if size < 0:
                folders.add(name)
                continue
            counts[name] = counts.get(name, 0) + 1
            self.members[name] = Member(name, size, packed, order, handle)
        twice = sorted(n for n, c in counts.items() if c > 1)
        if twice:
            raise FetchError(f"{self.shown}: member {twice[0]} appears {counts[twice[0]]} times"
                             + (f" (and {len(twice) - 1} other name(s) too)" if len(twice) > 1 else "")
                             + ": which copy is meant is ambiguous, so the archive is refused")
        parents = {str(p) for n in self.members for p in PurePosixPath(n).parents if str(p) != "."}
        both = sorted((parents | folders) & set(self.members))
        if both:
            raise FetchError(f"{self.shown}: {both[0]} is both a file and a folder in the archive "
                             f"({both[0]} and {both[0]}/...): it cannot be laid out, so the archive is refused")

    # --- access ----------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """The normalised names of the regular files, sorted."""
        return sorted(self.members)

    def close(self) -> None:
        """Release the archive's file handles."""
        for handle in (self._zip, self._tar, self._file):
            if handle is not None:
                handle.close()
        self._zip = self._tar = self._file = None

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def find(self, basename: str) -> list[str]:
        """Member names whose last component is ``basename``, shallowest first."""
        hits = [n for n in self.members if PurePosixPath(n).name == basename]
        return sorted(hits, key=lambda n: (n.count("/"), n))

    def in_order(self, names: list[str]) -> list[str]:
        """``names`` in archive order: a compressed tar is then read front to back once, never rewound."""
        return sorted(names, key=lambda n: self.members[n].order)

    def _open(self, member: Member) -> IO[bytes]:
        if self._zip is not None:
            return self._zip.open(member.handle)
        if self._tar is not None:
            handle = self._tar.extractfile(member.handle)
            if handle is None:  # pragma: no cover - only regular files are members
                raise FetchError(f"{self.shown}: member {member.name} is not a regular file")
            return handle
        return open_regular(self.path / member.name, f"{self.shown}/{member.name}")

    def _ratio_check(self, member: Member, size: int) -> None:
        if member.packed is None or size <= RATIO_FLOOR:
            return
        if size > self.options.max_ratio * max(member.packed, 1):
            raise LimitError(f"{self.shown}: member {member.name} expands from {member.packed:,} to more than "
                             f"{size:,} bytes (ratio above {self.options.max_ratio:g}): a decompression bomb? "
                             "(raise the bound with --max-ratio)")

    def extract(self, name: str, target: Path, budget: ExtractBudget) -> dict[str, Any]:
        """Copy member ``name`` into ``target``; returns ``{"bytes", "sha256"}``.

        Raises
        ------
        FetchError
            A CRC or stream error, an encrypted member, an unsupported
            compression; :class:`~tempbench.fetch.common.LimitError` past a bound.
            The caller removes ``target`` (it lives in a staging folder).
        """
        member = self.members[name]
        what = f"{self.shown}: member {name}"
        self._ratio_check(member, member.size)
        budget.reserve(member.size, what)
        digest = hashlib.sha256()
        size = 0
        try:
            with open(target, "wb") as out, self._open(member) as src:
                while block := src.read(CHUNK):
                    size += len(block)
                    self._ratio_check(member, size)
                    budget.add(len(block), what)
                    try:
                        out.write(block)
                    except OSError as exc:
                        raise FetchError(f"{what}: cannot be written ({exc.strerror or exc})") from None
                    digest.update(block)
        except FetchError:
            raise
        except _READ_ERRORS as exc:
            raise FetchError(f"{self.shown}: corrupt archive: member {name} cannot be read "
                             f"({type(exc).__name__}: {exc})") from None
        return {"bytes": size, "sha256": digest.hexdigest()}
