"""The sizes of a generated sample: the presets and a scale sized by its row count (SPEC §5).

A :class:`Scale` is what :func:`tempbench.sample.world.build_world` and the
question builder need to know of a sample's size: entities, countries, rows,
relations, questions, the year range and its skew, the exact duplicate rows.
:data:`SCALES` holds the presets of ``tempbench sample --scale``;
:func:`scale_for_rows` derives one from a row count (``--rows``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_ROWS", "MIN_ROWS", "SCALES", "Scale", "scale_for_rows"]


@dataclass(frozen=True)
class Scale:
    """Size parameters of one generated scale."""
    name: str
    n_entities: int
    n_countries: int
    n_rows: int
    n_relations: int
    n_questions: int
    year_min: int = 1900
    year_max: int = 2024
    n_duplicates: int = 10
    year_skew: float = 4.0  # Beta(year_skew, 1) fact start years: rows pile up in recent years


# Bounds of a scale sized by its row count (scale_for_rows).
MIN_ROWS = 5_000
MAX_ROWS = 20_000_000  # peak memory grows about 0.19 GB per million rows (1.9 GB at 10M)
_FULL_ROWS = 550_376  # the real tkgl-smallpedia file, the reference for the ratios below


def scale_for_rows(n_rows: int, name: str | None = None) -> Scale:
    """A scale of exactly ``n_rows`` rows, the other sizes derived from it.

    The KG keeps the ``full`` scale's shape (years 1900-2024, same skew) and
    grows the way the larger TGB graphs do (``tkgl-wikidata``: about 10M rows
    over about 1M entities):

    - entities: ``n_rows / 10`` (at least 500);
    - countries: ``entities / 60``, between 8 and 200 (the world's count);
    - relations: ``283 * sqrt(n_rows / 550,376)`` (283 at the real file's size),
      between the catalogue's named ones (40) and 600;
    - questions: ``n_rows / 100``, between 200 and 2,000 (enough to time an
      oracle run; the builder's cost is per question, not per row);
    - exact duplicate rows: the real file's rate (110 in 550,376), at least 3.

    Parameters
    ----------
    n_rows:
        Rows of the edge list, :data:`MIN_ROWS` to :data:`MAX_ROWS`.
    name:
        Scale name written to the manifest; default ``rows<n_rows>``.
    """
    if not MIN_ROWS <= n_rows <= MAX_ROWS:
        raise ValueError(f"{n_rows} rows is outside {MIN_ROWS:,}..{MAX_ROWS:,}")
    n_entities = max(500, n_rows // 10)
    return Scale(
        name=name or f"rows{n_rows}",
        n_entities=n_entities,
        n_countries=min(200, max(8, n_entities // 60)),
        n_rows=n_rows,
        n_relations=min(600, max(40, round(283 * (n_rows / _FULL_ROWS) ** 0.5))),
        n_questions=min(2000, max(200, n_rows // 100)),
        n_duplicates=max(3, round(n_rows * 110 / _FULL_ROWS)),
        year_skew=4.0,
    )


SCALES: dict[str, Scale] = {
    "tiny": Scale("tiny", 400, 8, 4000, 40, 200, 1990, 2024, 3, 2.0),
    # fewer rows over the same years: a steeper skew keeps recent years as dense
    "small": Scale("small", 2500, 40, 40000, 60, 1500, 1900, 2024, 12, 7.0),
    "full": Scale("full", 47433, 200, 550376, 283, 8710, 1900, 2024, 110, 4.0),
    # the size of TGB tkgl-wikidata (about 10M rows): 10M rows, 1M entities, 2,000 questions
    "wikidata": scale_for_rows(10_000_000, name="wikidata"),
}
