"""SPEC §2.1-§2.2 BM25: bit-identical to the slow reference (``reference.bm25``) and to rank_bm25 with SPEC's idf."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.bm25 import SlowBM25, query_terms, tokens
from reference.bm25 import rank_bm25_scores as rank_bm25_with_spec_idf

from retriever.bm25 import BM25, bm25_idf
from retriever.kg import KG

WORDS = ["river", "city", "of", "the", "born", "in", "Paris", "école", "straße", "東京", "2014", "a_b", "o'neil", "x-y", "İzmir"]


def make_kg(rng: random.Random, n_rows: int, n_ent: int, n_rel: int, years: int = 3):
    ent_labels = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4))) for _ in range(n_ent)]
    rel_labels = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))) for _ in range(n_rel)]
    head = np.array([rng.randrange(n_ent) for _ in range(n_rows)], dtype=np.int32)
    tail = np.array([rng.randrange(n_ent) for _ in range(n_rows)], dtype=np.int32)
    rel = np.array([rng.randrange(n_rel) for _ in range(n_rows)], dtype=np.int32)
    year = np.array([1990 + rng.randrange(years) for _ in range(n_rows)], dtype=np.int64)
    kg = KG(head, tail, rel, year, [f"Q{i}" for i in range(n_ent)], [f"P{i}" for i in range(n_rel)])
    docs = [f"{ent_labels[h]} {rel_labels[r]} {ent_labels[t]}" for h, r, t in zip(head, rel, tail, strict=True)]
    return kg, ent_labels, rel_labels, docs


def rank_bm25_scores(docs: list[str], query: str, doc_ids: list[int]) -> list[float]:
    return rank_bm25_with_spec_idf([tokens(d) for d in docs], query_terms(query), doc_ids)


def bits(values) -> list[int]:
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


def ranking(scores, ids) -> list[int]:
    return [d for _, d in sorted(zip((-s for s in scores), ids, strict=True))]


def queries(rng: random.Random, count: int) -> list[str]:
    out = ["", "nothing matches here", "Paris PARIS paris of", "İzmir straße 東京 o'neil"]
    out += [" ".join(rng.choice(WORDS + ["zzz", "Rivers"]) for _ in range(rng.randint(1, 7))) for _ in range(count)]
    return out


def check(kg, ent_labels, rel_labels, docs, qs, rng) -> None:
    index = BM25.build(kg, ent_labels, rel_labels)
    slow = SlowBM25(docs)
    assert index.N == slow.N == len(docs)
    assert index.avgdl == slow.avgdl
    assert index.doc_len.tolist() == slow.doc_len
    for query in qs:
        ids = [rng.randrange(len(docs)) for _ in range(rng.randint(0, 40))] + list(range(min(len(docs), 30)))
        ours = index.score(query, np.array(ids, dtype=np.int64))
        assert ours.dtype == np.float64
        assert bits(ours) == bits(slow.scores(query, ids)), query
        assert bits(ours) == bits(rank_bm25_scores(docs, query, ids)), query
        assert ranking(ours.tolist(), ids) == ranking(rank_bm25_scores(docs, query, ids), ids)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_rows=st.integers(1, 40), n_ent=st.integers(1, 12), n_rel=st.integers(1, 4))
def test_bit_identical_random_corpora(seed: int, n_rows: int, n_ent: int, n_rel: int) -> None:
    rng = random.Random(seed)
    kg, ent_labels, rel_labels, docs = make_kg(rng, n_rows, n_ent, n_rel)
    check(kg, ent_labels, rel_labels, docs, queries(rng, 3), rng)


def test_bit_identical_fixed_larger_case() -> None:
    rng = random.Random(20240611)
    kg, ent_labels, rel_labels, docs = make_kg(rng, 1500, 300, 12, years=20)
    check(kg, ent_labels, rel_labels, docs, queries(rng, 12), rng)


def test_full_corpus_order_matches_rank_bm25_including_ties() -> None:
    rng = random.Random(7)
    kg, ent_labels, rel_labels, docs = make_kg(rng, 400, 40, 5, years=4)
    index = BM25.build(kg, ent_labels, rel_labels)
    everything = list(range(len(docs)))
    for query in queries(rng, 6):
        expected = rank_bm25_scores(docs, query, everything)
        got_ids, got_scores = index.topk(query, len(docs))
        assert sorted(got_ids.tolist()) == everything
        assert got_ids.tolist() == ranking(expected, everything)
        assert bits(got_scores) == bits([expected[d] for d in got_ids.tolist()])
        top_ids, _ = index.topk(query, 10)
        assert top_ids.tolist() == got_ids[:10].tolist()


def test_rows_differing_only_in_year_score_identically() -> None:
    head = np.array([0, 0, 1, 0], dtype=np.int32)
    tail = np.array([1, 1, 0, 1], dtype=np.int32)
    rel = np.array([0, 0, 0, 0], dtype=np.int32)
    year = np.array([1990, 2001, 1990, 1850], dtype=np.int64)
    kg = KG(head, tail, rel, year, ["Q1", "Q2"], ["P1"])
    index = BM25.build(kg, ["Paris city", "France"], ["capital of"])
    scores = index.score("capital city of France?", [0, 1, 3, 2])
    assert bits(scores[:3]) == [bits(scores)[0]] * 3
    assert index.doc_len.tolist() == [5, 5, 5, 5]


def test_worked_example() -> None:
    """Two documents, hand-checkable: 'a b' and 'a c c' (entity 'a', relations 'b', 'c c', entity '')."""
    head = np.array([0, 0], dtype=np.int32)
    tail = np.array([1, 1], dtype=np.int32)
    rel = np.array([0, 1], dtype=np.int32)
    kg = KG(head, tail, rel, np.array([1, 2]), ["Q1", "Q2"], ["P1", "P2"])
    index = BM25.build(kg, ["a", ""], ["b", "c c"])
    assert (index.N, index.avgdl, index.vocab) == (2, 2.5, ["a", "b", "c"])
    assert index.df.tolist() == [2, 1, 1]
    assert index.idf[0] == math.log(1 + 0.5 / 2.5) and index.idf[1] == math.log(1 + 1.5 / 1.5)
    # doc 1, query "c": tf 2, dl 3 -> ln 2 * (2 * 2.5 / (2 + 1.5 * (0.25 + 0.75 * 3 / 2.5)))
    expected = math.log(2) * (2 * 2.5 / (2 + 1.5 * (0.25 + 0.75 * 3 / 2.5)))
    assert index.score("c C c", [1, 0]).tolist() == [expected, 0.0]
    assert index.query_terms("c zzz a c") .tolist() == [2, 0]
    assert bm25_idf(2, 1) == math.log(2)


def test_score_accepts_term_ids_and_rejects_bad_doc_ids() -> None:
    rng = random.Random(3)
    kg, ent_labels, rel_labels, _ = make_kg(rng, 50, 10, 3)
    index = BM25.build(kg, ent_labels, rel_labels)
    query = "the river of Paris"
    ids = np.arange(50)
    assert bits(index.score(index.query_terms(query), ids)) == bits(index.score(query, ids))
    assert index.score(query, np.zeros(0, dtype=np.int64)).shape == (0,)
    with pytest.raises(IndexError):
        index.score(query, [50])
    # term ids outside the vocabulary are refused (a negative one would index the scoring table from its end)
    for bad in ([-1], [index.vocab_size]):
        with pytest.raises(IndexError, match="term id"):
            index.score(bad, ids)
    # the scoring table is back to all -1 after every call
    assert (index._row_of_term.get() == -1).all()


def test_round_trip_arrays() -> None:
    rng = random.Random(5)
    kg, ent_labels, rel_labels, _ = make_kg(rng, 80, 15, 3)
    index = BM25.build(kg, ent_labels, rel_labels)
    again = BM25.from_arrays(index.to_arrays(), index.metadata())
    ids = np.arange(80)
    for query in ("river city", "the of in", "東京 2014"):
        assert bits(again.score(query, ids)) == bits(index.score(query, ids))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS + ["", "  ", "A", "a"]), max_size=5).map(" ".join), max_size=25),
       st.lists(st.sampled_from(WORDS), max_size=3))
def test_label_bags_are_the_labels_token_counts_in_first_use_order(labels: list[str], known: list[str]) -> None:
    from retriever.bm25 import _label_bags

    vocab = {word.lower(): i for i, word in enumerate(dict.fromkeys(w.lower() for w in known))}
    expected_vocab = dict(vocab)
    expected: list[list[tuple[int, int]]] = []
    for label in labels:  # the plain loop: tokenize each label, number new tokens as met
        counts: dict[int, int] = {}
        for token in tokens(label):
            term = expected_vocab.setdefault(token, len(expected_vocab))
            counts[term] = counts.get(term, 0) + 1
        expected.append(list(counts.items()))
    indptr, terms, tf, lengths = _label_bags(labels, vocab)
    assert vocab == expected_vocab and list(vocab) == list(expected_vocab)
    got = [list(zip(terms[a:b].tolist(), tf[a:b].tolist(), strict=True)) for a, b in zip(indptr[:-1], indptr[1:], strict=True)]
    assert got == expected
    assert lengths.tolist() == [sum(c for _, c in bag) for bag in expected]
