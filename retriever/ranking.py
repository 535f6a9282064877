"""Ranking of the candidate pool (SPEC §2.5).

Every deduplicated candidate row is scored by BM25(question, its document)
(the document of row ``i`` is row ``i``, SPEC §2.1-§2.2) and rendered as one
evidence line. Order (default):

1. score descending;
2. among equal scores, the rendered line in *reverse* Python string order
   (code points): the line that sorts last comes first (fixed);
3. identical lines keep pool order (decision; option ``homonym_order="edge_id"``).

The questions of a shard are ranked together (:meth:`Ranker.rank_items_many`):
one BM25 pass scores all their candidates (:meth:`BM25.score_many
<retriever.bm25.BM25.score_many>`; scores a caller already has for a pool's
first candidates are taken), a partition finds each question's k-th largest
score, which selects what can be returned or tie at the cut-off, and one
stable sort orders only those by question, score descending and base order
(pool position, or edge id): the order a sort of every candidate gives them.
Only they are rendered, and only runs of equal scores are then sorted by
line, descending (``sorted(..., reverse=True)`` is stable, so identical lines
keep the base order). What is left per question is Python work on its
returned lines and items, their labels gathered column by column.

The result keeps each returned item's score and ``cutoff_ties``: candidates
scoring exactly the k-th returned score that fell below the cut-off, in rank
order (SPEC §6.1); the cut-off tie group of §3.5 is the returned items with
that score plus these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from operator import itemgetter
from typing import Any

import numpy as np

from retriever.config import DEFAULTS
from retriever.strings import as_list
from tempbench_core.schema import format_span


@dataclass(frozen=True)
class Ranked:
    """Ranked candidates of one question: positions into the candidate array."""

    order: np.ndarray  # candidate positions of the returned items, rank order
    ties: np.ndarray  # candidate positions of cutoff_ties, rank order
    scores: np.ndarray  # score of every candidate
    lines: dict[int, str]  # rendered line of every candidate in order or ties
    info: dict[int, tuple]  # position -> (row, head, relation, tail, year, score, line)


#: Candidate rows of a question and their scores, in pool order.
Scored = tuple[np.ndarray, np.ndarray]

#: Questions ranked together by :meth:`Ranker.rank_items_many` (a shard's worth, SPEC §2.5).
RANK_BATCH = 250


@dataclass(frozen=True)
class Cut:
    """What :meth:`Ranker._cut` keeps of a batch of questions' pools (SPEC §2.5).

    Attributes
    ----------
    scores:
        Score of every candidate, the questions' pools concatenated.
    kept:
        Indices into ``scores`` of the candidates that can be returned or tie
        at the cut-off, in rank order, question after question.
    bounds:
        ``n_questions + 1`` offsets: each question's part of ``kept``.
    rows, heads, relations, tails:
        Row id, head, relation and tail of each of ``kept`` (arrays).
    years, score_list, lines:
        Year, score and rendered line of each of ``kept`` (plain lists).
    labels:
        Rendered labels ``(s, r, o)`` of each of ``kept`` (plain lists).
    runs:
        ``[lo, hi)`` ranges of ``kept`` holding one question's candidates of
        one score, still in base order: sorting each by line, descending,
        gives the rank order (empty without the line tie-break).
    """

    scores: np.ndarray
    kept: np.ndarray
    bounds: list[int]
    rows: np.ndarray
    heads: np.ndarray
    relations: np.ndarray
    tails: np.ndarray
    years: list[int]
    score_list: list[float]
    labels: tuple[list[str], list[str], list[str]]
    lines: list[str]
    runs: list[tuple[int, int]]

    @property
    def columns(self) -> tuple[list, ...]:
        """``(row, head, relation, tail, year, score, line)`` lists aligned with ``kept``."""
        return (self.rows.tolist(), self.heads.tolist(), self.relations.tolist(), self.tails.tolist(), self.years,
                self.score_list, self.lines)


class Ranker:
    """Scores, renders, sorts and cuts (SPEC §2.5).

    Parameters
    ----------
    index:
        :class:`retriever.index.KGIndex` (``kg``, ``entity_labels``,
        ``relation_labels``, ``bm25``).
    k:
        Cut-off.
    line_template:
        ``str.format`` template with fields ``s r o t s_id r_id o_id t_start t_end``.
    tie_break:
        ``"reverse_lex"`` (fixed default) or ``"pool_order"``.
    homonym_order:
        ``"pool"`` (decision default) or ``"edge_id"``.
    """

    def __init__(self, index, k: int = DEFAULTS.k, line_template: str = DEFAULTS.line_template,
                 tie_break: str = DEFAULTS.tie_break, homonym_order: str = DEFAULTS.homonym_order) -> None:
        kg = index.kg
        self.kg = kg
        self.head = kg.head
        self.tail = kg.tail
        self.relation = kg.relation
        self.year = kg.year
        # every candidate's line is rendered (the tie-break compares them): plain lists, indexed at C speed
        self.entity_ids = as_list(kg.entity_ids)
        self.relation_ids = as_list(kg.relation_ids)
        self.entity_labels = as_list(index.entity_labels)
        self.relation_labels = as_list(index.relation_labels)
        # the same as object arrays: a batch's labels and ids are gathered by numpy, not one list index at a time
        self._entity_ids = _objects(self.entity_ids)
        self._relation_ids = _objects(self.relation_ids)
        self._entity_labels = _objects(self.entity_labels)
        self._relation_labels = _objects(self.relation_labels)
        self.bm25 = index.bm25
        self.k = int(k)
        self.template = line_template
        self.reverse_lex = tie_break == "reverse_lex"
        self.by_edge_id = homonym_order == "edge_id"
        # the default template needs only labels and the year: a faster path
        self._default_template = line_template == DEFAULTS.line_template

    def _line(self, h: int, r: int, t: int, y: int) -> str:
        if self._default_template:
            return f"{self.entity_labels[h]} | {self.relation_labels[r]} | {self.entity_labels[t]} | {y}"
        return self.template.format(
            s=self.entity_labels[h], r=self.relation_labels[r], o=self.entity_labels[t], t=format_span(y, y),
            s_id=self.entity_ids[h], r_id=self.relation_ids[r], o_id=self.entity_ids[t], t_start=y, t_end=y,
        )

    def line(self, row: int) -> str:
        """Rendered evidence line of KG row ``row``."""
        return self._line(int(self.head[row]), int(self.relation[row]), int(self.tail[row]), int(self.year[row]))

    def _terms(self, query_terms: Any) -> np.ndarray:
        """Term ids of a query given as text or as term ids (SPEC §2.2)."""
        if isinstance(query_terms, str):
            return self.bm25.query_terms(query_terms)
        return np.asarray(query_terms, dtype=np.int64).reshape(-1)

    def _cut(self, queries: Sequence[Any], pools: Sequence[np.ndarray],
             known: Sequence[Scored | None] | None = None) -> Cut:
        """The candidates of each question that can be returned or tie at the cut-off, in rank order.

        The questions' pools are scored together (:meth:`BM25.score_many
        <retriever.bm25.BM25.score_many>`); only candidates scoring at least
        the question's k-th largest score (:func:`_kth_largest`) can be
        returned or tie at the cut-off (SPEC §2.5), so only they are put in
        rank order but for the line tie-break, by one stable sort by question,
        score descending and base order (pool position, or edge id), rendered
        and, among equal scores, sorted by line. ``known``: as in
        :meth:`rank_items_many`.
        """
        bm25, k = self.bm25, self.k
        sizes = np.fromiter(map(len, pools), dtype=np.int64, count=len(pools))
        starts = np.zeros(len(pools) + 1, dtype=np.int64)
        np.cumsum(sizes, out=starts[1:])
        rows = np.concatenate(pools).astype(np.int64, copy=False) if len(pools) else np.zeros(0, dtype=np.int64)
        owner = np.repeat(np.arange(len(pools), dtype=np.int64), sizes)
        terms = [self._terms(q) for q in queries]
        have = None if known is None else _known_scores(pools, starts, known)
        if have is None:
            scores = bm25.score_many(terms, owner, bm25.doc_group[rows])
        else:  # a score is a function of the query and the row alone (score_many's pairs are independent)
            scores, todo = have
            scores[todo] = bm25.score_many(terms, owner[todo], bm25.doc_group[rows[todo]])
        # only what reaches its question's k-th largest score is put in rank order (a partition finds that score)
        at = np.flatnonzero(scores >= _kth_largest(scores, owner, starts, sizes, k)[owner])  # pool order
        if self.by_edge_id:
            kept = at[np.lexsort((rows[at], -scores[at], owner[at]))]  # stable: equal keys keep pool order
        else:
            # np.lexsort((-scores, owner)) in two stable sorts: the questions' key fits a small integer type,
            # whose stable sort is a radix sort (a merge sort for lexsort's int64)
            by_score = at[np.argsort(-scores[at], kind="stable")]
            kept = by_score[np.argsort(owner.astype(np.min_scalar_type(len(pools)))[by_score], kind="stable")]
        bounds = np.zeros(len(pools) + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner[kept], minlength=len(pools)), out=bounds[1:])
        sel = rows[kept]
        heads, rels, tails = self.head[sel], self.relation[sel], self.tail[sel]
        years = self.year[sel].tolist()
        labels = (self._entity_labels[heads].tolist(), self._relation_labels[rels].tolist(),
                  self._entity_labels[tails].tolist())
        runs = _tie_runs(scores[kept], owner[kept]) if self.reverse_lex else []
        return Cut(scores, kept, bounds.tolist(), sel, heads, rels, tails, years, scores[kept].tolist(), labels,
                   self._lines(labels, heads, rels, tails, years), runs)

    def _lines(self, labels: tuple[list[str], list[str], list[str]], heads: np.ndarray, rels: np.ndarray,
               tails: np.ndarray, years: list[int]) -> list[str]:
        """Rendered evidence lines of the given candidates (their labels, as lists, and their ids, as arrays)."""
        if self._default_template:
            return [f"{s} | {r} | {o} | {y}" for s, r, o, y in zip(*labels, years, strict=True)]
        return [self._line(h, r, t, y) for h, r, t, y in zip(heads.tolist(), rels.tolist(), tails.tolist(), years,
                                                             strict=True)]

    def rank(self, query_terms: Any, rows: np.ndarray) -> Ranked:
        """Rank candidate ``rows`` (pool order) for the query terms."""
        if len(rows) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return Ranked(empty, empty, np.zeros(0), {}, {})
        cut = self._cut([query_terms], [np.asarray(rows, dtype=np.int64)])
        k = self.k
        cand = list(zip(cut.kept.tolist(), *cut.columns, strict=True))
        _sort_runs(cand, cut.runs, itemgetter(7))
        ranked = [c[0] for c in cand]
        return Ranked(np.asarray(ranked[:k], dtype=np.int64), np.asarray(ranked[k:], dtype=np.int64), cut.scores,
                      {c[0]: c[7] for c in cand}, {c[0]: c[1:] for c in cand})

    def items(self, ranked: Ranked) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Evidence items and ``cutoff_ties`` items (SPEC §6.1) of a ranking."""
        info = ranked.info
        return (self._items(map(info.__getitem__, ranked.order.tolist())),
                self._items(map(info.__getitem__, ranked.ties.tolist())))

    def rank_items(self, query_terms: Any, rows: np.ndarray) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``items(rank(query_terms, rows))`` without the intermediate :class:`Ranked`."""
        return self.rank_items_many([query_terms], [rows])[0]

    def rank_items_many(self, queries: Sequence[Any], pools: Sequence[np.ndarray],
                        known: Sequence[Scored | None] | None = None, scored: list[Scored] | None = None
                        ) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
        """:meth:`rank_items` of each ``(query, pool)``, the questions ranked together.

        Batches of :data:`RANK_BATCH` questions bound the memory of the
        joint scoring; the result does not depend on the batching.

        ``known``: optionally, per question, ``(rows, scores)`` of candidates
        scored before for the same query by this index (``None``: none); when
        those rows are the first candidates of its pool, their scores are
        taken instead of computed again. ``scored``: a list that receives, per
        question, its pool's ``(rows, scores)``, to be given as ``known`` later.
        """
        out: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
        k = self.k
        for lo in range(0, len(pools), RANK_BATCH):
            batch = [np.asarray(rows, dtype=np.int64).reshape(-1) for rows in pools[lo : lo + RANK_BATCH]]
            cut = self._cut(queries[lo : lo + RANK_BATCH], batch, None if known is None else known[lo : lo + RANK_BATCH])
            if scored is not None:
                at = 0
                for rows in batch:
                    scored.append((rows, cut.scores[at : at + len(rows)]))
                    at += len(rows)
            items = self._cut_items(cut)
            _sort_runs(items, cut.runs, itemgetter("line"))
            for a, b in pairwise(cut.bounds):
                out.append((items[a : min(a + k, b)], items[min(a + k, b) : b]))
        return out

    def _items(self, infos: Any) -> list[dict[str, Any]]:
        """The dicts of :meth:`_item` for ``(row, head, relation, tail, year, score, line)`` tuples, inlined."""
        el, rl, eid, rid = self.entity_labels, self.relation_labels, self.entity_ids, self.relation_ids
        return [{"s": el[h], "r": rl[r], "o": el[t], "s_id": eid[h], "r_id": rid[r], "o_id": eid[t],
                 "t_start": y, "t_end": y, "score": score, "line": line}
                for _row, h, r, t, y, score, line in infos]

    def _cut_items(self, cut: Cut) -> list[dict[str, Any]]:
        """The dicts of :meth:`_item` for every candidate a :class:`Cut` kept, in its order.

        The labels and ids are gathered column by column (object arrays), so
        the per-item Python work is the dict alone.
        """
        s, r, o = cut.labels
        s_id = self._entity_ids[cut.heads].tolist()
        r_id = self._relation_ids[cut.relations].tolist()
        o_id = self._entity_ids[cut.tails].tolist()
        return [{"s": s_, "r": r_, "o": o_, "s_id": a, "r_id": b, "o_id": c, "t_start": y, "t_end": y,
                 "score": score, "line": line}
                for s_, r_, o_, a, b, c, y, score, line in zip(s, r, o, s_id, r_id, o_id, cut.years, cut.score_list,
                                                               cut.lines, strict=True)]

    def _item(self, row: int, h: int, r: int, t: int, y: int, score: float, line: str) -> dict[str, Any]:
        return {
            "s": self.entity_labels[h], "r": self.relation_labels[r], "o": self.entity_labels[t],
            "s_id": self.entity_ids[h], "r_id": self.relation_ids[r], "o_id": self.entity_ids[t],
            "t_start": y, "t_end": y, "score": score, "line": line,
        }

    def item(self, row: int, score: float, line: str) -> dict[str, Any]:
        """One evidence item of a run record (SPEC §6.1)."""
        h, r, t, y = int(self.head[row]), int(self.relation[row]), int(self.tail[row]), int(self.year[row])
        return self._item(row, h, r, t, y, float(score), line)


def _known_scores(pools: Sequence[np.ndarray], starts: np.ndarray, known: Sequence[Scored | None]
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """The batch's scores where ``known`` gives them (a question's first candidates, when they are its known rows;
    0.0 elsewhere) and the positions still to score; ``None`` when nothing is known."""
    scores = np.zeros(int(starts[-1]))
    todo = np.ones(int(starts[-1]), dtype=bool)
    found = False
    for i, (pool, given) in enumerate(zip(pools, known, strict=True)):
        if given is None:
            continue
        rows, values = given
        n = len(rows)
        if 0 < n <= len(pool) and np.array_equal(pool[:n], rows):
            at = int(starts[i])
            scores[at : at + n] = values
            todo[at : at + n] = False
            found = True
    return (scores, np.flatnonzero(todo)) if found else None


def _kth_largest(scores: np.ndarray, owner: np.ndarray, starts: np.ndarray, sizes: np.ndarray, k: int) -> np.ndarray:
    """Each question's ``k``-th largest score (``-inf`` when it has at most ``k`` candidates).

    ``scores`` are the questions' candidates' scores, question after
    question (``owner``, ``starts``, ``sizes``). The questions with more than
    ``k`` are laid out as the rows of a matrix padded with ``+inf`` and
    partitioned at ``k - 1`` on ``-scores``: the value of the k-th of a full
    sort, without sorting. When the padding would outweigh the scores (one
    pool much larger than the others), by one sort instead.
    """
    out = np.full(len(sizes), -np.inf)
    full = np.flatnonzero(sizes > k)
    if not len(full):
        return out
    if len(full) * int(sizes[full].max()) > 4 * len(scores) + 4096:
        order = np.lexsort((-scores, owner))
        out[full] = scores[order[starts[full] + k - 1]]
        return out
    row = np.full(len(sizes), -1, dtype=np.int64)
    row[full] = np.arange(len(full))
    mine = row[owner] >= 0
    table = np.full((len(full), int(sizes[full].max())), np.inf)
    table[row[owner[mine]], (np.arange(len(owner)) - starts[owner])[mine]] = -scores[mine]
    out[full] = -np.partition(table, k - 1, axis=1)[:, k - 1]
    return out


def _objects(strings: list[str]) -> np.ndarray:
    """``strings`` as a 1-D object array (the same ``str`` objects)."""
    out = np.empty(len(strings), dtype=object)
    out[:] = strings
    return out


def _tie_runs(scores: np.ndarray, owner: np.ndarray) -> list[tuple[int, int]]:
    """``[lo, hi)`` ranges of two or more neighbours with equal ``(owner, score)`` (ties of SPEC §2.5)."""
    tied = np.zeros(len(scores) + 1, dtype=np.int8)  # tied[i]: candidate i - 1 ties candidate i
    np.logical_and(scores[1:] == scores[:-1], owner[1:] == owner[:-1], out=tied[1:-1].view(bool))
    edges = np.flatnonzero(np.diff(tied)).tolist()  # a run starts where a tie starts, ends where it stops
    return list(zip(edges[::2], [hi + 1 for hi in edges[1::2]], strict=True))


def _sort_runs(seq: list, runs: list[tuple[int, int]], line: Any) -> None:
    """Sort each run of ``seq`` by ``line(item)``, descending, in place.

    ``sorted(..., reverse=True)`` is stable: identical lines keep their base
    order (SPEC §2.5: the line that sorts last comes first; homonyms keep pool
    order).
    """
    for lo, hi in runs:
        seq[lo:hi] = sorted(seq[lo:hi], key=line, reverse=True)
