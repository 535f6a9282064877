"""Homonyms (same label, another id): one key-space rule for the scorer and the audit (SPEC §3.1, §3.3)."""

from __future__ import annotations

from types import SimpleNamespace

from tables import one

from eval.audit.pairs import dist_compare
from eval.negatives import negatives_report, replaced_pair
from eval.scoring import evaluate, to_json


def T(s, r, o, t, sid, rid, oid):
    return {"s": s, "r": r, "o": o, "s_id": sid, "r_id": rid, "o_id": oid, "t_start": float(t), "t_end": float(t)}


GOLD = T("Ada", "spouse", "William King", 1835, "Q1", "P26", "Q2")
# the distractor replaces the object by a homonym: the same label, another entity
HOMONYM = T("Ada", "spouse", "William King", 1835, "Q1", "P26", "Q9")
QUESTION = {"id": "q1", "split": "test", "question": "Whom did Ada marry in 1835?", "answer": "William King",
            "t_query": 1835.0, "complexity": "1hop", "operator_type": "point_in_time",
            "S_star": [GOLD], "S_dist": [HOMONYM], "S_stale": [dict(GOLD, t_start=1830.0, t_end=1830.0)]}
FLAGS = {"q1": {"stale_functional": True, "dist_functional": True}}


def test_a_homonym_replacement_is_one_differing_triple_in_the_id_space():
    hop, repl = replaced_pair(QUESTION, "S_dist")
    assert hop.keys["id"] == ("Q1", "P26", "Q2") and repl.keys["id"] == ("Q1", "P26", "Q9")
    # forced into labels the two lists are equal: not evaluable
    assert replaced_pair(QUESTION, "S_dist", key="label") is None


def test_score_and_audit_see_the_same_pair():
    report = negatives_report(one(QUESTION, [HOMONYM]), FLAGS)
    assert report["counts"]["dist"] == {"evaluable": 1, "functional": 1}
    assert report["rates"]["dist_exact"] == {"rate": 1.0, "n": 1}
    index = SimpleNamespace(render=lambda i: {"Q1": "Ada", "P26": "spouse", "Q2": "William King", "Q9": "William King"}[i],
                            bm25=SimpleNamespace(score_text=lambda q, d: float(len(d))))
    ctx = SimpleNamespace(require_flags=lambda: FLAGS, split_questions=lambda split: [QUESTION], index=index, memo={})
    assert dist_compare(ctx, "test", "pairs").value == 1
    # the audit evaluated the pair (a tie: same documents), it is not "without exactly one differing triple"
    assert dist_compare(ctx, "test", "tie").value == 1 and dist_compare(ctx, "test", "tie").note is None


def test_the_key_space_effect_counts_questions_that_score_otherwise():
    run = {"q1": {"id": "q1", "evidence": [HOMONYM], "cutoff_ties": []}}
    ev = evaluate(run, [QUESTION], FLAGS)
    assert ev.rows[0]["hits"] == 0  # on ids the homonym is not the gold triple
    effect = to_json(ev, n_boot=1)["counts"]["key_space"]
    assert effect == {"used": "id", "other": "label", "questions_differing": 1}
    same = evaluate({"q1": {"id": "q1", "evidence": [GOLD], "cutoff_ties": []}}, [QUESTION], FLAGS)
    assert to_json(same, n_boot=1)["counts"]["key_space"]["questions_differing"] == 0
    labels_only = {"q1": {"id": "q1", "evidence": [{k: GOLD[k] for k in ("s", "r", "o", "t_start", "t_end")}]}}
    effect = to_json(evaluate(labels_only, [QUESTION], FLAGS), n_boot=1)["counts"]["key_space"]
    assert effect["used"] == "label" and effect["questions_differing"] is None  # the items carry no ids
