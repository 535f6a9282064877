"""``tempbench export-trec RUN...``: TREC run files plus one shared qrels file (SPEC §3.4).

Writes ``DIR/qrels.txt`` (every relevant gold triple of each question, valid at
``t_query``, retrieved or not) and ``DIR/<name>.trec`` per run (``<name>`` = the
run file name without ``.jsonl``; the TREC tag column is that name, which ranx
takes as the run's name). Document ids are stable keys of the KG row, the same
in every run (``Q42|P31|Q5|1994``), so trec_eval, ranx and ir_measures can
compare, fuse and pool the runs; the recall@k, nDCG@k and MRR they compute equal
``tempbench score``. How ids, scores, repeats and copies are written:
:mod:`eval.trec`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eval.evidence import resolve
from eval.keyspace import DEFAULT_KEY, KEY_CHOICES
from eval.scoring import select
from eval.trec import QRELS_NAME, RUN_SUFFIX, build_export, run_file_name, write_export
from tempbench.commands._scoring import add_force_argument, check_runs, load_inputs
from tempbench.data import absolute_or_none, add_data_arguments, command_provenance, data_from_args
from tempbench_core.atomic import write_json
from tempbench_core.console import info
from tempbench_core.errors import ConfigError, RunMismatchError
from tempbench_core.outputs import check_output_file, claim_output_dir
from tempbench_core.runfile import read_run
from tempbench_core.schema import SPLIT_CHOICES

DEFAULT_DIR = "trec"

EPILOG = f"""\
output (one document space shared by every run):
  {'DIR/' + QRELS_NAME:<18}qid 0 docid 1, one line per gold triple valid at t_query
  {'DIR/<name>' + RUN_SUFFIX:<18}qid Q0 docid rank score <name>, per run, in returned order
document id: S|R|O|T of the evidence item, e.g. Q42|P31|Q5|1994 (ids when the gold and
  the items carry them, else labels; '%', '|', whitespace escaped as %XX), identical
  across runs; eval.docids.parse_docid reads it back.
scores: L - i, strictly decreasing, so tools that re-sort by score and break ties by
  document id keep the returned order. A repeated item is left out (SPEC §3.4 drops
  it); a second valid copy of a triple already hit stays at its rank, not relevant.
evaluate with: ranx (make_comparable=True), ir_measures, or trec_eval -c (questions
  whose retrieval is empty have no run line and must count 0)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.description = ("Write runs as TREC run files with one qrels file shared by all, for trec_eval, ranx and "
                          "ir_measures (SPEC §3.4).")
    parser.epilog = EPILOG
    parser.add_argument("run", metavar="RUN", nargs="+",
                        help="run files or evidence JSONL (any form 'tempbench score' reads); several runs share "
                             "one qrels file")
    parser.add_argument("--out", metavar="DIR",
                        help=f"output directory: writes DIR/{QRELS_NAME} and DIR/<name>{RUN_SUFFIX} per RUN, <name> "
                             f"being the file name without .jsonl (default: {DEFAULT_DIR}/ beside the first RUN)")
    parser.add_argument("--split", choices=SPLIT_CHOICES,
                        help="export every question of this split; one absent from a run has no run line (an empty "
                             "retrieval) (default: exactly the questions in the run; several runs must then cover "
                             "the same questions)")
    parser.add_argument("--key", choices=KEY_CHOICES, default=DEFAULT_KEY,
                        help="key space for matching evidence to gold and for the document ids (SPEC §3.1; default "
                             f"{DEFAULT_KEY}: ids when the gold and the items carry them)")
    parser.add_argument("--tag", help="TREC tag column of every run file (default: each run's <name>)")
    add_force_argument(parser)
    add_data_arguments(parser, kg=False)


def run_name(path: str | Path) -> str:
    """``runs/oracle.jsonl`` -> ``oracle``: the name of a run's output file and its TREC tag."""
    name = Path(path).name
    if name.endswith(".jsonl"):
        return name[: -len(".jsonl")]
    return Path(name).stem or name


#: The file beside the TREC files that says where they came from and how to write them again.
PROVENANCE_NAME = "export.meta.json"


def export_provenance(args: argparse.Namespace, out_dir: Path) -> Any:
    """The data's origin and the command line of this export (every option that changes the files)."""
    return command_provenance(data_from_args(args), ["export-trec", *(absolute_or_none(p) for p in args.run)], [
        ("--out", absolute_or_none(out_dir)), ("--split", args.split), ("--key", args.key), ("--tag", args.tag),
        ("--force", args.force)], kg=False)


def run(args: argparse.Namespace) -> int:
    names = [run_name(p) for p in args.run]
    files = [run_file_name(n) for n in names]
    for i, file in enumerate(files):
        if file in files[:i]:
            raise ConfigError(f"{args.run[files.index(file)]} and {args.run[i]} would both be written as "
                              f"{file}; give the runs different file names")
    out_dir = Path(args.out) if args.out else Path(args.run[0]).parent / DEFAULT_DIR
    paths = data_from_args(args)
    inputs = [*args.run, *paths.input_files()]
    claim_output_dir(out_dir, "outputs", inputs, create=False)
    for target in [out_dir / QRELS_NAME, out_dir / PROVENANCE_NAME, *(out_dir / file for file in files)]:
        if target.exists():
            check_output_file(target, inputs, "--out")
    check_runs(args, *args.run)

    questions, _, _ = load_inputs(args, read_flags=False)
    records = [read_run(p) for p in args.run]
    if args.split is None:
        for path, recs in zip(args.run[1:], records[1:], strict=True):
            if set(recs) != set(records[0]):
                only_first = len(set(records[0]) - set(recs))
                only_this = len(set(recs) - set(records[0]))
                raise RunMismatchError(
                    f"{args.run[0]} and {path} cover different questions ({only_first} only in the first, {only_this} "
                    "only in the second); give --split S to export every question of a split (absent ones are "
                    "empty retrievals)"
                )
        records = [records[0], *({qid: recs[qid] for qid in records[0]} for recs in records[1:])]

    chosen = None
    tables = {}
    for path, name, recs in zip(args.run, names, records, strict=True):
        chosen, per_q, _, _ = select(recs, questions, args.split)

        def where(i: int, recs: Any = recs, chosen: Any = chosen, path: Any = path) -> str:
            return f"{recs.where(chosen[i]['id']) if hasattr(recs, 'where') else path}: "

        tables[name] = resolve(chosen, [(rec or {}).get("evidence", []) for rec in per_q], None, args.key, where=where)
    export = build_export(chosen or [], tables, key=args.key)
    claim_output_dir(out_dir, "outputs", inputs)
    written = write_export(out_dir, export, {n: args.tag for n in names} if args.tag else None)
    # TREC files hold no comment: where they came from is written beside them
    write_json(out_dir / PROVENANCE_NAME, {"files": [p.name for p in written],
                                           "provenance": export_provenance(args, out_dir).to_json()})

    empty = (f"; the {export.empty_rel} without one have no line, as SPEC §3.4 leaves them out of the average"
             if export.empty_rel else "")
    info(f"wrote {written[0]}: {sum(len(d) for d in export.qrels.values())} relevant triples of "
         f"{export.n_questions - export.empty_rel} of {export.n_questions} questions{empty}; document ids in the "
         f"{export.space} space")
    for name, path in zip(names, written[1:], strict=True):
        st = export.stats[name]
        notes = [f"{st['empty']} empty retrievals (no lines: use make_comparable / trec_eval -c)"] if st["empty"] else []
        if st["left_out"]:
            notes.append(f"{st['left_out']} repeated items left out")
        if st["renamed"]:
            notes.append(f"{st['renamed']} hits written under their triple's qrels time")
        info(f"wrote {path}: {st['lines']} lines, {st['questions']} questions" + (f"; {'; '.join(notes)}" if notes else ""))
    return 0
