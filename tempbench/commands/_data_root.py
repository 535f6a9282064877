"""A complete data root from a user's KG and labels: the files placed under their layout names, and the lock.

``tempbench build-benchmark`` writes the benchmark files and makes ``OUT`` a data
root that ``check --data OUT`` and ``reproduce --data OUT`` take as it is:

- the KG is placed as ``OUT/tkgl-smallpedia_edgelist.csv`` (``.csv.gz`` when its
  name ends in ``.gz``), the labels as ``OUT/labels.json`` when their name is
  ``*.json`` (or ``*.json.gz``), else as ``OUT/labels.tsv`` (``.gz`` kept);
- placed means a **hard link** (no copy of a large KG), or a **copy** when a link
  is impossible (another file system, links not supported); never a move. Both
  go through a temporary name and a rename, so an interrupted build leaves no
  half file;
- ``OUT`` may be the KG's own folder: a KG already under its layout name is left
  as it is, one under another name is linked under the layout name beside it;
- nothing the user gave is overwritten. A file already under a target name is
  kept when it is the same file or has the same sha256; a file that the lock
  records as placed or written by an earlier ``build-benchmark`` and that is
  unchanged since is ours and replaced; any other file there is an error (exit
  2) naming it. The same holds for another form of a layout name that would be
  read first (``labels.tsv`` beside a placed ``labels.json``, the plain KG beside
  a placed ``.gz``);
- ``OUT/tempbench.lock`` records every file written or placed (size, sha256,
  source: the user's file as an absolute path, or the builder for the
  benchmark files) and, under the group ``build-benchmark``, what the build was
  (:func:`build_entry`); the lock's other groups (``fetch tgb``) are kept.

``fetched_at`` of a placed file is the modification time of the user's file,
and of a benchmark file the latest of its inputs': the lock is the same bytes
for the same inputs, like every output.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tempbench.check.origin import BUILD_GROUP
from tempbench_core.digest import sha256_file
from tempbench_core.errors import OutputError
from tempbench_core.jsonl import is_gzip, plain_name
from tempbench_core.layout import GZ, KG_FILE, LABELS_JSON, LABELS_TSV, layout_candidates
from tempbench_core.lock import Lock, LockedFile, read_lock, write_lock

#: The builder as the lock names it, the source of the benchmark files.
BUILDER = "tempbench build-benchmark"


@dataclass(frozen=True)
class Placement:
    """One user file to appear in ``OUT`` under a layout name.

    Attributes
    ----------
    source:
        The user's file (absolute).
    rel:
        Its data-root-relative layout name.
    role:
        ``kg`` or ``labels``.
    keep:
        The file already there is this one or identical to it: nothing to do.
    """

    source: Path
    rel: str
    role: str
    keep: bool


def layout_name(source: Path, role: str) -> str:
    """The layout name a user's ``kg`` or ``labels`` file takes in a data root (its format and ``.gz`` kept)."""
    if role == "kg":
        base = KG_FILE
    else:
        base = LABELS_JSON if plain_name(source).lower().endswith(".json") else LABELS_TSV
    return base + GZ if is_gzip(source) else base


def is_kg_folder(out: Path, kg: Path) -> bool:
    """Whether ``out`` is the folder that holds the KG file."""
    try:
        return out.resolve() == kg.resolve().parent
    except OSError:
        return False


def _ours(lock: Lock, rel: str, path: Path) -> bool:
    """Whether ``path`` was put there by an earlier build-benchmark and is unchanged since (its lock says so)."""
    entry = lock.files.get(rel)
    return (entry is not None and entry.group == BUILD_GROUP and path.is_file()
            and path.stat().st_size == entry.bytes and sha256_file(path) == entry.sha256)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def plan_placements(out: Path, kg: Path, labels: Path | None, lock: Lock) -> list[Placement]:
    """Where the KG and labels go in ``out``, refusing every conflict before anything is written.

    Raises
    ------
    OutputError
        A different file (not the same, another sha256, not ours by the lock)
        is already under a target name, or under another form of it that
        would be read first.
    """
    placements = []
    for role, source, names in (("kg", kg, (KG_FILE,)), ("labels", labels, (LABELS_TSV, LABELS_JSON))):
        if source is None:
            continue
        source = source.resolve()
        rel = layout_name(source, role)
        keep = False
        digest: str | None = None
        for other in layout_candidates(*names):
            path = out / other
            if not path.exists() and not path.is_symlink():
                continue
            if other != rel and layout_candidates(*names).index(other) > layout_candidates(*names).index(rel):
                continue  # a later form is never read while the placed one is there
            if _same_file(path, source):
                keep = keep or other == rel
                continue
            digest = digest or sha256_file(source)
            if path.is_file() and sha256_file(path) == digest:
                keep = keep or other == rel
                continue
            if _ours(lock, other, path):
                continue
            what = "is already there" if other == rel else f"would be read instead of {rel}"
            raise OutputError(path, f"a different file {what} (it is not {source} and not one this command wrote); "
                                    "it is left alone: move it away or give another --out")
        placements.append(Placement(source, rel, role, keep))
    return placements


def check_benchmark_targets(out: Path, rels: list[str], lock: Lock, claimed: bool) -> None:
    """Refuse to write a benchmark file over one that is not ours (a folder of ours, or the lock's record).

    ``claimed`` is true when ``out`` is a data root tempbench made (its ledger or
    manifest), whose benchmark files it may rewrite as it always did.
    """
    if claimed:
        return
    for rel in rels:
        for name in layout_candidates(rel):
            path = out / name
            if (path.exists() or path.is_symlink()) and not _ours(lock, name, path):
                raise OutputError(path, "a benchmark file this command did not write is already there; it is left "
                                        "alone: move it away or give another --out")


def place(source: Path, target: Path) -> str:
    """Put ``source`` at ``target``: a hard link, else a copy; atomically (temporary name, then rename).

    Returns ``"linked"`` or ``"copied"``. The source is never moved or changed.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        tmp.unlink()
        try:
            os.link(source, tmp)
            how = "linked"
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EACCES):
                raise
            shutil.copyfile(source, tmp)
            how = "copied"
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(target, f"cannot place {source} there: {exc.strerror or exc}") from None
    return how


def _stamp(*paths: Path) -> str:
    """The latest modification time of ``paths``, UTC, ISO 8601 with ``Z`` (deterministic for the same files)."""
    latest = max(p.stat().st_mtime for p in paths)
    return datetime.fromtimestamp(int(latest), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def locked_file(out: Path, rel: str, source: str, stamp: str) -> LockedFile:
    """The lock entry of ``out/rel`` as it is now."""
    path = out / rel
    return LockedFile(rel, path.stat().st_size, sha256_file(path), source, stamp, BUILD_GROUP)


def build_entry(kg: Path, labels: Path | None, seed: int, target_n: int, questions: int, tool: str,
                command: str) -> dict[str, Any]:
    """The ``build-benchmark`` group of the lock: the inputs by name and sha256, the builder's settings, the command."""
    def named(path: Path | None) -> dict[str, str] | None:
        return None if path is None else {"file": path.name, "sha256": sha256_file(path)}

    return {"kg": named(kg), "labels": named(labels), "seed": seed, "target_n": target_n, "questions": questions,
            "tool": tool, "command": command}


def write_root_lock(out: Path, placements: list[Placement], benchmark: list[str], inputs: list[Path],
                    entry: dict[str, Any]) -> Path:
    """Record the placed and written files in ``out/tempbench.lock``, keeping the lock's other groups."""
    lock = read_lock(out)
    files = []
    for p in placements:
        entry_now = locked_file(out, p.rel, str(p.source), _stamp(p.source))
        earlier = lock.files.get(p.rel)
        if earlier is not None and earlier.group != BUILD_GROUP and earlier.sha256 == entry_now.sha256:
            continue  # a file 'fetch tgb' laid out and recorded stays its record
        files.append(entry_now)
    stamp = _stamp(*inputs)
    files += [locked_file(out, rel, BUILDER, stamp) for rel in benchmark]
    return write_lock(lock.with_group(BUILD_GROUP, entry, files))
