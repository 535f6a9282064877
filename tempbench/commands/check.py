"""``tempbench check``: is a data root what the pipeline expects, and what will it see?

Prints the files found (and their form), the counts beside the dataset card's
with a "looks like the release v1.0.1" verdict, and every finding with its level
(``error``: the pipeline cannot run; ``warning``: it runs but numbers will differ
from the paper's; ``info``). Exit 0 unless an error-level finding (then 2).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from retriever import load_config
from tempbench.check import RELEASE, CheckReport, check_data
from tempbench.check.report import count_cell
from tempbench.data import absolute_or_none, add_data_arguments, command_provenance, config_word, data_from_args
from tempbench_core.atomic import write_json
from tempbench_core.console import format_cell, info, print_table
from tempbench_core.outputs import check_output_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench check``."""
    parser.description = (
        "Check a data root before running on it: files found or missing and their form (plain or .gz); counts "
        f"(KG rows, entities, relations, years; questions, interval questions and functional flags per split) beside "
        f"the dataset card's, with a 'looks like the release {RELEASE}' verdict; key spaces; label coverage of the KG "
        "(ids rendered raw change BM25); gold hops present in the KG at a valid year (a low share means another KG "
        "version); oracle anchors that resolve; baselines recognised. Levels: error = the pipeline cannot run, "
        "warning = it runs but numbers will differ from the paper's, info. Exit status 0 unless an error (then 2)."
    )
    parser.add_argument("--json", metavar="OUT", help="also write the report as JSON (written atomically)")
    parser.add_argument("--config", metavar="NAME|FILE", action="append", default=None,
                        help="a retriever configuration the data will be run with (repeatable; default the four "
                             "shipped ones 'tempbench reproduce' runs): exact duplicate KG rows are a warning when "
                             "one counts rows against the caps (cap_counts=rows, the default)")
    parser.add_argument("--paper-numbers", metavar="TOML",
                        help="claims file with the card's counts (default: the shipped configs/paper_numbers.toml)")
    add_data_arguments(parser)


def print_report(report: CheckReport) -> None:
    """The three tables (files, counts, findings) on stdout; the summary on stderr."""
    where = report.root or "the files given"
    print_table(f"tempbench check: {where}", ["file", "path", "found", "form", "bytes"],
                [[f["role"], f["path"], "yes" if f["found"] else "no", f.get("form", "-"), f.get("bytes")]
                 for f in report.files])
    print_table(f"counts beside the card (release {RELEASE})", ["quantity", "this data", "card", "same"],
                [[c["quantity"], count_cell(c["quantity"], c["found"]), count_cell(c["quantity"], c["card"]),
                  "yes" if c["match"] else "no"] for c in report.counts])
    print_table("findings", ["level", "file", "message"], [[f.level, f.file, f.message] for f in report.findings])
    summary = report.summary()
    verdict = "looks like" if report.looks_like_release else "does not look like"
    info(f"{verdict} the release {RELEASE}; " + ", ".join(f"{format_cell(n)} {lvl}" for lvl, n in summary.items()))


def check_provenance(args: argparse.Namespace) -> Any:
    """The data's origin and the command line of this check (every option that changes the JSON)."""
    return command_provenance(data_from_args(args), ["check"], [
        ("--json", absolute_or_none(args.json)), ("--config", [config_word(c) for c in args.config or []] or None),
        ("--paper-numbers", absolute_or_none(args.paper_numbers))])


def run(args: argparse.Namespace) -> int:
    """Check; write ``--json``; exit 0 unless an error-level finding (2)."""
    data = data_from_args(args)
    if args.json:
        check_output_file(args.json, data.input_files(), "--json")
    configs = [load_config(name) for name in args.config] if args.config else None
    report = check_data(data, paper_numbers=args.paper_numbers, configs=configs)
    print_report(report)
    if args.json:
        doc = report.to_json()
        doc["root"] = absolute_or_none(doc["root"])  # as the recorded command names it: reruns to the same bytes
        write_json(Path(args.json), {**doc, "provenance": check_provenance(args).to_json()})
        info(f"wrote {args.json}")
    return 0 if report.ok else 2
