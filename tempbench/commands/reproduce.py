"""``tempbench reproduce``: the paper's four configurations, scored, audited, diffed, reported.

With no arguments it uses the generated default data (SPEC §5), generating it
on first use. Writes into ``--out`` (default ``./tempbench-out``)::

    runs/<config>.jsonl, runs/<config>.meta.json   SPEC §6.1
    scores/<config>.json                           SPEC §6.2
    audit.json                                     SPEC §4
    diff/<baseline>.json                           SPEC §6.3 (when DATA/baselines/ exists)
    report.md, plots/*.png

and prints the headline table.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench reproduce``."""
    from tempbench.data import add_data_arguments

    parser.add_argument("--out", default="tempbench-out", metavar="DIR", help="output directory (default: ./tempbench-out)")
    parser.add_argument("--split", default="test", choices=("test", "dev", "train", "all"),
                        help="benchmark split (default: test, as the paper)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="worker processes per run (output is byte-identical for any N; default 1)")
    parser.add_argument("--boot", type=int, default=1000, metavar="N", help="bootstrap replicates for the 95%% intervals (default 1000)")
    parser.add_argument("--cache-dir", metavar="DIR", help="index cache directory (default: the per-user cache)")
    add_data_arguments(parser)


def match_config(stem: str, configs: list[str]) -> str | None:
    """The configuration a baselines file is about: the longest config name in its stem."""
    lowered = stem.lower().replace("-", "_")
    hits = [c for c in configs if c in lowered]
    return max(hits, key=len) if hits else None


def diff_baselines(baselines_dir: Path, runs: dict[str, dict[Any, Any]], questions: list[dict[str, Any]],
                   flags: Any, out_dir: Path) -> dict[str, dict[str, Any]]:
    """Diff each baselines file against the run of its configuration (default: oracle)."""
    from eval.baselines import load_baseline
    from eval.diff import compare
    from tempbench.core.atomic import write_json
    from tempbench.core.console import info
    from tempbench.core.errors import TempbenchError

    results: dict[str, dict[str, Any]] = {}
    files = sorted(p for p in baselines_dir.rglob("*")
                   if p.is_file() and p.suffix.lower() in SUFFIXES and not p.name.endswith(".meta.json"))
    for path in files:
        name = str(path.relative_to(baselines_dir))
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
                write_json(out_dir / "diff" / (key.replace("/", "__").replace(" [", ".").replace("]", "") + ".json"), result)
        except TempbenchError as exc:
            # One unreadable file must not cost the whole reproduction: report and go on.
            info(f"baselines/{name}: skipped: {exc}")
            results[name] = {"error": str(exc)}
    return results


def run(args: argparse.Namespace) -> int:
    """Run, score, audit, diff and report; print the headline table."""
    from eval.audit import AuditContext, run_audit
    from tempbench.commands.audit import audit_document
    from eval.report import headline_rows, write_report
    from eval.runs import read_run
    from eval.scoring import score_run
    from tempbench.core.atomic import write_json
    from retriever.benchmark import load_benchmark, load_flags
    from retriever.config import SHIPPED, load_config
    from tempbench.core.console import info, print_table
    from tempbench.core.errors import ConfigError
    from tempbench.data import data_from_args
    from retriever.runner import run_to_file

    if args.workers < 1:
        raise ConfigError(f"--workers must be >= 1 (got {args.workers})")
    if args.boot < 1:
        raise ConfigError(f"--boot must be >= 1 (got {args.boot})")
    t_all = time.perf_counter()
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    data = data_from_args(args)
    data.require("kg", "benchmark")
    timings["data"] = time.perf_counter() - t0
    out = Path(args.out)
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    flags = load_flags(data.flags) if data.flags is not None and Path(data.flags).exists() else None

    runs: dict[str, dict[Any, Any]] = {}
    scores: dict[str, dict[str, Any]] = {}
    for name in SHIPPED:
        t0 = time.perf_counter()
        info(f"running {name} on the {args.split} split")
        run_path = out / "runs" / f"{name}.jsonl"
        run_to_file(load_config(name), data, split=args.split, out_path=run_path, workers=args.workers,
                    cache_dir=args.cache_dir)
        timings[f"run {name}"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        runs[name] = read_run(run_path)
        scores[name] = score_run(runs[name], questions, flags, split=None if args.split == "all" else args.split,
                                 n_boot=args.boot)
        write_json(out / "scores" / f"{name}.json", scores[name])
        timings[f"score {name}"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    ctx = AuditContext(data, runs_dir=out / "runs", split=args.split, cache_dir=args.cache_dir, scores=scores)
    ctx.questions = questions  # already loaded; the audit reuses them
    audit_rows = run_audit(ctx)
    write_json(out / "audit.json", audit_document(ctx, audit_rows))
    timings["audit"] = time.perf_counter() - t0

    diffs: dict[str, dict[str, Any]] = {}
    if data.baselines is not None:
        t0 = time.perf_counter()
        diffs = diff_baselines(Path(data.baselines), runs, questions, flags, out)
        timings["diff"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    where = "generated sample (SPEC §5)" if args.data is None and args.kg is None else str(data.root or data.kg)
    meta = {
        "data": f"{where}: `{data.root}`" if data.root else where,
        "split": args.split,
        "configurations": ", ".join(SHIPPED),
        "command": "tempbench reproduce" + ("" if args.data is None else f" --data {args.data}"),
    }
    write_report(out, scores, audit_rows, diffs, meta)
    timings["report"] = time.perf_counter() - t0

    cols, rows = headline_rows(scores, compact=True)
    print_table(f"TempBench reproduction ({args.split} split)", cols, rows)
    from eval.audit import verdict_counts

    counts = verdict_counts(audit_rows)
    generated = data.root is not None and (Path(data.root) / "MANIFEST.json").exists()
    info("audit of the card's claims (SPEC §4): " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
         + (" (generated data: FAIL is expected where a value depends on the real release)" if generated else ""))
    for name, d in diffs.items():
        if "summary" in d:
            s = d["summary"]
            info(f"baselines/{name} vs {d['config']}: exact match {s['exact']} of {s['baseline_questions']} ({s['exact_share']:.1%})")
    info(f"wrote {out}/report.md, {out}/audit.json, {out}/scores/, {out}/runs/ in {time.perf_counter() - t_all:.1f} s")
    return 0
