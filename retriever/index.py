"""The KG index: column arrays, rendered labels, incidence and BM25, with a cache.

:func:`load_index` builds everything from the inputs (SPEC §1.1, §1.2, §2.1) or
loads it from a cache directory. The cache cannot execute code on load: every
array is its own ``.npy`` file read with ``allow_pickle=False`` (the large
string lists too: ids and labels are UTF-8 blobs with offsets,
:mod:`retriever.strings`), and the few scalars go into JSON. Layout::

    <cache_dir>/<fingerprint>/arrays/<part>__<name>.npy
    <cache_dir>/<fingerprint>/meta.json
    <cache_dir>/<fingerprint>/manifest.json   (sha256, size and times of every file above)

The arrays are opened memory-mapped (read-only): loading costs no copy, and
every process that uses the same entry (the workers of a run, several runs at
once) shares one copy of the pages in the OS cache instead of holding its own.
A file whose size, modification time and change time are those recorded when
the entry was written is the file that was hashed (the change time cannot be
set back by a user); any other file is hashed again (on two threads: hashing
releases the GIL) and its sha256 checked, so a damaged or replaced entry is
never used.

The fingerprint is the sha256 of the format version, the sha256 of every input
file and the BM25 options, so a changed input gets a new directory (a rebuild).
An entry whose checksums do not match, or that fails to load, is reported on
stderr, deleted and rebuilt. Entries are written to a temporary directory and
renamed into place, so a crash never leaves a half-written entry under its name.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from retriever.bm25 import BM25, K1, B
from retriever.incidence import Incidence
from retriever.kg import KG, load_edgelist
from retriever.labels import combine_labels, harvest_labels, load_labels, render
from retriever.strings import IdLookup, PairTable, StringTable
from tempbench_core.console import info
from tempbench_core.digest import sha256_file, sha256_json
from tempbench_core.errors import MissingDataError
from tempbench_core.jsonl import dumps_compact, dumps_json, loads_fast, require_file
from tempbench_core.layout import BENCHMARK_DIR, BENCHMARK_IDS, BENCHMARK_LABELLED, default_index_cache, first_existing
from tempbench_core.memory import gc_paused

#: The cache layout (3: strings as arrays too, file times in the manifest; 2: one memory-mapped ``.npy``
#: per array, strings in JSON; 1: one ``.npz``). An entry of another layout is replaced without a warning.
FORMAT_VERSION = 3
#: What the fingerprint hashes as its format: the index it names, not how the cache stores it (so
#: run metadata that records the fingerprint does not change with the cache layout).
FINGERPRINT_VERSION = 1
_KG_ARRAYS = ("head", "tail", "relation", "year")
_INC_ARRAYS = ("indptr", "rows", "year_rows", "year_keys")


@dataclass(frozen=True, eq=False)
class KGIndex:
    """Everything the retriever needs about the KG.

    Attributes
    ----------
    kg:
        The edge list as arrays (SPEC §1.1).
    labels:
        Combined ``id -> label`` map (labels file, then harvested; SPEC §1.2),
        including ids that are not in the KG.
    entity_labels, relation_labels:
        Rendered labels (raw id when missing), index = interned id.
    incidence:
        Per-entity rows and ``(entity, year)`` index (SPEC §2.4).
    bm25:
        The BM25 index, one document per row (SPEC §2.1-§2.2).
    fingerprint:
        sha256 of the inputs and options (the cache key).
    from_cache:
        Whether this index was loaded from the cache.
    timings:
        Seconds per stage (``load_csv``, ``labels``, ``incidence``, ``bm25``,
        ``cache_save`` when built; ``fingerprint``, ``cache_load`` when loaded).
    """

    kg: KG
    labels: Mapping[str, str]
    entity_labels: Sequence[str]
    relation_labels: Sequence[str]
    incidence: Incidence
    bm25: BM25
    fingerprint: str
    from_cache: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    cache_path: Path | None = None

    def render(self, id_: str) -> str:
        """Rendered label of any id (raw id fallback, SPEC §1.2)."""
        return render(self.labels, id_)



def _benchmark_files(benchmark_dir: str | Path | None) -> tuple[Path | None, Path | None]:
    """``benchmark_labelled.jsonl`` and ``benchmark.jsonl`` (if present; either may be ``.gz``) of a directory or file."""
    if benchmark_dir is None:
        return None, None
    where = Path(benchmark_dir)
    labelled_name, ids_name = Path(BENCHMARK_LABELLED).name, Path(BENCHMARK_IDS).name
    if where.is_file():
        labelled: Path | None = where
        where = where.parent
    else:
        labelled = first_existing(where, labelled_name)
        if labelled is None and first_existing(where / BENCHMARK_DIR, labelled_name) is not None:
            where = where / BENCHMARK_DIR
            labelled = first_existing(where, labelled_name)
    if labelled is None or not labelled.is_file():
        raise MissingDataError(f"benchmark file not found: {labelled or where / labelled_name}")
    ids = first_existing(where, ids_name)
    return labelled, (ids if ids is not None and ids.is_file() and ids != labelled else None)


def fingerprint(
    kg_path: str | Path,
    labels_path: str | Path | None = None,
    benchmark_dir: str | Path | None = None,
    k1: float = K1,
    b: float = B,
) -> str:
    """sha256 over the format version, the inputs' sha256 and the options."""
    kg_path = Path(kg_path)
    require_file(kg_path, "KG edge list")
    if labels_path is not None:
        require_file(labels_path, "labels file")
    labelled, ids = _benchmark_files(benchmark_dir)
    spec = {
        "format": FINGERPRINT_VERSION,
        "kg": sha256_file(kg_path),
        "labels": sha256_file(Path(labels_path)) if labels_path is not None else None,
        "labelled": sha256_file(labelled) if labelled is not None else None,
        "ids": sha256_file(ids) if ids is not None else None,
        "k1": k1,
        "b": b,
    }
    return sha256_json(spec)


def build_index(
    kg_path: str | Path,
    labels_path: str | Path | None = None,
    benchmark_dir: str | Path | None = None,
    k1: float = K1,
    b: float = B,
    fingerprint_: str = "",
) -> KGIndex:
    """Build a :class:`KGIndex` from the input files, without any cache."""
    timings: dict[str, float] = {}
    start = time.perf_counter()
    kg = load_edgelist(kg_path)
    timings["load_csv"] = time.perf_counter() - start

    def timed(stage: str, make: Callable[..., Any], *args: Any) -> Any:
        start = time.perf_counter()
        made = make(*args)
        timings[stage] = time.perf_counter() - start
        return made

    # the incidence is sorts of arrays, which numpy runs without the GIL: it is built on the side while
    # the labels (Python objects) and the BM25 index are made
    with ThreadPoolExecutor(1) as side:
        incidence_made = side.submit(timed, "incidence", Incidence.build, kg)
        start = time.perf_counter()
        file_labels = load_labels(labels_path) if labels_path is not None else {}
        labelled, ids = _benchmark_files(benchmark_dir)
        harvested = harvest_labels(labelled, ids) if labelled is not None else {}
        labels = combine_labels(file_labels, harvested)
        entity_labels = [render(labels, e) for e in kg.entity_ids]
        relation_labels = [render(labels, r) for r in kg.relation_ids]
        timings["labels"] = time.perf_counter() - start
        bm25 = timed("bm25", BM25.build, kg, entity_labels, relation_labels, k1, b)
        incidence = incidence_made.result()
    return KGIndex(kg, labels, entity_labels, relation_labels, incidence, bm25, fingerprint_, False, timings)


def load_index(
    kg_path: str | Path,
    labels_path: str | Path | None = None,
    benchmark_dir: str | Path | None = None,
    cache_dir: str | Path | None | bool = None,
    progress: Callable[[str], None] | None = None,
    k1: float = K1,
    b: float = B,
) -> KGIndex:
    """Load the index of the given inputs from the cache, building it when needed.

    Parameters
    ----------
    kg_path:
        TGB edge list (SPEC §1.1).
    labels_path:
        Labels TSV or JSON (SPEC §1.2), or ``None``.
    benchmark_dir:
        Directory with ``benchmark_labelled.jsonl`` (and optionally
        ``benchmark.jsonl``) to harvest labels from, or ``None``.
    cache_dir:
        ``None``: the default cache (:func:`tempbench_core.layout.default_index_cache`);
        a path: that directory; ``False``: no cache at all (always build, never
        write).
    progress:
        Called with a short message at each stage (e.g. :func:`tempbench_core.console.info`).
    k1, b:
        BM25 parameters (SPEC §2.2 fixes 1.5 and 0.75).
    """
    say = progress or (lambda _message: None)
    start = time.perf_counter()
    key = fingerprint(kg_path, labels_path, benchmark_dir, k1, b)
    fp_time = time.perf_counter() - start
    if cache_dir is False:
        say("building the index (cache disabled)")
        with gc_paused():  # see below
            index = build_index(kg_path, labels_path, benchmark_dir, k1, b, key)
        index.timings["fingerprint"] = fp_time
        return index
    if cache_dir is None or cache_dir is True:
        cache_dir = default_index_cache()
    entry = Path(cache_dir) / key
    remove_stale_temporaries(Path(cache_dir))
    if entry.is_dir() and _layout(entry) not in (None, FORMAT_VERSION):
        say(f"index cache {entry} has an older layout; rebuilding")
        shutil.rmtree(entry, ignore_errors=True)
    if entry.is_dir():
        start = time.perf_counter()
        try:
            index = _read_entry(entry, key)
        except Exception as exc:  # noqa: BLE001 - any unreadable entry is rebuilt
            info(f"warning: index cache {entry} is corrupted ({exc}); rebuilding")
            shutil.rmtree(entry, ignore_errors=True)
        else:
            index.timings.update(fingerprint=fp_time, cache_load=time.perf_counter() - start)
            say(f"index loaded from cache {entry}")
            return index
    say("building the index")
    # millions of long-lived objects (ids, labels, terms) are made: with the cyclic collector on, each full
    # collection walks them all again (about 4% of a 10M-row build); the build makes no cycles to free early
    with gc_paused():
        index = build_index(kg_path, labels_path, benchmark_dir, k1, b, key)
        start = time.perf_counter()
        try:
            _write_entry(entry, index)
        except OSError as exc:
            info(f"warning: could not write index cache {entry} ({exc})")
        else:
            object.__setattr__(index, "cache_path", entry)
    index.timings.update(fingerprint=fp_time, cache_save=time.perf_counter() - start)
    return index


def _layout(entry: Path) -> int | None:
    """The ``format`` an entry's manifest declares (``None`` when it cannot be read: then it is checked as usual)."""
    try:
        value = json.loads((entry / "manifest.json").read_text(encoding="utf-8")).get("format")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def remove_stale_temporaries(cache_dir: Path) -> list[Path]:
    """Delete half-written entries left by a killed build (``.<key>.<pid>.*`` whose process is gone)."""
    removed = []
    if not cache_dir.is_dir():
        return removed
    for tmp in cache_dir.glob(".*.*.*"):
        parts = tmp.name.split(".")
        if not tmp.is_dir() or len(parts) < 4 or not parts[2].isdigit():
            continue
        if not _alive(int(parts[2])):
            shutil.rmtree(tmp, ignore_errors=True)
            removed.append(tmp)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _write_entry(entry: Path, index: KGIndex) -> None:
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name[:16]}.{os.getpid()}.", dir=entry.parent))
    try:
        (tmp / _ARRAY_DIR).mkdir()
        # numpy writes and hashlib hashes without the GIL: two threads write and hash the arrays while this one
        # makes the string tables
        with ThreadPoolExecutor(max_workers=2) as pool:
            saved: dict[str, Future[str]] = {}

            def save(name: str, value: np.ndarray) -> None:
                saved[name] = pool.submit(_save_array, tmp / _ARRAY_DIR / f"{name}.npy", value)

            for name in _KG_ARRAYS:
                save(f"kg__{name}", getattr(index.kg, name))
            for name in _INC_ARRAYS:
                save(f"incidence__{name}", getattr(index.incidence, name))
            for name, value in index.bm25.to_arrays().items():
                save(f"bm25__{name}", value)
            for part, table in _string_tables(index).items():
                for name, value in table.arrays().items():
                    save(f"{part}__{name}", value)
            for part, lookup in (("entity_lookup", index.kg.entity_index), ("relation_lookup", index.kg.relation_index)):
                stored = lookup.arrays() if isinstance(lookup, IdLookup) else None
                for name, value in (stored or {}).items():
                    save(f"{part}__{name}", value)
            digests = {f"{_ARRAY_DIR}/{name}.npy": future.result() for name, future in saved.items()}
        arrays = list(saved)
        meta = {
            "format": FORMAT_VERSION,
            "fingerprint": index.fingerprint,
            "source": index.kg.source,
            "arrays": arrays,
            "incidence": {"min_year": index.incidence.min_year, "span": index.incidence.span},
            "bm25": index.bm25.metadata(),
            "build_timings": index.timings,
        }
        (tmp / "meta.json").write_text(dumps_compact(meta), encoding="utf-8")
        digests["meta.json"] = _sha256(tmp / "meta.json")
        files = list(digests)
        manifest = {
            "format": FORMAT_VERSION,
            "fingerprint": index.fingerprint,
            "sha256": digests,
            # the files' times as the renamed entry will have them (a rename keeps them)
            "stat": {f: _stat(tmp / f) for f in files},
        }
        (tmp / "manifest.json").write_text(dumps_json(manifest, indent=2), encoding="utf-8")
        try:
            os.rename(tmp, entry)
        except OSError:
            if not entry.is_dir():  # someone else wrote the same entry first: keep theirs
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_ARRAY_DIR = "arrays"


def _save_array(path: Path, value: np.ndarray) -> str:
    """Write ``value`` as ``.npy`` (no pickles) and return the file's sha256."""
    np.save(path, np.ascontiguousarray(value), allow_pickle=False)
    return _sha256(path)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 22):
            digest.update(block)
    return digest.hexdigest()


def _digests(paths: list[Path]) -> list[str]:
    """sha256 of each file, on two threads (hashlib releases the GIL on large blocks), in order."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(_sha256, paths))


def _open_array(path: Path) -> np.ndarray:
    """A cached array, memory-mapped read-only (an empty array is read: there is nothing to map).

    Returned as a plain ``ndarray`` view of the map: ``np.memmap`` indexes
    through Python code, ten times slower on the retriever's small lookups.
    """
    array = np.load(path, mmap_mode="r", allow_pickle=False)
    return array.view(np.ndarray) if array.size else np.load(path, allow_pickle=False)


def _stat(path: Path) -> list[int]:
    """``[size, mtime_ns, ctime_ns, inode]``: what tells that a file was not changed since it was hashed."""
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _string_tables(index: KGIndex) -> dict[str, StringTable]:
    """The index's large string lists as :class:`~retriever.strings.StringTable` (what the cache stores)."""
    labels = index.labels
    return {
        "entity_ids": _table(index.kg.entity_ids), "relation_ids": _table(index.kg.relation_ids),
        "entity_labels": _table(index.entity_labels), "relation_labels": _table(index.relation_labels),
        "label_ids": _table(list(labels)), "label_texts": _table(list(labels.values())),
    }


def _table(strings: Any) -> StringTable:
    return strings if isinstance(strings, StringTable) else StringTable.of(list(strings))


def _read_entry(entry: Path, key: str) -> KGIndex:
    manifest = json.loads((entry / "manifest.json").read_text(encoding="utf-8"))
    if manifest.get("format") != FORMAT_VERSION or manifest.get("fingerprint") != key:
        raise ValueError("manifest does not match the inputs")
    listed = manifest["sha256"]
    if "meta.json" not in listed or any(Path(name).is_absolute() or ".." in Path(name).parts for name in listed):
        raise ValueError("manifest lists unexpected files")
    recorded = manifest.get("stat") or {}
    changed = [n for n in listed if recorded.get(n) != _stat(entry / n)]
    for name, digest in zip(changed, _digests([entry / n for n in changed]), strict=True):
        if digest != listed[name]:
            raise ValueError(f"checksum mismatch in {name}")
    meta: dict[str, Any] = loads_fast((entry / "meta.json").read_bytes())
    if sorted(f"{_ARRAY_DIR}/{a}.npy" for a in meta["arrays"]) != sorted(n for n in listed if n != "meta.json"):
        raise ValueError("manifest and meta.json list different arrays")
    arrays = {name: _open_array(entry / _ARRAY_DIR / f"{name}.npy") for name in meta["arrays"]}
    tables = {part: StringTable(arrays[f"{part}__blob"], arrays[f"{part}__offsets"])
              for part in ("entity_ids", "relation_ids", "entity_labels", "relation_labels", "label_ids", "label_texts")}

    def lookup(part: str, table: StringTable) -> IdLookup:
        if f"{part}__keys" in arrays:
            return IdLookup(arrays[f"{part}__keys"], arrays[f"{part}__positions"], table)
        return IdLookup(None, None, table)

    kg = KG(
        *(arrays[f"kg__{name}"] for name in _KG_ARRAYS),
        entity_ids=tables["entity_ids"],
        relation_ids=tables["relation_ids"],
        entity_index=lookup("entity_lookup", tables["entity_ids"]),
        relation_index=lookup("relation_lookup", tables["relation_ids"]),
        source=meta["source"],
    )
    incidence = Incidence(
        *(arrays[f"incidence__{name}"] for name in _INC_ARRAYS),
        min_year=meta["incidence"]["min_year"],
        span=meta["incidence"]["span"],
    )
    bm25 = BM25.from_arrays({k.removeprefix("bm25__"): v for k, v in arrays.items() if k.startswith("bm25__")}, meta["bm25"])
    return KGIndex(
        kg, PairTable(tables["label_ids"], tables["label_texts"]), tables["entity_labels"], tables["relation_labels"],
        incidence, bm25, key, True, {}, entry,
    )
