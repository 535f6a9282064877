"""Slow, independent checks of a generated data root (SPEC §1.3, §1.5, §5).

Plain loops over the files as written (``csv`` and ``json`` modules only), so
they share no code with the generator or the builder they check.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

SPLITS = {"train", "dev", "test"}
COMPLEXITIES = {"1hop", "2hop", "3+hop"}
LABEL_TRIPLE_KEYS = {"s", "r", "o", "t_start", "t_end"}
ID_TRIPLE_KEYS = {"s_id", "r_id", "o_id", "t_start", "t_end"}
RECORD_KEYS = ["id", "split", "question", "answer", "t_query", "complexity", "operator_type", "S_star", "S_dist", "S_stale"]


def read_kg(root: Path) -> list[tuple[str, str, str, int]]:
    """Rows ``(head, relation, tail, ts)`` of the edge list, in file order."""
    with open(root / "tkgl-smallpedia_edgelist.csv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        assert next(reader) == ["ts", "head", "tail", "relation_type"]
        return [(h, r, t, int(ts)) for ts, h, t, r in reader]


def read_labels(root: Path) -> dict[str, str]:
    with open(root / "labels.tsv", encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert lines[0] == "id\tlabel" and lines[-1] == ""
    out = {}
    for line in lines[1:-1]:
        i, lab = line.split("\t")
        assert i not in out
        out[i] = lab
    return out


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def check_record_schema(rec: dict, id_space: bool) -> None:
    """One record has exactly the SPEC §1.3 fields with the right types."""
    assert list(rec) == RECORD_KEYS
    assert isinstance(rec["id"], str) and rec["id"]
    assert rec["split"] in SPLITS
    assert isinstance(rec["question"], str) and rec["question"]
    assert isinstance(rec["answer"], str) and rec["answer"]
    assert isinstance(rec["t_query"], float) and rec["t_query"] == int(rec["t_query"])
    assert rec["complexity"] in COMPLEXITIES
    assert isinstance(rec["operator_type"], str)
    keys = ID_TRIPLE_KEYS if id_space else LABEL_TRIPLE_KEYS
    for name in ("S_star", "S_dist", "S_stale"):
        assert isinstance(rec[name], list) and rec[name]
        for tr in rec[name]:
            assert set(tr) == keys
            assert isinstance(tr["t_start"], float) and isinstance(tr["t_end"], float)
            for k in keys - {"t_start", "t_end"}:
                assert isinstance(tr[k], str) and tr[k]
    n = len(rec["S_star"])
    assert len(rec["S_dist"]) == n and len(rec["S_stale"]) == n
    assert rec["complexity"] == ("1hop", "2hop", "3+hop")[min(n, 3) - 1]


def check_root(root: Path) -> dict:
    """Every SPEC §1.3 / issue-3 invariant on every question; returns counts."""
    rows = read_kg(root)
    labels = read_labels(root)
    labelled = read_jsonl(root / "benchmark" / "benchmark_labelled.jsonl")
    ids = read_jsonl(root / "benchmark" / "benchmark.jsonl")
    flags = read_jsonl(root / "benchmark" / "functional_negatives.jsonl")
    years = [r[3] for r in rows]
    assert years == sorted(years)
    for h, r, t, _ in rows:
        assert re.fullmatch(r"Q[1-9][0-9]*", h) and re.fullmatch(r"Q[1-9][0-9]*", t) and re.fullmatch(r"P[1-9][0-9]*", r)
    row_set = set(rows)
    years_of_fact: dict[tuple[str, str, str], set[int]] = {}
    objects_of: dict[tuple[str, str], set[str]] = {}
    first_year: dict[tuple[str, str], int] = {}
    last_year: dict[tuple[str, str], int] = {}
    for h, r, t, y in rows:
        years_of_fact.setdefault((h, r, t), set()).add(y)
        objects_of.setdefault((h, r), set()).add(t)
        first_year[(h, r)] = min(first_year.get((h, r), y), y)
        last_year[(h, r)] = max(last_year.get((h, r), y), y)

    def render(i: str) -> str:
        return labels.get(i) or i

    assert len(labelled) == len(ids) == len(flags)
    stats = {"stale_functional": 0, "dist_functional": 0, "questions": len(labelled)}
    for lab, rec, flag in zip(labelled, ids, flags, strict=True):
        check_record_schema(lab, id_space=False)
        check_record_schema(rec, id_space=True)
        assert flag == {"id": rec["id"], "stale_functional": flag["stale_functional"], "dist_functional": flag["dist_functional"]}
        assert isinstance(flag["stale_functional"], bool) and isinstance(flag["dist_functional"], bool)
        for k in ("id", "split", "question", "answer", "t_query", "complexity", "operator_type"):
            assert lab[k] == rec[k]
        # the label file is the id file rendered (raw id fallback)
        for name in ("S_star", "S_dist", "S_stale"):
            for a, b in zip(lab[name], rec[name], strict=True):
                assert a == {"s": render(b["s_id"]), "r": render(b["r_id"]), "o": render(b["o_id"]),
                             "t_start": b["t_start"], "t_end": b["t_end"]}
        tq = rec["t_query"]
        star = [(t["s_id"], t["r_id"], t["o_id"], t["t_start"], t["t_end"]) for t in rec["S_star"]]
        # gold: KG rows valid at t_query, connected, no repeated entity
        for s, r, o, ts, te in star:
            assert ts == te == tq
            assert (s, r, o, int(ts)) in row_set
        for a, b in zip(star[:-1], star[1:], strict=True):
            assert a[2] == b[0]
        ents = [star[0][0]] + [t[2] for t in star]
        assert len(set(ents)) == len(ents)
        # stale: exactly one triple differs; same (s, r, o); invalid at t_query
        stale = [(t["s_id"], t["r_id"], t["o_id"], t["t_start"], t["t_end"]) for t in rec["S_stale"]]
        diff = [k for k in range(len(star)) if stale[k] != star[k]]
        assert len(diff) == 1
        k = diff[0]
        assert stale[k][:3] == star[k][:3]
        assert stale[k][3] == stale[k][4] != tq
        other_years = years_of_fact[star[k][:3]] - {int(tq)}
        assert flag["stale_functional"] == ((stale[k][0], stale[k][1], stale[k][2], int(stale[k][3])) in row_set)
        if not flag["stale_functional"]:
            # no hop had the same fact in another year
            assert all(years_of_fact[t[:3]] == {int(tq)} for t in star)
        else:
            assert int(stale[k][3]) in other_years
        # distractor: exactly one triple differs; same (s, r); another object
        dist = [(t["s_id"], t["r_id"], t["o_id"], t["t_start"], t["t_end"]) for t in rec["S_dist"]]
        diff = [k for k in range(len(star)) if dist[k] != star[k]]
        assert len(diff) == 1
        k = diff[0]
        assert dist[k][:2] == star[k][:2] and dist[k][2] != star[k][2]
        assert dist[k][3] == dist[k][4]
        in_kg = (dist[k][0], dist[k][1], dist[k][2], int(dist[k][3])) in row_set
        assert flag["dist_functional"] == in_kg
        if not flag["dist_functional"]:
            assert all(objects_of[t[:2]] == {t[2]} for t in star)
        stats["stale_functional"] += flag["stale_functional"]
        stats["dist_functional"] += flag["dist_functional"]
        # operators
        op, y, text = rec["operator_type"], int(tq), rec["question"]
        last_obj = render(star[-1][2])
        if op == "interval":
            assert rec["answer"] == str(y) and float(rec["answer"]) == tq
        else:
            assert rec["answer"] == last_obj
        if op == "point_in_time":
            assert str(y) in text
        elif op == "before":
            assert f"before {y + 1}" in text
        elif op == "after":
            assert f"after {y - 1}" in text
        elif op == "first":
            assert first_year[star[0][:2]] == y and "first" in text
        elif op == "last":
            assert last_year[star[0][:2]] == y and "last" in text
        else:
            assert op == "interval", op
    assert len({r["id"] for r in ids}) == len(ids)
    return stats
