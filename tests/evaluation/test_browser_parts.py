"""report.html's blob made in parts (one per configuration, possibly in other processes) and merged.

The merged blob must be what one pass over the configurations makes: every
entry's string indices name the same texts as in its part, and the shared
table lists the strings in the order of their first use (configurations in
order, questions in order, the anchor's four texts, then the evidence lines,
then the cut-off ties), each once; a question's row comes from the first
configuration that has it.
"""

from __future__ import annotations

import copy

import pytest

from eval.explain import Explainer
from eval.report.browser import (
    BrowserBlob,
    PartSpan,
    SharedStrings,
    browser_json,
    browser_part,
    browser_questions,
    merge_parts,
    part_entries,
    row_sources,
)
from retriever import Retriever, load_benchmark, load_config
from tempbench.data import resolve_data
from tempbench_core.jsonl import loads_fast


@pytest.fixture(scope="module")
def parts(small_sample, small_index):
    data = resolve_data(data=small_sample)
    questions = load_benchmark(data.benchmark, data.benchmark_ids)[:150]
    names = ["oracle", "nonoracle"]
    runs = {}
    for k, name in enumerate(names):
        retriever = Retriever(small_index, load_config(name))
        # the second run lacks some questions and has others: rows must come from the first that has them
        runs[name] = {q["id"]: retriever.retrieve(q) for q in questions[k * 20:]} if k else \
            {q["id"]: retriever.retrieve(q) for q in questions[:130]}
    chosen = browser_questions(questions, runs)
    rows_from = row_sources(chosen, names, runs)
    made = {n: browser_part(chosen, n, runs[n], Explainer(small_index, load_config(n)), rows_from[n]) for n in names}
    # the blob as the page reads it (each configuration's entries are JSON text in the blob itself)
    return chosen, names, runs, made, loads_fast(browser_json(merge_parts(chosen, names, copy.deepcopy(made))))


def _slots(entry):
    a = entry["a"]
    return [i for i in a[1:5] if i is not None] + [x[0] for x in entry["ev"]] + [x[0] for x in entry["ti"]]


def test_indices_name_the_same_texts(parts):
    _chosen, names, _runs, made, blob = parts
    for name in names:
        for local, merged in zip(part_entries(made[name]), blob["runs"][name], strict=True):
            assert (local is None) == (merged is None)
            if local is not None:
                assert [made[name]["strings"][i] for i in _slots(local)] == [blob["strings"][i] for i in _slots(merged)]


def test_the_table_is_in_order_of_first_use(parts):
    _chosen, names, _runs, _made, blob = parts
    order: list[int] = []
    for name in names:
        for entry in blob["runs"][name]:
            for i in _slots(entry) if entry is not None else []:
                if i not in order:
                    order.append(i)
    assert order == list(range(len(blob["strings"])))
    assert len(set(blob["strings"])) == len(blob["strings"])


def test_rows_come_from_the_first_configuration_that_has_the_question(parts):
    chosen, names, runs, made, blob = parts
    assert all(blob["questions"])
    for j, q in enumerate(chosen):
        first = next(n for n in names if q["id"] in runs[n])
        assert blob["questions"][j] == dict(made[first]["rows"])[j]


def _spans(parts, small_index, size: int, share_strings: bool) -> tuple[dict[str, list], list[int]]:
    """Each configuration's parts made span by span, as ``tempbench reproduce`` makes them (all configurations
    of a span in one process, sharing what depends on the question alone); with ``share_strings``, one string
    table per span. Also the size of each span's table (0 without)."""
    chosen, names, runs, _made, _blob = parts
    explainers = {n: Explainer(small_index, load_config(n)) for n in names}
    rows_from = row_sources(chosen, names, runs)
    spans: dict[str, list] = {n: [] for n in names}
    tables = []
    for lo in range(0, len(chosen), size):
        shared: dict = {}
        strings = SharedStrings(("span", lo)) if share_strings else None
        for n in names:
            spans[n].append(browser_part(chosen, n, runs[n], explainers[n], rows_from[n],
                                         span=PartSpan(range(lo, min(lo + size, len(chosen))), shared, strings)))
        tables.append(0 if strings is None else len(strings))
    return spans, tables


@pytest.mark.parametrize("size", [1, 7, 64])
def test_parts_made_in_spans_merge_into_the_same_blob(parts, small_index, size):
    """Parts made in slices of questions, merged: the same blob."""
    chosen, names, _runs, _made, blob = parts
    spans, _ = _spans(parts, small_index, size, share_strings=False)
    assert loads_fast(browser_json(merge_parts(chosen, names, spans))) == blob


@pytest.mark.parametrize("size", [1, 7, 64, 200])
def test_spans_sharing_a_string_table_merge_into_the_same_blob(parts, small_index, size):
    """The parts of one span under every configuration share a string table, each listing only the strings
    new to it (as ``tempbench reproduce`` makes them): merged, the same blob, and fewer strings sent."""
    chosen, names, _runs, _made, blob = parts
    spans, tables = _spans(parts, small_index, size, share_strings=True)
    for i, table in enumerate(tables):
        assert sum(len(spans[n][i]["strings"]) for n in names) == table
    assert loads_fast(browser_json(merge_parts(chosen, names, copy.deepcopy(spans)))) == blob
    # the second configuration's parts repeat most of the first's lines: they are not sent again
    assert sum(len(p["strings"]) for p in spans[names[1]]) < len(blob["strings"]) // 2
    # merged out of the order they were made, the holes would name other strings: refused
    later = BrowserBlob(chosen, names[::-1])
    with pytest.raises(ValueError, match="out of the order"):
        later.add(names[1], spans[names[1]])


def test_stages_are_the_entries_stages(parts):
    _chosen, names, _runs, made, _blob = parts
    for name in names:
        assert [None if e is None else e["st"] for e in part_entries(made[name])] == made[name]["stages"]
