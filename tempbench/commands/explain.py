"""``tempbench explain RUN.jsonl``: where each gold hop is lost (SPEC §7).

For every question of the run and every distinct gold hop, the first stage of
SPEC §7's table that applies (:mod:`eval.explain`). Prints, per slice
(complexity, operator) and per hop position, the share of gold hops at each
stage; ``--json OUT`` writes ``{"questions": {QID: [stage, ...]}, "summary":
...}``. The configuration is read from the run's ``.meta.json``; without one,
give ``--config NAME``. A run whose ``.meta.json`` says it was made on other
data (KG, labels, benchmark) or holds another number of records is refused
(``--force``: a warning), as by ``tempbench score``.
"""

from __future__ import annotations

import argparse
import textwrap
import time
from pathlib import Path
from typing import Any

from eval.attribution import attribute_run, attribution_json, longer_than_k, run_config
from eval.explain import STAGE_HELP, STAGES, Explainer
from retriever import load_benchmark, load_config, load_index
from tempbench.commands._scoring import RETRIEVAL_INPUTS, add_force_argument, check_runs
from tempbench.data import (
    CACHE_DIR_HELP,
    absolute_or_none,
    add_data_arguments,
    command_provenance,
    config_word,
    data_from_args,
)
from tempbench_core.atomic import write_text
from tempbench_core.console import info, print_table
from tempbench_core.errors import RunMismatchError
from tempbench_core.layout import DataPaths, default_index_cache
from tempbench_core.outputs import check_output_file
from tempbench_core.progress import progress
from tempbench_core.runchecks import FORCE_WAY_OUT
from tempbench_core.runfile import read_run

EPILOG = "stages, first that applies (SPEC §7):\n" + "\n".join(f"  {s:<13} {h}" for s, h in STAGE_HELP.items()) + "\n\n" + (
    textwrap.fill("The retrieved hops of a question are the distinct gold triples the published scorer counts as hits "
                  "(its TRP numerator's gold matches); CCR = 1 exactly when every hop is retrieved.", 78))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench explain``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = textwrap.fill("Attribute every gold hop of every question of a run to the first retriever "
                                       "stage that loses it (SPEC §7), and print the shares per complexity, operator "
                                       "and hop.", 78)
    parser.epilog = EPILOG
    parser.add_argument("run", metavar="RUN.jsonl", help="run file (SPEC §6.1) with its .meta.json beside it")
    parser.add_argument("--config", metavar="NAME|FILE",
                        help="configuration of RUN when it has no .meta.json (shipped name or TOML file)")
    parser.add_argument("--json", metavar="OUT", help='write {"questions": {QID: [stage, ...]}, "summary": ...}')
    parser.add_argument("--cache-dir", metavar="DIR", help=CACHE_DIR_HELP)
    add_force_argument(parser)
    add_data_arguments(parser)


def load_explainer(data: DataPaths, config: Any, cache_dir: str | Path | None = None) -> tuple[Explainer, list[dict[str, Any]]]:
    """The :class:`~eval.explain.Explainer` of ``config`` on ``data`` and the benchmark questions (id spaces merged)."""
    data.require("kg", "benchmark")
    cache = Path(cache_dir) if cache_dir is not None else default_index_cache()
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark, cache_dir=cache)
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    return Explainer(index, config), questions


def resolve_config(run_path: str | Path, name: str | None) -> Any:
    """The run's configuration (its ``.meta.json``), else ``--config``; says when ``--config`` is not used."""
    fallback = load_config(name) if name else None
    config, source = run_config(run_path, fallback)
    if name and source != "--config" and config.to_dict() != fallback.to_dict():
        info(f"note: using the configuration recorded in {source} ({config.name}); --config {name} is ignored")
    return config


def stage_table(summary: dict[str, Any], field: str) -> tuple[list[str], list[list[Any]]]:
    """Rows = stages, columns = ``all`` and each slice value of ``by_<field>``: shares of gold hops."""
    groups = summary.get(f"by_{field}") or {}
    columns = ["stage", "all", *groups]
    rows: list[list[Any]] = [["gold hops", summary["n_hops"], *(g["n_hops"] for g in groups.values())]]
    for stage in STAGES:
        rows.append([stage, summary["shares"][stage], *(g["shares"][stage] for g in groups.values())])
    return columns, rows


def print_summary(summary: dict[str, Any], title: str = "") -> None:
    """The terminal tables: by complexity, by operator, by hop position."""
    cfg = summary.get("config") or {}
    head = f"{title} ({cfg.get('name')})" if cfg.get("name") else title
    for field, label in (("complexity", "complexity"), ("operator", "operator"), ("hop", "hop position")):
        columns, rows = stage_table(summary, field)
        print_table(f"share of gold hops per stage, by {label}: {head}".strip(), columns, rows)
    counts = summary["counts"]
    info(f"{summary['n_questions']:,} questions, {summary['n_hops']:,} distinct gold hops; "
         f"{counts['retrieved']:,} retrieved (the distinct gold triples the TRP/CCR scorer counts as hits)")


def explain_provenance(args: argparse.Namespace) -> Any:
    """The data's origin and the command line of this attribution (every option that changes the JSON)."""
    return command_provenance(data_from_args(args), ["explain", absolute_or_none(args.run)], [
        ("--json", absolute_or_none(args.json)), ("--config", config_word(args.config)), ("--force", args.force)])


def run(args: argparse.Namespace) -> int:
    """Attribute, print, optionally write JSON."""
    t0 = time.perf_counter()
    data = data_from_args(args)
    if args.json:
        check_output_file(args.json, [args.run, *data.input_files()], "--json")
    check_runs(args, args.run, names=RETRIEVAL_INPUTS)  # the run explained is one of this data
    config = resolve_config(args.run, args.config)
    records = read_run(args.run)
    problem = longer_than_k(records, config)
    if problem is not None:
        if not args.force:
            raise RunMismatchError(f"{problem} (give the --config it was made with, or {FORCE_WAY_OUT})")
        info(f"warning (--force): {problem}")
    explainer, questions = load_explainer(data, config, args.cache_dir)
    result = attribute_run(explainer, records, questions,
                           progress=lambda items, total: progress(items, total=total, description="explain"))
    result["summary"]["run"] = absolute_or_none(args.run)  # as the recorded command names it
    print_summary(result["summary"], title=Path(args.run).name)
    if args.json:
        write_text(args.json, attribution_json({**result, "provenance": explain_provenance(args).to_json()}))
        info(f"wrote {args.json}")
    info(f"explained {len(records):,} questions in {time.perf_counter() - t0:.1f} s")
    return 0
