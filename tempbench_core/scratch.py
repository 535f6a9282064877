"""Reusable scratch arrays: one per thread, back to their fill value between uses.

A kernel that marks a few positions of a large array (the frontier of a BFS,
the query terms of a BM25 scoring) and clears them again is much cheaper than
one that allocates the array each call; one array per thread keeps two threads
using the same index from marking each other's.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np


class ThreadScratch:
    """A ``numpy`` array of ``size`` items per thread, made on first use, filled with ``fill``.

    The user restores ``fill`` where it wrote before it returns (``try`` /
    ``finally``), so the array is all ``fill`` whenever it is taken.
    """

    def __init__(self, size: int, dtype: Any, fill: Any) -> None:
        self.size, self.dtype, self.fill = int(size), dtype, fill
        self._local = threading.local()

    def get(self) -> np.ndarray:
        array = getattr(self._local, "array", None)
        if array is None:
            array = self._local.array = np.full(self.size, self.fill, dtype=self.dtype)
        return array
