"""A slow, literal reading of SPEC §7's stage table (loss attribution), for the tests.

Pure Python over lists and sets; it shares nothing with ``eval/explain.py`` and
nothing with the fast BFS: the pools are the slow reference retriever's
(:mod:`reference.retriever`, SPEC §2.4's pseudo-code, with no cap at all for the
uncapped pools), and the stages are tested in the table's order, each condition
as written.

Only the default BFS options (``cap_scope="per_hop"``, ``cap_counts="rows"``)
are implemented: those of the four shipped configurations.
"""

from __future__ import annotations

from collections import defaultdict
from types import SimpleNamespace
from typing import Any

from reference.retriever import SlowRetriever

ID = ("s_id", "r_id", "o_id")
LABEL = ("s", "r", "o")


class SlowExplainer(SlowRetriever):
    """SPEC §7 for one KG, on the slow reference retriever's BFS and oracle (``kg`` arrays and labels only)."""

    def __init__(self, kg, entity_labels: list[str], relation_labels: list[str]) -> None:
        super().__init__(kg, entity_labels, relation_labels)
        # every row under its (s, r, o) in both spaces
        self.rows_of_key: dict[tuple[str, tuple[str, str, str]], list[int]] = defaultdict(list)
        for i in range(len(self.head)):
            self.rows_of_key[("id", self.row_key(i, "id"))].append(i)
            self.rows_of_key[("label", self.row_key(i, "label"))].append(i)

    def row_key(self, i: int, space: str) -> tuple[str, str, str]:
        if space == "id":
            return (self.entity_ids[self.head[i]], self.relation_ids[self.rel[i]], self.entity_ids[self.tail[i]])
        return (self.elab[self.head[i]], self.rlab[self.rel[i]], self.elab[self.tail[i]])

    @staticmethod
    def valid(t_start: float, t_end: float, tq: float) -> bool:
        return float(t_start) <= tq <= float(t_end)

    def bfs_pool(self, anchor: int, tq: float, hops: int, caps: tuple[int, ...] | None, filter_on: bool) -> list[int]:
        """The pool before deduplication (SPEC §2.4); ``caps=None``: no cap at all."""
        cfg = SimpleNamespace(hops=hops, caps=caps or (), temporal_filter=filter_on, cap_scope="per_hop",
                              cap_counts="rows")
        return self.raw_pool(anchor, tq, cfg, capped=caps is not None)

    # -- SPEC §7 -----------------------------------------------------------------------
    def stages(self, question: dict[str, Any], record: dict[str, Any], cfg) -> list[str]:
        tq = float(question["t_query"])
        star = question["S_star"]
        space = "id" if all(all(k in t for k in ID) for t in star) else "label"
        names = ID if space == "id" else LABEL
        hops: list[tuple[str, str, str]] = []
        labels_of: dict[tuple[str, str, str], tuple[str, str, str]] = {}
        for t in star:
            key = tuple(str(t[k]) for k in names)
            if key not in hops:
                hops.append(key)
                if all(k in t for k in LABEL):
                    labels_of[key] = tuple(str(t[k]) for k in LABEL)

        def same(item: dict[str, Any], hop: tuple[str, str, str]) -> bool:
            if all(k in item for k in names):
                return tuple(str(item[k]) for k in names) == hop
            return hop in labels_of and tuple(str(item[k]) for k in LABEL) == labels_of[hop]

        anchor_rec = record.get("anchor") or {}
        anchor = None
        if anchor_rec.get("source") != "none" and anchor_rec.get("id") in self.entity_ids:
            anchor = self.entity_ids.index(anchor_rec["id"])
        gold = self.oracle(question, cfg.oracle_label_ties)
        caps = tuple(cfg.caps)
        out = []
        for hop in hops:
            valid_rows = [r for r in self.rows_of_key[(space, hop)] if self.valid(self.year[r], self.year[r], tq)]
            in_ev = [it for it in record["evidence"] if same(it, hop)]
            if any(self.valid(it["t_start"], it["t_end"], tq) for it in in_ev):
                out.append("retrieved")
            elif in_ev:
                out.append("wrong_time")
            elif anchor is None:
                out.append("no_anchor")
            elif not valid_rows:
                out.append("not_in_kg")
            elif not set(valid_rows) & set(self.bfs_pool(anchor, tq, cfg.hops, None, False)):
                if anchor != gold:
                    out.append("wrong_anchor")
                elif len(hops) > cfg.hops and set(valid_rows) & set(self.bfs_pool(anchor, tq, len(hops), None, False)):
                    out.append("too_deep")
                else:
                    out.append("unreachable")
            elif not set(valid_rows) & set(self.bfs_pool(anchor, tq, cfg.hops, None, cfg.temporal_filter)):
                out.append("filtered")
            elif not set(valid_rows) & set(self.bfs_pool(anchor, tq, cfg.hops, caps, cfg.temporal_filter)):
                out.append("capped")
            elif any(same(it, hop) for it in record["cutoff_ties"]):
                out.append("tie_cut")
            else:
                out.append("outranked")
        return out
