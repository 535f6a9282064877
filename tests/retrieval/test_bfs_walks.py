"""Property tests: the BFS's walks without caps (``reach``, ``meets``, SPEC §7's counterfactual pools) against
plain breadth-first distances over the rows that pass the filter, on random tiny KGs."""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.retriever import SlowRetriever
from reference.tiny import make_index

from retriever.bfs import BFS, PoolSummary

rows_strategy = st.lists(
    st.tuples(st.integers(0, 9), st.integers(0, 1), st.integers(0, 9), st.integers(2000, 2002)), min_size=1, max_size=40
)


def _distances(index, sources, t_query, on):
    """Breadth-first distance of every entity from any of ``sources`` over the rows passing the filter."""
    kg = index.kg
    near: dict[int, set[int]] = {}
    for r in range(kg.n_rows):
        if on and float(kg.year[r]) != t_query:
            continue
        h, t = int(kg.head[r]), int(kg.tail[r])
        near.setdefault(h, set()).add(t)
        near.setdefault(t, set()).add(h)
    dist = dict.fromkeys(sources, 0)
    todo = deque(sources)
    while todo:
        e = todo.popleft()
        for n in sorted(near.get(e, ())):
            if n not in dist:
                dist[n] = dist[e] + 1
                todo.append(n)
    return dist


def _bfs(rows):
    index = make_index([(f"E{s}", f"P{r}", f"E{o}", y) for s, r, o, y in rows], {})
    return index, BFS(index.kg, index.incidence, hops=2, caps=(1, 1), temporal_filter=True)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows_strategy, anchor=st.integers(0, 9), hops=st.integers(1, 4), on=st.booleans(),
       t_query=st.sampled_from([2000.0, 2001.0, 2002.0, 2001.5]))
def test_reach_is_the_ball_below_the_depth(rows, anchor, hops, on, t_query):
    index, bfs = _bfs(rows)
    a = index.kg.entity_index.get(f"E{anchor}")
    if a is None:
        return
    dist = _distances(index, [a], t_query, on)
    assert bfs.reach(a, t_query, temporal_filter=on, hops=hops).tolist() == sorted(e for e, d in dist.items() if d < hops)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows_strategy, questions=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 10)),
                                                        st.sampled_from([2000.0, 2001.0, 2001.5, 1950.0])),
                                              min_size=1, max_size=6),
       hops=st.integers(1, 4), on=st.booleans())
def test_reaches_of_many_questions_are_each_ones_ball(rows, questions, hops, on):
    index, bfs = _bfs(rows)
    anchors = [None if a is None else index.kg.entity_index.get(f"E{a}") for a, _ in questions]
    got = bfs.reach_many(anchors, [t for _, t in questions], temporal_filter=on, hops=hops)
    for entities, a, (_, t_query) in zip(got, anchors, questions, strict=True):
        dist = {} if a is None else _distances(index, [a], t_query, on)
        assert entities.tolist() == sorted(e for e, d in dist.items() if d < hops)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows_strategy, nodes=st.lists(st.integers(0, 9), min_size=1, max_size=3),
       targets=st.lists(st.integers(0, 9), max_size=4), steps=st.integers(1, 3), on=st.booleans(),
       t_query=st.sampled_from([2000.0, 2001.0, 2001.5]))
def test_meets_is_a_distance_test(rows, nodes, targets, steps, on, t_query):
    index, bfs = _bfs(rows)
    ids = index.kg.entity_index
    sources = sorted({ids[f"E{n}"] for n in nodes if f"E{n}" in ids})
    wanted = np.array(sorted({ids[f"E{n}"] for n in targets if f"E{n}" in ids}), dtype=np.int64)
    dist = _distances(index, sources, t_query, on)
    expected = any(dist.get(int(t), steps + 1) <= steps for t in wanted.tolist())
    got = bfs.meets(np.array(sources, dtype=np.int64), t_query, steps, wanted, temporal_filter=on)
    assert got == expected
    # the scratch marks are cleared: a second call with no targets meets nothing
    assert not bfs.meets(np.array(sources, dtype=np.int64), t_query, steps, wanted[:0], temporal_filter=on)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1), st.integers(0, 5), st.integers(2000, 2001)),
                     min_size=1, max_size=40),
       anchor=st.integers(0, 5), hops=st.integers(1, 3), caps=st.lists(st.integers(0, 6), min_size=3, max_size=3),
       on=st.booleans(), per_node=st.booleans(), unique=st.booleans(), t_query=st.sampled_from([2000.0, 2001.0]))
def test_eligible_rows_are_counted_exactly(rows, anchor, hops, caps, on, per_node, unique, t_query):
    index = make_index([(f"E{s}", f"P{r}", f"E{o}", y) for s, r, o, y in rows], {})
    kg = index.kg
    a = kg.entity_index.get(f"E{anchor}")
    if a is None:
        return
    bfs = BFS(kg, index.incidence, hops=hops, caps=caps, temporal_filter=on,
              cap_scope="per_node" if per_node else "per_hop", cap_counts="unique_triples" if unique else "rows")
    exp = bfs.expand(a, t_query, count_eligible=True)
    assert exp.pool.tolist() == bfs.expand(a, t_query).pool.tolist()
    assert_eligible_replayed(kg, exp, a, lambda r: not on or float(kg.year[r]) == t_query)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=rows_strategy, anchors=st.lists(st.integers(0, 9), min_size=1, max_size=6), hops=st.integers(1, 3),
       on=st.booleans(), t_query=st.sampled_from([2000.0, 2001.0]))
def test_pool_summaries_of_a_batch_hold_each_pool_ascending_and_its_eligible_rows(rows, anchors, hops, on, t_query):
    # expand_many sorts the batch's pools at once for the summaries, and counts the eligible rows of all the
    # questions together: each must be its own
    index = make_index([(f"E{s}", f"P{r}", f"E{o}", y) for s, r, o, y in rows], {})
    bfs = BFS(index.kg, index.incidence, hops=hops, caps=(2,) * hops, temporal_filter=on)
    ids = [index.kg.entity_index.get(f"E{a}") for a in anchors]
    kg = index.kg
    for a, exp in zip(ids, bfs.expand_many(ids, [t_query] * len(ids), count_eligible=True), strict=True):
        assert PoolSummary.of(exp).rows.tolist() == sorted(exp.pool.tolist())
        if a is not None:  # and each question's eligible rows counted as its own hops replayed count them
            assert_eligible_replayed(kg, exp, a, lambda r: not on or float(kg.year[r]) == t_query)


def assert_eligible_replayed(kg, exp, anchor, passes) -> None:
    """Replay the hops of ``exp``: each hop's eligible count is the number of rows not yet taken that are
    incident to its frontier and pass the filter (``passes(row)``)."""
    frontier, visited, seen, start = {anchor}, {anchor}, set(), 0
    for h, taken in enumerate(exp.hop_sizes):
        listed = {r for r in range(kg.n_rows) if (int(kg.head[r]) in frontier or int(kg.tail[r]) in frontier)
                  and passes(r) and r not in seen}
        assert exp.eligible[h] == len(listed)
        cand = exp.pool[start:start + taken].tolist()
        start += taken
        seen |= set(cand)
        frontier = {int(e) for r in cand for e in (kg.head[r], kg.tail[r])} - visited
        visited |= frontier


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 1), st.integers(0, 5), st.integers(2000, 2001)),
                     min_size=1, max_size=40),
       questions=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 6)),
                                    st.sampled_from([2000.0, 2001.0, 2001.5, 1990.0])), min_size=1, max_size=7),
       hops=st.integers(1, 3), caps=st.lists(st.integers(0, 6), min_size=3, max_size=3), on=st.booleans(),
       per_node=st.booleans(), unique=st.booleans())
def test_questions_expanded_together_equal_the_slow_pseudo_code_one_by_one(rows, questions, hops, caps, on, per_node,
                                                                            unique):
    """SPEC §2.4: a batch of questions (anchors absent, repeated, outside the KG's years) gives each question the
    pool, candidates, hop sizes and eligible counts of the slow reference run on it alone."""
    index = make_index([(f"E{s}", f"P{r}", f"E{o}", y) for s, r, o, y in rows], {})
    kg = index.kg
    cfg = SimpleNamespace(hops=hops, caps=tuple(caps), temporal_filter=on,
                          cap_scope="per_node" if per_node else "per_hop",
                          cap_counts="unique_triples" if unique else "rows")
    bfs = BFS(kg, index.incidence, hops=hops, caps=caps, temporal_filter=on, cap_scope=cfg.cap_scope,
              cap_counts=cfg.cap_counts)
    slow = SlowRetriever(kg, index.entity_labels, index.relation_labels)
    anchors = [None if a is None else kg.entity_index.get(f"E{a}") for a, _ in questions]
    t_queries = [t for _, t in questions]
    for counted in (False, True):
        got = bfs.expand_many(anchors, t_queries, count_eligible=counted)
        assert len(got) == len(questions)
        for exp, anchor, t_query in zip(got, anchors, t_queries, strict=True):
            assert exp.pool.tolist() == slow.raw_pool(anchor, t_query, cfg)
            assert exp.rows.tolist() == slow.pool(anchor, t_query, cfg)
            if anchor is None:
                assert exp.hop_sizes == () and exp.eligible == ()
                continue
            assert sum(exp.hop_sizes) == len(exp.pool) and len(exp.hop_sizes) == hops
            if not counted:
                assert exp.eligible == ()
                continue
            assert_eligible_replayed(kg, exp, anchor, lambda r, t_query=t_query: slow.passes(r, t_query, on))
