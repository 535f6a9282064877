"""``tempbench score-answers PRED.jsonl``: answer EM and token F1 (SPEC §3.6).

EM overall and with the ``interval`` slice excluded are always shown side by
side; interval EM is flagged as leak-contaminated unless ``--t-query-hidden``.
"""

from __future__ import annotations

import argparse

import numpy as np

from eval.answers import answer_rows, answers_report, read_predictions
from eval.bootstrap import bootstrap_ci, mean_metric
from tempbench.commands._scoring import add_bootstrap_arguments, add_force_argument, check_boot, ci_text, load_inputs
from tempbench.data import absolute_or_none, add_data_arguments, command_provenance, data_from_args
from tempbench_core.atomic import write_json
from tempbench_core.console import info, print_table
from tempbench_core.errors import RunMismatchError
from tempbench_core.outputs import check_output_file
from tempbench_core.runchecks import check_run_split
from tempbench_core.schema import SPLIT_CHOICES, select_split
from tempbench_core.text import terminal_text


def add_arguments(parser: argparse.ArgumentParser) -> None:

    parser.add_argument("predictions", metavar="PRED.jsonl", help="JSONL with id and prediction")
    parser.add_argument("--split", choices=SPLIT_CHOICES,
                        help="score every question of this split (missing predictions score 0); default: the predicted questions")
    parser.add_argument("--json", metavar="OUT", help="write the answers object as JSON")
    add_force_argument(parser)
    add_bootstrap_arguments(parser)
    parser.add_argument("--t-query-hidden", action="store_true",
                        help="the generator never saw t_query: do not flag interval EM as leak-contaminated")
    add_data_arguments(parser, kg=False)


def run(args: argparse.Namespace) -> int:


    check_boot(args)
    if args.json:
        check_output_file(args.json, [args.predictions, *data_from_args(args).input_files()], "--json")
    questions, _, _ = load_inputs(args, read_flags=False)
    predictions = read_predictions(args.predictions)
    by_id = {q["id"]: q for q in questions}
    unknown = [qid for qid in predictions if qid not in by_id]
    if unknown:
        raise RunMismatchError(f"{terminal_text(args.predictions)}: {len(unknown)} prediction(s) have ids not in the "
                               f"benchmark, e.g. {terminal_text(repr(unknown[0]))} (wrong --data or --benchmark?)")
    chosen = select_split(questions, args.split) if args.split else [by_id[qid] for qid in predictions]
    if args.split:
        # the rule of runs (SPEC §3.2 scores a missing prediction 0): predictions of no question of the split refused
        for problem in check_run_split(args.predictions, args.split, lambda: {str(q["id"]) for q in chosen},
                                       force=args.force):
            info(f"warning (--force): {problem}")
    rows = answer_rows(chosen, predictions)
    report = answers_report(rows, t_query_exposed=not args.t_query_hidden)
    em = np.array([r["em"] for r in rows], dtype=float)
    f1 = np.array([r["f1"] for r in rows], dtype=float)
    no_iv = np.array([r["operator"] != "interval" for r in rows], dtype=bool)
    report["ci"] = bootstrap_ci(
        {
            "EM": mean_metric(em),
            "EM_without_interval": mean_metric(np.where(no_iv, em, np.nan)),
            "F1": mean_metric(f1),
            "F1_without_interval": mean_metric(np.where(no_iv, f1, np.nan)),
        },
        n_boot=args.boot, seed=args.seed,
    )
    ci = report["ci"]
    print_table(
        f"answers {args.predictions}",
        ["metric", "overall", "95% CI", "without interval", "95% CI "],
        [
            ["EM", report["EM"], ci_text(ci["EM"]), report["EM_without_interval"], ci_text(ci["EM_without_interval"])],
            ["F1", report["F1"], ci_text(ci["F1"]), report["F1_without_interval"], ci_text(ci["F1_without_interval"])],
            ["n", report["n"], "", report["n_without_interval"], ""],
        ],
    )
    print_table("by operator", ["operator", "n", "EM", "F1"],
                [[str(op), v["n"], v["EM"], v["F1"]] for op, v in report["by_operator"].items()])
    if report["missing_predictions"]:
        info(f"{report['missing_predictions']} question(s) without a prediction scored 0")
    if report["interval_leak_contaminated"]:
        info("note: interval-slice EM is leak-contaminated (t_query equals the answer year and was exposed)")
    if args.json:
        provenance = command_provenance(data_from_args(args), ["score-answers", absolute_or_none(args.predictions)], [
            ("--split", args.split), ("--json", absolute_or_none(args.json)), ("--boot", args.boot),
            ("--seed", args.seed), ("--t-query-hidden", args.t_query_hidden), ("--force", args.force)], kg=False)
        write_json(args.json, {**report, "provenance": provenance.to_json()})
        info(f"wrote {args.json}")
    return 0
