"""``tempbench export-trec RUN``: a TREC run file plus the matching qrels (SPEC §3.4).

``PREFIX.run`` holds the deduplicated returned list of each question with
strictly decreasing scores; ``PREFIX.qrels`` every relevant gold triple (valid at
``t_query``), retrieved or not, so trec_eval, ranx and ir_measures compute the
recall, nDCG and MRR of SPEC §3.4. Document ids are synthetic (see
:mod:`eval.trec`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from eval.keyspace import KEY_CHOICES, resolve_question
from eval.scoring import select
from eval.trec import write_trec
from tempbench.commands._scoring import load_inputs
from tempbench.core.console import info
from tempbench.core.runfile import read_run
from tempbench.core.schema import SPLIT_CHOICES
from tempbench.data import add_data_arguments


def add_arguments(parser: argparse.ArgumentParser) -> None:

    parser.add_argument("run", metavar="RUN", help="run file or evidence JSONL")
    parser.add_argument("--out", metavar="PREFIX", help="output prefix: writes PREFIX.run and PREFIX.qrels (default: RUN without .jsonl)")
    parser.add_argument("--split", choices=SPLIT_CHOICES, help="export every question of this split (default: exactly the questions in the run)")
    parser.add_argument("--key", choices=KEY_CHOICES, default="auto", help="key space for matching evidence to gold (SPEC §3.1; default auto)")
    parser.add_argument("--tag", default="tempbench", help="run tag in the TREC file (default tempbench)")
    add_data_arguments(parser, kg=False)


def run(args: argparse.Namespace) -> int:


    questions, _, _ = load_inputs(args)
    records = read_run(args.run)
    chosen, recs, _, _ = select(records, questions, args.split)
    resolved = [resolve_question(q, (r or {}).get("evidence", []), args.key) for q, r in zip(chosen, recs, strict=True)]
    prefix = Path(args.out) if args.out else Path(args.run).with_suffix("")
    run_path, qrels_path = write_trec(prefix, resolved, tag=args.tag)
    info(f"wrote {run_path} and {qrels_path} ({len(resolved)} questions)")
    return 0
