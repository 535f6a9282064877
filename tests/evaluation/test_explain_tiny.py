"""Loss attribution (SPEC §7) on a hand-made tiny KG, every stage derived by hand.

Rows (edge id: s r o year), query year 2000 throughout; ids A..N, P1..P6:

    0: A knows B 2000     (Ada Lovelace knows Babbage)
    1: A owns  W 2000     (a second 2000 row of A)
    2: B built D 2000
    3: D near  E 2000     (two steps from A: outside every 2-hop pool)
    4: A knows C 1999     (A knows C exists, but not in 2000)
    5: A met   F 1998     (links A to F only when the filter is off)
    6: F owns  G 2000
    7: A likes K 2000     (A's third 2000 row: the hop-1 cap of 2 cuts it)
    8: M knows N 2000     (another component)

The four shipped configurations are used with caps (2, 3, 4) so that the caps
bite on this KG. Their pools from A at 2000, derived by hand:

    filter on,  capped (2, 3):    hop 1 -> [0, 1], hop 2 -> [2]        (hop 3: [3])
    filter on,  uncapped:         reach {A, B, W, K}      (3 hops: + D)
    filter off, capped (2, 3):    hop 1 -> [0, 1] of 0,1,4,5,7; hop 2 -> [2]
    filter off, uncapped:         reach {A, B, W, C, F, K} (3 hops: + D, G)

A valid row is in an uncapped pool when one of its endpoints is in the reach.
Run records are written by hand (the attribution reads only their anchor,
evidence and cut-off ties); each record's anchor is the one the
configuration's anchor rule gives, which the tests check.
"""

from __future__ import annotations

import pytest
from reference.explain import SlowExplainer
from reference.tiny import make_index

from eval.attribution import attribute_run
from eval.evidence import resolve_question
from eval.explain import STAGES, Explainer, gold_hops
from eval.keyspace import gold_triples
from eval.question_detail import question_detail
from retriever import Retriever, load_config

ROWS = [
    ("A", "P1", "B", 2000), ("A", "P2", "W", 2000), ("B", "P3", "D", 2000), ("D", "P4", "E", 2000),
    ("A", "P1", "C", 1999), ("A", "P5", "F", 1998), ("F", "P2", "G", 2000), ("A", "P6", "K", 2000),
    ("M", "P1", "N", 2000),
]
LABELS = {
    "A": "Ada Lovelace", "B": "Babbage", "C": "Charles", "D": "Difference Engine", "E": "Science Museum",
    "F": "Faraday", "G": "Glasgow", "K": "Kew Gardens", "W": "Workshop", "M": "Mia", "N": "Noor",
    "P1": "knows", "P2": "owns", "P3": "built", "P4": "near", "P5": "met", "P6": "likes",
}
CONFIGS = ("oracle", "nonoracle", "stale_blind", "hop3_k25")


def config(name):
    return load_config(name).replace(caps=[2, 3, 4])


def triple(s, r, o, t=2000, ids=True):
    out = {"s": LABELS[s], "r": LABELS[r], "o": LABELS[o], "t_start": t, "t_end": t}
    if ids:
        out.update(s_id=s, r_id=r, o_id=o)
    return out


def question(qid, text, chain, ids=True):
    star = [triple(*c, ids=ids) for c in chain]
    return {"id": qid, "split": "test", "question": text, "answer": "x", "t_query": 2000.0,
            "complexity": f"{len(chain)}hop", "operator_type": "point_in_time",
            "S_star": star, "S_stale": star, "S_dist": star}


def item(row, score=1.0):
    s, r, o, t = ROWS[row]
    return {"s": LABELS[s], "r": LABELS[r], "o": LABELS[o], "s_id": s, "r_id": r, "o_id": o,
            "t_start": float(t), "t_end": float(t), "score": score, "line": f"{LABELS[s]} | {LABELS[r]} | {LABELS[o]} | {t}"}


def record(qid, anchor, evidence, ties=(), source="oracle"):
    anchor_rec = {"id": None, "label": None, "source": "none"} if anchor is None else \
        {"id": anchor, "label": LABELS[anchor], "source": source}
    return {"id": qid, "split": "test", "anchor": anchor_rec, "evidence": [item(r) for r in evidence],
            "cutoff_ties": [item(r) for r in ties]}


QUESTIONS = {
    "q1": ("Who did Ada Lovelace know?", [("A", "P1", "B"), ("B", "P3", "D"), ("D", "P4", "E")]),
    "q2": ("Did she know him?", [("A", "P1", "C")]),
    "q3": ("What did Ada Lovelace like?", [("A", "P6", "K")]),
    "q4": ("Whom did Ada Lovelace meet?", [("A", "P5", "F"), ("F", "P2", "G")]),
    "q5": ("Whom does Mia know, asked Ada Lovelace?", [("M", "P1", "N")]),
    "q6": ("What did Babbage build?", [("A", "P1", "B")]),
    "q7": ("What did Ada Lovelace's friend build, and whom does Mia know?",
           [("A", "P1", "B"), ("B", "P3", "D"), ("M", "P1", "N")]),
}

# (config, question) -> (anchor, evidence rows, cut-off tie rows, stages derived by hand)
CASES = {
    # q1: hop 3 (D near E) is two steps from A: no 2-hop pool holds it, even uncapped and unfiltered, but the
    # 3-hop one does (D is reached in 2 steps): the BFS depth lost it
    ("oracle", "q1"): ("A", [0, 1], [2], ["retrieved", "tie_cut", "too_deep"]),
    ("nonoracle", "q1"): ("A", [0], [], ["retrieved", "outranked", "too_deep"]),
    ("stale_blind", "q1"): ("A", [0, 1, 2], [], ["retrieved", "retrieved", "too_deep"]),
    ("hop3_k25", "q1"): ("A", [3, 0], [], ["retrieved", "outranked", "retrieved"]),
    # q2: A knows C exists only in 1999; the stale-blind run returns that row; the linker finds no label
    ("oracle", "q2"): ("A", [0, 1], [], ["not_in_kg"]),
    ("nonoracle", "q2"): (None, [], [], ["no_anchor"]),
    ("stale_blind", "q2"): ("A", [4, 0], [], ["wrong_time"]),
    ("hop3_k25", "q2"): ("A", [0], [], ["not_in_kg"]),
    # q3: row 7 is A's third 2000 row; the hop-1 cap of 2 keeps rows 0 and 1
    ("oracle", "q3"): ("A", [0, 1], [], ["capped"]),
    ("nonoracle", "q3"): ("A", [0, 1], [], ["capped"]),
    ("stale_blind", "q3"): ("A", [0, 1], [], ["capped"]),
    ("hop3_k25", "q3"): ("A", [0, 1, 2, 3], [], ["capped"]),
    # q4: A met F only in 1998; F owns G (2000) is reached through that 1998 row only
    ("oracle", "q4"): ("A", [0, 1], [], ["not_in_kg", "filtered"]),
    ("nonoracle", "q4"): ("A", [0, 1], [], ["not_in_kg", "filtered"]),
    ("stale_blind", "q4"): ("A", [0, 1], [], ["not_in_kg", "capped"]),
    ("hop3_k25", "q4"): ("A", [0, 1, 2, 3], [], ["not_in_kg", "filtered"]),
    # q5: the linker takes the longest label, "Ada Lovelace", not the gold subject Mia
    ("oracle", "q5"): ("M", [8], [], ["retrieved"]),
    ("nonoracle", "q5"): ("A", [0, 1], [], ["wrong_anchor"]),
    ("stale_blind", "q5"): ("M", [8], [], ["retrieved"]),
    ("hop3_k25", "q5"): ("M", [8], [], ["retrieved"]),
    # q6: the linker anchors on Babbage; the hop A knows B still touches B, so it is in B's pool
    ("oracle", "q6"): ("A", [0], [], ["retrieved"]),
    ("nonoracle", "q6"): ("B", [2], [], ["outranked"]),
    ("stale_blind", "q6"): ("A", [0], [], ["retrieved"]),
    ("hop3_k25", "q6"): ("A", [0], [], ["retrieved"]),
    # q7: the third hop (Mia knows Noor) is in another component: not even 3 hops from A reach it
    ("oracle", "q7"): ("A", [0, 2], [], ["retrieved", "retrieved", "unreachable"]),
    ("nonoracle", "q7"): ("A", [0, 2], [], ["retrieved", "retrieved", "unreachable"]),
    ("stale_blind", "q7"): ("A", [0, 2], [], ["retrieved", "retrieved", "unreachable"]),
    ("hop3_k25", "q7"): ("A", [0, 2], [], ["retrieved", "retrieved", "unreachable"]),
}


@pytest.fixture(scope="module")
def index():
    return make_index(ROWS, LABELS)


def case(name, qid, ids=True):
    text, chain = QUESTIONS[qid]
    anchor, evidence, ties, stages = CASES[(name, qid)]
    q = question(qid, text, chain, ids=ids)
    source = "linker" if name == "nonoracle" else "oracle"
    return q, record(qid, anchor, evidence, ties, source), stages


def test_every_stage_has_a_hand_derived_case():
    seen = {s for *_, stages in CASES.values() for s in stages}
    assert seen == set(STAGES)
    assert {name for name, _ in CASES} == set(CONFIGS) and len(CASES) == len(CONFIGS) * len(QUESTIONS)


@pytest.mark.parametrize("name,qid", sorted(CASES))
def test_record_anchor_is_the_configurations_anchor(index, name, qid):
    q, rec, _ = case(name, qid)
    anchor = Retriever(index, config(name)).anchor(q)
    assert anchor.id == rec["anchor"]["id"]


@pytest.mark.parametrize("ids", [True, False], ids=["id-keyed", "label-keyed"])
@pytest.mark.parametrize("name,qid", sorted(CASES))
def test_stages_by_hand(index, name, qid, ids):
    q, rec, expected = case(name, qid, ids=ids)
    explanation = Explainer(index, config(name)).explain(q, rec)
    assert explanation.stages == expected
    assert all(h.space == ("id" if ids else "label") for h in explanation.hops)


@pytest.mark.parametrize("name,qid", sorted(CASES))
def test_slow_reference_agrees_with_the_hand(index, name, qid):
    q, rec, expected = case(name, qid)
    slow = SlowExplainer(index.kg, index.entity_labels, index.relation_labels)
    assert slow.stages(q, rec, config(name)) == expected


@pytest.mark.parametrize("name,qid", sorted(CASES))
def test_facts_do_not_change_the_stage(index, name, qid):
    q, rec, expected = case(name, qid)
    ex = Explainer(index, config(name))
    explanation = ex.explain(q, rec, facts=True)
    assert explanation.stages == expected
    for hop in explanation.hops:
        f = hop.facts
        # the pools nest: run's pool within the uncapped pool within the unfiltered uncapped pool
        assert f["in_run_pool"] <= f["in_uncapped_pool"] <= f["in_uncapped_unfiltered_pool"]
        assert (f["valid_kg_rows"] == 0) == (hop.stage == "not_in_kg") or hop.stage in ("retrieved", "wrong_time", "no_anchor")


def test_repeated_gold_triple_is_one_hop(index):
    q = question("qr", "Who did Ada Lovelace know?", [("A", "P1", "B"), ("B", "P3", "D"), ("A", "P1", "B")])
    hops = gold_hops(gold_triples(q))
    assert [h.key for h in hops] == [("A", "P1", "B"), ("B", "P3", "D")] and [h.position for h in hops] == [0, 1]
    stages = Explainer(index, config("oracle")).explain(q, record("qr", "A", [0, 0], [2])).stages
    assert stages == ["retrieved", "tie_cut"]


def test_anchor_not_in_kg_is_no_anchor(index):
    q = question("qx", "Who did Ada Lovelace know?", [("A", "P1", "B")])
    rec = record("qx", "A", [])
    rec["anchor"]["id"] = "Q_not_in_the_kg"
    assert Explainer(index, config("oracle")).explain(q, rec).stages == ["no_anchor"]


def test_record_without_anchor_uses_the_configurations_rule(index):
    q, rec, expected = case("nonoracle", "q5")
    del rec["anchor"]
    assert Explainer(index, config("nonoracle")).explain(q, rec).stages == expected


def test_retrieved_equals_distinct_scorer_hits_and_ccr(index):
    for (name, qid) in CASES:
        q, rec, expected = case(name, qid)
        res = resolve_question(q, rec["evidence"])
        hits = {it.cls for it in res.items if it.cls >= 0 and it.valid_at(res.tq)}
        assert expected.count("retrieved") == len(hits)


def test_attribute_run_summary_adds_up(index):
    for name in CONFIGS:
        questions = [case(name, qid)[0] for qid in QUESTIONS]
        run = {qid: case(name, qid)[1] for qid in QUESTIONS}
        out = attribute_run(Explainer(index, config(name)), run, questions)
        assert out["questions"] == {qid: CASES[(name, qid)][3] for qid in QUESTIONS}
        summary = out["summary"]
        assert summary["n_hops"] == sum(len(v) for v in out["questions"].values()) == sum(summary["counts"].values())
        assert sum(g["n_hops"] for g in summary["by_complexity"].values()) == summary["n_hops"]
        assert sum(g["n_hops"] for g in summary["by_hop"].values()) == summary["n_hops"]
        third = [CASES[(name, qid)][3][2] for qid in ("q1", "q7")]
        assert summary["by_hop"]["3"]["counts"] == {s: third.count(s) for s in STAGES}


def test_detail_by_hand(index):
    q, rec, _ = case("oracle", "q1")
    d = question_detail(Explainer(index, config("oracle")), q, rec)
    assert [h["stage"] for h in d["hops"]] == ["retrieved", "tie_cut", "too_deep"]
    assert d["hops"][2]["in_deeper_unfiltered_pool"] and not d["hops"][2]["in_uncapped_unfiltered_pool"]
    assert d["pool"]["rows"] == [2, 1] and d["pool"]["eligible"] == [3, 1] and d["pool"]["cap_hit"] == [True, False]
    assert d["anchor"]["hit"] is True and d["anchor"]["gold_label"] == "Ada Lovelace"
    assert [e["mark"] for e in d["evidence"]] == ["gold", ""] and [e["hop"] for e in d["evidence"]] == [1, None]
    assert d["cutoff_ties"][0]["mark"] == "gold" and d["cutoff_ties"][0]["hop"] == 2 and d["cutoff_ties"][0]["rank"] == 3
    assert [e["tie_group"] for e in d["evidence"]] == [True, True]  # all scores 1.0: the whole list ties at the cut-off


def test_bfs_pools_by_hand(index):
    ex = Explainer(index, config("oracle"))
    bfs, ent = ex.retriever.bfs, index.kg.entity_index
    names = {v: k for k, v in ent.items()}
    a = ent["A"]
    assert sorted(names[int(e)] for e in bfs.reach(a, 2000.0)) == ["A", "B", "K", "W"]
    assert sorted(names[int(e)] for e in bfs.reach(a, 2000.0, temporal_filter=False)) == ["A", "B", "C", "F", "K", "W"]
    assert sorted(names[int(e)] for e in bfs.reach(a, 1999.5)) == ["A"]  # a non-whole t_query matches no row
    on = bfs.expand_uncapped(a, 2000.0)
    assert on.pool.tolist() == [0, 1, 7, 2] and on.hop_sizes == (3, 1)
    off = bfs.expand_uncapped(a, 2000.0, temporal_filter=False)
    assert off.pool.tolist() == [0, 1, 4, 5, 7, 2, 6] and off.hop_sizes == (5, 2)
    capped = bfs.expand(a, 2000.0, count_eligible=True)
    assert capped.pool.tolist() == [0, 1, 2] and capped.hop_sizes == (2, 1) and capped.eligible == (3, 1)
    assert bfs.expand(a, 2000.0).eligible == ()  # not counted unless asked
    hop3 = Explainer(index, config("hop3_k25")).retriever.bfs
    assert sorted(names[int(e)] for e in hop3.reach(a, 2000.0, temporal_filter=False)) == ["A", "B", "C", "D", "F", "G", "K", "W"]
    assert bfs.reach(None, 2000.0).tolist() == [] and bfs.expand_uncapped(None, 2000.0).pool.tolist() == []


def test_attribution_json_writes_what_json_dumps_writes():
    """The fast writer of ``explain --json`` gives the standard library's bytes, for any question id."""
    import json as std_json

    from eval.attribution import attribution_json

    questions = {"q1": ["retrieved", "capped"], 'odd "id"\n\u2028é': [], 7: ["tie_cut"], "null": ["outranked"],
                 "\ud800": ["no_anchor"]}
    result = {"questions": questions, "summary": {"n": 1}}
    lines = ["{", '  "questions": {']
    for i, (qid, stages) in enumerate(questions.items()):
        comma = "," if i < len(questions) - 1 else ""
        lines.append(f"    {std_json.dumps(str(qid), ensure_ascii=False)}: {std_json.dumps(list(stages))}{comma}")
    lines += ["  },", '  "summary": {', '    "n": 1', "  }", "}"]
    assert attribution_json(result) == "\n".join(lines) + "\n"


def test_configurations_sharing_a_ranking_share_its_read(index):
    """A read is reused only for the very question and the very evidence and cut-off tie lists."""
    shared = {}
    oracle, nonoracle = Explainer(index, config("oracle"), shared=shared), Explainer(index, config("nonoracle"), shared=shared)
    q, rec, expected = case("oracle", "q1")
    first = oracle.explain(q, rec)
    # the linker's run of the same anchor hands over the same lists (retriever.Retriever.retrieve_many)
    same = {**rec, "anchor": {**rec["anchor"], "source": "linker"}}
    again = nonoracle.explain(q, same)
    assert again.read is first.read and again.stages == expected
    # equal but other lists, another question object, other ties: read anew, with the same result
    for other_q, other_rec in ((q, {**same, "evidence": list(rec["evidence"])}),
                               (dict(q), same), (q, {**same, "cutoff_ties": []})):
        nonoracle.forget()
        got = nonoracle.explain(other_q, other_rec)
        assert got.read is not first.read
        fresh = Explainer(index, config("nonoracle")).explain(other_q, other_rec)
        assert repr(got.read) == repr(fresh.read) and got.stages == fresh.stages
    assert nonoracle.explain(q, {**same, "cutoff_ties": []}).stages == ["retrieved", "outranked", "too_deep"]
