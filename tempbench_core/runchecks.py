"""A run checked against what it claims to be, before anything is scored on it.

A run file records in its ``.meta.json`` (SPEC §6.1) the sha256 of the inputs it
was made on, its number of records and its split. A command that is given a
run and data checks the three before scoring, and refuses (exit 2, with the
way to go on anyway) a run made on other data, cut short or edited, or made
for another split: each would otherwise be scored silently as something it is
not. Reading the run itself is :mod:`tempbench_core.runfile`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tempbench_core.digest import sha256_file
from tempbench_core.errors import InputError, RunMismatchError
from tempbench_core.runfile import count_records, exact_count, meta_path, question_ids, read_meta
from tempbench_core.text import terminal_text

#: How a refusal of :func:`check_run_inputs`, :func:`check_run_count` and :func:`check_run_split` ends by default.
FORCE_WAY_OUT = "--force to proceed anyway"


def check_run_inputs(run_path: str | Path, data: Any, names: tuple[str, ...] = ("benchmark", "benchmark_ids"),
                     force: bool = False, way_out: str = FORCE_WAY_OUT) -> list[str]:
    """Refuse a run whose ``.meta.json`` names other input files (by sha256) than ``data`` has.

    Parameters
    ----------
    run_path:
        The run file; its metadata records ``inputs.<name>.sha256`` (SPEC §6.1).
    data:
        The :class:`~tempbench_core.layout.DataPaths` the run is about to meet.
    names:
        Which inputs matter to the command (the benchmark for scoring; also the
        KG and labels where the command retrieves).
    force:
        Report the mismatches instead of refusing.
    way_out:
        How the message tells to go on anyway (a command without ``--force``
        names its own way).

    Returns
    -------
    list of str
        One line per mismatch (empty when all agree, or when the run has no
        metadata to compare).

    Raises
    ------
    InputError
        The ``.meta.json`` is there but is no JSON object (:func:`read_meta`).
    RunMismatchError
        A mismatch, without ``force``.
    """
    meta = read_meta(run_path)
    recorded = (meta or {}).get("inputs") or {}
    problems = []
    for name in names:
        theirs = recorded.get(name)
        ours = getattr(data, name, None)
        if not isinstance(theirs, dict) or not theirs.get("sha256") or ours is None or not Path(ours).is_file():
            continue
        digest = sha256_file(ours)
        if digest != theirs["sha256"]:
            problems.append(f"{name}: the run was made on {terminal_text(theirs.get('path'))} (sha256 "
                            f"{theirs['sha256'][:12]}…), this command has {terminal_text(ours)} (sha256 {digest[:12]}…)")
    if problems and not force:
        error = RunMismatchError(f"{terminal_text(run_path)} was made on other data than given here:\n  "
                                 + "\n  ".join(problems)
                                 + f"\n(give the data the run was made on, or {way_out})")
        error.multiline = True  # one problem per line; the paths in it are escaped above
        raise error
    return problems


def check_run_count(run_path: str | Path, force: bool = False, way_out: str = FORCE_WAY_OUT) -> list[str]:
    """Refuse a run file that holds another number of records than its ``.meta.json`` records (``counts.questions``).

    A run cut short (``head -100``) or edited by hand would otherwise be scored
    as a run of fewer questions, silently. Nothing to compare without a
    ``.meta.json`` or without ``counts.questions`` in it; a file of the size the
    meta records (``run_bytes``, written by ``tempbench run``) is taken without
    counting its lines.

    Returns
    -------
    list of str
        The mismatch when ``force`` (empty when the counts agree).

    Raises
    ------
    InputError
        The ``.meta.json`` is no JSON object, or its ``counts.questions`` is no count.
    RunMismatchError
        The counts differ, without ``force``.
    """
    meta = read_meta(run_path)
    counts = (meta or {}).get("counts")
    if not isinstance(counts, dict) or "questions" not in counts:
        return []
    expected = counts["questions"]
    if isinstance(expected, bool) or not isinstance(expected, int) or expected < 0:
        raise InputError(meta_path(run_path), None, f"counts.questions is {expected!r}",
                         "the number of records of the run, as `tempbench run` writes it")
    size = meta.get("run_bytes")  # type: ignore[union-attr]
    if isinstance(size, int) and not isinstance(size, bool) and Path(run_path).stat().st_size == size:
        return []  # the file as `tempbench run` wrote it, to the byte: its records were counted then
    found = count_records(run_path)
    if found is not None and found != expected:
        found = exact_count(run_path)  # the fast count is exact for a run file; confirmed for anything else
    if found is None or found == expected:
        return []
    problem = (f"{terminal_text(run_path)} has {found:,} records, its {terminal_text(meta_path(run_path).name)} says "
               f"{expected:,}: truncated or edited?")
    if not force:
        raise RunMismatchError(f"{problem} ({way_out})")
    return [problem]


def check_run_split(run_path: str | Path, split: str, split_ids: Callable[[], set[str] | None],
                    force: bool = False, way_out: str = FORCE_WAY_OUT) -> list[str]:
    """Refuse a run made for another split than ``split`` (a command's ``--split``).

    SPEC §3.2 counts a question of the split that is absent from the run as an
    empty retrieval, so a run of another split would be scored as a run that
    retrieved nothing, silently. The rule:

    - the run's ``.meta.json`` records a split: it must be ``split`` or ``all``
      (a run of every question covers each split);
    - it records none (no ``.meta.json``: a published or hand-written file): a
      run with records must have at least one question of ``split``.

    Parameters
    ----------
    split_ids:
        The ids (as text) of the benchmark's questions of ``split``, asked for
        only when the run has no recorded split; ``None`` or empty: not known
        (or no question has that split, which the scorer reports): no check.

    Returns
    -------
    list of str
        The mismatch when ``force`` (empty when the run fits).

    Raises
    ------
    InputError
        The ``.meta.json`` is no JSON object, or its split is not a name.
    RunMismatchError
        The run is of another split, without ``force``.
    """
    meta = read_meta(run_path)
    recorded = (meta or {}).get("split")
    run = terminal_text(run_path)
    if recorded is not None:
        if not isinstance(recorded, str):
            raise InputError(meta_path(run_path), None, f"split is {recorded!r}", "the split the run was made on, such as 'test'")
        if recorded in (split, "all"):
            return []
        problem = (f"{run} was made on the {terminal_text(repr(recorded))} split (its "
                   f"{terminal_text(meta_path(run_path).name)}), not on --split {split}: every {split} question "
                   "would count as an empty retrieval")
        fix = f"give --split {terminal_text(recorded)}, or a run of the {split} split"
    else:
        ids = question_ids(run_path)
        if not ids:
            return []
        wanted = split_ids()
        if not wanted or any(str(qid) in wanted for qid in ids):
            return []
        problem = (f"none of the {len(ids):,} questions of {run} is a question of --split {split} (e.g. "
                   f"{terminal_text(repr(ids[0]))}): every {split} question would count as an empty retrieval")
        fix = f"give the --split of the run, or a run of the {split} split"
    if not force:
        raise RunMismatchError(f"{problem} ({fix}, or {way_out})")
    return [problem]
