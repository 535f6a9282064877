"""tempbench-repro: the TempBench BFS + BM25 reference retriever and its TRP/CCR evaluation.

Layers, bottom to top (``ARCHITECTURE.md``): :mod:`tempbench_core` (errors, I/O,
data-root layout, schema, console), :mod:`retriever`, :mod:`eval`, and the
application in this package (:mod:`tempbench.cli`, :mod:`tempbench.commands`,
:mod:`tempbench.data`, :mod:`tempbench.sample`, :mod:`tempbench.reproduce`).
"""

from tempbench_core.version import __version__

__all__ = ["__version__"]
