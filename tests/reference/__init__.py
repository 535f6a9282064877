"""Deliberately slow, literal reference implementations of the specification, and small
fixtures, shared by the tests and ``scripts/bench.py`` (which puts ``tests/`` on its path)."""
