"""Atomic file output: write to a temporary file beside the target, then rename.

An interrupted run therefore never leaves a file under the final name that looks
complete: either the old file (or none) is there, or the whole new one. The new
file gets the permissions the user's umask gives a new file (a temporary file
starts private), and a failure while writing (a full disk, text that cannot be
encoded) is an :class:`~tempbench_core.errors.OutputError` naming the target,
never the temporary ``.part`` name, with nothing left behind.

A target that is a symbolic link is followed: the file it points to (created
when the link dangles) is replaced atomically, and the link stays a link. A
target that is a device, a FIFO or a socket (``/dev/stdout``, ``/dev/null``, a
named pipe) has no file to replace: it is opened and written in place, not
atomically, and left the node it was; so is a ``/dev/fd/N`` or
``/proc/self/fd/N`` link (``/dev/stdout`` redirected to a file), which names an
open file rather than a path. A failed write there is the same ``OutputError``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from tempbench_core.errors import OutputError
from tempbench_core.jsonl import dumps_compact, dumps_json

#: The temporary files being written, with the process writing each (a forked worker inherits its parent's).
_UNFINISHED: dict[str, int] = {}

#: Links that name an open file descriptor, not a path (``/dev/stdout`` links to ``/proc/self/fd/1``).
_FD_LINK = re.compile(r"^/(?:dev/fd|proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd)/")


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w", encoding: str | None = "utf-8", fsync: bool = True) -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that it appears only when the block succeeds.

    ``fsync=False`` skips forcing the bytes to disk before the rename: for
    scratch files whose content is verified when read back (a run's shards
    carry their sha256), where a crash can at worst cost a recomputation.

    A device, FIFO or socket (after following links) is written in place, and a
    symbolic link is followed (see the module docstring).
    """
    target = Path(path)
    if _is_node(target) or _names_open_file(target):
        with _open_in_place(target, mode, encoding) as handle:
            yield handle
        return
    destination = _follow_link(target)
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{destination.name}.", suffix=".part", dir=destination.parent)
    except OSError as exc:
        raise OutputError(target, exc.strerror or str(exc)) from None
    binary = "b" in mode
    _UNFINISHED[tmp_name] = os.getpid()
    try:
        with os.fdopen(fd, mode, encoding=None if binary else encoding, newline=None if binary else "\n") as handle:
            yield handle
            handle.flush()
            if fsync:
                os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~_umask())
        os.replace(tmp_name, destination)
    except BaseException as exc:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        error = _output_error(exc, target, encoding)
        if error is not None:
            raise error from None
        raise
    finally:
        _UNFINISHED.pop(tmp_name, None)


def remove_unfinished() -> None:
    """Remove the temporary files this process has not finished writing (a process stopped from outside)."""
    me = os.getpid()
    for name, writer in list(_UNFINISHED.items()):
        if writer == me:
            with contextlib.suppress(OSError):
                os.unlink(name)


@contextlib.contextmanager
def _open_in_place(target: Path, mode: str, encoding: str | None) -> Iterator[IO[Any]]:
    """Write ``target`` directly: a device or FIFO, where there is no file to replace (nor a folder to create)."""
    binary = "b" in mode
    try:
        handle = open(target, mode, encoding=None if binary else encoding, newline=None if binary else "\n")
    except OSError as exc:
        raise OutputError(target, exc.strerror or str(exc)) from None
    try:
        yield handle
        handle.flush()
        handle.close()
    except BaseException as exc:
        with contextlib.suppress(OSError):
            handle.close()  # the error to report is the first one (a flush of what is left fails again)
        error = _output_error(exc, target, encoding)
        if error is not None:
            raise error from None
        raise


def _output_error(exc: BaseException, target: Path, encoding: str | None) -> OutputError | None:
    """The :class:`OutputError` that ``exc``, raised while writing ``target``, is; ``None`` to let it through."""
    if isinstance(exc, UnicodeEncodeError):
        bad = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else ""
        return OutputError(target, f"text that cannot be written as {encoding} ({bad!r}, e.g. a lone surrogate "
                                   "from an input escape such as \\ud800)")
    if isinstance(exc, BrokenPipeError):
        return None  # a reader that went away (``--json /dev/stdout | head``): the CLI ends quietly, as for stdout
    if isinstance(exc, OSError) and not isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
        return OutputError(target, exc.strerror or str(exc))  # a full disk, an I/O error
    return None


def _is_node(target: Path) -> bool:
    """Whether ``target`` exists (links followed) and is neither a regular file nor a directory."""
    try:
        mode = os.stat(target).st_mode
    except (OSError, ValueError):
        return False  # missing, a dangling link or a loop: decided by the atomic path
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _names_open_file(target: Path) -> bool:
    """Whether ``target`` is, or links through, ``/dev/fd/N`` or ``/proc/<pid>/fd/N``.

    Such a link names a process's open file (``/dev/stdout > out.json``): replacing
    the file it resolves to would leave the descriptor writing to a deleted file.
    """
    current = os.path.abspath(target)
    for _ in range(40):  # the kernel's limit of links followed
        if _FD_LINK.match(current):
            return True
        try:
            link = os.readlink(current)
        except (OSError, ValueError):
            return False  # not a link (or no such file): the end of the chain
        current = os.path.normpath(os.path.join(os.path.dirname(current), link))
    return False


def _follow_link(target: Path) -> Path:
    """The file a symbolic link ``target`` points to (the end of a chain, existing or not); ``target`` itself
    when it is no link."""
    if not target.is_symlink():
        return target
    resolved = Path(os.path.realpath(target))
    if resolved.is_symlink():  # realpath stops at a loop
        raise OutputError(target, os.strerror(errno.ELOOP))
    return resolved


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


def write_jsonl_together(files: dict[Path, Any]) -> None:
    """Write several JSON Lines files (path -> records) so that all of them appear or none.

    Each is written to its own temporary file; once every file is complete the
    renames come together, with Ctrl-C held back until the last is done (then
    raised), so an interrupt leaves either none of them or all (a set of files
    read as one, such as a benchmark and its id-space twin).
    """
    held = _HeldInterrupts()
    with contextlib.ExitStack() as stack:
        stack.callback(held.release)  # the first registered, so the last to run: after every rename
        for path, records in files.items():
            handle = stack.enter_context(atomic_open(path, "w"))
            for record in records:
                handle.write(dumps_compact(record))
                handle.write("\n")
        held.hold()


class _HeldInterrupts:
    """Ctrl-C held back from :meth:`hold` until :meth:`release`, which raises it then (main thread only)."""

    def __init__(self) -> None:
        self._previous: Any = None
        self._caught = False

    def hold(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._catch)

    def _catch(self, *_: Any) -> None:
        self._caught = True

    def release(self) -> None:
        if self._previous is None:
            return
        signal.signal(signal.SIGINT, self._previous)
        self._previous = None
        if self._caught:
            raise KeyboardInterrupt
