"""``tempbench labels``: harvest labels from the benchmark files into a TSV (SPEC §1.2).

Pairs ``benchmark_labelled.jsonl`` with ``benchmark.jsonl`` by question id and by
position in ``S_star``/``S_dist``/``S_stale``. With ``--merge`` the existing
labels file is combined in (it wins; harvested labels fill only its gaps).
"""

from __future__ import annotations

import argparse

from retriever import combine_labels, harvest_labels, load_labels
from tempbench.data import add_data_arguments, data_from_args
from tempbench_core.atomic import atomic_open
from tempbench_core.console import info, print_table
from tempbench_core.errors import ConfigError
from tempbench_core.outputs import check_output_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: data selection, ``--out``, ``--merge``."""
    add_data_arguments(parser, kg=True, benchmark=True, flags=False)
    parser.add_argument("--out", metavar="TSV", required=True, help="labels TSV to write (id<TAB>label, with header)")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="combine with the labels file (--labels or DIR/labels.tsv): the file wins, harvested labels fill gaps",
    )


def run(args: argparse.Namespace) -> int:
    """Harvest, optionally merge, write the TSV atomically and print a summary."""
    data = data_from_args(args)
    if args.out.lower().endswith((".json", ".gz")):
        # load_labels reads a .json name as JSON and a .gz name as gzip: TSV text there could not be read back
        raise ConfigError(f"--out {args.out}: this command writes plain TSV (id<TAB>label); expected a name that "
                          "does not end in .json or .gz, e.g. labels.tsv")
    check_output_file(args.out, data.input_files(), "--out")
    data.require("benchmark")
    harvested = harvest_labels(data.benchmark, data.benchmark_ids)
    file_labels = {}
    if args.merge:
        data.require("labels")
        file_labels = load_labels(data.labels)
    labels = combine_labels(file_labels, harvested)
    bad = [i for i, lab in labels.items() if any(c in i + lab for c in "\t\r\n")]
    if bad:
        raise ConfigError(f"{len(bad)} id/label pair(s) contain a tab or line break and cannot be written as TSV, e.g. {bad[0]!r}")
    with atomic_open(args.out) as handle:
        handle.write(labels.tsv())
    for id_, others in list(harvested.conflicts.items())[:5]:
        info(f"note: {id_} has several labels; kept {harvested[id_]!r}, ignored {others}")
    rows = [
        ("benchmark", str(data.benchmark)),
        ("id file", str(data.benchmark_ids) if data.benchmark_ids else None),
        ("harvested ids", len(harvested)),
        ("entities (Q…)", sum(1 for i in harvested if i.startswith("Q"))),
        ("relations (P…)", sum(1 for i in harvested if i.startswith("P"))),
        ("ids with conflicting labels", len(harvested.conflicts)),
        ("from labels file", len(file_labels) if args.merge else None),
        ("written", len(labels)),
        ("output", str(args.out)),
    ]
    print_table("harvested labels", ["statistic", "value"], rows)
    return 0
