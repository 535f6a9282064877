"""Deliberately slow, literal implementations of SPEC §3.1-§3.5, the test oracles of ``eval/``.

One of each, shared by every test (and written from SPEC's sentences, not from
``eval/``, which this module never imports):

- :func:`published_score` / :func:`published_aggregate`: the dataset's published
  scorer rebuilt from SPEC §3.1-§3.2 (its per-item key-space decision included);
- :func:`slow_rank`: the rank metrics of SPEC §3.4 for one question;
- :func:`tie_orderings` / :func:`distinct_tie_orderings` / :func:`brute_ties` /
  :func:`brute_ties_macro`: SPEC §3.5 by brute force, every ordering of every
  group of equal scores enumerated (small cases only).

Key space. The published scorer takes ids for an evidence item when it has all
of ``s_id, r_id, o_id`` (labels otherwise), ids for the gold when ``S_star[0]``
has all three, and an item in the other space than the gold never matches; a
5-tuple/list is compared in the gold's space. :func:`slow_rank` keys the same
way. Where each side carries the same single space, or both carry both, this is
also what ``key='auto'`` does (SPEC §3.1's conformance domain), which is where
the tests compare.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

KS = (1, 5, 10, 15, 25)
RANK_NAMES = [f"recall@{k}" for k in KS] + [f"ndcg@{k}" for k in KS] + ["mrr"]

_ID_KEYS = ("s_id", "r_id", "o_id")
_LABEL_KEYS = ("s", "r", "o")


# ---------------------------------------------------------------- SPEC §3.1 key space, the published way
def _has_ids(d: Any) -> bool:
    return isinstance(d, dict) and all(k in d for k in _ID_KEYS)


def _gold_in_ids(q: dict) -> bool:
    """The published scorer decides the gold's key space from ``S_star[0]`` alone."""
    return bool(q["S_star"]) and _has_ids(q["S_star"][0])


def _triple_key(t: dict, ids: bool) -> tuple:
    return tuple(t[k] for k in (_ID_KEYS if ids else _LABEL_KEYS))


def _item(it: Any, gold_ids: bool) -> tuple[bool, tuple, float, float]:
    """``(comparable with the gold, (s, r, o), t_start, t_end)`` of one evidence item."""
    if isinstance(it, dict):
        item_ids = _has_ids(it)
        return item_ids == gold_ids, _triple_key(it, item_ids), float(it["t_start"]), float(it["t_end"])
    return not gold_ids, (it[0], it[1], it[2]), float(it[3]), float(it[4])


# ---------------------------------------------------------------- SPEC §3.1 / §3.2: the published scorer
def published_score(q: dict, evidence) -> dict:
    """One question's row, as the published scorer computes it (SPEC §3.1)."""
    gold_ids = _gold_in_ids(q)
    gold = {_triple_key(t, gold_ids) for t in q["S_star"]}
    tq = float(q["t_query"])
    n_ret = hits = 0
    hit_set = set()
    for it in evidence:
        n_ret += 1
        same_space, key, ts, te = _item(it, gold_ids)
        if same_space and key in gold and ts <= tq <= te:
            hits += 1
            hit_set.add(key)
    return {
        "id": q.get("id"), "complexity": q.get("complexity"), "operator": q.get("operator_type"),
        "n_ret": n_ret, "hits": hits, "n_gold": len(gold),
        "trp": hits / n_ret if n_ret else None, "ccr": int(bool(gold) and hit_set == gold),
    }


def published_aggregate(rows: list[dict], by=("complexity", "operator")) -> dict:
    """SPEC §3.2's aggregate of :func:`published_score` rows."""
    if not rows:
        return {"n_questions": 0}
    ret = [r for r in rows if r["n_ret"] > 0]
    total_ret = sum(r["n_ret"] for r in rows)
    out = {
        "n_questions": len(rows),
        "coverage": len(ret) / len(rows),
        "TRP_macro": sum(r["trp"] for r in ret) / len(ret) if ret else 0.0,
        "TRP_micro": sum(r["hits"] for r in rows) / total_ret if total_ret else 0.0,
        "CCR": sum(r["ccr"] for r in rows) / len(rows),
    }
    for f in by:
        out[f"by_{f}"] = {}
        for v in sorted({r.get(f) for r in rows}, key=str):
            m = [r for r in rows if r.get(f) == v]
            mr = [r for r in m if r["n_ret"] > 0]
            out[f"by_{f}"][v] = {"n": len(m), "TRP": sum(r["trp"] for r in mr) / len(mr) if mr else 0.0,
                                 "CCR": sum(r["ccr"] for r in m) / len(m)}
    return out


# ---------------------------------------------------------------- SPEC §3.4: rank metrics of one question
def slow_rank(q: dict, evidence, ks=KS) -> dict[str, float] | None:
    """``recall@k``, ``ndcg@k`` (k in ``ks``) and ``mrr`` of one question, or None when ``rel`` is empty."""
    gold_ids = _gold_in_ids(q)
    tq = float(q["t_query"])
    rel = {_triple_key(t, gold_ids) for t in q["S_star"] if float(t["t_start"]) <= tq <= float(t["t_end"])}
    if not rel:
        return None
    # dedup on the whole item, first occurrence kept, never beyond what was returned
    seen, ranked = set(), []
    for it in evidence:
        whole = _item(it, gold_ids)
        if whole not in seen:
            seen.add(whole)
            ranked.append(whole)
    hits, done = [], set()
    for same_space, key, ts, te in ranked:
        hit = same_space and key in rel and ts <= tq <= te and key not in done
        if hit:
            done.add(key)
        hits.append(hit)
    out = {}
    for k in ks:
        out[f"recall@{k}"] = sum(hits[:k]) / len(rel)
    for k in ks:
        dcg = sum(1 / math.log2(i + 2) for i, h in enumerate(hits[:k]) if h)
        idcg = sum(1 / math.log2(i + 2) for i in range(min(len(rel), k)))
        out[f"ndcg@{k}"] = dcg / idcg
    out["mrr"] = next((1 / (i + 1) for i, h in enumerate(hits) if h), 0.0)
    return out


# ---------------------------------------------------------------- SPEC §3.5: every ordering of the tie groups
def tie_groups(known: list[dict]) -> list[list[dict]]:
    """The runs of equal ``score`` in a known ranking (evidence then cut-off ties)."""
    return [list(g) for _, g in itertools.groupby(known, key=lambda t: t["score"])]


def tie_orderings(known: list[dict]):
    """Every ordering with each group of equal scores permuted, with multiplicity (the literal uniform shuffle)."""
    for combo in itertools.product(*(itertools.permutations(g) for g in tie_groups(known))):
        yield [t for grp in combo for t in grp]


def _distinct_perms(group: list[dict]):
    """The distinct arrangements of a multiset of items: each is equally likely under a uniform shuffle."""
    keys = sorted({tuple(sorted(t.items())) for t in group})
    left = {k: sum(1 for t in group if tuple(sorted(t.items())) == k) for k in keys}

    def rec(prefix):
        if len(prefix) == len(group):
            yield list(prefix)
            return
        for k in keys:
            if left[k]:
                left[k] -= 1
                prefix.append(dict(k))
                yield from rec(prefix)
                prefix.pop()
                left[k] += 1

    yield from rec([])


def distinct_tie_orderings(known: list[dict]):
    """Like :func:`tie_orderings`, counting identical items once (same mean, min and max; fewer orderings)."""
    for combo in itertools.product(*(list(_distinct_perms(g)) for g in tie_groups(known))):
        yield [t for grp in combo for t in grp]


def brute_ties(q: dict, evidence: list[dict], cutoff_ties: list[dict], orderings=tie_orderings) -> dict[str, tuple]:
    """``{metric: (observed, expected, min, max)}`` of one question by enumeration (SPEC §3.5).

    Each ordering is cut at the returned length ``n_ret`` and scored by
    :func:`published_score` (``TRP``, ``CCR``) and :func:`slow_rank`. ``TRP``
    is absent when nothing was returned, the rank metrics when ``rel`` is empty.
    """
    n_ret = len(evidence)
    vals: dict[str, list[float]] = {}
    for order in orderings(list(evidence) + list(cutoff_ties)):
        cut = order[:n_ret]
        row = published_score(q, cut)
        if row["trp"] is not None:
            vals.setdefault("TRP", []).append(row["trp"])
        vals.setdefault("CCR", []).append(float(row["ccr"]))
        for name, v in (slow_rank(q, cut) or {}).items():
            vals.setdefault(name, []).append(v)
    row = published_score(q, evidence)
    observed = {"TRP": row["trp"], "CCR": float(row["ccr"]), **(slow_rank(q, evidence) or {})}
    return {name: (observed[name], math.fsum(v) / len(v), min(v), max(v)) for name, v in vals.items()}


def brute_ties_macro(questions: list[dict], evidences: list[list[dict]], cutoff_ties: list[list[dict]]) -> dict[str, tuple]:
    """Macro ``{metric: (observed, expected, min, max)}`` over questions, each by :func:`brute_ties`.

    Like the metrics themselves: TRP over questions that returned something,
    rank metrics over questions with a non-empty ``rel``.
    """
    per: dict[str, list[tuple]] = {}
    for q, ev, ct in zip(questions, evidences, cutoff_ties, strict=True):
        for name, value in brute_ties(q, ev, ct).items():
            per.setdefault(name, []).append(value)
    return {name: tuple(sum(x[j] for x in rows) / len(rows) for j in range(4)) for name, rows in per.items()}
