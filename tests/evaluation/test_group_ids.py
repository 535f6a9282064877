"""eval.relevance.group_ids against a deliberately simple reference (a dict of key tuples, first occurrence)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from eval.relevance import group_ids


def _same_value(x: float | int) -> object:
    """What group_ids compares: ``==`` (so -0.0 is 0.0), with every NaN one value."""
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    return x + 0 if isinstance(x, float) else int(x)  # -0.0 + 0 is 0.0


def _reference(keys: list[np.ndarray]) -> tuple[list[int], list[int]]:
    seen: dict[tuple[object, ...], int] = {}
    ids, firsts = [], []
    for i, row in enumerate(zip(*(k.tolist() for k in keys), strict=True)):
        key = tuple(_same_value(v) for v in row)
        if key not in seen:
            seen[key] = len(seen)
            firsts.append(i)
        ids.append(seen[key])
    return ids, firsts


years = st.integers(-6000, 6000).map(lambda half_years: half_years / 2)  # whole and half years
float_values = st.one_of(years, st.sampled_from([0.0, -0.0, math.nan, 1994.5, 2.0 ** 52, -(2.0 ** 52), 2.0 ** 60,
                                                 math.inf, -math.inf, 1e-300]))
int_values = st.one_of(st.integers(-5, 40), st.sampled_from([-(2 ** 62), 2 ** 62, 2 ** 63 - 1, -(2 ** 63)]))


@st.composite
def key_sets(draw: st.DrawFn) -> list[np.ndarray]:
    n = draw(st.integers(1, 60))
    keys = []
    for _ in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["int", "small", "float", "bool", "int8"]))
        if kind == "float":
            pool = draw(st.lists(float_values, min_size=1, max_size=5))
            keys.append(np.array([draw(st.sampled_from(pool)) for _ in range(n)], dtype=np.float64))
        elif kind == "int":
            pool = draw(st.lists(int_values, min_size=1, max_size=5))
            keys.append(np.array([draw(st.sampled_from(pool)) for _ in range(n)], dtype=np.int64))
        elif kind == "small":
            keys.append(np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.int64))
        elif kind == "bool":
            keys.append(np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool))
        else:
            keys.append(np.array(draw(st.lists(st.integers(-128, 127), min_size=n, max_size=n)), dtype=np.int8))
    return keys


@settings(max_examples=400, deadline=None)
@given(key_sets())
def test_group_ids_equals_the_reference(keys) -> None:
    ids, firsts = group_ids(keys)
    want_ids, want_firsts = _reference(keys)
    assert ids.tolist() == want_ids
    assert firsts.tolist() == want_firsts


def test_whole_number_floats_pack_with_integers_and_stay_apart() -> None:
    # years next to huge integer codes: packed or not, 1994.0 and 1995.0 are two groups, 0.0 and -0.0 one
    s = np.array([5, 5, 5, 5, 2 ** 40], dtype=np.int64)
    ts = np.array([1994.0, 1995.0, 0.0, -0.0, 1994.0])
    ids, firsts = group_ids([s, ts, ts])
    assert ids.tolist() == [0, 1, 2, 2, 3]
    assert firsts.tolist() == [0, 1, 2, 4]
    # a fraction keeps the key a float: 1994.5 is not 1994
    ids, _ = group_ids([np.array([1994.0, 1994.5, 1994.0])])
    assert ids.tolist() == [0, 1, 0]


def test_empty() -> None:
    ids, firsts = group_ids([np.zeros(0, dtype=np.int64)])
    assert len(ids) == 0 and len(firsts) == 0
