"""``tempbench compare RUN_A RUN_B``: paired comparison on the same questions (SPEC §3.7).

The tests are :mod:`eval.paired`'s: per metric, overall and per slice, a paired
bootstrap interval of ``A - B`` and a two-sided paired permutation test, with
the number of questions whose contribution differs and an optional Holm
correction over the reported rows. With P permutations no p is below
1/(P+1), so Holm over m rows cannot go below m/(P+1): when that exceeds 0.05
the command says so and names the smallest ``--perm`` that can reach it.
"""

from __future__ import annotations

import argparse
from typing import Any

from eval.bootstrap import N_PERM
from eval.paired import ALPHA, compare_evaluations
from eval.scoring import evaluate
from tempbench.commands._numbers import RESAMPLES_RANGE
from tempbench.commands._scoring import add_scoring_arguments, check_boot, check_runs, ci_text, load_inputs
from tempbench.data import absolute_or_none, command_provenance, data_from_args
from tempbench_core.atomic import write_json
from tempbench_core.console import info, print_table
from tempbench_core.errors import RunMismatchError
from tempbench_core.outputs import check_output_file
from tempbench_core.runfile import read_run


def add_arguments(parser: argparse.ArgumentParser) -> None:

    parser.add_argument("run_a", metavar="RUN_A", help="first run file or evidence JSONL")
    parser.add_argument("run_b", metavar="RUN_B", help="second run file or evidence JSONL")
    parser.add_argument("--json", metavar="OUT", help="write the comparison as JSON")
    parser.add_argument("--perm", type=int, default=N_PERM, metavar="N",
                        help=f"permutations for the two-sided paired permutation test, 1 to {RESAMPLES_RANGE[1]:,} "
                             f"(default {N_PERM}; the smallest reportable p is 1/(N+1))")
    parser.add_argument("--holm", action="store_true",
                        help="add Holm-adjusted p-values over every reported row (overall and slices); says when "
                             f"--perm is too small for any of them to reach {ALPHA:g} (the smallest is rows/(N+1)) and "
                             "names the --perm that can")
    add_scoring_arguments(parser)


def run(args: argparse.Namespace) -> int:

    check_boot(args)
    if args.json:
        check_output_file(args.json, [args.run_a, args.run_b, *data_from_args(args).input_files()], "--json")
    check_runs(args, args.run_a, args.run_b)
    questions, flags, _ = load_inputs(args)
    run_a, run_b = read_run(args.run_a), read_run(args.run_b)
    if args.split is None and set(run_a) != set(run_b):
        only_a = len(set(run_a) - set(run_b))
        only_b = len(set(run_b) - set(run_a))
        raise RunMismatchError(
            f"the runs cover different questions ({only_a} only in A, {only_b} only in B); "
            "give --split S to compare on every question of a split (absent ones count as empty)"
        )
    ev_a = evaluate(run_a, questions, flags, split=args.split, key=args.key)
    if args.split is None:
        run_b = {qid: run_b[qid] for qid in run_a}  # same question order in both
    ev_b = evaluate(run_b, questions, flags, split=args.split, key=args.key)
    result = compare_evaluations(ev_a, ev_b, n_boot=args.boot, n_perm=args.perm, seed=args.seed, correct=args.holm)

    def fmt_rows(tests: dict[str, Any]) -> list[list[Any]]:
        return [[k, t["a"], t["b"], t["delta"], ci_text(t["ci"]), _p(t["p"], t["p_min"]),
                 *([_p(t["p_holm"], t["p_min"])] if args.holm else []), t["n_differ"]]
                for k, t in tests.items() if isinstance(t, dict)]

    cols = ["metric", "A", "B", "A - B", "95% CI", "p (perm.)", *(["p (Holm)"] if args.holm else []), "questions differing"]
    print_table(f"A = {args.run_a}, B = {args.run_b} ({result['n_questions']} questions)", cols, fmt_rows(result["overall"]))
    for field in ("complexity", "operator"):
        rows = []
        for value, tests in result[f"by_{field}"].items():
            for row in fmt_rows(tests):
                rows.append([f"{value} (n={tests['n']}) {row[0]}", *row[1:]])
        print_table(f"by {field}", cols, rows)
    info(result["tests"])
    if args.holm:
        info(result["correction"] + (f"; {result['correction_note']}" if result.get("correction_note") else ""))
    if result.get("note"):
        info(f"note: {result['note']}")
    if args.json:
        write_json(args.json, {**result, "provenance": compare_provenance(args).to_json()})
        info(f"wrote {args.json}")
    return 0


def compare_provenance(args: argparse.Namespace) -> Any:
    """The data's origin and the command line of this comparison (every option that changes the JSON)."""
    return command_provenance(data_from_args(args), ["compare", absolute_or_none(args.run_a),
                                                     absolute_or_none(args.run_b)], [
        ("--json", absolute_or_none(args.json)), ("--perm", args.perm), ("--holm", args.holm),
        ("--split", args.split), ("--key", args.key), ("--boot", args.boot), ("--seed", args.seed),
        ("--force", args.force)], kg=False)


def _p(p: float | None, p_min: float) -> str:
    """A p-value for the table: ``<= p_min`` when no permutation reached the observed difference."""
    if p is None:
        return "-"
    return f"<= {p_min:.2g}" if p <= p_min else f"{p:.3f}"
