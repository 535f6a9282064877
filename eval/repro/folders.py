"""Folders of per-question runs: ``<name>.<ext>`` is the run of configuration ``<name>`` (SPEC §8).

A run is any per-question form of SPEC §1.4 (run files, hand-written evidence
files, the published forms: :func:`tempbench_core.runfile.read_run` reads them
all), in a ``.jsonl`` or ``.json`` file, or either gzip-compressed (``.gz``). A run's ``.meta.json`` and files of
other kinds are listed as skipped, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tempbench_core.errors import MissingDataError, RunMismatchError
from tempbench_core.runfile import RUN_SUFFIXES


@dataclass
class RunFolder:
    """The runs of one folder: configuration name -> file, and the files that are not runs."""

    path: Path
    runs: dict[str, Path] = field(default_factory=dict)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def run_name(path: Path) -> str | None:
    """``oracle.jsonl`` (or ``oracle.jsonl.gz``) -> ``oracle``; ``None`` for a ``.meta.json`` or another kind of file."""
    name = path.name
    if name.endswith(".meta.json"):
        return None
    for suffix in RUN_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def list_runs(folder: str | Path, role: str) -> RunFolder:
    """The runs of ``folder`` (not recursive), by configuration name.

    Raises
    ------
    MissingDataError
        ``folder`` is not a directory.
    RunMismatchError
        Two files name the same configuration (``oracle.json`` and ``oracle.jsonl``).
    """
    path = Path(folder)
    if not path.is_dir():
        what = "is not a directory" if path.exists() else "not found"
        raise MissingDataError(f"{role} folder {path} {what} (expected a folder of per-question runs "
                               "<config>.jsonl, e.g. tempbench-out/runs/ or DATA/baselines/)")
    out = RunFolder(path)
    for child in sorted(path.iterdir()):
        if not child.is_file():
            continue
        name = run_name(child)
        if name is None:
            if not child.name.endswith(".meta.json"):
                out.skipped.append((child, "not a per-question run (expected <config>.jsonl or <config>.json, "
                                                    "optionally .gz)"))
            continue
        if name in out.runs:
            raise RunMismatchError(f"{out.runs[name]} and {child} are both runs of configuration {name!r}; "
                                   f"keep one of them in the {role} folder")
        out.runs[name] = child
    return out
