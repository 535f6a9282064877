"""The KG's string lists as arrays (retriever.strings): the same items as the lists and dicts they replace."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retriever.strings as strings_module
from retriever.strings import DICT_UP_TO as DEFAULT_DICT_UP_TO
from retriever.strings import MAX_KEY_BYTES, IdLookup, PairTable, StringTable

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(TEXT, max_size=30))
def test_a_table_is_its_list(strings):
    made = StringTable.of(strings)
    loaded = StringTable(made.blob.copy(), made.offsets.copy())  # as the cache maps it: decoded on demand
    for table in (made, loaded):
        assert len(table) == len(strings) and list(table) == strings and table == strings
        assert [table[i] for i in range(len(strings))] == strings
        if strings:
            assert table[-1] == strings[-1] and table[1:3] == strings[1:3]
    with pytest.raises(IndexError):
        _ = loaded[len(strings)]


@pytest.mark.parametrize("dict_up_to", [0, 10**6])
@settings(max_examples=200, deadline=None)
@given(strings=st.lists(TEXT, unique=True, max_size=30), probes=st.lists(TEXT, max_size=10))
def test_a_lookup_is_the_dict(strings, probes, dict_up_to):
    """By binary search (a large KG) or by a dict made on first use (a small one): the same answers."""
    strings_module.DICT_UP_TO = dict_up_to
    expected = {s: i for i, s in enumerate(strings)}
    for lookup in (IdLookup.of(strings), IdLookup.of(StringTable.of(strings))):
        for key in [*strings, *probes]:
            assert lookup.get(key) == expected.get(key)
            assert (key in lookup) == (key in expected)
        assert len(lookup) == len(expected) and list(lookup) == strings
        assert lookup.get(3) is None and lookup.get(None, -1) == -1
    strings_module.DICT_UP_TO = DEFAULT_DICT_UP_TO


def test_keys_fixed_width_bytes_cannot_hold_take_a_dict():
    """A trailing NUL (fixed-width bytes drop it) or a long id: the lookup is a dict, still exact."""
    for strings in (["Q1", "Q1\x00"], ["Q1", "x" * (MAX_KEY_BYTES + 1)]):
        lookup = IdLookup.of(strings)
        assert lookup.arrays() is None
        assert [lookup.get(s) for s in strings] == [0, 1] and lookup.get("Q") is None
    strings_module.DICT_UP_TO = 0  # the binary search of a large KG
    stored = IdLookup.of(["Q2", "Q10", "P1"])
    arrays = stored.arrays()
    again = IdLookup(arrays["keys"], arrays["positions"], ["Q2", "Q10", "P1"])
    assert [again["Q2"], again["Q10"], again["P1"]] == [0, 1, 2] and again.get("Q2\x00") is None
    with pytest.raises(KeyError):
        again["Q3"]
    strings_module.DICT_UP_TO = DEFAULT_DICT_UP_TO


def test_a_pair_table_is_its_mapping():
    mapping = {"Q1": "Ada", "P2": "", "Q3": "École"}
    pairs = PairTable(StringTable.of(list(mapping)), StringTable.of(list(mapping.values())))
    assert dict(pairs) == mapping and pairs.get("P2") == "" and pairs.get("Q9", "x") == "x" and len(pairs) == 3
    assert np.asarray(StringTable.of(["a", "é"]).offsets).tolist() == [0, 1, 3]  # offsets count UTF-8 bytes
