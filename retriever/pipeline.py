"""The reference retriever as one object (SPEC §2.3-§2.5, record shape §6.1).

Usable from a notebook::

    from retriever.index import load_index
    from retriever.config import load_config
    from retriever.pipeline import Retriever

    r = Retriever(load_index(kg_csv, labels_tsv), load_config("oracle"))
    record = r.retrieve(question)          # one benchmark question dict
    [e["line"] for e in record["evidence"]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from retriever.anchors import Anchor, LinkerAnchor, OracleAnchor
from retriever.bfs import BFS, Expansion, whole_year
from retriever.config import RetrieverConfig
from retriever.errors import InputError
from retriever.ranking import Ranker


@dataclass(frozen=True)
class RetrievalStats:
    """Per-question bookkeeping for a run's summary (not part of the run record).

    Attributes
    ----------
    anchor_hit:
        The anchor equals the gold first-hop subject resolved as the oracle
        does (``None`` when the question has no resolvable gold subject).
    ambiguous_oracle:
        The oracle fell back to a label several KG entities share (SPEC §2.3).
    pool_rows, candidates:
        Pool size before and after ``(s, r, o)`` deduplication.
    hop_sizes:
        Rows added per hop.
    """

    anchor_hit: bool | None
    ambiguous_oracle: bool
    pool_rows: int
    candidates: int
    hop_sizes: tuple[int, ...]


def query_text(question: dict[str, Any], include_t_query: bool) -> str:
    """BM25 query (SPEC §2.2): the question, plus the query year when the option is on.

    The year is appended as ``" " + str(int(t_query))`` for a whole-number
    ``t_query`` and ``" " + repr(float(t_query))`` otherwise.
    """
    text = str(question.get("question", ""))
    if include_t_query:
        tq = float(question["t_query"])
        year = whole_year(tq)
        text = f"{text} {year if year is not None else repr(tq)}"
    return text


class Retriever:
    """BFS + BM25 reference retriever over a loaded index (SPEC §2).

    Parameters
    ----------
    index:
        :class:`retriever.index.KGIndex`.
    config:
        :class:`retriever.config.RetrieverConfig`.
    """

    def __init__(self, index, config: RetrieverConfig, *, tids=None) -> None:
        self.index = index
        self.config = config
        kg = index.kg
        self.oracle = OracleAnchor(kg.entity_ids, kg.entity_index, index.entity_labels, ties=config.oracle_label_ties)
        self.linker = (
            LinkerAnchor(kg.entity_ids, index.entity_labels, match=config.linker_match, min_length=config.linker_min_length)
            if config.anchor == "linker"
            else None
        )
        self.bfs = BFS(kg, index.incidence, hops=config.hops, caps=config.caps, temporal_filter=config.temporal_filter,
                       cap_scope=config.cap_scope, cap_counts=config.cap_counts, tids=tids)
        self.ranker = Ranker(index, k=config.k, line_template=config.line_template,
                             tie_break=config.tie_break, homonym_order=config.homonym_order)

    def anchor(self, question: dict[str, Any]) -> Anchor:
        """The anchor of ``question`` under the configured anchor rule (SPEC §2.3)."""
        return self.oracle(question) if self.linker is None else self.linker(question)

    def expand(self, question: dict[str, Any], anchor: Anchor | None = None) -> Expansion:
        """The candidate pool of ``question`` (SPEC §2.4)."""
        anchor = self.anchor(question) if anchor is None else anchor
        return self.bfs.expand(anchor.index, _t_query(question))

    def retrieve_with_stats(self, question: dict[str, Any]) -> tuple[dict[str, Any], RetrievalStats]:
        """The run record of ``question`` (SPEC §6.1) and its bookkeeping."""
        t_query = _t_query(question)
        gold = self.oracle(question)
        anchor = gold if self.linker is None else self.linker(question)
        expansion = self.bfs.expand(anchor.index, t_query)
        rows = expansion.rows
        evidence: list[dict[str, Any]] = []
        ties: list[dict[str, Any]] = []
        if len(rows):
            terms = self.index.bm25.query_terms(query_text(question, self.config.query_includes_t_query))
            evidence, ties = self.ranker.items(self.ranker.rank(terms, rows))
        record = {
            "id": question.get("id"),
            "split": question.get("split"),
            "anchor": anchor.record(),
            "evidence": evidence,
            "cutoff_ties": ties,
        }
        hit = None if gold.index is None else anchor.index == gold.index
        stats = RetrievalStats(hit, gold.ambiguous, len(expansion.pool), len(rows), expansion.hop_sizes)
        return record, stats

    def retrieve(self, question: dict[str, Any]) -> dict[str, Any]:
        """The run record of one question (SPEC §6.1): anchor, ranked evidence, cut-off ties."""
        return self.retrieve_with_stats(question)[0]


def _t_query(question: dict[str, Any]) -> float:
    value = question.get("t_query")
    if value is None or isinstance(value, bool):
        raise InputError(f"question {question.get('id')!r}", None, "no t_query (SPEC §2.4: invalid input)", "a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"question {question.get('id')!r}", None, f"non-numeric t_query {value!r}", "a number") from None
