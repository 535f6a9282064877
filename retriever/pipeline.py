"""The reference retriever as one object (SPEC §2.3-§2.5, record shape §6.1).

Usable from a notebook::

    from retriever import Retriever, load_config, load_index

    r = Retriever(load_index(kg_csv, labels_tsv), load_config("oracle"))
    record = r.retrieve(question)          # one benchmark question dict
    [e["line"] for e in record["evidence"]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from retriever.anchors import Anchor, LinkerAnchor, OracleAnchor
from retriever.bfs import BFS, Expansion, PoolSummary
from retriever.config import RetrieverConfig
from retriever.ranking import Ranker, Scored
from tempbench_core.errors import InputError
from tempbench_core.memo import keep, kept, kept_for
from tempbench_core.schema import whole_year


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
    oracle_by_label:
        The gold first-hop subject carries no ``s_id`` (no id-space twin, or a
        twin triple without ids), so the oracle resolves it by its label
        (SPEC §2.3 fallback).
    pool:
        The pool's :class:`~retriever.bfs.PoolSummary`, when asked for.
    """

    anchor_hit: bool | None
    ambiguous_oracle: bool
    pool_rows: int
    candidates: int
    hop_sizes: tuple[int, ...]
    oracle_by_label: bool = False
    pool: PoolSummary | None = None


#: Configuration keys that only change how a candidate pool is ranked and rendered
#: (SPEC §2.5, and the query of §2.2): variants differing only in these share pools.
RANKING_KEYS = frozenset({"k", "line_template", "tie_break", "homonym_order", "query_includes_t_query"})
_NOT_RETRIEVAL = frozenset({"name", "description"})
#: Configuration keys that only decide the anchor (SPEC §2.3): from a given anchor, variants differing
#: only in these retrieve the same evidence.
ANCHOR_KEYS = frozenset({"anchor", "linker_match", "linker_min_length", "oracle_label_ties"})


def pool_key(config: RetrieverConfig) -> tuple:
    """Hashable key of what decides a question's anchor and candidate pool (SPEC §2.3-§2.4).

    Two configurations with the same key give the same :meth:`Retriever.expand`
    result for every question: every key except :data:`RANKING_KEYS` (and the
    name and description) is part of it, so an unknown new key splits pools
    rather than wrongly sharing them.
    """
    return _key_without(config, RANKING_KEYS | _NOT_RETRIEVAL)


def from_anchor_key(config: RetrieverConfig) -> tuple:
    """Hashable key of what decides a question's pool and ranked evidence once its anchor is given.

    Every key except :data:`ANCHOR_KEYS` (and the name and description), so
    that, as in :func:`pool_key`, an unknown new key splits rather than shares.
    """
    return _key_without(config, ANCHOR_KEYS | _NOT_RETRIEVAL)


def hops_key(config: RetrieverConfig, hops: int) -> tuple:
    """Hashable key of what decides the first ``hops`` hops of a question's BFS once its anchor is given (SPEC §2.4).

    Hop ``h`` depends on the anchor, the query time, the filter, the cap rule
    and the caps of hops ``1..h``, and on nothing of later hops: two
    configurations with the same key for ``hops`` make the same first
    ``hops`` hops from one anchor (oracle's 2 hops are the 3-hop ablation's
    first two). As in :func:`from_anchor_key`, every key but the anchor's and
    the ranking's is part of it, ``hops`` and ``caps`` cut to the first
    ``hops`` hops, so that an unknown new key splits rather than shares.
    """
    cut = {**config.to_dict(), "hops": int(hops), "caps": list(config.caps[:hops])}
    return tuple((key, repr(value)) for key, value in cut.items()
                 if key not in RANKING_KEYS | ANCHOR_KEYS | _NOT_RETRIEVAL)


def _key_without(config: RetrieverConfig, left_out: frozenset[str]) -> tuple:
    """``(key, repr(value))`` of every configuration key not in ``left_out``, in declaration order."""
    return tuple((key, repr(value)) for key, value in config.to_dict().items() if key not in left_out)


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
        self._from_anchor = from_anchor_key(config)
        # this configuration's BFS keyed after each number of hops (the last one is all of it)
        self._hops_keys = [hops_key(config, h) for h in range(1, config.hops + 1)]
        kg = index.kg
        self.bfs = BFS(kg, index.incidence, hops=config.hops, caps=config.caps, temporal_filter=config.temporal_filter,
                       cap_scope=config.cap_scope, cap_counts=config.cap_counts,
                       # BM25's group of a row is a dense (s, r, o) id: no second sort of the KG
                       tids=index.bm25.doc_group if tids is None else tids)
        self.ranker = Ranker(index, k=config.k, line_template=config.line_template,
                             tie_break=config.tie_break, homonym_order=config.homonym_order)

    # the anchors are built on first use: a retriever that only ranks given pools
    # (the diff sweep) never pays for the linker's automaton
    @cached_property
    def oracle(self) -> OracleAnchor:
        """Oracle anchor resolver (SPEC §2.3)."""
        kg = self.index.kg
        return OracleAnchor(kg.entity_ids, kg.entity_index, self.index.entity_labels, ties=self.config.oracle_label_ties)

    @cached_property
    def linker(self) -> LinkerAnchor | None:
        """Longest-substring linker (SPEC §2.3), ``None`` under the oracle anchor."""
        config = self.config
        if config.anchor != "linker":
            return None
        return LinkerAnchor(self.index.kg.entity_ids, self.index.entity_labels, match=config.linker_match,
                            min_length=config.linker_min_length)

    def anchor(self, question: dict[str, Any]) -> Anchor:
        """The anchor of ``question`` under the configured anchor rule (SPEC §2.3)."""
        return self.oracle(question) if self.linker is None else self.linker(question)

    def expand(self, question: dict[str, Any], anchor: Anchor | None = None) -> Expansion:
        """The candidate pool of ``question`` (SPEC §2.4).

        It depends only on :func:`pool_key` of the configuration, so one pool can
        be ranked under several ranking options with :meth:`rank`.
        """
        anchor = self.anchor(question) if anchor is None else anchor
        return self.bfs.expand(anchor.index, _t_query(question))

    def expand_many(self, questions: Sequence[dict[str, Any]]) -> list[Expansion]:
        """:meth:`expand` of each question, the pools expanded together."""
        anchors = [self.anchor(q).index for q in questions]
        return self.bfs.expand_many(anchors, [_t_query(q) for q in questions])

    def expand_from(self, anchor: int | None, t_query: float, count_eligible: bool = False) -> Expansion:
        """SPEC §2.4's candidate pool from a given anchor (an entity index, ``None`` for none).

        ``count_eligible``: also count, per hop, the rows the hop could have
        taken before its cap (:class:`~retriever.bfs.PoolSummary`).
        """
        return self.bfs.expand(anchor, t_query, count_eligible=count_eligible)

    def expand_from_many(self, anchors: Sequence[int | None], t_queries: Sequence[float],
                         count_eligible: bool = False) -> list[Expansion]:
        """:meth:`expand_from` of each ``(anchor, t_query)``, the pools expanded together."""
        return self.bfs.expand_many(anchors, t_queries, count_eligible=count_eligible)

    def reach(self, anchor: int | None, t_query: float, temporal_filter: bool | None = None,
              hops: int | None = None) -> np.ndarray:
        """The entities the uncapped BFS from ``anchor`` expands (sorted), SPEC §7's counterfactual pools.

        A row is in BFS(anchor, hops, no caps, filter) exactly when it passes
        the filter and its head or tail is one of them. ``temporal_filter``:
        ``None`` for the configuration's; ``hops``: the depth (default: the
        configuration's).
        """
        return self.bfs.reach(anchor, t_query, temporal_filter=temporal_filter, hops=hops)

    def reach_many(self, anchors: Sequence[int | None], t_queries: Sequence[float],
                   temporal_filter: bool | None = None, hops: int | None = None) -> list[np.ndarray]:
        """:meth:`reach` of each ``(anchor, t_query)``, the walks taken together."""
        return self.bfs.reach_many(anchors, t_queries, temporal_filter=temporal_filter, hops=hops)

    def meets(self, nodes: np.ndarray, t_query: float, steps: int, targets: np.ndarray,
              temporal_filter: bool | None = None) -> bool:
        """Whether an entity within ``steps`` steps of any of ``nodes`` is one of ``targets`` (sorted), in the graph
        of the rows that pass the filter (``None``: the configuration's): with :meth:`reach`, a distance test
        from the anchor (SPEC §7)."""
        return self.bfs.meets(nodes, t_query, steps, targets, temporal_filter=temporal_filter)

    @property
    def temporal_filter(self) -> bool:
        """Whether the configuration's BFS filters rows by time (SPEC §2.4)."""
        return self.config.temporal_filter

    def rank(self, question: dict[str, Any], pool: Expansion | np.ndarray,
             shared: dict[Any, Any] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``(evidence, cutoff_ties)`` of ``question`` for a given candidate pool (SPEC §2.5, §6.1).

        Parameters
        ----------
        question:
            The benchmark question (its text is the BM25 query, SPEC §2.2).
        pool:
            An :class:`~retriever.bfs.Expansion` (from :meth:`expand` of any
            retriever with the same :func:`pool_key`) or deduplicated row ids in
            pool order.
        shared:
            An optional cache of what depends on the question alone (its query
            terms), kept by the caller across configurations.
        """
        return self.rank_many([question], [pool], shared)[0]

    def rank_many(self, questions: Sequence[dict[str, Any]], pools: Sequence[Expansion | np.ndarray],
                  shared: dict[Any, Any] | None = None) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
        """:meth:`rank` of each ``(question, pool)``, the questions ranked together
        (:meth:`~retriever.ranking.Ranker.rank_items_many`: one BM25 pass and one
        sort for a batch instead of one each per question)."""
        return self._rank_scored(questions, pools, shared)[0]

    def _rank_scored(self, questions: Sequence[dict[str, Any]], pools: Sequence[Expansion | np.ndarray],
                     shared: dict[Any, Any] | None = None, known: Sequence[Scored | None] | None = None
                     ) -> tuple[list[tuple[list[dict[str, Any]], list[dict[str, Any]]]], list[Scored | None]]:
        """:meth:`rank_many`, and each question's candidates' ``(rows, scores)`` (``None`` for an empty pool);
        ``known``: scores made before (:meth:`~retriever.ranking.Ranker.rank_items_many`)."""
        rows = [pool.rows if isinstance(pool, Expansion) else np.asarray(pool, dtype=np.int64) for pool in pools]
        todo = [i for i, r in enumerate(rows) if len(r)]
        out: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = [([], []) for _ in rows]
        with_year = self.config.query_includes_t_query
        terms = [kept_for(shared, ("query terms", questions[i].get("id"), with_year), questions[i],
                          lambda q=questions[i]: self.index.bm25.query_terms(query_text(q, with_year)))
                 for i in todo]
        scored: list[Scored] = []
        ranked = self.ranker.rank_items_many(terms, [rows[i] for i in todo],
                                             None if known is None else [known[i] for i in todo], scored)
        made: list[Scored | None] = [None] * len(rows)
        for i, items, pair in zip(todo, ranked, scored, strict=True):
            out[i] = items
            made[i] = pair
        return out, made

    def retrieve_with_stats(self, question: dict[str, Any], keep_pool: bool = False,
                            shared: dict[Any, Any] | None = None) -> tuple[dict[str, Any], RetrievalStats]:
        """The run record of ``question`` (SPEC §6.1) and its bookkeeping: :meth:`retrieve_many` of one."""
        return self.retrieve_many([question], keep_pool, shared)[0]

    def retrieve_many(self, questions: Sequence[dict[str, Any]], keep_pool: bool = False,
                      shared: dict[Any, Any] | None = None) -> list[tuple[dict[str, Any], RetrievalStats]]:
        """The run record of each question (SPEC §6.1) and its bookkeeping (with its pool's summary when ``keep_pool``).

        The pools of all the questions are expanded together
        (:meth:`~retriever.bfs.BFS.expand_many`), then ranked together (:meth:`rank_many`).

        ``shared``: an optional cache, kept by the caller, that retrievers of
        several configurations over this same index share
        (:mod:`tempbench_core.memo`): a question's gold anchor, and its pool and
        ranking from a given anchor, are made once for all the configurations
        that agree on them (:func:`from_anchor_key`; the linker often finds the
        oracle's anchor). The records are the same with or without it.
        """
        t_queries = [_t_query(q) for q in questions]
        golds = [kept_for(shared, ("gold anchor", q.get("id"), self.config.oracle_label_ties), q,
                          lambda q=q: self.oracle(q)) for q in questions]
        anchors = golds if self.linker is None else [self.linker(q) for q in questions]
        keys = [("retrieved", q.get("id"), a.index, self._from_anchor, keep_pool) for q, a in zip(questions, anchors,
                                                                                                  strict=True)]
        found = [kept(shared, key, q) for key, q in zip(keys, questions, strict=True)]
        todo = [i for i, known in enumerate(found) if known is None]
        with_year = self.config.query_includes_t_query
        # what a configuration that agrees on the first hops made: those hops, and its candidates' scores when its
        # query is this one (the candidates of the first hops are the first candidates of more hops)
        prior = [None if shared is None else self._prior(shared, questions[i], anchors[i].index) for i in todo]
        pools = self.bfs.expand_many([anchors[i].index for i in todo], [t_queries[i] for i in todo],
                                     count_eligible=keep_pool, prior=[None if p is None else p[0] for p in prior])
        ranked, scored = self._rank_scored([questions[i] for i in todo], pools, shared,
                                           [p[1] if p is not None and p[2] == with_year else None for p in prior])
        for i, expansion, (evidence, ties), pair in zip(todo, pools, ranked, scored, strict=True):
            made = (expansion, evidence, ties)
            keep(shared, keys[i], questions[i], made)
            # a configuration with more hops that agrees on these takes them from here
            keep(shared, ("hops", questions[i].get("id"), anchors[i].index, self._hops_keys[-1]), questions[i],
                 (expansion, pair, with_year))
            found[i] = (made,)
        out = []
        for question, gold, anchor, known in zip(questions, golds, anchors, found, strict=True):
            expansion, evidence, ties = known[0]  # type: ignore[index]
            record = {
                "id": question.get("id"),
                "split": question.get("split"),
                "anchor": anchor.record(),
                "evidence": evidence,
                "cutoff_ties": ties,
            }
            hit = None if gold.index is None else anchor.index == gold.index
            stats = RetrievalStats(hit, gold.ambiguous, len(expansion.pool), len(expansion.rows), expansion.hop_sizes,
                                   oracle_by_label=_gold_subject_by_label(question),
                                   pool=PoolSummary.of(expansion) if keep_pool else None)
            out.append((record, stats))
        return out

    def _prior(self, shared: dict[Any, Any], question: dict[str, Any], anchor: int | None
               ) -> tuple[Expansion, Scored | None, bool] | None:
        """The expansion of the most first hops of this configuration's BFS that ``shared`` keeps for ``question``
        (made under another configuration from the same anchor, :func:`hops_key`), with its candidates' scores
        and whether their query included ``t_query``; ``None`` when there is none."""
        for key in reversed(self._hops_keys[:-1]):
            known = kept(shared, ("hops", question.get("id"), anchor, key), question)
            if known is not None:
                return known[0]
        return None

    def retrieve(self, question: dict[str, Any]) -> dict[str, Any]:
        """The run record of one question (SPEC §6.1): anchor, ranked evidence, cut-off ties."""
        return self.retrieve_with_stats(question)[0]


def _gold_subject_by_label(question: dict[str, Any]) -> bool:
    """Whether the oracle must resolve ``S_star[0]`` by label: it has a subject label but no ``s_id`` (SPEC §2.3)."""
    chain = question.get("S_star") or []
    if not chain or not isinstance(chain[0], dict):
        return False
    first = chain[0]
    return first.get("s_id") in (None, "") and first.get("s") is not None


def _t_query(question: dict[str, Any]) -> float:
    value = question.get("t_query")
    if value is None or isinstance(value, bool):
        raise InputError(f"question {question.get('id')!r}", None, "no t_query (SPEC §2.4: invalid input)", "a number")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise InputError(f"question {question.get('id')!r}", None, f"non-numeric t_query {value!r}", "a number") from None
