"""Relevance of a returned list with binary gains (SPEC §3.4), shared by the rank
metrics, the tie-aware expectations and the TREC export.

Relevant set ``rel``: the distinct ``S_star`` triples whose own window is valid
at ``t_query``. The ranked list is the returned evidence deduplicated on the
whole item ``(s, r, o, t_start, t_end)``, first occurrence kept, so a repeated
item neither helps nor pushes later items down. Item ``i`` is a hit when its
triple is in ``rel``, its own window is valid at ``t_query`` and no earlier
item was a hit for the same triple (a wrong-time copy is not relevant).
"""

from __future__ import annotations

from typing import Any

from eval.keyspace import Item, Resolved


def relevant_classes(res: Resolved) -> list[int]:
    """The gold classes in ``rel``: a member is valid at ``t_query`` (SPEC §3.4)."""
    return [c for c, valid in enumerate(res.class_valid) if valid]


def deduplicated(items: list[Item]) -> list[Item]:
    """The items without repeats of a whole item, first occurrence kept, in order."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for it in items:
        whole = it.whole
        if whole not in seen:
            seen.add(whole)
            out.append(it)
    return out


def hit_list(res: Resolved) -> tuple[list[bool], int]:
    """Hit indicators of the deduplicated returned list, and ``|rel|`` (SPEC §3.4)."""
    tq = res.tq
    rel = set(relevant_classes(res))
    done: set[int] = set()
    flags: list[bool] = []
    for it in deduplicated(res.items):
        hit = it.cls in rel and it.valid_at(tq) and it.cls not in done
        if hit:
            done.add(it.cls)
        flags.append(hit)
    return flags, len(rel)
