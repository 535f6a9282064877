"""The decision sweep: rerun the retriever under alternative readings of SPEC §2 (SPEC §6.3).

:func:`sweep_variants` lists combinations of the decision options around a base
configuration; :func:`sweep_runs` retrieves every question under each variant.
Each question's anchor and candidate pool are computed once per distinct
anchor/BFS setting (:func:`retriever.pipeline.pool_key`); variants that differ
only in ranking options (line template, ``t_query`` in the query, tie-breaking)
re-rank the shared pool with :meth:`retriever.pipeline.Retriever.rank`, which
gives the same evidence as a full rerun.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from retriever.config import RetrieverConfig
from retriever.pipeline import Retriever, pool_key

#: Line-template candidates of the sweep (SPEC §2.5 decision): the default first.
LINE_TEMPLATES = (
    "{s} | {r} | {o} | {t}",
    "{s} {r} {o} {t}",
    "({s}, {r}, {o}, {t})",
    "{s} | {r} | {o}",
)


def sweep_variants(base: RetrieverConfig, line_templates: Sequence[str] = LINE_TEMPLATES) -> list[dict[str, Any]]:
    """Every combination of the decision options of SPEC §2 around ``base``.

    The options are cap scope, cap counting, the line template candidates, the
    linker's matching (only when the configuration uses the linker: it changes
    nothing for the oracle) and whether the query carries ``t_query``. The
    first variant is ``base`` itself; each variant is the mapping of the keys
    it changes.
    """
    axes: list[tuple[str, list[Any]]] = [
        ("cap_scope", ["per_hop", "per_node"]),
        ("cap_counts", ["rows", "unique_triples"]),
        ("line_template", list(line_templates)),
        ("query_includes_t_query", [False, True]),
    ]
    if base.anchor == "linker":
        axes.append(("linker_match", ["substring", "word"]))
    # Put the base's own value first on each axis so variant 0 is the base.
    ordered = []
    for key, values in axes:
        own = getattr(base, key)
        ordered.append((key, [own] + [v for v in values if v != own]))
    variants = []
    for combo in itertools.product(*(values for _, values in ordered)):
        changes = {key: value for (key, _), value in zip(ordered, combo, strict=True) if value != getattr(base, key)}
        variants.append(changes)
    return variants


def describe_variant(changes: Mapping[str, Any]) -> str:
    """``"default"`` or ``key=value, key=value`` for a sweep variant."""
    if not changes:
        return "default"
    return ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={str(v).lower()}" for k, v in changes.items())


def sweep_runs(
    index: Any,
    base: RetrieverConfig,
    questions: Sequence[Mapping[str, Any]],
    variants: Sequence[Mapping[str, Any]],
) -> Iterator[tuple[Mapping[str, Any], dict[str, list[dict[str, Any]]]]]:
    """``(changes, {str(question id): evidence})`` for every variant, in the given order.

    Pools are shared between variants with the same :func:`pool_key`; they are
    kept for the whole sweep (one list of pools per distinct key).
    """
    pools: dict[tuple, list[Any]] = {}
    for changes in variants:
        config = base.replace(**changes) if changes else base
        retriever = Retriever(index, config)
        key = pool_key(config)
        if key not in pools:
            pools[key] = [retriever.expand(q) for q in questions]
        yield changes, {str(q["id"]): retriever.rank(q, pool)[0] for q, pool in zip(questions, pools[key], strict=True)}
