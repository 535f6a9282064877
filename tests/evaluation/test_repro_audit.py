"""The audit of the card's claims (SPEC §4): claims file, definitions, values vs slow loops."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from reference.bm25 import SlowBM25

from eval.audit.claims import load_claims
from eval.audit.context import AuditContext
from eval.audit.questions import answer_years, copy_tquery_predictions, text_has_year, tquery_is_answer
from eval.audit.registry import COMPUTE
from eval.audit.run import run_audit

# The rows of the SPEC §4 table, as printed there.
SPEC4_GROUPS = {
    "split sizes / interval share": 12,
    "interval leak: t_query == answer year": 3,
    "interval questions whose text contains the query year": 2,
    "functional stale negatives valid at t_query (test)": 3,
    "functional stale pairs that are exact BM25 ties with their gold hop": 2,
    "functional distractor pairs, BM25 gold vs distractor (test)": 8,
    "released distractors invalid at t_query": 1,
    "BM25 documents": 1,
    "non-oracle gold-anchor recall": 1,
    "reference retriever, 3+-hop slice": 2,
    "interval slice": 4,
    "non-oracle 2-hop, 3+-hop CCR": 1,
    'no-retrieval "copy t_query" answer on interval': 1,
}


def test_claims_file_has_every_spec4_row_with_its_paper_values():
    claims, _ = load_claims()
    by_group = Counter(c.group for c in claims if c.section == "4")
    assert dict(by_group) == SPEC4_GROUPS
    paper = {c.id: c.paper for c in claims}
    assert paper["split.train.questions"] == 6096 and paper["split.dev.interval"] == 100
    assert paper["split.test.interval_share"] == 0.0935 and paper["split.all.interval"] == 864
    assert paper["stale.bm25_ties"] == 1429 and paper["dist.tie"] == 276 and paper["dist.gold_wins_nonties"] == 0.509
    assert paper["bm25.documents"] == 550376 and paper["nonoracle.anchor_recall"] == 0.602
    assert paper["oracle.3hop.trp"] == 0.203 and paper["oracle.interval.ccr"] == 0.92
    assert paper["stale_blind.other_operators.ccr"] == [0.03, 0.08] and paper["nonoracle.3hop.ccr"] == 0.07
    assert paper["copy_tquery.interval.em"] == 1.0
    for c in claims:
        assert c.compute in COMPUTE and c.command.startswith("tempbench ")
        # every claim's command selects it
        sel = c.command.split("--claim ")[1]
        assert c.id.startswith(sel)


def test_claims_file_errors_are_config_errors(tmp_path):
    from tempbench_core.errors import ConfigError

    bad = tmp_path / "p.toml"
    bad.write_text('[[claim]]\nid = "x"\nsection = "4"\ngroup = "g"\nwhat = "w"\npaper = 1\nkind = "count"\n'
                   'compute = "nope"\ncommand = "tempbench audit"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="names compute 'nope'"):
        load_claims(bad)
    bad.write_text('[[claim]]\nid = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="lacks section"):
        load_claims(bad)


def test_answer_year_and_text_year_definitions():
    assert answer_years("1994") == [1994] and answer_years("1994.0") == [1994] and answer_years(1994.0) == [1994]
    assert answer_years(["Paris", "1994"]) == [1994] and answer_years("1994 AD") == [] and answer_years(True) == []
    assert tquery_is_answer({"t_query": 1994.0, "answer": "1994"})
    assert not tquery_is_answer({"t_query": 1994.5, "answer": "1994"})
    assert not tquery_is_answer({"t_query": 1994.0, "answer": "Paris"})
    assert text_has_year("What happened in 1994?", 1994)
    assert not text_has_year("Population 119945", 1994) and not text_has_year("in 21994", 1994)
    assert copy_tquery_predictions([{"id": "a", "t_query": 1994.0}, {"id": "b", "t_query": 1994.5}]) == {"a": "1994", "b": "1994.5"}


# ------------------------------------------------------------------ on the generated sample


@pytest.fixture(scope="module")
def audited(small_sample):
    from tempbench.data import resolve_data

    data = resolve_data(data=small_sample)
    ctx = AuditContext(data, split="test")
    rows = {r["id"]: r for r in run_audit(ctx)}
    return data, ctx, rows


def _raw_questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_benchmark_claims_match_a_plain_reading(audited):
    data, _, rows = audited
    qs = _raw_questions(Path(data.benchmark))
    for split in ("train", "dev", "test", "all"):
        sel = qs if split == "all" else [q for q in qs if q["split"] == split]
        iv = [q for q in sel if q["operator_type"] == "interval"]
        assert rows[f"split.{split}.questions"]["reproduced"] == len(sel)
        assert rows[f"split.{split}.interval"]["reproduced"] == len(iv)
        assert rows[f"split.{split}.interval_share"]["reproduced"] == pytest.approx(len(iv) / len(sel))
    iv = [q for q in qs if q["operator_type"] == "interval"]
    # the card's own check (string prefix) agrees on this data
    assert rows["leak.interval.tquery_is_answer"]["reproduced"] == sum(str(q["t_query"]).startswith(str(q["answer"])) for q in iv)
    assert rows["leak.interval.rate"]["reproduced"] == 1.0  # the sample reproduces the leak (SPEC §5)
    assert rows["copy_tquery.interval.em"]["reproduced"] == 1.0
    assert rows["copy_tquery.interval.em"]["verdict"] == "by-construction"  # the generator makes the leak: no OK
    n_year = sum(bool(re.search(rf"(?<!\d){int(q['t_query'])}(?!\d)", q["question"])) for q in iv)
    assert rows["leak.text_year"]["reproduced"] == n_year
    with open(data.kg, encoding="utf-8") as handle:
        n_rows = sum(1 for line in handle if line.strip()) - 1
    assert rows["bm25.documents"]["reproduced"] == n_rows


def _slow_bm25(data, questions, pairs_of):
    """Per-pair (gold, replacement) BM25 by the slow reference, over documents read from the files."""
    labels = {}
    with open(data.labels, encoding="utf-8") as handle:
        for row in csv.reader(handle, delimiter="\t"):
            if row and row != ["id", "label"]:
                labels[row[0]] = row[1]
    with open(data.kg, encoding="utf-8") as handle:
        docs = [" ".join(labels.get(x) or x for x in (row["head"], row["relation_type"], row["tail"]))
                for row in csv.DictReader(handle)]
    bm25 = SlowBM25(docs)
    out = []
    for q in questions:
        pair = pairs_of(q)
        if pair is not None:
            out.append(tuple(bm25.score_text(q["question"], f"{t['s']} {t['r']} {t['o']}") for t in pair))
    return out


def _pair(q, variant, ids=None):
    """(replaced hop, replacement) in label space, compared on ids when the id twin ``ids`` is given."""

    def keyed(name):
        triples = q[name]
        if ids is None:
            return [((t["s"], t["r"], t["o"], float(t["t_start"]), float(t["t_end"])), t) for t in triples]
        return [((i["s_id"], i["r_id"], i["o_id"], float(i["t_start"]), float(i["t_end"])), t)
                for i, t in zip(ids[name], triples, strict=True)]

    star, var = keyed("S_star"), keyed(variant)
    star_keys, var_keys = {k for k, _ in star}, {k for k, _ in var}
    gone = [t for k, t in star if k not in var_keys]
    new = [t for k, t in var if k not in star_keys]
    return (gone[0], new[0]) if len(gone) == 1 and len(new) == 1 else None


def test_bm25_pair_claims_match_a_slow_loop(audited):
    data, _, rows = audited
    qs = [q for q in _raw_questions(Path(data.benchmark)) if q["split"] == "test"]
    flags = {f["id"]: f for f in _raw_questions(Path(data.flags))}
    dist_q = [q for q in qs if flags[q["id"]]["dist_functional"]]
    stale_q = [q for q in qs if flags[q["id"]]["stale_functional"]]
    # ids decide which triple differs (a homonym distractor differs only by id)
    twin = {r["id"]: r for r in _raw_questions(Path(data.benchmark_ids))} if data.benchmark_ids else {}
    dist = _slow_bm25(data, dist_q, lambda q: _pair(q, "S_dist", twin.get(q["id"])))
    stale = _slow_bm25(data, stale_q, lambda q: _pair(q, "S_stale", twin.get(q["id"])))
    higher = sum(g > d for g, d in dist)
    lower = sum(g < d for g, d in dist)
    assert rows["dist.pairs"]["reproduced"] == len(dist)
    assert rows["dist.gold_higher"]["reproduced"] == higher
    assert rows["dist.gold_lower"]["reproduced"] == lower
    assert rows["dist.tie"]["reproduced"] == len(dist) - higher - lower
    assert rows["dist.gold_wins_nonties"]["reproduced"] == pytest.approx(higher / (higher + lower))
    assert rows["stale.bm25_ties"]["reproduced"] == sum(g == s for g, s in stale)
    assert rows["stale.bm25_ties"]["of"] == len(stale)
    assert rows["stale.bm25_ties.share"]["reproduced"] == pytest.approx(sum(g == s for g, s in stale) / len(stale))
    assert rows["stale.functional"]["reproduced"] == len(stale_q)
    invalid = sum(not (p[1]["t_start"] <= q["t_query"] <= p[1]["t_end"])
                  for q in dist_q if (p := _pair(q, "S_dist", twin.get(q["id"]))))
    # the test-functional population is an alternative reading (SPEC §4 says "released distractors")
    assert rows["dist.invalid_at_tquery.alt.test_functional"]["reproduced"] == pytest.approx(invalid / len(dist))
    every = [(q, p) for q in _raw_questions(Path(data.benchmark)) if (p := _pair(q, "S_dist", twin.get(q["id"])))]
    invalid_all = sum(not (p[1]["t_start"] <= q["t_query"] <= p[1]["t_end"]) for q, p in every)
    assert rows["dist.invalid_at_tquery"]["reproduced"] == pytest.approx(invalid_all / len(every))


def test_retrieval_claims_equal_the_scores_and_the_runner(audited, tmp_path):
    data, ctx, rows = audited
    from eval.scoring import ScoreOptions, score_run
    from retriever.config import load_config
    from retriever.runner import run_to_file

    oracle = score_run(ctx.run("oracle"), ctx.questions, ctx.flags, options=ScoreOptions(split="test"))
    assert rows["oracle.3hop.ccr"]["reproduced"] == oracle["trp_ccr"]["by_complexity"]["3+hop"]["CCR"]
    assert rows["oracle.interval.trp"]["reproduced"] == oracle["trp_ccr"]["by_operator"]["interval"]["TRP"]
    assert rows["neg.filtered.stale_exact"]["reproduced"] == oracle["negatives"]["stale_exact"]["rate"]
    blind = ctx.scores("stale_blind")["trp_ccr"]["by_operator"]
    others = [v["CCR"] for k, v in blind.items() if k != "interval"]
    assert rows["stale_blind.other_operators.ccr"]["reproduced"] == [min(others), max(others)]
    meta = run_to_file(load_config("nonoracle"), data, split="test", out_path=tmp_path / "nonoracle.jsonl")
    assert rows["nonoracle.anchor_recall"]["reproduced"] == pytest.approx(meta["anchor_recall"])


def test_missing_flags_give_na_with_a_reason(small_sample, tmp_path):
    import dataclasses

    from tempbench.data import resolve_data

    data = dataclasses.replace(resolve_data(data=small_sample), flags=tmp_path / "absent.jsonl")
    rows = run_audit(AuditContext(data), select=("stale.valid", "split.test.questions"))
    by_id = {r["id"]: r for r in rows}
    assert by_id["stale.valid_at_tquery"]["verdict"] == "n/a"
    assert "functional_negatives.jsonl not found" in by_id["stale.valid_at_tquery"]["reason"]
    assert [r["id"] for r in rows] == ["split.test.questions", "stale.valid_at_tquery", "stale.valid_at_tquery.share"]
    n_test = sum(q["split"] == "test" for q in _raw_questions(Path(data.benchmark)))
    assert by_id["split.test.questions"]["reproduced"] == n_test  # claims without flags still computed


def test_audit_cli_json_and_bad_claim(small_sample, tmp_path, capsys):
    from tempbench.cli import main

    out = tmp_path / "a.json"
    assert main(["audit", "--data", str(small_sample), "--claim", "split.", "--claim", "leak.", "--json", str(out)]) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert {r["id"] for r in doc["claims"]} == {c.id for c in load_claims()[0] if c.id.startswith(("split.", "leak."))}
    printed = capsys.readouterr().out
    assert "claim" in printed and "verdict" in printed and "6,096" in printed
    assert main(["audit", "--claim", "nothing."]) == 2
    assert "matches no claim" in capsys.readouterr().err
