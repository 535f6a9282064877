"""SPEC §2.2 and §2.5 for many questions at once: batched scoring and ranking equal question-by-question ones.

:meth:`BM25.score_many` scores a shard's ``(question, candidate)`` pairs in one
pass and :meth:`Ranker.rank_items_many` ranks the shard's questions together;
both must give, bit for bit and item for item, what one question alone gets
(and what a plain Python ranking of SPEC §2.5 gets): ties at the cut-off,
empty pools, queries with no term in the vocabulary or with repeated terms, a
batch of one and batches split by :data:`retriever.ranking.RANK_BATCH`.
"""

from __future__ import annotations

import math
import random
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever import ranking
from retriever.bm25 import BM25
from retriever.kg import KG
from retriever.ranking import Ranker

# few words, short labels: many equal documents and equal scores, hence ties at every cut-off
WORDS = ["river", "city", "of", "the", "born", "Paris", "école", "x"]
TEMPLATE = "{r_id}:{s_id}>{o_id} ({t}) {s}"


def make_index(seed: int, n_rows: int = 40, n_ent: int = 9, n_rel: int = 4) -> SimpleNamespace:
    rng = random.Random(seed)
    ent_labels = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3))) for _ in range(n_ent)]
    rel_labels = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 2))) for _ in range(n_rel)]
    head = np.array([rng.randrange(n_ent) for _ in range(n_rows)], dtype=np.int32)
    tail = np.array([rng.randrange(n_ent) for _ in range(n_rows)], dtype=np.int32)
    rel = np.array([rng.randrange(n_rel) for _ in range(n_rows)], dtype=np.int32)
    year = np.array([2000 + rng.randrange(3) for _ in range(n_rows)], dtype=np.int64)
    kg = KG(head, tail, rel, year, [f"Q{i}" for i in range(n_ent)], [f"P{i}" for i in range(n_rel)])
    return SimpleNamespace(kg=kg, entity_labels=ent_labels, relation_labels=rel_labels,
                           bm25=BM25.build(kg, ent_labels, rel_labels))


def bits(values) -> list[int]:
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


def plain_ranking(ranker: Ranker, terms: np.ndarray, rows: np.ndarray) -> tuple[list, list]:
    """SPEC §2.5 spelled out: every candidate scored and rendered, three stable sorts, cut at k with its ties."""
    scores = [float(ranker.bm25.score_groups(terms, ranker.bm25.doc_group[[row]])[0]) for row in rows.tolist()]
    cand = [(pos, row, ranker.line(row), score) for pos, (row, score) in enumerate(zip(rows.tolist(), scores,
                                                                                       strict=True))]
    if ranker.by_edge_id:
        cand.sort(key=lambda c: c[1])
    if ranker.reverse_lex:
        cand.sort(key=lambda c: c[2], reverse=True)
    cand.sort(key=lambda c: c[3], reverse=True)
    k = ranker.k
    cut = [c for c in cand if len(cand) <= k or c[3] >= cand[k - 1][3]]
    items = [ranker.item(row, score, line) for _pos, row, line, score in cut]
    return items[:k], items[k:]


queries = st.lists(st.one_of(
    st.lists(st.sampled_from(WORDS + ["zzz", "PARIS", "2001"]), max_size=6).map(" ".join),
    st.just(""), st.just("zzz nothing"),
), min_size=1, max_size=7)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 5), texts=queries, data=st.data())
def test_score_many_equals_one_query_at_a_time(seed, texts, data) -> None:
    bm25 = make_index(seed).bm25
    terms = [bm25.query_terms(t) for t in texts]
    # caller-given term lists may repeat a term: it is added once per occurrence
    terms += [np.asarray(data.draw(st.lists(st.integers(0, bm25.vocab_size - 1), max_size=5)), dtype=np.int64)]
    owner = np.asarray(data.draw(st.lists(st.integers(0, len(terms) - 1), max_size=60)), dtype=np.int64)
    groups = np.asarray(data.draw(st.lists(st.integers(0, bm25.group_len.shape[0] - 1), min_size=len(owner),
                                           max_size=len(owner))), dtype=np.int64)
    together = bm25.score_many(terms, owner, groups)
    for q, query in enumerate(terms):
        alone = [float(np.add.accumulate(np.array([0.0] + [bm25.score_groups(np.array([t]), groups[[i]])[0]
                                                           for t in query.tolist()]))[-1])
                 for i in np.flatnonzero(owner == q).tolist()]
        assert bits(together[owner == q]) == bits(alone)


@pytest.mark.parametrize("seed", range(6))
def test_score_many_equals_the_posting_lists_with_and_without_repeated_terms(seed) -> None:
    # group_scores weighs each term from the posting lists (no precomputed entry weights), query order kept;
    # a query without a repeated term takes score_many's one-position path, one with repeats the other
    bm25 = make_index(seed, n_rows=120).bm25
    everything = np.arange(bm25.group_len.shape[0], dtype=np.int64)
    rng = random.Random(seed)
    for _ in range(20):
        terms = rng.sample(range(bm25.vocab_size), rng.randint(1, min(5, bm25.vocab_size)))
        for query in (terms, terms + terms[::-1][: rng.randint(1, len(terms))]):
            query = np.asarray(query, dtype=np.int64)
            scored = bm25.score_many([query], np.zeros(len(everything), dtype=np.int64), everything)
            assert bits(scored) == bits(bm25.group_scores(query))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 5), texts=queries, k=st.integers(1, 6), tie_break=st.sampled_from(["reverse_lex", "pool_order"]),
       homonym_order=st.sampled_from(["pool", "edge_id"]), template=st.booleans(), batch=st.integers(1, 4),
       data=st.data())
def test_rank_items_many_equals_question_by_question(seed, texts, k, tie_break, homonym_order, template, batch,
                                                     data) -> None:
    index = make_index(seed)
    kwargs = {"line_template": TEMPLATE} if template else {}
    ranker = Ranker(index, k=k, tie_break=tie_break, homonym_order=homonym_order, **kwargs)
    n_rows = index.kg.head.shape[0]
    pools = [np.asarray(data.draw(st.lists(st.integers(0, n_rows - 1), unique=True, max_size=15)), dtype=np.int64)
             for _ in texts]  # empty pools included
    terms = [index.bm25.query_terms(t) for t in texts]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranking, "RANK_BATCH", batch)  # batches of 1 to 4 questions
        together = ranker.rank_items_many(terms, pools)
    assert together == [ranker.rank_items(t, p) for t, p in zip(terms, pools, strict=True)]
    assert together == [plain_ranking(ranker, t, p) if len(p) else ([], []) for t, p in zip(terms, pools,
                                                                                            strict=True)]


def test_rank_agrees_with_rank_items() -> None:
    index = make_index(3)
    ranker = Ranker(index, k=3)
    terms = index.bm25.query_terms("river of the city")
    rows = np.arange(index.kg.head.shape[0], dtype=np.int64)[::-1]
    ranked = ranker.rank(terms, rows)
    assert ranker.items(ranked) == ranker.rank_items(terms, rows) == plain_ranking(ranker, terms, rows)
    assert bits(ranked.scores) == bits(index.bm25.score_groups(terms, index.bm25.doc_group[rows]))



@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 30), n_rows=st.integers(1, 80), texts=queries, everywhere=st.booleans())
def test_positive_score_floor_bounds_every_positive_score(seed, n_rows, texts, everywhere) -> None:
    """:attr:`BM25.positive_score_floor` is at most every positive score (and every term weight) of the index,
    also with a word in every document (the least idf)."""
    index = make_index(seed, n_rows=n_rows)
    if everywhere:
        index.entity_labels[:] = [label + " river" for label in index.entity_labels]
        index.bm25 = BM25.build(index.kg, index.entity_labels, index.relation_labels)
    bm25 = index.bm25
    floor = bm25.positive_score_floor
    groups = np.arange(bm25.group_len.shape[0], dtype=np.int64)
    for text in texts + [" ".join(bm25.vocab)]:
        scores = bm25.score_groups(bm25.query_terms(text), groups)
        assert (scores[scores > 0] >= floor).all()
    for term in range(bm25.vocab_size):
        scores = bm25.score_groups(np.array([term]), groups)
        assert (scores[scores > 0] >= floor).all()
    assert 0 < floor < math.inf


def test_positive_score_floor_of_a_word_in_every_document_of_a_large_corpus() -> None:
    """idf = ln(1 + 0.5 / (N + 0.5)) of a word in all N documents is below 1e-4 from N = 5,000: the floor says so, and
    the shard's lines then scan their scores."""
    n = 6000
    kg = KG(np.zeros(n, dtype=np.int32), np.ones(n, dtype=np.int32), np.zeros(n, dtype=np.int32),
            np.arange(n, dtype=np.int64) % 7 + 2000, ["Q0", "Q1"], ["P0"])
    bm25 = BM25.build(kg, ["river a", "city"], ["of"])
    assert 0 < bm25.positive_score_floor < 1e-4
    weight = bm25.score_groups(bm25.query_terms("river"), np.zeros(1, dtype=np.int64))[0]
    assert bm25.positive_score_floor <= weight < 1e-4


@settings(max_examples=300, deadline=None)
@given(sizes=st.lists(st.integers(0, 40), min_size=1, max_size=8), k=st.integers(1, 12), big=st.integers(0, 9000),
       data=st.data())
def test_kth_largest_by_partition_equals_the_sorted_kth(sizes, k, big, data) -> None:
    """Each question's k-th largest score, by the padded partition or (one pool far larger) the sort, is the k-th of
    its scores sorted descending; equal scores and -0.0 included."""
    sizes = np.asarray(sizes + ([big] if big > 4200 else []), dtype=np.int64)
    values = st.sampled_from([0.0, -0.0, 0.5, 1.25, 3.0, 7.5]) | st.floats(0, 20, allow_nan=False)
    scores = np.asarray(data.draw(st.lists(values, min_size=int(sizes.sum()), max_size=int(sizes.sum()))),
                        dtype=np.float64) if big <= 4200 else np.random.default_rng(big).random(int(sizes.sum()))
    starts = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    owner = np.repeat(np.arange(len(sizes)), sizes)
    got = ranking._kth_largest(scores, owner, starts, sizes, k)
    for q, n in enumerate(sizes.tolist()):
        mine = sorted(scores[starts[q]:starts[q + 1]].tolist(), reverse=True)
        assert got[q] == (mine[k - 1] if n > k else -np.inf)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 5), texts=queries, k=st.integers(1, 6), data=st.data())
def test_known_scores_of_first_candidates_rank_as_scored_afresh(seed, texts, k, data) -> None:
    """Scores given for a pool's first candidates (rows checked, other rows ignored) rank as computed ones; what
    ``scored`` hands back is each pool's rows and scores, bit for bit."""
    index = make_index(seed)
    ranker = Ranker(index, k=k)
    n_rows = index.kg.head.shape[0]
    pools = [np.asarray(data.draw(st.lists(st.integers(0, n_rows - 1), unique=True, min_size=1, max_size=15)),
                        dtype=np.int64) for _ in texts]
    terms = [index.bm25.query_terms(t) for t in texts]
    scored: list = []
    plain = ranker.rank_items_many(terms, pools, scored=scored)
    for (rows, scores), pool, t in zip(scored, pools, terms, strict=True):
        assert rows.tolist() == pool.tolist()
        assert bits(scores) == bits(index.bm25.score_many([t], np.zeros(len(pool), dtype=np.int64),
                                                          index.bm25.doc_group[pool]))
    known = []
    for rows, scores in scored:
        kind = data.draw(st.sampled_from(["none", "prefix", "other rows", "too long"]))
        n = data.draw(st.integers(1, len(rows)))
        known.append(None if kind == "none" else (rows[:n], scores[:n]) if kind == "prefix"
                     else (rows[:n][::-1] + 1, scores[:n] + 7.0) if kind == "other rows"
                     else (np.concatenate([rows, rows]), np.concatenate([scores, scores]) + 7.0))
    assert ranker.rank_items_many(terms, pools, known=known) == plain


def test_known_scores_are_taken_not_recomputed() -> None:
    index = make_index(2)
    ranker = Ranker(index, k=3)
    terms = [index.bm25.query_terms("river of the city")]
    pool = np.arange(index.kg.head.shape[0], dtype=np.int64)
    (evidence, _), = ranker.rank_items_many(terms, [pool], known=[(pool[:2], np.array([99.0, 98.0]))])
    assert [e["score"] for e in evidence[:2]] == [99.0, 98.0]
