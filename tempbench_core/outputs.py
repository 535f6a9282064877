"""Where a command may write: never over an input, never into a folder that is not ours.

Two rules, applied by every command that writes:

- an **output file** must not be one of the files the command reads (compared
  after resolving symbolic links), must not be a directory, and its parent
  directory must exist (a mistyped path is an error, not a new folder);
- an **output directory** (``reproduce --out``, ``sample --out``,
  ``build-benchmark --out``, the default ``tempbench-out/``) is used only when
  it is missing, empty, or was created by a tempbench command of the same kind
  before: such a directory holds a ledger file (:data:`LEDGER`) naming its
  kind. A folder inside such a directory (``tempbench-out/runs/``, which
  ``run`` and ``reproduce`` fill) is ours too: the nearest ledger above it
  decides. A directory holding anything else (a data root, someone's
  ``baselines/`` or notes) is refused. Regenerating a directory of ours keeps
  the files we did not write.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tempbench_core.atomic import write_json
from tempbench_core.errors import OutputError
from tempbench_core.runfile import meta_path

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
    if str(path) == "-":
        # not stdout, as for some tools: the tables go there; a file named "-" is surely not what was meant
        raise OutputError(out, f"{what} - would be a file named '-' (tempbench prints its tables on stdout); give a "
                               "file name, or /dev/stdout to print there")
    if out.is_dir():
        raise OutputError(out, f"{what} is a directory, not a file")
    if not out.parent.is_dir():
        raise OutputError(out, f"the folder {out.parent} does not exist (create it first; {what} does not create folders)")
    for given in inputs:
        if given is None:
            continue
        # a run's .meta.json is read with it (the run-vs-data check): it is an input too
        for source in (Path(given), meta_path(given)):
            if source.exists() and _same(out, source):
                raise OutputError(out, f"{what} is an input of this command ({source}); choose another path")
    return out


def _within(path: Path, root: Path) -> bool:
    """Whether ``path`` (existing or not) is ``root`` or inside it, symbolic links resolved."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def _ledger_kind(directory: Path) -> str | None:
    """The kind named by ``directory``'s ledger; ``None`` without a readable one."""
    ledger = directory / LEDGER
    if not ledger.is_file():
        return None
    try:
        kind = json.loads(ledger.read_text(encoding="utf-8")).get("kind")
    except (OSError, ValueError, UnicodeDecodeError, AttributeError):
        return "unreadable"  # a ledger we cannot read marks the folder, but as nothing we know
    return kind if isinstance(kind, str) else "unreadable"


def owning_ledger(directory: str | Path) -> tuple[Path, str] | None:
    """``(folder, kind)`` of the nearest ledger in ``directory`` or above it, ``None`` when there is none.

    The outputs tempbench writes go into subfolders of the folder it claimed
    (``tempbench-out/runs/``, ``plots/``), which hold no ledger of their own:
    the claimed folder's ledger covers them.
    """
    try:
        here = Path(directory).resolve()
    except OSError:
        return None
    for folder in (here, *here.parents):
        kind = _ledger_kind(folder)
        if kind is not None:
            return folder, kind
    return None


def _ours(directory: Path, kind: str) -> bool:
    owner = owning_ledger(directory)
    if owner is not None:
        # the nearest ledger decides: a data root's subfolder is not an output folder, nor the reverse
        return owner[1] == kind
    return any((directory / mark).is_file() for mark in _OTHER_MARKS.get(kind, ()))


def claim_output_dir(path: str | Path, kind: str, inputs: Iterable[str | Path | None] = (), create: bool = True,
                     data_root: str | Path | None = None) -> Path:
    """Make ``path`` an output directory of ``kind`` (see the module docstring), or refuse.

    With ``create`` (default) the directory is created when missing and its
    ledger written, so that the next command of the same kind may write there
    again; ``create=False`` only checks (call it first, before slow work, and
    again with ``create=True`` just before writing). ``data_root``: the data
    root the command reads; an output folder is never that root nor inside it
    (what a command writes there, a later one would read as data: runs in
    ``baselines/`` as the published ones).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown output kind {kind!r}")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise OutputError(out, "it is an existing file, not a folder; give a folder")
    if data_root is not None and _within(out, Path(data_root)):
        where = "the data root" if _within(Path(data_root), out) else f"inside the data root {data_root}"
        raise OutputError(out, f"it is {where}, which this command reads (its outputs "
                               "there would be read as data later: a run in baselines/ as a published one); give a "
                               "folder outside it")
    for source in inputs:
        if source is not None and Path(source).exists() and _same(out, Path(source)):
            raise OutputError(out, f"it is an input of this command ({source})")
    if out.is_dir() and any(out.iterdir()) and not _ours(out, kind):
        found = sorted(p.name for p in out.iterdir())
        shown = ", ".join(found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
        owner = owning_ledger(out)
        whose = (f"it is inside {owner[0]}, a tempbench folder of another kind ({owner[1]})" if owner is not None
                 else f"no tempbench ledger ({LEDGER}) in it or in a folder above it")
        raise OutputError(out, f"the folder holds files tempbench did not write ({shown}; {whose}); they could be a "
                               "data root or someone's own files, so it is left alone: give a new or empty folder")
    if not out.parent.is_dir():
        raise OutputError(out, f"the folder {out.parent} does not exist (create it first)")
    if not create:
        return out
    out.mkdir(exist_ok=True)
    owner = owning_ledger(out)
    if owner is None or owner[1] != kind:  # a folder inside one of ours is covered by its ledger
        write_json(out / LEDGER, {"kind": kind, "written_by": "tempbench"})
    return out


@contextmanager
def claimed_output_dir(path: str | Path, kind: str, inputs: Iterable[str | Path | None] = (),
                       data_root: str | Path | None = None) -> Iterator[Path]:
    """:func:`claim_output_dir` for the command's whole work: a folder it made is removed again on a failure.

    Removed only when the command created it and nothing but the ledger is
    in it then (what the work wrote stays, to be looked at); a folder that
    existed before is left as it was.
    """
    out = Path(path)
    made = not out.exists()
    claimed = claim_output_dir(out, kind, inputs, data_root=data_root)
    try:
        yield claimed
    except BaseException:
        if made and {p.name for p in claimed.iterdir()} <= {LEDGER}:
            shutil.rmtree(claimed, ignore_errors=True)
        raise
