#!/usr/bin/env python
"""Benchmarks of tempbench-repro; figures go to a JSON file (default ``bench-results.json``).

Usage::

    python scripts/bench.py [--only index,...] [--out bench-results.json] [--workdir DIR]

Each section is a function registered in ``SECTIONS``; it returns a JSON-ready
dict stored under its name. Results are *merged* into the output file, so
sections run separately (or added later by other work) keep each other's
figures. Time and peak-RSS figures are measured in a fresh subprocess per
measurement (``resource.getrusage`` of that process), so one measurement never
inherits another's memory.

Section ``index`` (issue 2): at the real file's size (550,376 rows, ~47k
entities, 283 relations, 1900-2024), build the index from the CSV, reload it
from the cache, and score random 660-document subsets with our BM25 and with
``rank_bm25.BM25Okapi.get_batch_scores`` side by side (with SPEC §2.2's idf
swapped in and the query deduplicated), asserting bit-identical scores.
Targets: build <= 15 s, cached reload <= 3 s, peak RSS <= 3 GB, scoring >= 10x.

Section ``sample`` (issue 3): the generated stand-in data (SPEC §5) at the
``small`` and ``full`` scales, each in a fresh process: wall time of
``generate_sample`` and of its stages, peak RSS, counts. Targets: small <= 5 s,
full <= 60 s.

Section ``retrieval`` (issue 4): on the full generated sample (8,710 questions),
from a cached index, one worker, every configuration of SPEC §2.6 over every
question; the linker alone; and the slow reference of
``tests/reference/retriever.py`` side by side with the fast path on the
same questions (``--slow-questions``), asserting identical evidence; and its
full-scan variant (every KG row examined per hop, ``--scan-questions``). Targets:
oracle >= 500 q/s, stale_blind and hop3_k25 >= 200 q/s, linker >= 2,000 q/s,
>= 20x faster than the slow reference.

Section ``scoring`` (issue 5): on the full generated sample, the oracle run over
all 8,710 questions is scored with everything on (TRP/CCR, negatives, rank
metrics, tie-aware expectations, 1,000 bootstrap replicates, answers from the
"copy t_query" baseline). Target: <= 10 s on 2 cores.

Section ``reproduce`` (issue 6): ``tempbench reproduce`` with an empty cache
(data generation included) on the small default data, as a user runs it.
Target: <= 60 s on 2 cores.

Issue 15 sections, each timed command best of ``--best-of`` (3) in fresh
processes: ``speed_reproduce``, ``tempbench reproduce --data FULL --split all``
with a warm index cache (target 12 s on 2 cores, moonshot 6 s; the outputs of
the default workers and of ``--workers 1`` are compared byte for byte);
``run_rate``, ``tempbench run`` oracle on the full sample on one core, process
start to file written, with the start-up (the interpreter and the command's
imports) subtracted (target 4,000 questions/s); ``large_kg``, a
tkgl-wikidata-size KG from ``tempbench sample --scale wikidata`` (10M rows, 1M
entities): index build (target 60 s, peak RSS 4 GB), cached reload (2 s) and an
oracle run of its 2,000 questions end to end (6 s); ``scoring_columnar``, the
columnar scorer against the per-question path on the full oracle run (same
score object).

Section ``repro`` (issue 23): ``tempbench repro ORIGINAL REPRODUCED`` over the
four configurations of the full generated sample (8,710 questions, ``--split
all``), the original made with ``cap_counts = unique_triples``, best of
``--best-of`` in fresh processes with ``--workers 2``; and, in one process, where
the time goes: reading the eight runs, scoring them
(:func:`eval.scoring.evaluate`), their document ids, and the SPEC §8 kernels.
Target: 3 s on 2 cores.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the slow reference implementations (tests/reference/)

from rank_bm25 import BM25Okapi  # noqa: E402
from reference.retriever import SlowRetriever  # noqa: E402

from eval.scoring import evaluate, evaluate_reference, score_run, to_json  # noqa: E402
from retriever.benchmark import load_benchmark, load_flags  # noqa: E402
from retriever.config import load_config  # noqa: E402
from retriever.index import load_index  # noqa: E402
from retriever.pipeline import Retriever  # noqa: E402
from retriever.tokenizer import tokenize  # noqa: E402
from tempbench.data import resolve_data  # noqa: E402
from tempbench.sample import generate_sample  # noqa: E402
from tempbench.sample.builder import build_benchmark  # noqa: E402
from tempbench.sample.world import build_world  # noqa: E402
from tempbench_core.atomic import write_json  # noqa: E402
from tempbench_core.layout import cache_home  # noqa: E402

SIDE_BY_SIDE_REPEATS = 3
FULL_ROWS = 550_376
FULL_ENTITIES = 47_433
FULL_RELATIONS = 283


# --------------------------------------------------------------------------- helpers
def run_child(*argv: str) -> dict[str, Any]:
    """Run ``bench.py --child ...`` in a fresh interpreter; return its JSON result."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", *argv]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child {argv} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


def synthetic_kg(out: Path, seed: int = 1) -> tuple[Path, Path]:
    """A quick TGB-format KG of the real file's size with multi-word labels sharing tokens."""
    rng = np.random.default_rng(seed)
    syllables = ["ka", "lo", "ri", "ven", "ta", "mor", "el", "sa", "ne", "ber", "gon", "li", "ar", "tu", "mi", "don"]
    words = sorted({"".join(rng.choice(syllables, size=rng.integers(2, 4))) for _ in range(30_000)})
    common = ["of", "the", "university", "river", "saint", "county", "national", "club", "party", "award"]
    zipf = np.minimum(rng.zipf(1.3, size=400_000), len(words)) - 1
    pick = iter(zipf.tolist())

    def label(n_words: int) -> str:
        parts = [words[next(pick)] for _ in range(n_words)]
        if rng.random() < 0.3:
            parts.insert(int(rng.integers(0, n_words + 1)), common[int(rng.integers(0, len(common)))])
        return " ".join(parts).title()

    ent_ids = [f"Q{i}" for i in rng.choice(10_000_000, size=FULL_ENTITIES, replace=False) + 1]
    rel_ids = [f"P{i}" for i in rng.choice(9_000, size=FULL_RELATIONS, replace=False) + 1]
    ent_labels = [label(int(rng.integers(1, 5))) for _ in ent_ids]
    rel_labels = [label(int(rng.integers(1, 4))).lower() for _ in rel_ids]
    # Skewed degrees (hubs) and relation frequencies; many (s, r, o) repeated across years.
    n_base = FULL_ROWS // 3
    heads = np.minimum(rng.zipf(1.5, size=n_base), FULL_ENTITIES) - 1
    tails = rng.integers(0, FULL_ENTITIES, size=n_base)
    rels = np.minimum(rng.zipf(1.4, size=n_base), FULL_RELATIONS) - 1
    base = rng.integers(0, n_base, size=FULL_ROWS)
    years = rng.integers(1900, 2025, size=FULL_ROWS)
    order = np.argsort(years, kind="stable")
    h, t, r, y = heads[base][order], tails[base][order], rels[base][order], years[order]
    kg_path = out / "tkgl-smallpedia_edgelist.csv"
    ents = np.asarray(ent_ids, dtype=object)
    relsa = np.asarray(rel_ids, dtype=object)
    with kg_path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write("ts,head,tail,relation_type\n")
        for a, b_, c, d in zip(y.tolist(), ents[h].tolist(), ents[t].tolist(), relsa[r].tolist(), strict=True):
            handle.write(f"{a},{b_},{c},{d}\n")
    labels_path = out / "labels.tsv"
    with labels_path.open("w", encoding="utf-8", newline="\n") as handle:
        handle.write("id\tlabel\n")
        for i, lab in zip(ent_ids + rel_ids, ent_labels + rel_labels, strict=True):
            handle.write(f"{i}\t{lab}\n")
    return kg_path, labels_path


def full_data(workdir: Path, source: str) -> tuple[Path, Path, str]:
    """CSV + labels at full scale: the sample generator (``scale='full'``) when it works, else synthetic."""
    if source in ("auto", "sample"):
        target = workdir / "sample-full"
        try:
            if not (target / "MANIFEST.json").exists():
                generate_sample(target, scale="full", seed=42)
            return target / "tkgl-smallpedia_edgelist.csv", target / "labels.tsv", "tempbench.sample scale=full seed=42"
        except Exception as exc:  # noqa: BLE001 - fall back and say so
            if source == "sample":
                raise
            print(f"bench: sample generator unavailable ({type(exc).__name__}: {exc}); using the synthetic KG", file=sys.stderr)
    target = workdir / "synthetic-full"
    target.mkdir(parents=True, exist_ok=True)
    kg, labels = target / "tkgl-smallpedia_edgelist.csv", target / "labels.tsv"
    if not (kg.exists() and labels.exists()):
        kg, labels = synthetic_kg(target)
    return kg, labels, "synthetic (scripts/bench.py)"


# --------------------------------------------------------------------------- children
def child_build(kg: str, labels: str, cache: str) -> dict[str, Any]:
    start = time.perf_counter()
    index = load_index(kg, labels, None, cache_dir=cache)
    wall = time.perf_counter() - start
    return {
        "wall_s": wall,
        "from_cache": index.from_cache,
        "timings_s": index.timings,
        "peak_rss_mb": peak_rss_mb(),
        "rows": index.kg.n_rows,
        "entities": index.kg.n_entities,
        "relations": index.kg.n_relations,
        "years": [int(index.kg.year.min()), int(index.kg.year.max())],
        "documents": index.bm25.N,
        "distinct_documents": int(index.bm25.group_len.shape[0]),
        "vocabulary": index.bm25.vocab_size,
        "avgdl": index.bm25.avgdl,
    }


def child_score(kg: str, labels: str, cache: str, repeats: str, subset: str) -> dict[str, Any]:
    index = load_index(kg, labels, None, cache_dir=cache)
    bm25 = index.bm25
    start = time.perf_counter()
    ent, rel = index.entity_labels, index.relation_labels
    corpus = [
        tokenize(f"{ent[h]} {rel[r]} {ent[t]}")
        for h, r, t in zip(index.kg.head.tolist(), index.kg.relation.tolist(), index.kg.tail.tolist(), strict=True)
    ]
    reference = BM25Okapi(corpus, k1=1.5, b=0.75)
    df: dict[str, int] = {}
    for doc in reference.doc_freqs:
        for term in doc:
            df[term] = df.get(term, 0) + 1
    reference.idf = {term: math.log(1 + (reference.corpus_size - n + 0.5) / (n + 0.5)) for term, n in df.items()}
    reference_build = time.perf_counter() - start
    del corpus

    rng = random.Random(12345)
    n_rep, size = int(repeats), int(subset)
    ours_times, theirs_times = [], []
    compared = 0
    for _ in range(n_rep):
        h = rng.randrange(index.kg.n_entities)
        query = f"Which {rel[rng.randrange(len(rel))]} of {ent[h]} was valid in {rng.randrange(1900, 2025)}?"
        docs = np.array(sorted(rng.sample(range(bm25.N), size)), dtype=np.int64)
        terms = list(dict.fromkeys(tokenize(query)))
        t0 = time.perf_counter()
        ours = bm25.score(query, docs)
        t1 = time.perf_counter()
        theirs = reference.get_batch_scores(terms, docs.tolist())
        t2 = time.perf_counter()
        ours_times.append(t1 - t0)
        theirs_times.append(t2 - t1)
        theirs_arr = np.asarray(theirs, dtype=np.float64)
        if ours.view(np.int64).tolist() != theirs_arr.view(np.int64).tolist():
            raise AssertionError(f"scores differ from rank_bm25 for query {query!r}")
        compared += size
    ours_med, theirs_med = float(np.median(ours_times)), float(np.median(theirs_times))
    return {
        "subsets": n_rep,
        "subset_size": size,
        "scores_compared_bit_identical": compared,
        "ours_median_ms": ours_med * 1e3,
        "rank_bm25_median_ms": theirs_med * 1e3,
        "speedup_median": theirs_med / ours_med,
        "ours_total_s": float(sum(ours_times)),
        "rank_bm25_total_s": float(sum(theirs_times)),
        "rank_bm25_index_build_s": reference_build,
    }


def child_retrieval(root: str, cache: str, n_slow: str, n_scan: str) -> dict[str, Any]:
    """Issue 4: every shipped configuration over all questions, one worker, cached index;
    the slow reference (tests/reference/retriever.py) side by side on the same questions."""
    paths = resolve_data(data=root)
    start = time.perf_counter()
    index = load_index(paths.kg, paths.labels, benchmark_dir=paths.benchmark, cache_dir=cache)
    load_s = time.perf_counter() - start
    questions = load_benchmark(paths.benchmark, paths.benchmark_ids)
    start = time.perf_counter()
    slow = SlowRetriever(index.kg, index.entity_labels, index.relation_labels)
    slow_build = time.perf_counter() - start
    scan = SlowRetriever(index.kg, index.entity_labels, index.relation_labels, bm25=slow.bm25, scan=True)
    subset = questions[:: max(1, len(questions) // int(n_slow))][: int(n_slow)]
    scan_subset = questions[:: max(1, len(questions) // int(n_scan))][: int(n_scan)]
    configs: dict[str, Any] = {}
    for name in ("oracle", "nonoracle", "stale_blind", "hop3_k25"):
        cfg = load_config(name)
        t0 = time.perf_counter()
        fast = Retriever(index, cfg)
        setup = time.perf_counter() - t0
        t0 = time.perf_counter()
        pool = 0
        for q in questions:
            pool += fast.retrieve_with_stats(q)[1].pool_rows
        all_s = time.perf_counter() - t0
        entry: dict[str, Any] = {"questions": len(questions), "setup_s": setup, "retrieve_s": all_s,
                                 "questions_per_s": len(questions) / all_s, "mean_pool_rows": pool / len(questions)}
        if fast.linker is not None:
            t0 = time.perf_counter()
            for q in questions:
                fast.linker(q)
            entry["linker_only_questions_per_s"] = len(questions) / (time.perf_counter() - t0)
        # side by side on the same questions: fast, then slow, identical evidence. The
        # collector is paused for both sides so that keeping the records alive for the
        # comparison does not bill whichever side happens to trigger a collection.
        gc.collect()
        gc.disable()
        # Alternate the two sides and keep each side's best of SIDE_BY_SIDE_REPEATS, so a
        # burst of load from another process does not decide the ratio.
        fast_times, slow_times = [], []
        for _ in range(SIDE_BY_SIDE_REPEATS):
            t0 = time.perf_counter()
            got = [fast.retrieve(q) for q in subset]
            fast_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            want = [slow.retrieve(q, cfg) for q in subset]
            slow_times.append(time.perf_counter() - t0)
        fast_s, slow_s = min(fast_times), min(slow_times)
        for g, w in zip(got, want, strict=True):
            if [(e["score"], e["line"]) for e in g["evidence"]] != [(sc, ln) for _, sc, ln in w["evidence"]]:
                raise AssertionError(f"{name}: fast and slow evidence differ on {g['id']}")
        entry["side_by_side"] = {"questions": len(subset), "fast_s": fast_s, "slow_s": slow_s, "repeats": SIDE_BY_SIDE_REPEATS,
                                 "speedup": slow_s / fast_s if fast_s else float("inf"), "identical_evidence": True}
        # the same, against the reference that scans every KG row per hop (no index at all)
        t0 = time.perf_counter()
        got = [fast.retrieve(q) for q in scan_subset]
        fast_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        want = [scan.retrieve(q, cfg) for q in scan_subset]
        scan_s = time.perf_counter() - t0
        for g, w in zip(got, want, strict=True):
            if [(e["score"], e["line"]) for e in g["evidence"]] != [(sc, ln) for _, sc, ln in w["evidence"]]:
                raise AssertionError(f"{name}: fast and full-scan evidence differ on {g['id']}")
        entry["side_by_side_full_scan"] = {"questions": len(scan_subset), "fast_s": fast_s, "slow_s": scan_s,
                                           "speedup": scan_s / fast_s if fast_s else float("inf")}
        gc.enable()
        configs[name] = entry
    return {"load_index_s": load_s, "slow_reference_build_s": slow_build, "configs": configs,
            "numpy": np.__version__}


def child_retrieval_warm(root: str, cache: str) -> dict[str, Any]:
    """Build (or load) the index exactly as ``tempbench run`` does, so the next child hits the cache."""
    paths = resolve_data(data=root)
    start = time.perf_counter()
    index = load_index(paths.kg, paths.labels, benchmark_dir=paths.benchmark, cache_dir=cache)
    return {"wall_s": time.perf_counter() - start, "from_cache": index.from_cache}


def child_sample(scale: str, out: str) -> dict[str, Any]:
    """Issue 3: generate one sample scale in a fresh process, stage by stage."""
    start = time.perf_counter()
    generate_sample(Path(out), scale=scale, seed=42)
    wall = time.perf_counter() - start
    manifest = json.loads((Path(out) / "MANIFEST.json").read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    world = build_world(scale, 42)
    t1 = time.perf_counter()
    build_benchmark(world.head, world.tail, world.relation, world.year, world.entity_ids, world.relation_ids,
                    world.labels, target_n=world.scale.n_questions, seed=43)
    t2 = time.perf_counter()
    return {"wall_s": wall, "world_s": t1 - t0, "builder_s": t2 - t1, "write_s": wall - (t2 - t0),
            "peak_rss_mb": peak_rss_mb(), "counts": manifest["counts"]}


def _oracle_run(root: str, cache: str) -> tuple[list[dict[str, Any]], Any, dict[Any, dict[str, Any]]]:
    """``(questions, flags, run)``: the oracle run of every question of a data root, in memory (the scoring sections' input)."""
    paths = resolve_data(data=root)
    index = load_index(paths.kg, paths.labels, benchmark_dir=paths.benchmark, cache_dir=cache)
    questions = load_benchmark(paths.benchmark, paths.benchmark_ids)
    retriever = Retriever(index, load_config("oracle", []))
    return questions, load_flags(paths.flags), {q["id"]: retriever.retrieve(q) for q in questions}


def child_scoring(root: str, cache: str) -> dict[str, Any]:
    """Issue 5: score the full-sample oracle run of every question with everything on."""
    questions, flags, run = _oracle_run(root, cache)
    predictions = {q["id"]: str(int(float(q["t_query"]))) for q in questions}
    start = time.perf_counter()
    scores = score_run(run, questions, flags, predictions=predictions, n_boot=1000, seed=0)
    wall = time.perf_counter() - start
    return {"questions": len(questions), "wall_s": wall, "n_boot": 1000,
            "sections": sorted(scores), "peak_rss_mb": peak_rss_mb()}


def child_scoring_columnar(root: str, cache: str) -> dict[str, Any]:
    """Issue 15: the columnar scorer against the per-question path on a full run, best of 3 each, same results."""
    questions, flags, run = _oracle_run(root, cache)
    times: dict[str, list[float]] = {"columnar": [], "per_question": []}
    outputs = {}
    for _ in range(3):
        for name, fn in (("columnar", evaluate), ("per_question", evaluate_reference)):
            start = time.perf_counter()
            ev = fn(run, questions, flags)
            times[name].append(time.perf_counter() - start)
            outputs[name] = json.dumps(to_json(ev, n_boot=200))
    return {"questions": len(questions), "columnar_s": min(times["columnar"]), "per_question_s": min(times["per_question"]),
            "speedup": min(times["per_question"]) / min(times["columnar"]),
            "identical_score_objects": outputs["columnar"] == outputs["per_question"]}


def child_index_data(root: str, cache: str) -> dict[str, Any]:
    """Load (build on a miss) the index of a data root as ``tempbench run`` does: wall time, peak RSS, timings."""
    paths = resolve_data(data=root)
    start = time.perf_counter()
    index = load_index(paths.kg, paths.labels, benchmark_dir=paths.benchmark, cache_dir=cache)
    wall = time.perf_counter() - start
    return {"wall_s": wall, "from_cache": index.from_cache, "timings_s": index.timings, "peak_rss_mb": peak_rss_mb(),
            "rows": index.kg.n_rows, "entities": index.kg.n_entities}


def child_repro_parts(root: str, orig: str, rep: str) -> dict[str, Any]:
    """Issue 23: one process, the eight runs of ``tempbench repro``: read, scored, document ids, SPEC §8 kernels."""
    from eval.repro.compare import ScoredRun, compare_runs
    from eval.repro.doclists import encode, parse_run, run_docids, run_space
    from eval.repro.options import DEFAULT_MEASURES
    from eval.repro.values import parse_measures, run_values
    from tempbench_core.runfile import read_run

    paths = resolve_data(data=root)
    questions = load_benchmark(paths.benchmark, paths.benchmark_ids)
    measures = parse_measures(DEFAULT_MEASURES)
    times = {"read_s": 0.0, "evaluate_s": 0.0, "document_ids_s": 0.0}
    prepared = {}
    for side, folder in (("original", orig), ("reproduced", rep)):
        for name in ("oracle", "nonoracle", "stale_blind", "hop3_k25"):
            t0 = time.perf_counter()
            run = read_run(Path(folder) / f"{name}.jsonl")
            t1 = time.perf_counter()
            ev = evaluate(run, questions, None)
            values = run_values(ev, [m for _, m in measures])
            t2 = time.perf_counter()
            parsed = parse_run(ev, [run[q["id"]] for q in ev.questions], "auto")
            docs = run_docids(parsed, run_space(parsed, "auto") or "id")
            t3 = time.perf_counter()
            times["read_s"] += t1 - t0
            times["evaluate_s"] += t2 - t1
            times["document_ids_s"] += t3 - t2
            prepared[(side, name)] = (values, docs)
    t0 = time.perf_counter()
    slots = list(prepared)
    encoded = encode([prepared[s][1] for s in slots])
    scored = {s: ScoredRun(prepared[s][0], d) for s, d in zip(slots, encoded, strict=True)}
    compare_runs({n: scored[(side, n)] for side, n in slots if side == "original"},
                 {n: scored[(side, n)] for side, n in slots if side == "reproduced"}, measures, "oracle", len(questions))
    times["codes_and_kernels_s"] = time.perf_counter() - t0
    return {"questions": len(questions), **times, "peak_rss_mb": peak_rss_mb()}


CHILDREN: dict[str, Callable[..., dict[str, Any]]] = {
    "repro_parts": child_repro_parts,
    "scoring_columnar": child_scoring_columnar, "index_data": child_index_data,
    "scoring": child_scoring,
    "build": child_build, "score": child_score, "retrieval": child_retrieval, "retrieval_warm": child_retrieval_warm,
    "sample": child_sample,
}


# --------------------------------------------------------------------------- sections
def section_index(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    start = time.perf_counter()
    kg, labels, source = full_data(workdir, args.source)
    prepare = time.perf_counter() - start
    cache = Path(tempfile.mkdtemp(prefix="bench-index-cache-", dir=workdir))
    build = run_child("build", str(kg), str(labels), str(cache))
    reload = run_child("build", str(kg), str(labels), str(cache))
    assert not build["from_cache"] and reload["from_cache"]
    scoring = run_child("score", str(kg), str(labels), str(cache), str(args.repeats), "660")
    result = {
        "data": {"source": source, "kg": str(kg), "csv_mb": kg.stat().st_size / 2**20, "prepare_s": prepare},
        "build": build,
        "cached_reload": reload,
        "scoring_660": scoring,
        "targets": {
            "build_s<=15": build["wall_s"] <= 15,
            "cached_reload_s<=3": reload["wall_s"] <= 3,
            "peak_rss_mb<=3072": max(build["peak_rss_mb"], reload["peak_rss_mb"]) <= 3072,
            "scoring_speedup>=10": scoring["speedup_median"] >= 10,
        },
    }
    return result


def section_retrieval(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 4: retrieval throughput of the four SPEC §2.6 configurations on the full sample."""
    kg, _labels, source = full_data(workdir, "sample" if args.source == "auto" else args.source)
    cache = workdir / "retrieval-index-cache"
    warm = run_child("retrieval_warm", str(kg.parent), str(cache))  # the timed child then loads from the cache
    result = run_child("retrieval", str(kg.parent), str(cache), str(args.slow_questions), str(args.scan_questions))
    c = result["configs"]
    result["data"] = {"source": source, "root": str(kg.parent), "index_warm_s": warm["wall_s"]}
    result["targets"] = {
        "oracle_qps>=500": c["oracle"]["questions_per_s"] >= 500,
        "stale_blind_qps>=200": c["stale_blind"]["questions_per_s"] >= 200,
        "hop3_k25_qps>=200": c["hop3_k25"]["questions_per_s"] >= 200,
        "linker_qps>=2000": c["nonoracle"]["linker_only_questions_per_s"] >= 2000,
        "speedup_vs_slow>=20": all(v["side_by_side"]["speedup"] >= 20 for v in c.values()),
        "speedup_vs_full_scan>=20": all(v["side_by_side_full_scan"]["speedup"] >= 20 for v in c.values()),
    }
    return result


def section_sample(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 3: generation time of the small and full samples (targets 5 s and 60 s)."""
    result: dict[str, Any] = {}
    for scale in ("small", "full"):
        out = Path(tempfile.mkdtemp(prefix=f"bench-sample-{scale}-", dir=workdir)) / "data"
        result[scale] = run_child("sample", scale, str(out))
    result["targets"] = {"small_s<=5": result["small"]["wall_s"] <= 5, "full_s<=60": result["full"]["wall_s"] <= 60}
    return result


def section_scoring(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 5: scoring 8,710 questions with everything on, bootstrap included (target 10 s)."""
    kg, _labels, source = full_data(workdir, "sample")
    result = run_child("scoring", str(kg.parent), str(workdir / "retrieval-index-cache"))
    result["data"] = {"source": source, "root": str(kg.parent)}
    result["targets"] = {"scoring_s<=10": result["wall_s"] <= 10}
    return result


def section_reproduce(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 6: ``tempbench reproduce`` from an empty cache on the small default data (target 60 s)."""
    home = Path(tempfile.mkdtemp(prefix="bench-reproduce-", dir=workdir))
    env = dict(os.environ, TEMPBENCH_CACHE=str(home / "cache"))
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tempbench.cli", "reproduce", "--out", str(home / "out")],
                          capture_output=True, text=True, check=False, env=env, cwd=home)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"tempbench reproduce failed:\n{proc.stderr}")
    shutil.rmtree(home, ignore_errors=True)
    return {"wall_s": wall, "targets": {"reproduce_s<=60": wall <= 60}}


def _cli(*argv: str, env: dict[str, str] | None = None) -> float:
    """Wall time of one ``tempbench`` command in a fresh interpreter (it must succeed)."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "tempbench.cli", *argv], capture_output=True, text=True, check=False,
                          env=env, cwd=ROOT)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"tempbench {' '.join(argv)} failed:\n{proc.stderr}")
    return wall


def _python(code: str) -> float:
    """Wall time of ``python -c code`` with this checkout first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=ROOT)
    return time.perf_counter() - start


def _same_outputs(a: Path, b: Path) -> list[str]:
    """Files that differ between two reproduce outputs (PNGs and the timings/workers of .meta.json left out)."""
    differ = []
    names = sorted({p.relative_to(a) for p in a.rglob("*") if p.is_file()} | {p.relative_to(b) for p in b.rglob("*") if p.is_file()})
    for name in names:
        pa, pb = a / name, b / name
        if name.suffix == ".png":
            continue
        if not (pa.is_file() and pb.is_file()):
            differ.append(str(name))
            continue
        ta = pa.read_bytes().replace(str(a).encode(), b"@OUT@")
        tb = pb.read_bytes().replace(str(b).encode(), b"@OUT@")
        if name.name.endswith(".meta.json"):
            ja, jb = json.loads(ta), json.loads(tb)
            for key in ("timings", "workers"):
                ja.pop(key, None)
                jb.pop(key, None)
            if ja != jb:
                differ.append(str(name))
        elif ta != tb:
            differ.append(str(name))
    return differ


def section_speed_reproduce(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 15: ``tempbench reproduce --data FULL --split all`` with a warm index cache, best of 3 (target 12 s)."""
    kg, _labels, source = full_data(workdir, "sample")
    root = kg.parent
    env = dict(os.environ, TEMPBENCH_CACHE=str(workdir / "reproduce-full-cache"))
    outs = workdir / "reproduce-full-out"
    shutil.rmtree(outs, ignore_errors=True)
    outs.mkdir(parents=True)
    warm = _cli("reproduce", "--data", str(root), "--split", "all", "--out", str(outs / "warm"), env=env)
    walls = [_cli("reproduce", "--data", str(root), "--split", "all", "--out", str(outs / f"run{i}"), env=env)
             for i in range(args.best_of)]
    # one worker and another hash seed: the same bytes
    one = _cli("reproduce", "--data", str(root), "--split", "all", "--workers", "1", "--out", str(outs / "one"),
               env=dict(env, PYTHONHASHSEED="4242"))
    differ = _same_outputs(outs / "run0", outs / "one") + _same_outputs(outs / "run0", outs / "warm")
    best = min(walls)
    shutil.rmtree(outs, ignore_errors=True)
    return {"data": {"source": source, "root": str(root)}, "cores": os.cpu_count(), "first_run_s": warm,
            "walls_s": walls, "best_s": best, "workers_1_s": one, "identical_outputs_any_workers": not differ,
            "differing_files": differ,
            "targets": {"reproduce_full_s<=12": best <= 12, "moonshot_s<=6": best <= 6}}


def section_run_rate(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 15: ``tempbench run`` oracle on the full sample, one worker, process start to file written, best of 3."""
    kg, _labels, source = full_data(workdir, "sample")
    root = kg.parent
    cache = workdir / "retrieval-index-cache"
    run_child("retrieval_warm", str(root), str(cache))
    out = Path(tempfile.mkdtemp(prefix="bench-run-", dir=workdir)) / "oracle.jsonl"
    # start-up: the interpreter and the imports of `tempbench run`, before it reads anything
    startup = min(_python("import tempbench.cli, tempbench.commands.run") for _ in range(args.best_of))
    walls, written = [], []
    for _ in range(args.best_of):
        begin = time.time()
        walls.append(_cli("run", "--data", str(root), "--config", "oracle", "--split", "all", "--workers", "1",
                          "--cache-dir", str(cache), "--out", str(out)))
        # process start to file written: the .meta.json is the last file the run writes
        written.append(out.with_name("oracle.meta.json").stat().st_mtime_ns / 1e9 - begin)
    meta = json.loads(out.with_name("oracle.meta.json").read_text(encoding="utf-8"))
    shutil.rmtree(out.parent, ignore_errors=True)
    n = meta["counts"]["questions"]
    best = min(written)
    beyond = n / (best - startup)
    return {"data": {"source": source, "root": str(root)}, "questions": n, "walls_s": walls,
            "start_to_written_s": written, "best_start_to_written_s": best, "startup_s": startup,
            "questions_per_s_end_to_end": n / best, "questions_per_s_beyond_startup": beyond,
            "retrieval_questions_per_s": meta["timings"]["questions_per_s"],
            "targets": {"run_qps_beyond_startup>=4000": beyond >= 4000}}


def section_large_kg(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 15: a tkgl-wikidata-size KG (10M rows, 1M entities): build, cached reload, a 2,000-question oracle run."""
    root = workdir / "sample-wikidata"
    generate_s = None
    if not (root / "MANIFEST.json").exists():
        generate_s = _cli("sample", "--scale", "wikidata", "--out", str(root))
    cache = Path(tempfile.mkdtemp(prefix="bench-large-cache-", dir=workdir))
    build = run_child("index_data", str(root), str(cache))
    reloads = [run_child("index_data", str(root), str(cache)) for _ in range(args.best_of)]
    assert not build["from_cache"] and all(r["from_cache"] for r in reloads)
    out = Path(tempfile.mkdtemp(prefix="bench-large-run-", dir=workdir)) / "oracle.jsonl"
    runs = [_cli("run", "--data", str(root), "--config", "oracle", "--split", "all", "--workers", "1",
                 "--cache-dir", str(cache), "--out", str(out)) for _ in range(args.best_of)]
    meta = json.loads(out.with_name("oracle.meta.json").read_text(encoding="utf-8"))
    shutil.rmtree(out.parent, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    reload = min(reloads, key=lambda r: r["wall_s"])
    return {"data": {"root": str(root), "rows": build["rows"], "entities": build["entities"], "generate_s": generate_s},
            "build": build, "cached_reload": reload, "reload_walls_s": [r["wall_s"] for r in reloads],
            "oracle_run": {"questions": meta["counts"]["questions"], "walls_s": runs, "best_s": min(runs),
                           "timings": meta["timings"]},
            "targets": {"build_s<=60": build["wall_s"] <= 60, "peak_rss_mb<=4096": build["peak_rss_mb"] <= 4096,
                        "cached_reload_s<=2": reload["wall_s"] <= 2, "oracle_run_2000_s<=6": min(runs) <= 6}}


def section_scoring_columnar(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 15: the columnar scorer against the per-question reference on the full-sample oracle run."""
    kg, _labels, source = full_data(workdir, "sample")
    result = run_child("scoring_columnar", str(kg.parent), str(workdir / "retrieval-index-cache"))
    result["data"] = {"source": source, "root": str(kg.parent)}
    return result


def section_repro(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    """Issue 23: ``tempbench repro`` over the four configurations of the full sample (target 3 s on 2 cores)."""
    kg, _labels, source = full_data(workdir, "sample")
    root = kg.parent
    env = dict(os.environ, TEMPBENCH_CACHE=str(workdir / "reproduce-full-cache"))
    folders = {"original": workdir / "repro-original", "reproduced": workdir / "repro-reproduced"}
    for side, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("oracle", "nonoracle", "stale_blind", "hop3_k25"):
            if not (folder / f"{name}.jsonl").exists():
                extra = ["--set", "cap_counts=unique_triples"] if side == "original" else []
                _cli("run", "--data", str(root), "--config", name, *extra, "--split", "all", "--workers", "2",
                     "--out", str(folder / f"{name}.jsonl"), env=env)
    argv = ("repro", str(folders["original"]), str(folders["reproduced"]), "--data", str(root), "--workers", "2")
    startup = min(_python("import tempbench.cli, tempbench.commands.repro") for _ in range(args.best_of))
    walls = [_cli(*argv, env=env) for _ in range(args.best_of)]
    parts = run_child("repro_parts", str(root), str(folders["original"]), str(folders["reproduced"]))
    best = min(walls)
    return {"data": {"source": source, "root": str(root)}, "cores": os.cpu_count(), "walls_s": walls, "best_s": best,
            "startup_s": startup, "one_process_breakdown": parts, "targets": {"repro_full_s<=3": best <= 3}}


SECTIONS: dict[str, Callable[[argparse.Namespace, Path], dict[str, Any]]] = {
    "repro": section_repro,
    "speed_reproduce": section_speed_reproduce,
    "run_rate": section_run_rate,
    "large_kg": section_large_kg,
    "scoring_columnar": section_scoring_columnar,
    "index": section_index,
    "sample": section_sample,
    "retrieval": section_retrieval,
    "scoring": section_scoring,
    "reproduce": section_reproduce,
}


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--child":
        result = CHILDREN[argv[1]](*argv[2:])
        print(json.dumps(result))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help=f"comma-separated sections (default: all of {', '.join(SECTIONS)})")
    parser.add_argument("--out", default="bench-results.json", help="JSON file to merge the figures into")
    parser.add_argument("--workdir", help="where generated data and caches go (default: <cache>/bench)")
    parser.add_argument("--source", choices=("auto", "sample", "synthetic"), default="auto", help="full-size KG source")
    parser.add_argument("--repeats", type=int, default=200, help="number of random 660-document subsets to score")
    parser.add_argument("--slow-questions", type=int, default=300,
                        help="questions per configuration run through the slow reference side by side (retrieval)")
    parser.add_argument("--best-of", type=int, default=3, help="repeats of each timed command (issue 15 sections)")
    parser.add_argument("--scan-questions", type=int, default=20,
                        help="questions per configuration run through the full-scan slow reference (retrieval)")
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",")] if args.only else list(SECTIONS)
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        parser.error(f"unknown section(s) {unknown}; known: {list(SECTIONS)}")
    if args.workdir:
        workdir = Path(args.workdir)
    else:
        workdir = cache_home() / "bench"
    workdir.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    results: dict[str, Any] = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    for name in names:
        print(f"bench: running section {name!r}", file=sys.stderr)
        results[name] = {"machine": machine(), **SECTIONS[name](args, workdir)}
        write_json(out, results)
        print(json.dumps({name: results[name]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
