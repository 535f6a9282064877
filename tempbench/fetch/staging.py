"""Where a fetch keeps its work until it is done, and how it puts it in place (issue 25, classes 1 and 3).

:func:`fetch_session` is the frame of every fetch into a data root ``DIR``:

1. it takes an exclusive lock on ``DIR`` itself (``flock`` on the folder, so no
   lock file is left behind, and a killed process releases it): two fetches
   into one root never run at once, and what one of them has in progress is
   never mistaken for a leftover by the other;
2. it removes what an interrupted fetch left: staging folders
   ``DIR/.tempbench-fetch-*`` (and ``.tempbench-release-*`` of earlier
   versions) and the hidden ``*.part`` files earlier versions wrote directly
   into ``DIR`` (:data:`_OLD_PART`; other commands' temporary files are left alone);
3. it makes a fresh staging folder in ``DIR`` (same file system, so moving a
   file into place is a rename) that holds every download and extracted file,
   and removes it at the end, whatever happens;
4. it turns SIGTERM and SIGHUP into an exception for its duration, so the
   clean-up above runs when the process is terminated too (the exit status is
   then 128 + the signal number, as for a process killed by it).

:class:`Placement` moves the staged files to their final names all together or
not at all: every target is checked first (no file where a folder is needed, no
folder where a file goes); a file it replaces is moved aside into the staging
folder, and any failure (a full disk, a signal) moves everything back.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from tempbench.fetch.common import FetchError
from tempbench_core.console import info

try:  # POSIX; elsewhere two fetches into one root are the user's to avoid
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

#: Prefix of a fetch's staging folder inside the data root.
STAGING_PREFIX = ".tempbench-fetch-"
_OLD_STAGING = ".tempbench-release-"
#: Temporary files that earlier versions of fetch (and this one's lock writer)
#: left directly in the data root: ``.<name>.<random>.part`` for the archive,
#: the edge list, the lock and the provenance record. Matched by name so that
#: another command's temporary file (``.labels.tsv.x1y2.part``) is never touched.
_OLD_PART = re.compile(r"\.(?:tempbench\.lock|provenance\.json|tkgl-smallpedia_edgelist\.csv|"
                       r"[^/]+\.(?:zip|tgz|tar|tar\.gz|tar\.bz2|tar\.xz))\.[A-Za-z0-9_]+\.part")
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class Terminated(SystemExit):
    """SIGTERM or SIGHUP during a fetch: raised where the process was, so every clean-up on the way out runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(128 + signum)
        self.signum = signum


@contextlib.contextmanager
def _signals_as_exceptions() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers can only be installed by the main thread; a library caller keeps its own
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        for sig in _SIGNALS:  # a second signal must not interrupt the clean-up of the first
            signal.signal(sig, signal.SIG_IGN)
        raise Terminated(signum)

    previous = {sig: signal.signal(sig, handler) for sig in _SIGNALS}
    try:
        yield
    except Terminated as exc:
        info(f"tempbench fetch: terminated by signal {exc.signum}; its temporary files were removed")
        raise
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def _exclusive(out: Path) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(out, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise FetchError(f"another 'tempbench fetch' is writing into {out}; wait for it to finish") from None
        except OSError:  # a file system without locks (some network mounts): go on unlocked
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def clean_leftovers(out: Path) -> list[str]:
    """Remove what interrupted fetches left in ``out``; returns the names removed."""
    removed = []
    for entry in sorted(out.iterdir()):
        name = entry.name
        if entry.is_symlink():
            continue
        if name.startswith((STAGING_PREFIX, _OLD_STAGING)) and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(name)
        elif _OLD_PART.fullmatch(name) and entry.is_file():
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
            removed.append(name)
    return removed


@dataclass
class Session:
    """One fetch's hold on a data root: ``out``, its staging folder, and what was cleaned at the start."""

    out: Path
    staging: Path
    cleaned: list[str]
    _count: int = 0

    def scratch(self, label: str) -> Path:
        """A new file name in the staging folder (never an archive's member name: those are not trusted)."""
        self._count += 1
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", label)[-60:]
        return self.staging / f"{self._count:06d}-{safe}.part"


@contextlib.contextmanager
def _removed_if_left_empty(out: Path) -> Iterator[None]:
    """A data root this fetch creates is removed again when the fetch fails and leaves it empty."""
    created = not out.exists()
    try:
        yield
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only when empty: anything in it stays
        raise


@contextlib.contextmanager
def fetch_session(out: Path) -> Iterator[Session]:
    """Lock ``out``, clean it of leftovers, and lend a staging folder for the duration (see the module docstring)."""
    with _signals_as_exceptions(), _removed_if_left_empty(out):
        try:
            out.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise FetchError(f"{out} exists and is not a folder (expected the data root to write into)") from None
        except OSError as exc:
            raise FetchError(f"cannot create the data root {out}: {exc.strerror or exc}") from None
        if not out.is_dir():
            raise FetchError(f"{out} exists and is not a folder (expected the data root to write into)")
        with _exclusive(out):
            cleaned = clean_leftovers(out)
            staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
            try:
                yield Session(out, staging, cleaned)
            finally:
                shutil.rmtree(staging, ignore_errors=True)


@dataclass
class Placement:
    """Staged files moved to their final names in ``out`` all together, or not at all.

    Use as a context manager: leaving the block by an exception (or without
    :meth:`commit`) undoes every move made, in reverse order.
    """

    out: Path
    staging: Path
    _done: list[tuple[str, Path | None, Path | None]] = field(default_factory=list)
    _made: list[Path] = field(default_factory=list)
    _committed: bool = False

    def check(self, targets: list[str]) -> None:
        """Refuse before moving anything when a target cannot be placed: a file where a folder is needed, or a folder where the file goes."""
        for rel in sorted(targets):
            path = self.out / rel
            for parent in reversed(path.relative_to(self.out).parents[:-1]):
                here = self.out / parent
                if here.exists() and not here.is_dir():
                    raise FetchError(f"cannot lay out {rel}: {here} is a file, and the release needs a folder "
                                     "there; move it away and fetch again")
            if path.is_dir() and not path.is_symlink():
                raise FetchError(f"cannot lay out {rel}: {path} is a folder; move it away and fetch again")

    def _aside(self, path: Path) -> Path:
        backup = Path(tempfile.mkdtemp(prefix="replaced-", dir=self.staging)) / "file"
        try:
            os.replace(path, backup)
        except OSError as exc:
            raise FetchError(f"cannot replace {path}: {exc.strerror or exc}") from None
        return backup

    def put(self, staged: Path, rel: str) -> None:
        """Move ``staged`` to ``out/rel`` (the file there, if any, is kept aside until :meth:`commit`)."""
        target = self.out / rel
        for parent in reversed(target.relative_to(self.out).parents[:-1]):
            here = self.out / parent
            if not here.exists():
                here.mkdir()
                self._made.append(here)
        backup = self._aside(target) if target.exists() or target.is_symlink() else None
        self._done.append((rel, backup, None))
        try:
            os.replace(staged, target)
        except OSError as exc:
            raise FetchError(f"cannot move {rel} into place in {self.out}: {exc.strerror or exc}") from None
        self._done[-1] = (rel, backup, target)

    def remove(self, rel: str) -> None:
        """Take ``out/rel`` away (restored if the placement is undone)."""
        target = self.out / rel
        if target.exists() or target.is_symlink():
            self._done.append((rel, self._aside(target), None))

    def commit(self) -> None:
        """Keep every move; the files set aside go with the staging folder."""
        self._committed = True

    def __enter__(self) -> Placement:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._committed:
            return
        for _rel, backup, placed in reversed(self._done):
            if placed is not None:
                with contextlib.suppress(FileNotFoundError):
                    placed.unlink()
            if backup is not None:
                target = self.out / _rel
                os.replace(backup, target)
        for folder in reversed(self._made):
            with contextlib.suppress(OSError):
                folder.rmdir()
