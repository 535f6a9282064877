"""Shared fixtures: an isolated cache, and one generated small sample per session.

Tests never touch the user's cache: ``TEMPBENCH_CACHE`` points into pytest's
temporary directory before any test runs.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

_SESSION_CACHE = Path(tempfile.mkdtemp(prefix="tempbench-test-cache-"))
os.environ["TEMPBENCH_CACHE"] = str(_SESSION_CACHE)


@pytest.fixture(scope="session")
def small_sample() -> Path:
    """The default generated sample (small scale, seed 42), built once per session."""
    from tempbench.data import ensure_default_sample

    return ensure_default_sample()


@pytest.fixture(scope="session")
def small_index(small_sample: Path):
    """KG + BM25 index of the small sample, built once per session."""
    from retriever.index import load_index
    from tempbench.data import resolve_data

    paths = resolve_data(data=small_sample)
    return load_index(paths.kg, paths.labels, cache_dir=_SESSION_CACHE / "index")
