"""TREC export with stable document ids (SPEC §3.4; issue 16).

Checked against hand-built ids and the slow reference loop, never against the
export's own helpers: the same KG row has the same id in two runs; ir_measures
(and ranx) on the written files give the recall@k,
nDCG@k and MRR of ``tempbench score`` on random runs with ties, repeats,
wrong-time and second valid copies; ids of labels with spaces or ``|``
round-trip and never collide.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference.eval import slow_rank
from tables import one, question_run, table
from test_columnar_scoring import run_case

from eval.docids import DocidError, DocKey, docid, escape, escape_all, parse_docid
from eval.measures import RANK_MEASURES
from eval.rank import rank_metrics
from eval.trec import trec_run_and_qrels
from tempbench.cli import main

# ---------------------------------------------------------------- ids


def _same_time(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


labels = st.text(st.characters(exclude_categories=()), max_size=12)  # surrogates and controls included
# pieces that mimic escapes and separators, so that near-collisions are likely
tricky = st.lists(st.sampled_from(["a", "b", " ", "|", "%", "%7C", "%25", "7C", "\t", "\n", "\u00a0", "é"]),
                  max_size=6).map("".join)
times = st.floats(allow_nan=True, allow_infinity=True)


@settings(max_examples=500, deadline=None)
@given(s=labels, r=tricky, o=labels, t0=times, t1=times, space=st.none() | st.sampled_from(["id", "label", "a b|c"]))
def test_docid_round_trips_and_is_one_token(s, r, o, t0, t1, space):
    doc = docid((s, r, o), t0, t1, space)
    assert doc.split() == [doc]  # one whitespace-separated TREC field
    back = parse_docid(doc)
    assert (back.s, back.r, back.o, back.space) == (s, r, o, space)
    assert _same_time(back.t_start, t0) and _same_time(back.t_end, t1)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(labels, tricky, st.sampled_from(["Q42", "P31", "Ann"])), max_size=8))
def test_escape_all_escapes_each_text(texts):
    # the test over all the texts at once (eval.docids.escape_all) against escape of each
    assert escape_all(texts) == [escape(t) for t in texts]


@settings(max_examples=1000, deadline=None)
@given(a=st.tuples(tricky, tricky, tricky, st.integers(1990, 1992), st.integers(1990, 1992)),
       b=st.tuples(tricky, tricky, tricky, st.integers(1990, 1992), st.integers(1990, 1992)))
def test_distinct_items_get_distinct_ids(a, b):
    if a != b:
        assert docid(a[:3], float(a[3]), float(a[4])) != docid(b[:3], float(b[3]), float(b[4]))


def test_ids_by_hand():
    assert docid(("Q42", "P31", "Q5"), 1994.0, 1994.0) == "Q42|P31|Q5|1994"
    assert docid(("Q42", "P31", "Q5"), 1990.0, 1994.0) == "Q42|P31|Q5|1990-1994"
    # a label with '|' and one with a space do not collide with the split they mimic
    assert docid(("a|b", "c", "d"), 2000.0, 2000.0) == "a%7Cb|c|d|2000"
    assert docid(("a", "b|c", "d"), 2000.0, 2000.0) == "a|b%7Cc|d|2000"
    assert docid(("Prime Minister", "50%", "x"), 1994.5, 1994.5) == "Prime%20Minister|50%25|x|1994.5"
    assert parse_docid("Prime%20Minister|50%25|x|1990-1994") == DocKey("Prime Minister", "50%", "x", 1990.0, 1994.0)
    assert parse_docid("Zoë|p|o|-5--3") == DocKey("Zoë", "p", "o", -5.0, -3.0)


@pytest.mark.parametrize("bad", ["a|b|c", "a|b|c|d|e|f", "a|b|c|1994.0", "a|b|c|1994-1994", "a%7c|b|c|1",
                                 "a%41|b|c|1", "a%|b|c|1", "%FF|b|c|1", "a|b|c|x", "a|b|c|"])
def test_parse_rejects_what_docid_never_writes(bad):
    with pytest.raises(DocidError):
        parse_docid(bad)
    with pytest.raises(ValueError):  # also a ValueError, for callers outside the CLI
        parse_docid(bad)


# ---------------------------------------------------------------- SPEC §3.4 rules, by hand


def L(s, r, o, t0, t1=None, **extra):
    return {"s": s, "r": r, "o": o, "t_start": float(t0), "t_end": float(t0 if t1 is None else t1), **extra}


def test_repeats_left_out_copies_kept_not_relevant():
    star = [L("a", "p", "b", 1994), L("b", "q", "c", 1994)]
    q = {"id": "w", "t_query": 1994.0, "S_star": star}
    ev = [L("x", "p", "y", 1994, score=2.0), L("a", "p", "b", 1994, score=2.0), L("a", "p", "b", 1994, score=2.0),
          L("a", "p", "b", 1993, 1995, score=2.0), L("b", "q", "c", 1980, score=2.0), L("b", "q", "c", 1994, score=1.0)]
    run, qrels = trec_run_and_qrels(one(q, ev))
    assert qrels == {"w": {"a|p|b|1994": 1, "b|q|c|1994": 1}}
    # returned order kept whatever the items' own (tied) scores; the repeat is gone, so
    # b|q|c|1994 is at rank 5 as SPEC §3.4 ranks it; the second valid copy stays, not relevant
    assert list(run["w"]) == ["x|p|y|1994", "a|p|b|1994", "a|p|b|1993-1995", "b|q|c|1980", "b|q|c|1994"]
    assert list(run["w"].values()) == [5.0, 4.0, 3.0, 2.0, 1.0]


def test_hit_with_another_window_takes_the_qrels_id_and_swaps():
    # a windowed gold triple: its qrels id is its own window
    star = [L("a", "p", "b", 1990, 1999), L("c", "p", "d", 1994)]
    q = {"id": "w", "t_query": 1994.0, "S_star": star}
    ev = [L("a", "p", "b", 1994), L("a", "p", "b", 1990, 1999), L("c", "p", "d", 1993, 1995), L("c", "p", "d", 1994)]
    res = one(q, ev)
    run, qrels = trec_run_and_qrels(res)
    assert qrels == {"w": {"a|p|b|1990-1999": 1, "c|p|d|1994": 1}}
    # the hits (ranks 1 and 3) carry the qrels ids; the later copies take the hits' own ids
    assert list(run["w"]) == ["a|p|b|1990-1999", "a|p|b|1994", "c|p|d|1994", "c|p|d|1993-1995"]
    assert question_run(res).renamed == 2


def test_mixed_spaces_in_memory_get_a_space_field():
    star = [{"s": "Q1", "r": "P1", "o": "Q2", "s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 1994.0, "t_end": 1994.0}]
    q = {"id": "m", "t_query": 1994.0, "S_star": star}
    ev = [{"s": "Q1", "r": "P1", "o": "Q9", "t_start": 1994.0, "t_end": 1994.0},
          {"s_id": "Q1", "r_id": "P1", "o_id": "Q9", "t_start": 1994.0, "t_end": 1994.0}]
    run, _ = trec_run_and_qrels(one(q, ev))
    assert list(run["m"]) == ["Q1|P1|Q9|1994|label", "Q1|P1|Q9|1994"]


# ---------------------------------------------------------------- random runs through the files

ENTITIES = {f"Q{i}": lab for i, lab in enumerate(["Ann", "Ann Lee", "a|b", "a", "b", "100% pure", "x y|z", "Zoë", "c"])}
RELATIONS = {"P1": "p", "P2": "b|p", "P3": "member of"}


def _triple(rng: random.Random, t0: float, t1: float | None = None) -> dict:
    s, o = rng.choice(list(ENTITIES)), rng.choice(list(ENTITIES))
    r = rng.choice(list(RELATIONS))
    return {"s": ENTITIES[s], "r": RELATIONS[r], "o": ENTITIES[o], "s_id": s, "r_id": r, "o_id": o,
            "t_start": float(t0), "t_end": float(t0 if t1 is None else t1)}


def random_benchmark(seed: int, n: int = 400):
    """Questions plus two runs with tied and unsorted scores, repeats, wrong-time and second valid copies."""
    rng = random.Random(seed)
    questions, runs = [], ([], [])
    for i in range(n):
        tq = float(rng.randint(1990, 1993))
        star = [_triple(rng, rng.randint(1990, 1993)) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.25:  # a gold triple with a window around t_query
            star.append(_triple(rng, tq - rng.randint(0, 2), tq + rng.randint(0, 2)))
        pool = [dict(t) for t in star] + [_triple(rng, rng.randint(1990, 1993)) for _ in range(6)]
        pool += [dict(t, t_start=tq, t_end=tq) for t in star]  # the point-in-time row at t_query
        pool += [dict(t, t_start=tq - 1, t_end=tq + 1) for t in star[:2]]  # valid copies with a window
        pool += [dict(t, t_start=tq + 1, t_end=tq + 1) for t in star[:2]]  # stale copies
        qid = f"q{i:04d}"
        questions.append({"id": qid, "split": "test", "question": "?", "answer": "x", "t_query": tq,
                          "complexity": "1hop", "operator_type": "point_in_time", "S_star": star,
                          "S_dist": [], "S_stale": []})
        for run in runs:
            k = 0 if rng.random() < 0.08 else rng.randint(1, 25)
            ev = [dict(rng.choice(pool), score=rng.choice([1.0, 2.5, 2.5, 4.0])) for _ in range(k)]
            run.append({"id": qid, "evidence": ev})
    return questions, runs


def _write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    root = tmp_path_factory.mktemp("trec")
    questions, (run_a, run_b) = random_benchmark(11)
    bench = _write_jsonl(root / "bench.jsonl", questions)
    a = _write_jsonl(root / "alpha.jsonl", run_a)
    b = _write_jsonl(root / "beta.jsonl", run_b)
    assert main(["export-trec", str(a), str(b), "--benchmark", str(bench), "--out", str(root / "out")]) == 0
    scores = {}
    for name, path in (("alpha", a), ("beta", b)):
        out = root / f"{name}.score.json"
        assert main(["score", str(path), "--benchmark", str(bench), "--json", str(out), "--boot", "1"]) == 0
        scores[name] = json.loads(out.read_text())["rank"]
    return root, questions, {"alpha": run_a, "beta": run_b}, scores


def _ir_measures_of(measure):
    from ir_measures import RR, R, nDCG

    return {"recall": lambda: R @ measure.cutoff, "ndcg": lambda: nDCG @ measure.cutoff, "mrr": lambda: RR}[measure.family]()


def test_ir_measures_on_the_files_equal_tempbench_score(exported):
    ir_measures = pytest.importorskip("ir_measures")
    root, questions, runs, scores = exported
    qrels = list(ir_measures.read_trec_qrels(str(root / "out" / "qrels.txt")))
    theirs = [_ir_measures_of(m) for m in RANK_MEASURES]
    for name, records in runs.items():
        run = list(ir_measures.read_trec_run(str(root / "out" / f"{name}.trec")))
        agg = ir_measures.calc_aggregate(theirs, qrels, run)
        for m, t in zip(RANK_MEASURES, theirs, strict=True):
            assert agg[t] == pytest.approx(scores[name][m.name], abs=1e-12), (name, m.name)
        # per question, against the slow reference loop (labels map one-to-one to ids here)
        per_q = {(x.query_id, x.measure): x.value for x in ir_measures.iter_calc(theirs, qrels, run)}
        checked = 0
        for q, rec in zip(questions, records, strict=True):
            slow = slow_rank(q, rec["evidence"])
            if slow is None:
                assert q["id"] not in {x.query_id for x in qrels}
                continue
            for m, t in zip(RANK_MEASURES, theirs, strict=True):
                assert per_q.get((q["id"], t), 0.0) == pytest.approx(slow[m.name], abs=1e-12), (name, q["id"], m.name)
            checked += 1
        assert checked > 200


def test_the_random_runs_exercise_every_rule(exported):
    root, questions, runs, _ = exported
    lines = (root / "out" / "alpha.trec").read_text(encoding="utf-8").splitlines()
    assert all(len(x.split()) == 6 for x in lines)
    assert len(lines) < sum(len(r["evidence"]) for r in runs["alpha"])  # repeats were left out
    assert any("-" in x.split()[2].split("|")[3] for x in lines)  # windowed copies kept
    resolved = table(questions, [r["evidence"] for r in runs["alpha"]])
    assert sum(question_run(resolved, i).renamed for i in range(resolved.n)) > 10  # hits under their qrels window, swaps
    assert sum(len(set(t["score"] for t in r["evidence"])) < len(r["evidence"]) for r in runs["alpha"]) > 100  # ties


def test_same_row_same_id_in_two_runs(small_sample, tmp_path, capsys):
    data = ["--data", str(small_sample)]
    for config in ("oracle", "stale_blind"):
        assert main(["run", "--config", config, "--split", "test", "--out", str(tmp_path / f"{config}.jsonl"), *data]) == 0
    assert main(["export-trec", str(tmp_path / "oracle.jsonl"), str(tmp_path / "stale_blind.jsonl"), *data]) == 0
    out = tmp_path / "trec"
    assert "qrels.txt" in capsys.readouterr().err

    def hand_id(t):  # the KG row as Q|P|Q|year, built without eval.trec
        assert t["t_start"] == t["t_end"]
        return f"{t['s_id']}|{t['r_id']}|{t['o_id']}|{int(t['t_start'])}"

    written = {}
    for config in ("oracle", "stale_blind"):
        per_q: dict[str, list[tuple[int, str]]] = {}
        for line in (out / f"{config}.trec").read_text().splitlines():
            qid, q0, doc, rank, score, tag = line.split()
            assert (q0, tag) == ("Q0", config)
            per_q.setdefault(qid, []).append((int(rank), doc))
        records = [json.loads(x) for x in (tmp_path / f"{config}.jsonl").read_text().splitlines()]
        for rec in records:
            expected = list(dict.fromkeys(hand_id(t) for t in rec["evidence"]))  # returned order, repeats once
            assert [d for _, d in sorted(per_q.get(rec["id"], []))] == expected, (config, rec["id"])
            assert [r for r, _ in per_q.get(rec["id"], [])] == list(range(1, len(expected) + 1))
        written[config] = {(qid, d) for qid, docs in per_q.items() for _, d in docs}
    shared = written["oracle"] & written["stale_blind"]
    assert len(shared) > 100  # the same rows, under the same ids, in both runs

    bench = [json.loads(x) for x in (small_sample / "benchmark" / "benchmark.jsonl").read_text().splitlines()]
    test_ids = {qid for qid, _ in written["oracle"]}
    expected_qrels = sorted(f"{q['id']} 0 {hand_id(t)} 1" for q in bench if q["id"] in test_ids
                            for t in q["S_star"] if t["t_start"] <= q["t_query"] <= t["t_end"])
    assert sorted(set((out / "qrels.txt").read_text().splitlines())) == sorted(set(expected_qrels))


def test_backends_agree_with_mixed_spaces_and_homonyms():
    """In memory, items of both key spaces in one question (5-field ids) and labels equal to raw ids."""
    rng = random.Random(5)
    names = {"Q1": "Q1", "Q2": "Q2", "Q3": "Ann", "Q4": "Ann", "P1": "P1", "P2": "b|p"}  # unlabelled ids, homonyms
    ents, rels = ["Q1", "Q2", "Q3", "Q4"], ["P1", "P2"]
    questions, evidence = [], []
    for i in range(1500):
        tq = float(rng.randint(1990, 1992))

        def row(t0, t1=None):
            s, r, o = rng.choice(ents), rng.choice(rels), rng.choice(ents)
            return {"s": names[s], "r": names[r], "o": names[o], "s_id": s, "r_id": r, "o_id": o,
                    "t_start": float(t0), "t_end": float(t0 if t1 is None else t1)}

        star = [row(rng.randint(1990, 1992)) for _ in range(rng.randint(1, 3))]
        pool = star + [row(rng.randint(1990, 1992)) for _ in range(4)] + [dict(star[0], t_start=tq - 1, t_end=tq + 1)]
        ev = []
        for _ in range(rng.randint(0, 20)):
            t = rng.choice(pool)
            form = rng.choice(["both", "label", "id", "list"])
            if form == "label":
                t = {k: v for k, v in t.items() if not k.endswith("_id")}
            elif form == "id":
                t = {k: v for k, v in t.items() if k not in ("s", "r", "o")}
            elif form == "list":
                t = [t["s"], t["r"], t["o"], t["t_start"], t["t_end"]]
            ev.append(t)
        questions.append({"id": f"m{i}", "t_query": tq, "S_star": star})
        evidence.append(ev)
    resolved = table(questions, evidence)
    ours = rank_metrics(resolved)
    theirs = rank_metrics(resolved, backend="ir_measures")
    assert sum(len(set(resolved.items.space[resolved.items.q == i].tolist())) == 2 for i in range(resolved.n)) > 500
    for name, values in ours["per_question"].items():
        np.testing.assert_allclose(values, theirs["per_question"][name], atol=1e-12, equal_nan=True, err_msg=name)


# ---------------------------------------------------------------- command line


def test_cli_errors_exit_2(tmp_path, capsys):
    questions, (run_a, _) = random_benchmark(3, n=5)
    bench = _write_jsonl(tmp_path / "bench.jsonl", questions)
    a = _write_jsonl(tmp_path / "a.jsonl", run_a)
    argv = ["--benchmark", str(bench)]

    spaced = [dict(q, id="q 1") for q in questions[:1]]
    b2 = _write_jsonl(tmp_path / "spaced.jsonl", spaced)
    r2 = _write_jsonl(tmp_path / "r2.jsonl", [{"id": "q 1", "evidence": []}])
    assert main(["export-trec", str(r2), "--benchmark", str(b2), "--out", str(tmp_path / "o")]) == 2
    assert "contains whitespace" in capsys.readouterr().err

    labels_only = [{"id": r["id"], "evidence": [{k: v for k, v in t.items() if not k.endswith("_id")} for t in r["evidence"]]}
                   for r in run_a]
    (tmp_path / "sub").mkdir()
    same_name = _write_jsonl(tmp_path / "sub" / "a.jsonl", labels_only)
    assert main(["export-trec", str(a), str(same_name), *argv, "--out", str(tmp_path / "o")]) == 2
    assert "give the runs different file names" in capsys.readouterr().err
    b = _write_jsonl(tmp_path / "labels.jsonl", labels_only)
    assert main(["export-trec", str(a), str(b), *argv, "--out", str(tmp_path / "o")]) == 2
    assert "--key id or --key label" in capsys.readouterr().err
    assert main(["export-trec", str(a), str(b), *argv, "--key", "label", "--out", str(tmp_path / "o")]) == 0
    text = (tmp_path / "o" / "labels.trec").read_text(encoding="utf-8")
    assert text == (tmp_path / "o" / "a.trec").read_text(encoding="utf-8").replace(" a\n", " labels\n")
    assert "Ann%20Lee" in text + (tmp_path / "o" / "qrels.txt").read_text(encoding="utf-8")

    fewer = _write_jsonl(tmp_path / "fewer.jsonl", run_a[:2])
    assert main(["export-trec", str(a), str(fewer), *argv, "--out", str(tmp_path / "o")]) == 2
    assert "cover different questions" in capsys.readouterr().err
    assert main(["export-trec", str(a), str(fewer), *argv, "--split", "test", "--out", str(tmp_path / "o")]) == 0

    clash = _write_jsonl(tmp_path / "o" / "qrels.txt", run_a)  # an input where the qrels would go
    assert main(["export-trec", str(clash), *argv, "--out", str(tmp_path / "o")]) == 2
    assert "is an input of this command" in capsys.readouterr().err


def test_ranx_on_the_files_equals_tempbench_score(exported):
    """ranx reads our TREC files and scores them as we do (its numba JIT is paid once per process, shared with
    tests/evaluation/test_eval_rank.py; ranx is in the test extra, so this runs in CI)."""
    import ranx
    root, _, runs, scores = exported
    qrels = ranx.Qrels.from_file(str(root / "out" / "qrels.txt"))
    names = [m.name for m in RANK_MEASURES]  # the declared names are ranx's metric names
    for name in runs:
        run = ranx.Run.from_file(str(root / "out" / f"{name}.trec"))
        assert run.name == name  # the tag column
        theirs = ranx.evaluate(qrels, run, names, make_comparable=True)
        for m in names:
            assert theirs[m] == pytest.approx(scores[name][m], abs=1e-9), (name, m)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case())
def test_run_documents_follow_question_run(case):
    """The whole-run document ids (eval.trec.run_documents, SPEC §8's identity) are question_run's, on random runs
    with windows, repeats, 5-lists, homonyms and mixed key spaces."""
    from eval.trec import question_runs, run_documents
    from tempbench_core.errors import EvidenceError

    questions, run, _flags, _split, key = case
    try:
        t = table(questions, [run.get(q["id"], {"evidence": []})["evidence"] for q in questions], key=key)
    except EvidenceError:
        return
    for space in ("id", "label"):
        try:
            expected = [written.docs for _, written in question_runs(t, space)]
        except (EvidenceError, KeyError):
            continue
        assert run_documents(t, space) == expected


def test_the_escape_test_is_the_per_character_rule_on_every_code_point():
    # escape() decides with isprintable() and one regex; the rule it stands for is per character:
    # '%', the separator, whitespace and non-printable characters are written as %XX
    from eval.docids import escape, unescape

    def literal(ch: str) -> bool:
        return ch == "%" or ch == "|" or ch.isspace() or not ch.isprintable()

    # every point of the first planes' scripts and punctuation, the surrogates, then a stride over the rest
    points = [*range(0x3100), *range(0xD800, 0xE000), *range(0xFE00, 0x10000), *range(0x3100, 0x110000, 61)]
    for point in points:
        ch = chr(point)
        assert (escape(ch) != ch) == literal(ch), hex(point)
        assert unescape(escape("a" + ch + "b")) == "a" + ch + "b"
