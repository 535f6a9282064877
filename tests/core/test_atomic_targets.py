"""What ``atomic_open`` does with targets that are not regular files.

A device, FIFO or socket is written in place and stays the node it was (the
atomic rename used to replace ``/dev/full`` or ``/dev/stdout`` by a regular
file); a symbolic link is followed, the file it points to replaced atomically
and the link kept. A regular or new file is still written atomically.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from tempbench_core.atomic import atomic_open, write_json, write_text
from tempbench_core.errors import OutputError


def _mknod(path: Path, minor: int) -> Path:
    """A character device ``1, minor`` (3 is ``/dev/null``, 7 is ``/dev/full``) at ``path``, or skip."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("creating a device node needs privileges")
    return path


def _parts(*folders: Path) -> list[Path]:
    return [p for folder in folders for p in folder.iterdir() if p.name.endswith(".part")]


def test_fifo_is_written_in_place_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    write_json(fifo, {"a": 1})
    reader.join(timeout=10)
    assert not reader.is_alive()
    assert received == [b'{\n  "a": 1\n}\n']
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert _parts(tmp_path) == []


def test_full_device_is_an_output_error_and_stays_a_device(tmp_path: Path) -> None:
    full = _mknod(tmp_path / "devfull", 7)
    with pytest.raises(OutputError) as caught:
        write_json(full, {"a": 1})
    assert caught.value.path == str(full)
    assert str(full) in str(caught.value)
    assert "No space left on device" in str(caught.value)
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert _parts(tmp_path) == []


def test_null_device_accepts_the_write_and_stays_a_device(tmp_path: Path) -> None:
    null = _mknod(tmp_path / "devnull", 3)
    write_text(null, "anything\n")
    with atomic_open(null, "wb") as handle:
        handle.write(b"\x00\x01")
    info = os.lstat(null)
    assert stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)
    assert _parts(tmp_path) == []


def test_link_to_a_device_writes_the_device(tmp_path: Path) -> None:
    full = _mknod(tmp_path / "devfull", 7)
    link = tmp_path / "out.json"
    link.symlink_to(full)
    with pytest.raises(OutputError, match="out.json"):
        write_json(link, [1])
    assert link.is_symlink() and stat.S_ISCHR(os.lstat(full).st_mode)


def test_text_that_cannot_be_encoded_is_the_same_error_on_a_device(tmp_path: Path) -> None:
    null = _mknod(tmp_path / "devnull", 3)
    regular = tmp_path / "plain.txt"
    messages = []
    for target in (null, regular):
        with pytest.raises(OutputError) as caught:
            write_text(target, "half \ud800 pair")
        messages.append(str(caught.value).replace(str(target), "TARGET"))
    assert messages[0] == messages[1]
    assert "cannot be written as utf-8" in messages[0]
    assert not regular.exists() and stat.S_ISCHR(os.lstat(null).st_mode)


def test_symlink_is_kept_and_its_file_written_atomically(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    real = there / "real.txt"
    real.write_text("old\n")
    link = here / "link.txt"
    link.symlink_to(Path("..") / "there" / "real.txt")  # relative, resolved from the link's folder
    write_text(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(Path("..") / "there" / "real.txt")
    assert real.read_text() == "new\n"
    assert _parts(here, there) == []


def test_failure_through_a_symlink_keeps_the_old_file(tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    with pytest.raises(OutputError, match="link.txt"):
        write_text(link, "bad \udc80")
    assert link.is_symlink() and real.read_text() == "old\n"
    assert _parts(tmp_path) == []


def test_dangling_symlink_gets_its_file_created(tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    target = tmp_path / "elsewhere" / "made.json"  # its folder is created, as for a new file today
    link.symlink_to(target)
    write_json(link, {"b": 2})
    assert link.is_symlink()
    assert json.loads(target.read_text()) == {"b": 2}
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~_umask()
    assert _parts(tmp_path, target.parent) == []


def test_symlink_loop_is_an_output_error(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(OutputError, match="symbolic links"):
        write_text(a, "x")
    assert a.is_symlink() and b.is_symlink()


def test_regular_file_is_still_replaced_atomically(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    before = out.stat().st_ino
    with pytest.raises(RuntimeError), atomic_open(out) as handle:
        handle.write("half of the new")
        raise RuntimeError("interrupted")
    assert out.read_text() == "old\n" and _parts(tmp_path) == []
    write_text(out, "new\n")
    assert out.read_text() == "new\n"
    assert out.stat().st_ino != before  # a new file renamed over the old one, not the old one rewritten
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~_umask()
    assert _parts(tmp_path) == []


def test_cli_output_to_a_full_device_is_exit_2_and_the_node_stays(tmp_path: Path, capsys) -> None:
    from reference.tiny import good_root

    from tempbench.cli import main

    root = good_root(tmp_path / "data")
    full = _mknod(tmp_path / "devfull", 7)
    assert main(["labels", "--data", str(root), "--out", str(full)]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {full}: No space left on device" in err
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    null = _mknod(tmp_path / "devnull", 3)
    assert main(["labels", "--data", str(root), "--out", str(null)]) == 0
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    assert _parts(tmp_path) == []


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_reader_that_goes_away_is_a_broken_pipe_not_an_output_error(tmp_path: Path) -> None:
    """``--json /dev/stdout | head``: the CLI ends quietly on BrokenPipeError, as it does for stdout itself."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)

    def read_a_little() -> None:
        with open(fifo, "rb") as handle:
            handle.read(10)

    reader = threading.Thread(target=read_a_little, daemon=True)
    reader.start()
    with pytest.raises(BrokenPipeError):
        write_text(fifo, "x" * 4_000_000)  # more than a pipe holds: the write outlives the reader
    reader.join(timeout=10)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_files_written_together_appear_all_or_none(tmp_path: Path) -> None:
    from tempbench_core.atomic import write_jsonl_together

    def broken():
        yield {"id": 1}
        raise RuntimeError("the builder failed")

    paths = [tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"]
    with pytest.raises(RuntimeError):
        write_jsonl_together({paths[0]: [{"id": 0}], paths[1]: broken(), paths[2]: [{"id": 2}]})
    assert list(tmp_path.iterdir()) == []  # nothing renamed, no .part left
    write_jsonl_together({p: [{"id": i}] for i, p in enumerate(paths)})
    assert [json.loads(p.read_text(encoding="utf-8")) for p in paths] == [{"id": 0}, {"id": 1}, {"id": 2}]


def test_ctrl_c_during_the_renames_is_raised_after_the_last(tmp_path: Path, monkeypatch) -> None:
    import signal

    from tempbench_core import atomic

    replace = os.replace
    calls = []

    def replace_then_interrupt(src, dst):
        calls.append(dst)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C between the first rename and the others
        replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", replace_then_interrupt)
    paths = [tmp_path / f"{name}.jsonl" for name in "abc"]
    # Python's own Ctrl-C handler, as a command has it, whatever an earlier test in this process left
    # (seen once in CI: SIGINT ignored in one pytest-xdist worker before this test)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            atomic.write_jsonl_together({p: [{"n": i}] for i, p in enumerate(paths)})
        assert len(calls) == 3 and all(p.is_file() for p in paths) and not _parts(tmp_path)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler it found is put back
    finally:
        signal.signal(signal.SIGINT, inherited)


def _write_slowly(_context, path: str, started: str) -> None:
    """A worker task that is stopped while it writes (see below)."""
    import time

    with atomic_open(path, "w") as handle:
        handle.write("half of it")
        handle.flush()
        Path(started).touch()
        time.sleep(60)


def test_a_worker_stopped_while_writing_leaves_no_part_file(tmp_path: Path) -> None:
    """Ctrl-C or a failure stops the pool's workers: a half-written output of theirs is removed, not left."""
    import time

    from tempbench_core.workers import WorkerPool, can_fork

    if not can_fork():
        pytest.skip("workers are forked processes only where fork exists")
    target, started = tmp_path / "plot.png", tmp_path / "started"
    pool = WorkerPool(None, 2)
    pool.submit(_write_slowly, str(target), str(started))
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists() and _parts(tmp_path)
    pool.close(cancel=True)
    assert not _parts(tmp_path) and not target.exists()
