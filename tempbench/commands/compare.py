"""``tempbench compare RUN_A RUN_B``: paired comparison on the same questions (SPEC §3.7).

For every headline metric, overall and per slice (complexity, operator): the
values of A and B, ``delta = A - B``, a paired bootstrap 95% interval of delta
(one resampling of questions shared by both runs) and the p-value of a paired
permutation test (A and B swapped per question with probability 1/2).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from eval.bootstrap import paired_test
from eval.scoring import evaluate, headline_metrics
from tempbench.commands._scoring import add_scoring_arguments, check_boot, ci_text, load_inputs
from tempbench.core.atomic import write_json
from tempbench.core.console import info, print_table
from tempbench.core.errors import RunMismatchError
from tempbench.core.runfile import read_run

SLICE_METRICS = ("coverage", "TRP_macro", "CCR", "ndcg@10", "mrr")


def add_arguments(parser: argparse.ArgumentParser) -> None:

    parser.add_argument("run_a", metavar="RUN_A", help="first run file or evidence JSONL")
    parser.add_argument("run_b", metavar="RUN_B", help="second run file or evidence JSONL")
    parser.add_argument("--json", metavar="OUT", help="write the comparison as JSON")
    parser.add_argument("--perm", type=int, default=1000, metavar="N", help="permutations for the paired test (default 1000)")
    add_scoring_arguments(parser)


def compare_evaluations(ev_a: Any, ev_b: Any, n_boot: int = 1000, n_perm: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Overall and per-slice paired tests of two evaluations of the same questions."""

    out: dict[str, Any] = {
        "n_questions": len(ev_a.rows),
        "overall": paired_test(headline_metrics(ev_a), headline_metrics(ev_b), n_boot=n_boot, n_perm=n_perm, seed=seed),
    }
    for field in ("complexity", "operator"):
        values: dict[Any, list[int]] = {}
        for i, row in enumerate(ev_a.rows):
            values.setdefault(row[field], []).append(i)
        sliced = {}
        for value in sorted(values, key=str):
            idx = np.asarray(values[value], dtype=np.int64)
            a = {k: v for k, v in headline_metrics(ev_a, idx).items() if k in SLICE_METRICS}
            b = {k: v for k, v in headline_metrics(ev_b, idx).items() if k in SLICE_METRICS}
            sliced[value] = {"n": int(idx.size), **paired_test(a, b, n_boot=n_boot, n_perm=n_perm, seed=seed)}
        out[f"by_{field}"] = sliced
    return out


def run(args: argparse.Namespace) -> int:

    check_boot(args)
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
    result = compare_evaluations(ev_a, ev_b, n_boot=args.boot, n_perm=args.perm, seed=args.seed)

    def fmt_rows(tests: dict[str, Any]) -> list[list[Any]]:
        return [[k, t["a"], t["b"], t["delta"], ci_text(t["ci"]), t["p"]] for k, t in tests.items() if isinstance(t, dict)]

    cols = ["metric", "A", "B", "A - B", "95% CI", "p (perm.)"]
    print_table(f"A = {args.run_a}, B = {args.run_b} ({result['n_questions']} questions)", cols, fmt_rows(result["overall"]))
    for field in ("complexity", "operator"):
        rows = []
        for value, tests in result[f"by_{field}"].items():
            for row in fmt_rows(tests):
                rows.append([f"{value} (n={tests['n']}) {row[0]}", *row[1:]])
        print_table(f"by {field}", cols, rows)
    if args.json:
        write_json(args.json, result)

        info(f"wrote {args.json}")
    return 0
