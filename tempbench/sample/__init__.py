"""Generated TempBench-like data: a TGB-format world plus its benchmark (SPEC §5).

:func:`generate_sample` writes a data root in the release layout (SPEC §1.5)::

    OUT/tkgl-smallpedia_edgelist.csv
    OUT/labels.tsv
    OUT/benchmark/benchmark_labelled.jsonl
    OUT/benchmark/benchmark.jsonl
    OUT/benchmark/functional_negatives.jsonl
    OUT/MANIFEST.json

Everything is written into a temporary sibling directory that is renamed into
place at the end, ``MANIFEST.json`` last, so a half-written sample never looks
complete. The bytes depend only on ``scale`` (or ``rows``) and ``seed``.

Scales: the presets ``tiny``, ``small``, ``full`` (the size of TGB
``tkgl-smallpedia``) and ``wikidata`` (the size of TGB ``tkgl-wikidata``:
10M rows, 1M entities, 2,000 questions), or any row count with ``rows=N``
(entities, relations and questions follow, see
:func:`tempbench.sample.scales.scale_for_rows`). Generation is numpy throughout
(no Python object per row, the CSV included), so 10M rows take well under a
minute and about 2 GB of memory on a 2-core machine.
"""

from __future__ import annotations

from pathlib import Path

from tempbench.sample.scales import MAX_ROWS, MIN_ROWS, SCALES, Scale, scale_for_rows
from tempbench.sample.write import write_sample
from tempbench_core.errors import ConfigError
from tempbench_core.layout import DEFAULT_SCALE, DEFAULT_SEED

__all__ = ["generate_sample", "resolve_scale", "SCALE_NAMES", "MIN_ROWS", "MAX_ROWS"]

SCALE_NAMES = tuple(SCALES)  # tiny, small, full, wikidata


def resolve_scale(scale: str = DEFAULT_SCALE, rows: int | None = None) -> Scale:
    """The :class:`~tempbench.sample.scales.Scale` of a preset name, or of a row count when ``rows`` is given.

    Raises
    ------
    ConfigError
        For an unknown preset or a row count outside ``MIN_ROWS..MAX_ROWS``.
    """
    if rows is not None:
        if isinstance(rows, bool) or not isinstance(rows, int) or not MIN_ROWS <= rows <= MAX_ROWS:
            raise ConfigError(f"--rows {rows}: expected a whole number of rows from {MIN_ROWS:,} to {MAX_ROWS:,}")
        return scale_for_rows(rows)
    if scale not in SCALE_NAMES:
        raise ConfigError(f"unknown sample scale {scale!r} (expected one of {', '.join(SCALE_NAMES)})")
    return SCALES[scale]


def generate_sample(out: Path, scale: str = DEFAULT_SCALE, seed: int = DEFAULT_SEED, rows: int | None = None) -> Path:
    """Generate the sample for ``scale`` (or ``rows``) and ``seed`` into ``out`` and return ``out``.

    Parameters
    ----------
    out:
        Target directory; replaced as a whole if it exists.
    scale:
        ``"small"`` (default), ``"full"`` (the real file's size), ``"tiny"``
        (for tests) or ``"wikidata"`` (the size of TGB ``tkgl-wikidata``: 10M
        rows, 1M entities, 2,000 questions).
    seed:
        Seed of every random draw.
    rows:
        When given, ``scale`` is ignored and the KG has exactly this many rows,
        with entities, relations and questions derived from it
        (:func:`tempbench.sample.scales.scale_for_rows`); the manifest names
        the scale ``rows<N>``.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"the sample seed must be an integer >= 0 (got {seed!r})")  # numpy's rule, said first
    return write_sample(Path(out), resolve_scale(scale, rows), int(seed))
