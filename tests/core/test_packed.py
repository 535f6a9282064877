"""``tempbench_core.workers.Packed``: an object pickled once where it is made, carried through processes as bytes."""

from __future__ import annotations

import math
from multiprocessing import Pipe

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tempbench_core.workers import Packed, WorkerPool, can_fork

_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


def _through_a_pipe(value):
    """``value`` sent and received as between processes (small values: the pipe holds them)."""
    send, receive = Pipe()
    with send, receive:
        send.send(value)
        return receive.recv()


def _same(a, b) -> bool:
    # NaN equals itself here: the bytes of the pickle, not float equality, carry it
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=200, deadline=None)
@given(_VALUES)
def test_what_is_unpacked_is_what_was_packed_also_after_a_pickle(value) -> None:
    packed = Packed(value)
    assert _same(packed.unpack(), value)
    again = _through_a_pipe(packed)
    assert isinstance(again, Packed) and again.data == packed.data and _same(again.unpack(), value)


def test_arrays_come_back_with_their_dtype_shape_and_bits() -> None:
    arrays = {"empty": np.zeros(0, dtype=np.int32), "nan": np.array([np.nan, -0.0, 1e-300]),
              "grid": np.arange(12, dtype=np.uint8).reshape(3, 4)[:, ::2], "text": np.array(["é", "ü∂"])}
    back = _through_a_pipe(Packed(arrays)).unpack()
    for key, array in arrays.items():
        assert back[key].dtype == array.dtype and back[key].shape == array.shape
        assert back[key].tobytes() == np.ascontiguousarray(array).tobytes()


def _make(_: None, value):
    return Packed(value)


def _read(_: None, packed):
    return packed.unpack()


def test_packed_in_a_worker_and_unpacked_in_another() -> None:
    if not can_fork():
        pytest.skip("workers are forked processes only where fork exists")
    value = {"ids": ["q1", "ä", None], "n": np.array([1, 2, 3], dtype=np.int64), "nan": float("nan")}
    with WorkerPool(None, 2) as pool:
        packed = pool.submit(_make, value).result()
        back = pool.submit(_read, packed).result()
    assert list(back) == list(value) and back["ids"] == value["ids"] and math.isnan(back["nan"])
    assert back["n"].tolist() == [1, 2, 3]
