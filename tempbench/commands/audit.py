"""``tempbench audit``: recompute the dataset card's claims from data (SPEC §4).

Prints ``claim | paper | reproduced | delta | verdict`` for every claim of
``configs/paper_numbers.toml``. Retrieval claims use ``--runs DIR/<config>.jsonl``
when present and otherwise run the configuration in memory on ``--split``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eval.audit.claims import load_claims
from eval.audit.context import AuditContext
from eval.audit.format import AUDIT_COLUMNS, audit_line, table_rows
from eval.audit.run import audit_document, run_audit
from tempbench.commands._scoring import add_force_argument, check_run_contents
from tempbench.data import CACHE_DIR_HELP, absolute_or_none, add_data_arguments, command_provenance, data_from_args
from tempbench_core.atomic import write_json
from tempbench_core.console import info, print_table
from tempbench_core.errors import ConfigError, MissingDataError
from tempbench_core.outputs import check_output_file
from tempbench_core.schema import DEFAULT_SPLIT, SHIPPED_CONFIGS, SPLIT_CHOICES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench audit``."""
    parser.add_argument("--runs", metavar="DIR", help="directory with <config>.jsonl run files (missing ones are run in memory)")
    parser.add_argument("--split", default=DEFAULT_SPLIT, choices=SPLIT_CHOICES,
                        help=f"split of the retrieval claims (default: {DEFAULT_SPLIT}, as the card)")
    parser.add_argument("--claim", action="append", default=[], metavar="ID",
                        help="only the claims whose id starts with ID (repeatable), e.g. --claim dist.")
    parser.add_argument("--paper-numbers", metavar="TOML", help="claims file (default: the shipped configs/paper_numbers.toml)")
    parser.add_argument("--json", metavar="OUT", help="also write the rows as JSON")
    parser.add_argument("--cache-dir", metavar="DIR", help=CACHE_DIR_HELP)
    add_force_argument(parser)
    add_data_arguments(parser)



def audited_runs(runs_dir: Path, claims: list[Any]) -> list[Path]:
    """The run files of ``--runs DIR`` the audit may read: ``<config>.jsonl`` of each shipped or claimed configuration.

    Checked before anything is computed (their number of records, their split
    against ``--split``); the audit checks their data and role when it reads them.
    """
    names = dict.fromkeys(SHIPPED_CONFIGS)
    names.update(dict.fromkeys(c.params["config"] for c in claims if isinstance(c.params.get("config"), str)))
    return [path for name in names if (path := runs_dir / f"{name}.jsonl").is_file()]


def print_audit(rows: list[dict[str, Any]], title: str, provenance: Any) -> None:
    """The audit table on stdout and, on stderr, the verdict count and on what kind of data it was computed."""
    print_table(title, AUDIT_COLUMNS, table_rows(rows))
    info("verdicts " + audit_line(rows, provenance))


def run(args: argparse.Namespace) -> int:
    """Recompute and print every claim; exit 0 whatever the verdicts."""
    claims, tolerances = load_claims(args.paper_numbers)
    if args.claim and not any(c.id.startswith(s) for c in claims for s in args.claim):
        raise ConfigError(f"--claim {' '.join(args.claim)} matches no claim (ids: {', '.join(c.id for c in claims)})")
    data = data_from_args(args)
    if args.json:
        check_output_file(args.json, [args.paper_numbers, *data.input_files()], "--json")
    if args.runs is not None and not Path(args.runs).is_dir():
        raise MissingDataError(f"--runs directory not found: {args.runs}")
    if args.runs is not None:
        check_run_contents(args, *audited_runs(Path(args.runs), claims))
    provenance = command_provenance(data, ["audit"], [
        ("--runs", absolute_or_none(args.runs)), ("--split", args.split), ("--claim", args.claim),
        ("--paper-numbers", absolute_or_none(args.paper_numbers)), ("--json", absolute_or_none(args.json)),
        ("--force", args.force)])
    ctx = AuditContext(data, runs_dir=args.runs, split=args.split, cache_dir=args.cache_dir, force=args.force,
                       provenance=provenance)
    rows = run_audit(ctx, claims, tolerances, select=args.claim)
    where = "generated sample" if data.root is None else str(data.root)
    print_audit(rows, f"tempbench audit: the card's claims on {where}", provenance)
    if ctx.run_sources:
        info("runs: " + ", ".join(f"{k} <- {v}" for k, v in ctx.run_sources.items()))
    for warning in ctx.warnings:
        info(f"warning: {warning}")
    if args.json:
        write_json(Path(args.json), audit_document(ctx, rows))
        info(f"wrote {args.json}")
    return 0
