"""Scratch arrays are per thread: kernels that mark and clear them are safe to call from several threads."""

from __future__ import annotations

import sys
import threading

import numpy as np

from tempbench_core.scratch import ThreadScratch


def test_each_thread_gets_its_own_array_filled_on_first_use():
    scratch = ThreadScratch(5, np.int32, -1)
    mine = scratch.get()
    assert mine.tolist() == [-1] * 5 and scratch.get() is mine
    seen = []
    thread = threading.Thread(target=lambda: seen.append(scratch.get()))
    thread.start()
    thread.join()
    assert seen[0] is not mine and seen[0].tolist() == [-1] * 5


def test_retrieval_from_several_threads_equals_retrieval_in_one(small_sample, small_index):
    """BM25 scoring and the BFS's eligible-row counts mark scratch arrays: threads sharing one index must not
    see each other's marks."""
    from retriever import Retriever, load_benchmark, load_config
    from tempbench.data import resolve_data

    data = resolve_data(data=small_sample)
    questions = load_benchmark(data.benchmark, data.benchmark_ids)[:120]
    retriever = Retriever(small_index, load_config("stale_blind"))
    expected = [retriever.retrieve_with_stats(q, keep_pool=True) for q in questions]
    got: dict[int, list] = {}

    def work(k: int) -> None:
        got[k] = [retriever.retrieve_with_stats(q, keep_pool=True) for q in questions]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible: interleave inside the kernels
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    for k in range(4):
        for (record, stats), (ref_record, ref_stats) in zip(got[k], expected, strict=True):
            assert record == ref_record
            assert stats.pool.eligible == ref_stats.pool.eligible
