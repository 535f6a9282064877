"""A synthetic benchmark and run of any size for scoring tests and the timing check."""

from __future__ import annotations

import random


def _t(s, r, o, y, sid=True):
    d = {"s": f"ent {s}", "r": f"rel {r}", "o": f"ent {o}", "t_start": float(y), "t_end": float(y)}
    if sid:
        d.update(s_id=f"Q{s}", r_id=f"P{r}", o_id=f"Q{o}")
    return d


def synthetic(n: int = 8710, k: int = 15, seed: int = 0):
    """``(questions, run, flags)``: TempBench-shaped records and a run with scores and cut-off ties."""
    rng = random.Random(seed)
    questions, run, flags = [], {}, {}
    splits = ["train"] * 70 + ["dev"] * 10 + ["test"] * 20
    for i in range(n):
        qid = f"q{i:05d}"
        tq = rng.randint(1990, 2020)
        hops = rng.choice([1, 2, 3])
        ents = [rng.randint(0, 5000) for _ in range(hops + 1)]
        star = [_t(ents[h], rng.randint(0, 50), ents[h + 1], tq) for h in range(hops)]
        stale = list(star)
        stale[0] = dict(star[0], t_start=float(tq - 3), t_end=float(tq - 3))
        dist = list(star)
        dist[-1] = _t(ents[-2], int(star[-1]["r_id"][1:]), rng.randint(0, 5000), tq - 1)
        op = "interval" if rng.random() < 0.1 else "point_in_time"
        questions.append({
            "id": qid, "split": rng.choice(splits), "question": f"question {i}?", "answer": str(tq) if op == "interval" else "x",
            "t_query": float(tq), "complexity": {1: "1hop", 2: "2hop", 3: "3+hop"}[hops], "operator_type": op,
            "S_star": star, "S_dist": dist, "S_stale": stale,
        })
        flags[qid] = {"stale_functional": rng.random() < 0.8, "dist_functional": rng.random() < 0.7}
        pool = star + [stale[0], dist[-1]] + [_t(rng.randint(0, 5000), rng.randint(0, 50), rng.randint(0, 5000), tq) for _ in range(k + 10)]
        rng.shuffle(pool)
        scores = sorted((round(rng.uniform(0, 20), 0) for _ in pool), reverse=True)
        items = [dict(t, score=s, line=j) for j, (t, s) in enumerate(zip(pool, scores, strict=True))]
        n_ret = k if rng.random() < 0.9 else rng.randint(0, k)
        evidence = items[:n_ret]
        ties = [t for t in items[n_ret:] if evidence and t["score"] == evidence[-1]["score"]]
        run[qid] = {"id": qid, "split": questions[-1]["split"], "anchor": {"id": star[0]["s_id"], "label": star[0]["s"], "source": "oracle"},
                    "evidence": evidence, "cutoff_ties": ties}
    return questions, run, flags
