"""Deliberately slow, literal implementations of SPEC §3.1 and §3.4 used as test oracles."""

from __future__ import annotations

import math

KS = (1, 5, 10, 15, 25)


def slow_trp_ccr(q, ev):
    """(trp or None, ccr) in the label space, straight from SPEC §3.1."""
    gold = {(t["s"], t["r"], t["o"]) for t in q["S_star"]}
    tq = float(q["t_query"])
    hits = [(it["s"], it["r"], it["o"]) for it in ev
            if (it["s"], it["r"], it["o"]) in gold and it["t_start"] <= tq <= it["t_end"]]
    trp = len(hits) / len(ev) if ev else None
    return trp, int(bool(gold) and set(hits) == gold)


def slow_rank(q, ev):
    """SPEC §3.4 metrics of one question (label space), or None when rel is empty."""
    tq = float(q["t_query"])
    rel = {(t["s"], t["r"], t["o"]) for t in q["S_star"] if t["t_start"] <= tq <= t["t_end"]}
    if not rel:
        return None
    seen, ranked = set(), []
    for it in ev:
        whole = (it["s"], it["r"], it["o"], it["t_start"], it["t_end"])
        if whole not in seen:
            seen.add(whole)
            ranked.append(it)
    hits, done = [], set()
    for it in ranked:
        key = (it["s"], it["r"], it["o"])
        h = key in rel and it["t_start"] <= tq <= it["t_end"] and key not in done
        if h:
            done.add(key)
        hits.append(h)
    out = {}
    for k in KS:
        out[f"recall@{k}"] = sum(hits[:k]) / len(rel)
    for k in KS:
        dcg = sum(1 / math.log2(i + 2) for i, h in enumerate(hits[:k]) if h)
        idcg = sum(1 / math.log2(i + 2) for i in range(min(len(rel), k)))
        out[f"ndcg@{k}"] = dcg / idcg
    out["mrr"] = next((1 / (i + 1) for i, h in enumerate(hits) if h), 0.0)
    return out
