"""Get the real inputs into a data root: the TGB edge list and a TempBench release (SPEC §1.5).

Two jobs, both behind ``tempbench fetch``:

- :func:`fetch_tgb` downloads the TGB 2.0 ``tkgl-smallpedia`` archive (default:
  the URL TGB's own package uses, :data:`TGB_URL`) and extracts only
  ``tkgl-smallpedia_edgelist.csv`` into the data root;
- :func:`fetch_release` lays out a TempBench release (``benchmark/``, and when
  present ``baselines/`` and a labels file) from a local folder, a ``.zip`` /
  ``.tar.gz`` archive, or an http(s) URL to one.

Both record what they fetched in ``DIR/provenance.json`` (source, time, size and
sha256 of the archive and of every file written), and a second call whose
files are present and match that record downloads nothing.

Nothing half-done is ever left under a final name: a download goes to a
temporary file in the target directory, is verified (archive integrity, member
present, CRC), extracted to temporary files, and only then moved into place.
Every failure (HTTP error, unreachable server, interrupted or truncated
transfer, corrupt archive, missing member) raises :class:`FetchError` naming
the source and what was wrong; the command line turns it into exit status 2.

Only the standard library is used (:mod:`urllib.request`, :mod:`zipfile`,
:mod:`tarfile`): one streamed GET per archive needs nothing more.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import IO, Any

from tempbench_core.atomic import write_json
from tempbench_core.digest import sha256_file
from tempbench_core.errors import TempbenchError
from tempbench_core.layout import (
    BASELINES_DIR,
    BENCHMARK_DIR,
    BENCHMARK_IDS,
    BENCHMARK_LABELLED,
    FLAGS_FILE,
    KG_FILE,
    LABELS_JSON,
    LABELS_TSV,
    PROVENANCE,
    layout_candidates,
)
from tempbench_core.progress import progress
from tempbench_core.version import __version__

#: The dataset name in TGB 2.0.
TGB_DATASET = "tkgl-smallpedia"
#: Where TGB's own package downloads ``tkgl-smallpedia`` from: ``DATA_URL_DICT`` in
#: ``tgb/utils/info.py`` of github.com/shenyangHuang/TGB. Its loader
#: (``tgb/linkproppred/dataset.py``, ``LinkPropPredDataset.download``) unzips this
#: archive into the dataset folder and reads ``<folder>/tkgl-smallpedia_edgelist.csv``.
TGB_URL = "https://object-arbutus.cloud.computecanada.ca/tgb/tkgl-smallpedia.zip"

CHUNK = 1 << 20
#: Seconds without any byte from the server before a download is declared stalled.
TIMEOUT = 60
_URL_SCHEMES = ("http://", "https://", "file://")
_MiB = float(1 << 20)
_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once, at import, and put back


class FetchError(TempbenchError):
    """A download or extraction that failed; the message names the source and the problem."""


@dataclass
class FetchResult:
    """What a fetch did.

    Attributes
    ----------
    downloaded:
        ``False`` when the files were already there and matched the record.
    files:
        Data-root-relative path -> ``{"bytes", "sha256"}`` of every file the
        record lists.
    provenance:
        The provenance file.
    notes:
        Lines for people (what was skipped, what is missing).
    """

    downloaded: bool
    files: dict[str, dict[str, Any]]
    provenance: Path
    notes: list[str] = field(default_factory=list)


# --- small helpers ---------------------------------------------------------------


def is_url(source: str) -> bool:
    """Whether ``source`` is fetched with :mod:`urllib` (http, https, file URLs) rather than read as a path."""
    return source.lower().startswith(_URL_SCHEMES)


def file_record(path: Path) -> dict[str, Any]:
    """``{"bytes", "sha256"}`` of a file."""
    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}


def read_provenance(out: Path) -> dict[str, Any]:
    """The provenance record of a data root (empty when there is none or it is unreadable)."""
    path = out / PROVENANCE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_provenance(out: Path, key: str, entry: dict[str, Any]) -> Path:
    record = read_provenance(out)
    record[key] = entry
    path = out / PROVENANCE
    write_json(path, dict(sorted(record.items())))
    return path


def _now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def _matches(out: Path, files: dict[str, Any]) -> bool:
    """Every recorded file exists under ``out`` with its recorded size and sha256."""
    if not files:
        return False
    for rel, rec in files.items():
        path = out / rel
        if not path.is_file() or path.stat().st_size != rec.get("bytes") or sha256_file(path) != rec.get("sha256"):
            return False
    return True


def _temp_file(directory: Path, name: str) -> tuple[IO[bytes], Path]:
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=directory)
    # mkstemp makes the file private (0600); a data file is as readable as any the user writes.
    os.chmod(tmp, 0o666 & ~_UMASK)
    return os.fdopen(fd, "wb"), Path(tmp)


def _unlink(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


# --- download ----------------------------------------------------------------------


def download(url: str, directory: Path, show_progress: bool | None = None) -> tuple[Path, dict[str, Any]]:
    """Stream ``url`` into a temporary file in ``directory``.

    Returns
    -------
    (Path, dict)
        The temporary file (the caller moves or removes it) and
        ``{"bytes", "sha256"}`` of what was received.

    Raises
    ------
    FetchError
        HTTP error status, unreachable server, a transfer that stops before
        its announced length, or a stalled connection; no file is left behind.
    """
    name = PurePosixPath(urllib.parse.urlparse(url).path).name or "download"
    request = urllib.request.Request(url, headers={"User-Agent": f"tempbench-repro/{__version__}"})
    try:
        response = urllib.request.urlopen(request, timeout=TIMEOUT)
    except urllib.error.HTTPError as exc:
        raise FetchError(f"{url}: HTTP error {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise FetchError(f"{url}: cannot reach it ({exc.reason})") from None
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise FetchError(f"{url}: cannot download it ({type(exc).__name__}: {exc})") from None
    with response:
        header = response.headers.get("Content-Length")
        length = int(header) if header is not None and header.strip().isdigit() else None
        handle, tmp = _temp_file(directory, name)
        digest = hashlib.sha256()
        received = 0

        def chunks() -> Iterator[bytes]:
            while block := response.read(CHUNK):
                yield block

        try:
            with handle:
                total = None if length is None else max(1, -(-length // CHUNK))
                desc = f"download {name}" + ("" if length is None else f" ({length / _MiB:,.1f} MiB)")
                for block in progress(chunks(), total=total, description=desc, enabled=show_progress):
                    handle.write(block)
                    digest.update(block)
                    received += len(block)
            if length is not None and received != length:
                # urllib returns b"" when the server closes early: the length is the only witness.
                raise FetchError(f"{url}: transfer interrupted: received {received:,} of {length:,} bytes (truncated download)")
        except FetchError:
            _unlink(tmp)
            raise
        except (OSError, http.client.HTTPException) as exc:
            _unlink(tmp)
            of = "" if length is None else f" of {length:,}"
            raise FetchError(f"{url}: transfer interrupted after {received:,}{of} bytes ({type(exc).__name__}: {exc})") from None
        except BaseException:
            _unlink(tmp)
            raise
    return tmp, {"bytes": received, "sha256": digest.hexdigest()}


# --- archives ----------------------------------------------------------------------


class Archive:
    """Read access to a local folder, a zip or a tar archive, by POSIX-style member names."""

    def __init__(self, path: Path, source: str) -> None:
        self.path = path
        self.source = source
        self._zip: zipfile.ZipFile | None = None
        self._tar: tarfile.TarFile | None = None
        self._tar_members: dict[str, tarfile.TarInfo] = {}
        if path.is_dir():
            self.kind = "folder"
            # Hidden folders (hf download's .cache/, .git/) are bookkeeping, not release files.
            self.names = sorted(rel for rel in (p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
                                if not any(part.startswith(".") for part in rel.split("/")))
            return
        try:
            if zipfile.is_zipfile(path):
                self.kind = "zip"
                self._zip = zipfile.ZipFile(path)
                self.names = sorted(i.filename for i in self._zip.infolist() if not i.is_dir())
            elif tarfile.is_tarfile(path):
                self.kind = "tar"
                self._tar = tarfile.open(path, "r:*")
                self._tar_members = {m.name: m for m in self._tar.getmembers() if m.isfile()}
                self.names = sorted(self._tar_members)
            else:
                raise FetchError(f"{source}: not a zip or tar archive (corrupt or truncated download?)")
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            self.close()
            raise FetchError(f"{source}: corrupt archive ({type(exc).__name__}: {exc})") from None

    def close(self) -> None:
        """Release the archive's file handle."""
        for handle in (self._zip, self._tar):
            if handle is not None:
                handle.close()
        self._zip = self._tar = None

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def find(self, basename: str) -> list[str]:
        """Member names whose last component is ``basename``, shallowest first."""
        hits = [n for n in self.names if PurePosixPath(n).name == basename]
        return sorted(hits, key=lambda n: (n.count("/"), n))

    def _open(self, name: str) -> IO[bytes]:
        if self._zip is not None:
            return self._zip.open(name)
        if self._tar is not None:
            handle = self._tar.extractfile(self._tar_members[name])
            if handle is None:  # pragma: no cover - only regular files are listed
                raise FetchError(f"{self.source}: member {name} is not a regular file")
            return handle
        return (self.path / name).open("rb")

    def extract(self, name: str, directory: Path, label: str) -> tuple[Path, dict[str, Any]]:
        """Copy member ``name`` into a temporary file in ``directory``; CRC and stream errors raise :class:`FetchError`."""
        handle, tmp = _temp_file(directory, label)
        digest = hashlib.sha256()
        size = 0
        try:
            with handle, self._open(name) as src:
                while block := src.read(CHUNK):
                    handle.write(block)
                    digest.update(block)
                    size += len(block)
        except FetchError:
            _unlink(tmp)
            raise
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError) as exc:
            _unlink(tmp)
            raise FetchError(f"{self.source}: corrupt archive: member {name} cannot be read ({type(exc).__name__}: {exc})") from None
        except BaseException:
            _unlink(tmp)
            raise
        return tmp, {"bytes": size, "sha256": digest.hexdigest()}


@contextlib.contextmanager
def _source_archive(source: str, out: Path, show_progress: bool | None) -> Iterator[tuple[Archive, dict[str, Any] | None]]:
    """The archive or folder behind ``source`` (downloaded into ``out`` first for a URL), with its record."""
    tmp: Path | None = None
    try:
        if is_url(source):
            tmp, record = download(source, out, show_progress)
            archive = Archive(tmp, source)
            record = {"name": PurePosixPath(urllib.parse.urlparse(source).path).name, **record}
        else:
            path = Path(source)
            if not path.exists():
                raise FetchError(f"{source}: no such file or folder")
            archive = Archive(path, source)
            record = None if path.is_dir() else {"name": path.name, **file_record(path)}
        with archive:
            yield archive, record
    finally:
        _unlink(tmp)


def _refuse_overwrite(out: Path, targets: list[str], recorded: dict[str, Any], force: bool) -> None:
    """A file we would replace must be one a previous fetch wrote, unchanged since (or ``force``)."""
    if force:
        return
    for rel in targets:
        path = out / rel
        if path.exists() and not _matches(out, {rel: recorded[rel]} if rel in recorded else {}):
            raise FetchError(
                f"{path} exists and is not the file a previous 'tempbench fetch' recorded in {out / PROVENANCE}; "
                "move it away or give --force to replace it"
            )


# --- TGB ----------------------------------------------------------------------------


def fetch_tgb(out: str | Path, url: str = TGB_URL, force: bool = False, show_progress: bool | None = None) -> FetchResult:
    """Download the TGB ``tkgl-smallpedia`` archive and extract only the edge list into ``out``.

    Parameters
    ----------
    out:
        The data root (created when missing).
    url:
        An http(s)/file URL of the archive, or a local path to it (a zip or
        tar archive holding ``tkgl-smallpedia_edgelist.csv`` at any depth; the
        shallowest copy is taken). Default: :data:`TGB_URL`.
    force:
        Download again even when the recorded file is present, and replace an
        edge list that no fetch recorded.

    Returns
    -------
    FetchResult
        ``downloaded=False`` when ``out`` already holds the edge list recorded
        for the same source with the same sha256.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    previous = read_provenance(out).get("tgb") or {}
    recorded = previous.get("files") or {}
    if not force and previous.get("source") == url and KG_FILE in recorded and _matches(out, {KG_FILE: recorded[KG_FILE]}):
        return FetchResult(False, recorded, out / PROVENANCE, [f"{out / KG_FILE} is present and matches its recorded sha256"])
    _refuse_overwrite(out, [KG_FILE], recorded, force)
    tmp: Path | None = None
    try:
        with _source_archive(url, out, show_progress) as (archive, archive_record):
            members = archive.find(KG_FILE)
            if not members:
                shown = ", ".join(archive.names[:8]) + (", ..." if len(archive.names) > 8 else "")
                raise FetchError(f"{url}: the archive has no {KG_FILE} (it holds {len(archive.names)} file(s): {shown or 'none'})")
            tmp, record = archive.extract(members[0], out, KG_FILE)
            if record["bytes"] == 0:
                raise FetchError(f"{url}: {members[0]} in the archive is empty")
            os.replace(tmp, out / KG_FILE)
            tmp = None
            entry = {
                "what": f"TGB 2.0 {TGB_DATASET} edge list",
                "source": url,
                "fetched_at": _now(),
                "tool": f"tempbench-repro {__version__}",
                "archive": archive_record,
                "member": members[0],
                "files": {KG_FILE: record},
            }
    finally:
        _unlink(tmp)
    path = _write_provenance(out, "tgb", entry)
    notes = [f"extracted {entry['member']} ({record['bytes']:,} bytes) from {url}"]
    if len(members) > 1:
        notes.append(f"the archive holds {len(members)} copies of {KG_FILE}; took the shallowest, {members[0]}")
    return FetchResult(True, entry["files"], path, notes)


# --- TempBench release --------------------------------------------------------------


_BENCH_NAMES = tuple(PurePosixPath(n).name for n in (BENCHMARK_LABELLED, BENCHMARK_IDS, FLAGS_FILE))


def plan_release(names: list[str], source: str) -> tuple[dict[str, str], list[str]]:
    """Map release files to data-root paths (SPEC §1.5).

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
            rel = PurePosixPath(name[len(prefix):])
            if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                raise FetchError(f"{source}: unsafe member name {name!r}")
            plan[f"{BASELINES_DIR}/{rel}"] = name
    taken = set(plan.values())
    return plan, [n for n in names if n not in taken]


def fetch_release(source: str, out: str | Path, force: bool = False, show_progress: bool | None = None) -> FetchResult:
    """Lay out a TempBench release in ``out`` (SPEC §1.5) from a folder, an archive, or a URL to one.

    Parameters
    ----------
    source:
        A local folder (for example one written by ``hf download``), a local
        ``.zip``/``.tar.gz``, or an http(s)/file URL of such an archive.
    out:
        The data root (created when missing).
    force:
        Fetch again even when the recorded files are present, and replace
        files no fetch recorded.

    Returns
    -------
    FetchResult
        ``downloaded=False`` when the recorded files are present and unchanged
        and (for a local source) the source itself is unchanged.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    key = source if is_url(source) else str(Path(source).resolve())
    previous = read_provenance(out).get("release") or {}
    recorded = previous.get("files") or {}
    if not force and previous.get("source") == key and _matches(out, recorded) and _source_unchanged(source, previous):
        return FetchResult(False, recorded, out / PROVENANCE, ["the release files are present and match their recorded sha256"])
    staging = Path(tempfile.mkdtemp(prefix=".tempbench-release-", dir=out))
    try:
        with _source_archive(source, out, show_progress) as (archive, archive_record):
            plan, left_out = plan_release(archive.names, source)
            _refuse_overwrite(out, list(plan), recorded, force)
            files: dict[str, dict[str, Any]] = {}
            staged: dict[str, Path] = {}
            for rel, member in progress(sorted(plan.items()), total=len(plan), description="extract release", enabled=show_progress):
                tmp, record = archive.extract(member, staging, PurePosixPath(rel).name)
                staged[rel] = tmp
                files[rel] = {**record, "from": member}
        # Everything is extracted and verified: move it into place.
        for rel, tmp in staged.items():
            target = out / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, target)
        entry = {
            "what": "TempBench release",
            "source": key,
            "fetched_at": _now(),
            "tool": f"tempbench-repro {__version__}",
            "archive": archive_record,
            "files": {rel: {"bytes": r["bytes"], "sha256": r["sha256"], "from": r["from"]} for rel, r in files.items()},
            "left_out": len(left_out),
        }
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    path = _write_provenance(out, "release", entry)
    notes = [f"laid out {len(files)} file(s) from {source}"]
    for base in _BENCH_NAMES[1:]:
        if not any(f"{BENCHMARK_DIR}/{c}" in files for c in layout_candidates(base)):
            notes.append(f"the release has no {base} (see 'tempbench check')")
    if left_out:
        shown = ", ".join(left_out[:5]) + (", ..." if len(left_out) > 5 else "")
        notes.append(f"left out {len(left_out)} file(s) the pipeline does not read: {shown}")
    return FetchResult(True, entry["files"], path, notes)


def _source_unchanged(source: str, previous: dict[str, Any]) -> bool:
    """For a local source, whether it would still give the recorded files (a URL is trusted by its files)."""
    if is_url(source):
        return True
    path = Path(source)
    if path.is_file():
        return (previous.get("archive") or {}).get("sha256") == sha256_file(path)
    if not path.is_dir():
        return False
    files: dict[str, Any] = previous.get("files") or {}
    try:
        with Archive(path, source) as folder:
            plan, _ = plan_release(folder.names, source)
    except FetchError:
        return False
    return set(plan) == set(files) and all(
        plan[rel] == files[rel].get("from") and sha256_file(path / plan[rel]) == files[rel].get("sha256") for rel in plan
    )
