"""The job's runs against the published ``baselines/`` (SPEC §6.3): one diff per baselines file."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from eval.attribution import check_run_role
from eval.baselines import is_baseline_file, load_baseline, match_config
from eval.diff import compare, diff_file_name
from tempbench_core.atomic import write_json
from tempbench_core.console import info
from tempbench_core.errors import TempbenchError
from tempbench_core.runchecks import check_run_count, check_run_inputs, check_run_split
from tempbench_core.runfile import meta_path, read_written_run
from tempbench_core.schema import SHIPPED_CONFIGS

#: How a refusal of a baselines file tells the way out: ``reproduce`` has no ``--force``.
BASELINE_WAY_OUT = "take the file out of baselines/"

#: Run files of ``baselines/`` that only SPEC §8's reproducibility reads (gzip-compressed per-question runs).
_GZIP_RUNS = (".jsonl.gz", ".json.gz")


class RunsOnDisk(Mapping[str, Any]):
    """The runs this job wrote, read from their files when first asked for (the diff's input)."""

    def __init__(self, runs_dir: Path, names: list[str], kept: Mapping[str, Any]) -> None:
        self.runs_dir, self.names, self.kept = runs_dir, names, dict(kept)

    def __getitem__(self, name: str) -> Any:
        if name not in self.names:
            raise KeyError(name)
        if name not in self.kept:
            self.kept[name] = read_written_run(self.runs_dir / f"{name}.jsonl")
        return self.kept[name]

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


def baseline_files(baselines_dir: Path) -> list[Path]:
    """Every file of ``baselines/`` the job reads: those it diffs, and the per-question runs, also gzip-compressed."""
    return sorted(p for p in baselines_dir.rglob("*") if p.is_file() and (
        is_baseline_file(p) or (p.name.lower().endswith(_GZIP_RUNS) and not p.name.endswith(".meta.json"))))


def check_baselines(data: Any, split: str) -> None:
    """Refuse, before the job starts, a baselines file that its ``.meta.json`` says is for other data or another split.

    The same checks as ``tempbench diff`` makes of its BASELINE
    (:mod:`tempbench_core.runfile`): a ``.meta.json`` that is no JSON object,
    other benchmark files (sha256), another number of records than the file
    holds, a split other than ``split`` (or ``all``). A file without a
    ``.meta.json`` (the published form) is taken as it is.
    """
    if data.baselines is None or not Path(data.baselines).is_dir():
        return
    for path in baseline_files(Path(data.baselines)):
        if not meta_path(path).exists():
            continue
        check_run_inputs(path, data, ("benchmark", "benchmark_ids"), way_out=BASELINE_WAY_OUT)
        check_run_count(path, way_out=BASELINE_WAY_OUT)
        check_run_split(path, split, lambda: None, way_out=BASELINE_WAY_OUT)
        role = match_config(path.name.split(".", 1)[0], list(SHIPPED_CONFIGS))
        if role is not None:
            check_run_role(path, role, way_out=BASELINE_WAY_OUT)


def diffed_files(baselines_dir: Path) -> list[Path]:
    """The files of ``baselines/`` that :func:`diff_baselines` diffs, in its order."""
    return [p for p in baseline_files(baselines_dir) if is_baseline_file(p)]


def diff_file(path: Path, baselines_dir: Path, runs: Mapping[str, Any], questions: list[dict[str, Any]],
              flags: Any, out_dir: Path) -> dict[str, dict[str, Any]]:
    """Diff one baselines file against the run of its configuration (default: oracle) and write its ``diff/`` files.

    Returns the diffs by key (the file's name, or ``name [config]`` for each
    configuration a metric table names), and ``{name: {"error": message}}``
    once the file cannot be read or compared (:func:`merged_diffs` says so).
    """
    name = str(path.relative_to(baselines_dir))
    results: dict[str, dict[str, Any]] = {}
    try:
        baseline = load_baseline(path)
        # A metric table that names configurations is compared per configuration;
        # anything else goes to the configuration its file name names (default oracle).
        named = [c for c in getattr(baseline, "configs", lambda: [])() if c in runs]
        targets = [(f"{name} [{c}]", c) for c in named] if named else [(name, match_config(path.stem, list(runs)) or "oracle")]
        for key, config in targets:
            result = compare(runs[config], baseline, questions, flags, config=config)
            result["config"] = config
            results[key] = result
            write_json(out_dir / "diff" / diff_file_name(key), result)
    except TempbenchError as exc:
        # One unreadable file must not cost the whole reproduction: reported, and the job goes on.
        results[name] = {"error": str(exc)}
    return results


def merged_diffs(results: Iterable[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The results of :func:`diff_file` for each file, in one mapping; the files skipped are named on the terminal."""
    merged: dict[str, dict[str, Any]] = {}
    for result in results:
        for name, diff in result.items():
            if "error" in diff:
                info(f"baselines/{name}: skipped: {diff['error']}")
            merged[name] = diff
    return merged


def diff_baselines(baselines_dir: Path, runs: Mapping[str, Any], questions: list[dict[str, Any]],
                   flags: Any, out_dir: Path) -> dict[str, dict[str, Any]]:
    """Diff each baselines file against the run of its configuration (:func:`diff_file`), one after the other."""
    return merged_diffs(diff_file(path, baselines_dir, runs, questions, flags, out_dir)
                        for path in diffed_files(baselines_dir))


def runs_on_disk(runs_dir: Path, names: list[str], kept: Mapping[str, Any]) -> RunsOnDisk:
    """The job's runs by configuration name: those kept in memory, the others read when first asked for."""
    return RunsOnDisk(runs_dir, names, kept)
