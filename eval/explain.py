"""Loss attribution: where each gold hop is lost (SPEC §7).

For one question of a run, the *gold hops* are the distinct ``(s, r, o)`` of
``S_star`` in ``S_star`` order, keyed on ids when every ``S_star`` triple
carries them (the question itself or, merged by
:func:`retriever.load_benchmark`, its ``benchmark.jsonl`` twin), else on
labels. Each hop gets the first stage of :data:`STAGES` that applies:

============== ================================================================
``retrieved``  in the evidence with a window valid at ``t_query``
``wrong_time`` in the evidence, only at times invalid at ``t_query``
``no_anchor``  the run resolved no anchor (or one that is not a KG entity)
``not_in_kg``  no KG row of the hop is valid at ``t_query``
``wrong_anchor`` the anchor is not the gold first-hop subject (SPEC §2.3 oracle
               resolution) and no valid row is in BFS(anchor, hops, no caps,
               no filter)
``too_deep``   the anchor is right, no valid row is in that pool, and one is
               in BFS(anchor, H, no caps, no filter), ``H`` the question's
               number of distinct gold hops (only when ``H > hops``): the BFS
               depth lost it
``unreachable`` the anchor is right and no valid row is in those pools
``filtered``   a valid row is in that pool, none in BFS(anchor, hops, no caps,
               the run's filter)
``capped``     a valid row is in that uncapped pool, none in the run's own pool
``tie_cut``    its ``(s, r, o)`` is among the run's ``cutoff_ties``
``outranked``  otherwise: a candidate ranked below ``k``
============== ================================================================

The pools are the run's own BFS (SPEC §2.4, same anchor, same hops) computed
by the retriever: :meth:`retriever.BFS.reach` for the uncapped pools (a valid
row is in an uncapped pool exactly when one of its endpoints is reached within
``hops - 1`` steps, since valid rows pass the filter) and
:meth:`retriever.BFS.expand` for the run's pool. They are computed lazily, the
cheapest first, only for hops that need them.

Evidence is matched to the gold with :mod:`eval.keyspace`, so the
``retrieved`` hops of a question are exactly the distinct gold triples that
the published scorer counts as hits (:mod:`eval.trp_ccr`), and CCR is 1 exactly
when every hop is ``retrieved``.

Decisions (SPEC §7 is silent):

- the run's anchor is the record's ``anchor.id`` resolved to a KG entity; a
  record without an ``anchor`` field (a baselines file) gets the anchor the
  configuration's rule gives; an anchor id that is not a KG entity counts as
  ``no_anchor`` (its pool is empty);
- "in a pool" means among the pool's rows before the ``(s, r, o)``
  deduplication (SPEC §2.4's ``pool``): with the filter off, a hop whose valid
  row is in the run's pool is not ``capped`` even when the deduplication kept
  an earlier, invalid time-version of it (that candidate then shows up as
  ``wrong_time``, ``tie_cut`` or ``outranked``);
- a KG row is valid when ``t_start <= t_query <= t_end`` with
  ``t_start = t_end = ts`` (SPEC §1.1), the rule of
  :func:`tempbench_core.schema.valid_at`;
- label-keyed hops match every KG row whose rendered labels equal the hop's
  (homonyms included); evidence that carries only labels while the hop is
  keyed on ids is matched through the hop's labels.

A whole run's attribution, its summary and its JSON are :mod:`eval.attribution`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

import numpy as np

from eval.evidence import QuestionRead, read_question
from eval.keyspace import GoldTriple, read_t_query
from retriever import PoolSummary, Retriever
from tempbench_core.arrays import any_in_sorted, sorted_unique
from tempbench_core.memo import keep, kept, kept_for
from tempbench_core.schema import valid_at

#: The stages of SPEC §7, in the order they are tested.
STAGES: tuple[str, ...] = (
    "retrieved",
    "wrong_time",
    "no_anchor",
    "not_in_kg",
    "wrong_anchor",
    "too_deep",
    "unreachable",
    "filtered",
    "capped",
    "tie_cut",
    "outranked",
)
#: One line per stage, for legends and ``--help``.
STAGE_HELP: dict[str, str] = {
    "retrieved": "in the evidence, valid at t_query",
    "wrong_time": "in the evidence, only at invalid times",
    "no_anchor": "the run resolved no anchor",
    "not_in_kg": "no KG row valid at t_query",
    "wrong_anchor": "wrong anchor; not even in the uncapped, unfiltered pool",
    "too_deep": "right anchor; in the unfiltered pool only with as many hops as the gold chain",
    "unreachable": "right anchor; not in the uncapped, unfiltered pool",
    "filtered": "in the unfiltered pool, removed by the temporal filter",
    "capped": "in the uncapped pool, cut by the per-hop caps",
    "tie_cut": "among the cut-off ties",
    "outranked": "a candidate ranked below k",
}

_EMPTY = np.zeros(0, dtype=np.int64)
#: The gold class of an item that matches none (:func:`eval.keyspace.match_classes`).
_NO_CLASS = -1


@dataclass
class Hop:
    """One distinct gold hop of a question and how it fared.

    Attributes
    ----------
    position:
        0-based index in ``S_star`` of its first occurrence.
    space:
        ``"id"`` or ``"label"``: the space it is keyed on.
    key:
        Its ``(s, r, o)`` in that space.
    triple:
        The first ``S_star`` triple with that key (both spaces when carried).
    stage:
        One of :data:`STAGES`.
    valid_rows:
        KG rows of the hop valid at ``t_query`` (edge ids), when looked up.
    """

    position: int
    space: str
    key: tuple[Any, Any, Any]
    triple: GoldTriple
    stage: str = ""
    valid_rows: np.ndarray | None = None
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class Explanation:
    """The attribution of one question (SPEC §7)."""

    qid: Any
    hops: list[Hop]
    anchor: int | None
    gold_subject: int | None
    read: QuestionRead  # the record's evidence matched to the gold (SPEC §3.1), as the scorer reads it
    resolved: bool = False  # anchor and gold_subject were looked up (only when a hop got past the evidence)

    @property
    def stages(self) -> list[str]:
        """The stage of each hop, in hop order."""
        return [h.stage for h in self.hops]


def hop_space(gold: Sequence[GoldTriple]) -> str:
    """The space gold hops are keyed on (SPEC §7): ids when every ``S_star`` triple carries them, else labels."""
    return "id" if gold and all("id" in g.keys for g in gold) else "label"


def gold_hops(gold: Sequence[GoldTriple]) -> list[Hop]:
    """The distinct gold hops of a parsed ``S_star``, in ``S_star`` order (SPEC §7)."""
    space = hop_space(gold)
    hops: list[Hop] = []
    seen: set[tuple[Any, Any, Any]] = set()
    for j, g in enumerate(gold):
        key = g.keys[space]
        if key not in seen:
            seen.add(key)
            hops.append(Hop(j, space, key, g))
    return hops


class Explainer:
    """Attributes the gold hops of a configuration's run records (SPEC §7).

    Parameters
    ----------
    index:
        The :class:`retriever.KGIndex` the run was made on.
    config:
        The run's :class:`retriever.RetrieverConfig` (anchor rule, hops, caps,
        filter, ``cap_scope``/``cap_counts``).
    pools:
        Optional ``{question id: PoolSummary}`` kept by the run itself
        (the shard's :class:`retriever.Shard` pools): the run's pool of a question is
        then read there instead of expanded again. Only for records of that
        very run (same anchor, same configuration).
    shared:
        A cache, kept by a caller explaining the same question objects on this
        index under several configurations, of what depends on the question
        alone (its parsed gold, its hops' valid rows, the walks from an
        anchor); without one the explainer keeps its own.
    """

    def __init__(self, index: Any, config: Any, pools: Mapping[Any, PoolSummary | None] | None = None,
                 shared: dict[Any, Any] | None = None) -> None:
        self.index = index
        self.config = config
        self.pools = pools or {}
        self.shared = {} if shared is None else shared
        self.retriever = Retriever(index, config)
        kg = index.kg
        self.head = np.asarray(kg.head, dtype=np.int64)
        self.tail = np.asarray(kg.tail, dtype=np.int64)
        self.relation = np.asarray(kg.relation, dtype=np.int64)
        self.entity_index = kg.entity_index
        self.relation_index = kg.relation_index
        self._entities_by_label: dict[str, np.ndarray] | None = None
        self._relations_by_label: dict[str, np.ndarray] | None = None
        # explanations without facts, by question id, with the objects they were made from:
        # attribute_run and the HTML browser ask for the same ones
        self._explained: dict[Any, tuple[Mapping[str, Any], Mapping[str, Any], Explanation]] = {}

    def forget(self, keep: bool = False) -> dict[Any, Any] | None:
        """Drop the explanations kept for a later :func:`eval.question_detail.question_detail` of the same records.

        ``keep``: return them instead of freeing them here, for a process that
        ends without freeing its objects one by one (a worker), where freeing
        them would only cost time.
        """
        explained, self._explained = self._explained, {}
        if keep:
            return explained
        explained.clear()
        return None

    # -- the hop's KG rows ----------------------------------------------------------
    def _by_label(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        if self._entities_by_label is None:
            ents: dict[str, list[int]] = {}
            for i, label in enumerate(self.index.entity_labels):
                ents.setdefault(label, []).append(i)
            rels: dict[str, list[int]] = {}
            for i, label in enumerate(self.index.relation_labels):
                rels.setdefault(label, []).append(i)
            self._entities_by_label = {k: np.array(v, dtype=np.int64) for k, v in ents.items()}
            self._relations_by_label = {k: np.array(v, dtype=np.int64) for k, v in rels.items()}
        return self._entities_by_label, self._relations_by_label  # type: ignore[return-value]

    def _members(self, space: str, key: tuple[Any, Any, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """KG entity ids of the subject and object and relation ids the hop's key can stand for."""
        if space == "id":
            s = self.entity_index.get(str(key[0]))
            r = self.relation_index.get(str(key[1]))
            o = self.entity_index.get(str(key[2]))
            if s is None or r is None or o is None:
                return _EMPTY, _EMPTY, _EMPTY
            return np.array([s]), np.array([r]), np.array([o])
        ents, rels = self._by_label()
        return ents.get(str(key[0]), _EMPTY), rels.get(str(key[1]), _EMPTY), ents.get(str(key[2]), _EMPTY)

    def valid_rows(self, hop: Hop, t_query: float) -> np.ndarray:
        """KG rows of ``hop`` valid at ``t_query`` (ascending edge ids).

        Rows are looked up through the subject's ``(entity, year)`` incidence: a
        point-in-time row (``t_start = t_end = year``) is valid exactly when its
        year equals ``t_query`` (a whole number, else no row is), and those are
        the rows :meth:`~retriever.incidence.Incidence.rows_at` gives, so their
        years are not tested again. (A year equal to the whole float ``t_query``
        converts to that very float, however large.)
        """
        inc = self.index.incidence
        if hop.space == "id":
            # one entity and one relation (the general way below with one-element arrays, without making them)
            s, r, o = (self.entity_index.get(str(hop.key[0])), self.relation_index.get(str(hop.key[1])),
                       self.entity_index.get(str(hop.key[2])))
            if s is None or r is None or o is None:
                return _EMPTY
            rows = inc.rows_at(int(s), t_query)
            if not len(rows):
                return _EMPTY
            return sorted_unique(rows[(self.head[rows] == s) & (self.relation[rows] == r) & (self.tail[rows] == o)])
        subjects, relations, objects = self._members(hop.space, hop.key)
        if not len(subjects) or not len(relations) or not len(objects):
            return _EMPTY
        parts = [inc.rows_at(int(e), t_query) for e in subjects]
        rows = np.concatenate(parts) if len(parts) > 1 else parts[0]
        if not len(rows):
            return _EMPTY
        keep = _member(self.head[rows], subjects) & _member(self.relation[rows], relations) & _member(self.tail[rows], objects)
        return sorted_unique(rows[keep])

    def _rows_and_ends(self, hop: Hop, t_query: float) -> tuple[np.ndarray, np.ndarray]:
        """The hop's :meth:`valid_rows` and their heads and tails."""
        rows = self.valid_rows(hop, t_query)
        return rows, (np.concatenate((self.head[rows], self.tail[rows])) if len(rows) else _EMPTY)

    def prepare(self, pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> None:
        """Walk, for all the ``(question, record)`` pairs at once, what their attributions may read (SPEC §2.4, §7).

        The run's pools that :attr:`pools` lacks, and each anchor's reach under
        the run's filter (the uncapped pool), kept in :attr:`shared`: a whole
        shard's walks cost less taken together
        (:meth:`retriever.Retriever.expand_from_many`,
        :meth:`~retriever.Retriever.reach_many`) than one by one where a hop
        needs them. The attributions are the same.
        """
        anchored = []
        for question, record in pairs:
            anchor = self.run_anchor(question, record)
            if anchor is not None:
                anchored.append((question, anchor))
        todo = [(q, a) for q, a in anchored if q.get("id") not in self.pools]
        if todo:
            made = self.retriever.expand_from_many([a for _, a in todo], [read_t_query(q) for q, _ in todo],
                                                    count_eligible=True)
            self.pools = {**self.pools, **{q.get("id"): PoolSummary.of(e) for (q, _), e in zip(todo, made, strict=True)}}
        keys = [(q, _reach_key(q, a, self.retriever.temporal_filter, self.config.hops)) for q, a in anchored]
        todo = [(q, a, key) for (q, a), (_, key) in zip(anchored, keys, strict=True) if kept(self.shared, key, q) is None]
        reached = self.retriever.reach_many([a for _, a, _ in todo], [read_t_query(q) for q, _, _ in todo])
        for (q, _, key), entities in zip(todo, reached, strict=True):
            keep(self.shared, key, q, entities)

    def pool_summary(self, question: Mapping[str, Any], anchor: int | None) -> PoolSummary | None:
        """The run's kept summary of the question's pool, or ``None`` when it must be expanded."""
        summary = self.pools.get(question.get("id"))
        return summary if summary is not None and anchor is not None else None

    # -- anchors ----------------------------------------------------------------------
    def run_anchor(self, question: Mapping[str, Any], record: Mapping[str, Any]) -> int | None:
        """The KG entity the run expanded from (see the module's decisions)."""
        anchor = record.get("anchor")
        if not isinstance(anchor, Mapping):
            return self.retriever.anchor(dict(question)).index
        aid = anchor.get("id")
        if aid is None or anchor.get("source") == "none":
            return None
        return self.entity_index.get(str(aid))

    def gold_subject(self, question: Mapping[str, Any]) -> int | None:
        """The gold first-hop subject under SPEC §2.3's oracle resolution (``None`` when unresolved).

        It depends on the question and the oracle's label-tie rule alone: kept
        in :attr:`shared` for every configuration with that rule.
        """
        ties = self.config.oracle_label_ties
        return kept_for(self.shared, ("gold subject", question.get("id"), ties), question,
                        lambda: self.retriever.oracle(dict(question)).index)

    # -- the attribution -----------------------------------------------------------------
    def explain(self, question: Mapping[str, Any], record: Mapping[str, Any], facts: bool = False) -> Explanation:
        """Attribute every gold hop of one question (SPEC §7).

        Parameters
        ----------
        question:
            The benchmark record (id spaces merged).
        record:
            The run record: ``evidence``, ``cutoff_ties``, ``anchor``.
        facts:
            Also record, per hop, what each test found (for ``tempbench show``);
            this computes every pool instead of stopping at the first stage.
        """
        if not facts:
            known = self._explained.get(question.get("id"))
            if known is not None and known[0] is question and known[1] is record:
                return known[2]
            explanation = self._explain(question, record, False)
            self._explained[question.get("id")] = (question, record, explanation)
            return explanation
        return self._explain(question, record, True)

    def _read(self, question: Mapping[str, Any], evidence: Any, ties: Any) -> QuestionRead:
        """The record's evidence and cut-off ties matched to the gold (:func:`eval.evidence.read_question`).

        Configurations that agree on a question's anchor and pool share its
        ranking, the very ``evidence`` and ``cutoff_ties`` lists
        (:meth:`retriever.Retriever.retrieve_many`, which does not change them
        once made): the last read of each question is kept in :attr:`shared`
        and serves the next configuration that hands over the same lists.
        """
        key = ("read", question.get("id"))
        known = self.shared.get(key)
        if known is not None and known[0] is question and known[1] is evidence and known[2] is ties:
            return known[3]
        read = read_question(question, evidence or [], ties or [], "auto", self.shared)
        self.shared[key] = (question, evidence, ties, read)
        return read

    def _explain(self, question: Mapping[str, Any], record: Mapping[str, Any], facts: bool) -> Explanation:
        read = self._read(question, record.get("evidence"), record.get("cutoff_ties"))
        tq = read.tq
        hops = gold_hops(read.gold)
        # hop -> gold class of the resolved evidence (one to one when both use the hop's space)
        space = read.gold_space
        class_of = {keys[space]: c for c, keys in enumerate(read.class_keys) if space in keys}
        cls = [class_of.get(h.triple.keys.get(space), _NO_CLASS) for h in hops]
        items = read.items
        # classes are _NO_CLASS or >= 0; the few gold items picked in C, then their windows tested
        in_evidence = set(read.items_cls)
        in_evidence.discard(_NO_CLASS)
        hit = {c for c, ts, te in compress(zip(read.items_cls, items.t_start, items.t_end, strict=True),
                                            map(_NO_CLASS.__lt__, read.items_cls))
               if valid_at(ts, te, tq)}
        tied = set(read.extra_cls)
        tied.discard(_NO_CLASS)

        explanation = Explanation(question.get("id"), hops, None, None, read)
        pending: list[int] = []
        for i, hop in enumerate(hops):
            c = cls[i]
            if facts:
                hop.facts.update(in_evidence=c in in_evidence, valid_in_evidence=c in hit, in_cutoff_ties=c in tied)
            if c in hit:
                hop.stage = "retrieved"
            elif c in in_evidence:
                hop.stage = "wrong_time"
            else:
                pending.append(i)
        if facts:
            pending = list(range(len(hops)))
        if not pending:
            return explanation

        anchor = self.run_anchor(question, record)
        explanation.anchor = anchor
        gold = self.gold_subject(question)
        explanation.gold_subject = gold
        explanation.resolved = True
        pools = _Pools(self.retriever, anchor, tq, self.pool_summary(question, anchor), self.shared, question)
        for i in pending:
            hop = hops[i]
            # the hop's valid rows and their endpoints (read by both uncapped pools' tests) depend on the
            # question alone: made once for every configuration
            rows, ends = kept_for(self.shared, ("valid_rows", question.get("id"), hop.space, hop.key), question,
                                  lambda hop=hop: self._rows_and_ends(hop, tq))
            hop.valid_rows = rows
            if facts:
                hop.facts.update(valid_kg_rows=int(len(rows)), **pools.facts(rows, ends, self.head, self.tail, len(hops)))
            if hop.stage:
                continue
            if anchor is None:
                hop.stage = "no_anchor"
            elif not len(rows):
                hop.stage = "not_in_kg"
            elif not pools.in_uncapped(ends, filtered=None):
                # not in the uncapped pool with the run's filter: is it even in the unfiltered one?
                if not pools.in_uncapped(ends, filtered=False):
                    if anchor != gold:
                        hop.stage = "wrong_anchor"
                    elif pools.in_deeper(rows, self.head, self.tail, len(hops)):
                        hop.stage = "too_deep"
                    else:
                        hop.stage = "unreachable"
                else:
                    hop.stage = "filtered"
            elif not pools.in_run_pool(rows):
                hop.stage = "capped"
            elif cls[i] in tied:
                hop.stage = "tie_cut"
            else:
                hop.stage = "outranked"
        return explanation


class _Pools:
    """The counterfactual pools of one question, each computed at most once, when first needed."""

    def __init__(self, retriever: Retriever, anchor: int | None, t_query: float, summary: PoolSummary | None = None,
                 shared: dict[Any, Any] | None = None, question: Any = None) -> None:
        self.retriever = retriever
        self.anchor = anchor
        self.t_query = t_query
        # what depends on the question, the anchor and the depth but not on the caps or the filter
        # (the unfiltered counterfactuals) is kept there for every configuration
        self.shared = shared
        self.question = question
        self._reach: dict[Any, np.ndarray] = {}
        self._run: np.ndarray | None = None if summary is None else summary.rows

    def reach(self, filtered: bool | None) -> np.ndarray:
        # the unfiltered pool of a run without filter is its own uncapped pool
        key = None if filtered is None or filtered == self.retriever.temporal_filter else filtered
        if key not in self._reach:
            on = self.retriever.temporal_filter if key is None else key
            self._reach[key] = kept_for(
                self.shared if self.question is not None else None,
                _reach_key(self.question, self.anchor, on, self.retriever.config.hops), self.question,
                lambda: self.retriever.reach(self.anchor, self.t_query, temporal_filter=key))
        return self._reach[key]

    def in_uncapped(self, ends: np.ndarray, filtered: bool | None) -> bool:
        """Whether a valid row is in BFS(anchor, hops, no caps, filter): an endpoint within ``hops - 1`` steps.

        ``ends``: the valid rows' heads and tails. Valid rows pass the
        temporal filter by definition (SPEC §2.4), so only the reach of the
        BFS matters.
        """
        if self.anchor is None or not len(ends):
            return False
        return any_in_sorted(ends, self.reach(filtered))

    def run_pool(self) -> np.ndarray:
        if self._run is None:
            self._run = np.sort(self.retriever.expand_from(self.anchor, self.t_query).pool)
        return self._run

    def in_deeper(self, rows: np.ndarray, head: np.ndarray, tail: np.ndarray, depth: int) -> bool:
        """Whether a valid row is in BFS(anchor, depth, no caps, no filter), for a depth beyond the run's (SPEC §7 ``too_deep``).

        The row is when an endpoint is within ``depth - 1`` steps of the anchor
        in the unfiltered graph: the endpoints' own ``depth - hops`` steps meet
        the anchor's unfiltered reach at the run's depth (``hops - 1`` steps),
        so the anchor's ball is never grown beyond the run's own.
        """
        hops = self.retriever.config.hops
        if self.anchor is None or not len(rows) or depth <= hops:
            return False
        def deeper() -> bool:
            ends = np.concatenate((head[rows], tail[rows]))
            return self.retriever.meets(ends, self.t_query, depth - hops, self.reach(False), temporal_filter=False)

        # rows are the hop's valid rows: the question's id and the hop's rows key the answer
        qid = None if self.question is None else self.question.get("id")
        return kept_for(self.shared if self.question is not None else None,
                        ("in_deeper", qid, self.anchor, hops, depth, rows.tobytes()), self.question, deeper)

    def in_run_pool(self, rows: np.ndarray) -> bool:
        """Whether a valid row is in the run's own (capped) pool, before deduplication."""
        if self.anchor is None or not len(rows):
            return False
        return any_in_sorted(rows, self.run_pool())

    def facts(self, rows: np.ndarray, ends: np.ndarray, head: np.ndarray, tail: np.ndarray,
              depth: int) -> dict[str, bool]:
        return {
            "in_uncapped_unfiltered_pool": self.in_uncapped(ends, filtered=False),
            "in_deeper_unfiltered_pool": self.in_deeper(rows, head, tail, depth),
            "in_uncapped_pool": self.in_uncapped(ends, filtered=None),
            "in_run_pool": self.in_run_pool(rows),
        }


def _reach_key(question: Any, anchor: int | None, on: bool, hops: int) -> tuple[Any, ...]:
    """The cache key of a question's reach from ``anchor`` with the filter ``on`` or off, at depth ``hops``."""
    return ("reach", None if question is None else question.get("id"), anchor, bool(on), int(hops))


def _member(values: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    # one allowed value (the id-space case) is a plain comparison
    return values == allowed[0] if len(allowed) == 1 else np.isin(values, allowed)
