"""``tempbench run``: run the reference retriever and write a run file (SPEC §2, §6.1)."""

from __future__ import annotations

import argparse
from contextlib import ExitStack

from retriever import RunOptions, load_config, looks_like_path, run_to_file
from tempbench.commands._numbers import WORKERS_RANGE, check_numbers
from tempbench.data import (
    CACHE_DIR_HELP,
    absolute_or_none,
    add_data_arguments,
    command_provenance,
    config_word,
    data_from_args,
)
from tempbench_core.console import info, print_table
from tempbench_core.errors import ConfigError
from tempbench_core.outputs import DEFAULT_OUT, check_output_file, claimed_output_dir
from tempbench_core.runfile import meta_path
from tempbench_core.schema import DEFAULT_SPLIT, SPLIT_CHOICES

#: The retriever's defaults, which the options say.
_DEFAULTS = RunOptions()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench run``."""
    parser.add_argument("--config", required=True, metavar="NAME|FILE",
                        help="shipped configuration (oracle, nonoracle, stale_blind, hop3_k25) or a TOML file")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set",
                        help="override one config key; VALUE is TOML (e.g. caps=[60,200], temporal_filter=false); repeatable")
    parser.add_argument("--split", default=DEFAULT_SPLIT, choices=SPLIT_CHOICES,
                        help=f"benchmark split to run (default: {DEFAULT_SPLIT})")
    parser.add_argument("--out", metavar="PATH.jsonl",
                        help="run file (default: tempbench-out/runs/<name>.jsonl, with the --set overrides appended to <name> "
                             "so an ablation never overwrites the shipped configuration's run); <name>.meta.json goes beside it")
    parser.add_argument("--workers", type=int, default=_DEFAULTS.workers, metavar="N",
                        help=f"worker processes, 1 to {WORKERS_RANGE[1]:,} (output is byte-identical for any N; "
                             f"default {_DEFAULTS.workers})")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the finished shards of an interrupted run with the same config and inputs")
    parser.add_argument("--cache-dir", metavar="DIR", help=CACHE_DIR_HELP)
    parser.add_argument("--shard-size", type=int, default=None, metavar="N",
                        help=f"questions per resumable shard (default {_DEFAULTS.shard_size}; the run file does not "
                             "depend on it)")
    add_data_arguments(parser)



def run(args: argparse.Namespace) -> int:
    """Run one configuration; print a summary table."""
    check_numbers(args, "workers", "shard_size")
    config = load_config(args.config, args.set)
    data = data_from_args(args)
    # with --set the name carries the overrides, so an ablation never replaces the shipped run
    inputs = [*data.input_files(), args.config if looks_like_path(args.config) else None]
    stack = ExitStack()
    if args.out:
        if args.out.lower().endswith(".gz"):
            # every reader opens a .gz name through gzip: plain text there could not be read back
            raise ConfigError(f"--out {args.out}: a run file is written as plain JSON Lines; expected a name such as "
                              "oracle.jsonl (compress it afterwards with gzip if you like: readers take .jsonl.gz)")
        out = check_output_file(args.out, inputs, "--out")
        check_output_file(meta_path(out), inputs, "--out's .meta.json")
    else:
        # made here, the folder is removed again if the run fails before writing anything into it
        out = stack.enter_context(claimed_output_dir(DEFAULT_OUT, "outputs", inputs, data_root=data.root))
        out = out / "runs" / f"{config.name}.jsonl"
    provenance = command_provenance(data, ["run"], [("--config", config_word(args.config)), ("--set", args.set),
                                                    ("--split", args.split), ("--out", absolute_or_none(out))])
    with stack:
        meta = run_to_file(config, data, split=args.split, out_path=out,
                           options=RunOptions(workers=args.workers, resume=args.resume, cache_dir=args.cache_dir,
                                              shard_size=args.shard_size, provenance=provenance.to_json()))
    counts, timings = meta["counts"], meta["timings"]
    print_table(
        f"tempbench run {config.name} ({args.split})",
        ["metric", "value"],
        [
            ["questions", counts["questions"]],
            ["coverage (evidence non-empty)", meta["coverage"]],
            ["anchor recall (vs gold first-hop subject)", meta["anchor_recall"]],
            ["no anchor", counts["no_anchor"]],
            ["ambiguous oracle labels", counts["ambiguous_oracle"]],
            ["mean pool rows (before dedup)", meta["mean_pool_rows"]],
            ["mean pool size (unique triples)", meta["mean_pool_size"]],
            ["resumed shards", f"{meta['resumed_shards']}/{meta['shards']}"],
            ["retrieval time (s)", timings["retrieve_s"]],
            ["questions/s", None if timings["questions_per_s"] is None else round(timings["questions_per_s"])],
            ["total time (s)", timings["total_s"]],
        ],
    )
    info(f"wrote {out} and {meta_path(out)}")
    return 0
