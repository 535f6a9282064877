"""Anchors of the BFS (SPEC §2.3): the oracle and the longest-substring linker.

Both return an :class:`Anchor`: the KG entity the expansion starts from (its
index in entity load order, or ``None`` when there is none or it is not in the
KG), its id, its label and where it came from (``oracle``, ``linker``,
``none``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from retriever.config import DEFAULTS

_WORD_CHAR = re.compile(r"\w")


@dataclass(frozen=True)
class Anchor:
    """The start entity of one question's expansion.

    Attributes
    ----------
    index:
        Entity index in load order (SPEC §1.1), or ``None`` when no KG entity
        is the anchor (no match, no gold subject, or an ``s_id`` not in the KG).
    id, label:
        Entity id and label for the run record (``None`` when there is none).
    source:
        ``"oracle"``, ``"linker"`` or ``"none"`` (SPEC §6.1).
    ambiguous:
        The oracle resolved a label that several KG entities render as.
    """

    index: int | None
    id: str | None
    label: str | None
    source: str
    ambiguous: bool = False

    def record(self) -> dict[str, Any]:
        """The ``anchor`` object of a run record (SPEC §6.1)."""
        return {"id": self.id, "label": self.label, "source": self.source}


NO_ANCHOR = Anchor(None, None, None, "none")


class OracleAnchor:
    """The gold first-hop subject, resolved to a KG entity (SPEC §2.3, fixed).

    Resolution order: the ``s_id`` of ``S_star[0]`` when present (even when that
    id is not in the KG: the anchor then has no index and the retrieval is
    empty); ``benchmark.jsonl`` alignment is already merged into the triples by
    :func:`retriever.benchmark.load_benchmark`; else the KG entity whose
    rendered label equals ``S_star[0]["s"]`` exactly (case-sensitive). When
    several entities render as that label, ``ties="first"`` takes the first in
    entity load order (decision) and ``ties="none"`` gives no anchor; either way
    the anchor is flagged ``ambiguous`` so runs can count such cases. When the
    label fallback finds no entity (or ``ties="none"`` refuses a shared label)
    there is no anchor: ``source="none"``, ``id`` and ``label`` ``None``. An
    ``s_id`` not in the KG is still the oracle's anchor (``source="oracle"``).
    """

    def __init__(self, entity_ids: list[str], entity_index: dict[str, int], entity_labels: list[str],
                 ties: str = DEFAULTS.oracle_label_ties) -> None:
        self.entity_ids = entity_ids
        self.entity_index = entity_index
        self.entity_labels = entity_labels
        self.ties = ties
        self._by_label: dict[str, tuple[int, int]] | None = None

    def _label_map(self) -> dict[str, tuple[int, int]]:
        # label -> (first entity in load order, number of entities with that label)
        if self._by_label is None:
            table: dict[str, tuple[int, int]] = {}
            for i, label in enumerate(self.entity_labels):
                first, count = table.get(label, (i, 0))
                table[label] = (first, count + 1)
            self._by_label = table
        return self._by_label

    def gold_subject(self, question: dict[str, Any]) -> Anchor:
        """Resolve the subject of ``S_star[0]`` (no anchor when ``S_star`` is empty)."""
        chain = question.get("S_star") or []
        if not chain or not isinstance(chain[0], dict):
            return NO_ANCHOR
        first = chain[0]
        sid = first.get("s_id")
        if sid is not None and sid != "":
            sid = str(sid)
            idx = self.entity_index.get(sid)
            label = self.entity_labels[idx] if idx is not None else first.get("s", sid)
            return Anchor(idx, sid, label, "oracle")
        label = first.get("s")
        if label is None:
            return NO_ANCHOR
        hit = self._label_map().get(str(label))
        if hit is None:
            # no KG entity renders as the gold label: no anchor (SPEC §6.1 source "none")
            return NO_ANCHOR
        idx, count = hit
        if count > 1 and self.ties == "none":
            return Anchor(None, None, None, "none", ambiguous=True)
        return Anchor(idx, self.entity_ids[idx], self.entity_labels[idx], "oracle", ambiguous=count > 1)

    __call__ = gold_subject


class LinkerAnchor:
    """Longest entity label occurring in the question (SPEC §2.3, decisions documented).

    Candidates are KG entities with a real label (rendered label differs from the
    raw id) whose lowercased label has at least ``min_length`` code points.
    Both the question and the labels are lowercased with ``str.lower``; lengths
    and positions are those of the lowercased strings (``str.lower`` can change
    a string's length, e.g. ``"İ".lower()`` has two code points). Among matches
    the longest wins, then the one whose occurrence starts earliest, then (for
    labels that coincide after lowercasing) the first entity in load order.

    ``match="word"`` keeps only occurrences not preceded and not followed by a
    ``\\w`` character (``(?<!\\w)label(?!\\w)``).

    One Aho-Corasick automaton over the distinct lowercased labels finds every
    occurrence in one pass over the question; selection is by an explicit key,
    so the result does not depend on hash seeds or iteration order.
    """

    def __init__(self, entity_ids: list[str], entity_labels: list[str],
                 match: str = DEFAULTS.linker_match, min_length: int = DEFAULTS.linker_min_length) -> None:
        import ahocorasick

        self.entity_ids = entity_ids
        self.entity_labels = entity_labels
        self.word = match == "word"
        first: dict[str, int] = {}
        for i, (eid, label) in enumerate(zip(entity_ids, entity_labels, strict=True)):
            if label == eid:  # raw-id fallback: no real label (SPEC §1.2)
                continue
            low = label.lower()
            if len(low) >= min_length and low not in first:
                first[low] = i
        automaton = ahocorasick.Automaton(ahocorasick.STORE_ANY, ahocorasick.KEY_STRING)
        for low, i in first.items():
            automaton.add_word(low, (len(low), i))
        self.n_labels = len(first)
        self._automaton = automaton if first else None
        if first:
            automaton.make_automaton()

    def link_index(self, text: str) -> int | None:
        """Entity index of the linked anchor of ``text``, or ``None``."""
        if self._automaton is None:
            return None
        q = text.lower()
        best_len = 0
        best_start = 0
        best = None
        word = self.word
        for end, (length, idx) in self._automaton.iter(q):
            start = end - length + 1
            if length < best_len or (length == best_len and start >= best_start):
                continue
            if word and ((start > 0 and _WORD_CHAR.match(q, start - 1)) or _WORD_CHAR.match(q, end + 1)):
                continue
            best_len, best_start, best = length, start, idx
        return best

    def __call__(self, question: dict[str, Any]) -> Anchor:
        idx = self.link_index(str(question.get("question", "")))
        if idx is None:
            return NO_ANCHOR
        return Anchor(idx, self.entity_ids[idx], self.entity_labels[idx], "linker")
