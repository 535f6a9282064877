"""``tempbench reproduce``: the paper's four configurations, scored, audited, diffed, reported.

With no arguments it uses the generated default data (SPEC §5), generating it
on first use. The job itself is :func:`tempbench.reproduce.reproduce`; this
command prints the headline table and the audit's verdict count.
"""

from __future__ import annotations

import argparse
import time

from eval.audit.format import audit_line
from eval.report.tables import headline_rows
from tempbench.commands._numbers import WORKERS_RANGE, check_numbers
from tempbench.commands._scoring import add_bootstrap_arguments
from tempbench.data import CACHE_DIR_HELP, absolute_or_none, add_data_arguments, command_provenance, data_from_args
from tempbench.reproduce import reproduce
from tempbench_core.console import info, print_table
from tempbench_core.outputs import DEFAULT_OUT, claimed_output_dir
from tempbench_core.schema import DEFAULT_SPLIT, SHIPPED_CONFIGS, SPLIT_CHOICES

EPILOG = """\
published baselines: when DATA/baselines/ holds files (per-question runs in any SPEC §1.4 form,
  .jsonl or .json, or metric tables, .csv/.tsv/.json), each is diffed against the reproduced run of
  the configuration its name contains (SPEC §6.3; OUT/diff/ and the report); when it holds per-question
  runs of the four configurations (<config>.jsonl, also .jsonl.gz), the report gains a
  Reproducibility section (SPEC §8, as `tempbench repro DATA/baselines OUT/runs` prints it).
  A baseline made on other data (its .meta.json) is refused."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench reproduce``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR",
                        help=f"output directory (default: ./{DEFAULT_OUT}); a new or empty folder, or one that tempbench "
                             "wrote before (it never writes into a data root or a folder of your own files)")
    parser.add_argument("--split", default=DEFAULT_SPLIT, choices=SPLIT_CHOICES,
                        help=f"benchmark split (default: {DEFAULT_SPLIT}, as the paper)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help=f"worker processes per run, 1 to {WORKERS_RANGE[1]:,} (output is byte-identical for any N; "
                             "default: the machine's cores)")
    add_bootstrap_arguments(parser, seed=False)
    parser.add_argument("--cache-dir", metavar="DIR", help=CACHE_DIR_HELP)
    add_data_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run, score, audit, diff and report; print the headline table."""
    check_numbers(args, "workers", "boot")  # before anything is forked
    t_all = time.perf_counter()
    data = data_from_args(args)
    with claimed_output_dir(args.out, "outputs", data.input_files(), data_root=data.root) as out:
        # what changes the output, with the values used (a default included): the command reruns to the same bytes
        provenance = command_provenance(data, ["reproduce"], [("--split", args.split), ("--boot", args.boot),
                                                              ("--out", absolute_or_none(out))])
        description = {
            "data": provenance.describe(),
            "split": args.split,
            "configurations": ", ".join(SHIPPED_CONFIGS),
        }
        result = reproduce(data, out=out, split=args.split, workers=args.workers, n_boot=args.boot,
                           cache_dir=args.cache_dir, description=description, provenance=provenance)
    out = result.out
    cols, rows = headline_rows(result.scores, compact=True)
    print_table(f"TempBench reproduction ({args.split} split)", cols, rows)
    info("audit of the card's claims (SPEC §4) " + audit_line(result.audit_rows, provenance))
    for name, d in result.diffs.items():
        if "summary" in d:
            s = d["summary"]
            info(f"baselines/{name} vs {d['config']}: exact match {s['exact']} of {s['baseline_questions']} ({s['exact_share']:.1%})")
    info(f"wrote {out}/report.md, {out}/report.html, {out}/audit.json, {out}/scores/, {out}/runs/, {out}/explain/ "
         f"in {time.perf_counter() - t_all:.1f} s")
    return 0
