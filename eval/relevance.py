"""Relevance of a returned list with binary gains (SPEC §3.4), shared by the rank
metrics, the tie-aware expectations and the TREC export.

Relevant set ``rel``: the distinct ``S_star`` triples whose own window is valid
at ``t_query`` (the table's ``class_valid``). The ranked list is the returned
evidence deduplicated on the whole item ``(s, r, o, t_start, t_end)``, first
occurrence kept, so a repeated item neither helps nor pushes later items down.
Item ``i`` is a hit when its triple is in ``rel``, its own window is valid at
``t_query`` and no earlier item was a hit for the same triple (a wrong-time
copy is not relevant)::

    gains[q, p] = 1  iff  the p-th item of q's deduplicated list is a hit
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from eval.evidence import EvidenceTable, ItemColumns
from eval.measures import RANK_MEASURES


def _same_as_previous(sorted_key: np.ndarray) -> np.ndarray:
    """``sorted_key[1:] == sorted_key[:-1]``, NaN equal to NaN (one value, :mod:`eval.keyspace`)."""
    same = sorted_key[1:] == sorted_key[:-1]
    if sorted_key.dtype.kind == "f":
        same |= np.isnan(sorted_key[1:]) & np.isnan(sorted_key[:-1])
    return same


#: Integral float keys up to this magnitude are read as integers (their differences stay exact in float64).
_INTEGRAL = 2.0 ** 52
#: The largest product of key sizes packed into one ``int64``.
_PACK_LIMIT = 2 ** 62


def _as_codes(key: np.ndarray) -> tuple[np.ndarray, int] | None:
    """``(key - min(key)`` as ``int64``, its size)``, or ``None`` when the key is not read as integers.

    Equal exactly where ``key`` is equal: an integer key, or a float key whose
    values are all finite whole numbers (``-0.0`` and ``0.0`` both 0, as
    ``==`` has them; a NaN keeps the key a float, compared by
    :func:`_same_as_previous`). Years, the times of a KG, are such floats.
    """
    if key.dtype.kind in "iub":
        lo, hi = int(key.min()), int(key.max())
        if hi >= 2 ** 63 or hi - lo >= _PACK_LIMIT:
            return None
        return key.astype(np.int64) - lo, hi - lo + 1
    if key.dtype.kind != "f" or not np.isfinite(key).all():
        return None
    lo_f, hi_f = float(key.min()), float(key.max())
    if max(-lo_f, hi_f) > _INTEGRAL or not (key == np.floor(key)).all():
        return None
    lo, hi = int(lo_f), int(hi_f)
    if hi - lo >= _PACK_LIMIT:
        return None
    return (key - lo_f).astype(np.int64), hi - lo + 1  # exact: whole numbers below 2**53


def _packed(keys: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The keys with runs of adjacent integer keys packed into one ``int64`` each (mixed radix).

    An integer key (or a float key of whole numbers, :func:`_as_codes`) is
    shifted to start at 0; packing is one-to-one on each key's range, so two
    elements have equal packed keys exactly when they have equal keys: fewer
    keys to sort.
    """
    out: list[np.ndarray] = []
    packed, span = None, 1
    for key in keys:
        codes = _as_codes(key)
        if codes is not None:
            code, size = codes
            if packed is not None and span * size < _PACK_LIMIT:
                packed, span = packed * size + code, span * size
                continue
            if packed is not None:
                out.append(packed)
            packed, span = code, size
            continue
        if packed is not None:
            out.append(packed)
            packed = None
        out.append(key)
    if packed is not None:
        out.append(packed)
    return out


def group_ids(keys: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, firsts)``: an id per element for its group of equal key tuples, numbered in order of first
    occurrence, and the index of each group's first element (ascending)."""
    n = len(keys[0])
    if not n:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    keys = _packed(keys)
    # stable: equal keys keep index order (one key: the same order, without lexsort's extra pass)
    order = np.argsort(keys[0], kind="stable") if len(keys) == 1 else np.lexsort(tuple(reversed(keys)))
    new = np.ones(n, dtype=bool)
    same = np.ones(n - 1, dtype=bool)
    for k in keys:
        same &= _same_as_previous(k[order])
    new[1:] = ~same
    run = np.cumsum(new) - 1
    firsts = order[new]
    rank = np.empty(len(firsts), dtype=np.int64)
    by_first = np.argsort(firsts, kind="stable")
    rank[by_first] = np.arange(len(firsts))
    ids = np.empty(n, dtype=np.int64)
    ids[order] = rank[run]
    return ids, firsts[by_first]  # firsts sorted (distinct indices: the order sort gives)


def whole_keys(items: ItemColumns) -> list[np.ndarray]:
    """The key of an item's whole item, question first: ``(q, space, s, r, o, t_start, t_end)``."""
    return [items.q, items.space, items.s, items.r, items.o, items.ts, items.te]


class HitMatrix(NamedTuple):
    """SPEC §3.4's hits: ``gains[q, p]``, ``n_rel[q] = |rel|``, and each item's place in its deduplicated list."""

    gains: np.ndarray
    n_rel: np.ndarray
    dedup_pos: np.ndarray  # per evidence item, its position in the deduplicated list (-1: a repeat)
    hit: np.ndarray  # per evidence item, it is a hit


def relevant(table: EvidenceTable, items: ItemColumns) -> np.ndarray:
    """Per item: a valid copy of a relevant triple (its class is in ``rel`` and its own window is valid)."""
    rel = np.zeros(len(items), dtype=bool)
    has = items.gid >= 0
    rel[has] = table.class_valid[items.gid[has]]
    return rel & table.valid(items)


def hit_matrix(table: EvidenceTable, width: int | None = None) -> HitMatrix:
    """The hit indicators of every question's deduplicated list (SPEC §3.4), the kernel of this module.

    ``width``: at least this many columns (default: the largest cut-off of
    :data:`~eval.measures.RANK_MEASURES` and the longest list). The hits are
    found once per table (kept in ``table.derived``: the rank, tie and TREC
    readings of one table share them).
    """
    found = table.derived.get("hits")
    if found is None:
        found = table.derived["hits"] = _hits(table)
    dedup_pos, hit, hit_idx, lengths, n_rel = found
    items = table.items
    n = table.n
    kmax = max(m.cutoff or 1 for m in RANK_MEASURES)
    width = max(kmax, int(lengths.max()) if n else 0, width or 0)
    gains = np.zeros((n, width), dtype=np.float64)
    gains[items.q[hit_idx], dedup_pos[hit_idx]] = 1.0
    return HitMatrix(gains, n_rel, dedup_pos, hit)


def _hits(table: EvidenceTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(dedup_pos, hit, hit_idx, lengths, n_rel)``: what :func:`hit_matrix` reads of the table."""
    items = table.items
    n = table.n
    keep = np.zeros(len(items), dtype=bool)
    keep[group_ids(whole_keys(items))[1]] = True
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    dedup_pos = np.where(keep, kept_before[1:] - 1 - kept_before[items.start[:-1]][items.q], -1)
    cand = np.flatnonzero(keep & relevant(table, items))
    hit_idx = cand[group_ids([items.gid[cand]])[1]] if len(cand) else cand
    hit = np.zeros(len(items), dtype=bool)
    hit[hit_idx] = True
    lengths = np.bincount(items.q[keep], minlength=n)
    n_rel = np.bincount(np.repeat(np.arange(n), table.n_gold), weights=table.class_valid,
                        minlength=n).astype(np.int64)
    for shared in (dedup_pos, hit, hit_idx, lengths, n_rel):
        shared.setflags(write=False)  # every reading of the table gets these very arrays
    return dedup_pos, hit, hit_idx, lengths, n_rel
