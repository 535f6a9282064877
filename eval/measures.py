"""Declared metrics: each name, its cut-off, its definition and which questions count.

As in ``ir_measures``, a metric is a value, not a formatted string: scoring,
the tie-aware report, baselines tables and the report look measures up here
and never build or parse ``"recall@10"`` themselves. :func:`parse` reads a
name (with the aliases other tools print, ``R@10``, ``nDCG@10``, ``RR``,
``TRP``...) and raises an error listing the valid names for an unknown one.

========== ======== ================================== ==========================================
family     cut-off  which questions count              definition
========== ======== ================================== ==========================================
coverage   -        every scored question              share with at least one returned item
TRP        -        questions with evidence            temporal retrieval precision: mean of hits / n_ret
TRP_micro  -        every returned item                sum of hits / sum of n_ret
CCR        -        every scored question              chain consistency rate: share whose valid hits cover the gold chain
recall     k        questions with a relevant triple   relevant triples hit in the top k / |rel|
ndcg       k        questions with a relevant triple   DCG@k / ideal DCG@k, gain 1, discount 1/log2(i+1)
mrr        -        questions with a relevant triple   1 / rank of the first hit (0 without one)
========== ======== ================================== ==========================================

(SPEC §3.1-§3.4; answer metrics EM/F1 are §3.6.) Empty retrievals count as 0
for CCR, coverage and the rank metrics and are left out of TRP_macro; repeated
items count again for TRP and CCR and are dropped before the rank metrics.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tempbench_core.errors import ConfigError

#: The cut-offs of SPEC §3.4.
KS: tuple[int, ...] = (1, 5, 10, 15, 25)


@dataclass(frozen=True)
class Family:
    """What a metric family measures and over which questions it is averaged."""

    name: str
    title: str
    population: str
    definition: str
    takes_cutoff: bool = False
    #: A count (``n``: a whole number >= 0) rather than a share (every other family: a number in [0, 1]).
    count: bool = False


FAMILIES: dict[str, Family] = {
    f.name: f
    for f in (
        Family("coverage", "coverage", "every scored question", "share of questions with at least one returned item"),
        Family("TRP", "TRP (temporal retrieval precision, macro)", "questions with evidence (n_ret > 0)",
               "mean over questions of hits / n_ret, a hit being a returned gold triple valid at t_query; "
               "repeated items count again"),
        Family("TRP_micro", "TRP (micro)", "every returned item of every question", "sum of hits / sum of n_ret"),
        Family("CCR", "CCR (chain consistency rate)", "every scored question (an empty retrieval scores 0)",
               "share of questions whose valid hits cover every gold triple of the chain"),
        Family("recall", "recall", "questions with a relevant triple (|rel| > 0)",
               "distinct relevant triples hit in the top k / |rel|", takes_cutoff=True),
        Family("ndcg", "nDCG", "questions with a relevant triple (|rel| > 0)",
               "DCG@k / ideal DCG@k with gain 1 and discount 1/log2(i + 1)", takes_cutoff=True),
        Family("mrr", "MRR", "questions with a relevant triple (|rel| > 0)", "1 / rank of the first hit, 0 without a hit"),
        Family("precision", "precision", "questions with evidence", "hits in the top k / k (read from tables only)",
               takes_cutoff=True),
        Family("EM", "exact match", "questions with a prediction", "SPEC §3.6 containment match, an empty prediction scores 0"),
        Family("F1", "token F1", "questions with a prediction", "best token F1 over the gold aliases"),
        Family("n", "questions", "-", "number of questions", count=True),
    )
}

# Names other tools and tables use for the same families (lowercased).
_ALIASES = {
    "trp": "TRP", "trp_macro": "TRP", "trp_micro": "TRP_micro", "ccr": "CCR", "coverage": "coverage",
    "recall": "recall", "r": "recall", "ndcg": "ndcg", "ndcg_cut": "ndcg", "mrr": "mrr", "rr": "mrr",
    "recip_rank": "mrr", "p": "precision", "precision": "precision", "em": "EM", "f1": "F1", "n": "n",
    "n_questions": "n",
}
_WITH_CUTOFF = re.compile(r"^([a-z_]+)(?:@|_)(\d+)$")


@dataclass(frozen=True, order=True)
class Measure:
    """One metric: a family and, for the rank families, a cut-off ``k``."""

    family: str
    cutoff: int | None = None

    @property
    def name(self) -> str:
        """The name used as a key in every output: ``recall@10``, ``mrr``, ``TRP_macro``."""
        return self.family if self.cutoff is None else f"{self.family}@{self.cutoff}"

    @property
    def info(self) -> Family:
        """The family's title, population and definition."""
        return FAMILIES[self.family]

    def __str__(self) -> str:
        return self.name


def rank_measures(ks: Sequence[int] = KS) -> tuple[Measure, ...]:
    """``recall@k`` for each k, then ``ndcg@k`` for each k, then ``mrr`` (SPEC §3.4)."""
    return (*(Measure("recall", k) for k in ks), *(Measure("ndcg", k) for k in ks), Measure("mrr"))


#: The rank metrics of every score object, in output order.
RANK_MEASURES = rank_measures()
#: The headline metrics of SPEC §3.2 (the published aggregate keys them
#: ``coverage``, ``TRP_macro``, ``TRP_micro``, ``CCR``).
COVERAGE, TRP, TRP_MICRO, CCR = (Measure(f) for f in ("coverage", "TRP", "TRP_micro", "CCR"))


def value_problem(measure: Measure, value: float, percent: bool = False) -> str | None:
    """Why ``value`` cannot be a value of ``measure`` (``None`` when it can).

    Every family is a share in [0, 1] except ``n``, a whole number >= 0; NaN and
    infinities are never values (a published table that prints them holds no
    number there). The text is what a finding or a report says about the value;
    ``percent``: the value was written with a ``%`` (then no hint to write one).
    """
    if not math.isfinite(value):
        return "not a finite number"
    if measure.info.count:
        if value < 0 or not float(value).is_integer():
            return "not a whole number >= 0 (a question count)"
        return None
    if not 0.0 <= value <= 1.0:
        hint = f" (a percentage? write it as {value:g}%)" if 1.0 < value <= 100.0 and not percent else ""
        return f"outside [0, 1], the range of a share{hint}"
    return None


def valid_names() -> list[str]:
    """Every family, with ``@k`` where it takes a cut-off."""
    return [f"{f.name}@k" if f.takes_cutoff else f.name for f in FAMILIES.values()]


def find(name: str) -> Measure | None:
    """The measure a name denotes (aliases and case accepted), or ``None``."""
    key = str(name).strip().replace(" ", "_")
    lowered = key.lower()
    if lowered in _ALIASES and not FAMILIES[_ALIASES[lowered]].takes_cutoff:
        return Measure(_ALIASES[lowered])
    match = _WITH_CUTOFF.match(lowered)
    if match and match.group(1) in _ALIASES:
        family = _ALIASES[match.group(1)]
        if FAMILIES[family].takes_cutoff:
            return Measure(family, int(match.group(2)))
    return None


def parse(name: str) -> Measure:
    """:func:`find`, raising :class:`~tempbench_core.errors.ConfigError` that lists the valid names."""
    measure = find(name)
    if measure is None:
        raise ConfigError(f"unknown metric {name!r} (valid: {', '.join(valid_names())})")
    return measure
