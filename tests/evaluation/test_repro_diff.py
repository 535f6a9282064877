"""Diff of a run against baselines or another run, and baselines sniffing (SPEC §1.4, §6.3)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.baselines import load_baseline
from eval.diff import choose_space, diff_evidence, diff_lists, exact_share, run_evidence
from eval.metric_tables import MetricBaseline, normalise_slice
from tempbench_core.errors import InputError
from tempbench_core.runfile import RunRecords, parse_line


def fixed_items():
    # ids chosen by hand so that they never depend on PYTHONHASHSEED
    rows = [("Ada", "born in", "London", 1815), ("Ada", "spouse", "William", 1835), ("William", "title", "Earl", 1838),
            ("Ada", "child", "Byron", 1836), ("London", "capital of", "England", 1815)]
    out = []
    for i, (s, r, o, t) in enumerate(rows):
        it = {"s": s, "r": r, "o": o, "s_id": f"Q{10 + i}", "r_id": f"P{20 + i}", "o_id": f"Q{30 + i}",
              "t_start": float(t), "t_end": float(t), "score": 5.0 - i, "line": f"{s} | {r} | {o} | {t}"}
        out.append(it)
    return out


def test_identical_lists_have_no_difference():
    items = fixed_items()
    d = diff_lists(items, copy.deepcopy(items), "id")
    assert d == {"exact": True, "missing": [], "extra": [], "changed": [], "reordered": []}


def test_dropped_item_is_named_missing():
    base = fixed_items()
    run = base[:2] + base[3:]
    d = diff_lists(run, base, "id")
    assert not d["exact"]
    assert d["missing"] == [{"item": "William | title | Earl | 1838", "rank": 3}]
    assert d["extra"] == [] and d["changed"] == [] and d["reordered"] == []


def test_swapped_pair_is_named_reordered():
    base = fixed_items()
    run = [base[0], base[2], base[1], base[3], base[4]]
    d = diff_lists(run, base, "label")
    assert d["missing"] == [] and d["extra"] == [] and d["changed"] == []
    assert d["reordered"] == [
        {"item": "William | title | Earl | 1838", "run_rank": 2, "baseline_rank": 3},
        {"item": "Ada | spouse | William | 1835", "run_rank": 3, "baseline_rank": 2},
    ]


def test_changed_year_is_named_changed():
    base = fixed_items()
    run = copy.deepcopy(base)
    run[3]["t_start"] = run[3]["t_end"] = 1837.0
    d = diff_lists(run, base, "id")
    assert d["missing"] == [] and d["extra"] == [] and d["reordered"] == []
    assert d["changed"] == [{"triple": ["Q13", "P23", "Q33"], "run_time": [1837.0, 1837.0],
                             "baseline_time": [1836.0, 1836.0], "run_rank": 4, "baseline_rank": 4}]


def test_extra_item_and_duplicates_count_as_a_multiset():
    base = fixed_items()
    run = base + [base[0]]
    d = diff_lists(run, base, "id")
    assert d["extra"] == [{"item": base[0]["line"], "rank": 6}]
    assert d["missing"] == []


def test_line_space_compares_rendered_lines():
    base = [{"line": it["line"]} for it in fixed_items()]
    run = fixed_items()
    assert choose_space(run, base, "line") == "line"
    assert diff_lists(run, base, "line")["exact"]
    base[1] = {"line": "Ada | spouse | William | 1836"}
    d = diff_lists(run, base, "line")
    assert d["missing"] == [{"item": "Ada | spouse | William | 1836", "rank": 2}]
    assert d["extra"] == [{"item": "Ada | spouse | William | 1835", "rank": 2}]


def test_no_common_space_is_a_clear_error():
    from tempbench_core.errors import TempbenchError

    with pytest.raises(TempbenchError, match="no common item space"):
        choose_space([{"s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 1, "t_end": 1}], [{"line": "x"}], "line")


def test_diff_evidence_summary_and_only_in():
    base = {"q1": fixed_items(), "q2": fixed_items()[:3], "q3": fixed_items()[:1]}
    run = {"q1": fixed_items(), "q2": fixed_items()[:2], "q4": []}
    out = diff_evidence(run, base)
    s = out["summary"]
    assert out["space"] == "id"
    assert (s["exact"], s["baseline_questions"], s["exact_share"]) == (1, 3, pytest.approx(1 / 3))
    assert s["only_in_baseline"] == 1 and s["only_in_run"] == 1 and s["questions_with_missing"] == 1
    assert out["questions"]["q3"] == {"exact": False, "only_in": "baseline"}
    assert out["questions"]["q4"] == {"exact": False, "only_in": "run"}
    assert "q1" not in out["questions"]


# ------------------------------------------------------------------ sniffing


def _write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_sniff_label_dicts_5lists_lines_and_id_lists(tmp_path):
    items = fixed_items()
    label = [{k: it[k] for k in ("s", "r", "o", "t_start", "t_end")} for it in items]
    b = load_baseline(_write_jsonl(tmp_path / "a.jsonl", [{"qid": "q1", "retrieved": label}]))
    assert isinstance(b, RunRecords) and b.item_form == "triple" and b.id_key == "qid" and b.evidence_key == "retrieved"
    assert run_evidence(b)["q1"][0]["s"] == "Ada" and run_evidence(b)["q1"][0]["s_id"] is None

    five = [[it["s"], it["r"], it["o"], it["t_start"], it["t_end"]] for it in items]
    b = load_baseline(_write_jsonl(tmp_path / "b.jsonl", [{"question_id": "q1", "triples": five}]))
    assert b.item_form == "list5" and run_evidence(b)["q1"][1]["r"] == "spouse"

    five_ids = [[it["s_id"], it["r_id"], it["o_id"], it["t_start"], it["t_end"]] for it in items]
    b = load_baseline(_write_jsonl(tmp_path / "c.jsonl", [{"id": "q1", "context": five_ids}]))
    assert run_evidence(b)["q1"][0]["s_id"] == "Q10" and run_evidence(b)["q1"][0]["s"] is None

    lines = [it["line"] for it in items]
    b = load_baseline(_write_jsonl(tmp_path / "d.jsonl", [{"id": "q1", "evidence": lines}]))
    assert b.item_form == "line"
    assert run_evidence(b)["q1"][0] | {} == {**run_evidence(b)["q1"][0], "s": "Ada", "t_start": 1815.0, "line": lines[0]}
    # the diff of the sniffed files against the original is empty in every form
    run = {"q1": items}
    for name in "abcd":
        base = load_baseline(tmp_path / f"{name}.jsonl")
        assert diff_evidence(run, run_evidence(base), base.item_form)["summary"]["exact"] == 1, name

    # a JSON document holding a list of records is accepted too
    (tmp_path / "e.json").write_text(json.dumps([{"id": "q1", "evidence": label}]), encoding="utf-8")
    assert run_evidence(load_baseline(tmp_path / "e.json"))["q1"][2]["o"] == "Earl"


def test_sniff_metric_tables(tmp_path):
    agg = {"n_questions": 10, "coverage": 0.9, "TRP_macro": 0.25, "TRP_micro": 0.2, "CCR": 0.5,
           "by_complexity": {"1hop": {"n": 4, "TRP": 0.3, "CCR": 0.75}}}
    (tmp_path / "agg.json").write_text(json.dumps({"trp_ccr": agg, "coverage": {}}), encoding="utf-8")
    m = load_baseline(tmp_path / "agg.json")
    assert isinstance(m, MetricBaseline)
    assert m.values[(None, "all", "TRP")] == 0.25
    assert m.values[(None, "complexity=1hop", "CCR")] == 0.75

    (tmp_path / "nested.json").write_text(json.dumps({"oracle": {"overall": {"TRP": 0.2}, "3+hop": {"CCR": 0.014}}}), encoding="utf-8")
    m = load_baseline(tmp_path / "nested.json")
    assert m.values == {("oracle", "all", "TRP"): 0.2, ("oracle", "3+hop", "CCR"): 0.014}

    (tmp_path / "long.csv").write_text("config,metric,slice,value\noracle,TRP,complexity=3+hop,0.203\noracle,CCR,all,12%\n", encoding="utf-8")
    m = load_baseline(tmp_path / "long.csv")
    assert m.values == {("oracle", "complexity=3+hop", "TRP"): 0.203, ("oracle", "all", "CCR"): pytest.approx(0.12)}

    (tmp_path / "wide.csv").write_text("operator,TRP,CCR\ninterval,0.376,0.920\n", encoding="utf-8")
    m = load_baseline(tmp_path / "wide.csv")
    assert m.values == {(None, "operator=interval", "TRP"): 0.376, (None, "operator=interval", "CCR"): 0.92}


def test_unrecognised_file_names_found_and_expected_keys(tmp_path):
    p = _write_jsonl(tmp_path / "odd.jsonl", [{"question": "x", "docs": []}])
    with pytest.raises(InputError) as err:
        load_baseline(p)
    text = str(err.value)
    assert "found keys [docs, question]" in text
    assert "id/qid/question_id" in text and "evidence/retrieved/triples/context" in text and "metric table" in text
    (tmp_path / "odd.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"found columns \['a', 'b'\]"):
        load_baseline(tmp_path / "odd.csv")


def test_bad_item_and_duplicate_question_are_input_errors(tmp_path):
    with pytest.raises(InputError, match=r"evidence\[0\] is 3 \(JSON number\)"):
        load_baseline(_write_jsonl(tmp_path / "x.jsonl", [{"id": "q1", "evidence": [3]}]))
    with pytest.raises(InputError, match="duplicate question id"):
        load_baseline(_write_jsonl(tmp_path / "y.jsonl", [{"id": "q1", "evidence": []}, {"id": "q1", "evidence": []}]))


def test_parse_line_and_slices():
    assert parse_line("a | b | c | 1990-1994") == {"s": "a", "r": "b", "o": "c", "t_start": 1990.0, "t_end": 1994.0}
    assert parse_line("a | b | c") is None
    assert normalise_slice("by_complexity.3+hop") == "complexity=3+hop"
    assert normalise_slice("operator_type:interval") == "operator=interval"
    assert normalise_slice("Overall") == "all"


# ------------------------------------------------------------------ on generated data


@pytest.fixture(scope="module")
def sample_run(small_sample):
    from retriever.benchmark import load_benchmark
    from retriever.index import load_index
    from tempbench.data import resolve_data
    from tempbench_core.layout import default_index_cache

    data = resolve_data(data=small_sample)
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark.parent, cache_dir=default_index_cache())
    questions = [q for q in load_benchmark(data.benchmark, data.benchmark_ids) if q["split"] == "test"]
    return index, questions


def test_run_against_itself_and_injected_changes_on_sample(sample_run):
    index, questions = sample_run
    from retriever.config import load_config
    from retriever.pipeline import Retriever

    r = Retriever(index, load_config("oracle"))
    run = {q["id"]: r.retrieve(q)["evidence"] for q in questions}
    same = diff_evidence(run, copy.deepcopy(run))
    assert same["summary"]["exact_share"] == 1.0 and same["questions"] == {}
    base = copy.deepcopy(run)
    long_ids = [q for q in base if len(base[q]) >= 4]
    a, b, c = long_ids[:3]
    dropped = base[a].pop(2)
    base[b][0], base[b][1] = base[b][1], base[b][0]
    base[c][3]["t_start"] = base[c][3]["t_end"] = base[c][3]["t_start"] - 7
    out = diff_evidence(run, base)
    assert out["summary"]["exact"] == len(run) - 3
    assert set(out["questions"]) == {a, b, c}
    assert out["questions"][a]["extra"] == [{"item": dropped["line"], "rank": 3}]
    assert [x["run_rank"] for x in out["questions"][b]["reordered"]] == [1, 2]
    assert out["questions"][c]["changed"][0]["baseline_time"][0] == run[c][3]["t_start"] - 7
    assert exact_share(run, base, "id") == (len(run) - 3, len(run))


# ------------------------------------------------------------------ properties against a slow reading

_TRIPLES = [("a", "r1", "b"), ("a", "r2", "c"), ("b", "r1", "c"), ("c", "r3", "a")]
_item = st.builds(lambda t, y: {"s": t[0], "r": t[1], "o": t[2], "t_start": float(y), "t_end": float(y)},
                  st.sampled_from(_TRIPLES), st.integers(2000, 2002))


def _key(it):
    return (it["s"], it["r"], it["o"], it["t_start"], it["t_end"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_item, max_size=8), st.lists(_item, max_size=8))
def test_diff_lists_accounts_for_every_item(run, base):
    d = diff_lists(run, base, "label")
    assert d["exact"] == ([_key(i) for i in run] == [_key(i) for i in base])
    # slow reading: multiset differences, each side
    only_base = Counter(map(_key, base)) - Counter(map(_key, run))
    only_run = Counter(map(_key, run)) - Counter(map(_key, base))
    got_base = Counter(_key(base[m["rank"] - 1]) for m in d["missing"])
    got_base += Counter(_key(base[c["baseline_rank"] - 1]) for c in d["changed"])
    got_run = Counter(_key(run[m["rank"] - 1]) for m in d["extra"])
    got_run += Counter(_key(run[c["run_rank"] - 1]) for c in d["changed"])
    assert got_base == only_base and got_run == only_run
    for c in d["changed"]:  # a changed time keeps (s, r, o)
        assert _key(run[c["run_rank"] - 1])[:3] == _key(base[c["baseline_rank"] - 1])[:3]
    # reordered is empty exactly when the shared items come in the same order
    shared = Counter(map(_key, run)) & Counter(map(_key, base))

    def shared_seq(items):
        budget = Counter(shared)
        out = []
        for it in items:
            if budget[_key(it)] > 0:
                budget[_key(it)] -= 1
                out.append(_key(it))
        return out

    assert (d["reordered"] == []) == (shared_seq(run) == shared_seq(base))
    if d["exact"]:
        assert d["missing"] == d["extra"] == d["changed"] == d["reordered"] == []
