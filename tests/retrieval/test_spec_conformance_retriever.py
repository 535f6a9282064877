"""SPEC conformance of the retriever: worked examples derived by hand from SPEC's text.

Every test writes a tiny KG (and labels / benchmark files) into ``tmp_path`` and
goes through the public API only: :func:`retriever.index.load_index`,
:func:`retriever.config.load_config` / :class:`retriever.config.RetrieverConfig`,
:func:`retriever.benchmark.load_benchmark` and
``Retriever(index, config).retrieve(question)``. The expected evidence in each
test was worked out by hand from the SPEC sentence quoted next to it, so an
independent implementation of SPEC must produce exactly the same values.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from reference.bm25 import SlowBM25, kg_documents

from retriever.benchmark import load_benchmark
from retriever.config import RetrieverConfig, load_config
from retriever.index import load_index
from retriever.pipeline import Retriever

HEADER = "ts,head,tail,relation_type\n"
ITEM_KEYS = {"s", "r", "o", "s_id", "r_id", "o_id", "t_start", "t_end", "score", "line"}


# --------------------------------------------------------------------------- helpers


def write_kg(path: Path, rows) -> Path:
    """Rows are ``(s, r, o, year)``; written in the given order (edge id = position)."""
    path.write_text(HEADER + "".join(f"{t},{s},{o},{r}\n" for s, r, o, t in rows), encoding="utf-8")
    return path


def write_labels(path: Path, labels: dict[str, str]) -> Path:
    path.write_text("id\tlabel\n" + "".join(f"{k}\t{v}\n" for k, v in labels.items()), encoding="utf-8")
    return path


def make_index(tmp_path: Path, rows, labels: dict[str, str] | None = None, benchmark_dir: Path | None = None):
    kg = write_kg(tmp_path / "kg.csv", rows)
    lab = write_labels(tmp_path / "labels.tsv", labels) if labels is not None else None
    return load_index(kg, lab, benchmark_dir, cache_dir=False)


def question(text: str = "", t: float | int = 2000.0, s_id: str | None = None, s: str | None = None,
             qid: str = "q1") -> dict:
    star: dict = {"r": "rel", "o": "obj", "t_start": t, "t_end": t}
    if s is not None:
        star["s"] = s
    if s_id is not None:
        star["s_id"] = s_id
    return {"id": qid, "split": "test", "question": text, "answer": "x", "t_query": t, "complexity": "1hop",
            "operator_type": "point_in_time", "S_star": [star], "S_dist": [], "S_stale": []}


def cfg(**kw) -> RetrieverConfig:
    return RetrieverConfig(**kw)


def lines(record: dict) -> list[str]:
    return [e["line"] for e in record["evidence"]]


def pool(index, q: dict, config: RetrieverConfig) -> list[int]:
    return Retriever(index, config).expand(q).pool.tolist()


def kept(index, q: dict, config: RetrieverConfig) -> list[int]:
    return Retriever(index, config).expand(q).rows.tolist()


def slow_bm25(index, query: str, row: int) -> float:
    """SPEC §2.1-§2.2 over every KG row, by the slow reference (for worked examples only)."""
    return SlowBM25(kg_documents(index.kg, index.entity_labels, index.relation_labels)).score(query, row)


# --------------------------------------------------------------------------- §1.1 KG loading


def test_entity_load_order_first_row_head_before_tail_unsorted(tmp_path):
    # SPEC §1.1: "an entity's place in load order is its first row, and within one
    # row the head comes before the tail"; "must not assume the rows are sorted".
    rows = [("E3", "P9", "E1", 2005), ("E1", "P1", "E2", 1990), ("E2", "P9", "E3", 1990), ("E3", "P9", "E1", 2005)]
    index = make_index(tmp_path, rows)
    kg = index.kg
    assert kg.entity_ids == ["E3", "E1", "E2"]
    assert kg.relation_ids == ["P9", "P1"]
    assert kg.year.tolist() == [2005, 1990, 1990, 2005]
    assert kg.n_rows == 4  # the exact duplicate row 3 is a row of its own
    # oracle anchor E3, filter off, 1 hop: pool = rows 0, 2, 3; row 3 duplicates row 0
    config = cfg(hops=1, caps=(60,), temporal_filter=False)
    q = question(s_id="E3")
    assert pool(index, q, config) == [0, 2, 3]
    assert kept(index, q, config) == [0, 2]
    rec = Retriever(index, config).retrieve(q)
    # no labels: raw ids; empty query: all scores 0.0; reverse-lex order of lines
    assert lines(rec) == ["E3 | P9 | E1 | 2005", "E2 | P9 | E3 | 1990"]
    assert [e["score"] for e in rec["evidence"]] == [0.0, 0.0]


def test_edge_id_is_data_row_index_despite_blank_lines_crlf_bom_alias(tmp_path):
    # SPEC §1.1: edge id = 0-based data-row index; blank lines skipped; CRLF and
    # BOM accepted; `timestamp` is an alias of `ts`; columns in any order.
    raw = (b"\xef\xbb\xbfhead,relation_type,tail,timestamp\r\n\r\nA,P1,B,2000\r\n\r\n   \r\n"
           b"B,P1,C,2001\r\n\r\nC,P2,A,2002\r\n")
    path = tmp_path / "kg.csv"
    path.write_bytes(raw)
    index = load_index(path, None, None, cache_dir=False)
    kg = index.kg
    assert kg.n_rows == 3
    assert [kg.entity_ids[i] for i in kg.head.tolist()] == ["A", "B", "C"]
    assert [kg.entity_ids[i] for i in kg.tail.tolist()] == ["B", "C", "A"]
    assert [kg.relation_ids[i] for i in kg.relation.tolist()] == ["P1", "P1", "P2"]
    assert kg.year.tolist() == [2000, 2001, 2002]
    off = dict(temporal_filter=False, hops=1)
    # B is incident to edge 0 (A-B) and edge 1 (B-C): the cap takes edge-id order
    assert pool(index, question(s_id="B"), cfg(caps=(1,), **off)) == [0]
    assert pool(index, question(s_id="B"), cfg(caps=(2,), **off)) == [0, 1]
    assert pool(index, question(s_id="A"), cfg(caps=(5,), **off)) == [0, 2]


def test_exact_duplicate_rows_use_up_the_cap(tmp_path):
    # SPEC §2.4: "The cap counts rows before deduplication."
    rows = [("A", "P1", "B", 2000), ("A", "P1", "B", 2000), ("A", "P2", "C", 2000)]
    index = make_index(tmp_path, rows)
    q = question(s_id="A")
    config = cfg(hops=1, caps=(2,))
    assert pool(index, q, config) == [0, 1]
    assert lines(Retriever(index, config).retrieve(q)) == ["A | P1 | B | 2000"]
    # option: the cap counts unique triples (configs/README.md)
    uniq = config.replace(cap_counts="unique_triples")
    assert pool(index, q, uniq) == [0, 1, 2]
    assert kept(index, q, uniq) == [0, 2]


# --------------------------------------------------------------------------- §1.2 labels


def test_label_rendering_empty_label_is_raw_id(tmp_path):
    # SPEC §1.2 (fixed): "an id with no label (or an empty label) is rendered as the
    # raw id string; this rendered form is what documents, evidence lines ... use".
    rows = [("A", "P1", "B", 2000), ("A", "P2", "C", 2000)]
    index = make_index(tmp_path, rows, {"A": "Alpha", "B": "", "P1": "knows"})
    assert index.entity_labels == ["Alpha", "B", "C"]
    assert index.relation_labels == ["knows", "P2"]
    rec = Retriever(index, cfg(hops=1, caps=(60,))).retrieve(question("what about b?", s_id="A"))
    # document of row 0 is "Alpha knows B": the token "b" scores it above row 1
    assert lines(rec) == ["Alpha | knows | B | 2000", "Alpha | P2 | C | 2000"]
    assert rec["evidence"][0]["score"] > 0.0 == rec["evidence"][1]["score"]
    first = rec["evidence"][0]
    assert (first["s"], first["r"], first["o"], first["s_id"], first["r_id"], first["o_id"]) == (
        "Alpha", "knows", "B", "A", "P1", "B")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id\tlabel\nA\tAlpha\n", {"A": "Alpha"}),
        ("\ufeffid\tlabel\r\nA\tAlpha\r\n", {"A": "Alpha"}),
        ("ID\tlabel\nA\tAlpha\n", {"ID": "label", "A": "Alpha"}),
        ("id\tname\nA\tAlpha\n", {"id": "name", "A": "Alpha"}),
        ("A\tAlpha\nid\tlabel\n", {"A": "Alpha", "id": "label"}),
        ("A\tAlpha\n", {"A": "Alpha"}),
    ],
)
def test_tsv_header_only_when_exactly_id_tab_label(tmp_path, text, expected):
    # SPEC §1.2: "A TSV's first line is a header when it is exactly `id<TAB>label`."
    write_kg(tmp_path / "kg.csv", [("A", "P1", "B", 2000)])
    (tmp_path / "labels.tsv").write_text(text, encoding="utf-8")
    index = load_index(tmp_path / "kg.csv", tmp_path / "labels.tsv", None, cache_dir=False)
    assert index.labels == expected


def test_labels_file_wins_harvested_fill_by_id_and_position(tmp_path):
    # SPEC §1.2: "the labels file wins; labels harvested from the benchmark files
    # fill only ids the file lacks (harvesting pairs benchmark_labelled.jsonl with
    # benchmark.jsonl by question id and by position in each triple list)".
    bench = tmp_path / "benchmark"
    bench.mkdir()
    labelled = question("q", s="Alfa")
    labelled["S_star"] = [
        {"s": "Alfa", "r": "knows", "o": "Bravo", "t_start": 2000, "t_end": 2000},
        {"s": "Bravo", "r": "built", "o": "Charlie", "t_start": 2000, "t_end": 2000},
    ]
    ids = {"id": "q1", "S_star": [
        {"s_id": "A", "r_id": "P1", "o_id": "B", "t_start": 2000, "t_end": 2000},
        {"s_id": "B", "r_id": "P2", "o_id": "C", "t_start": 2000, "t_end": 2000},
    ], "S_dist": [], "S_stale": []}
    (bench / "benchmark_labelled.jsonl").write_text(json.dumps(labelled) + "\n", encoding="utf-8")
    (bench / "benchmark.jsonl").write_text(json.dumps(ids) + "\n", encoding="utf-8")
    rows = [("A", "P1", "B", 2000), ("B", "P2", "C", 2000), ("C", "P3", "D", 2000)]
    index = make_index(tmp_path, rows, {"A": "Alpha"}, benchmark_dir=bench)
    assert index.entity_labels == ["Alpha", "Bravo", "Charlie", "D"]
    assert index.relation_labels == ["knows", "built", "P3"]


# --------------------------------------------------------------------------- §2.3 oracle

ORACLE_ROWS = [("Q1", "P1", "Q2", 2000), ("Q3", "P1", "Q2", 2000), ("Q4", "P1", "Q2", 2000), ("Q5", "P1", "Q2", 2000)]
ORACLE_LABELS = {"Q1": "Paris", "Q3": "Paris", "Q4": "paris", "Q2": "France", "P1": "in"}
ONE_HOP = RetrieverConfig(hops=1, caps=(60,))


def test_oracle_s_id_not_in_kg_gives_empty_retrieval(tmp_path):
    # SPEC §2.3: "use s_id when the item carries it (even if that id is not in the
    # KG: then the retrieval is empty)".
    index = make_index(tmp_path, ORACLE_ROWS, ORACLE_LABELS)
    rec = Retriever(index, ONE_HOP).retrieve(question(s_id="Q9", s="Paris"))
    assert rec["anchor"] == {"id": "Q9", "label": "Paris", "source": "oracle"}
    assert rec["evidence"] == [] and rec["cutoff_ties"] == []


def test_oracle_s_id_wins_over_label(tmp_path):
    index = make_index(tmp_path, ORACLE_ROWS, ORACLE_LABELS)
    rec = Retriever(index, ONE_HOP).retrieve(question(s_id="Q3", s="Paris"))
    assert rec["anchor"] == {"id": "Q3", "label": "Paris", "source": "oracle"}
    assert [e["s_id"] for e in rec["evidence"]] == ["Q3"]
    assert lines(rec) == ["Paris | in | France | 2000"]


def test_oracle_label_fallback_exact_case_sensitive_first_in_load_order(tmp_path):
    # SPEC §2.3: "else the KG entity whose rendered label equals it exactly
    # (case-sensitive; decision: when several do, the first in load order; count
    # such cases in the run's metadata)".
    index = make_index(tmp_path, ORACLE_ROWS, ORACLE_LABELS)
    r = Retriever(index, ONE_HOP)
    rec, stats = r.retrieve_with_stats(question(s="Paris"))
    assert rec["anchor"] == {"id": "Q1", "label": "Paris", "source": "oracle"} and stats.ambiguous_oracle
    assert [e["s_id"] for e in rec["evidence"]] == ["Q1"]
    rec, stats = r.retrieve_with_stats(question(s="paris"))
    assert rec["anchor"]["id"] == "Q4" and not stats.ambiguous_oracle
    # the rendered label of an unlabelled entity is its raw id
    assert r.retrieve(question(s="Q5"))["anchor"]["id"] == "Q5"
    # no entity renders as "PARIS" (nor as "France " with a trailing blank)
    for label in ("PARIS", "France "):
        rec = r.retrieve(question(s=label))
        assert rec["anchor"] == {"id": None, "label": None, "source": "none"}
        assert rec["evidence"] == [] and rec["cutoff_ties"] == []
    # option: a shared label gives no anchor, still counted
    rec, stats = Retriever(index, ONE_HOP.replace(oracle_label_ties="none")).retrieve_with_stats(question(s="Paris"))
    assert rec["anchor"]["source"] == "none" and rec["evidence"] == [] and stats.ambiguous_oracle


def test_oracle_aligns_with_benchmark_jsonl_by_question_id(tmp_path):
    # SPEC §2.3: no s_id on the labelled item -> "align with benchmark.jsonl by question id".
    index = make_index(tmp_path, ORACLE_ROWS, ORACLE_LABELS)
    labelled = [question(s="Paris", qid="a"), question(s="Paris", qid="b")]
    ids = [{"id": "b", "S_star": [{"s_id": "Q4", "r_id": "P1", "o_id": "Q2", "t_start": 2000.0, "t_end": 2000.0}],
            "S_dist": [], "S_stale": []},
           {"id": "a", "S_star": [{"s_id": "Q3", "r_id": "P1", "o_id": "Q2", "t_start": 2000.0, "t_end": 2000.0}],
            "S_dist": [], "S_stale": []}]
    lpath, ipath = tmp_path / "benchmark_labelled.jsonl", tmp_path / "benchmark.jsonl"
    lpath.write_text("".join(json.dumps(q) + "\n" for q in labelled), encoding="utf-8")
    ipath.write_text("".join(json.dumps(q) + "\n" for q in ids), encoding="utf-8")
    questions = load_benchmark(lpath, ipath)
    r = Retriever(index, ONE_HOP)
    assert [r.retrieve(q)["anchor"]["id"] for q in questions] == ["Q3", "Q4"]


def test_ambiguous_oracle_counted_in_run_meta(tmp_path):
    # SPEC §2.3 "count such cases in the run's metadata"; SPEC §6.1 meta fields.
    from retriever.runner import run_to_file
    from tempbench.data import resolve_data

    root = tmp_path / "data"
    (root / "benchmark").mkdir(parents=True)
    write_kg(root / "tkgl-smallpedia_edgelist.csv", ORACLE_ROWS)
    write_labels(root / "labels.tsv", ORACLE_LABELS)
    qs = [question("where is paris", s="Paris", qid="a"), question("x", s="paris", qid="b"),
          question("y", s="NOPE", qid="c")]
    (root / "benchmark" / "benchmark_labelled.jsonl").write_text("".join(json.dumps(q) + "\n" for q in qs))
    data = resolve_data(data=root)
    config = load_config("oracle")
    out = tmp_path / "runs" / "oracle.jsonl"
    meta = run_to_file(config, data, split="test", out_path=out, cache_dir=tmp_path / "cache", show_progress=False)
    on_disk = json.loads((tmp_path / "runs" / "oracle.meta.json").read_text())
    assert on_disk == json.loads(json.dumps(meta))
    assert meta["config"] == config.to_dict()
    assert meta["counts"]["ambiguous_oracle"] == 1
    assert meta["counts"]["questions"] == 3 and meta["counts"]["no_anchor"] == 1
    for name, path in (("kg", data.kg), ("labels", data.labels), ("benchmark", data.benchmark)):
        assert meta["inputs"][name]["sha256"] == hashlib.sha256(Path(path).read_bytes()).hexdigest()
    import tempbench as retriever

    assert meta["package"]["version"] == retriever.__version__
    assert isinstance(meta["timings"], dict) and "total_s" in meta["timings"]
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    index = load_index(data.kg, data.labels, root / "benchmark", cache_dir=False)
    expected = [Retriever(index, config).retrieve(q) for q in load_benchmark(data.benchmark)]
    assert records == json.loads(json.dumps(expected))
    assert [list(r) for r in records] == [["id", "split", "anchor", "evidence", "cutoff_ties"]] * 3
    assert records[2]["anchor"] == {"id": None, "label": None, "source": "none"}


# --------------------------------------------------------------------------- §2.3 linker


def linked(tmp_path, entity_labels: dict[str, str], text: str, extra_labels: dict[str, str] | None = None,
           relation_label: str = "lives in", **kw):
    """Anchor id the linker picks; every entity hangs off the unlabelled hub ``Z``, in dict order."""
    rows = [(e, "P1", "Z", 2000) for e in entity_labels]
    labels = {k: v for k, v in entity_labels.items() if v is not None}
    labels.update(extra_labels or {})
    labels["P1"] = relation_label
    index = make_index(tmp_path, rows, labels)
    rec = Retriever(index, cfg(anchor="linker", **kw)).retrieve(question(text))
    assert rec["anchor"]["source"] == ("none" if rec["anchor"]["id"] is None else "linker")
    return rec["anchor"]["id"]


def test_linker_lowercases(tmp_path):
    assert linked(tmp_path, {"E1": "Bob Smith"}, "WHO IS BOB SMITH?") == "E1"


def test_linker_plain_substring_by_default(tmp_path):
    # SPEC §2.3: "plain substring (no word-boundary test; option: word-boundary)".
    assert linked(tmp_path, {"E1": "Ada"}, "The Adamses") == "E1"
    assert linked(tmp_path, {"E1": "Ada"}, "The Adamses", linker_match="word") is None
    assert linked(tmp_path, {"E1": "Ada"}, "Adamses and Ada.", linker_match="word") == "E1"


def test_linker_candidates_are_kg_entities_only(tmp_path):
    # SPEC §2.3: "candidates are KG entities only (not relations, not ids that only
    # the labels file knows)".
    text = "who lives in ada town"
    assert linked(tmp_path, {"E1": "Ada"}, text, extra_labels={"Q777": "who lives in ada town"}) == "E1"
    assert linked(tmp_path, {"E1": "Ada"}, text, relation_label="who lives in ada town") == "E1"


def test_linker_ignores_raw_id_entities_and_short_labels(tmp_path):
    # SPEC §2.3: "ignore entities without a real label (rendered as the raw id) and
    # labels shorter than 2 characters after lowercasing".
    assert linked(tmp_path, {"E1": "Ada", "E2": None}, "e2 and ada e2e2") == "E1"
    assert linked(tmp_path, {"E1": "X", "E2": "ab"}, "x ab") == "E2"
    assert linked(tmp_path, {"E1": "X"}, "x marks") is None
    assert linked(tmp_path, {"E1": "X"}, "x marks", linker_min_length=1) == "E1"
    # "İ" has one code point but lowercases to two ("i" + U+0307): it is long enough
    assert len("İ".lower()) == 2
    assert linked(tmp_path, {"E1": "İ"}, "İ") == "E1"


def test_linker_no_match_is_no_anchor(tmp_path):
    rows = [("E1", "P1", "Z", 2000)]
    index = make_index(tmp_path, rows, {"E1": "Ada", "P1": "in"})
    rec = Retriever(index, cfg(anchor="linker")).retrieve(question("nothing here"))
    assert rec == {"id": "q1", "split": "test", "anchor": {"id": None, "label": None, "source": "none"},
                   "evidence": [], "cutoff_ties": []}


def test_linker_longest_label_wins(tmp_path):
    labels = {"E1": "New York", "E2": "York City Hall", "E3": "New York City"}
    assert linked(tmp_path, labels, "the new york city hall") == "E2"
    assert linked(tmp_path, {"E1": "Ada", "E2": "Ada Lovelace"}, "did ada lovelace") == "E2"


def test_linker_length_is_of_the_lowercased_label(tmp_path):
    # "İa" has 2 code points but its lowercase has 3, as many as "bcd": the tie is
    # broken by position ("İa" starts first). A raw-length comparison picks E2.
    assert linked(tmp_path, {"E2": "bcd", "E1": "İa"}, "İa bcd") == "E1"
    assert linked(tmp_path, {"E2": "bcd", "E1": "İa"}, "bcd İa") == "E2"


def test_linker_tie_earliest_first_occurrence_then_load_order(tmp_path):
    # SPEC §2.3: "among equally long matches ... take the one whose first occurrence
    # starts earliest in the question, then the first entity in load order".
    labels = {"E1": "paris", "E2": "alice"}  # E1 first in load order
    assert linked(tmp_path, labels, "Alice met Paris") == "E2"
    # paris occurs at 5 and 20; alice at 11: the first occurrence of paris counts
    assert linked(tmp_path, labels, "from paris alice to paris") == "E1"
    assert linked(tmp_path, labels, "alice in paris, alice") == "E2"
    # same lowercased label: the first entity in load order
    assert linked(tmp_path, {"E1": "Rome", "E2": "ROME"}, "rome") == "E1"
    assert linked(tmp_path, {"E2": "ROME", "E1": "Rome"}, "rome") == "E2"


# --------------------------------------------------------------------------- §2.4 BFS

BFS_ROWS = [
    ("B", "r1", "C", 2000),  # 0
    ("A", "r1", "B", 2000),  # 1
    ("C", "r1", "A", 2000),  # 2  A is the tail: undirected
    ("A", "r1", "B", 1999),  # 3  stale version of row 1
    ("A", "r1", "D", 2000),  # 4
    ("B", "r2", "E", 2000),  # 5
    ("A", "r1", "A", 2000),  # 6  self-loop
    ("D", "r2", "F", 2000),  # 7
    ("C", "r2", "G", 2000),  # 8
    ("A", "r1", "B", 2000),  # 9  exact duplicate of row 1
]


def test_bfs_per_hop_caps_in_edge_id_order(tmp_path):
    # SPEC §2.4 pseudo-code, t_query 2000, caps (3, 2):
    # hop 1: rows at A passing the filter: 1 2 4 6 9 -> [1 2 4]; frontier {B C D}
    # hop 2: rows at B C D, unseen, passing: 0 5 7 8 9 -> [0 5]
    index = make_index(tmp_path, BFS_ROWS)
    q = question(s_id="A")
    exp = Retriever(index, cfg(caps=(3, 2, 400))).expand(q)
    assert exp.pool.tolist() == [1, 2, 4, 0, 5] and exp.hop_sizes == (3, 2)
    assert exp.rows.tolist() == [1, 2, 4, 0, 5]


def test_bfs_self_loop_counted_once_seen_rows_excluded_dedup(tmp_path):
    # caps (5, 3): hop 1 = [1 2 4 6 9] (the self-loop 6 once); frontier {B C D}
    # (A is visited); hop 2: 0 5 7 8 (9 is seen) -> [0 5 7]; dedup drops row 9
    index = make_index(tmp_path, BFS_ROWS)
    exp = Retriever(index, cfg(caps=(5, 3, 400))).expand(question(s_id="A"))
    assert exp.pool.tolist() == [1, 2, 4, 6, 9, 0, 5, 7]
    assert exp.rows.tolist() == [1, 2, 4, 6, 0, 5, 7]


def test_bfs_stale_blind_is_the_same_pipeline_without_the_filter(tmp_path):
    # filter off, caps (3, 2): hop 1: 1 2 3 4 6 9 -> [1 2 3]; frontier {B C};
    # hop 2: B: 0 5 9, C: 0 8 -> [0 5]; dedup drops row 3 (same triple as row 1,
    # later in pool order): the stale row used up a hop-1 slot, D is never reached
    index = make_index(tmp_path, BFS_ROWS)
    q = question(s_id="A")
    exp = Retriever(index, cfg(caps=(3, 2, 400), temporal_filter=False)).expand(q)
    assert exp.pool.tolist() == [1, 2, 3, 0, 5]
    assert exp.rows.tolist() == [1, 2, 0, 5]
    shipped = load_config("stale_blind")
    assert shipped.replace(name="oracle", description="") == load_config("oracle").replace(
        description="", temporal_filter=False)


def test_bfs_three_hops_frontier_excludes_visited(tmp_path):
    # caps (1, 1, 5): hop 1 [1], frontier {B}; hop 2: B's unseen rows 0 5 9 -> [0],
    # frontier {C}; hop 3: C's unseen rows 2 8 -> [2 8] (A is visited, not re-expanded,
    # so A's other rows 4 6 never enter)
    index = make_index(tmp_path, BFS_ROWS)
    exp = Retriever(index, cfg(hops=3, caps=(1, 1, 5))).expand(question(s_id="A"))
    assert exp.pool.tolist() == [1, 0, 2, 8] and exp.hop_sizes == (1, 1, 2)


@pytest.mark.parametrize(("t_query", "expected"), [(1999.0, [3]), (1999, [3]), (1999.5, []), (1998.9999999, []),
                                                   (1980.0, []), (2000.0, [1, 2, 4, 6, 9, 0, 5, 7, 8])])
def test_temporal_filter_compares_floats(tmp_path, t_query, expected):
    # SPEC §2.4: "t_start <= t_query <= t_end compared as floats ... a t_query that is
    # not a whole year matches nothing (never round it)". At 1999 only row 3 (A-B)
    # passes; B has no other 1999 row. At 1980 the anchor has no row at all.
    index = make_index(tmp_path, BFS_ROWS)
    q = question(s_id="A", t=t_query)
    assert pool(index, q, cfg()) == expected
    rec = Retriever(index, cfg()).retrieve(q)
    assert rec["anchor"] == {"id": "A", "label": "A", "source": "oracle"}
    assert len(rec["evidence"]) == len(set(expected) - {9})


def test_dedup_keeps_first_time_version_in_pool_order(tmp_path):
    # SPEC §2.4 (fixed): "deduplicated on (s, r, o), keeping the first time-version in
    # pool order". Filter off, caps (2, 5): hop 1 = [0 1] (A r1 B @2000, A r2 C);
    # frontier {B C}; hop 2 = [2] (A r1 B @1990): the 2000 version is kept.
    rows = [("A", "r1", "B", 2000), ("A", "r2", "C", 2000), ("A", "r1", "B", 1990)]
    index = make_index(tmp_path, rows)
    config = cfg(caps=(2, 5), temporal_filter=False)
    exp = Retriever(index, config).expand(question(s_id="A"))
    assert exp.pool.tolist() == [0, 1, 2] and exp.hop_sizes == (2, 1)
    rec = Retriever(index, config).retrieve(question(s_id="A"))
    assert sorted(lines(rec)) == ["A | r1 | B | 2000", "A | r2 | C | 2000"]


# --------------------------------------------------------------------------- §2.5 ranking

RANK_ROWS = [("H", "P1", f"X{i}", 2000) for i in range(1, 6)] + [("H", "P1", "X6", 1999)]
RANK_LABELS = {"H": "Hub", "P1": "has", "X1": "apple", "X2": "Banana", "X3": "cherry", "X4": "Zed",
               "X5": "apple", "X6": "cherry"}
STALE_BLIND = RetrieverConfig(hops=1, caps=(60,), temporal_filter=False)


def test_ties_reverse_lexicographic_on_line_homonyms_in_pool_order(tmp_path):
    # SPEC §2.5: "ties broken reverse-lexicographically on the rendered line ... the
    # line that sorts last by Python string comparison (code points) comes first;
    # identical lines (homonyms) keep pool order". Empty query: all scores 0.0.
    # Code points: "c" > "a" > "Z" > "B"; "2000" > "1999".
    index = make_index(tmp_path, RANK_ROWS, RANK_LABELS)
    rec = Retriever(index, STALE_BLIND).retrieve(question("", s_id="H"))
    assert [e["o_id"] for e in rec["evidence"]] == ["X3", "X6", "X1", "X5", "X4", "X2"]
    assert lines(rec) == ["Hub | has | cherry | 2000", "Hub | has | cherry | 1999", "Hub | has | apple | 2000",
                          "Hub | has | apple | 2000", "Hub | has | Zed | 2000", "Hub | has | Banana | 2000"]
    assert rec["cutoff_ties"] == []
    # option: pool order among equal scores (the card's earlier scripts)
    rec = Retriever(index, STALE_BLIND.replace(tie_break="pool_order")).retrieve(question("", s_id="H"))
    assert [e["o_id"] for e in rec["evidence"]] == ["X1", "X2", "X3", "X4", "X5", "X6"]


@pytest.mark.parametrize(
    ("text", "k", "evidence", "ties"),
    [
        ("", 2, ["X3", "X6"], ["X1", "X5", "X4", "X2"]),
        ("", 3, ["X3", "X6", "X1"], ["X5", "X4", "X2"]),
        ("banana", 2, ["X2", "X3"], ["X6", "X1", "X5", "X4"]),
        ("banana", 1, ["X2"], []),
        ("", 6, ["X3", "X6", "X1", "X5", "X4", "X2"], []),
        ("", 9, ["X3", "X6", "X1", "X5", "X4", "X2"], []),
    ],
)
def test_cut_to_k_and_cutoff_ties(tmp_path, text, k, evidence, ties):
    # SPEC §2.5/§6.1: truncate to k; cutoff_ties = the candidates that "scored exactly
    # the k-th returned score but fell below the cut-off", in rank order.
    index = make_index(tmp_path, RANK_ROWS, RANK_LABELS)
    rec = Retriever(index, STALE_BLIND.replace(k=k)).retrieve(question(text, s_id="H"))
    assert [e["o_id"] for e in rec["evidence"]] == evidence
    assert [e["o_id"] for e in rec["cutoff_ties"]] == ties
    kth = rec["evidence"][-1]["score"]
    assert all(e["score"] == kth for e in rec["cutoff_ties"])
    for item in rec["evidence"] + rec["cutoff_ties"]:
        assert set(item) == ITEM_KEYS


def test_item_shape_and_line_rendering(tmp_path):
    # SPEC §2.5: line "{s} | {r} | {o} | {t}", labels and the integer year; §6.1 item keys.
    index = make_index(tmp_path, RANK_ROWS, RANK_LABELS)
    rec = Retriever(index, STALE_BLIND.replace(k=1)).retrieve(question("banana", s_id="H"))
    item = rec["evidence"][0]
    assert list(item) == ["s", "r", "o", "s_id", "r_id", "o_id", "t_start", "t_end", "score", "line"]
    assert {k: v for k, v in item.items() if k != "score"} == {
        "s": "Hub", "r": "has", "o": "Banana", "s_id": "H", "r_id": "P1", "o_id": "X2",
        "t_start": 2000, "t_end": 2000, "line": "Hub | has | Banana | 2000"}
    assert type(item["t_start"]) is int and type(item["score"]) is float
    # a custom template (decision option) sees ids and times too
    custom = STALE_BLIND.replace(k=1, line_template="{s_id}/{r_id}/{o_id}@{t_start}-{t_end} {t}")
    assert lines(Retriever(index, custom).retrieve(question("banana", s_id="H"))) == ["H/P1/X2@2000-2000 2000"]


def test_bm25_scores_match_spec_formula_exactly(tmp_path):
    # SPEC §2.1-§2.2: one document per KG row (all rows, not just the pool), labels
    # rendered, tokens \w+ of the lowercased text, idf = ln(1 + (N-df+.5)/(df+.5)).
    rows = [("H", "P1", "X1", 2000), ("H", "P2", "X2", 2000), ("X2", "P1", "X3", 2000), ("X1", "P2", "X3", 1990),
            ("X3", "P2", "X3", 1995)]
    labels = {"H": "Hub Town", "P1": "has part", "P2": "twinned with", "X1": "Old Town", "X2": "Hub-Harbour",
              "X3": "Town Town Hall"}
    index = make_index(tmp_path, rows, labels)
    text = "Which TOWN is twinned with the hub? town hall?"
    rec = Retriever(index, cfg(k=10)).retrieve(question(text, s_id="H"))
    # pool at 2000: hop 1 rows 0 1 -> frontier {X1 X2}; hop 2: rows 2 (row 3 is 1990)
    by_line = {e["line"]: e["score"] for e in rec["evidence"]}
    assert set(by_line) == {"Hub Town | has part | Old Town | 2000", "Hub Town | twinned with | Hub-Harbour | 2000",
                            "Hub-Harbour | has part | Town Town Hall | 2000"}
    for i in range(3):
        s, r, o, t = rows[i]
        assert by_line[f"{labels[s]} | {labels[r]} | {labels[o]} | {t}"] == slow_bm25(index, text, i)
    scores = [e["score"] for e in rec["evidence"]]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 3


def test_query_excludes_t_query_by_default(tmp_path):
    # SPEC §2.2: "decision: t_query is not added to the query; option to add it".
    rows = [("H", "P1", "X1", 2000), ("H", "P1", "X2", 2000)]
    index = make_index(tmp_path, rows, {"H": "Hub", "P1": "has", "X1": "Expo 2000", "X2": "Fair"})
    q = question("which event", s_id="H")
    rec = Retriever(index, cfg()).retrieve(q)
    assert lines(rec) == ["Hub | has | Fair | 2000", "Hub | has | Expo 2000 | 2000"]  # both 0.0: reverse lex
    rec = Retriever(index, cfg(query_includes_t_query=True)).retrieve(q)
    assert lines(rec) == ["Hub | has | Expo 2000 | 2000", "Hub | has | Fair | 2000"]
    assert rec["evidence"][0]["score"] > 0.0 == rec["evidence"][1]["score"]


# --------------------------------------------------------------------------- §2.6 shipped configurations


@pytest.mark.parametrize(("name", "anchor", "hops", "flt", "k"), [
    ("oracle", "oracle", 2, True, 15), ("nonoracle", "linker", 2, True, 15),
    ("stale_blind", "oracle", 2, False, 15), ("hop3_k25", "oracle", 3, True, 25)])
def test_shipped_configurations(name, anchor, hops, flt, k):
    c = load_config(name)
    assert (c.name, c.anchor, c.hops, c.temporal_filter, c.k) == (name, anchor, hops, flt, k)
    assert c.caps[:3] == (60, 200, 400)
    defaults = RetrieverConfig()
    for key in ("cap_scope", "cap_counts", "line_template", "linker_match", "linker_min_length",
                "query_includes_t_query", "oracle_label_ties", "tie_break", "homonym_order"):
        assert getattr(c, key) == getattr(defaults, key)
    assert (defaults.cap_scope, defaults.cap_counts, defaults.line_template, defaults.linker_match,
            defaults.linker_min_length, defaults.query_includes_t_query, defaults.oracle_label_ties,
            defaults.tie_break, defaults.homonym_order) == (
        "per_hop", "rows", "{s} | {r} | {o} | {t}", "substring", 2, False, "first", "reverse_lex", "pool")
    assert load_config(name, ["anchor=linker", "k=3"]).replace(name=name) == c.replace(anchor="linker", k=3)


def test_bfs_per_node_cap_option(tmp_path):
    # configs/README.md cap_scope="per_node": caps (2, 2): hop 1 = A's [1 2];
    # frontier {B C}; hop 2: B picks [0 5], C picks [0 8]; union in edge-id order.
    index = make_index(tmp_path, BFS_ROWS)
    q = question(s_id="A")
    assert pool(index, q, cfg(caps=(2, 2))) == [1, 2, 0, 5]
    assert pool(index, q, cfg(caps=(2, 2), cap_scope="per_node")) == [1, 2, 0, 5, 8]
