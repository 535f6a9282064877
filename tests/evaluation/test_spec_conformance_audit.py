"""SPEC §4 audit, worked by hand on a tiny hand-made release.

Every expected value below is derived by hand from SPEC §4's wording (and the
readings documented in ``eval/audit/``) on the dataset built in
:func:`release`; the comments show the derivation.

KG (edge id: ts, head, tail, relation -> document)::

    0: 2000 Q1 Q2 P1  "alice smith lives in paris"       (5 tokens)
    1: 2001 Q1 Q2 P1  "alice smith lives in paris"       (5)
    2: 2000 Q1 Q4 P2  "alice smith works for acme corp"  (6)
    3: 2000 Q4 Q3 P1  "acme corp lives in london"        (5)
    4: 1999 Q1 Q3 P1  "alice smith lives in london"      (5)
    5: 2000 Q5 Q6 P3  "q5 born in berlin"                (4; Q5 has no label)
    6: 2002 Q1 Q6 P1  "alice smith lives in berlin"      (5)

N = 7, avgdl = 35 / 7 = 5.0.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from reference.bm25 import SlowBM25

from eval.audit.claims import load_claims, shipped_tolerances
from eval.audit.context import AuditContext
from eval.audit.pairs import triple_document
from eval.audit.questions import text_has_year
from eval.audit.run import run_audit
from eval.audit.verdict import FAIL, NA, OK, OKISH, verdict
from eval.keyspace import GoldTriple

KG_ROWS = [
    (2000, "Q1", "Q2", "P1"),
    (2001, "Q1", "Q2", "P1"),
    (2000, "Q1", "Q4", "P2"),
    (2000, "Q4", "Q3", "P1"),
    (1999, "Q1", "Q3", "P1"),
    (2000, "Q5", "Q6", "P3"),
    (2002, "Q1", "Q6", "P1"),
]
LABELS = {"Q1": "Alice Smith", "Q2": "Paris", "Q3": "London", "Q4": "Acme Corp", "Q6": "Berlin",
          "P1": "lives in", "P2": "works for", "P3": "born in"}


def T(s, r, o, t0, t1=None):  # noqa: N802 - a triple, as in the spec
    return (s, r, o, t0, t0 if t1 is None else t1)


# id, split, operator, complexity, question, answer, t_query, S_star, S_stale, S_dist, stale_f, dist_f
QUESTIONS = [
    ("q1", "test", "point_in_time", "1hop", "Where did Alice Smith live in 2000?", "Paris", 2000.0,
     [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2001)], [T("Q1", "P1", "Q3", 1999)], True, True),
    ("q2", "test", "point_in_time", "2hop", "In 2000 did Alice Smith live in Paris or elsewhere?", "Paris", 2000.0,
     [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2001)], [T("Q1", "P1", "Q6", 2002)], True, True),
    ("q3", "test", "before", "1hop", "Who did Alice Smith work for in London?", "Acme Corp", 2000.0,
     [T("Q1", "P2", "Q4", 2000)], [T("Q1", "P2", "Q4", 1999)], [T("Q1", "P2", "Q3", 2000)], False, True),
    ("q4", "test", "point_in_time", "3+hop", "Where is the company Alice Smith works for located?", "London", 2000.0,
     [T("Q1", "P2", "Q4", 2000), T("Q4", "P1", "Q3", 2000)],
     [T("Q1", "P2", "Q4", 1999), T("Q4", "P1", "Q3", 2001)],
     [T("Q1", "P2", "Q4", 2000), T("Q4", "P1", "Q3", 2000)], True, True),
    ("q5", "test", "point_in_time", "1hop", "Who was born in Berlin in 2000?", "Q5", 2000.0,
     [T("Q5", "P3", "Q6", 2000)], [T("Q5", "P3", "Q6", 1999, 2001)], [T("Q5", "P3", "Q2", 2000)], True, False),
    ("q6", "test", "interval", "1hop", "In what year did Alice Smith start working for Acme Corp?", "2000", 2000.0,
     [T("Q1", "P2", "Q4", 2000)], [T("Q1", "P2", "Q4", 1998)], [T("Q1", "P2", "Q3", 1998)], False, False),
    ("q12", "test", "interval", "3+hop", "When did Acme Corp move to London?", "1998", 2000.0,
     [T("Q4", "P1", "Q3", 2000)], [T("Q4", "P1", "Q3", 1997)], [T("Q4", "P1", "Q2", 1997)], False, False),
    ("q7", "train", "interval", "1hop", "When was Q5 born in Berlin, 2000 or later?", "2000", 2000.0,
     [T("Q5", "P3", "Q6", 2000)], [T("Q5", "P3", "Q6", 1990)], [T("Q5", "P3", "Q3", 1990)], False, True),
    ("q8", "dev", "interval", "1hop", "Which year did Alice Smith move to London (ref 19990)?", "1999", 1999.0,
     [T("Q1", "P1", "Q3", 1999)], [T("Q1", "P1", "Q3", 1999)], [T("Q1", "P1", "Q3", 1999)], False, False),
    ("q9", "train", "point_in_time", "1hop", "Alice Smith and Paris?", "2001", 2000.0,
     [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2000)], False, False),
    ("q10", "dev", "after", "1hop", "Alice Smith after Paris?", "2000", 2000.0,
     [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2000)], False, False),
    ("q11", "train", "point_in_time", "1hop", "Alice Smith in Paris, a number?", "20", 2000.0,
     [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2000)], False, False),
    ("q13", "train", "interval", "1hop", "What happened in 2000 at Paris?", "2000", 2000.5,
     [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2000)], [T("Q1", "P1", "Q2", 2000)], False, False),
]


def _lab(t):
    return {"s": LABELS.get(t[0], t[0]), "r": LABELS[t[1]], "o": LABELS.get(t[2], t[2]), "t_start": t[3], "t_end": t[4]}


def _ids(t):
    return {"s_id": t[0], "r_id": t[1], "o_id": t[2], "t_start": t[3], "t_end": t[4]}


def _write_jsonl(path: Path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _item(t):
    return {**_lab(t), **_ids(t)}


def _run_records(spec):
    return [{"id": qid, "anchor": {"id": anchor, "label": None, "source": "linker" if anchor else "none"},
             "evidence": [_item(t) for t in ev]} for qid, anchor, ev in spec]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny_release")
    (root / "benchmark").mkdir()
    (root / "tkgl-smallpedia_edgelist.csv").write_text(
        "ts,head,tail,relation_type\n" + "".join(f"{t},{h},{o},{r}\n" for t, h, o, r in KG_ROWS), encoding="utf-8")
    (root / "labels.tsv").write_text("id\tlabel\n" + "".join(f"{k}\t{v}\n" for k, v in LABELS.items()), encoding="utf-8")
    lab, ids, flags = [], [], []
    for qid, split, op, cx, text, ans, tq, star, stale, dist, sf, df in QUESTIONS:
        base = {"id": qid, "split": split, "question": text, "answer": ans, "t_query": tq,
                "complexity": cx, "operator_type": op}
        lab.append({**base, "S_star": [_lab(t) for t in star], "S_stale": [_lab(t) for t in stale], "S_dist": [_lab(t) for t in dist]})
        ids.append({**base, "S_star": [_ids(t) for t in star], "S_stale": [_ids(t) for t in stale], "S_dist": [_ids(t) for t in dist]})
        flags.append({"id": qid, "stale_functional": sf, "dist_functional": df})
    _write_jsonl(root / "benchmark" / "benchmark_labelled.jsonl", lab)
    _write_jsonl(root / "benchmark" / "benchmark.jsonl", ids)
    _write_jsonl(root / "benchmark" / "functional_negatives.jsonl", flags)
    runs = root / "runs"
    runs.mkdir()
    g = {q[0]: q[7] for q in QUESTIONS}
    # oracle: q4 all gold + one extra (TRP 2/3, CCR 1); q12 gold at a wrong time (0, 0);
    # q6 gold (1, 1); q1 nothing retrieved; q2, q3, q5 missing (empty retrieval).
    _write_jsonl(runs / "oracle.jsonl", _run_records([
        ("q1", "Q1", []),
        ("q4", "Q1", [*g["q4"], T("Q1", "P1", "Q2", 2000)]),
        ("q12", "Q4", [T("Q4", "P1", "Q3", 1999), T("Q1", "P1", "Q2", 2000)]),
        ("q6", "Q1", g["q6"]),
    ]))
    # stale-blind CCR: q1 1, q2 0 (gold at 2001), q3 1, q4 0, q5 1, q6 1, q12 0
    _write_jsonl(runs / "stale_blind.jsonl", _run_records([
        ("q1", "Q1", g["q1"]), ("q2", "Q1", [T("Q1", "P1", "Q2", 2001)]), ("q3", "Q1", g["q3"]),
        ("q4", "Q1", []), ("q5", "Q5", g["q5"]), ("q6", "Q1", g["q6"]), ("q12", "Q4", []),
    ]))
    # non-oracle: anchors q1 Q1, q2 Q1, q3 Q3 (wrong), q4 Q1, q5 none, q6 Q1, q12 missing;
    # 3+hop: q4 all gold (CCR 1), q12 missing (0)
    _write_jsonl(runs / "nonoracle.jsonl", _run_records([
        ("q1", "Q1", []), ("q2", "Q1", []), ("q3", "Q3", []), ("q4", "Q1", g["q4"]),
        ("q5", None, []), ("q6", "Q1", []),
    ]))
    return root


@pytest.fixture(scope="module")
def rows(release, tmp_path_factory):
    from tempbench.data import resolve_data

    ctx = AuditContext(resolve_data(data=release), runs_dir=release / "runs", split="test",
                       cache_dir=tmp_path_factory.mktemp("cache"))
    return {r["id"]: r for r in run_audit(ctx)}


def _v(rows, cid):
    return rows[cid]["reproduced"]


def test_split_sizes_and_interval_share(rows):
    # train q7 q9 q11 q13 (interval q7 q13); dev q8 q10 (q8); test q1-q6 q12 (q6 q12)
    for split, n, iv in (("train", 4, 2), ("dev", 2, 1), ("test", 7, 2), ("all", 13, 5)):
        assert _v(rows, f"split.{split}.questions") == n
        assert _v(rows, f"split.{split}.interval") == iv
        assert _v(rows, f"split.{split}.interval_share") == iv / n


def test_interval_leak_both_readings(rows):
    # numeric: q6 2000==2000, q7 yes, q8 1999==1999, q12 1998!=2000, q13 t_query 2000.5 -> 3 of 5
    assert (_v(rows, "leak.interval.tquery_is_answer"), rows["leak.interval.tquery_is_answer"]["of"]) == (3, 5)
    assert _v(rows, "leak.interval.rate") == 3 / 5
    # other operators (8, all splits): q10 answer "2000" at 2000.0 -> 1 of 8
    assert _v(rows, "leak.other.rate") == 1 / 8
    # the card's snippet str(t_query).startswith(str(answer)): q13 "2000.5" starts with "2000",
    # q11 "2000.0" starts with "20"
    assert _v(rows, "leak.alt.card_check.interval") == 4
    assert _v(rows, "leak.alt.card_check.other") == 2 / 8


def test_text_contains_query_year(rows):
    # q7 "2000" as a number; q8 "19990" only as a substring; q13 is not a whole year
    assert (_v(rows, "leak.text_year"), rows["leak.text_year"]["of"]) == (1, 5)
    assert _v(rows, "leak.text_year.share") == 1 / 5
    assert _v(rows, "leak.text_year.alt.substring") == 2
    assert text_has_year("a 2000s thing", 2000) and not text_has_year("a 2000s thing", 2000, "token")
    assert text_has_year("in 1999-2000", 2000, "token") and not text_has_year("x19990", 1999)


def test_stale_rows_denominator_is_every_flagged_test_question(rows):
    # flagged stale (test): q1 q2 q4 q5. Valid at t_query: only q5 (window 1999-2001 holds 2000);
    # q4 has two differing triples (not a SPEC §3.3 pair) and neither is valid.
    assert _v(rows, "stale.functional") == 4
    assert (_v(rows, "stale.valid_at_tquery"), rows["stale.valid_at_tquery"]["of"]) == (1, 4)
    assert _v(rows, "stale.valid_at_tquery.share") == 1 / 4
    # ties: q1 q2 q5 are pairs with the same (s, r, o): tie by construction; q4 is no pair
    assert (_v(rows, "stale.bm25_ties"), rows["stale.bm25_ties"]["of"]) == (3, 4)
    assert "1 flagged question(s) without exactly one differing triple" in rows["stale.bm25_ties"]["note"]
    assert _v(rows, "stale.bm25_ties.share") == 3 / 4


def test_distractor_pairs(rows):
    # flagged dist (test): q1 q2 q3 q4 (q4: S_dist == S_star, no pair).
    # q1 query terms in the corpus: alice smith in -> both 5-token docs equal: tie.
    # q2 adds "paris": only the gold doc has it: gold higher.
    # q3 ("for", "in", "london", ...): distractor "alice smith works for london" (5 tokens,
    #    + london) beats gold "alice smith works for acme corp" (6 tokens): gold lower.
    assert _v(rows, "dist.pairs") == 4
    assert (_v(rows, "dist.gold_higher"), _v(rows, "dist.gold_lower"), _v(rows, "dist.tie")) == (1, 1, 1)
    assert rows["dist.tie"]["of"] == 4
    assert _v(rows, "dist.gold_higher_share") == _v(rows, "dist.gold_lower_share") == _v(rows, "dist.tie_share") == 0.25
    assert _v(rows, "dist.gold_wins_nonties") == 0.5


def test_released_distractors_invalid(rows):
    # questions whose S_dist differs from S_star: q1 (1999) q2 (2002) q3 (2000, valid) q5 (2000, valid)
    # q6 (1998) q12 (1997) q7 (1990): 5 of 7 invalid.
    assert _v(rows, "dist.invalid_at_tquery") == 5 / 7
    # functional, all splits: q1 q2 q3 q7 (q4 has no distractor): 3 of 4; test functional: q1 q2 q3: 2 of 3
    assert _v(rows, "dist.invalid_at_tquery.alt.functional") == 3 / 4
    assert _v(rows, "dist.invalid_at_tquery.alt.test_functional") == 2 / 3


def test_bm25_documents_and_hand_computed_pair_score(rows, release, tmp_path):
    assert _v(rows, "bm25.documents") == 7
    from retriever.index import load_index

    index = load_index(release / "tkgl-smallpedia_edgelist.csv", release / "labels.tsv", cache_dir=tmp_path)
    # q3's distractor (Q1, P2, Q3) is not a KG row: still scored, from its rendered labels.
    doc = triple_document(index, GoldTriple({"id": ("Q1", "P2", "Q3")}, 0.0, 0.0))
    assert doc == "Alice Smith works for London"
    # The slow reference over the module docstring's documents, written out by hand.
    slow = SlowBM25(["alice smith lives in paris", "alice smith lives in paris", "alice smith works for acme corp",
                     "acme corp lives in london", "alice smith lives in london", "q5 born in berlin",
                     "alice smith lives in berlin"])
    # query terms in the corpus, first occurrence: alice (df 5) smith (5) for (1) in (6) london (2);
    # the doc has alice smith for london once each, dl = 5 = avgdl -> norm = k1.
    assert (slow.N, slow.avgdl) == (7, 5.0)
    assert {t: slow.df[t] for t in ("alice", "smith", "for", "in", "london")} == {"alice": 5, "smith": 5, "for": 1, "in": 6, "london": 2}
    expected = slow.score_text("Who did Alice Smith work for in London?", "alice smith works for london")
    assert expected == pytest.approx(sum(math.log(1 + (7 - d + 0.5) / (d + 0.5)) for d in (5, 5, 1, 2)), rel=1e-15)  # tf/norm = 1
    assert index.bm25.score_text("Who did Alice Smith work for in London?", doc) == expected
    # for every KG row the text score equals the index's own document score and the reference's, bit for bit
    for q in QUESTIONS:
        scores = index.bm25.score(q[4], list(range(7)))
        for row, (_, h, o, r) in enumerate(KG_ROWS):
            text = triple_document(index, GoldTriple({"id": (h, r, o)}, 0.0, 0.0))
            assert index.bm25.score_text(q[4], text) == float(scores[row]) == slow.score(q[4], row)


def test_anchor_recall_from_the_run_file(rows):
    # gold subjects: q1-q4 Q1, q5 Q5, q6 Q1, q12 Q4; linked: q1 q2 q4 q6 right, q3 wrong,
    # q5 none, q12 missing from the run -> 4 of 7
    assert _v(rows, "nonoracle.anchor_recall") == 4 / 7


def test_offered_anchors_are_read_instead_of_the_run_file(release, tmp_path, monkeypatch):
    """``tempbench reproduce`` offers each run's anchor ids: the same recall, the same run source and checks,
    and the run file is not read; anchors it did not offer (another path) are read from the file."""
    import eval.audit.context as context
    from tempbench.data import resolve_data

    path = release / "runs" / "nonoracle.jsonl"
    ctx = AuditContext(resolve_data(data=release), runs_dir=release / "runs", split="test", cache_dir=tmp_path)
    anchors = ctx.anchors("nonoracle")  # read from the file
    assert anchors == {"q1": "Q1", "q2": "Q1", "q3": "Q3", "q4": "Q1", "q5": None, "q6": "Q1"}

    offered = AuditContext(resolve_data(data=release), runs_dir=release / "runs", split="test", cache_dir=tmp_path)
    offered.offer_anchors("nonoracle", path, anchors)
    monkeypatch.setattr(context, "read_run", lambda *a, **k: pytest.fail("the offered anchors' run file was read"))
    got = {r["id"]: r for r in run_audit(offered, select=("nonoracle.anchor",))}
    assert got["nonoracle.anchor_recall"]["reproduced"] == 4 / 7
    assert offered.run_sources == ctx.run_sources and offered.warnings == ctx.warnings
    monkeypatch.undo()

    elsewhere = AuditContext(resolve_data(data=release), runs_dir=release / "runs", split="test", cache_dir=tmp_path)
    elsewhere.offer_anchors("nonoracle", tmp_path / "other.jsonl", {q: "Q1" for q in anchors})
    assert elsewhere.anchors("nonoracle") == anchors


def test_an_anchor_that_is_no_object_is_an_input_error(release, tmp_path):
    from tempbench.data import resolve_data
    from tempbench_core.errors import InputError

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "nonoracle.jsonl").write_text(json.dumps({"id": "q1", "evidence": [], "anchor": "Q1"}) + "\n",
                                          encoding="utf-8")
    ctx = AuditContext(resolve_data(data=release), runs_dir=runs, split="test", cache_dir=tmp_path, force=True)
    with pytest.raises(InputError, match=r"nonoracle\.jsonl:1: the record of question 'q1' has anchor 'Q1' \(expected an object"):
        ctx.anchors("nonoracle")


def test_anchor_recall_with_the_linker_in_memory(release, tmp_path):
    from tempbench.data import resolve_data

    ctx = AuditContext(resolve_data(data=release), split="test", cache_dir=tmp_path)
    got = {r["id"]: r for r in run_audit(ctx, select=("nonoracle.anchor",))}
    # longest label in the text: "alice smith" in q1-q4 and q6 (gold Q1), "berlin" in q5
    # (gold Q5, unlabelled), "acme corp" in q12 (gold Q4): 6 of 7
    assert got["nonoracle.anchor_recall"]["reproduced"] == 6 / 7


def test_retrieval_slices(rows):
    # oracle 3+hop: q4 TRP 2/3 CCR 1, q12 TRP 0 CCR 0
    assert _v(rows, "oracle.3hop.trp") == pytest.approx((2 / 3 + 0) / 2)
    assert _v(rows, "oracle.3hop.ccr") == 0.5
    # oracle interval: q6 (1, 1), q12 (0, 0)
    assert _v(rows, "oracle.interval.trp") == 0.5 and _v(rows, "oracle.interval.ccr") == 0.5
    # stale-blind CCR by operator: interval q6 1 q12 0 -> 0.5; before q3 -> 1.0;
    # point_in_time q1 1 q2 0 q4 0 q5 1 -> 0.5
    assert _v(rows, "stale_blind.interval.ccr") == 0.5
    assert _v(rows, "stale_blind.other_operators.ccr") == [0.5, 1.0]
    # non-oracle 3+hop: q4 1, q12 (missing) 0
    assert _v(rows, "nonoracle.3hop.ccr") == 0.5


def test_copy_tquery_on_interval(rows):
    # test interval: q6 "2000" == answer "2000"; q12 "2000" vs "1998": 1 of 2
    assert _v(rows, "copy_tquery.interval.em") == 0.5


def test_every_claim_is_computed_on_the_tiny_release(rows):
    claims, _ = load_claims()
    assert set(rows) == {c.id for c in claims}
    missing = [cid for cid, r in rows.items() if r["reproduced"] is None and not cid.startswith("neg.")]
    assert missing == []


@pytest.mark.parametrize(
    ("paper", "reproduced", "kind", "tol", "expected"),
    [
        (1429, 1429, "count", None, OK),
        (1429, 1443, "count", None, OKISH),   # |d| 14 <= 14.29
        (1429, 1444, "count", None, FAIL),    # 15 > 14.29
        (0, 0, "count", None, OK),
        (0.964, 0.969, "rate", None, OK),
        (0.964, 0.959, "rate", None, OK),
        (0.964, 0.984, "rate", None, OKISH),
        (0.964, 0.944, "rate", None, OKISH),
        (0.964, 0.98401, "rate", None, FAIL),
        ([0.03, 0.08], [0.5, 1.0], "range", None, FAIL),
        (0.964, None, "rate", None, NA),
        (0.5, 0.52, "rate", {"okish_abs": 0.01}, FAIL),
    ],
)
def test_verdict_boundaries(paper, reproduced, kind, tol, expected):
    assert verdict(paper, reproduced, kind, {**shipped_tolerances()[kind], **(tol or {})}) == expected
