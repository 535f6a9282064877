"""The BFS + BM25 reference retriever of TempBench, rebuilt from its specification (SPEC §1-§2).

Its public API, which :mod:`eval` and the application use (nothing else of the
package is imported from outside it)::

    from retriever import load_index, load_benchmark, load_config, Retriever

    index = load_index(kg_csv, labels_tsv, benchmark_dir=benchmark_dir)
    retriever = Retriever(index, load_config("oracle"))
    record = retriever.retrieve(question)      # SPEC §6.1 run record
"""

from retriever.anchors import Anchor, LinkerAnchor, OracleAnchor
from retriever.benchmark import load_benchmark, load_flags
from retriever.bfs import BFS, Expansion, PoolSummary
from retriever.bm25 import BM25
from retriever.config import RetrieverConfig, from_mapping, load_config, looks_like_path, parse_override, valid_keys
from retriever.incidence import Incidence
from retriever.index import KGIndex, load_index
from retriever.kg import KG, load_edgelist
from retriever.labels import TSV_HEADER, combine_labels, harvest_labels, load_labels, render
from retriever.pipeline import Retriever, pool_key
from retriever.runner import UNFREED_SHARDS, default_workers, run_to_file, select_split
from retriever.sweep import CANDIDATES as SWEEP_CANDIDATES
from retriever.sweep import describe_variant, sweep_keys, sweep_runs, sweep_variants
from retriever.tokenizer import tokenize

__all__ = [
    "TSV_HEADER",
    "KG",
    "BFS",
    "BM25",
    "Anchor",
    "Expansion",
    "Incidence",
    "KGIndex",
    "LinkerAnchor",
    "OracleAnchor",
    "PoolSummary",
    "Retriever",
    "RetrieverConfig",
    "combine_labels",
    "UNFREED_SHARDS",
    "default_workers",
    "describe_variant",
    "from_mapping",
    "harvest_labels",
    "load_benchmark",
    "load_config",
    "load_edgelist",
    "load_flags",
    "load_index",
    "load_labels",
    "looks_like_path",
    "parse_override",
    "pool_key",
    "render",
    "run_to_file",
    "select_split",
    "SWEEP_CANDIDATES",
    "sweep_keys",
    "sweep_runs",
    "sweep_variants",
    "tokenize",
    "valid_keys",
]
