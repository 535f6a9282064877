"""Hand-made tiny KG with evidence derived by hand (SPEC §2.3-§2.5).

Rows (edge id: s r o year); labels in ``LABELS``:

     0: A  knows    B   1849
     1: A  lives in H   1850
     2: A  knows    B   1850
     3: A  knows    B   1850      exact duplicate of row 2
     4: B  built    D   1850
     5: C  lives in H   1850
     6: A  knows    B   1851      (A knows B) in three years
     7: X1 lives in H   1850      \
     8: X2 lives in H   1850       |
     9: X3 lives in H   1850       |  H ("London") is the hub: 9 rows in 1850,
    10: X4 lives in H   1850       |  more than any cap used below
    11: X5 lives in H   1850       |  X1 and X5 are homonyms ("Mr Ant")
    12: X6 lives in H   1850      /
    13: D  built    A   1850
    14: A  knows    C   1851
    15: Q9 knows    C   1850      Q9 has no label (rendered as its id)
    16: QY knows    C   1850      QY's label "Y" is one character
    17: E  knows    C   1850      E's label "Ada" overlaps "Ada Lovelace"
"""

from __future__ import annotations

import numpy as np
import pytest
from reference.retriever import SlowRetriever
from reference.tiny import LABELS, ROWS, make_index  # noqa: F401 - ROWS/LABELS used by the cases

from retriever.config import RetrieverConfig
from retriever.pipeline import Retriever


@pytest.fixture(scope="module")
def index():
    return make_index()


def question(text="Who lives in London?", anchor="A", t_query=1850.0, **extra):
    s_star = [] if anchor is None else [{"s_id": anchor, "r_id": "P2", "o_id": "H", "t_start": 1850, "t_end": 1850}]
    return {"id": "q1", "split": "test", "question": text, "t_query": t_query, "S_star": s_star, **extra}


def pool_rows(index, cfg, q):
    r = Retriever(index, cfg)
    exp = r.expand(q)
    return exp.pool.tolist(), exp.rows.tolist()


def evidence_rows(record, index):
    """Map evidence items back to edge ids via (s_id, r_id, o_id, t_start)."""
    kg = index.kg
    out = []
    for item in record:
        for i, (s, r, o, t) in enumerate(ROWS):
            if (s, r, o, t) == (item["s_id"], item["r_id"], item["o_id"], item["t_start"]):
                out.append(i)
                break
    assert len(out) == len(record) and kg.n_rows == len(ROWS)
    return out


SMALL = RetrieverConfig(caps=(2, 3, 4))


# --- BFS (SPEC §2.4) -----------------------------------------------------------

def test_filtered_two_hops_by_hand(index):
    # hop 1: A's 1850 rows 1,2,3,13 -> cap 2 -> [1, 2]; frontier {H, B}
    # hop 2: B: 2,3,4; H: 1,5,7..12; unseen -> 3,4,5,7,... -> cap 3 -> [3, 4, 5]
    # dedup: row 3 duplicates row 2 (the cap counted it: rows before dedup)
    assert pool_rows(index, SMALL, question()) == ([1, 2, 3, 4, 5], [1, 2, 4, 5])


def test_stale_blind_keeps_first_time_version(index):
    cfg = SMALL.replace(temporal_filter=False)
    # hop 1: A's rows 0,1,2,3,6,13,14 -> [0, 1]; hop 2: B: 0,2,3,4,6 H: 1,5,7.. -> unseen 2,3,4,... -> [2, 3, 4]
    # (A knows B) first appears as row 0 (1849): rows 2 and 3 (1850) are dropped
    assert pool_rows(index, cfg, question()) == ([0, 1, 2, 3, 4], [0, 1, 4])


def test_three_hops(index):
    # after hop 2 (pool 1..5) the frontier is {D, C}; hop 3: D: 4,13; C: 5,15,16,17
    # -> unseen [13, 15, 16, 17] (4 rows = cap 4)
    cfg = SMALL.replace(hops=3)
    assert pool_rows(index, cfg, question()) == ([1, 2, 3, 4, 5, 13, 15, 16, 17], [1, 2, 4, 5, 13, 15, 16, 17])
    cfg = SMALL.replace(hops=3, caps=(2, 3, 2))  # cap 2 on hop 3 keeps the first two by edge id
    assert pool_rows(index, cfg, question()) == ([1, 2, 3, 4, 5, 13, 15], [1, 2, 4, 5, 13, 15])


def test_cap_counts_unique_triples(index):
    # hop 1: 1 (new), 2 (new) -> [1, 2]; hop 2: 3 (dup of 2, free), 4, 5, 7 -> [3, 4, 5, 7]
    cfg = SMALL.replace(cap_counts="unique_triples")
    assert pool_rows(index, cfg, question()) == ([1, 2, 3, 4, 5, 7], [1, 2, 4, 5, 7])


def test_cap_scope_per_node(index):
    # hop 2: B takes its unseen 3, 4; H takes 5, 7, 8 (cap 3 each); union in edge-id order
    cfg = SMALL.replace(cap_scope="per_node")
    assert pool_rows(index, cfg, question()) == ([1, 2, 3, 4, 5, 7, 8], [1, 2, 4, 5, 7, 8])


def test_hub_beyond_default_caps():
    # a hub with 500 rows in 1850: hop 1 from the hub takes exactly the first 60 by edge id
    rows = [(f"Z{i}", "P2", "H", 1850) for i in range(500)] + [("A", "P2", "H", 1850)]
    idx = make_index(rows, {"H": "Hub"})
    cfg = RetrieverConfig(hops=1)
    assert pool_rows(idx, cfg, question(anchor="H")) == (list(range(60)), list(range(60)))
    cfg2 = RetrieverConfig(hops=2)  # hop 2: each Z_i has only its row to the hub, already seen
    assert pool_rows(idx, cfg2, question(anchor="H"))[0] == list(range(60))


def test_non_whole_t_query_matches_nothing(index):
    assert pool_rows(index, SMALL, question(t_query=1850.5)) == ([], [])
    assert pool_rows(index, SMALL, question(t_query=1850)) == ([1, 2, 3, 4, 5], [1, 2, 4, 5])


# --- ranking (SPEC §2.5) -------------------------------------------------------

def test_reverse_lex_ties_straddle_k(index):
    # anchor H, one hop, cap 10: rows 1,5,7..12. Query terms "lives", "in", "london" hit every
    # document once; "Charles lives in London" is shortest (4 tokens) and scores highest,
    # the 5-token documents tie: reverse-lex order Mr Eel > Mr Dog > Mr Cat > Mr Bee > Mr Ant
    # (X1, then homonym X5 in pool order) > Ada Lovelace ("M" > "A").
    cfg = RetrieverConfig(hops=1, caps=(10,), k=3)
    record = Retriever(index, cfg).retrieve(question(anchor="H"))
    assert evidence_rows(record["evidence"], index) == [5, 12, 10]
    assert evidence_rows(record["cutoff_ties"], index) == [9, 8, 7, 11, 1]
    assert record["evidence"][0]["line"] == "Charles | lives in | London | 1850"
    assert record["evidence"][1]["line"] == "Mr Eel | lives in | London | 1850"
    scores = [e["score"] for e in record["evidence"] + record["cutoff_ties"]]
    assert scores[0] > scores[1] and len(set(scores[1:])) == 1
    assert record["anchor"] == {"id": "H", "label": "London", "source": "oracle"}


def test_no_ties_when_k_cut_falls_between_scores(index):
    cfg = RetrieverConfig(hops=1, caps=(10,), k=1)
    record = Retriever(index, cfg).retrieve(question(anchor="H"))
    assert evidence_rows(record["evidence"], index) == [5] and record["cutoff_ties"] == []
    cfg = RetrieverConfig(hops=1, caps=(10,), k=8)  # everything returned, nothing below the cut
    record = Retriever(index, cfg).retrieve(question(anchor="H"))
    assert evidence_rows(record["evidence"], index) == [5, 12, 10, 9, 8, 7, 11, 1] and record["cutoff_ties"] == []


def test_pool_order_tie_break_option(index):
    cfg = RetrieverConfig(hops=1, caps=(10,), k=3, tie_break="pool_order")
    record = Retriever(index, cfg).retrieve(question(anchor="H"))
    assert evidence_rows(record["evidence"], index) == [5, 1, 7]
    assert evidence_rows(record["cutoff_ties"], index) == [8, 9, 10, 11, 12]


def test_homonym_order_option(index):
    from retriever.ranking import Ranker

    terms = index.bm25.query_terms("Who lives in London?")
    rows = np.array([11, 7], dtype=np.int64)  # homonyms "Mr Ant", pool order X5 then X1
    pool = Ranker(index, k=2).rank(terms, rows)
    assert rows[pool.order].tolist() == [11, 7]
    by_id = Ranker(index, k=2, homonym_order="edge_id").rank(terms, rows)
    assert rows[by_id.order].tolist() == [7, 11]


def test_scores_equal_rank_bm25(index):
    # The evidence scores are BM25 of SPEC §2.2 (checked against rank_bm25 with SPEC's idf).
    from reference.bm25 import rank_bm25_scores

    from retriever.tokenizer import tokenize

    docs = [tokenize(f"{LABELS.get(s, s)} {LABELS[r]} {LABELS.get(o, o)}") for s, r, o, _ in ROWS]
    cfg = RetrieverConfig(hops=1, caps=(10,), k=10)
    record = Retriever(index, cfg).retrieve(question(anchor="H"))
    rows = evidence_rows(record["evidence"], index)
    expected = rank_bm25_scores(docs, list(dict.fromkeys(tokenize("Who lives in London?"))), rows)
    assert [e["score"] for e in record["evidence"]] == expected


def test_line_template_option(index):
    cfg = RetrieverConfig(hops=1, caps=(10,), k=1, line_template="{s_id}:{r_id}:{o_id}@{t_start}-{t_end} ({t})")
    record = Retriever(index, cfg).retrieve(question(anchor="H"))
    assert record["evidence"][0]["line"] == "C:P2:H@1850-1850 (1850)"


# --- anchors (SPEC §2.3) -------------------------------------------------------

LINKER = RetrieverConfig(anchor="linker", hops=1, caps=(10,))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Did Ada Lovelace know Babbage?", "A"),  # "ada lovelace" (12) beats "ada" (3) and "babbage" (7)
        ("Did ada know Babbage?", "B"),  # "babbage" (7) beats "ada" (3)
        ("Charles or Babbage?", "C"),  # equal length 7: earliest start wins
        ("Babbage or Charles?", "B"),
        ("Where did MR ANT live?", "X1"),  # homonyms: first in load order, case-insensitive
        ("What is q9 and y?", None),  # no real label ("Q9"), label too short ("y")
        ("Nothing to see here", None),
        ("The Adamses", "E"),  # plain substring: "ada" inside "adamses"
    ],
)
def test_linker_by_hand(index, text, expected):
    record = Retriever(index, LINKER).retrieve(question(text=text, anchor="A"))
    assert record["anchor"]["id"] == expected
    assert record["anchor"]["source"] == ("linker" if expected else "none")
    if expected is None:
        assert record["evidence"] == [] and record["cutoff_ties"] == []


def test_linker_word_boundary_option(index):
    cfg = LINKER.replace(linker_match="word")
    r = Retriever(index, cfg)
    assert r.retrieve(question(text="The Adamses"))["anchor"]["id"] is None
    assert r.retrieve(question(text="Ada, and the Adamses"))["anchor"]["id"] == "E"
    assert r.retrieve(question(text="Ada Lovelaces and Ada"))["anchor"]["id"] == "E"


def test_linker_min_length_option(index):
    r = Retriever(index, LINKER.replace(linker_min_length=1))
    assert r.retrieve(question(text="what about y?"))["anchor"]["id"] == "QY"


def test_oracle_resolution(index):
    r = Retriever(index, SMALL)
    # s_id not in the KG: anchor reported, retrieval empty
    rec = r.retrieve(question(anchor="Q404"))
    assert rec["anchor"]["id"] == "Q404" and rec["anchor"]["source"] == "oracle" and rec["evidence"] == []
    # no s_id: exact, case-sensitive label; homonyms -> first in load order, flagged ambiguous
    q = question()
    q["S_star"] = [{"s": "Mr Ant", "r": "lives in", "o": "London", "t_start": 1850, "t_end": 1850}]
    rec, stats = r.retrieve_with_stats(q)
    assert rec["anchor"] == {"id": "X1", "label": "Mr Ant", "source": "oracle"} and stats.ambiguous_oracle
    q["S_star"][0]["s"] = "mr ant"
    assert r.retrieve(q)["anchor"]["id"] is None
    none = Retriever(index, SMALL.replace(oracle_label_ties="none"))
    q["S_star"][0]["s"] = "Mr Ant"
    assert none.retrieve(q)["anchor"]["id"] is None


def test_anchor_recall_stat(index):
    r = Retriever(index, LINKER)
    _, st = r.retrieve_with_stats(question(text="Did Ada Lovelace know Babbage?", anchor="A"))
    assert st.anchor_hit is True
    _, st = r.retrieve_with_stats(question(text="Did Babbage know her?", anchor="A"))
    assert st.anchor_hit is False
    _, st = r.retrieve_with_stats(question(text="Did Babbage know her?", anchor=None))
    assert st.anchor_hit is None


def test_missing_t_query_is_input_error(index):
    from tempbench_core.errors import InputError

    q = question()
    del q["t_query"]
    with pytest.raises(InputError):
        Retriever(index, SMALL).retrieve(q)


def test_slow_reference_agrees_on_tiny_kg(index):
    slow = SlowRetriever(index.kg, index.entity_labels, index.relation_labels)
    scan = SlowRetriever(index.kg, index.entity_labels, index.relation_labels, scan=True)
    texts = ["Who lives in London?", "Did Ada Lovelace know Babbage?", "Charles built what?", "Mr Ant"]
    configs = [SMALL, SMALL.replace(temporal_filter=False), SMALL.replace(hops=3), SMALL.replace(cap_scope="per_node"),
               SMALL.replace(cap_counts="unique_triples"), RetrieverConfig(hops=1, caps=(10,), k=3),
               LINKER.replace(k=2), RetrieverConfig(k=2, tie_break="pool_order")]
    for cfg in configs:
        fast = Retriever(index, cfg)
        for text in texts:
            for anchor in ("A", "H", "B", "X5"):
                for tq in (1849.0, 1850.0, 1851.0):
                    q = question(text=text, anchor=anchor, t_query=tq)
                    got = fast.retrieve(q)
                    want = slow.retrieve(q, cfg)
                    assert scan.retrieve(q, cfg) == want
                    assert [(e["score"], e["line"]) for e in got["evidence"]] == [(s, ln) for _, s, ln in want["evidence"]]
                    assert evidence_rows(got["evidence"], index) == [r for r, _, _ in want["evidence"]]
                    assert evidence_rows(got["cutoff_ties"], index) == [r for r, _, _ in want["cutoff_ties"]]


def test_truncated_frontier_lists_merge_exactly():
    # X's rows 0 (X-A) and 1 (X-B) make hop 1; hop 2 merges A's rows 0,6,7,8 with B's 1..5.
    # The eligible unseen rows in edge-id order are 2,3,4,5,6,7,8: cap 3 -> [2, 3, 4].
    # (Truncating each node's list to `cap` rows before removing seen ones would wrongly
    # give [2, 3, 6]: B's rows 4 and 5 would be cut while A's 6 survives.)
    rows = [("X", "P1", "A", 2000), ("X", "P1", "B", 2000)] + [("B", f"P{i}", "C", 2000) for i in range(2, 6)] + [
        ("A", f"P{i}", "D", 2000) for i in range(6, 9)
    ]
    idx = make_index(rows, {})
    cfg = RetrieverConfig(hops=2, caps=(2, 3))
    assert pool_rows(idx, cfg, question(anchor="X", t_query=2000.0)) == ([0, 1, 2, 3, 4], [0, 1, 2, 3, 4])
    cfg = RetrieverConfig(hops=2, caps=(2, 6), cap_counts="unique_triples")
    assert pool_rows(idx, cfg, question(anchor="X", t_query=2000.0))[0] == [0, 1, 2, 3, 4, 5, 6, 7]


def test_linker_lengths_are_those_of_lowercased_strings():
    # "İab".lower() == "i̇ab" has 4 code points, "xyz" 3: the dotted-I label is longer
    # once lowercased although both labels have 3 characters as written.
    rows = [("E1", "P1", "E2", 2000), ("E3", "P1", "E2", 2000)]
    idx = make_index(rows, {"E1": "xyz", "E3": "İab", "E2": "somewhere"})
    r = Retriever(idx, RetrieverConfig(anchor="linker"))
    assert "İab".lower() != "iab" and len("İab".lower()) == 4
    assert r.retrieve(question(text="xyz or İab?", anchor=None, t_query=2000.0))["anchor"]["id"] == "E3"
    assert r.retrieve(question(text="xyz or iab?", anchor=None, t_query=2000.0))["anchor"]["id"] == "E1"
