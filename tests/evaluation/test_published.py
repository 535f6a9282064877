"""Our numbers beside the published ones (issue 11 §1): reported tables and scored evidence."""

from __future__ import annotations

from eval.published import published_rows


def test_rows_put_ours_reported_and_their_evidence_side_by_side():
    scores = {"oracle": {"trp_ccr": {"TRP_macro": 0.2, "CCR": 0.6, "coverage": 1.0}}}
    diffs = {
        "oracle_run.jsonl": {"config": "oracle", "baseline_kind": "evidence", "metrics": [
            {"slice": "all", "metric": "TRP", "run": 0.2, "baseline": 0.21},
            {"slice": "complexity=2hop", "metric": "TRP", "run": 0.3, "baseline": 0.5},
        ]},
        "table.csv [oracle]": {"config": "oracle", "baseline_kind": "metrics", "metrics": [
            {"slice": "all", "metric": "TRP", "run": 0.2, "baseline": 0.203},
            {"slice": "all", "metric": "CCR", "run": 0.6, "baseline": 0.62},
        ]},
        "broken.json": {"error": "unreadable"},
    }
    columns, rows = published_rows(scores, diffs)
    assert columns == ["config", "metric", "ours", "reported", "of their evidence", "from"]
    assert rows == [
        ["oracle", "TRP", 0.2, 0.203, 0.21, "`table.csv [oracle]`, `oracle_run.jsonl`"],  # reported first
        ["oracle", "CCR", 0.6, 0.62, None, "`table.csv [oracle]`"],
    ]


def test_no_baselines_no_rows():
    assert published_rows({"oracle": {}}, {})[1] == []
