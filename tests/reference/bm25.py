"""BM25 of SPEC §2.1-§2.2, written as literally and as slowly as the text reads.

The one slow BM25 of the tests: ``tests/retrieval/test_bm25.py`` compares the
index's float64 scores with it bit for bit, the slow retriever
(``reference.retriever``) ranks with it, and the audit tests score triples with
it. It shares no code with ``retriever/``: its own tokenizer (the regular
expression SPEC §2.1 names), Python floats, dicts and loops.

Bit-identity with the fast path is part of the contract (SPEC §2.2): each
term's contribution is
``idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))`` in float64, and
a score is the sum of the contributions from ``0.0`` in the order of each query
term's first occurrence in the query.
"""

from __future__ import annotations

import math
import re

K1 = 1.5
B = 0.75


def tokens(text: str) -> list[str]:
    """SPEC §2.1: lowercase, then every maximal match of Python's ``\\w+``."""
    return re.findall(r"\w+", text.lower())


def query_terms(query: str) -> list[str]:
    """The query's distinct tokens in order of first occurrence (SPEC §2.2: no query-term frequency)."""
    terms: list[str] = []
    for tok in tokens(query):
        if tok not in terms:
            terms.append(tok)
    return terms


def idf(n_docs: int, df: int) -> float:
    """SPEC §2.2: ``ln(1 + (N - df + 0.5) / (df + 0.5))``."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def contribution(idf_t: float, tf: float, dl: float, avgdl: float, k1: float = K1, b: float = B) -> float:
    """One query term's share of a document's score (SPEC §2.2, float64)."""
    return idf_t * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl)))


def rank_bm25_scores(corpus: list[list[str]], query: list[str], doc_ids: list[int]) -> list[float]:
    """``rank_bm25.BM25Okapi.get_batch_scores`` with SPEC §2.2's idf put in place of its own (the library's oracle).

    ``corpus``: each document's tokens; ``query``: the distinct query terms in
    order. BM25Okapi's ``k1``, ``b`` and its score arithmetic are SPEC's; only
    its idf differs (it floors negative idfs at an epsilon), so it is replaced.
    """
    from rank_bm25 import BM25Okapi

    model = BM25Okapi(corpus, k1=K1, b=B)
    df: dict[str, int] = {}
    for toks in corpus:
        for term in set(toks):
            df[term] = df.get(term, 0) + 1
    model.idf = {term: idf(model.corpus_size, n) for term, n in df.items()}
    return model.get_batch_scores(query, doc_ids)


def kg_documents(kg, entity_labels: list[str], relation_labels: list[str]) -> list[str]:
    """SPEC §2.1: one document per KG row in CSV order, ``label(s) label(r) label(o)``.

    ``kg`` is read only for its ``head``/``relation``/``tail`` arrays; the labels
    are the rendered ones (a raw id where there is no label, SPEC §1.2).
    """
    head, rel, tail = kg.head.tolist(), kg.relation.tolist(), kg.tail.tolist()
    return [f"{entity_labels[head[i]]} {relation_labels[rel[i]]} {entity_labels[tail[i]]}" for i in range(len(head))]


class SlowBM25:
    """A BM25 index over a list of document strings, straight from SPEC §2.1-§2.2.

    Attributes
    ----------
    N, avgdl:
        Number of documents, mean token count over all documents.
    df:
        Token -> number of documents containing it.
    tf, doc_len:
        Per document: token counts, token count.
    """

    def __init__(self, documents: list[str], k1: float = K1, b: float = B) -> None:
        self.k1, self.b = k1, b
        self.tf: list[dict[str, int]] = []
        self.df: dict[str, int] = {}
        for doc in documents:
            counts: dict[str, int] = {}
            for tok in tokens(doc):
                counts[tok] = counts.get(tok, 0) + 1
            self.tf.append(counts)
            for tok in counts:
                self.df[tok] = self.df.get(tok, 0) + 1
        self.N = len(documents)
        self.doc_len = [sum(c.values()) for c in self.tf]
        self.avgdl = sum(self.doc_len) / self.N
        self.idf = {t: idf(self.N, n) for t, n in self.df.items()}

    def _score_counts(self, query: str, counts: dict[str, int], dl: int) -> float:
        total = 0.0
        for t in query_terms(query):
            if t not in self.idf:  # a term absent from the corpus contributes 0
                continue
            total += contribution(self.idf[t], float(counts.get(t, 0)), dl, self.avgdl, self.k1, self.b)
        return total

    def score(self, query: str, doc: int) -> float:
        """BM25(query, document ``doc``)."""
        return self._score_counts(query, self.tf[doc], self.doc_len[doc])

    def scores(self, query: str, docs: list[int]) -> list[float]:
        """:meth:`score` of each document id in ``docs``, in that order."""
        return [self.score(query, d) for d in docs]

    def score_text(self, query: str, text: str) -> float:
        """BM25(query, any document text) with this corpus's ``N``, ``avgdl`` and ``df``.

        Scores a triple that is not a KG row (a distractor, SPEC §4) as if it
        were one more document that does not change the statistics.
        """
        counts: dict[str, int] = {}
        for tok in tokens(text):
            counts[tok] = counts.get(tok, 0) + 1
        return self._score_counts(query, counts, sum(counts.values()))
