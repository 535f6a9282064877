"""retriever's public API: every name of ``__all__`` is imported when first used, from the module that defines it."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import retriever


def test_every_public_name_has_its_module() -> None:
    assert sorted(retriever._MODULES) == sorted(retriever.__all__)
    for name, module in retriever._MODULES.items():
        assert getattr(retriever, name) is getattr(importlib.import_module(f"retriever.{module}"), name)
    with pytest.raises(AttributeError, match="no attribute 'UNFREED_SHARDS'"):
        retriever.UNFREED_SHARDS  # noqa: B018


def test_the_benchmark_reader_does_not_bring_the_index() -> None:
    code = "import sys; from retriever import load_benchmark; print('retriever.index' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
