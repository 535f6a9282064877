"""Where an output's data came from, and the command line that makes the output again.

Every report, run metadata, score and audit JSON carries one
:class:`Provenance` record, made here once per command and passed down as
data. Its ``origin`` is one of :data:`ORIGINS`, decided in this order:

``generated``
    The data root holds the ``MANIFEST.json`` that ``tempbench sample`` writes
    (its ``scale`` and ``seed`` are copied), and every file read is the root's
    (a ``--kg`` from elsewhere makes it ``unknown``, as for ``built``).
``built``
    The root's lock (``tempbench.lock``, :mod:`tempbench_core.lock`) has a
    ``sources`` entry under :data:`BUILD_GROUP`, written by
    ``tempbench build-benchmark``: the KG's file name and sha256, the labels'
    (or ``null``), the builder's ``seed`` and ``target_n``, the tool. Missing
    optional fields are left out, never guessed.
``release``
    Neither of the above, and the files have the release's counts: a KG edge
    list of :data:`KG_CARD` ``["kg rows"]`` data rows (550,376, SPEC §1.1; a
    header line is not a row) and a labelled benchmark of
    :data:`RELEASE_QUESTIONS` questions (8,710, SPEC §1.3). These two counts
    are read cheaply (lines, not parsed rows); ``tempbench check`` compares
    every count of the card.
``unknown``
    Anything else: the user's data of unstated origin.

Whatever the origin, the record names the KG file and its sha256 (when the
command reads a KG), the data root (absolute), the lock's digests and their
state now (:func:`tempbench_core.lock.lock_digests`), the tool's version, and
the command line (:func:`render_command`). Nothing in it depends on the time
or the machine beyond the absolute paths, so the same command on the same
files records the same bytes.

The data root of a command given only ``--benchmark DIR/benchmark/...`` is
``DIR`` (the layout of SPEC §1.5), so such data keeps its origin.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tempbench_core.digest import sha256_file
from tempbench_core.jsonl import open_input
from tempbench_core.layout import BENCHMARK_DIR, LOCK_FILE, MANIFEST, PROVENANCE, DataPaths
from tempbench_core.lock import lock_digests, read_lock
from tempbench_core.version import __version__

ORIGINS = ("release", "generated", "built", "unknown")
#: The release version the card describes.
RELEASE = "v1.0.1"
#: The KG of the card (SPEC §1.1): tkgl-smallpedia as TGB 2.0 ships it.
KG_CARD = {"kg rows": 550_376, "kg entities": 47_433, "kg relations": 283, "kg first year": 1900, "kg last year": 2024}
#: Questions of the release (SPEC §1.3: train 6,096 + dev 871 + test 1,743).
RELEASE_QUESTIONS = 8_710
#: The lock group that ``tempbench build-benchmark`` writes.
BUILD_GROUP = "build-benchmark"
#: The tool as outputs name it.
TOOL = f"tempbench-repro {__version__}"


@dataclass(frozen=True)
class Provenance:
    """The origin of a command's data and how to make its output again.

    Attributes
    ----------
    origin:
        One of :data:`ORIGINS`.
    detail:
        What the origin says of itself: ``{scale, seed}`` (generated); the
        build-benchmark lock entry's ``kg``, ``labels``, ``seed``, ``target_n``,
        ``tool`` (built); ``{release, kg_rows, questions}`` (release); ``{}``.
    data:
        The data root, absolute (``None`` without one).
    kg:
        ``{"file", "path", "sha256"}`` of the KG edge list the command read
        (``None`` when it reads none, or the file is absent).
    lock:
        The root's lock digests, ``path -> {bytes, sha256, source, fetched_at, state}``.
    command:
        The shell command line that reproduces the output (``None`` when made
        through the Python API).
    tool:
        ``tempbench-repro <version>``.
    """

    origin: str
    detail: dict[str, Any] = field(default_factory=dict)
    data: str | None = None
    kg: dict[str, str] | None = None
    lock: dict[str, dict[str, Any]] = field(default_factory=dict)
    command: str | None = None
    tool: str = TOOL

    def to_json(self) -> dict[str, Any]:
        """The record as every output stores it (key order fixed)."""
        return {"origin": self.origin, "detail": self.detail, "data": self.data, "kg": self.kg, "lock": self.lock,
                "tool": self.tool, "command": self.command}

    def describe(self) -> str:
        """The data's kind in words: ``a generated sample (tempbench sample, scale small, seed 42)``."""
        return describe_origin(self.origin, self.detail, self.kg)

    @property
    def by_construction_possible(self) -> bool:
        """Whether claims can hold by construction here (the data was made by tempbench's builder)."""
        return self.origin in ("generated", "built")


def describe_origin(origin: str, detail: Mapping[str, Any], kg: Mapping[str, Any] | None = None) -> str:
    """One phrase for people naming the data's kind (see :meth:`Provenance.describe`)."""
    if origin == "generated":
        return f"a generated sample (tempbench sample, scale {detail.get('scale', '?')}, seed {detail.get('seed', '?')})"
    if origin == "built":
        source = detail.get("kg") if isinstance(detail.get("kg"), Mapping) else {}
        name = source.get("file") or (kg or {}).get("file") or "?"
        digest = source.get("sha256") or (kg or {}).get("sha256")
        facts = [f"from the KG {name}" + (f" (sha256 {digest[:12]})" if isinstance(digest, str) else "")]
        facts += [f"{key} {detail[key]}" for key in ("seed", "target_n") if key in detail]
        return "a benchmark built by tempbench build-benchmark " + ", ".join(facts)
    if origin == "release":
        return f"the release {detail.get('release', RELEASE)} (recognised by its counts)"
    where = f"KG {kg['file']} (sha256 {kg['sha256'][:12]})" if kg else "no KG file"
    return f"data of unknown origin (not recognised as the release, nor generated or built by tempbench; {where})"


def absolute(path: str | Path) -> str:
    """``path`` made absolute and normalised, symbolic links kept (the name the user gave, from ``/``)."""
    return os.path.abspath(os.fspath(path))


def data_root(data: DataPaths) -> Path | None:
    """The data root: ``data.root``, else the folder holding a ``benchmark/`` folder the benchmark is in."""
    if data.root is not None:
        return Path(data.root)
    bench = Path(data.benchmark) if data.benchmark is not None else None
    if bench is not None and bench.parent.name == BENCHMARK_DIR and bench.is_file():
        return bench.parent.parent
    return None


def _kg_record(data: DataPaths, reads_kg: bool) -> dict[str, str] | None:
    kg = Path(data.kg) if reads_kg and data.kg is not None else None
    if kg is None or not kg.is_file():
        return None
    return {"file": kg.name, "path": absolute(kg), "sha256": sha256_file(kg)}


def _manifest(root: Path) -> dict[str, Any] | None:
    path = root / MANIFEST
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}  # written by the generator, then damaged: still generated, its facts unknown
    return {k: doc[k] for k in ("scale", "seed") if isinstance(doc, dict) and k in doc}


def _build_entry(root: Path) -> dict[str, Any] | None:
    """The build-benchmark entry of the root's lock, its known fields only (``None``: no such entry)."""
    if not ((root / LOCK_FILE).exists() or (root / PROVENANCE).exists()):
        return None
    entry = read_lock(root).sources.get(BUILD_GROUP)
    if not isinstance(entry, dict):
        return None
    detail: dict[str, Any] = {}
    for key in ("kg", "labels"):
        value = entry.get(key)
        if isinstance(value, dict):
            detail[key] = {k: value[k] for k in ("file", "sha256") if isinstance(value.get(k), str)}
        elif key in entry and value is None:
            detail[key] = None
    for key in ("seed", "target_n"):
        if isinstance(entry.get(key), int) and not isinstance(entry.get(key), bool):
            detail[key] = entry[key]
    if isinstance(entry.get("tool"), str):
        detail["tool"] = entry["tool"]
    return detail


def count_data_lines(path: str | Path) -> int:
    """Non-blank lines of a text file (``.gz`` read through)."""
    n = 0
    with open_input(path) as handle:
        for line in handle:
            n += bool(line.strip())
    return n


def kg_data_rows(path: str | Path) -> int:
    """Rows of a TGB edge list: its non-blank lines, less a first line whose first field is not a whole year."""
    with open_input(path) as handle:
        first = handle.readline()
    header = bool(first.strip()) and not first.split(b",")[0].strip().lstrip(b"-").isdigit()
    return count_data_lines(path) - header


def _release_counts(data: DataPaths) -> dict[str, Any] | None:
    """The release's facts when the benchmark and the KG have its counts, else ``None``."""
    bench, kg = data.benchmark, data.kg
    if bench is None or kg is None or not Path(bench).is_file() or not Path(kg).is_file():
        return None
    # the questions first: a line count of a few MB decides most data before the KG is read
    if count_data_lines(bench) != RELEASE_QUESTIONS or kg_data_rows(kg) != KG_CARD["kg rows"]:
        return None
    return {"release": RELEASE, "kg_rows": KG_CARD["kg rows"], "questions": RELEASE_QUESTIONS}


def detect_origin(data: DataPaths) -> tuple[str, dict[str, Any]]:
    """``(origin, detail)`` of ``data`` by the rule of the module docstring.

    Raises
    ------
    tempbench_core.lock.LockError
        The root's lock exists but cannot be read.
    """
    root = data_root(data)
    if root is not None and _root_files_only(data, root):
        manifest = _manifest(root)
        if manifest is not None:
            return "generated", manifest
        built = _build_entry(root)
        if built is not None:
            return "built", built
    release = _release_counts(data)
    if release is not None:
        return "release", release
    return "unknown", {}


def _root_files_only(data: DataPaths, root: Path) -> bool:
    """Whether every file of ``data`` is in ``root``: a ``--kg`` (or other file) from elsewhere is not what the
    generator or the builder made, whatever the root's manifest or lock says."""
    try:
        inside = root.resolve()
        return all(Path(f).resolve().is_relative_to(inside)
                   for f in (data.kg, data.labels, data.benchmark, data.benchmark_ids, data.flags)
                   if f is not None and Path(f).exists())
    except OSError:
        return False


def make_provenance(data: DataPaths, command: str | None = None, reads_kg: bool = True) -> Provenance:
    """The :class:`Provenance` of a command run on ``data``.

    Parameters
    ----------
    data:
        The command's input files.
    command:
        Its command line (:func:`render_command`); ``None`` from the Python API.
    reads_kg:
        Whether the command reads the KG (``score`` does not: its record names
        the KG only when the data root has one).
    """
    origin, detail = detect_origin(data)
    root = data_root(data)
    kg_known = reads_kg or (root is not None and data.kg is not None and Path(data.kg).parent == root)
    lock = lock_digests(root) if root is not None else {}
    return Provenance(origin=origin, detail=detail, data=None if root is None else absolute(root),
                      kg=_kg_record(data, kg_known), lock=lock, command=command)


# --- the command line ---------------------------------------------------------------------------


def render_command(words: Sequence[str], options: Sequence[tuple[str, Any]] = ()) -> str:
    """``tempbench WORDS... --opt value ...``, every word and value shell-quoted (:func:`shlex.quote`).

    ``options`` are ``(flag, value)`` pairs in order: a value of ``None`` is
    left out, ``True`` writes the flag alone, ``False`` leaves it out, a list
    repeats the flag once per item.
    """
    parts = ["tempbench", *words]
    for flag, value in options:
        if value is None or value is False:
            continue
        if value is True:
            parts.append(flag)
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            parts += [flag, str(item)]
    return " ".join(shlex.quote(p) for p in parts)


def data_options(data: DataPaths, kg: bool = True, benchmark: bool = True) -> list[tuple[str, str | None]]:
    """The data flags that name exactly ``data``'s files, absolute: ``--data``, ``--kg``, ``--labels``, ...

    ``kg=False`` / ``benchmark=False`` for a command without those flags (as
    ``tempbench.data.add_data_arguments`` takes them). An optional file that
    is absent is not named; ``benchmark.jsonl`` and the baselines are found
    from the benchmark and the root again, as they were.
    """
    def present(path: Any) -> str | None:
        return absolute(path) if path is not None and Path(path).exists() else None

    options: list[tuple[str, str | None]] = [("--data", None if data.root is None else absolute(data.root))]
    if kg:
        options += [("--kg", present(data.kg)), ("--labels", present(data.labels))]
    if benchmark:
        options += [("--benchmark", present(data.benchmark)), ("--flags", present(data.flags))]
    return options
