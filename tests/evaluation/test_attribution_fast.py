"""The loss attribution's fast paths against the plain way (SPEC §7).

The attribution's JSON quotes every question id by one dump of them all, the
summary counts with :class:`collections.Counter`, :meth:`Explainer.valid_rows`
trusts the incidence's year, the gold subject and the gold's spaces and
classes are kept per question, and :func:`anchor_view` reads the gold's first
subject without a whole triple view: each is compared here with what the
plain code gives.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.attribution import attribution_json, summarize
from eval.evidence import read_question
from eval.explain import STAGES, Explainer, gold_hops
from eval.keyspace import gold_triples
from eval.question_detail import anchor_view, triple_view
from retriever import Retriever, load_config
from tempbench_core.jsonl import dumps_compact, dumps_json
from tempbench_core.schema import valid_at

# -- the plain ways -----------------------------------------------------------------------------------


def plain_json(result):
    """``attribution_json`` as it was written first: each id dumped on its own."""
    items = list(result["questions"].items())
    lines = ["{", '  "questions": {']
    for i, (qid, stages) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        lines.append(f"    {dumps_compact(str(qid))}: {dumps_json(list(stages), indent=None)}{comma}")
    lines.append("  },")
    summary = dumps_json(result["summary"], indent=2).replace("\n", "\n  ")
    lines += [f'  "summary": {summary}', "}"]
    return "\n".join(lines) + "\n"


def plain_tally(stage_lists):
    counts = dict.fromkeys(STAGES, 0)
    n_questions = 0
    for stages in stage_lists:
        n_questions += 1
        for s in stages:
            counts[s] += 1
    n_hops = sum(counts.values())
    return {"n_questions": n_questions, "n_hops": n_hops, "counts": counts,
            "shares": {s: (counts[s] / n_hops if n_hops else None) for s in STAGES}}


def plain_summary(questions, stages):
    present = [q for q in questions if q["id"] in stages]
    out = {"stages": list(STAGES)}
    out.update(plain_tally(stages[q["id"]] for q in present))
    for name, fld in (("complexity", "complexity"), ("operator", "operator_type")):
        groups = {}
        for q in present:
            groups.setdefault(q.get(fld), []).append(stages[q["id"]])
        out[f"by_{name}"] = {str(v): plain_tally(groups[v]) for v in sorted(groups, key=str)}
    by_hop = {}
    for q in present:
        for j, stage in enumerate(stages[q["id"]]):
            by_hop.setdefault(str(j + 1), []).append([stage])
    out["by_hop"] = {j: plain_tally(lists) for j, lists in by_hop.items()}
    return out


# -- the JSON and the summary ---------------------------------------------------------------------------

TRICKY_IDS = ['q"1', "q\\2", 'a\\"b', "\\", '"', "", "ünï©ødé", "日本", "emoji 😀", "tab\there", "new\nline",
              "nul\x00", "\u2028sep", "del\x7f", "lone \ud800 surrogate", 'end\\', '","', "]}", 7, 3.5, None]

ids = st.one_of(st.text(), st.integers(), st.sampled_from(TRICKY_IDS))
stage_lists = st.lists(st.sampled_from(STAGES), max_size=5)


def test_json_tricky_ids():
    result = {"questions": {qid: [STAGES[i % len(STAGES)]] * (i % 3) for i, qid in enumerate(TRICKY_IDS)},
              "summary": {"n": 1}}
    assert attribution_json(result) == plain_json(result)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(ids, stage_lists, max_size=12))
def test_json_random_ids(questions):
    result = {"questions": questions, "summary": {"stages": list(STAGES)}}
    assert attribution_json(result) == plain_json(result)


def test_json_no_questions():
    result = {"questions": {}, "summary": {}}
    assert attribution_json(result) == plain_json(result)


question_rows = st.lists(st.tuples(st.sampled_from(["1hop", "2hop", 3, None]),
                                   st.sampled_from(["point", "interval", None]), stage_lists,
                                   st.booleans()), max_size=25)


@settings(max_examples=300, deadline=None)
@given(question_rows)
def test_summary_random(rows):
    questions = [{"id": f"q{i}", "complexity": c, "operator_type": o} for i, (c, o, _, _) in enumerate(rows)]
    stages = {f"q{i}": found for i, (_, _, found, present) in enumerate(rows) if present}
    assert summarize(questions, stages) == plain_summary(questions, stages)


def test_summary_unknown_stage_fails_as_before():
    questions = [{"id": "a"}, {"id": "b"}]
    stages = {"a": ["retrieved", "lost"], "b": ["gone"]}
    with pytest.raises(KeyError) as plain:
        plain_summary(questions, stages)
    with pytest.raises(KeyError) as fast:
        summarize(questions, stages)
    assert fast.value.args == plain.value.args == ("lost",)


# -- the explainer on the small sample -------------------------------------------------------------------

@pytest.fixture(scope="module")
def explainers(small_index):
    shared: dict = {}
    return {name: Explainer(small_index, load_config(name), shared=shared) for name in ("oracle", "nonoracle")}


def plain_valid_rows(explainer, hop, t_query):
    """Every KG row of the hop, its year tested as SPEC §1.1 says (a point in time valid at ``t_query``)."""
    kg = explainer.index.kg
    subjects, relations, objects = explainer._members(hop.space, hop.key)
    head, rel, tail = np.asarray(kg.head), np.asarray(kg.relation), np.asarray(kg.tail)
    years = np.asarray(kg.year).astype(float)
    keep = np.isin(head, subjects) & np.isin(rel, relations) & np.isin(tail, objects)
    keep &= valid_at(years, years, float(t_query))
    return np.flatnonzero(keep)


def test_valid_rows_against_every_row(oracle_run, explainers):
    questions, _, run = oracle_run
    explainer = explainers["oracle"]
    found = 0
    for q in [q for q in questions if q["id"] in run][:150]:
        tq = float(q["t_query"])
        # hops keyed on ids, and the same hops keyed on labels (homonyms: several entities per label)
        labelled = {**q, "S_star": [{k: t[k] for k in ("s", "r", "o", "t_start", "t_end")} for t in q["S_star"]]}
        for hop in gold_hops(gold_triples(q)) + gold_hops(gold_triples(labelled)):
            for t in (tq, tq + 1, tq - 3, tq + 0.5, float("nan")):
                fast = explainer.valid_rows(hop, t)
                assert fast.tolist() == plain_valid_rows(explainer, hop, t).tolist()
                found += len(fast)
    assert found  # the sample's gold hops are in its KG


def test_gold_subject_kept_is_the_oracles(oracle_run, explainers, small_index):
    questions, _, run = oracle_run
    for name, explainer in explainers.items():
        for ties in ("first", "none"):
            explainer.config = load_config(name).replace(oracle_label_ties=ties)
            explainer.retriever = Retriever(small_index, explainer.config)
            for q in [q for q in questions if q["id"] in run][:80]:
                plain = explainer.retriever.oracle(dict(q)).index
                assert explainer.gold_subject(q) == plain
                assert explainer.gold_subject(q) == plain  # kept


def test_read_kept_classes_equal_fresh(oracle_run):
    questions, _, run = oracle_run
    shared: dict = {}
    by_id = {q["id"]: q for q in questions}
    for _ in range(2):  # the second round reads the kept spaces and classes
        for qid, record in run.items():
            q = by_id[qid]
            kept = read_question(q, record["evidence"], record["cutoff_ties"], "auto", shared)
            fresh = read_question(q, record["evidence"], record["cutoff_ties"], "auto")
            assert dataclasses.astuple(kept) == dataclasses.astuple(fresh)


def plain_anchor_view(explainer, record, anchor_idx, gold_idx, gold):
    kg = explainer.index.kg
    labels = explainer.index.entity_labels
    anchor_rec = record.get("anchor") if isinstance(record.get("anchor"), dict) else None
    gold_view = triple_view(gold[0]) if gold else {}
    return {
        "rule": explainer.config.anchor,
        "source": (anchor_rec or {}).get("source", "recomputed"),
        "id": (anchor_rec or {}).get("id") if anchor_rec else (None if anchor_idx is None else kg.entity_ids[anchor_idx]),
        "label": (anchor_rec or {}).get("label") if anchor_rec else (None if anchor_idx is None else labels[anchor_idx]),
        "in_kg": anchor_idx is not None,
        "gold_id": gold_view.get("s_id") if gold_idx is None else kg.entity_ids[gold_idx],
        "gold_label": gold_view.get("s") if gold_idx is None else labels[gold_idx],
        "hit": None if gold_idx is None else anchor_idx == gold_idx,
    }


def test_anchor_view_against_triple_view(oracle_run, explainers):
    questions, _, run = oracle_run
    explainer = explainers["oracle"]
    by_id = {q["id"]: q for q in questions}
    records = list(run.items())[:60]
    for qid, record in records:
        q = by_id[qid]
        labelled = [{k: t[k] for k in ("s", "r", "o", "t_start", "t_end")} for t in q["S_star"]]
        bare = {k: v for k, v in record.items() if k != "anchor"}
        for gold in (gold_triples(q), gold_triples({**q, "S_star": labelled}), []):
            for anchor_idx, gold_idx in ((3, 3), (3, 5), (None, 2), (4, None), (None, None)):
                for rec in (record, bare, {**record, "anchor": {}}):
                    assert anchor_view(explainer, rec, anchor_idx, gold_idx, gold) == \
                        plain_anchor_view(explainer, rec, anchor_idx, gold_idx, gold)
