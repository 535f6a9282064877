"""Ranking of the candidate pool (SPEC §2.5).

Every deduplicated candidate row is scored by BM25(question, its document)
(the document of row ``i`` is row ``i``, SPEC §2.1-§2.2) and rendered as one
evidence line. Order (default):

1. score descending;
2. among equal scores, the rendered line in *reverse* Python string order
   (code points): the line that sorts last comes first (fixed);
3. identical lines keep pool order (decision; option ``homonym_order="edge_id"``).

The order is produced by stable sorts applied from the last key to the first:
base order (pool or edge id), then lines descending, then scores descending
(``sorted(..., reverse=True)`` is stable). Only candidates whose score is at
least the k-th largest score need a line: the rest cannot be returned or tie
at the cut-off.

The result keeps each returned item's score and ``cutoff_ties``: candidates
scoring exactly the k-th returned score that fell below the cut-off, in rank
order (SPEC §6.1); the cut-off tie group of §3.5 is the returned items with
that score plus these.
"""

from __future__ import annotations

from dataclasses import dataclass
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

    def _ordered(self, query_terms: Any, rows: np.ndarray) -> tuple[list[tuple], np.ndarray]:
        """The candidates that can be returned or tie at the cut-off, in rank order, and every candidate's score.

        Each is ``(position, row, line, score, head, relation, tail, year)``
        (plain Python values); the first ``k`` are returned, the rest are the
        cut-off ties.
        """
        n = len(rows)
        bm25 = self.bm25
        terms = bm25.query_terms(query_terms) if isinstance(query_terms, str) else np.asarray(query_terms, dtype=np.int64)
        scores = bm25.score_groups(terms.reshape(-1), bm25.doc_group[rows])
        k = self.k
        if n > k:
            threshold = np.partition(scores, n - k)[n - k]  # the k-th largest score
            pos = (scores >= threshold).nonzero()[0]
            sel = rows[pos]
            pos_list = pos.tolist()
            sel_scores = scores[pos].tolist()
        else:
            sel = rows
            pos_list = list(range(n))
            sel_scores = scores.tolist()
        # one vectorized gather per column, then plain Python values
        heads, rels, tails, years = (self.head[sel].tolist(), self.relation[sel].tolist(),
                                     self.tail[sel].tolist(), self.year[sel].tolist())
        if self._default_template:
            el, rl = self.entity_labels, self.relation_labels
            lines = [f"{el[h]} | {rl[r]} | {el[t]} | {y}" for h, r, t, y in zip(heads, rels, tails, years, strict=True)]
        else:
            lines = [self._line(h, r, t, y) for h, r, t, y in zip(heads, rels, tails, years, strict=True)]
        # stable sorts from the last key to the first (pool position is the base order)
        cand = list(zip(pos_list, sel.tolist(), lines, sel_scores, heads, rels, tails, years, strict=True))
        if self.by_edge_id:
            cand.sort(key=itemgetter(1))
        if self.reverse_lex:
            cand.sort(key=itemgetter(2), reverse=True)
        cand.sort(key=itemgetter(3), reverse=True)
        return cand, scores

    def rank(self, query_terms: Any, rows: np.ndarray) -> Ranked:
        """Rank candidate ``rows`` (pool order) for the query terms."""
        if len(rows) == 0:
            empty = np.zeros(0, dtype=np.int64)
            return Ranked(empty, empty, np.zeros(0), {}, {})
        cand, scores = self._ordered(query_terms, rows)
        ranked = [c[0] for c in cand]
        k = self.k
        return Ranked(np.asarray(ranked[:k], dtype=np.int64), np.asarray(ranked[k:], dtype=np.int64), scores,
                      {c[0]: c[2] for c in cand}, {p: (row, h, r, t, y, sc, line) for p, row, line, sc, h, r, t, y in cand})

    def items(self, ranked: Ranked) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Evidence items and ``cutoff_ties`` items (SPEC §6.1) of a ranking."""
        info = ranked.info
        return (self._items(map(info.__getitem__, ranked.order.tolist())),
                self._items(map(info.__getitem__, ranked.ties.tolist())))

    def rank_items(self, query_terms: Any, rows: np.ndarray) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``items(rank(query_terms, rows))`` without the intermediate :class:`Ranked`."""
        if len(rows) == 0:
            return [], []
        cand, _ = self._ordered(query_terms, rows)
        k = self.k
        return (self._items((row, h, r, t, y, sc, line) for _p, row, line, sc, h, r, t, y in cand[:k]),
                self._items((row, h, r, t, y, sc, line) for _p, row, line, sc, h, r, t, y in cand[k:]))

    def _items(self, infos: Any) -> list[dict[str, Any]]:
        """The dicts of :meth:`_item` for ``(row, head, relation, tail, year, score, line)`` tuples, inlined."""
        el, rl, eid, rid = self.entity_labels, self.relation_labels, self.entity_ids, self.relation_ids
        return [{"s": el[h], "r": rl[r], "o": el[t], "s_id": eid[h], "r_id": rid[r], "o_id": eid[t],
                 "t_start": y, "t_end": y, "score": score, "line": line}
                for _row, h, r, t, y, score, line in infos]

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
