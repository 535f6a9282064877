"""The BFS + BM25 reference retriever of TempBench, rebuilt from its specification (SPEC §1-§2).

Its public API, which :mod:`eval` and the application use (nothing else of the
package is imported from outside it)::

    from retriever import load_index, load_benchmark, load_config, Retriever

    index = load_index(kg_csv, labels_tsv, benchmark_dir=benchmark_dir)
    retriever = Retriever(index, load_config("oracle", k=5))
    record = retriever.retrieve(question)      # SPEC §6.1 run record

Inputs (SPEC §1):

- :func:`load_edgelist` -- the TGB edge list as column arrays (:class:`~retriever.kg.KG`);
- :func:`load_labels`, :func:`harvest_labels`, :func:`combine_labels` -- labels
  from a file, from the benchmark, and the two combined (the file wins);
- :func:`load_index` -- the KG, its labels and its BM25 index, cached (:class:`KGIndex`);
- :func:`load_benchmark`, :func:`load_flags` -- the questions (id spaces merged)
  and the functional flags.

Configurations (SPEC §2.6): :func:`load_config` (a shipped name or a TOML file,
with overrides), :class:`RetrieverConfig`, :func:`looks_like_path` (whether a
``--config`` value names a file).

Retrieval (SPEC §2.3-§2.5): :class:`Retriever` (anchor, pool, ranking; the
counterfactual pools of SPEC §7), :class:`OracleAnchor` (the gold first-hop
subject's resolution), :class:`PoolSummary` (a question's pool, for SPEC §7),
:func:`tokenize` (the BM25 tokenizer).

Runs (SPEC §6.1): :func:`run_to_file` with :class:`RunOptions` writes a split's
run file in resumable shards; :func:`retrieve_shard` retrieves a slice of a
split into a :class:`Shard` (records, pools, counts), and :func:`finish_run`
writes the run file and its metadata from the shards (:class:`RunSetup`).

The decision sweep (SPEC §6.3): :class:`DecisionSweep`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from retriever.anchors import OracleAnchor
    from retriever.benchmark import load_benchmark, load_flags
    from retriever.bfs import PoolSummary
    from retriever.config import RetrieverConfig, load_config, looks_like_path
    from retriever.index import KGIndex, load_index
    from retriever.kg import load_edgelist
    from retriever.labels import combine_labels, harvest_labels, load_labels
    from retriever.pipeline import Retriever
    from retriever.runner import RunOptions, run_to_file
    from retriever.shards import RunSetup, Shard, finish_run, retrieve_shard
    from retriever.sweep import DecisionSweep
    from retriever.tokenizer import tokenize

#: Where each public name lives: a name is imported when first used, so that a command that
#: needs one module (the benchmark reader) does not import the index, the BFS and the runner.
_MODULES = {
    "DecisionSweep": "sweep",
    "KGIndex": "index",
    "OracleAnchor": "anchors",
    "PoolSummary": "bfs",
    "Retriever": "pipeline",
    "RetrieverConfig": "config",
    "RunOptions": "runner",
    "RunSetup": "shards",
    "Shard": "shards",
    "combine_labels": "labels",
    "finish_run": "shards",
    "harvest_labels": "labels",
    "load_benchmark": "benchmark",
    "load_config": "config",
    "load_edgelist": "kg",
    "load_flags": "benchmark",
    "load_index": "index",
    "load_labels": "labels",
    "looks_like_path": "config",
    "retrieve_shard": "shards",
    "run_to_file": "runner",
    "tokenize": "tokenizer",
}

__all__ = [
    "DecisionSweep",
    "KGIndex",
    "OracleAnchor",
    "PoolSummary",
    "Retriever",
    "RetrieverConfig",
    "RunOptions",
    "RunSetup",
    "Shard",
    "combine_labels",
    "finish_run",
    "harvest_labels",
    "load_benchmark",
    "load_config",
    "load_edgelist",
    "load_flags",
    "load_index",
    "load_labels",
    "looks_like_path",
    "retrieve_shard",
    "run_to_file",
    "tokenize",
]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'retriever' has no attribute {name!r}")
    value = getattr(import_module(f"retriever.{module}"), name)
    globals()[name] = value  # the next use is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
