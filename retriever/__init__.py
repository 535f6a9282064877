"""BFS + BM25 reference retriever of TempBench, rebuilt from its specification."""

__all__ = ["__version__"]

__version__ = "0.1.0"
