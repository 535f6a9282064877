"""A BFS that takes its first hops from a shallower BFS's expansions (:meth:`BFS.expand_many`'s ``prior``) makes the
pools, hop sizes and eligible counts it makes from scratch; retrievers of configurations that share their first hops
(:func:`retriever.pipeline.hops_key`) make through a shared cache the records they make alone."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.tiny import make_index

from retriever.bfs import BFS
from retriever.config import load_config
from retriever.pipeline import Retriever, hops_key


def _same(a, b) -> None:
    assert a.pool.tolist() == b.pool.tolist()
    assert a.rows.tolist() == b.rows.tolist()
    assert a.hop_sizes == b.hop_sizes and a.eligible == b.eligible
    assert (a.ascending is None) == (b.ascending is None)
    if a.ascending is not None:
        assert a.ascending.tolist() == b.ascending.tolist()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 1), st.integers(0, 7), st.integers(2000, 2001)),
                     min_size=1, max_size=50),
       questions=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 8)), st.sampled_from([2000.0, 2001.0, 2001.5]),
                                    st.booleans()), min_size=1, max_size=8),
       hops=st.integers(2, 4), caps=st.lists(st.integers(0, 5), min_size=4, max_size=4), on=st.booleans(),
       per_node=st.booleans(), unique=st.booleans(), data=st.data())
def test_hops_taken_from_a_shallower_bfs_equal_hops_expanded(rows, questions, hops, caps, on, per_node, unique, data):
    index = make_index([(f"E{s}", f"P{r}", f"E{o}", y) for s, r, o, y in rows], {})
    kg = index.kg
    rule = {"temporal_filter": on, "cap_scope": "per_node" if per_node else "per_hop",
            "cap_counts": "unique_triples" if unique else "rows"}
    deep = BFS(kg, index.incidence, hops=hops, caps=caps, **rule)
    anchors = [None if a is None else kg.entity_index.get(f"E{a}") for a, _, _ in questions]
    t_queries = [t for _, t, _ in questions]
    for counted in (False, True):
        plain = deep.expand_many(anchors, t_queries, count_eligible=counted)
        # each question's prior: none, or the expansion of its first 1..hops-1 hops (counted or not)
        known = [data.draw(st.integers(0, hops - 1)) if use else 0 for _, _, use in questions]
        prior = []
        for anchor, t_query, n in zip(anchors, t_queries, known, strict=True):
            if n == 0:
                prior.append(None)
                continue
            shallow = BFS(kg, index.incidence, hops=n, caps=caps[:n], **rule)
            prior.append(shallow.expand(anchor, t_query, count_eligible=data.draw(st.booleans())))
        for a, b in zip(deep.expand_many(anchors, t_queries, count_eligible=counted, prior=prior), plain, strict=True):
            _same(a, b)


def test_hops_key_agrees_on_the_first_hops_only():
    oracle, hop3, blind, nonoracle = (load_config(n) for n in ("oracle", "hop3_k25", "stale_blind", "nonoracle"))
    assert hops_key(oracle, 2) == hops_key(hop3, 2) == hops_key(nonoracle, 2)
    assert hops_key(oracle, 1) == hops_key(hop3, 1)
    assert hops_key(oracle, 2) != hops_key(hop3, 3)
    assert hops_key(blind, 2) != hops_key(oracle, 2)  # the filter is off
    assert hops_key(oracle.replace(caps=[60, 150, 400]), 2) != hops_key(hop3, 2)
    assert hops_key(oracle.replace(caps=[60, 150, 400]), 1) == hops_key(hop3, 1)
    assert hops_key(oracle.replace(cap_scope="per_node"), 1) != hops_key(hop3, 1)


def test_a_shared_cache_gives_the_records_made_alone():
    rows = [(f"E{i % 7}", f"P{i % 3}", f"E{(i * 5 + 1) % 9}", 2000 + i % 2) for i in range(60)]
    index = make_index(rows, {})
    questions = [{"id": f"q{i}", "question": f"what about E{i % 9} and P{i % 3}", "t_query": 2000 + i % 2,
                  "S_star": [{"s": f"E{i % 9}", "s_id": None, "r": "P0", "o": "E1"}]} for i in range(12)]
    configs = [load_config(n).replace(caps=list(caps)) for n in ("oracle", "hop3_k25") for caps in ([2, 3, 4],)]
    configs.append(load_config("hop3_k25").replace(caps=[2, 3, 5], k=4))
    alone = [Retriever(index, c).retrieve_many(questions, keep_pool=True) for c in configs]
    shared: dict = {}
    together = [Retriever(index, c).retrieve_many(questions, keep_pool=True, shared=shared) for c in configs]
    assert any(key[0] == "hops" for key in shared)
    for a, b in zip(alone, together, strict=True):
        for (ra, sa), (rb, sb) in zip(a, b, strict=True):
            assert ra == rb
            assert sa.hop_sizes == sb.hop_sizes and sa.pool.eligible == sb.pool.eligible
            assert np.array_equal(sa.pool.rows, sb.pool.rows)
