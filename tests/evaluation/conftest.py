"""Fixtures of the evaluation tests: a real run of the small sample and its evaluation."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def oracle_run(small_sample, small_index):
    """``(questions, flags, {id: record})``: the oracle configuration on the small sample's test split."""
    from retriever import Retriever, load_benchmark, load_config, load_flags
    from tempbench.data import resolve_data

    data = resolve_data(data=small_sample)
    questions = load_benchmark(data.benchmark, data.benchmark_ids)
    flags = load_flags(data.flags)
    retriever = Retriever(small_index, load_config("oracle"))
    run = {q["id"]: retriever.retrieve(q) for q in questions if q["split"] == "test"}
    return questions, flags, run


@pytest.fixture(scope="session")
def oracle_evaluation(oracle_run):
    """:func:`eval.scoring.evaluate` of :func:`oracle_run`."""
    from eval.scoring import evaluate

    questions, flags, run = oracle_run
    return evaluate(run, questions, flags)
