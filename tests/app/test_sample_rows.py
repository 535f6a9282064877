"""``tempbench sample --rows N``: a KG sized by its row count, up to tkgl-wikidata's size (SPEC §1.1, §5).

The checks here are independent of the generator: the slow checker of
``reference.sample_checks``, plain ``csv`` counts, and numpy's own reference
operations (``np.lexsort``, ``np.unique(axis=0)``, ``Generator.choice``) for
the vectorised replacements the large scale needs.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.sample_checks import check_root

from tempbench.cli import main
from tempbench.sample import SCALE_NAMES, generate_sample, resolve_scale
from tempbench.sample.kgview import KGView as _KGView
from tempbench.sample.kgview import fact_order as _fact_order
from tempbench.sample.scales import scale_for_rows
from tempbench.sample.world import _Builder, _first_occurrences
from tempbench.sample.write import join_lines

ROWS = 20_000


@pytest.fixture(scope="module")
def rows_sample(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rows") / "data"
    assert main(["sample", "--rows", str(ROWS), "--seed", "42", "--out", str(out)]) == 0
    return out


def test_rows_sample_has_the_requested_size_and_passes_every_check(rows_sample: Path) -> None:
    with open(rows_sample / "tkgl-smallpedia_edgelist.csv", encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        assert next(reader) == ["ts", "head", "tail", "relation_type"]
        rows = list(reader)
    assert len(rows) == ROWS
    # derived sizes, by hand: N/10 entities, round(283 * sqrt(N / 550,376)) = 54 relations, N/100 questions
    assert len({r[1] for r in rows} | {r[2] for r in rows}) == 2_000
    assert len({r[3] for r in rows}) == 54
    assert int(rows[0][0]) == 1900 and int(rows[-1][0]) == 2024
    manifest = json.loads((rows_sample / "MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["scale"] == "rows20000" and manifest["counts"]["rows"] == ROWS
    stats = check_root(rows_sample)
    assert stats["questions"] == 200


_SCRIPT = """
import hashlib, json, sys
from pathlib import Path
from tempbench.sample import generate_sample
out = generate_sample(Path(sys.argv[1]), seed=int(sys.argv[3]), rows=int(sys.argv[2]))
files = sorted(p for p in out.rglob('*') if p.is_file())
print(json.dumps({str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}))
"""


def _digests(out: Path, rows: int, seed: int, hashseed: str) -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    root = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = str(root) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _SCRIPT, str(out), str(rows), str(seed)],
                          env=env, capture_output=True, text=True, check=True, cwd=root)
    return json.loads(done.stdout)


def test_rows_sample_same_bytes_across_hash_seeds(tmp_path: Path, rows_sample: Path) -> None:
    a = _digests(tmp_path / "a", ROWS, 42, "0")
    b = _digests(tmp_path / "b", ROWS, 42, "4242")
    assert len(a) == 6 and a == b
    # and the same bytes as the command line wrote in this process
    manifest = json.loads((rows_sample / "MANIFEST.json").read_text(encoding="utf-8"))
    for name, meta in manifest["files"].items():
        assert a[name] == meta["sha256"]


def test_rows_option_errors_and_default_directory(tmp_path: Path, monkeypatch, capsys) -> None:
    from tempbench_core.layout import default_sample_dir

    assert main(["sample", "--rows", "100", "--out", str(tmp_path / "x")]) == 2
    assert "--rows 100" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    with pytest.raises(SystemExit) as exc:
        main(["sample", "--rows", "6000", "--scale", "tiny"])
    assert exc.value.code == 2
    monkeypatch.setenv("TEMPBENCH_CACHE", str(tmp_path / "cache"))
    assert main(["sample", "--rows", "6000", "--seed", "3"]) == 0
    assert (default_sample_dir("rows6000", 3) / "MANIFEST.json").is_file()


def test_wikidata_preset_is_tkgl_wikidata_sized() -> None:
    sc = resolve_scale("wikidata")
    assert "wikidata" in SCALE_NAMES
    assert (sc.n_rows, sc.n_entities, sc.n_questions) == (10_000_000, 1_000_000, 2_000)
    assert sc.n_relations == 600 and sc.n_countries == 200
    assert scale_for_rows(10_000_000) == sc.__class__(**{**sc.__dict__, "name": "rows10000000"})


def test_any_row_count_is_exact(tmp_path: Path) -> None:
    for n in (5_000, 6_001):
        out = generate_sample(tmp_path / str(n), rows=n, seed=1)
        with open(out / "tkgl-smallpedia_edgelist.csv", encoding="utf-8") as f:
            assert sum(1 for _ in f) == n + 1


# -- the vectorised pieces against numpy's reference operations ------------------------------------


_TOKEN = st.text(alphabet=st.sampled_from("Q0123456789aé,ß京 "), min_size=0, max_size=7)


@settings(max_examples=60, deadline=None)
@given(tables=st.lists(st.lists(_TOKEN, min_size=1, max_size=6), min_size=1, max_size=4), data=st.data())
def test_join_lines_equals_python_formatting(tables, data) -> None:
    from tempbench.sample.write import TokenTable

    n = data.draw(st.integers(0, 30))
    idx = [np.asarray(data.draw(st.lists(st.integers(0, len(t) - 1), min_size=n, max_size=n)), dtype=np.int64) for t in tables]
    expected = "".join(",".join(t[i[r]] for t, i in zip(tables, idx, strict=True)) + "\n" for r in range(n))
    got = join_lines([(TokenTable(t), i) for t, i in zip(tables, idx, strict=True)])
    assert got == expected.encode("utf-8")


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 3), st.integers(1990, 1994)),
                     min_size=1, max_size=60))
def test_fact_order_is_lexsort(rows) -> None:
    h, t, r, y = (np.asarray(c, dtype=np.int32) for c in zip(*rows, strict=True))
    assert (_fact_order(h, t, r, y, int(y.min()), int(y.max() - y.min() + 1)) == np.lexsort((y, t, r, h))).all()


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 3), st.integers(1990, 1994)),
                     min_size=1, max_size=60))
def test_first_occurrences_is_unique_rows(rows) -> None:
    h, t, r, y = (np.asarray(c, dtype=np.int32) for c in zip(*rows, strict=True))
    sc = scale_for_rows(10_000)
    sc = sc.__class__(**{**sc.__dict__, "year_min": 1990, "year_max": 1994})
    _, expected = np.unique(np.stack([h, t, r, y], axis=1), axis=0, return_index=True)
    assert (_first_occurrences(h, t, r, y, 6, 4, sc) == np.sort(expected)).all()
    # entity counts too large for one int64 key take the stacked-columns path
    assert (_first_occurrences(h, t, r, y, 2**40, 4, sc) == np.sort(expected)).all()


def test_builder_draws_are_generator_choice() -> None:
    from tempbench.sample.catalogue import CITY, PERSON, default_catalogue

    b = _Builder(scale_for_rows(10_000), 7, default_catalogue().type_shares)
    ref = _Builder(scale_for_rows(10_000), 7, default_catalogue().type_shares)
    for types, size, exponent in (((PERSON,), 500, 1.1), ((CITY, PERSON), 33, 0.5), ((PERSON,), 0, 1.1), ((PERSON,), 9, 1.1)):
        ids, p = ref.pool(types, exponent)
        assert (b.draw(types, size, exponent) == ids[ref.rng.choice(len(ids), size=size, p=p)]).all()
    assert b.rng.random() == ref.rng.random()


@pytest.mark.parametrize("dense_factor", [0, 32, 10**9])
@settings(max_examples=25, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(2000, 2003), st.integers(0, 6), st.integers(0, 6), st.integers(0, 2)),
                     min_size=1, max_size=40))
def test_head_year_pool_both_ways_match_a_slow_loop(dense_factor, rows) -> None:
    year, head, tail, rel = (np.asarray(c, dtype=np.int64) for c in zip(*rows, strict=True))
    old = _KGView.DENSE_YEAR_FACTOR
    _KGView.DENSE_YEAR_FACTOR = dense_factor  # 0: the np.unique path; huge: the per-year dense path
    try:
        kg = _KGView(head, tail, rel, year)
    finally:
        _KGView.DENSE_YEAR_FACTOR = old

    def degree(e, y):
        return sum((h == e) + (t == e) for yy, h, t, _ in rows if yy == y)

    for i, (y, h, t, _) in enumerate(rows):
        around = sum(degree(o, y) for yy, a, b_, _ in rows if yy == y for end, o in ((a, b_), (b_, a)) if end == h)
        assert kg.head_year_pool[i] == degree(h, y) + around
        # first / last year of (s, r), first year of (s, r, o)
        years_hr = [yy for yy, a, _, r in rows if (a, r) == (h, rows[i][3])]
        years_hrt = [yy for yy, a, b_, r in rows if (a, b_, r) == (h, t, rows[i][3])]
        assert kg.hr_first[i] == (y == min(years_hr)) and kg.hr_last[i] == (y == max(years_hr))
        assert kg.fact_start[i] == (y == min(years_hrt))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), far=st.sampled_from([0, 10**6, 10**17]))
def test_years_by_rank_index_as_years_by_offset(seed: int, far: int) -> None:
    """A KG whose years span far more than its rows (a year 10**17) is indexed by year rank: the same view."""
    import tempbench.sample.kgview as kgview

    rng = np.random.default_rng(seed)
    n = 300
    head, tail = rng.integers(0, 40, n), rng.integers(0, 40, n)
    rel, year = rng.integers(0, 5, n), rng.integers(1990, 2000, n) + far * (rng.random(n) < 0.1)
    by_offset = _KGView(head, tail, rel, year) if far < 10**17 else None
    saved = kgview.years_by_rank
    kgview.years_by_rank = lambda span, rows: True
    try:
        by_rank = _KGView(head, tail, rel, year)
    finally:
        kgview.years_by_rank = saved
    assert by_rank.years is not None
    if by_offset is None:
        by_offset = by_rank  # no offset index can hold 10**17 years: checked against lexsort alone below
    assert (by_rank.hrt_order == np.lexsort((year, tail, rel, head))).all()
    for name in ("hrt_order", "hr_start", "hr_size", "hrt_start", "hrt_size", "n_stale", "n_dist", "fact_start",
                 "hr_first", "hr_last", "head_year_pool", "head_degree", "head_footprint"):
        assert (getattr(by_rank, name) == getattr(by_offset, name)).all(), name
    for entity, y in zip(head[:50].tolist(), year[:50].tolist(), strict=True):
        expected = np.flatnonzero((head == entity) & (year == y))
        assert by_rank.next_rows(entity, y).tolist() == expected.tolist()
        for other in (y + 1, y - 1, int(year.max()) + 1):
            wanted = np.flatnonzero((head == entity) & (year == other)).tolist()
            assert by_rank.next_rows(entity, other).tolist() == wanted
            assert by_offset.next_rows(entity, other).tolist() == wanted
