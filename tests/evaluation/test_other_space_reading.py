"""The key-space effect's reading in the other space (eval.key_space_effect) made from the table's own columns
equals resolving the evidence again with both sides forced into that space.

The random runs of ``test_columnar_scoring`` (homonyms, label-only, id-only and 5-list items, mixed spaces),
plus lists the plain reading must leave to resolve: ``None`` or tuple evidence, an item lacking the space, an
``s`` that is not a string, an unhashable one.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_columnar_scoring import run_case

from eval.evidence import read_question, resolve, table_of
from eval.key_space_effect import _other_reading, _plain_forced_table
from eval.trp_ccr import trp_ccr_arrays
from tempbench_core.errors import EvidenceError


def _reference(questions, evidence, space):
    """Hits and CCR of the evidence resolved again in ``space``, or the error resolve raises."""
    try:
        _, hits, ccr = trp_ccr_arrays(resolve(questions, evidence, None, space, light=True))
    except EvidenceError as exc:
        return type(exc)
    return hits.tolist(), ccr.tolist()


def _reading(table, space):
    try:
        return _other_reading(table, space)
    except EvidenceError as exc:
        return type(exc)


def _spoil(evidence, how):
    """One list of ``evidence`` changed so that the plain reading must step aside (or the reading fail)."""
    out = [list(ev) if isinstance(ev, list) else ev for ev in evidence]
    for j, ev in enumerate(out):
        dicts = [i for i, it in enumerate(ev) if isinstance(it, dict)]
        if not dicts:
            continue
        item = dict(ev[dicts[0]])
        if how == "no label":
            for k in ("s", "r", "o"):
                item.pop(k, None)
        elif how == "no id":
            for k in ("s_id", "r_id", "o_id"):
                item.pop(k, None)
        elif how == "int s":
            item["s"], item["s_id"] = 7, 7
        elif how == "list s":
            item["s"], item["s_id"] = ["a"], ["a"]
        elif how == "tuple list":
            out[j] = tuple(ev)
            return out
        ev[dicts[0]] = item
        return out
    return out


def _auto_table(chosen, evidence, as_parts):
    """The table ``tempbench reproduce`` makes (reads then :func:`table_of`) or :func:`resolve`'s, or ``None``."""
    try:
        if as_parts:
            reads = [read_question(q, ev or [], (), "auto") for q, ev in zip(chosen, evidence, strict=True)]
            return table_of(chosen, reads, "auto", evidence)
        return resolve(chosen, evidence)
    except EvidenceError:
        return None


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run_case(), st.sampled_from(("none", "no label", "no id", "int s", "list s", "tuple list", "None list")),
       st.booleans(), st.booleans())
def test_other_reading_is_resolve_in_that_space(case, how, as_parts, with_cache):
    questions, run, _flags, _split, _key = case
    chosen = [q for q in questions if q["id"] in run]
    evidence = [run[q["id"]]["evidence"] for q in chosen]
    if how == "None list" and evidence:
        evidence[0] = None
        as_parts = True  # resolve refuses it; the reproduce tables read it as no items
    elif how != "none":
        evidence = _spoil(evidence, how)
    table = _auto_table(chosen, evidence, as_parts)
    if table is None:
        return
    if with_cache:
        table.shared = {}
    for space in ("id", "label"):
        expected = _reference(chosen, evidence, space)
        for _ in range(2 if with_cache else 1):  # the second time, the gold classes come from the cache
            assert _reading(table, space) == expected
        try:
            plain = _plain_forced_table(table, space)
        except EvidenceError:
            plain = EvidenceError
            assert expected is EvidenceError
        if plain is None:
            event("resolved again")
        elif plain is not EvidenceError:
            event("plain reading")
            assert [a.tolist() for a in trp_ccr_arrays(plain)[1:]] == list(expected)


def test_a_plain_list_is_read_from_the_columns():
    """Not a test that cannot fail: the plain reading is taken for plain lists, and keys the classes in ``space``."""
    hop = {"s": "a", "r": "p", "o": "b", "t_start": 1994, "t_end": 1994}
    q = {"id": "q", "t_query": 1994, "S_star": [{**hop, "s_id": "Q1", "r_id": "P1", "o_id": "Q2"},
                                                {**hop, "s_id": "Q9", "r_id": "P1", "o_id": "Q2"}]}
    evidence = [[{**hop, "s_id": "Q9", "r_id": "P1", "o_id": "Q2", "score": 1.0},
                 {**hop, "s_id": "Q9", "r_id": "P1", "o_id": "Q2", "t_start": 1990, "t_end": 1990}]]
    table = resolve([q], evidence)
    plain = _plain_forced_table(table, "label")
    assert plain is not None and plain.n_gold.tolist() == [1] and plain.items.cls.tolist() == [0, 0]
    assert [a.tolist() for a in trp_ccr_arrays(plain)] == [[2], [1], [1]]
    assert _other_reading(table, "label") == ([1], [1]) == _reference([q], evidence, "label")
    assert _plain_forced_table(resolve([q], [[]]), "id") is not None
    # a list that is not a list of dicts, or an item without the space: resolve reads it (and fails)
    assert _plain_forced_table(resolve([q], [tuple(evidence[0])]), "label") is None
    no_labels = [{k: v for k, v in it.items() if k not in "sro"} for it in evidence[0]]
    assert _plain_forced_table(resolve([q], [no_labels]), "label") is None
    with pytest.raises(EvidenceError):
        _other_reading(resolve([q], [no_labels]), "label")
    assert np.array_equal(resolve([q], evidence).items.ts, plain.items.ts)
