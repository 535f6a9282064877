"""The decision sweep of ``tempbench diff --sweep`` (SPEC §6.3) on the generated data."""

from __future__ import annotations

import pytest

from eval.diff import choose_space, exact_share, item_key
from eval.sweep import run_sweep
from retriever import Retriever, load_benchmark, load_config, load_index
from retriever.pipeline import pool_key
from retriever.sweep import CANDIDATES, describe_variant, sweep_keys, sweep_variants
from tempbench.data import resolve_data
from tempbench_core.errors import ConfigError
from tempbench_core.layout import default_index_cache


@pytest.fixture(scope="module")
def sample_run(small_sample):
    data = resolve_data(data=small_sample)
    index = load_index(data.kg, data.labels, benchmark_dir=data.benchmark.parent, cache_dir=default_index_cache())
    questions = [q for q in load_benchmark(data.benchmark, data.benchmark_ids) if q["split"] == "test"]
    return index, questions


def _evidence(index, config, questions):
    r = Retriever(index, config)
    return {str(q["id"]): r.retrieve(q)["evidence"] for q in questions}


def _subset_where_it_matters(index, base, changed, questions, n=30):
    """Questions where ``changed`` gives other evidence than ``base`` first, then others (for speed)."""
    a, b = Retriever(index, base), Retriever(index, changed)
    differs = [q for q in questions if a.retrieve(q)["evidence"] != b.retrieve(q)["evidence"]]
    same = [q for q in questions[::7] if q not in differs]
    return differs[: n // 2] + same[: n - min(len(differs), n // 2)]


def _alternatives(base):
    for key in sweep_keys(base):
        for value in CANDIDATES[key]:
            if value != getattr(base, key):
                yield key, value


@pytest.mark.parametrize("name", ["oracle", "nonoracle"])
def test_the_sweep_finds_every_single_decision_option(sample_run, name):
    """A baseline made with one option: the best group of the full sweep reproduces it and contains that option."""
    index, questions = sample_run
    base = load_config(name)
    for key, value in _alternatives(base):
        hidden = base.replace(**{key: value})
        subset = _subset_where_it_matters(index, base, hidden, questions, n=12)
        baseline = _evidence(index, hidden, subset)
        result = run_sweep(index, base, subset, baseline)
        best = result["rows"][0]
        assert result["reproduced"] and best["share"] == 1.0, (key, value, best)
        assert describe_variant({key: value}) in best["variants"], (key, value, best["variants"][:5])
        assert sum(r["agree"] for r in result["rows"]) == result["variants"] == len(sweep_variants(base))


def test_tie_break_pool_order_is_found_and_the_default_is_not_it(sample_run):
    index, questions = sample_run
    base = load_config("oracle")
    hidden = base.replace(tie_break="pool_order")
    subset = _subset_where_it_matters(index, base, hidden, questions, n=20)
    baseline = _evidence(index, hidden, subset)
    result = run_sweep(index, base, subset, baseline, keys=["tie_break", "line_template"])
    assert result["rows"][0]["changes"] == {"tie_break": "pool_order"} and result["reproduced"]
    default_row = next(r for r in result["rows"] if "default" in r["variants"])
    assert default_row["share"] < 1.0
    assert result["first_difference"] is None


def test_no_variant_reproduces_a_foreign_baseline(sample_run):
    index, questions = sample_run
    base = load_config("oracle")
    subset = questions[:10]
    # evidence of another configuration that no decision option can turn into: other hops and k
    baseline = _evidence(index, base.replace(hops=1, k=3), subset)
    result = run_sweep(index, base, subset, baseline, keys=["cap_scope"])
    assert not result["reproduced"]
    first = result["first_difference"]
    assert first["question"] in baseline and not first["exact"] and first["extra"]


@pytest.mark.parametrize("name", ["nonoracle", "stale_blind"])
def test_sweep_with_shared_pools_equals_full_reruns(sample_run, name):
    """Shared pools and rankings, and the grouping, equal a full rerun of every variant (written out here)."""
    index, questions = sample_run
    base = load_config(name)
    keys = ["cap_scope", "cap_counts", "line_template", "tie_break"] + (["linker_match"] if base.anchor == "linker" else [])
    producer = base.replace(cap_scope="per_node")
    subset = _subset_where_it_matters(index, base, producer, questions, n=30)
    baseline = _evidence(index, producer, subset)
    variants = sweep_variants(base, keys)
    assert len({pool_key(base.replace(**v) if v else base) for v in variants}) < len(variants)
    space = choose_space([], [], "triple")
    naive: dict[str, tuple[int, tuple]] = {}
    for changes in variants:
        config = base.replace(**changes) if changes else base
        fresh = Retriever(index, config)
        records = [fresh.retrieve(q) for q in subset]
        # the hooks themselves: expand() of a retriever with another ranking, rank() here
        other = Retriever(index, base.replace(**{**changes, "k": 3, "line_template": "{s}"}))
        for q, rec in zip(subset, records, strict=True):
            assert fresh.rank(q, other.expand(q)) == (rec["evidence"], rec["cutoff_ties"])
        run = {str(q["id"]): rec["evidence"] for q, rec in zip(subset, records, strict=True)}
        # identical output = identical items in the space the baseline is compared in
        output = tuple(tuple(item_key(it, space) for it in run[str(q["id"])]) for q in subset)
        naive[describe_variant(changes)] = (exact_share(run, baseline, space)[0], output)
    result = run_sweep(index, base, subset, baseline, keys=keys)
    for row in result["rows"]:
        outputs = {naive[v][1] for v in row["variants"]}
        assert len(outputs) == 1 and all(naive[v][0] == row["exact"] for v in row["variants"])
    distinct = {out for _, out in naive.values()}
    assert len(result["rows"]) == len(distinct)
    assert result["rows"][0]["share"] == 1.0 and result["rows"][0]["changes"] == {"cap_scope": "per_node"}
    shares = [r["share"] for r in result["rows"]]
    assert shares == sorted(shares, reverse=True) and len(set(shares)) > 1


def test_sweep_keys_and_variants():
    oracle, linker = load_config("oracle"), load_config("nonoracle")
    assert sweep_keys(oracle) == [k for k in CANDIDATES if k not in ("linker_match", "linker_min_length")]
    assert sweep_keys(linker) == [k for k in CANDIDATES if k != "oracle_label_ties"]
    variants = sweep_variants(oracle)
    assert variants[0] == {}
    expected = 1
    for key in sweep_keys(oracle):
        expected *= len(CANDIDATES[key])
    assert len(variants) == expected == len({describe_variant(v) for v in variants})
    assert set().union(*map(set, variants)) == set(sweep_keys(oracle))
    assert sweep_variants(oracle, ["tie_break"]) == [{}, {"tie_break": "pool_order"}]
    with pytest.raises(ConfigError, match="unknown sweep key.*valid: cap_scope"):
        sweep_variants(oracle, ["tie_brake"])


def test_a_baseline_whose_questions_carry_different_spaces_is_swept_question_by_question(sample_run):
    """SPEC §1.4: a baseline item is in the label or the id space; one file may hold both, question by question."""
    index, questions = sample_run
    base = load_config("oracle")
    hidden = base.replace(tie_break="pool_order")
    subset = _subset_where_it_matters(index, base, hidden, questions, n=10)
    made = _evidence(index, hidden, subset)
    fields = {"label": ("s", "r", "o"), "id": ("s_id", "r_id", "o_id")}
    baseline = {qid: [{**{f: it[f] for f in fields["label" if i % 2 else "id"]}, "t_start": it["t_start"],
                       "t_end": it["t_end"]} for it in items]
                for i, (qid, items) in enumerate(made.items())}
    with pytest.raises(Exception, match="no common item space"):
        choose_space([it for v in baseline.values() for it in v], [], "triple")
    result = run_sweep(index, base, subset, baseline, keys=["tie_break"])
    best = result["rows"][0]
    assert best["changes"] == {"tie_break": "pool_order"} and best["share"] == 1.0 and result["reproduced"]
    assert result["first_difference"] is None
    spaces = {qid: "label" if i % 2 else "id" for i, qid in enumerate(baseline)}
    assert exact_share(made, baseline, spaces) == (len(baseline), len(baseline))
    assert item_key(baseline[next(iter(baseline))][0], "id")[0].startswith("Q")
