"""BM25 over KG rows, bit-exact to SPEC §2.1-§2.2.

Document ``i`` is KG row ``i`` with text ``label(s) + " " + label(r) + " " +
label(o)`` (rendered labels). Its tokens are the concatenation of the three
labels' tokens: the joining space is neither a word character nor, for
:meth:`str.lower`'s context rules (final sigma), case-ignorable or cased, so
tokenizing each distinct label once gives exactly ``tokenize(document)``.

Rows with the same ``(s, r, o)`` have the same document, so term statistics are
stored once per distinct triple ("group"); ``N``, ``df`` and ``avgdl`` still count
every row. With ``tf = tf(t, d)``, ``dl = |d|``::

    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    norm(d)    = k1 * (1 - b + b * dl / avgdl)
    score(q,d) = 0.0 + sum over t in dedup(tokens(q)), in first-occurrence order:
                 idf(t) * (tf * (k1 + 1) / (tf + norm(d)))

evaluated in float64 in exactly this operation order, which is what
``rank_bm25.BM25Okapi.get_batch_scores`` does with SPEC's idf: ``b * dl`` is
computed first, then ``/ avgdl``, then ``(1 - b) +``, then ``k1 *``; ``tf`` and
``dl`` are integers promoted to float64; ``idf`` uses :func:`math.log` per
distinct ``df``; ``avgdl`` is Python's ``int / int``. A term absent from the
corpus, or from a document, adds ``+0.0`` and so changes nothing.

References
----------
- S. Robertson and H. Zaragoza, "The Probabilistic Relevance Framework: BM25
  and Beyond", Foundations and Trends in Information Retrieval 3(4), 2009
  (the BM25 weight, ``k1`` and ``b``).
- C. Kamphuis, A. P. de Vries, L. Boytsov and J. Lin, "Which BM25 Do You
  Mean? A Large-Scale Reproducibility Study of Scoring Variants", ECIR 2020
  (the variants; SPEC §2.2's ``ln(1 + (N - df + 0.5) / (df + 0.5))`` is the
  Lucene IDF, which is never negative, with ATIRE/Lucene-style saturation
  ``tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from itertools import chain, pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from retriever.tokenizer import tokenize
from tempbench_core.arrays import sorted_unique, unique_inverse
from tempbench_core.scratch import ThreadScratch

if TYPE_CHECKING:  # pragma: no cover
    from retriever.kg import KG

K1 = 1.5
B = 0.75
_ARRAYS = (
    "doc_group",
    "group_len",
    "group_indptr",
    "group_terms",
    "group_tf",
    "post_indptr",
    "post_groups",
    "post_tf",
    "df",
)


def bm25_idf(n_docs: int, df: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))`` in float64 (SPEC §2.2)."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def length_norm(dl: Any, avgdl: float, k1: float = K1, b: float = B) -> Any:
    """``k1 * (1 - b + b * dl / avgdl)``: the document-length part of SPEC §2.2's denominator.

    Evaluated as ``k1 * ((1 - b) + ((b * dl) / avgdl))``, the operation order of
    ``rank_bm25``; ``dl`` may be an integer or a float64 array.
    """
    return k1 * (1 - b + b * dl / avgdl)


def term_weight(idf: Any, tf: Any, norm: Any, k1: float = K1) -> Any:
    """One query term's contribution ``idf * (tf * (k1 + 1) / (tf + norm))`` (SPEC §2.2).

    ``norm`` is :func:`length_norm` of the document; scalars or float64 arrays.
    Both scoring kernels of :class:`BM25` and :meth:`BM25.score_text` use it, so
    the three give the same float64 bits.
    """
    return idf * (tf * (k1 + 1) / (tf + norm))


class BM25:
    """BM25 index over KG rows (SPEC §2.1-§2.2); build with :meth:`build`.

    Attributes
    ----------
    N:
        Number of documents (KG rows).
    avgdl:
        Mean token count per document: ``total_tokens / N`` (Python float division).
    vocab:
        Terms, index = term id.
    vocab_size:
        ``len(vocab)``.
    idf:
        ``float64[vocab_size]``.
    doc_len:
        ``int64[N]``: token count of every document.
    k1, b:
        1.5 and 0.75 (SPEC §2.2).
    """

    def __init__(self, arrays: dict[str, np.ndarray], vocab: list[str], total_tokens: int, k1: float = K1, b: float = B):
        for name in _ARRAYS:
            setattr(self, name, arrays[name])
        self.vocab = vocab
        self.term_index = {term: i for i, term in enumerate(vocab)}
        self.total_tokens = int(total_tokens)
        self.k1 = k1
        self.b = b
        self.N = int(self.doc_group.shape[0])
        self.avgdl = self.total_tokens / self.N if self.N else 0.0
        self.idf = np.array([bm25_idf(self.N, d) for d in self.df.tolist()], dtype=np.float64) if self.N else np.zeros(0)
        dl = self.group_len.astype(np.float64)
        self.group_norm = length_norm(dl, self.avgdl, k1, b) if self.N else dl

    # -- construction -------------------------------------------------------------
    @classmethod
    def build(cls, kg: KG, entity_labels: list[str], relation_labels: list[str], k1: float = K1, b: float = B) -> BM25:
        """Index every row of ``kg`` with the rendered labels (SPEC §2.1).

        Parameters
        ----------
        kg:
            The KG; document ``i`` is row ``i``.
        entity_labels, relation_labels:
            Rendered labels, index = interned id.
        """
        vocab: dict[str, int] = {}
        # the triples are numbered by hashing and sorting arrays, which runs without the GIL: on a thread,
        # beside the labels' tokenization (Python objects)
        with ThreadPoolExecutor(1) as side:
            groups = side.submit(_row_groups, kg)
            e_bags = _label_bags(entity_labels, vocab)
            r_bags = _label_bags(relation_labels, vocab)
            doc_group, (gh, gr, gt) = groups.result()
        e_len, r_len = e_bags[3], r_bags[3]
        n_terms = len(vocab)
        n_groups = gh.shape[0]
        group_indptr, g_terms, g_tf = _group_entries((gh, e_bags), (gr, r_bags), (gt, e_bags), n_groups=n_groups,
                                                    n_terms=n_terms)
        g_owner = np.repeat(np.arange(n_groups, dtype=np.int64), np.diff(group_indptr))
        group_len = e_len[gh] + r_len[gr] + e_len[gt]
        multiplicity = np.bincount(doc_group, minlength=n_groups)
        df = np.bincount(g_terms, weights=multiplicity[g_owner], minlength=n_terms).astype(np.int64)
        del g_owner
        vocab_list = list(vocab)
        if n_terms and not df.all():
            # Labels of ids that head no document (possible for a hand-built KG)
            # must not put terms with df = 0 into the vocabulary.
            keep = df > 0
            new_id = np.cumsum(keep) - 1
            g_terms = new_id[g_terms]
            df = df[keep]
            vocab_list = [term for term, kept in zip(vocab_list, keep.tolist(), strict=True) if kept]
            n_terms = len(vocab_list)
        post_indptr, post_groups, post_tf = _transposed(group_indptr, g_terms, g_tf, n_terms)
        arrays = {
            "doc_group": doc_group,
            "group_len": group_len.astype(np.int64),
            "group_indptr": group_indptr,
            "group_terms": g_terms.astype(np.int32, copy=False),
            "group_tf": g_tf.astype(np.int32, copy=False),
            "post_indptr": post_indptr,
            "post_groups": post_groups,
            "post_tf": post_tf,
            "df": df,
        }
        total_tokens = int(np.dot(multiplicity.astype(np.int64), group_len.astype(np.int64)))
        return cls(arrays, vocab_list, total_tokens, k1=k1, b=b)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays needed to rebuild this index with :meth:`from_arrays`."""
        return {name: getattr(self, name) for name in _ARRAYS}

    def metadata(self) -> dict[str, Any]:
        """JSON-serialisable scalars and the vocabulary."""
        return {"vocab": self.vocab, "total_tokens": self.total_tokens, "k1": self.k1, "b": self.b}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray], metadata: dict[str, Any]) -> BM25:
        """Inverse of :meth:`to_arrays` + :meth:`metadata`."""
        return cls(arrays, list(metadata["vocab"]), int(metadata["total_tokens"]), metadata["k1"], metadata["b"])

    # -- statistics ---------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        """Number of distinct terms in the corpus."""
        return len(self.vocab)

    @cached_property
    def group_nterms(self) -> np.ndarray:
        """``int64[n_groups]``: number of distinct terms of each group."""
        return np.diff(self.group_indptr)

    @cached_property
    def _row_of_term(self) -> ThreadScratch:
        """Scratch of :meth:`score_many`: ``int32[vocab_size]`` per thread, all -1 between calls."""
        return ThreadScratch(self.vocab_size, np.int32, -1)

    @cached_property
    def positive_score_floor(self) -> float:
        """A lower bound of every positive score this index can give (``inf`` when none can be positive).

        A score is a running sum of non-negative term weights (the idf is
        never negative), and a float sum of non-negative numbers is at least
        its largest addend, so a positive score is at least the least positive
        weight. ``idf * (tf (k1 + 1) / (tf + norm))`` grows with ``tf`` and the
        idf and shrinks with ``norm``: every weight of a term in a document is
        at least its value at ``tf = 1``, the least idf of a term in the corpus
        and the greatest length norm. That value is computed in float64 (a few
        roundings, each relative error below ``2**-52``) and returned less a
        relative margin of ``1e-9``, far above those. ``0.0`` (no bound) for
        parameters outside the derivation (``k1 <= 0``, a norm not positive).
        Computed once per index: two reductions over the terms and the groups.
        """
        present = self.df > 0
        if not present.any():
            return math.inf
        norm_max = float(self.group_norm.max())
        if not (self.k1 > 0 and float(self.group_norm.min()) > 0 and math.isfinite(norm_max)):
            return 0.0
        least = float(term_weight(float(self.idf[present].min()), 1.0, norm_max, self.k1))
        return least * (1 - 1e-9) if math.isfinite(least) and least > 0 else 0.0

    @cached_property
    def doc_len(self) -> np.ndarray:
        """``int64[N]`` token count of every document."""
        return self.group_len[self.doc_group]

    def doc_terms(self, doc_id: int) -> dict[str, int]:
        """Term frequencies of one document (for inspection and tests)."""
        g = int(self.doc_group[doc_id])
        lo, hi = self.group_indptr[g], self.group_indptr[g + 1]
        return {self.vocab[t]: int(f) for t, f in zip(self.group_terms[lo:hi].tolist(), self.group_tf[lo:hi].tolist(), strict=True)}

    # -- scoring ------------------------------------------------------------------
    def query_terms(self, text: str) -> np.ndarray:
        """Term ids of ``tokenize(text)``, deduplicated in first-occurrence order, absent terms dropped."""
        seen: set[str] = set()
        out = []
        for token in tokenize(text):
            if token not in seen:
                seen.add(token)
                term = self.term_index.get(token)
                if term is not None:
                    out.append(term)
        return np.asarray(out, dtype=np.int64)

    def _terms(self, query: str | np.ndarray | list[int]) -> np.ndarray:
        if isinstance(query, str):
            return self.query_terms(query)
        terms = np.asarray(query, dtype=np.int64).reshape(-1)
        if terms.size and (terms.min() < 0 or terms.max() >= self.vocab_size):
            raise IndexError(f"term id out of range [0, {self.vocab_size})")
        return terms

    def score(self, query: str | np.ndarray | list[int], doc_ids: np.ndarray | list[int]) -> np.ndarray:
        """BM25 scores of ``doc_ids`` for ``query`` (SPEC §2.2), aligned with ``doc_ids``.

        Parameters
        ----------
        query:
            Question text, or term ids already in the order to sum (see
            :meth:`query_terms`).
        doc_ids:
            Any integer array of row ids (repeats and any order allowed).

        Returns
        -------
        numpy.ndarray
            ``float64``, bit-identical to ``rank_bm25`` with SPEC's idf.
        """
        terms = self._terms(query)
        docs = np.asarray(doc_ids, dtype=np.int64).reshape(-1)
        if docs.size and (docs.min() < 0 or docs.max() >= self.N):
            raise IndexError(f"document id out of range [0, {self.N})")
        return self.score_groups(terms, self.doc_group[docs])

    def score_groups(self, terms: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Scores of ``groups`` (distinct-triple ids, e.g. ``doc_group[rows]``; any order,
        repeats allowed) for the ``int64`` term ids ``terms``, unchecked (see :meth:`score`).

        :meth:`score_many` of one query: a term repeated in ``terms`` is added
        once per occurrence.
        """
        return self.score_many([terms], np.zeros(groups.shape[0], dtype=np.int64), groups)

    def score_many(self, queries: Sequence[np.ndarray], owner: np.ndarray, groups: np.ndarray) -> np.ndarray:
        """Scores of ``groups[i]`` for the query ``queries[owner[i]]``, many queries in one pass (SPEC §2.2).

        Ranking a shard's questions one at a time costs some forty small
        numpy calls per question; this scores every ``(question, candidate)``
        pair of the shard at once, with the arithmetic of one question alone.

        Parameters
        ----------
        queries:
            ``int64`` term ids of each query in the order to sum (see
            :meth:`query_terms`), unchecked; a repeated term is added once per
            occurrence.
        owner:
            ``int64``: the query of each entry of ``groups``.
        groups:
            Distinct-triple ids (e.g. ``doc_group[rows]``), any order, repeats allowed.

        Returns
        -------
        numpy.ndarray
            ``float64`` aligned with ``groups``. Only the query's own
            ``(term, document)`` matches are weighed (the cost follows the
            candidates' term slices, not the posting lists), each with
            :func:`term_weight`; they are added to ``0.0`` query position by
            position, in query order. A term absent from a document would add
            ``+0.0``, which leaves a sum of non-negative floats unchanged, so
            skipping it keeps the bits of ``rank_bm25``'s sum.
        """
        n = groups.shape[0]
        scores = np.zeros(n, dtype=np.float64)
        sizes = np.fromiter(map(len, queries), dtype=np.int64, count=len(queries))
        if n == 0 or not sizes.any():
            return scores
        terms = np.concatenate(queries).astype(np.int64, copy=False)
        # the batch's distinct terms, each query term's (query, distinct term) cell, and each cell's query
        # positions (a term repeated in a caller-given query has several)
        distinct = sorted_unique(terms)
        column = self._row_of_term.get()
        column[distinct] = np.arange(distinct.shape[0])
        try:
            # slot[q * width + c]: the number of the cell (query q, distinct term c), -1 for none; a last
            # column of -1 stands for the terms of no query (column -1 wraps to the previous row's last
            # column, and to the last row's for q = 0), so no entry needs a test before its look-up
            width = distinct.shape[0] + 1
            cells, inverse = unique_inverse(np.repeat(np.arange(len(queries), dtype=np.int64), sizes) * width
                                            + column[terms])
            slot = np.full(len(queries) * width, -1, dtype=np.int64)
            slot[cells] = np.arange(cells.shape[0])
            # every candidate's (term, tf) entries, kept where the term is one of its own query's
            lengths = self.group_nterms[groups]
            flat = _ranges(self.group_indptr[groups], lengths)
            entry_slot = slot[np.repeat(owner * width, lengths) + column[self.group_terms[flat]]]
        finally:
            column[distinct] = -1
        n_positions = np.bincount(inverse, minlength=cells.shape[0])
        position = np.arange(terms.shape[0], dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        positions = position[np.argsort(inverse, kind="stable")]  # each cell's positions, ascending
        hit = np.flatnonzero(entry_slot >= 0)
        doc = np.repeat(np.arange(n, dtype=np.int64), lengths)[hit]  # each entry's candidate
        entry_slot = entry_slot[hit]
        # weighed here for the entries hit, not once for every entry of the index: on a 10M-row KG the
        # whole array cost more time and memory than a run of 2,000 questions saves with it
        flat = flat[hit]
        weight = term_weight(self.idf[self.group_terms[flat]], self.group_tf[flat].astype(np.float64),
                             self.group_norm[groups[doc]], self.k1)
        if n_positions.max() == 1:  # no query repeats a term (query_terms deduplicates): one position per entry
            at = positions[entry_slot]
        else:  # one (entry, position) pair per query position of the entry's term
            first = np.cumsum(n_positions) - n_positions
            count = n_positions[entry_slot]
            at = positions[_ranges(first[entry_slot], count)]
            pair = np.repeat(np.arange(entry_slot.shape[0], dtype=np.int64), count)
            doc, weight = doc[pair], weight[pair]
        _add_in_query_order(scores, at, doc, weight, int(sizes.max()))
        return scores

    def group_scores(self, query: str | np.ndarray | list[int]) -> np.ndarray:
        """Dense ``float64`` scores of every distinct ``(s, r, o)`` group (same arithmetic as :meth:`score`)."""
        terms = self._terms(query)
        scores = np.zeros(self.group_len.shape[0], dtype=np.float64)
        for term in terms.tolist():
            lo, hi = self.post_indptr[term], self.post_indptr[term + 1]
            groups = self.post_groups[lo:hi]
            tf = self.post_tf[lo:hi].astype(np.float64)
            scores[groups] += term_weight(self.idf[term], tf, self.group_norm[groups], self.k1)
        return scores

    def score_text(self, query: str | np.ndarray | list[int], document: str) -> float:
        """BM25 of ``query`` against any document text, with this corpus's ``N``, ``df`` and ``avgdl``.

        ``tf`` and ``dl`` are counted on ``tokenize(document)``; the sum runs from
        ``0.0`` over the query's terms in first-occurrence order (SPEC §2.2). For
        the text of a KG row's document this equals ``score(query, [row])`` bit
        for bit; a text that is no row (a benchmark triple absent from the KG) is
        scored all the same.
        """
        tokens = tokenize(document)
        tf = Counter(tokens)
        norm = length_norm(len(tokens), self.avgdl, self.k1, self.b)
        total = 0.0
        for term in self._terms(query).tolist():
            total += float(term_weight(self.idf[term], tf.get(self.vocab[term], 0), norm, self.k1))
        return total

    def topk(self, query: str | np.ndarray | list[int], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``min(k, N)`` best documents over the whole corpus.

        Order: score descending, ties by ascending document id; when fewer than
        ``k`` documents score above zero, zero-score documents follow in id order.

        Returns
        -------
        (doc_ids, scores)
            ``int64`` and ``float64`` arrays.
        """
        k = max(0, min(int(k), self.N))
        row_scores = self.group_scores(query)[self.doc_group]
        positive = np.flatnonzero(row_scores > 0)
        order = positive[np.lexsort((positive, -row_scores[positive]))][:k]
        if order.shape[0] < k:
            mask = np.ones(self.N, dtype=bool)
            mask[positive] = False
            order = np.concatenate([order, np.flatnonzero(mask)[: k - order.shape[0]]])
        return order.astype(np.int64), row_scores[order]


def _row_groups(kg: KG) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Each row's group (its distinct ``(head, relation, tail)``) and each group's three ids, in ``int64``.

    Rows of one triple at several times have the same text (SPEC §2.1), so
    the index stores one bag of words per group.
    """
    head = kg.head.astype(np.int64)
    rel = kg.relation.astype(np.int64)
    tail = kg.tail.astype(np.int64)
    key = (head * max(kg.n_relations, 1) + rel) * max(kg.n_entities, 1) + tail
    if not len(key):
        return key, (head, rel, tail)
    import pandas as pd  # a hash table numbers the triples faster than np.unique's sort of every row

    # np.unique(key, return_index=True, return_inverse=True), from the distinct keys alone:
    # groups are numbered in key order, and a group's row is its first
    codes, distinct = pd.factorize(key, sort=False)
    del key  # temporaries are dropped as soon as they are used: a 10M-row KG builds in 4 GB
    codes = codes.astype(np.int64, copy=False)
    order = np.argsort(distinct)
    rank = np.empty(len(distinct), dtype=np.int64)
    rank[order] = np.arange(len(distinct), dtype=np.int64)
    doc_group = rank[codes]
    # codes number the keys in order of first appearance: a row is its key's first where its code is new
    new = np.empty(len(codes), dtype=bool)
    new[0] = True
    np.greater(codes[1:], np.maximum.accumulate(codes)[:-1], out=new[1:])
    first = np.flatnonzero(new)[order]
    return doc_group, (head[first], rel[first], tail[first])


_Bags = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # :func:`_label_bags`: indptr, terms, tf, lengths


def _group_entries(*labels: tuple[np.ndarray, _Bags], n_groups: int, n_terms: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The groups' bags of words in CSR form: ``(indptr, term, tf)``, each group's terms ascending.

    ``labels``: per part of the triple, each group's id and the bags of that
    id space. A term in two of the three labels becomes one entry, its
    counts summed: each group's entries are its parts' bags one after the
    other, and the group x term matrix they make, with repeated entries, is
    put in its canonical form by SciPy (``sum_duplicates``: each group's
    terms sorted, the repeats added).
    """
    from scipy.sparse import csr_matrix

    # every part's bags in one store; each group's parts side by side (group-major)
    sizes = [int(terms.shape[0]) for _, (_, terms, _, _) in labels]
    offsets = np.cumsum([0, *sizes[:-1]])
    starts = np.stack([ptr[ids] + offset for (ids, (ptr, _, _, _)), offset in zip(labels, offsets, strict=True)],
                      axis=1).reshape(-1)
    lengths = np.stack([ptr[ids + 1] - ptr[ids] for ids, (ptr, _, _, _) in labels], axis=1)
    indptr = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(lengths.sum(axis=1), out=indptr[1:])
    index = _ranges(starts, lengths.reshape(-1))
    del starts, lengths
    terms = np.concatenate([terms for _, (_, terms, _, _) in labels]).astype(np.int32)[index]
    tfs = np.concatenate([tfs for _, (_, _, tfs, _) in labels]).astype(np.int32)[index]
    del index
    bags = csr_matrix((tfs, terms, indptr), shape=(n_groups, n_terms))
    bags.sum_duplicates()
    return bags.indptr.astype(np.int64), bags.indices, bags.data


def _transposed(indptr: np.ndarray, terms: np.ndarray, tfs: np.ndarray, n_terms: int
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The postings of the groups' bags ``(indptr, terms, tfs)``: ``(post_indptr, groups, tf)``, groups ascending.

    The transpose of the group x term matrix (SciPy's ``tocsc``: a counting
    sort by term that keeps the groups in order).
    """
    from scipy.sparse import csr_matrix

    postings = csr_matrix((tfs, terms, indptr), shape=(indptr.shape[0] - 1, n_terms)).tocsc()
    return (postings.indptr.astype(np.int64), postings.indices.astype(np.int64), postings.data.astype(np.int32))


def _label_bags(labels: list[str], vocab: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """CSR bag of words per label, ``(indptr, terms, tf, lengths)``; ``vocab`` grows by the labels' new tokens.

    Each distinct label string is tokenized once, in order of first use, so
    terms get their ids in the order a label-by-label pass would give them.
    A label's bag lists its distinct terms in order of first occurrence.
    """
    # each distinct label string -> its number, in order of first use
    distinct = dict.fromkeys(labels)
    where = dict(zip(distinct, range(len(distinct)), strict=True))
    tokens = [tokenize(label) for label in where]
    counts = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    flat = list(chain.from_iterable(tokens))
    for token in dict.fromkeys(flat):
        vocab.setdefault(token, len(vocab))
    term = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
    owner = np.repeat(np.arange(len(tokens), dtype=np.int64), counts)
    # one entry per (label, term), at the term's first occurrence in the label, with its count
    _, first, inverse = np.unique(owner * max(len(vocab), 1) + term, return_index=True, return_inverse=True)
    tf = np.bincount(inverse.reshape(-1), minlength=len(first)).astype(np.int64)
    order = np.argsort(first, kind="stable")
    first, tf = first[order], tf[order]
    bag_terms = term[first]
    bag_ptr = np.zeros(len(tokens) + 1, dtype=np.int64)
    np.cumsum(np.bincount(owner[first], minlength=len(tokens)), out=bag_ptr[1:])
    # every label is its distinct string's bag
    of = np.fromiter(map(where.__getitem__, labels), dtype=np.int64, count=len(labels))
    sizes = bag_ptr[of + 1] - bag_ptr[of]
    indptr = np.zeros(len(labels) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    take = _ranges(bag_ptr[of], sizes)
    return indptr, bag_terms[take], tf[take], counts[of]


def _add_in_query_order(scores: np.ndarray, position: np.ndarray, doc: np.ndarray, weight: np.ndarray,
                        n_positions: int) -> None:
    """``scores[doc[i]] += weight[i]``, one query position (``position[i] < n_positions``) after the other.

    This is SPEC §2.2's running sum ``((0.0 + c[0]) + c[1]) + ...`` in query
    order for every document at once. A document has at most one weight per
    position, so each indexed ``+=`` is a plain elementwise add.
    """
    # a stable sort of small integers is a radix sort
    by_position = np.argsort(position.astype(np.min_scalar_type(n_positions)), kind="stable")
    bounds = np.searchsorted(position[by_position], np.arange(n_positions + 1)).tolist()
    for lo, hi in pairwise(bounds):
        if hi > lo:
            part = by_position[lo:hi]
            scores[doc[part]] += weight[part]


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ``arange(starts[i], starts[i] + lengths[i])`` without a Python loop."""
    if lengths.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    total = int(ends[-1])
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.arange(total, dtype=np.int64) + np.repeat(starts - (ends - lengths), lengths)
