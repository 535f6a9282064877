"""Typed-negative hit rates on the functional subsets (SPEC §3.3).

For a question and a negative type (``stale`` uses ``S_stale``, ``dist`` uses
``S_dist``), compare the variant with ``S_star`` as sets of five-field triples
``(s, r, o, t_start, t_end)``. The *replaced hop* is the ``S_star`` triple
missing from the variant, the *replacement* the variant triple missing from
``S_star``; the question is evaluable for that type only when exactly one triple
differs each way. Over evaluable questions flagged functional, each rate is::

    rate = #{questions whose retrieved evidence contains a matching item} / n

with the matching item, for replaced hop ``(s*, r*, o*)`` and replacement
``(s', r', o', ts', te')``:

* ``stale_exact``: the stale replacement itself (all five fields);
* ``stale_same_fact``: ``(s*, r*, o*)`` with a window invalid at ``t_query``;
* ``stale_same_relation``: ``(s*, r*)`` with a window invalid at ``t_query``;
* ``dist_exact``: the distractor replacement itself (all five fields);
* ``dist_same_triple``: ``(s', r', o')`` at any time;
* ``dist_same_relation``: ``(s*, r*)`` with an object other than ``o*``.

Items are compared in their own key space (SPEC §3.1); the benchmark triple is
taken in that space.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eval.trp_ccr import GoldTriple, Resolved, _gold_triples

RATE_NAMES: tuple[str, ...] = (
    "stale_exact",
    "stale_same_fact",
    "stale_same_relation",
    "dist_exact",
    "dist_same_triple",
    "dist_same_relation",
)
TYPES = {"stale": ("S_stale", "stale_functional"), "dist": ("S_dist", "dist_functional")}


def replaced_pair(
    question: Mapping[str, Any], variant: str, space: str, star: list[GoldTriple] | None = None
) -> tuple[GoldTriple, GoldTriple] | None:
    """``(replaced hop, replacement)`` when exactly one triple differs, else None.

    ``star`` is the already parsed ``S_star`` when the caller has it.
    """
    if question.get(variant) is None:
        return None  # no variant to compare: not evaluable for this type
    if star is None:
        star = _gold_triples(question, "S_star")
    other = _gold_triples(question, variant)
    spaces = set.intersection(*(set(t.keys) for t in star + other)) if star + other else set()
    if not spaces:
        return None
    cmp_space = space if space in spaces else sorted(spaces)[0]
    star_five = {t.five(cmp_space): t for t in star}
    other_five = {t.five(cmp_space): t for t in other}
    gone = [k for k in star_five if k not in other_five]
    new = [k for k in other_five if k not in star_five]
    if len(gone) != 1 or len(new) != 1:
        return None
    return star_five[gone[0]], other_five[new[0]]


def question_indicators(question: Mapping[str, Any], res: Resolved) -> dict[str, bool | None]:
    """Per rate name: whether the evidence contains a matching item (None if not evaluable)."""
    tq = res.tq
    out: dict[str, bool | None] = dict.fromkeys(RATE_NAMES)
    for kind, (variant, _flag) in TYPES.items():
        pair = replaced_pair(question, variant, res.gold_space, res.gold or None)
        if pair is None:
            continue
        hop, repl = pair
        exact = same_a = same_b = False
        for it in res.items:
            five = (*it.srot, it.t_start, it.t_end)
            hop_srot = hop.keys.get(it.space)
            repl_five = repl.five(it.space)
            invalid = not (it.t_start <= tq <= it.t_end)
            if repl_five is not None and five == repl_five:
                exact = True
            if kind == "stale":
                if hop_srot is not None and it.srot == hop_srot and invalid:
                    same_a = True
                if hop_srot is not None and it.srot[:2] == hop_srot[:2] and invalid:
                    same_b = True
            else:
                if repl_five is not None and it.srot == repl.keys[it.space]:
                    same_a = True
                if hop_srot is not None and it.srot[:2] == hop_srot[:2] and it.srot[2] != hop_srot[2]:
                    same_b = True
        names = RATE_NAMES[:3] if kind == "stale" else RATE_NAMES[3:]
        out.update(zip(names, (exact, same_a, same_b), strict=True))
    return out


def negatives_report(
    questions: Sequence[Mapping[str, Any]],
    resolved: Sequence[Resolved],
    flags: Mapping[Any, Mapping[str, bool]] | None,
) -> dict[str, Any]:
    """Rates ``name -> {rate, n}`` plus the evaluable and functional counts per type.

    Returns ``{'rates': ..., 'counts': {type: {'evaluable', 'functional'}},
    'indicators': {name: list of 0/1/None per question}}``; ``rates`` is None
    when no flags were found (SPEC §3.2).
    """
    indicators = {name: [] for name in RATE_NAMES}
    counts = {kind: {"evaluable": 0, "functional": 0} for kind in TYPES}
    for q, res in zip(questions, resolved, strict=True):
        ind = question_indicators(q, res)
        flag = (flags or {}).get(q.get("id"), {})
        for kind, (_variant, flag_name) in TYPES.items():
            names = RATE_NAMES[:3] if kind == "stale" else RATE_NAMES[3:]
            evaluable = ind[names[0]] is not None
            functional = evaluable and bool(flag.get(flag_name, False))
            counts[kind]["evaluable"] += evaluable
            counts[kind]["functional"] += functional
            for name in names:
                indicators[name].append(int(ind[name]) if functional else None)
    if flags is None:
        return {"rates": None, "counts": counts, "indicators": indicators}
    rates = {}
    for name, vals in indicators.items():
        kept = [v for v in vals if v is not None]
        rates[name] = {"rate": (sum(kept) / len(kept)) if kept else None, "n": len(kept)}
    return {"rates": rates, "counts": counts, "indicators": indicators}
