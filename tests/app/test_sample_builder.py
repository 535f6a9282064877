"""The benchmark builder on hand-written and random KGs (SPEC §1.3)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.sample_checks import check_root, read_jsonl, read_kg

from tempbench.sample.builder import EdgeColumns, build_benchmark

# A tiny world a reader can hold in mind:
#   Alice (Q1) plays for Rovers FC (Q2) in 2000-2002 and for Oldtown FC (Q4) in 1999;
#   Rovers FC is in Freedonia (Q3) in 2000-2001; Freedonia's head of government is
#   Bob (Q5) in 2000 and Carol (Q6) in 2001.
HAND_ROWS = [
    (1999, "Q1", "Q4", "P54"),
    (2000, "Q1", "Q2", "P54"),
    (2000, "Q2", "Q3", "P17"),
    (2000, "Q3", "Q5", "P6"),
    (2001, "Q1", "Q2", "P54"),
    (2001, "Q2", "Q3", "P17"),
    (2001, "Q3", "Q6", "P6"),
    (2002, "Q1", "Q2", "P54"),
]
HAND_LABELS = {"Q1": "Alice Moreau", "Q2": "Rovers FC", "Q3": "Freedonia", "Q4": "Oldtown FC", "Q5": "Bob Weber",
               "Q6": "Carol Singh", "P54": "member of sports team", "P17": "country", "P6": "head of government"}


def _columns(rows):
    ents: list[str] = []
    rels: list[str] = []
    for _, h, t, r in rows:
        for e in (h, t):
            if e not in ents:
                ents.append(e)
        if r not in rels:
            rels.append(r)
    head = np.array([ents.index(h) for _, h, _, _ in rows], dtype=np.int32)
    tail = np.array([ents.index(t) for _, _, t, _ in rows], dtype=np.int32)
    rel = np.array([rels.index(r) for _, _, _, r in rows], dtype=np.int32)
    year = np.array([y for y, _, _, _ in rows], dtype=np.int64)
    return EdgeColumns(head, tail, rel, year, ents, rels)


def _write_root(root: Path, rows, labels, bench) -> Path:
    (root / "benchmark").mkdir(parents=True)
    with open(root / "tkgl-smallpedia_edgelist.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["ts", "head", "tail", "relation_type"])
        w.writerows(sorted(rows, key=lambda r: r[0]))
    with open(root / "labels.tsv", "w", encoding="utf-8") as f:
        f.write("id\tlabel\n" + "".join(f"{k}\t{v}\n" for k, v in labels.items() if v))
    for name, recs in (("benchmark_labelled.jsonl", bench.labelled), ("benchmark.jsonl", bench.ids),
                       ("functional_negatives.jsonl", bench.flags)):
        with open(root / "benchmark" / name, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in recs)
    return root


def _gold(rec):
    return [(t["s"], t["r"], t["o"], int(t["t_start"])) for t in rec["S_star"]]


# Every chain a reader finds in the hand KG (subject -> object, same year, no repeated entity).
EXPECTED_CHAINS = {
    (("Alice Moreau", "member of sports team", "Oldtown FC", 1999),),
    (("Alice Moreau", "member of sports team", "Rovers FC", 2000),),
    (("Alice Moreau", "member of sports team", "Rovers FC", 2001),),
    (("Alice Moreau", "member of sports team", "Rovers FC", 2002),),
    (("Rovers FC", "country", "Freedonia", 2000),),
    (("Rovers FC", "country", "Freedonia", 2001),),
    (("Freedonia", "head of government", "Bob Weber", 2000),),
    (("Freedonia", "head of government", "Carol Singh", 2001),),
    (("Alice Moreau", "member of sports team", "Rovers FC", 2000), ("Rovers FC", "country", "Freedonia", 2000)),
    (("Alice Moreau", "member of sports team", "Rovers FC", 2001), ("Rovers FC", "country", "Freedonia", 2001)),
    (("Rovers FC", "country", "Freedonia", 2000), ("Freedonia", "head of government", "Bob Weber", 2000)),
    (("Rovers FC", "country", "Freedonia", 2001), ("Freedonia", "head of government", "Carol Singh", 2001)),
    (("Alice Moreau", "member of sports team", "Rovers FC", 2000), ("Rovers FC", "country", "Freedonia", 2000),
     ("Freedonia", "head of government", "Bob Weber", 2000)),
    (("Alice Moreau", "member of sports team", "Rovers FC", 2001), ("Rovers FC", "country", "Freedonia", 2001),
     ("Freedonia", "head of government", "Carol Singh", 2001)),
}


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    bench = build_benchmark(_columns(HAND_ROWS), HAND_LABELS, target_n=40, seed=3)
    root = _write_root(tmp_path_factory.mktemp("hand"), HAND_ROWS, HAND_LABELS, bench)
    return bench, root


def test_hand_kg_chains_are_the_ones_a_reader_finds(hand) -> None:
    bench, root = hand
    assert bench.labelled
    chains = {tuple(_gold(r)) for r in bench.labelled}
    assert chains <= EXPECTED_CHAINS
    assert any(len(c) == 3 for c in chains)
    check_root(root)


def test_hand_kg_question_text(hand) -> None:
    bench, _ = hand
    for rec in bench.labelled:
        gold = _gold(rec)
        y = gold[0][3]
        op = rec["operator_type"]
        assert rec["t_query"] == float(y)
        if gold == [("Alice Moreau", "member of sports team", "Rovers FC", 2000), ("Rovers FC", "country", "Freedonia", 2000),
                    ("Freedonia", "head of government", "Bob Weber", 2000)] and op == "point_in_time":
            assert rec["question"] in {
                "Who was the head of government of the country of the sports team of Alice Moreau in 2000?",
                "In 2000, who was the head of government of the country of the sports team of Alice Moreau?",
                # the anchor may be written in a shortened form
                "Who was the head of government of the country of the sports team of Moreau in 2000?",
                "In 2000, who was the head of government of the country of the sports team of Moreau?",
                "Who was the head of government of the country of the sports team of A. Moreau in 2000?",
                "In 2000, who was the head of government of the country of the sports team of A. Moreau?",
            }
            assert rec["answer"] == "Bob Weber"
        if op == "interval":
            assert rec["answer"] == str(y)
            assert rec["question"].startswith(f"In which year was {gold[-1][2]} ")
        if op == "first":
            # Alice's first team is Oldtown FC in 1999; Freedonia's first head is Bob in 2000
            assert gold[0] in {("Alice Moreau", "member of sports team", "Oldtown FC", 1999),
                               ("Rovers FC", "country", "Freedonia", 2000),
                               ("Freedonia", "head of government", "Bob Weber", 2000)}
        if op == "last":
            assert gold[0] in {("Alice Moreau", "member of sports team", "Rovers FC", 2002),
                               ("Rovers FC", "country", "Freedonia", 2001),
                               ("Freedonia", "head of government", "Carol Singh", 2001)}


def test_hand_kg_negatives(hand) -> None:
    bench, _ = hand
    by_id = {f["id"]: f for f in bench.flags}
    for rec in bench.labelled:
        gold = _gold(rec)
        stale = [(t["s"], t["r"], t["o"], int(t["t_start"])) for t in rec["S_stale"]]
        dist = [(t["s"], t["r"], t["o"], int(t["t_start"])) for t in rec["S_dist"]]
        # only Alice-Rovers FC (2000-2002) and Rovers FC-Freedonia (2000-2001) recur in other years
        repeated = {("Alice Moreau", "member of sports team", "Rovers FC"), ("Rovers FC", "country", "Freedonia")}
        stale_possible = any(g[:3] in repeated for g in gold)
        assert by_id[rec["id"]]["stale_functional"] == stale_possible
        (k,) = [i for i in range(len(gold)) if gold[i] != stale[i]]
        assert stale[k][:3] == gold[k][:3] and stale[k][3] != gold[k][3]
        if stale_possible:
            assert gold[k][:3] in repeated
            assert stale[k][3] in ({2000, 2001, 2002} if gold[k][0] == "Alice Moreau" else {2000, 2001})
        else:
            # not a KG row: the fact one year earlier (later at the KG's first year, 1999)
            assert stale[k][3] == (gold[k][3] - 1 if gold[k][3] > 1999 else gold[k][3] + 1)
        # distractors exist only for Alice's team and Freedonia's head
        dist_possible = any(g[1] in ("member of sports team", "head of government") for g in gold)
        assert by_id[rec["id"]]["dist_functional"] == dist_possible
        (k,) = [i for i in range(len(gold)) if gold[i] != dist[i]]
        if dist_possible:
            assert (dist[k][0], dist[k][1], dist[k][2], dist[k][3]) in {
                ("Alice Moreau", "member of sports team", "Oldtown FC", 1999),
                ("Alice Moreau", "member of sports team", "Rovers FC", 2000),
                ("Alice Moreau", "member of sports team", "Rovers FC", 2001),
                ("Alice Moreau", "member of sports team", "Rovers FC", 2002),
                ("Freedonia", "head of government", "Bob Weber", 2000),
                ("Freedonia", "head of government", "Carol Singh", 2001),
            }


def test_same_inputs_same_benchmark() -> None:
    cols = _columns(HAND_ROWS)
    a = build_benchmark(cols, HAND_LABELS, target_n=25, seed=9)
    b = build_benchmark(cols, HAND_LABELS, target_n=25, seed=9)
    assert a.labelled == b.labelled and a.ids == b.ids and a.flags == b.flags


def test_empty_kg_gives_no_questions() -> None:
    empty = np.zeros(0, dtype=np.int32)
    bench = build_benchmark(EdgeColumns(empty, empty, empty, empty.astype(np.int64), [], []), {}, target_n=5)
    assert bench.labelled == [] and bench.ids == [] and bench.flags == []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(st.integers(2000, 2004), st.integers(1, 8), st.integers(1, 8), st.integers(1, 3)),
        min_size=1, max_size=60,
    ),
    unlabeled=st.sets(st.integers(1, 8)),
    seed=st.integers(0, 2**16),
    n=st.integers(1, 30),
)
def test_random_kgs_keep_every_invariant(tmp_path_factory, rows, unlabeled, seed, n) -> None:
    kg_rows = [(y, f"Q{h}", f"Q{t}", f"P{r}") for y, h, t, r in rows]
    labels = {f"Q{i}": ("" if i in unlabeled else f"Entity {'é' if i % 2 else ''}{i}") for i in range(1, 9)}
    labels.update({f"P{i}": f"relation {i}" for i in range(1, 4)})
    bench = build_benchmark(_columns(kg_rows), labels, target_n=n, seed=seed)
    assert len(bench.labelled) <= n
    if any(h != t for _, h, t, _ in kg_rows):
        assert bench.labelled
    root = _write_root(tmp_path_factory.mktemp("rand"), kg_rows, labels, bench)
    check_root(root)


@settings(max_examples=30, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(2000, 2003), st.integers(0, 6), st.integers(0, 6), st.integers(0, 2)),
                     min_size=1, max_size=40))
def test_kg_view_neighbourhoods_match_a_slow_loop(rows) -> None:
    from tempbench.sample.kgview import KGView as _KGView

    head = np.array([h for _, h, _, _ in rows], dtype=np.int64)
    tail = np.array([t for _, _, t, _ in rows], dtype=np.int64)
    rel = np.array([r for _, _, _, r in rows], dtype=np.int64)
    year = np.array([y for y, _, _, _ in rows], dtype=np.int64)
    kg = _KGView(head, tail, rel, year)

    def incident(e, y=None):
        # a self-loop is incident twice, as both of its ends are e
        return [(j, other) for j, (yy, h, t, _) in enumerate(rows) if y is None or yy == y
                for end, other in ((h, t), (t, h)) if end == e]

    def degree(e, y=None):
        return len(incident(e, y))

    for i, (y, h, _, _) in enumerate(rows):
        assert kg.head_degree[i] == degree(h)
        assert kg.head_year_pool[i] == degree(h, y) + sum(degree(o, y) for _, o in incident(h, y))
        assert kg.head_footprint[i] == degree(h) + sum(degree(o) for _, o in incident(h))


def test_interval_chains_are_facts_that_began_that_year(small_sample: Path) -> None:
    # "in which year did ... begin": every gold hop is its fact's first KG year
    first_year: dict[tuple[str, str, str], int] = {}
    for key_s, key_r, key_o, y in read_kg(small_sample):
        key = (key_s, key_r, key_o)
        first_year[key] = min(y, first_year.get(key, y))
    recs = [r for r in read_jsonl(small_sample / "benchmark" / "benchmark.jsonl") if r["operator_type"] == "interval"]
    assert recs
    for rec in recs:
        for hop in rec["S_star"]:
            assert first_year[(hop["s_id"], hop["r_id"], hop["o_id"])] == rec["t_query"]
