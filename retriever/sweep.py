"""The decision sweep: rerun the retriever under every reading of SPEC §2 (SPEC §6.3).

Every *decision* key of SPEC §2 (``configs/README.md``), plus ``tie_break``, has
a list of candidate values (:data:`CANDIDATES`); :func:`sweep_variants` takes
their product around a base configuration (keys that cannot change the output
are left out: the linker's keys under the oracle anchor and the oracle's label
ties under the linker). :func:`sweep_runs` retrieves every question under each
variant, cheaply:

- each question's anchor and candidate pool are computed once per distinct
  anchor/BFS setting (:func:`retriever.pipeline.pool_key`); settings whose pools
  turn out identical on the given questions share one set of pools;
- a ranking (:meth:`retriever.pipeline.Retriever.rank`) is computed once per
  distinct pool set and ranking options (:data:`retriever.pipeline.RANKING_KEYS`),
  so variants that cannot differ give the *same* evidence object.

A re-ranked shared pool gives the same evidence as a full rerun (tested).
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from retriever.config import CHOICES, DEFAULTS, RetrieverConfig
from retriever.pipeline import RANKING_KEYS, Retriever, pool_key
from tempbench_core.errors import ConfigError

#: Line-template candidates of the sweep (SPEC §2.5 decision): the default first.
LINE_TEMPLATES = (
    DEFAULTS.line_template,
    "{s} {r} {o} {t}",
    "({s}, {r}, {o}, {t})",
    "{s} | {r} | {o}",
)

#: The keys the sweep varies and their candidate values (the base's own value always comes first).
CANDIDATES: dict[str, tuple[Any, ...]] = {
    "cap_scope": CHOICES["cap_scope"],
    "cap_counts": CHOICES["cap_counts"],
    "oracle_label_ties": CHOICES["oracle_label_ties"],
    "linker_match": CHOICES["linker_match"],
    "linker_min_length": (2, 1, 3),
    "query_includes_t_query": (False, True),
    "line_template": LINE_TEMPLATES,
    "tie_break": CHOICES["tie_break"],
    "homonym_order": CHOICES["homonym_order"],
}
#: Keys that only matter for one anchor rule (SPEC §2.3).
_ONLY_FOR_ANCHOR = {"oracle_label_ties": "oracle", "linker_match": "linker", "linker_min_length": "linker"}


def sweep_keys(base: RetrieverConfig) -> list[str]:
    """The keys that can change the output of ``base`` (all of :data:`CANDIDATES` but the other anchor's)."""
    return [key for key in CANDIDATES if _ONLY_FOR_ANCHOR.get(key, base.anchor) == base.anchor]


def sweep_variants(base: RetrieverConfig, keys: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every combination of the candidate values of ``keys`` (default: :func:`sweep_keys`) around ``base``.

    Each variant is the mapping of the keys it changes; the first is ``{}``
    (``base`` itself). An unknown key is an error listing the valid ones.
    """
    valid = sweep_keys(base)
    keys = valid if keys is None else list(keys)
    unknown = [k for k in keys if k not in CANDIDATES]
    if unknown:
        raise ConfigError(f"unknown sweep key(s) {', '.join(map(repr, unknown))} (valid: {', '.join(CANDIDATES)})")
    axes = []
    for key in keys:
        own = getattr(base, key)
        axes.append((key, [own] + [v for v in CANDIDATES[key] if v != own]))
    variants = []
    for combo in itertools.product(*(values for _, values in axes)):
        variants.append({key: value for (key, _), value in zip(axes, combo, strict=True) if value != getattr(base, key)})
    return variants


def describe_variant(changes: Mapping[str, Any]) -> str:
    """``"default"`` or ``key=value, key=value`` for a sweep variant."""
    if not changes:
        return "default"
    return ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={str(v).lower()}" for k, v in changes.items())


def _pools_digest(pools: Sequence[Any]) -> str:
    """A fingerprint of the candidate rows of every question (pools with equal digests are equal)."""
    digest = hashlib.sha256()
    for pool in pools:
        digest.update(len(pool.rows).to_bytes(8, "little"))
        digest.update(pool.rows.tobytes())
    return digest.hexdigest()


def sweep_runs(
    index: Any,
    base: RetrieverConfig,
    questions: Sequence[Mapping[str, Any]],
    variants: Sequence[Mapping[str, Any]],
) -> Iterator[tuple[Mapping[str, Any], dict[str, list[dict[str, Any]]]]]:
    """``(changes, {str(question id): evidence})`` for every variant, in the given order.

    Variants that give the same output by construction (identical pools and
    ranking options) yield the same dictionary object.
    """
    pools_of: dict[tuple, tuple[str, list[Any]]] = {}  # pool key -> (digest, pools)
    by_digest: dict[str, list[Any]] = {}
    ranked: dict[tuple, dict[str, list[dict[str, Any]]]] = {}
    for changes in variants:
        config = base.replace(**changes) if changes else base
        retriever = Retriever(index, config)
        key = pool_key(config)
        if key not in pools_of:
            pools = retriever.expand_many(questions)
            digest = _pools_digest(pools)
            pools_of[key] = (digest, by_digest.setdefault(digest, pools))
        digest, pools = pools_of[key]
        ranking = (digest, tuple((k, repr(v)) for k, v in config.to_dict().items() if k in RANKING_KEYS))
        if ranking not in ranked:
            ranked[ranking] = {str(q["id"]): evidence for q, (evidence, _ties) in zip(
                questions, retriever.rank_many(questions, pools), strict=True)}
        yield changes, ranked[ranking]


class DecisionSweep:
    """The variants of a base configuration over decision keys, and their runs (SPEC §6.3).

    Parameters
    ----------
    base:
        The configuration the variants start from.
    keys:
        The keys to vary (default: every key of :data:`CANDIDATES` that can
        change ``base``'s output); an unknown key is an error listing the valid ones.

    Attributes
    ----------
    keys:
        The swept keys.
    variants:
        Each variant as the mapping of the keys it changes; the first is ``{}`` (``base``).
    """

    #: The keys a sweep can vary and their candidate values.
    CANDIDATES = CANDIDATES

    def __init__(self, base: RetrieverConfig, keys: Sequence[str] | None = None) -> None:
        self.base = base
        self.keys = sweep_keys(base) if keys is None else list(keys)
        self.variants = sweep_variants(base, self.keys)

    @staticmethod
    def describe(changes: Mapping[str, Any]) -> str:
        """``"default"`` or ``key=value, key=value`` for a variant."""
        return describe_variant(changes)

    def runs(self, index: Any, questions: Sequence[Mapping[str, Any]]
             ) -> Iterator[tuple[Mapping[str, Any], dict[str, list[dict[str, Any]]]]]:
        """``(changes, {str(question id): evidence})`` for every variant, in order (:func:`sweep_runs`)."""
        return sweep_runs(index, self.base, questions, self.variants)
