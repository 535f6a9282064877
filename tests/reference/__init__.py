"""Deliberately slow, literal reference implementations of the specification, and small
fixtures, shared by the tests and ``scripts/bench.py`` (which puts ``tests/`` on its path).

One implementation of each thing, written from SPEC's text and importing nothing of
the project except the data structures it reads (KG arrays, rendered labels):

- :mod:`reference.bm25`: BM25 of SPEC §2.1-§2.2 (``SlowBM25``, bit-identical by contract);
- :mod:`reference.retriever`: the retriever of SPEC §2.3-§2.5 (``SlowRetriever``), on ``reference.bm25``;
- :mod:`reference.eval`: the published TRP/CCR scorer and aggregate rebuilt (SPEC §3.1-§3.2),
  rank metrics (§3.4), and tie-aware evaluation by brute-force enumeration (§3.5);
- :mod:`reference.explain`: loss attribution (SPEC §7);
- :mod:`reference.diff`: the diff's comparison space and exact matches (SPEC §6.3).

Fixtures: :mod:`reference.tiny` (a hand-made KG), :mod:`reference.synthetic` (a
benchmark and run of any size), :mod:`reference.sample_checks` (invariants of a
generated data root).
"""
