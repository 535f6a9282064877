"""Loss attribution (SPEC §7) on the generated data: the fast path against a slow literal
reading of the stage table, and the invariants, for the four shipped configurations."""

from __future__ import annotations

import numpy as np
import pytest
from reference.explain import SlowExplainer

from eval.attribution import attribute_run
from eval.evidence import resolve_question
from eval.explain import STAGES, Explainer
from eval.question_detail import question_detail
from eval.trp_ccr import score_question
from retriever import Retriever, load_benchmark, load_config, load_index, retrieve_shard, run_to_file
from tempbench.data import resolve_data
from tempbench_core.runfile import read_run
from tempbench_core.schema import SHIPPED_CONFIGS, select_split


@pytest.fixture(scope="module")
def setup(small_sample, tmp_path_factory):
    data = resolve_data(data=small_sample)
    out = tmp_path_factory.mktemp("explain-runs")
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark)
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    runs, results = {}, {}
    for name in SHIPPED_CONFIGS:
        path = out / f"{name}.jsonl"
        run_to_file(load_config(name), data, split="test", out_path=path, show_progress=False)
        runs[name] = read_run(path)
        results[name] = attribute_run(Explainer(index, load_config(name)), runs[name], questions)
    return index, questions, runs, results


@pytest.mark.parametrize("name", SHIPPED_CONFIGS)
def test_fast_path_equals_the_slow_literal_table(setup, name):
    index, questions, runs, results = setup
    slow = SlowExplainer(index.kg, index.entity_labels, index.relation_labels)
    by_id = {q["id"]: q for q in questions}
    cfg = load_config(name)
    expected = {qid: slow.stages(by_id[qid], rec, cfg) for qid, rec in runs[name].items()}
    assert results[name]["questions"] == expected


@pytest.mark.parametrize("name", SHIPPED_CONFIGS)
def test_stages_partition_the_hops_and_retrieved_is_the_scorers_count(setup, name):
    _, questions, runs, results = setup
    by_id = {q["id"]: q for q in questions}
    stages = results[name]["questions"]
    assert list(stages) == list(runs[name])
    for qid, st in stages.items():
        q, rec = by_id[qid], runs[name][qid]
        res = resolve_question(q, rec["evidence"])
        # one stage per distinct gold hop, each from the table
        assert len(st) == res.n_gold and set(st) <= set(STAGES)
        distinct_hits = {it.cls for it in res.items if it.cls >= 0 and it.valid_at(res.tq)}
        assert st.count("retrieved") == len(distinct_hits)
        row = score_question(q, rec["evidence"])
        assert row["ccr"] == int(all(s == "retrieved" for s in st))
        assert st.count("retrieved") <= row["hits"]  # the TRP numerator counts repeats and versions again
    summary = results[name]["summary"]
    assert summary["n_hops"] == sum(len(v) for v in stages.values()) == sum(summary["counts"].values())
    for field in ("complexity", "operator", "hop"):
        groups = summary[f"by_{field}"]
        assert sum(g["n_hops"] for g in groups.values()) == summary["n_hops"]
        for stage in STAGES:
            assert sum(g["counts"][stage] for g in groups.values()) == summary["counts"][stage]
    assert abs(sum(summary["shares"].values()) - 1.0) < 1e-9


def test_invariants_of_the_configurations(setup):
    _, _, _, results = setup
    counts = {name: results[name]["summary"]["counts"] for name in SHIPPED_CONFIGS}
    for name in SHIPPED_CONFIGS:
        cfg = load_config(name)
        if cfg.anchor == "oracle":
            assert counts[name]["wrong_anchor"] == 0 and counts[name]["no_anchor"] == 0
        if not cfg.temporal_filter:
            assert counts[name]["filtered"] == 0
        else:
            assert counts[name]["wrong_time"] == 0  # a filtered pool holds no invalid row
    # the generated data makes the interesting stages occur
    assert counts["nonoracle"]["wrong_anchor"] > 0 and counts["nonoracle"]["no_anchor"] > 0
    assert counts["stale_blind"]["wrong_time"] > 0 and counts["oracle"]["too_deep"] > 0
    # 3 hops reach every hop of a gold chain of at most 3 (the 2-hop runs lose the third as too_deep)
    assert counts["hop3_k25"]["unreachable"] == counts["hop3_k25"]["too_deep"] == 0


def test_pools_against_the_literal_bfs(setup):
    index, questions, runs, _ = setup
    slow = SlowExplainer(index.kg, index.entity_labels, index.relation_labels)
    chosen = select_split(questions, "test")[:30]
    for name in ("oracle", "stale_blind", "hop3_k25"):
        cfg = load_config(name)
        bfs = Explainer(index, cfg).retriever.bfs
        for q in chosen:
            anchor = index.kg.entity_index[runs[name][q["id"]]["anchor"]["id"]]
            tq = float(q["t_query"])
            for on in (True, False):
                pool = slow.bfs_pool(anchor, tq, cfg.hops, None, on)
                fast = bfs.expand_uncapped(anchor, tq, temporal_filter=on)
                assert fast.pool.tolist() == pool
                reach = set(bfs.reach(anchor, tq, temporal_filter=on).tolist())
                rows = [r for r in range(index.kg.n_rows)
                        if (not on or float(index.kg.year[r]) == tq)
                        and (int(index.kg.head[r]) in reach or int(index.kg.tail[r]) in reach)]
                assert sorted(pool) == rows
            capped = slow.bfs_pool(anchor, tq, cfg.hops, tuple(cfg.caps), cfg.temporal_filter)
            assert bfs.expand(anchor, tq, count_eligible=True).pool.tolist() == capped == bfs.expand(anchor, tq).pool.tolist()


@pytest.mark.parametrize("options", [{}, {"temporal_filter": False}, {"cap_scope": "per_node"},
                                     {"cap_counts": "unique_triples", "hops": 3}])
def test_eligible_counts_against_brute_force(setup, options):
    index, questions, runs, _ = setup
    cfg = load_config("oracle").replace(**options)
    bfs = Explainer(index, cfg).retriever.bfs
    kg = index.kg
    for q in select_split(questions, "test")[:80]:
        anchor = kg.entity_index[runs["oracle"][q["id"]]["anchor"]["id"]]
        tq = float(q["t_query"])
        exp = bfs.expand(anchor, tq, count_eligible=True)
        # replay the hops: eligible = unseen rows incident to the frontier that pass the filter
        frontier, visited, seen, start = {anchor}, {anchor}, set(), 0
        for h, taken in enumerate(exp.hop_sizes):
            rows = {r for r in np.flatnonzero(np.isin(kg.head, list(frontier)) | np.isin(kg.tail, list(frontier))).tolist()
                    if (not cfg.temporal_filter or float(kg.year[r]) == tq) and r not in seen}
            assert exp.eligible[h] == (len(rows) if frontier else 0)
            cand = exp.pool[start:start + taken].tolist()
            start += taken
            seen |= set(cand)
            frontier = {int(e) for r in cand for e in (kg.head[r], kg.tail[r])} - visited
            visited |= frontier
        assert len(exp.eligible) == cfg.hops


def test_detail_is_consistent_with_the_attribution(setup):
    index, questions, runs, results = setup
    by_id = {q["id"]: q for q in questions}
    for name in SHIPPED_CONFIGS:
        ex = Explainer(index, load_config(name))
        for qid in list(runs[name])[:40]:
            d = question_detail(ex, by_id[qid], runs[name][qid])
            assert [h["stage"] for h in d["hops"]] == results[name]["questions"][qid] == d["stages"]
            assert sum(d["pool"]["rows"]) == d["pool"]["pool_rows"]
            assert all(e >= r for r, e in zip(d["pool"]["rows"], d["pool"]["eligible"], strict=True))
            golds = sum(e["mark"] == "gold" for e in d["evidence"])
            assert golds == score_question(by_id[qid], runs[name][qid]["evidence"])["hits"]
            for h in d["hops"]:
                if h["stage"] == "capped":
                    assert h["in_uncapped_pool"] and not h["in_run_pool"]
                if h["stage"] == "filtered":
                    assert h["in_uncapped_unfiltered_pool"] and not h["in_uncapped_pool"]


@pytest.mark.parametrize("name", SHIPPED_CONFIGS)
def test_pools_kept_by_the_run_give_what_expanding_again_gives(setup, small_sample, tmp_path, name):
    """An explainer given the run's pool summaries attributes and details every question as one without."""
    index, questions, runs, results = setup
    chosen = select_split(questions, "test")
    shard = retrieve_shard(Retriever(index, load_config(name)), chosen, 0, len(chosen), keep_pools=True)
    kept = Explainer(index, load_config(name), {r["id"]: p for r, p in zip(shard.records, shard.pools, strict=True)})
    plain = Explainer(index, load_config(name))
    assert attribute_run(kept, runs[name], questions) == results[name]
    by_id = {q["id"]: q for q in questions}
    shared: dict = {}
    for qid, record in runs[name].items():
        assert question_detail(kept, by_id[qid], record, facts=False, shared=shared) == \
            question_detail(plain, by_id[qid], record, facts=False)
