"""The ``full`` scale matches the real file's size (SPEC §1.1, §1.3, §5)."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

from tempbench.sample import generate_sample


def test_full_scale_counts_and_invariants(tmp_path: Path) -> None:
    out = generate_sample(tmp_path / "full", "full", 42)
    with open(out / "tkgl-smallpedia_edgelist.csv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        next(reader)
        rows = list(reader)
    assert len(rows) == 550_376
    assert len({r[1] for r in rows} | {r[2] for r in rows}) == 47_433
    assert len({r[3] for r in rows}) == 283
    years = [int(r[0]) for r in rows]
    assert years[0] == 1900 and years[-1] == 2024 and years == sorted(years)
    degree = Counter([r[1] for r in rows] + [r[2] for r in rows])
    assert max(degree.values()) >= 5_000  # country hubs
    recs = [json.loads(x) for x in (out / "benchmark" / "benchmark_labelled.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(recs) == 8_710
    by_split = Counter(r["split"] for r in recs)
    assert by_split == {"train": 6_096, "dev": 871, "test": 1_743}
    interval = Counter(r["split"] for r in recs if r["operator_type"] == "interval")
    assert interval == {"train": 601, "dev": 100, "test": 163}
    flags = (out / "benchmark" / "functional_negatives.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(flags) == 8_710
    # every invariant of every question is checked on the small and tiny scales
    # (tests/test_sample_data.py); at this size the slow checker alone would
    # take longer than the whole area's test budget
