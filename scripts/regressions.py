#!/usr/bin/env python
"""Check the regression matrix ``configs/regressions.toml``: run its commands, compare the numbers.

Usage::

    python scripts/regressions.py                  # every entry (small and full; about a minute)
    python scripts/regressions.py --scale small    # the small entries only (seconds)
    python scripts/regressions.py --only small.test --workdir DIR --no-run   # re-check outputs already in DIR

Each entry names the commands that produce its numbers (``setup`` then
``command``, run in one working directory: a fresh temporary one unless
``--workdir`` is given), the scores file they write, the pinned values and a
tolerance class. Every pinned value gets a verdict by the ``rate`` rule of
``eval/audit/verdict.py`` with the class's bounds: OK, OKish or FAIL (a value
that cannot be read is FAIL). One line per value is printed; the exit status is
1 when any value FAILs, else 0. The file's format is in ``configs/README.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from eval.audit.verdict import FAIL, OK, OKISH, delta, verdict  # noqa: E402 - after the checkout is on the path
from tempbench_core.tomlfile import load_toml  # noqa: E402

MATRIX = ROOT / "configs" / "regressions.toml"
SCALES = ("small", "full")
_FIELDS = ("id", "scale", "split", "config", "setup", "command", "scores", "tolerance", "expected")


@dataclass(frozen=True)
class Entry:
    """One pinned row of the matrix: a configuration's numbers after some commands."""

    id: str
    scale: str
    split: str
    config: str
    setup: tuple[str, ...]
    command: str
    scores: str
    tolerance: str
    expected: dict[str, float]

    @property
    def commands(self) -> tuple[str, ...]:
        """``setup`` then ``command``: what produces :attr:`scores`, in order."""
        return (*self.setup, self.command)


def load_matrix(path: str | Path = MATRIX) -> tuple[list[Entry], dict[str, dict[str, float]]]:
    """Entries and tolerance classes of a regression file; a malformed file raises ``ValueError`` naming the entry."""
    doc = load_toml(path, "regression matrix")
    tolerances = {name: {"ok_abs": float(t["ok_abs"]), "okish_abs": float(t["okish_abs"])}
                  for name, t in doc.get("tolerance", {}).items()}
    entries: list[Entry] = []
    for i, raw in enumerate(doc.get("entry", [])):
        where = f"{path}: entry {i + 1} ({raw.get('id', 'no id')})"
        missing = [f for f in _FIELDS if f not in raw]
        extra = sorted(set(raw) - set(_FIELDS))
        if missing or extra:
            raise ValueError(f"{where}: missing {missing}, unknown {extra}; the fields are {', '.join(_FIELDS)}")
        if raw["scale"] not in SCALES:
            raise ValueError(f"{where}: scale {raw['scale']!r}, expected one of {', '.join(SCALES)}")
        if raw["tolerance"] not in tolerances:
            raise ValueError(f"{where}: tolerance class {raw['tolerance']!r} is not in [tolerance.*]")
        if not all(shlex.split(c)[:1] == ["tempbench"] for c in (*raw["setup"], raw["command"])):
            raise ValueError(f"{where}: every command must start with 'tempbench'")
        entries.append(Entry(raw["id"], raw["scale"], raw["split"], raw["config"], tuple(raw["setup"]),
                             raw["command"], raw["scores"], raw["tolerance"], dict(raw["expected"])))
    ids = [e.id for e in entries]
    if len(set(ids)) != len(ids):
        raise ValueError(f"{path}: duplicate entry ids")
    return entries, tolerances


def argv_of(command: str) -> list[str]:
    """A ``tempbench ...`` command line as the argv that runs it with this interpreter and this checkout."""
    words = shlex.split(command)
    return [sys.executable, "-m", "tempbench.cli", *words[1:]]


def child_env() -> dict[str, str]:
    """The environment of a command: this one, with the checkout first on ``PYTHONPATH``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_commands(entries: list[Entry], workdir: Path) -> None:
    """Run every distinct command of ``entries`` once, in file order, in ``workdir``; stop at a failure."""
    done: set[str] = set()
    for entry in entries:
        for command in entry.commands:
            if command in done:
                continue
            print(f"$ {command}", file=sys.stderr, flush=True)
            proc = subprocess.run(argv_of(command), cwd=workdir, env=child_env(), check=False)
            if proc.returncode != 0:
                raise SystemExit(f"{command!r} exited with {proc.returncode}")
            done.add(command)


def lookup(doc: Any, path: str) -> Any:
    """``doc["a"]["b"]`` for the path ``"a.b"``."""
    for part in path.split("."):
        doc = doc[part]
    return doc


def check(entries: list[Entry], tolerances: dict[str, dict[str, float]], workdir: Path) -> list[dict[str, Any]]:
    """One row per pinned value: ``entry, value, pinned, reproduced, delta, verdict``."""
    rows = []
    for entry in entries:
        path = workdir / entry.scores
        try:
            scores = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            scores, problem = None, f"cannot read {path}: {exc}"
        for key, pinned in entry.expected.items():
            row = {"entry": entry.id, "value": key, "pinned": pinned, "reproduced": None, "delta": None, "verdict": FAIL}
            if scores is None:
                row["problem"] = problem
            else:
                try:
                    got = lookup(scores, key)
                except (KeyError, TypeError):
                    row["problem"] = f"{entry.scores} has no {key}"
                else:
                    row.update(reproduced=got, delta=delta(pinned, got, "rate"),
                               verdict=verdict(pinned, got, "rate", tolerances[entry.tolerance]))
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run (unless ``--no-run``), check and print; 1 when any value FAILs."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", default=str(MATRIX), help="the regression matrix (default: configs/regressions.toml)")
    parser.add_argument("--scale", action="append", choices=SCALES,
                        help="only the entries of this data scale (repeatable; default: all)")
    parser.add_argument("--only", metavar="PREFIX", help="only the entries whose id starts with PREFIX")
    parser.add_argument("--workdir", metavar="DIR", help="where the commands run (default: a fresh temporary directory)")
    parser.add_argument("--no-run", action="store_true", help="do not run the commands; check the outputs already in --workdir")
    args = parser.parse_args(argv)
    if args.no_run and not args.workdir:
        parser.error("--no-run needs --workdir (the directory holding the outputs)")
    entries, tolerances = load_matrix(args.file)
    entries = [e for e in entries if (not args.scale or e.scale in args.scale)
               and (not args.only or e.id.startswith(args.only))]
    if not entries:
        parser.error("no entry selected")
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="tempbench-regressions-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if not args.no_run:
        run_commands(entries, workdir)
    rows = check(entries, tolerances, workdir)
    for r in rows:
        detail = r.get("problem") or f"pinned {r['pinned']!r}  reproduced {r['reproduced']!r}  delta {r['delta']:+.3g}"
        print(f"{r['verdict']:<5}  {r['entry']:<24}  {r['value']:<20}  {detail}")
    counts = {v: sum(r["verdict"] == v for r in rows) for v in (OK, OKISH, FAIL)}
    print(f"{len(entries)} entries, {len(rows)} values: " + ", ".join(f"{k} {v}" for k, v in counts.items())
          + f" (outputs in {workdir})")
    return 1 if counts[FAIL] else 0


if __name__ == "__main__":
    sys.exit(main())
