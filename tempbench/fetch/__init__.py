"""Get the real inputs into a data root: the TGB edge list and a TempBench release (SPEC §1.5).

Two jobs, both behind ``tempbench fetch``:

- :func:`fetch_tgb` downloads the TGB 2.0 ``tkgl-smallpedia`` archive (from
  TGB's current host, :data:`TGB_URLS`, the old one as a fallback mirror, or
  the one URL or path the user gives) and extracts only
  ``tkgl-smallpedia_edgelist.csv`` into the data root;
- :func:`fetch_release` lays out a TempBench release (``benchmark/``, and when
  present ``baselines/`` and a labels file) from a local folder, a ``.zip`` /
  ``.tar.gz`` archive, or an http(s) URL to one.

Both record every file they lay out in ``DIR/tempbench.lock`` (size, sha256,
source, date: :mod:`tempbench_core.lock`), and a second call whose files are
present and match that record downloads nothing.

Everything from outside is untrusted input (issue 25): the download is bounded,
retried and resumed (:mod:`.download`); the archive's member names, types and
sizes are checked before anything is extracted (:mod:`.archive`); the work
happens in a staging folder and is moved into place all together or not at
all, and a terminated or killed fetch leaves nothing the next one does not
remove (:mod:`.staging`). URLs are stored and printed redacted
(:mod:`tempbench_core.urls`). Every failure is a :class:`FetchError` naming the
source and what was wrong; the command line turns it into exit status 2.

Only the standard library is used (:mod:`urllib.request`, :mod:`zipfile`,
:mod:`tarfile`): one streamed GET per archive needs nothing more.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from tempbench.fetch.archive import Archive, ExtractBudget
from tempbench.fetch.common import FetchError, FetchOptions, LimitError, Source, now, parse_size, resolve_source
from tempbench.fetch.download import download
from tempbench.fetch.staging import Placement, Session, fetch_session
from tempbench_core.digest import sha256_file
from tempbench_core.layout import (
    BASELINES_DIR,
    BENCHMARK_DIR,
    BENCHMARK_IDS,
    BENCHMARK_LABELLED,
    FLAGS_FILE,
    KG_FILE,
    LABELS_JSON,
    LABELS_TSV,
    LOCK_FILE,
    PROVENANCE,
    layout_candidates,
)
from tempbench_core.lock import Lock, LockedFile, LockError, read_lock, safe_relative, write_lock
from tempbench_core.progress import progress
from tempbench_core.version import __version__

__all__ = [
    "TGB_DATASET", "TGB_URL", "TGB_URLS", "FetchError", "FetchOptions", "FetchResult", "LimitError",
    "fetch_release", "fetch_tgb", "parse_size", "plan_release",
]

#: The dataset name in TGB 2.0.
TGB_DATASET = "tkgl-smallpedia"
#: Where the ``tkgl-smallpedia`` archive is, tried in this order: TGB's current
#: host (its object store moved to alliancecan.ca), then the URL that
#: ``DATA_URL_DICT`` in ``tgb/utils/info.py`` of github.com/shenyangHuang/TGB still
#: names (the old computecanada.ca bucket), as a fallback mirror. TGB's loader
#: (``LinkPropPredDataset.download``) unzips the archive and reads
#: ``<folder>/tkgl-smallpedia_edgelist.csv``.
TGB_URLS = (
    f"https://object-arbutus.alliancecan.ca/swift/v1/14c95234f6cd4a21a47deafe20cce2a7/tgb/{TGB_DATASET}.zip",
    f"https://object-arbutus.cloud.computecanada.ca/tgb/{TGB_DATASET}.zip",
)
TGB_URL = TGB_URLS[0]
#: How the lock records "the default sources" (so a changed mirror list does not mean a changed request).
_DEFAULT = "default"
#: A Hugging Face revision: a branch, a tag, a commit hash, ``refs/pr/N``.
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,254}")
_TOOL = f"tempbench-repro {__version__}"


@dataclass
class FetchResult:
    """What a fetch did.

    Attributes
    ----------
    downloaded:
        ``False`` when the files were already there and matched the lock.
    files:
        Data-root-relative path -> ``{"bytes", "sha256"}`` of every file the
        lock records for this fetch.
    lock:
        The lock file.
    notes:
        Lines for people (the source used, what was skipped or cleaned, what is missing).
    """

    downloaded: bool
    files: dict[str, dict[str, Any]]
    lock: Path
    notes: list[str] = field(default_factory=list)


# --- small helpers ---------------------------------------------------------------


def _matches(out: Path, entry: LockedFile) -> bool:
    """The file exists under ``out`` with its recorded size and sha256."""
    path = out / entry.path
    return path.is_file() and path.stat().st_size == entry.bytes and sha256_file(path) == entry.sha256


def _first_names(names: list[str], most: int) -> str:
    """The first ``most`` names, comma-separated, with ``...`` when there are more (a message stays one line)."""
    return ", ".join(names[:most]) + (", ..." if len(names) > most else "")


def _summary(files: dict[str, LockedFile]) -> dict[str, dict[str, Any]]:
    return {rel: {"bytes": f.bytes, "sha256": f.sha256} for rel, f in sorted(files.items())}


def _read_lock(out: Path, force: bool) -> Lock:
    """The root's lock; an unreadable one is an error, unless ``force`` (then it is rewritten)."""
    try:
        return read_lock(out)
    except LockError as exc:
        if force:
            return Lock(out / LOCK_FILE)
        raise FetchError(f"{exc}; give --force to fetch again and rewrite it") from None


def _cleaned_notes(session: Session) -> list[str]:
    if not session.cleaned:
        return []
    return [f"removed {len(session.cleaned)} item(s) left by an interrupted fetch: {', '.join(session.cleaned)}"]


def _refuse_overwrite(out: Path, targets: list[str], recorded: dict[str, LockedFile], force: bool) -> None:
    """A file we would replace must be one a previous fetch wrote, unchanged since (or ``force``)."""
    if force:
        return
    for rel in sorted(targets):
        path = out / rel
        if (path.exists() or path.is_symlink()) and not (rel in recorded and _matches(out, recorded[rel])):
            raise FetchError(
                f"{path} exists and is not the file a previous 'tempbench fetch' recorded in {out / LOCK_FILE}; "
                "move it away or give --force to replace it"
            )


@contextlib.contextmanager
def _open_source(source: Source, session: Session, options: FetchOptions,
                 show_progress: bool | None) -> Iterator[tuple[Archive, dict[str, Any] | None]]:
    """The archive or folder behind ``source`` (downloaded into the staging folder first for a URL), with its record."""
    downloaded: Path | None = None
    try:
        if source.url is not None:
            downloaded = session.scratch(source.name)
            record = download(source.url, downloaded, options, show_progress)
            archive = Archive(downloaded, source.shown, options)
            archive_record: dict[str, Any] | None = {"name": source.name, **record}
        else:
            path = Path(str(source.path))
            archive = Archive(path, source.shown, options)
            archive_record = None if archive.kind == "folder" else {"name": path.name, "bytes": path.stat().st_size,
                                                                     "sha256": sha256_file(path)}
        with archive:
            yield archive, archive_record
    finally:
        if downloaded is not None:  # done with the archive: free its space before the files are moved
            with contextlib.suppress(FileNotFoundError):
                downloaded.unlink()


def _free_space(out: Path, size: int, what: str) -> None:
    free = shutil.disk_usage(out).free
    if size > free:
        raise LimitError(f"{what}: {size:,} bytes to extract, only {free:,} free in {out}")


def _commit(session: Session, staged: dict[str, Path], retired: list[str], lock: Lock, new_lock: Lock) -> None:
    """Move the staged files, drop the retired ones and write the lock: all of it, or none of it."""
    out = session.out
    # The lock is staged too and moved in with the files: a failure (or a signal) before the end restores the old one.
    staged_lock = session.scratch(LOCK_FILE)
    write_lock(replace(new_lock, path=staged_lock))
    with Placement(out, session.staging) as placing:
        placing.check([*staged, LOCK_FILE])
        for rel, path in sorted(staged.items()):
            placing.put(path, rel)
        for rel in retired:
            placing.remove(rel)
        if lock.legacy:
            placing.remove(PROVENANCE)  # the lock supersedes an earlier version's record
        placing.put(staged_lock, LOCK_FILE)
        placing.commit()


# --- TGB ----------------------------------------------------------------------------


def _same_tgb_request(previous: dict[str, Any], requested: str) -> bool:
    asked = previous.get("requested")
    if requested == _DEFAULT:  # a root fetched from any default mirror, by this version or an earlier one
        return asked == _DEFAULT or asked in TGB_URLS
    return asked == requested


def _extract_kg(source: Source, session: Session, options: FetchOptions,
                show_progress: bool | None) -> tuple[Path, dict[str, Any], list[str], dict[str, Any] | None]:
    """The edge list of one source, extracted into the staging folder: (file, record, members, archive record)."""
    staged = session.scratch(KG_FILE)
    with _open_source(source, session, options, show_progress) as (archive, archive_record):
        members = archive.find(KG_FILE)
        if not members:
            names = archive.names
            raise FetchError(f"{source.shown}: the archive has no {KG_FILE} (it holds {len(names)} file(s): "
                             f"{_first_names(names, 8) or 'none'})")
        _free_space(session.out, archive.members[members[0]].size, source.shown)
        record = archive.extract(members[0], staged, ExtractBudget(options))
        if record["bytes"] == 0:
            raise FetchError(f"{source.shown}: {members[0]} in the archive is empty")
    return staged, record, members, archive_record


def fetch_tgb(out: str | Path, url: str | None = None, force: bool = False, show_progress: bool | None = None,
              options: FetchOptions | None = None) -> FetchResult:
    """Download the TGB ``tkgl-smallpedia`` archive and extract only the edge list into ``out``.

    Parameters
    ----------
    out:
        The data root (created when missing).
    url:
        An http(s) URL of the archive, or a local path to it (a zip or tar
        archive holding ``tkgl-smallpedia_edgelist.csv`` at any depth; the
        shallowest copy is taken). Default: :data:`TGB_URLS`, each tried in
        turn until one gives the edge list.
    force:
        Download again even when the recorded file is present, and replace an
        edge list that no fetch recorded (or an unreadable lock).
    show_progress:
        Progress bar (default: on a terminal).
    options:
        Timeout, retries and bounds (default :class:`FetchOptions`).

    Returns
    -------
    FetchResult
        ``downloaded=False`` when ``out`` already holds the edge list recorded
        for the same request with the same sha256.
    """
    options = options or FetchOptions()
    sources = [resolve_source(url)] if url else [resolve_source(u) for u in TGB_URLS]
    requested = sources[0].key if url else _DEFAULT
    out = Path(out)
    with fetch_session(out) as session:
        lock = _read_lock(out, force)
        previous, recorded = lock.sources.get("tgb") or {}, lock.group("tgb")
        notes = _cleaned_notes(session)
        if (not force and _same_tgb_request(previous, requested) and KG_FILE in recorded
                and _matches(out, recorded[KG_FILE])):
            return FetchResult(False, _summary(recorded), lock.path,
                               [*notes, f"{out / KG_FILE} is present and matches its recorded sha256"])
        _refuse_overwrite(out, [KG_FILE], recorded, force)
        Placement(out, session.staging).check([KG_FILE])
        failures: list[str] = []
        for source in sources:
            try:
                staged, record, members, archive_record = _extract_kg(source, session, options, show_progress)
                break
            except LimitError:
                raise  # a bound is the user's to raise: another mirror would not be smaller
            except FetchError as exc:
                failures.append(str(exc))
        else:
            if len(failures) == 1:
                raise FetchError(failures[0])
            raise FetchError(f"cannot fetch the TGB {TGB_DATASET} archive from any of its {len(sources)} sources: "
                             + "; ".join(failures) + f". Without a network here: download {sources[0].shown} "
                             f"where there is one, then give the file: tempbench fetch tgb --url FILE --out {out}")
        member = members[0]
        when = now()
        entry = {
            "what": f"TGB 2.0 {TGB_DATASET} edge list",
            "requested": requested,
            "source": source.shown,
            "fetched_at": when,
            "tool": _TOOL,
            "archive": archive_record,
            "member": member,
        }
        files = [LockedFile(KG_FILE, record["bytes"], record["sha256"], source.shown, when, "tgb", member)]
        new_lock = lock.with_group("tgb", entry, files)
        _commit(session, {KG_FILE: staged}, [], lock, new_lock)
    notes += [f"extracted {member} ({record['bytes']:,} bytes) from {source.shown}"]
    notes += [f"tried first: {failure}" for failure in failures]
    if len(members) > 1:
        notes.append(f"the archive holds {len(members)} copies of {KG_FILE}; took the shallowest, {member}")
    return FetchResult(True, _summary(new_lock.group("tgb")), new_lock.path, notes)


# --- TempBench release --------------------------------------------------------------


_BENCH_NAMES = tuple(PurePosixPath(n).name for n in (BENCHMARK_LABELLED, BENCHMARK_IDS, FLAGS_FILE))


def plan_release(names: list[str], source: str) -> tuple[dict[str, str], list[str]]:
    """Map release files to data-root paths (SPEC §1.5).

    ``names`` are normalised member names (:func:`tempbench.fetch.archive.member_name`).
    The release's benchmark folder is where ``benchmark_labelled.jsonl`` (or its
    ``.gz``) is, the shallowest when several; the release root is that folder's
    parent when it is called ``benchmark`` (else the folder itself). Taken:
    the three benchmark files (plain or ``.gz``) into ``benchmark/``, a labels
    file of the release root or the benchmark folder, and everything under
    ``baselines/`` of the release root.

    Returns
    -------
    (dict, list)
        ``data-root path -> member name`` and the member names left out.

    Raises
    ------
    FetchError
        No ``benchmark_labelled.jsonl``, or a file to take whose name cannot be
        a data-root path (a control character, a backslash).
    """
    labelled = [n for n in names if PurePosixPath(n).name in layout_candidates(_BENCH_NAMES[0])]
    if not labelled:
        raise FetchError(f"{source}: no {_BENCH_NAMES[0]} in it: not a TempBench release "
                         f"(expected {BENCHMARK_LABELLED} at any depth)")
    labelled.sort(key=lambda n: (n.count("/"), n))
    bench_dir = PurePosixPath(labelled[0]).parent
    root = bench_dir.parent if bench_dir.name == BENCHMARK_DIR else bench_dir

    def under(folder: PurePosixPath, name: str) -> str:
        return name if str(folder) == "." else f"{folder}/{name}"

    present = set(names)
    plan: dict[str, str] = {}
    for base in _BENCH_NAMES:
        for candidate in layout_candidates(base):
            member = under(bench_dir, candidate)
            if member in present:
                plan[f"{BENCHMARK_DIR}/{candidate}"] = member
    for candidate in layout_candidates(LABELS_TSV, LABELS_JSON):
        for folder in (root, bench_dir):
            member = under(folder, candidate)
            if member in present and candidate not in plan:
                plan[candidate] = member
    prefix = under(root, BASELINES_DIR) + "/"
    for name in names:
        if name.startswith(prefix):
            plan[f"{BASELINES_DIR}/{name[len(prefix):]}"] = name
    seen: dict[str, str] = {}
    for rel, member in sorted(plan.items()):
        if not safe_relative(rel):
            raise FetchError(f"{source}: unsafe member name {member!r} (a backslash or control character): "
                             "the archive is refused")
        # On a case-insensitive or normalising file system (macOS, Windows) these would be one file.
        folded = unicodedata.normalize("NFC", rel).casefold()
        if folded in seen:
            raise FetchError(f"{source}: members {seen[folded]} and {member} differ only by case or Unicode form: "
                             "they would be one file on some systems, so the archive is refused")
        seen[folded] = member
    if not any(f"{BENCHMARK_DIR}/{c}" in plan for c in layout_candidates(_BENCH_NAMES[0])):
        # Guaranteed by the search above; kept as the invariant "a release lays out its benchmark, never 0 files".
        raise FetchError(f"{source}: {labelled[0]} is not where a release keeps it")  # pragma: no cover
    taken = set(plan.values())
    return plan, [n for n in names if n not in taken]


def _check_revision(revision: str | None) -> None:
    if revision is not None and not _REVISION.fullmatch(revision):
        raise FetchError(f"--revision {revision!r} is not a Hugging Face revision "
                         "(expected a branch, tag or commit hash: letters, digits and . _ / -)")


def _source_unchanged(source: Source, previous: dict[str, Any], recorded: dict[str, LockedFile],
                      options: FetchOptions) -> bool:
    """For a local source, whether it would still give the recorded files (a URL is trusted by its files)."""
    if source.url is not None:
        return True
    path = Path(str(source.path))
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISREG(mode):
        return (previous.get("archive") or {}).get("sha256") == sha256_file(path)
    if not stat.S_ISDIR(mode):
        return False  # a device or FIFO: the fetch goes on, and refuses it with a clear message
    try:
        with Archive(path, source.shown, options) as folder:
            plan, _ = plan_release(folder.names, source.shown)
    except FetchError:
        return False
    return set(plan) == set(recorded) and all(
        plan[rel] == recorded[rel].member and sha256_file(path / plan[rel]) == recorded[rel].sha256 for rel in plan
    )


def _release_current(out: Path, src: Source, revision: str | None, lock: Lock, options: FetchOptions) -> bool:
    """Whether ``out`` already holds the release of this request: same source and revision, files as recorded."""
    previous, recorded = lock.sources.get("release") or {}, lock.group("release")
    return bool(previous.get("requested") == src.key and previous.get("revision") == revision and recorded
                and all(_matches(out, f) for f in recorded.values())
                and _source_unchanged(src, previous, recorded, options))


@dataclass
class _StagedRelease:
    """A release extracted into the staging folder, not yet in place."""

    #: Data-root path -> member name (:func:`plan_release`).
    plan: dict[str, str]
    #: The member names the pipeline does not read.
    left_out: list[str]
    #: The members that are no regular file (links, devices): never written.
    not_files: list[str]
    #: Data-root path -> the staged file.
    staged: dict[str, Path]
    #: Data-root path -> its extraction record (``bytes``, ``sha256``).
    records: dict[str, dict[str, Any]]
    #: The archive's own record (``None`` for a folder).
    archive_record: dict[str, Any] | None


def _stage_release(out: Path, src: Source, session: Session, recorded: dict[str, LockedFile], force: bool,
                   options: FetchOptions, show_progress: bool | None) -> _StagedRelease:
    """Plan the release's files, check that they may be written and fit, and extract them into the staging folder."""
    staged: dict[str, Path] = {}
    records: dict[str, dict[str, Any]] = {}
    with _open_source(src, session, options, show_progress) as (archive, archive_record):
        plan, left_out = plan_release(archive.names, src.shown)
        _refuse_overwrite(out, list(plan), recorded, force)
        Placement(out, session.staging).check(list(plan))
        declared = sum(archive.members[m].size for m in plan.values())
        budget = ExtractBudget(options)
        budget.reserve(declared, src.shown)
        _free_space(out, declared, src.shown)
        by_member = {member: rel for rel, member in plan.items()}
        ordered = archive.in_order(list(by_member))
        for member in progress(ordered, total=len(ordered), description="extract release", enabled=show_progress):
            rel = by_member[member]
            staged[rel] = session.scratch(PurePosixPath(rel).name)
            records[rel] = archive.extract(member, staged[rel], budget)
        not_files = list(archive.not_files)
    return _StagedRelease(plan, left_out, not_files, staged, records, archive_record)


def _release_notes(src: Source, revision: str | None, release: _StagedRelease, retired: list[str]) -> list[str]:
    """What a release fetch did, for people: files laid out and removed, benchmark files missing, files left out."""
    notes = [f"laid out {len(release.records)} file(s) from {src.shown}" + (f" (revision {revision})" if revision else "")]
    if retired:
        notes.append(f"removed {len(retired)} file(s) of the previous release that this one does not have: "
                     + _first_names(retired, 5))
    for base in _BENCH_NAMES[1:]:
        if not any(f"{BENCHMARK_DIR}/{c}" in release.records for c in layout_candidates(base)):
            notes.append(f"the release has no {base} (see 'tempbench check')")
    if release.left_out:
        notes.append(f"left out {len(release.left_out)} file(s) the pipeline does not read: "
                     f"{_first_names(release.left_out, 5)}")
    if release.not_files:
        notes.append(f"left out {len(release.not_files)} member(s) that are no regular file (links, devices): never "
                     f"written: {_first_names(release.not_files, 5)}")
    return notes


def fetch_release(source: str, out: str | Path, force: bool = False, show_progress: bool | None = None,
                  options: FetchOptions | None = None, revision: str | None = None) -> FetchResult:
    """Lay out a TempBench release in ``out`` (SPEC §1.5) from a folder, an archive, or a URL to one.

    Parameters
    ----------
    source:
        A local folder (for example one written by ``hf download``), a local
        ``.zip``/``.tar.gz``, or an http(s) URL of such an archive.
    out:
        The data root (created when missing).
    force:
        Fetch again even when the recorded files are present, and replace
        files no fetch recorded (or an unreadable lock).
    show_progress:
        Progress bars (default: on a terminal).
    options:
        Timeout, retries and bounds (default :class:`FetchOptions`).
    revision:
        The Hugging Face revision the release was downloaded at (``hf download
        --revision``), recorded in the lock; a different revision is a
        different request.

    Returns
    -------
    FetchResult
        ``downloaded=False`` when the recorded files are present and unchanged
        and (for a local source) the source itself is unchanged.
    """
    options = options or FetchOptions()
    _check_revision(revision)
    src = resolve_source(source)
    out = Path(out)
    with fetch_session(out) as session:
        lock = _read_lock(out, force)
        recorded = lock.group("release")
        notes = _cleaned_notes(session)
        if not force and _release_current(out, src, revision, lock, options):
            return FetchResult(False, _summary(recorded), lock.path,
                               [*notes, "the release files are present and match their recorded sha256"])
        release = _stage_release(out, src, session, recorded, force, options, show_progress)
        when = now()
        files = [LockedFile(rel, r["bytes"], r["sha256"], src.shown, when, "release", release.plan[rel])
                 for rel, r in sorted(release.records.items())]
        # Files the previous release had and this one has not go, unless changed since (then they are the user's).
        retired = sorted(rel for rel, f in recorded.items() if rel not in release.plan and _matches(out, f))
        entry = {
            "what": "TempBench release",
            "requested": src.key,
            "source": src.shown if src.url is not None else src.key,
            "revision": revision,
            "fetched_at": when,
            "tool": _TOOL,
            "archive": release.archive_record,
            "left_out": len(release.left_out),
        }
        new_lock = lock.with_group("release", entry, files)
        _commit(session, release.staged, retired, lock, new_lock)
    notes += _release_notes(src, revision, release, retired)
    return FetchResult(True, _summary(new_lock.group("release")), new_lock.path, notes)
