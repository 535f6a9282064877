"""``tempbench diff RUN BASELINE``: diff a run against published baselines or another run (SPEC §6.3).

BASELINE is a run file or any baselines file of SPEC §1.4 (sniffed by keys).
Prints the share of questions reproduced exactly, per-question missing, extra,
changed-time and reordered evidence, and metric deltas by slice. ``--sweep``
reruns the retriever over the decision options of SPEC §2 and ranks the
variants by the share of questions that match the baseline exactly.
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any

from eval.baselines import load_baseline
from eval.diff import PER_QUESTION, baseline_cell, compare, differing_metrics, metrics_agreement, run_evidence
from eval.sweep import run_sweep
from retriever import (
    DecisionSweep,
    RetrieverConfig,
    load_benchmark,
    load_config,
    load_flags,
    load_index,
)
from tempbench.commands._numbers import check_numbers
from tempbench.commands._scoring import add_force_argument, check_runs
from tempbench.data import absolute_or_none, add_data_arguments, command_provenance, config_word, data_from_args
from tempbench_core.atomic import write_json
from tempbench_core.console import info, print_table
from tempbench_core.errors import ConfigError, RunMismatchError, TempbenchError
from tempbench_core.layout import default_index_cache
from tempbench_core.outputs import check_output_file
from tempbench_core.runfile import RunRecords, meta_path, read_meta, read_run
from tempbench_core.text import terminal_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench diff``."""
    parser.add_argument("run", metavar="RUN", help="run file (SPEC §6.1)")
    parser.add_argument("baseline", metavar="BASELINE",
                        help="another run file, or a baselines file: per-question JSONL or a metric table (JSON/CSV)")
    parser.add_argument("--json", metavar="OUT", help="write the whole diff as JSON")
    parser.add_argument("--sweep", action="store_true",
                        help="rerun the retriever under every combination of the SPEC §2 decision options (and tie_break) "
                             "and rank the variants by the share of baseline questions they reproduce exactly; variants "
                             "with identical evidence are grouped into one row")
    parser.add_argument("--keys", metavar="KEY,KEY", type=_key_list,
                        help="with --sweep: vary only these keys (default: every decision key that can change the run: "
                             + ", ".join(DecisionSweep.CANDIDATES) + ")")
    parser.add_argument("--config", metavar="NAME|FILE",
                        help="configuration of RUN (default: from RUN's .meta.json); the sweep starts from it")
    parser.add_argument("--space", "--key", dest="space", choices=("auto", "id", "label", "line"), default="auto",
                        help="compare items by ids, labels or rendered lines (default auto: ids when both sides have them)")
    parser.add_argument("--show", type=int, default=10, metavar="N",
                        help="questions shown in detail (default 10; 0 shows none)")
    parser.add_argument("--cache-dir", metavar="DIR", help="index cache directory (for --sweep)")
    add_force_argument(parser)
    add_data_arguments(parser)


def run_config(run_path: Path, name: str | None) -> Any:
    """The run's configuration: ``--config``, else its ``.meta.json``, else ``None``."""
    if name:
        return load_config(name)
    cfg = (read_meta(run_path) or {}).get("config")
    return RetrieverConfig.from_mapping(cfg, source=str(meta_path(run_path))) if isinstance(cfg, dict) else None


def _compared_by(space: str) -> str:
    """How the header names the diff's comparison space."""
    if space == PER_QUESTION:
        return "each question compared by ids, labels or lines, the first its items on both sides carry"
    return f"compared by {space}"


def print_diff(result: dict[str, Any], show: int = 10) -> None:
    """Summary, per-question details, metric deltas and sweep ranking, as tables."""
    summ = result.get("summary")
    if summ:
        print_table(f"diff: exact match {summ['exact']:,} of {summ['baseline_questions']:,} baseline questions "
                    f"({summ['exact_share']:.1%}), {_compared_by(result['space'])}",
                    ["measure", "value"], [[k, v] for k, v in summ.items()])
        shown = 0
        for qid, d in result["questions"].items():
            if shown >= show:
                info(f"... {len(result['questions']) - show} more differing question(s); --json has them all")
                break
            shown += 1
            if "only_in" in d:
                info(f"{qid}: only in the {d['only_in']}")
                continue
            parts = []
            for m in d["missing"]:
                parts.append(f"  missing  (baseline rank {m['rank']}): {m['item']}")
            for m in d["extra"]:
                parts.append(f"  extra    (run rank {m['rank']}): {m['item']}")
            for m in d["changed"]:
                parts.append(f"  changed time of {' | '.join(m['triple'])}: run {_span(m['run_time'])} "
                             f"(rank {m['run_rank']}), baseline {_span(m['baseline_time'])} (rank {m['baseline_rank']})")
            for m in d["reordered"]:
                parts.append(f"  reordered: {m['item']} (run rank {m['run_rank']}, baseline rank {m['baseline_rank']})")
            # one line per item: the items are data, each escaped on its own line
            print(f"{terminal_text(qid)}:\n" + "\n".join(terminal_text(part) for part in parts))
    if result.get("metrics"):
        # Only what differs as shown (3 decimals) is printed; --json keeps every row and its exact delta.
        differ = differing_metrics(result["metrics"])
        if differ:
            print_table(f"metric deltas (run - baseline): {len(differ)} of {len(result['metrics'])} differ",
                        ["slice", "metric", "run", "baseline", "delta"],
                        [[m["slice"], m["metric"], m["run"], baseline_cell(m), m["delta"]] for m in differ])
        else:
            info(f"metric deltas: {metrics_agreement(result['metrics'])}")
    invalid = [m for m in result.get("metrics") or [] if m.get("invalid")]
    if invalid:
        info(f"{len(invalid)} value(s) of the baseline table are impossible and were not compared: "
             + "; ".join(f"{m['metric']} ({m['slice']}) = {m['invalid']['given']}: {m['invalid']['problem']}"
                         for m in invalid[:5]) + (" ..." if len(invalid) > 5 else ""))
    if result.get("metrics_note"):
        info(result["metrics_note"])
    skipped = result.get("skipped_rows") or []
    if skipped:
        info(f"{len(skipped)} row(s) of the baseline table could not be read and were left out: "
             + "; ".join(skipped[:5]) + (" ..." if len(skipped) > 5 else ""))
    if result.get("sweep"):
        print_sweep(result["sweep"])


def print_sweep(sweep: dict[str, Any], shown: int = 15, members_shown: int = 24) -> None:
    """The sweep's groups of identical variants, best first, what it concludes, and the keys without effect.

    The best group's members are listed (up to ``members_shown``): any of
    them gives the evidence that group has.
    """
    rows = sweep["rows"]
    table = [[i + 1, v["variant"] + ("" if v["agree"] == 1 else f" (and {v['agree'] - 1} more)"), v["agree"],
              f"{v['exact']} of {v['n']}", v["share"]] for i, v in enumerate(rows[:shown])]
    print_table(f"sweep over {', '.join(sweep['keys'])}: {sweep['variants']} variants in {len(rows)} groups of identical "
                "output, ranked by exact-match share", ["rank", "variant (fewest changes first)", "variants agree", "exact",
                                                        "share"], table)
    if len(rows) > shown:
        info(f"... {len(rows) - shown} more group(s); --json has them all")
    for key in sweep.get("no_effect") or []:
        info(f"{key}: no effect here (every value of it gives the same evidence on this data)")
    if not rows:
        return
    best = rows[0]
    if sweep["reproduced"]:
        info(f"the baseline is reproduced by: {best['variant']}" + (f" (and {best['agree'] - 1} equivalent variants)"
                                                                    if best["agree"] > 1 else ""))
    else:
        info(f"no variant reproduces the baseline (none matches {sweep['threshold']:.0%} of its questions); "
             f"closest: {best['variant']} with {best['exact']:,} of {best['n']:,} ({best['share']:.1%})")
    if best["agree"] > 1:
        info(f"its group, {best['agree']} variants with identical evidence: " + _members(sweep, members_shown))
    first = sweep.get("first_difference")
    if first:
        info(f"first question where the best variant differs: {first['question']} "
             f"({len(first['missing'])} missing, {len(first['extra'])} extra, {len(first['changed'])} changed time, "
             f"{len(first['reordered'])} reordered)")


def _members(sweep: dict[str, Any], shown: int) -> str:
    """The best group's variants in words.

    Every combination of the keys without effect around the group's first
    variant is in the group (they change nothing); when the group has just
    those, it is "the first variant, whatever the value of" those keys, else
    its variants are listed one by one (up to ``shown``).
    """
    best = sweep["rows"][0]
    idle = [k for k in sweep["keys"] if k in (sweep.get("no_effect") or [])]
    if idle and best["agree"] == sweep.get("no_effect_combinations"):
        lead = {k: v for k, v in best["changes"].items() if k not in idle}
        return f"{DecisionSweep.describe(lead)}, whatever the value of {', '.join(idle)}"
    members = best["variants"]
    return "; ".join(members[:shown]) + (f"; ... {len(members) - shown} more (--json has them all)"
                                         if len(members) > shown else "")


def _key_list(text: str) -> list[str]:
    keys = [k.strip() for k in text.split(",") if k.strip()]
    if not keys:
        raise argparse.ArgumentTypeError(f"no key given (expected KEY,KEY of {', '.join(DecisionSweep.CANDIDATES)}; "
                                         "leave --keys out to vary every decision key)")
    unknown = [k for k in keys if k not in DecisionSweep.CANDIDATES]
    if unknown:
        hints = [f"{k!r}" + (f" (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(k, DecisionSweep.CANDIDATES, 1)) else "")
                 for k in unknown]
        raise argparse.ArgumentTypeError(f"unknown key {', '.join(hints)}; valid: {', '.join(DecisionSweep.CANDIDATES)}")
    return keys


def _span(t: list[float]) -> str:
    a, b = (int(x) if float(x).is_integer() else x for x in t)
    return str(a) if a == b else f"{a}-{b}"


def run(args: argparse.Namespace) -> int:
    """Diff RUN against BASELINE; exit 0 whatever the differences."""
    check_numbers(args, "show")
    if args.keys and not args.sweep:
        raise ConfigError("--keys goes with --sweep")
    run_path = Path(args.run)
    if args.json:
        check_output_file(args.json, [args.run, args.baseline, *data_from_args(args).input_files()], "--json")
    names = ("kg", "labels", "benchmark", "benchmark_ids") if args.sweep else ("benchmark", "benchmark_ids")
    check_runs(args, args.run, args.baseline, names=names)
    run_records = read_run(run_path)
    baseline = load_baseline(args.baseline)
    config = run_config(run_path, args.config)
    data = data_from_args(args)
    questions = flags = None
    if data.benchmark is not None and Path(data.benchmark).exists():
        questions = load_benchmark(data.benchmark, data.benchmark_ids)
        if data.flags is not None and Path(data.flags).exists():
            flags = load_flags(data.flags)
        known = {str(q["id"]) for q in questions}
        if any(str(q) not in known for q in run_records):
            info("the run's question ids are not all in the benchmark: metric deltas skipped (give --data)")
            questions = None
    result = compare(run_records, baseline, questions, flags, config=None if config is None else config.name, space=args.space)
    summ = result.get("summary") or {}
    if summ.get("run_questions") and summ.get("baseline_questions") and not summ.get("common_questions"):
        # Two files about different question sets (another dataset, another
        # split) are a mistake, not a diff: say so rather than list every id.

        run_ids = sorted(str(q) for q in run_records)
        raise RunMismatchError(
            f"{args.run} and {args.baseline} have no question in common ({summ['run_questions']:,} vs "
            f"{summ['baseline_questions']:,} questions, e.g. {run_ids[0]!r} only in the run); "
            "were they made on the same benchmark and split?")
    # absolute, as the recorded command names them: the command reruns to the same bytes from any folder
    result["run"] = absolute_or_none(run_path)
    result["baseline"] = absolute_or_none(args.baseline)
    if args.sweep:
        if not isinstance(baseline, RunRecords):
            raise ConfigError("--sweep needs a per-question baseline (a metric table cannot be matched exactly)")
        if questions is None:
            raise TempbenchError("--sweep needs the benchmark the run was made on (give --data or --benchmark)")
        if config is None:
            raise ConfigError(f"--sweep: no {run_path.name[:-6] if run_path.name.endswith('.jsonl') else run_path.name}.meta.json "
                              "beside the run; give --config NAME")

        data.require("kg")
        cache = Path(args.cache_dir) if args.cache_dir else default_index_cache()
        index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark, cache_dir=cache)
        result["sweep_base"] = config.to_dict()
        result["sweep"] = run_sweep(index, config, questions, run_evidence(baseline), baseline.item_form, keys=args.keys)
    print_diff(result, args.show)
    if args.json:
        write_json(Path(args.json), {**result, "provenance": diff_provenance(args).to_json()})
        info(f"wrote {args.json}")
    return 0


def diff_provenance(args: argparse.Namespace) -> Any:
    """The data's origin and the command line of this diff (every option that changes the JSON)."""
    return command_provenance(data_from_args(args), ["diff", absolute_or_none(args.run), absolute_or_none(args.baseline)],
                              [("--json", absolute_or_none(args.json)), ("--sweep", args.sweep),
                               ("--keys", None if args.keys is None else ",".join(args.keys)),
                               ("--config", config_word(args.config)), ("--space", args.space),
                               ("--force", args.force)], kg=bool(args.sweep))

