"""Where a command may write: never over an input, never into a folder that is not ours.

Two rules, applied by every command that writes:

- an **output file** must not be one of the files the command reads (compared
  after resolving symbolic links), must not be a directory, and its parent
  directory must exist (a mistyped path is an error, not a new folder);
- an **output directory** (``reproduce --out``, ``sample --out``,
  ``build-benchmark --out``, the default ``tempbench-out/``) is used only when
  it is missing, empty, or was created by a tempbench command of the same kind
  before: such a directory holds a ledger file (:data:`LEDGER`) naming its
  kind. A directory holding anything else (a data root, someone's
  ``baselines/`` or notes) is refused. Regenerating a directory of ours keeps
  the files we did not write.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from tempbench_core.atomic import write_json
from tempbench_core.errors import OutputError

LEDGER = ".tempbench-output.json"
#: The default output directory of ``run`` and ``reproduce``.
DEFAULT_OUT = "tempbench-out"
#: Kinds of output directories: run and report outputs, or a data root (generated data, a built benchmark).
KINDS = ("outputs", "data-root")
#: Ledgers of other tools that also mark a directory as ours, by kind (the generated sample's manifest).
_OTHER_MARKS = {"data-root": ("MANIFEST.json",)}


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_output_file(path: str | Path, inputs: Iterable[str | Path | None] = (), what: str = "output") -> Path:
    """Refuse an output file that is an input, a directory, or in a folder that does not exist.

    Parameters
    ----------
    path:
        The output file the user named.
    inputs:
        Every file the command reads (``None`` entries are skipped).
    what:
        How the output is called in the message (``--json``, ``--out``).
    """
    out = Path(path)
    if out.is_dir():
        raise OutputError(out, f"{what} is a directory, not a file")
    if not out.parent.is_dir():
        raise OutputError(out, f"the folder {out.parent} does not exist (create it first; {what} does not create folders)")
    for source in inputs:
        if source is not None and Path(source).exists() and _same(out, Path(source)):
            raise OutputError(out, f"{what} is an input of this command ({source}); choose another path")
    return out


def _ours(directory: Path, kind: str) -> bool:
    ledger = directory / LEDGER
    if ledger.is_file():
        try:
            return json.loads(ledger.read_text(encoding="utf-8")).get("kind") == kind
        except (ValueError, UnicodeDecodeError, AttributeError):
            return False
    return any((directory / mark).is_file() for mark in _OTHER_MARKS.get(kind, ()))


def claim_output_dir(path: str | Path, kind: str, inputs: Iterable[str | Path | None] = (), create: bool = True) -> Path:
    """Make ``path`` an output directory of ``kind`` (see the module docstring), or refuse.

    With ``create`` (default) the directory is created when missing and its
    ledger written, so that the next command of the same kind may write there
    again; ``create=False`` only checks (call it first, before slow work, and
    again with ``create=True`` just before writing).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutputError(out, "it is an existing file, not a folder; give a folder")
    for source in inputs:
        if source is not None and Path(source).exists() and _same(out, Path(source)):
            raise OutputError(out, f"it is an input of this command ({source})")
    if out.is_dir() and any(out.iterdir()) and not _ours(out, kind):
        found = sorted(p.name for p in out.iterdir())
        shown = ", ".join(found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
        raise OutputError(out, f"the folder holds files tempbench did not write ({shown}); it could be a data root or "
                               "someone's own files, so it is left alone: give a new or empty folder")
    if not out.parent.is_dir():
        raise OutputError(out, f"the folder {out.parent} does not exist (create it first)")
    if not create:
        return out
    out.mkdir(exist_ok=True)
    if not (out / LEDGER).is_file():
        write_json(out / LEDGER, {"kind": kind, "written_by": "tempbench"})
    return out
