"""A deliberately slow, obviously correct reference retriever (SPEC §2.3-§2.5).

Pure Python: lists, sets, dicts, loops over rows. It shares nothing with the
fast path in ``retriever/`` except the KG arrays and rendered labels it reads;
its BM25 is the one slow BM25 of the tests (:mod:`reference.bm25`).
Used by the tests (identical evidence on every question) and by
``scripts/bench.py`` (speed ratio, measured side by side).
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from typing import Any

from reference.bm25 import SlowBM25, kg_documents


class SlowRetriever:
    """The retriever of SPEC §2 written as plainly as possible.

    ``cfg`` is a :class:`retriever.config.RetrieverConfig` (only its values are read).
    ``scan=True`` finds a node's rows by scanning every KG row (SPEC's words
    taken literally, no index at all); the default reads per-entity row lists
    built once by a loop over the rows.
    """

    def __init__(self, kg, entity_labels: list[str], relation_labels: list[str], bm25: SlowBM25 | None = None,
                 scan: bool = False) -> None:
        self.scan = scan
        self.head = kg.head.tolist()
        self.tail = kg.tail.tolist()
        self.rel = kg.relation.tolist()
        self.year = kg.year.tolist()
        self.entity_ids = list(kg.entity_ids)
        self.relation_ids = list(kg.relation_ids)
        self.elab = list(entity_labels)
        self.rlab = list(relation_labels)
        self.incident: dict[int, list[int]] = defaultdict(list)
        for i in range(len(self.head)):
            self.incident[self.head[i]].append(i)
            if self.tail[i] != self.head[i]:
                self.incident[self.tail[i]].append(i)
        self._bm25 = bm25
        self._kg = kg

    @property
    def bm25(self) -> SlowBM25:
        """The slow BM25 over every KG row, built on first use (the BFS alone never needs it)."""
        if self._bm25 is None:
            self._bm25 = SlowBM25(kg_documents(self._kg, self.elab, self.rlab))
        return self._bm25

    # -- anchors (SPEC §2.3) --------------------------------------------------
    def oracle(self, q: dict[str, Any], ties: str = "first") -> int | None:
        if not q.get("S_star"):
            return None
        first = q["S_star"][0]
        if first.get("s_id"):
            for i, e in enumerate(self.entity_ids):
                if e == first["s_id"]:
                    return i
            return None
        matches = [i for i, lab in enumerate(self.elab) if lab == first.get("s")]
        if not matches or (len(matches) > 1 and ties == "none"):
            return None
        return matches[0]

    def linker(self, q: dict[str, Any], word: bool = False, min_length: int = 2) -> int | None:
        text = q["question"].lower()
        best = None  # (length, start, entity)
        for i, lab in enumerate(self.elab):
            if lab == self.entity_ids[i]:
                continue
            low = lab.lower()
            if len(low) < min_length:
                continue
            start = text.find(low)
            while start != -1:
                end = start + len(low)
                ok = True
                if word:
                    before = text[start - 1] if start > 0 else ""
                    after = text[end] if end < len(text) else ""
                    ok = not re.match(r"\w", before) and not re.match(r"\w", after)
                if ok:
                    break
                start = text.find(low, start + 1)
            if start == -1:
                continue
            cand = (len(low), start, i)
            if best is None or cand[0] > best[0] or (cand[0] == best[0] and cand[1] < best[1]):
                best = cand
        return None if best is None else best[2]

    # -- BFS (SPEC §2.4) ---------------------------------------------------------
    def rows_of(self, nodes: list[int]) -> list[int]:
        """Rows incident to any of ``nodes``, ascending edge id."""
        if self.scan:
            wanted = set(nodes)
            return [i for i in range(len(self.head)) if self.head[i] in wanted or self.tail[i] in wanted]
        return sorted({r for e in nodes for r in self.incident[e]})

    def passes(self, row: int, t_query: float, on: bool) -> bool:
        return (not on) or (float(self.year[row]) <= t_query <= float(self.year[row]))

    def triple(self, row: int) -> tuple[int, int, int]:
        return (self.head[row], self.rel[row], self.tail[row])

    def take(self, rows: list[int], cap: int, pool: list[int], unique: bool) -> list[int]:
        if not unique:
            return rows[:cap]
        have = {self.triple(r) for r in pool}
        out: list[int] = []
        new = 0
        for r in rows:
            if new == cap:
                break
            out.append(r)
            if self.triple(r) not in have:
                have.add(self.triple(r))
                new += 1
        return out

    def pool(self, anchor: int | None, t_query: float, cfg) -> list[int]:
        """The candidates: the raw pool deduplicated on ``(s, r, o)``, first time-version kept (SPEC §2.4)."""
        kept: list[int] = []
        triples: set[tuple[int, int, int]] = set()
        for r in self.raw_pool(anchor, t_query, cfg):
            if self.triple(r) not in triples:
                triples.add(self.triple(r))
                kept.append(r)
        return kept

    def raw_pool(self, anchor: int | None, t_query: float, cfg, capped: bool = True) -> list[int]:
        """SPEC §2.4's pseudo-code: the pool before deduplication; ``capped=False`` removes every cap."""
        if anchor is None:
            return []
        frontier = [anchor]
        visited = {anchor}
        seen: set[int] = set()
        pool: list[int] = []
        unique = cfg.cap_counts == "unique_triples"
        for h in range(cfg.hops):
            cap = cfg.caps[h] if capped else len(self.head)
            if cfg.cap_scope == "per_hop":
                cand = [r for r in self.rows_of(frontier) if r not in seen and self.passes(r, t_query, cfg.temporal_filter)]
                cand = self.take(cand, cap, pool, unique)
            else:
                chosen: set[int] = set()
                for e in frontier:
                    mine = [r for r in self.rows_of([e]) if r not in seen and self.passes(r, t_query, cfg.temporal_filter)]
                    chosen.update(self.take(sorted(mine), cap, pool, unique))
                cand = sorted(chosen)
            pool.extend(cand)
            seen.update(cand)
            new_frontier = []
            for r in cand:
                for e in (self.head[r], self.tail[r]):
                    if e not in visited:
                        visited.add(e)
                        new_frontier.append(e)
            frontier = new_frontier
        return pool

    # -- ranking (SPEC §2.5) -------------------------------------------------------
    def line(self, row: int, template: str) -> str:
        y = self.year[row]
        return template.format(s=self.elab[self.head[row]], r=self.rlab[self.rel[row]], o=self.elab[self.tail[row]],
                               t=str(y), s_id=self.entity_ids[self.head[row]], r_id=self.relation_ids[self.rel[row]],
                               o_id=self.entity_ids[self.tail[row]], t_start=y, t_end=y)

    def retrieve(self, q: dict[str, Any], cfg) -> dict[str, Any]:
        if cfg.anchor == "oracle":
            anchor = self.oracle(q, cfg.oracle_label_ties)
        else:
            anchor = self.linker(q, word=cfg.linker_match == "word", min_length=cfg.linker_min_length)
        tq = float(q["t_query"])
        rows = self.pool(anchor, tq, cfg)
        text = q["question"]
        if cfg.query_includes_t_query:
            text += " " + (str(int(tq)) if tq == int(tq) else repr(tq))
        items = []
        for pos, r in enumerate(rows):
            items.append({"pos": pos, "row": r, "score": self.bm25.score(text, r), "line": self.line(r, cfg.line_template)})

        def compare(a: dict[str, Any], b: dict[str, Any]) -> int:
            if a["score"] != b["score"]:
                return -1 if a["score"] > b["score"] else 1
            if cfg.tie_break == "reverse_lex" and a["line"] != b["line"]:
                return -1 if a["line"] > b["line"] else 1
            ka = a["pos"] if cfg.homonym_order == "pool" else a["row"]
            kb = b["pos"] if cfg.homonym_order == "pool" else b["row"]
            return -1 if ka < kb else (1 if ka > kb else 0)

        items.sort(key=functools.cmp_to_key(compare))
        top = items[: cfg.k]
        ties = [it for it in items[cfg.k:] if top and it["score"] == top[-1]["score"]]
        return {
            "anchor": None if anchor is None else self.entity_ids[anchor],
            "evidence": [(it["row"], it["score"], it["line"]) for it in top],
            "cutoff_ties": [(it["row"], it["score"], it["line"]) for it in ties],
        }
