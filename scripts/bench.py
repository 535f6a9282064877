#!/usr/bin/env python
"""Benchmarks of tempbench-repro; figures go to a JSON file (default ``bench-results.json``).

Usage::

    python scripts/bench.py [--only SECTION,...] [--out bench-results.json] [--workdir DIR]
                            [--against COMMIT,...] [--pairs N]

Every figure is a whole ``tempbench`` process (or a fresh ``python -c``), timed
from outside with :func:`os.wait4`: wall time, user + system CPU and the peak
resident memory of that process (children included). This machine's speed
drifts by 2-3x between hours, so the figures that matter are the side-by-side
ratios of section ``versus``: the current checkout and an older commit (a git
worktree in the work folder) are run in turn, A B A B, on the same data and
cache state, and each pair gives one ratio; the median ratio is reported. Only
the project's own commands are timed: correctness against the slow references
and the libraries (``rank_bm25``, ``ranx``, ``repro_eval``) is the test suite's.

Sections (results are merged into the output file, so sections run separately
keep each other's figures):

``versus``
    against each ``--against`` commit (default: the first release 98e7bb7 and
    the commit before this checkout): ``reproduce --data FULL --split all``
    with a warm cache; on a 10M-row KG (``sample --scale wikidata``): the
    index build from the CSV, its cached reload, an oracle run of its 2,000
    questions. Targets of issue 22 against the first release: reproduce
    <= 0.25, reload <= 0.25, run <= 0.35, build <= 0.85, peak <= 4 GB; against
    the commit before: never above 1.05.
``reproduce``
    ``tempbench reproduce --data FULL --split all`` (warm cache), default
    workers and ``--workers 1``, outputs compared byte for byte.
``run_rate``
    ``tempbench run`` oracle on FULL, one worker, questions per second beyond
    the start-up.
``repro``
    ``tempbench repro`` over the four configurations of FULL (target of issue
    23: 3 s on 2 cores), best of ``--best-of``, and side by side with
    ``--repro-against`` (default c7a9551, the last commit before repro's speed
    work): the ratios, and whether both write the same JSON byte for byte.
``sample``
    generation of the small and full samples.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIRST_RELEASE = "98e7bb7"
#: The last commit before ``tempbench repro`` was made fast (issue 23): the yardstick of section ``repro``.
REPRO_BASELINE = "c7a9551"
CONFIGS = ("oracle", "nonoracle", "stale_blind", "hop3_k25")


@dataclass
class Timed:
    """One finished process: wall and CPU seconds, peak resident MiB."""

    wall_s: float
    cpu_s: float
    peak_mib: float


def timed(argv: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> Timed:
    """Run ``argv`` to the end (it must succeed) and measure it as :class:`Timed`."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}):\n{err[-2000:]}")
    return Timed(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


@dataclass
class Checkout:
    """A version of the project to run: its folder, how its CLI is started, its index cache."""

    label: str
    folder: Path
    cache: Path

    def cli(self) -> list[str]:
        module = "tempbench.cli" if (self.folder / "tempbench" / "cli.py").exists() else "retriever.cli"
        return [sys.executable, "-m", module]

    def env(self) -> dict[str, str]:
        """The environment of this version's runs.

        Without ``PYTHONDONTWRITEBYTECODE``: both versions then run from cached
        bytecode, as an installed package does, instead of compiling their
        sources in every timed run (about 0.2 s of this project's reproduction,
        more for the larger of two versions).
        """
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        return dict(env, PYTHONPATH=str(self.folder), TEMPBENCH_CACHE=str(self.cache))

    def run(self, *args: str, cwd: Path) -> Timed:
        return timed([*self.cli(), *args], cwd=cwd, env=self.env())

    def cache_flag(self, command: str) -> str:
        """The index-cache option of ``command`` in this version (the first release's ``index`` called it ``--cache``)."""
        # run in the version's own folder: ``python -m`` puts the working folder first on the path
        help_text = subprocess.run([*self.cli(), command, "--help"], cwd=self.folder, env=self.env(),
                                   capture_output=True, text=True, check=True).stdout
        return "--cache-dir" if "--cache-dir" in help_text else "--cache"


def current(workdir: Path) -> Checkout:
    return Checkout("current", ROOT, workdir / "cache-current")


def older(workdir: Path, commit: str) -> Checkout:
    """A git worktree of ``commit`` in the work folder (made once)."""
    folder = workdir / f"checkout-{commit}"
    if not folder.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), commit], check=True,
                       capture_output=True)
    return Checkout(commit, folder, workdir / f"cache-{commit}")


def sample_root(workdir: Path, scale: str) -> Path:
    """The generated data at ``scale`` (made once, by the current checkout)."""
    root = workdir / f"sample-{scale}"
    if not (root / "MANIFEST.json").exists():
        current(workdir).run("sample", "--scale", scale, "--out", str(root), cwd=workdir)
    return root


def side_by_side(a: Callable[[], Timed], b: Callable[[], Timed], pairs: int) -> dict[str, Any]:
    """Run ``a`` and ``b`` in turn (after one warm-up each): medians of both and of their ratios pair by pair."""
    a(), b()
    runs = [(a(), b()) for _ in range(pairs)]
    out: dict[str, Any] = {"pairs": pairs}
    for name in ("wall_s", "cpu_s", "peak_mib"):
        out[name] = {"current": median(getattr(x, name) for x, _ in runs),
                     "other": median(getattr(y, name) for _, y in runs),
                     "ratio": median(getattr(x, name) / getattr(y, name) for x, y in runs)}
    return out


def section_versus(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 22: the current checkout side by side with older commits (ratios of pairs; see the module docstring)."""
    full = sample_root(workdir, "full")
    large = sample_root(workdir, "wikidata")
    now = current(workdir)
    results: dict[str, Any] = {}
    for commit in args.against:
        other = older(workdir, commit)
        figures: dict[str, Any] = {}

        def reproduce(c: Checkout) -> Timed:
            out = workdir / f"out-{c.label}"
            shutil.rmtree(out, ignore_errors=True)
            return c.run("reproduce", "--data", str(full), "--split", "all", "--out", str(out), cwd=workdir)

        flags = {(c.label, command): c.cache_flag(command) for c in (now, other) for command in ("index", "run")}

        def build(c: Checkout, flags: dict[tuple[str, str], str] = flags) -> Timed:
            shutil.rmtree(workdir / f"large-cache-{c.label}", ignore_errors=True)
            cache = str(workdir / f"large-cache-{c.label}")
            return c.run("index", "--data", str(large), flags[c.label, "index"], cache, cwd=workdir)

        def reload(c: Checkout, flags: dict[tuple[str, str], str] = flags) -> Timed:
            cache = str(workdir / f"large-cache-{c.label}")
            return c.run("index", "--data", str(large), flags[c.label, "index"], cache, cwd=workdir)

        def run_large(c: Checkout, flags: dict[tuple[str, str], str] = flags) -> Timed:
            return c.run("run", "--data", str(large), "--config", "oracle", "--split", "all", "--workers", "1",
                         flags[c.label, "run"], str(workdir / f"large-cache-{c.label}"),
                         "--out", str(workdir / f"large-run-{c.label}.jsonl"), cwd=workdir)

        for name, measure in (("reproduce_full_all", reproduce), ("large_kg_build", build),
                              ("large_kg_reload", reload), ("large_kg_run_2000", run_large)):
            figures[name] = side_by_side(lambda m=measure: m(now), lambda m=measure, o=other: m(o), args.pairs)
        results[commit] = figures
    first = results.get(FIRST_RELEASE)
    targets = {}
    if first is not None:
        targets = {"reproduce<=0.25": first["reproduce_full_all"]["wall_s"]["ratio"] <= 0.25,
                   "reload<=0.25": first["large_kg_reload"]["wall_s"]["ratio"] <= 0.25,
                   "run_2000<=0.35": first["large_kg_run_2000"]["wall_s"]["ratio"] <= 0.35,
                   "build<=0.85": first["large_kg_build"]["wall_s"]["ratio"] <= 0.85,
                   "peak<=4GB": max(f["peak_mib"]["current"] for f in first.values()) <= 4096}
    for commit, figures in results.items():
        if commit != FIRST_RELEASE:
            targets[f"vs {commit} <= 1.05"] = all(f["wall_s"]["ratio"] <= 1.05 for f in figures.values())
    return {"against": results, "targets": targets}


def _differing(a: Path, b: Path) -> list[str]:
    """Files that differ between two reproduce outputs (the runs' timings and worker counts left out)."""
    out = []
    for path in sorted(p for p in a.rglob("*") if p.is_file()):
        other = b / path.relative_to(a)
        if path.name.endswith(".meta.json"):
            strip = ("timings", "workers")
            same = other.exists() and {k: v for k, v in json.loads(path.read_text()).items() if k not in strip} == \
                {k: v for k, v in json.loads(other.read_text()).items() if k not in strip}
        else:
            same = other.exists() and path.read_bytes() == other.read_bytes()
        if not same:
            out.append(str(path.relative_to(a)))
    return out


def section_reproduce(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """``tempbench reproduce --data FULL --split all``, warm cache: default workers and one, the same bytes."""
    full = sample_root(workdir, "full")
    now = current(workdir)
    runs = {}
    for label, extra in (("default", []), ("one_worker", ["--workers", "1"])):
        out = workdir / f"reproduce-{label}"
        shutil.rmtree(out, ignore_errors=True)
        now.run("reproduce", "--data", str(full), "--split", "all", "--out", str(out), *extra, cwd=workdir)  # warm
        walls = [now.run("reproduce", "--data", str(full), "--split", "all", "--out", str(out), *extra,
                         cwd=workdir) for _ in range(args.best_of)]
        runs[label] = {"wall_s": [t.wall_s for t in walls], "cpu_s": [t.cpu_s for t in walls],
                       "peak_mib": max(t.peak_mib for t in walls), "best_s": min(t.wall_s for t in walls)}
    differing = _differing(workdir / "reproduce-default", workdir / "reproduce-one_worker")
    return {"data": full.name, "cores": os.cpu_count(), "runs": runs, "differing_files": differing,
            "targets": {"byte_identical_for_any_workers": not differing}}


def section_run_rate(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """``tempbench run`` oracle on FULL, one worker, process start to file written; the start-up subtracted."""
    full = sample_root(workdir, "full")
    now = current(workdir)
    startup = min(timed([sys.executable, "-c", "import tempbench.cli, tempbench.commands.run"], cwd=workdir,
                        env=now.env()).wall_s for _ in range(args.best_of))
    out = workdir / "run-rate.jsonl"
    now.run("run", "--data", str(full), "--config", "oracle", "--split", "all", "--out", str(out), cwd=workdir)
    walls = [now.run("run", "--data", str(full), "--config", "oracle", "--split", "all", "--workers", "1",
                     "--out", str(out), cwd=workdir).wall_s for _ in range(args.best_of)]
    n = json.loads(out.with_name("run-rate.meta.json").read_text(encoding="utf-8"))["counts"]["questions"]
    best = min(walls)
    return {"questions": n, "walls_s": walls, "startup_s": startup,
            "questions_per_s": n / (best - startup) if best > startup else None}


def section_repro(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """``tempbench repro`` over the four configurations of FULL (target 3 s on 2 cores), and with originals
    whose every line differs from the reproduction's (side by side with ``--repro-against`` only)."""
    full = sample_root(workdir, "full")
    now = current(workdir)
    folders = {"original": workdir / "repro-original", "reproduced": workdir / "repro-reproduced"}
    for side, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        for name in CONFIGS:
            if not (folder / f"{name}.jsonl").exists():
                extra = ["--set", "cap_counts=unique_triples"] if side == "original" else []
                now.run("run", "--data", str(full), "--config", name, *extra, "--split", "all",
                        "--out", str(folder / f"{name}.jsonl"), cwd=workdir)
    # the originals again with every line changed (a field read_run keeps and repro skips), as published runs
    # written by another tool would be: no record is shared with the reproduction, each is read and scored
    folders["every line differs"] = workdir / "repro-original-other-tool"
    folders["every line differs"].mkdir(parents=True, exist_ok=True)
    for name in CONFIGS:
        target = folders["every line differs"] / f"{name}.jsonl"
        if not target.exists():
            with open(folders["original"] / f"{name}.jsonl", "rb") as src, open(target, "wb") as dst:
                dst.writelines(b'{"written_by":"another tool",' + line[1:] for line in src)
            shutil.copy(folders["original"] / f"{name}.meta.json", target.with_suffix("").with_suffix(".meta.json"))
    other = older(workdir, args.repro_against)

    def repro(c: Checkout, original: str = "original", tag: str = "") -> Timed:
        return c.run("repro", str(folders[original]), str(folders["reproduced"]), "--data", str(full),
                     "--json", str(workdir / f"repro{tag}-{c.label}.json"), cwd=workdir)

    def same_json(tag: str = "") -> bool:
        return (workdir / f"repro{tag}-current.json").read_bytes() == \
            (workdir / f"repro{tag}-{other.label}.json").read_bytes()

    versus = side_by_side(lambda: repro(now), lambda: repro(other), args.pairs)
    same = same_json()
    walls = [repro(now) for _ in range(args.best_of)]
    best = min(t.wall_s for t in walls)
    differ = side_by_side(lambda: repro(now, "every line differs", "-differ"),
                          lambda: repro(other, "every line differs", "-differ"), args.pairs)
    same_differ = same_json("-differ")
    return {"data": full.name, "cores": os.cpu_count(), "walls_s": [t.wall_s for t in walls],
            "cpu_s": [t.cpu_s for t in walls], "best_s": best, "against": {args.repro_against: versus},
            "same_json": same, "every_line_differs": {"against": {args.repro_against: differ},
                                                      "same_json": same_differ},
            "targets": {"repro_full_s<=3": best <= 3, "same_json_as_before": same and same_differ}}


def section_sample(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Generation of the small and full samples, each in a fresh process."""
    now = current(workdir)
    out = {}
    for scale in ("small", "full"):
        target = workdir / f"sample-gen-{scale}"
        shutil.rmtree(target, ignore_errors=True)
        t = now.run("sample", "--scale", scale, "--out", str(target), cwd=workdir)
        out[scale] = {"wall_s": t.wall_s, "peak_mib": t.peak_mib}
        shutil.rmtree(target, ignore_errors=True)
    return out


SECTIONS: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
    "versus": section_versus,
    "reproduce": section_reproduce,
    "run_rate": section_run_rate,
    "repro": section_repro,
    "sample": section_sample,
}


def machine() -> dict[str, Any]:
    return {"python": platform.python_version(), "platform": platform.platform(), "cores": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"sections, comma-separated ({', '.join(SECTIONS)})")
    parser.add_argument("--out", default=str(ROOT / "bench-results.json"), help="results file (merged)")
    parser.add_argument("--workdir", default=None, help="work folder (default: a temporary one, removed afterwards)")
    parser.add_argument("--against", default=None,
                        help=f"commits for the versus section (default: {FIRST_RELEASE} and the commit before HEAD)")
    parser.add_argument("--repro-against", default=REPRO_BASELINE,
                        help=f"commit for the repro section's side-by-side figures (default {REPRO_BASELINE})")
    parser.add_argument("--pairs", type=int, default=3, help="A B pairs per side-by-side figure (default 3)")
    parser.add_argument("--best-of", type=int, default=3, help="runs per timed figure (default 3)")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)} (valid: {', '.join(SECTIONS)})")
    if args.against is None:
        before = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD~1"], capture_output=True,
                                text=True, check=True).stdout.strip()
        args.against = [FIRST_RELEASE, before]
    else:
        args.against = [c for c in args.against.split(",") if c]
    out_path = Path(args.out)
    results = json.loads(out_path.read_text(encoding="utf-8")) if out_path.exists() else {}
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="tempbench-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        for name in names:
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            results[name] = {"machine": machine(), **SECTIONS[name](args, workdir)}
            out_path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    finally:
        if not args.workdir:
            for folder in workdir.glob("checkout-*"):
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder)],
                               capture_output=True)
            shutil.rmtree(workdir, ignore_errors=True)
    print(json.dumps({n: results[n].get("targets") for n in names}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
