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
complete. The bytes depend only on ``scale`` and ``seed``.
"""

from __future__ import annotations

from pathlib import Path

from tempbench.core.errors import ConfigError
from tempbench.sample.write import write_sample

__all__ = ["generate_sample", "SCALE_NAMES"]

SCALE_NAMES = ("tiny", "small", "full")


def generate_sample(out: Path, scale: str = "small", seed: int = 42) -> Path:
    """Generate the sample for ``scale`` and ``seed`` into ``out`` and return ``out``.

    Parameters
    ----------
    out:
        Target directory; replaced as a whole if it exists.
    scale:
        ``"small"`` (default), ``"full"`` (the real file's size) or ``"tiny"``
        (for tests).
    seed:
        Seed of every random draw.
    """

    if scale not in SCALE_NAMES:
        raise ConfigError(f"unknown sample scale {scale!r} (expected one of {', '.join(SCALE_NAMES)})")
    return write_sample(Path(out), scale, int(seed))
