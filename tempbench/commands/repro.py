"""``tempbench repro ORIGINAL REPRODUCED``: how close a reproduction is, in the IR community's terms (SPEC §8).

ORIGINAL and REPRODUCED are folders of per-question runs; ``<name>.jsonl`` (or
``.json``) in a folder is the run of configuration ``<name>``, in any SPEC §1.4
form. Configurations present in both are paired, the others listed and
skipped. Prints three tables (document order, effectiveness, overall effects
against ``--baseline``) with a one-line reading of each figure, and with
``--json OUT`` writes the SPEC §8 object (:mod:`eval.repro.compare`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from eval.attribution import check_run_role
from eval.keyspace import DEFAULT_KEY, KEY_CHOICES
from eval.repro.folders import list_runs
from eval.repro.job import Scope, reproducibility
from eval.repro.options import DEFAULT_BASELINE, DEFAULT_MEASURES, KTU_CUTS, RBO_BOTH_EMPTY, TRP_EMPTY, ReproOptions
from eval.repro.reading import (
    EFFECT_COLUMNS,
    EFFECTIVENESS_COLUMNS,
    READINGS,
    effect_rows,
    effectiveness_rows,
    fmt,
)
from eval.repro.values import parse_measures, per_question_names
from tempbench.commands._scoring import add_force_argument, check_runs, load_inputs
from tempbench.data import absolute_or_none, add_data_arguments, command_provenance, data_from_args
from tempbench_core.atomic import write_json
from tempbench_core.console import info, print_table
from tempbench_core.errors import ConfigError, RunMismatchError
from tempbench_core.outputs import check_output_file
from tempbench_core.schema import SPLIT_CHOICES
from tempbench_core.workers import cpu_count

EPILOG = """\
figures (SPEC §8; Breuer et al., SIGIR 2020, as repro_eval 0.5.0 computes them):
  document order, per configuration: KTU (Kendall's tau Union, lists cut to the shorter),
    RBO (rank-biased overlap, p and depth: --rbo-p, --rbo-depth)
  effectiveness, per configuration and measure: RMSE, nRMSE, paired t-test p-value, the
    means, and whether the original's mean lies within our tie range (SPEC §3.5)
  overall effects, per ablation against --baseline: ER (effect ratio) and ΔRI (delta
    relative improvement); undefined (no effect in the original) is null / n/a
documents are the TREC ids of 'tempbench export-trec' (Q42|P31|Q5|1994); the decisions
  --ktu-cut, --rbo-both-empty, --trp-empty are described in configs/README.md."""

#: SPEC §8's readings, the options' defaults (written once, in eval.repro.options).
_DEFAULTS = ReproOptions()


def _measure_list(text: str) -> list[str]:
    return [m.strip() for m in text.split(",") if m.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("original", metavar="ORIGINAL",
                        help="folder of the original runs (e.g. DATA/baselines/): <config>.jsonl per configuration")
    parser.add_argument("reproduced", metavar="REPRODUCED",
                        help="folder of the reproduced runs (e.g. tempbench-out/runs/)")
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, metavar="NAME",
                        help=f"configuration the others' effects are measured against (default {DEFAULT_BASELINE})")
    parser.add_argument("--measures", type=_measure_list, default=list(DEFAULT_MEASURES), metavar="M,M",
                        help=f"per-question measures (default {','.join(DEFAULT_MEASURES)}; any of "
                             f"{', '.join(per_question_names())})")
    parser.add_argument("--split", choices=SPLIT_CHOICES,
                        help="compare on every question of this split, a question absent from a run being an empty "
                             "retrieval (default: every question present in any of the runs)")
    parser.add_argument("--key", choices=KEY_CHOICES, default=DEFAULT_KEY,
                        help="key space for matching evidence to gold and for the document ids (SPEC §3.1; default "
                             "auto; --key label for a baseline that carries labels only)")
    parser.add_argument("--rbo-p", type=float, default=_DEFAULTS.rbo_p, metavar="P",
                        help=f"RBO persistence (default {_DEFAULTS.rbo_p:g})")
    parser.add_argument("--rbo-depth", type=int, default=_DEFAULTS.rbo_depth, metavar="D",
                        help=f"RBO depth (default {_DEFAULTS.rbo_depth})")
    parser.add_argument("--ktu-cut", choices=KTU_CUTS, default=_DEFAULTS.ktu_cut,
                        help="KTU: cut both lists to the shorter (default, SPEC §8), or compare only questions whose "
                             "lists have equal lengths")
    parser.add_argument("--rbo-both-empty", choices=RBO_BOTH_EMPTY, default=_DEFAULTS.rbo_both_empty,
                        help="RBO of a question where both lists are empty: left out (default, SPEC §8) or 1")
    parser.add_argument("--trp-empty", choices=TRP_EMPTY, default=_DEFAULTS.trp_empty,
                        help="TRP of an empty retrieval: 0 (default, SPEC §8) or left out of TRP's figures")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="processes that read and score the runs (default: the machine's cores)")
    parser.add_argument("--json", metavar="OUT", help="also write the figures as one JSON object")
    add_force_argument(parser)
    add_data_arguments(parser, kg=False)


def pair_folders(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """The runs of both folders that pair up; the unpaired ones and non-run files are listed on stderr."""
    original = list_runs(args.original, "ORIGINAL")
    reproduced = list_runs(args.reproduced, "REPRODUCED")
    for folder in (original, reproduced):
        for path, why in folder.skipped:
            info(f"skipped {path}: {why}")
    common = [n for n in original.runs if n in reproduced.runs]
    if not common:
        raise RunMismatchError(
            f"{args.original} and {args.reproduced} have no configuration in common (ORIGINAL: "
            f"{', '.join(original.runs) or 'no run'}; REPRODUCED: {', '.join(reproduced.runs) or 'no run'}); expected "
            "files <config>.jsonl with the same names on both sides, e.g. oracle.jsonl")
    for name in original.runs:
        if name not in reproduced.runs:
            info(f"skipped configuration {name!r}: only in ORIGINAL ({original.runs[name]})")
    for name in reproduced.runs:
        if name not in original.runs:
            info(f"skipped configuration {name!r}: only in REPRODUCED ({reproduced.runs[name]})")
    for folder, role in ((original, "ORIGINAL"), (reproduced, "REPRODUCED")):
        if args.baseline not in folder.runs:
            raise RunMismatchError(
                f"the baseline configuration {args.baseline!r} has no run in {role} ({folder.path}): expected "
                f"{args.baseline}.jsonl there, or --baseline NAME of a configuration both folders hold "
                f"({', '.join(common)})")
    for name in common:
        for folder in (original, reproduced):
            path = Path(folder.runs[name])
            if path.is_file() and path.stat().st_size == 0:
                info(f"warning: {path} is empty: every question counts as an empty retrieval of {name!r}")
    return ({n: original.runs[n] for n in common}, {n: reproduced.runs[n] for n in common})


def run(args: argparse.Namespace) -> int:
    measures = parse_measures(args.measures)
    options = ReproOptions(ktu_cut=args.ktu_cut, rbo_p=args.rbo_p, rbo_depth=args.rbo_depth,
                           rbo_both_empty=args.rbo_both_empty, trp_empty=args.trp_empty)
    workers = cpu_count() if args.workers is None else args.workers
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1 (got {workers})")
    original, reproduced = pair_folders(args)
    paths = [*original.values(), *reproduced.values()]
    if args.json:
        inputs = [*paths, *data_from_args(args).input_files()]
        check_output_file(args.json, inputs, "--json")
        check_output_file(provenance_path(args.json), inputs, "--json's .meta.json")
    check_runs(args, *map(str, paths))
    for side in (original, reproduced):
        for name, path in side.items():  # oracle.jsonl is a run of oracle, whatever its decision options
            for problem in check_run_role(path, name, force=args.force):
                info(f"warning (--force): {problem}")
    questions, _, _ = load_inputs(args, read_flags=False)
    extras: dict[str, Any] = {}
    result = reproducibility(original, reproduced, questions, measures,
                             Scope(baseline=args.baseline, split=args.split, key=args.key), options, workers, extras)
    print_figures(result, extras, options)
    if args.json:
        # the object keeps exactly the keys of SPEC §8; where its data came from goes beside it, as a run's .meta.json
        write_json(provenance_path(args.json), {"provenance": repro_provenance(args).to_json()})
        write_json(args.json, result)
        info(f"wrote {args.json} and {provenance_path(args.json)}")
    return 0


def provenance_path(json_path: str | Path) -> Path:
    """``repro.json`` -> ``repro.meta.json``: the data's origin and the command line of that JSON."""
    path = Path(json_path)
    stem = path.name[: -len(".json")] if path.name.endswith(".json") else path.name
    return path.with_name(stem + ".meta.json")


def repro_provenance(args: argparse.Namespace) -> Any:
    """The data's origin and the command line of this comparison (every option that changes the JSON)."""
    return command_provenance(data_from_args(args), [
        "repro", absolute_or_none(args.original), absolute_or_none(args.reproduced)], [
        ("--baseline", args.baseline), ("--measures", ",".join(args.measures)), ("--split", args.split),
        ("--key", args.key), ("--rbo-p", args.rbo_p), ("--rbo-depth", args.rbo_depth), ("--ktu-cut", args.ktu_cut),
        ("--rbo-both-empty", args.rbo_both_empty), ("--trp-empty", args.trp_empty),
        ("--json", absolute_or_none(args.json)), ("--force", args.force)], kg=False)


def print_figures(result: dict[str, Any], extras: dict[str, Any], options: ReproOptions) -> None:
    """The three tables of SPEC §8, each followed by the reading of its figures."""
    n = result["questions"]
    ceiling = extras.get("rbo_ceiling", {})
    ktu_n = extras.get("ktu_questions", {})
    rows = [[name, ktu_n.get(name), fmt(c["ktu"]), fmt(c["rbo"]), fmt(ceiling.get(name))]
            for name, c in result["configs"].items()]
    print_table(f"document order: original vs reproduced ({n:,} questions)",
                ["config", "questions (KTU)", "KTU", "RBO", "RBO if identical"], rows)
    for key in ("ktu", "rbo"):
        print(f"  {READINGS[key]}")
    print(f"  RBO if identical: the RBO of a perfect reproduction with these list lengths (p = {options.rbo_p:g}, "
         f"depth {options.rbo_depth:,}; below 1 when the lists are shorter than the depth)")
    print_table(f"effectiveness: original vs reproduced, per question ({n:,} questions)", EFFECTIVENESS_COLUMNS,
                effectiveness_rows(result))
    for key in ("rmse", "nrmse", "p_value", "tie"):
        print(f"  {READINGS[key]}")
    if result["effects"]:
        print_table(f"overall effects: each ablation against {result['baseline']}", EFFECT_COLUMNS, effect_rows(result))
        for key in ("er", "delta_ri"):
            print(f"  {READINGS[key]}")
    else:
        info(f"overall effects: no configuration besides the baseline {result['baseline']!r} is paired")
