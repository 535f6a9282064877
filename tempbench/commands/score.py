"""``tempbench score RUN.jsonl``: TRP/CCR, negatives, rank metrics, ties, intervals (SPEC §3, §6.2).

Prints tables for people (overall, by complexity, by operator, with coverage next
to TRP everywhere) and with ``--json OUT`` writes the SPEC §6.2 object
atomically. RUN may be a run file (SPEC §6.1) or an evidence JSONL of
``{"id": ..., "evidence": [...]}`` with dict or 5-list items (SPEC §3.1).
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from eval.answers import read_predictions
from eval.measures import FAMILIES
from eval.per_question import has_config, run_stages, write_per_question_csv
from eval.scoring import evaluate, to_json
from tempbench.commands._scoring import add_scoring_arguments, check_boot, check_runs, ci_text, load_inputs
from tempbench.data import CACHE_DIR_HELP, absolute_or_none, command_provenance, data_from_args
from tempbench_core.atomic import write_json
from tempbench_core.console import info, print_table
from tempbench_core.errors import ConfigError, TempbenchError
from tempbench_core.outputs import check_output_file
from tempbench_core.runfile import read_run


def definitions() -> str:
    """The headline metrics, one line each, for ``--help`` (from the declared measures, :mod:`eval.measures`)."""
    lines = ["metrics (SPEC §3; docs/specification.md):"]
    for name in ("TRP", "TRP_micro", "CCR", "coverage", "recall", "ndcg", "mrr"):
        f = FAMILIES[name]
        lines += textwrap.wrap(f"{f.title}: {f.definition}; over {f.population}", 96,
                               initial_indent="  ", subsequent_indent="      ")
    lines += textwrap.wrap("Empty retrievals count as 0 for CCR, coverage and the rank metrics and are left out of "
                           "TRP (macro); repeated items count again for TRP and CCR and are dropped before the rank "
                           "metrics.", 96, initial_indent="  ", subsequent_indent="  ")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = definitions()
    parser.add_argument("run", metavar="RUN.jsonl", help="run file or evidence JSONL")
    parser.add_argument("--json", metavar="OUT", help="also write the scores as one JSON object (SPEC §6.2)")
    parser.add_argument("--per-question", metavar="OUT.csv",
                        help="also write one CSV row per scored question: id, split, complexity, operator, n_ret, "
                             "hits, n_gold, TRP, CCR, the rank measures and, when the run's configuration "
                             "(.meta.json) and the KG are at hand, the SPEC §7 stage of each gold hop "
                             "(eval.per_question; pandas.read_csv reads it)")
    parser.add_argument("--cache-dir", metavar="DIR", help=f"for the --per-question stages, the {CACHE_DIR_HELP}")
    parser.add_argument("--predictions", metavar="P", help="predictions JSONL (id, prediction) to add answer EM/F1 (SPEC §3.6)")
    parser.add_argument("--t-query-hidden", action="store_true",
                        help="the generator never saw t_query: do not flag interval EM as leak-contaminated")
    parser.add_argument("--rank-backend", choices=("kernel", "ir_measures"), default="kernel",
                        help="compute recall/nDCG/MRR with the numpy kernel (default) or ir_measures (same values, slower)")
    add_scoring_arguments(parser)


def run(args: argparse.Namespace) -> int:

    check_boot(args)
    inputs = [args.run, args.predictions, *data_from_args(args).input_files()]
    if args.json:
        check_output_file(args.json, inputs, "--json")
    if args.per_question:
        check_output_file(args.per_question, inputs, "--per-question")
        if args.json and Path(args.json).resolve() == Path(args.per_question).resolve():
            raise ConfigError("--json and --per-question name the same file; give two paths")
    check_runs(args, args.run)
    questions, flags, _ = load_inputs(args)
    run_records = read_run(args.run)
    predictions = read_predictions(args.predictions) if args.predictions else None
    ev = evaluate(run_records, questions, flags, split=args.split, predictions=predictions, key=args.key,
                  rank_backend=args.rank_backend)
    result = to_json(ev, n_boot=args.boot, seed=args.seed, t_query_exposed=not args.t_query_hidden)
    print_report(result, title=args.run)
    if args.json:
        write_json(args.json, {**result, "provenance": score_provenance(args).to_json()})
        info(f"wrote {args.json}")
    if args.per_question:
        write_per_question(args, run_records, questions, ev)
    return 0


def score_provenance(args: argparse.Namespace) -> Any:
    """The data's origin and the command line of this score (every option that changes the JSON)."""
    return command_provenance(data_from_args(args), ["score", absolute_or_none(args.run)], [
        ("--json", absolute_or_none(args.json)), ("--per-question", absolute_or_none(args.per_question)),
        ("--predictions", absolute_or_none(args.predictions)), ("--t-query-hidden", args.t_query_hidden),
        ("--split", args.split), ("--key", args.key), ("--boot", args.boot), ("--seed", args.seed),
        ("--force", args.force)], kg=False)


def write_per_question(args: argparse.Namespace, records: Any, questions: list[dict[str, Any]], ev: Any) -> None:
    """``--per-question OUT.csv``: the per-question table, with the SPEC §7 stages when they can be known here."""
    data = data_from_args(args)
    stages = None
    why = ""
    try:
        stages = run_stages(records, questions, data, run_path=args.run, cache_dir=args.cache_dir)
    except TempbenchError as exc:  # the stages are extra: the scores stand without them
        why = f": {exc}"
    if stages is None and not why:
        why = (f": {args.run} has no .meta.json with its configuration" if not has_config(args.run)
               else f": no KG file at {data.kg} (give --data DIR)")
    path = write_per_question_csv(args.per_question, ev, stages)
    info(f"wrote {path}: {len(ev.rows):,} questions" + ("" if stages is not None else
                                                         f"; stage columns left empty{why}"))


def print_report(result: dict[str, Any], title: str = "") -> None:
    """The human-readable tables of a SPEC §6.2 object."""
    agg = result["trp_ccr"]
    ci = result["ci"]
    if agg.get("n_questions", 0) == 0:
        info("no questions scored")
        return
    rows = [
        ["questions", agg["n_questions"], ""],
        ["missing from run", result.get("missing", 0), ""],
        ["coverage", agg["coverage"], ci_text(ci.get("coverage"))],
        ["TRP (macro)", agg["TRP_macro"], ci_text(ci.get("TRP_macro"))],
        ["TRP (micro)", agg["TRP_micro"], ci_text(ci.get("TRP_micro"))],
        ["CCR", agg["CCR"], ci_text(ci.get("CCR"))],
    ]
    print_table(f"TRP/CCR overall {title}".strip(), ["metric", "value", "95% CI"], rows)
    cov = result["coverage"]
    for field in ("complexity", "operator"):
        sliced = agg.get(f"by_{field}", {})
        rows = [[str(v), s["n"], cov[f"by_{field}"].get(v), s["TRP"], s["CCR"]] for v, s in sliced.items()]
        print_table(f"by {field}", [field, "n", "coverage", "TRP", "CCR"], rows)

    neg = result["negatives"]
    if neg.get("flags_found") is False:
        info(f"negatives: {neg['message']}")
    else:
        rows = [[name, v["rate"], v["n"], ci_text(ci.get(name))] for name, v in neg.items()]
        print_table("typed-negative hit rates (functional subsets, SPEC §3.3)", ["rate", "value", "n", "95% CI"], rows)

    counts = result.get("counts", {})
    rank = result["rank"]
    rows = [[name, value, ci_text(ci.get(name))] for name, value in rank.items()]
    print_table("rank metrics (SPEC §3.4)", ["metric", "value", "95% CI"], rows)
    info(
        f"rank metrics: macro over {counts.get('rank_evaluated', '?')} questions with a relevant triple; "
        f"{counts.get('rank_empty_rel', '?')} question(s) with none reported apart"
    )
    rows = [[name, t["observed"], t["expected"], t["min"], t["max"], t["bias"]] for name, t in result["ties"].items()]
    print_table("tie-aware (SPEC §3.5)", ["metric", "observed", "expected", "min", "max", "bias"], rows)
    space = counts.get("key_space") or {}
    if space:
        info(key_space_text(space))

    ans = result.get("answers")
    if ans:
        rows = [
            ["EM", ans["EM"], ans["EM_without_interval"]],
            ["F1", ans["F1"], ans["F1_without_interval"]],
            ["n", ans["n"], ans["n_without_interval"]],
        ]
        print_table("answers (SPEC §3.6)", ["metric", "overall", "without interval"], rows)
        if ans["interval_leak_contaminated"]:
            info("note: interval-slice EM is leak-contaminated (t_query equals the answer year and was exposed)")


def key_space_text(space: dict[str, Any]) -> str:
    """``matched on ids (SPEC §3.1); 0 questions score otherwise on labels: the choice does not matter here``."""
    names = {"id": "ids", "label": "labels", "mixed": "ids where both sides carry them, else labels"}
    text = f"matched on {names.get(space['used'], space['used'])} (SPEC §3.1, --key)"
    n = space.get("questions_differing")
    if space.get("other") is None or n is None:
        return text + "; the other key space is not available on both sides"
    other = names[space["other"]]
    return text + (f"; on {other}, {n:,} question(s) would score differently" if n
                   else f"; on {other} every question scores the same: the choice does not matter here")
