"""``tempbench sample``: generate the TempBench-like stand-in data (SPEC §5).

Writes the release layout (SPEC §1.5) to ``--out`` or, by default, to the
per-user sample directory that every other command uses when given no data,
then prints the counts by split x complexity x operator and the functional
shares of the stale and distractor negatives.

``--scale`` picks a preset (``tiny``, ``small``, ``full``, ``wikidata``);
``--rows N`` sizes the KG by its row count instead, so a graph of TGB
``tkgl-wikidata``'s size (about 10M rows) can be made for the speed targets of
the larger graphs (:func:`tempbench.sample.scales.scale_for_rows`).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tempbench.commands._numbers import SEED_RANGE, check_numbers
from tempbench.sample import MAX_ROWS, MIN_ROWS, SCALE_NAMES, generate_sample, resolve_scale
from tempbench_core.console import info, print_table
from tempbench_core.layout import DEFAULT_SCALE, DEFAULT_SEED, default_sample_dir
from tempbench_core.outputs import claim_output_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: ``--scale`` or ``--rows``, ``--seed``, ``--out``."""
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--scale", choices=SCALE_NAMES, default=DEFAULT_SCALE,
                      help="small (default: ~2.5k entities, 40k rows, 1,500 questions), full (the size of TGB "
                           "tkgl-smallpedia: 550,376 rows, 47,433 entities, 8,710 questions), tiny (tests) or "
                           "wikidata (the size of TGB tkgl-wikidata: 10,000,000 rows, 1,000,000 entities, 600 relations, "
                           "2,000 questions; about 30 s and 2 GB of memory on 2 cores)")
    size.add_argument("--rows", type=int, metavar="N",
                      help=f"instead of --scale: exactly N rows ({MIN_ROWS:,} to {MAX_ROWS:,}), with N/10 entities, "
                           "283*sqrt(N/550,376) relations (40 to 600) and N/100 questions (200 to 2,000); same TGB "
                           "format and invariants as the presets; memory grows about 0.2 GB per million rows; the scale "
                           "is named rowsN in MANIFEST.json and in the default output directory")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help=f"random seed, {SEED_RANGE[0]} to {SEED_RANGE[1]:,} (default %(default)s); same seed, same bytes")
    parser.add_argument("--out", metavar="DIR", help="output directory (default: the per-user sample directory): a new or empty "
                        "folder, or a sample generated before (regenerated in place, keeping files you added)")


def run(args: argparse.Namespace) -> int:
    """Generate the sample and print its summary tables."""
    check_numbers(args, "seed")
    scale = resolve_scale(args.scale, args.rows)
    out = Path(args.out) if args.out else default_sample_dir(scale.name, args.seed)
    if not args.out:
        out.parent.mkdir(parents=True, exist_ok=True)  # the per-user cache folder is ours to create
    _check_out(out)
    start = time.perf_counter()
    generate_sample(out, scale=args.scale, seed=args.seed, rows=args.rows)
    elapsed = time.perf_counter() - start
    info(f"wrote {scale.name} sample (seed {args.seed}) to {out} in {elapsed:.2f} s")
    records = [json.loads(line) for line in (out / "benchmark" / "benchmark_labelled.jsonl").open(encoding="utf-8")]
    flags = [json.loads(line) for line in (out / "benchmark" / "functional_negatives.jsonl").open(encoding="utf-8")]
    manifest = json.loads((out / "MANIFEST.json").read_text(encoding="utf-8"))
    print_summary(manifest, records, flags)
    return 0


def _check_out(out: Path) -> None:
    """Refuse an ``--out`` that is not ours: an existing file, or a non-empty folder that is not a
    generated sample (no ``MANIFEST.json``; e.g. a data root holding the real TGB file)."""
    claim_output_dir(out, "data-root", create=False)


def print_summary(manifest: dict, records: list[dict], flags: list[dict]) -> None:
    """Print KG counts, split x complexity x operator counts and functional shares."""
    c = manifest["counts"]
    print_table("Generated KG", ["statistic", "value"], [
        ("rows", c["rows"]), ("entities", c["entities"]), ("relations", c["relations"]),
        ("labels", c["labels"]), ("years", f"{c['year_min']}-{c['year_max']}"), ("questions", c["questions"]),
    ])
    print_table("Questions by split x complexity x operator", *summary_rows(records))
    flag_of = {f["id"]: f for f in flags}
    rows = []
    for split in ("train", "dev", "test", "all"):
        ids = [r["id"] for r in records if split == "all" or r["split"] == split]
        if not ids:
            continue
        n = len(ids)
        stale = sum(1 for i in ids if flag_of.get(i, {}).get("stale_functional"))
        dist = sum(1 for i in ids if flag_of.get(i, {}).get("dist_functional"))
        rows.append((split, n, stale, stale / n, dist, dist / n))
    print_table("Functional negatives", ["split", "questions", "stale functional", "share", "dist functional", "share"], rows)


def summary_rows(records: list[dict]) -> tuple[list[str], list[tuple]]:
    """Columns and rows of the split x operator (rows) x complexity (columns) count table, with totals."""
    ops = sorted({r["operator_type"] for r in records})
    splits = [s for s in ("train", "dev", "test") if any(r["split"] == s for r in records)]
    complexities = sorted({r["complexity"] for r in records})
    counts: dict[tuple[str, str, str], int] = {}
    for r in records:
        key = (r["split"], r["operator_type"], r["complexity"])
        counts[key] = counts.get(key, 0) + 1
    rows: list[tuple] = []
    for s in splits + ["all"]:
        for op in ops + ["all"]:
            vals = [sum(v for (ks, ko, kc), v in counts.items()
                        if (s == "all" or ks == s) and (op == "all" or ko == op) and kc == cx) for cx in complexities]
            rows.append((s, op, *vals, sum(vals)))
    return ["split", "operator", *complexities, "total"], rows
