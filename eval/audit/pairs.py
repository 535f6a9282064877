"""Audit claims about the functional stale and distractor pairs (SPEC §3.3, §4).

The population is the split's questions whose functional flag is true; every
one of them is in the denominator (the card's 1,429 and 1,237 are flagged
counts). The *replaced hop / replacement* is SPEC §3.3's pair, computed by
:func:`eval.negatives.replaced_pair`, the same function the scorer uses. A
flagged question where not exactly one triple differs is in the denominator,
in no BM25 outcome, and said so in the row's note; for validity its differing
variant triples are used (valid when any is).

*BM25 of a triple*: the index's BM25 (``N``, ``df``, ``avgdl`` of the KG) of the
document ``label(s) label(r) label(o)`` built from the triple's rendered labels
(ids rendered as the index renders them, SPEC §1.2), with the question text as
query (:meth:`retriever.BM25.score_text`). For a triple that is a KG row this
is that row's document; a triple absent from the KG is still scored.

*Released distractors*: every question of the release (all splits) whose
``S_dist`` differs from ``S_star``; alternatives: the functional ones, or the
test split only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eval.audit.context import AuditContext
from eval.audit.values import NotComputable, Value, share_of
from eval.keyspace import GoldTriple
from eval.negatives import differing_kept, single_pair
from tempbench_core.errors import ConfigError
from tempbench_core.schema import valid_at


def triple_document(index: Any, triple: GoldTriple) -> str:
    """``label(s) + " " + label(r) + " " + label(o)`` of a benchmark triple (SPEC §2.1).

    Ids are rendered as the index renders them (raw id fallback, SPEC §1.2);
    a label-only triple uses its labels as given.
    """
    ids = triple.keys.get("id")
    if ids is not None:
        return " ".join(index.render(str(part)) for part in ids)
    return " ".join(str(part) for part in triple.keys["label"])


def _flagged(ctx: AuditContext, split: str, flag: str) -> list[dict[str, Any]]:
    """The split's questions whose functional flag ``flag`` is true (file order)."""
    flags = ctx.require_flags()
    return [q for q in ctx.split_questions(split) if flags.get(q["id"], {}).get(flag, False)]


def _differing(ctx: AuditContext, question: Mapping[str, Any], variant: str) -> tuple[list[GoldTriple], list[GoldTriple]]:
    """:func:`eval.negatives.differing_triples` of a question, once per audit (many claims ask)."""
    return differing_kept(question, variant, ctx.memo)


def _evaluable(ctx: AuditContext, questions: list[dict[str, Any]], variant: str) -> list[tuple[dict, GoldTriple, GoldTriple]]:
    """``(question, replaced hop, replacement)`` of the questions with exactly one differing triple.

    The pair is :func:`eval.negatives.replaced_pair`'s.
    """
    out = []
    for q in questions:
        pair = single_pair(*_differing(ctx, q, variant))
        if pair is not None:
            out.append((q, *pair))
    return out


def _not_evaluable_note(n_pairs: int, flagged: int) -> str | None:
    missing = flagged - n_pairs
    if not missing:
        return None
    return f"{missing} flagged question(s) without exactly one differing triple (in the denominator, in no outcome)"


def stale_functional(ctx: AuditContext, split: str) -> Value:
    """Questions of the split flagged ``stale_functional``."""
    flagged = _flagged(ctx, split, "stale_functional")
    return Value(len(flagged), note=_not_evaluable_note(len(_evaluable(ctx, flagged, "S_stale")), len(flagged)))


def _variant_valid(ctx: AuditContext, question: Mapping[str, Any], variant: str) -> bool | None:
    """Whether a differing variant triple is valid at ``t_query`` (``None``: nothing differs)."""
    _, new = _differing(ctx, question, variant)
    if not new:
        return None
    tq = float(question["t_query"])
    return any(valid_at(t.t_start, t.t_end, tq) for t in new)


def stale_valid(ctx: AuditContext, split: str, share: bool = False) -> Value:
    """Flagged-functional stale negatives valid at ``t_query``, of every flagged question."""
    flagged = _flagged(ctx, split, "stale_functional")
    states = [_variant_valid(ctx, q, "S_stale") for q in flagged]
    n = sum(s is True for s in states)
    empty = sum(s is None for s in states)
    note = f"{empty} flagged question(s) whose S_stale equals S_star" if empty else None
    if share:
        return share_of(n, len(flagged), "functional stale questions")
    return Value(n, of=len(flagged), note=note)


def _pair_scores(ctx: AuditContext, pairs: list[tuple[dict, GoldTriple, GoldTriple]]) -> list[tuple[float, float]]:
    """BM25 (query = question text) of the gold hop's and the replacement's documents."""
    index = ctx.index
    out = []
    for q, gold, new in pairs:
        key = ("pair scores", q["id"], id(gold), id(new))  # the triples live in ctx.memo: ids stay theirs
        scores = ctx.memo.get(key)
        if scores is None:
            text = str(q.get("question", ""))
            scores = ctx.memo[key] = (index.bm25.score_text(text, triple_document(index, gold)),
                                      index.bm25.score_text(text, triple_document(index, new)))
        out.append(scores)
    return out


def stale_ties(ctx: AuditContext, split: str, share: bool = False) -> Value:
    """Flagged-functional stale pairs whose gold hop and replacement tie exactly, of every flagged question."""
    flagged = _flagged(ctx, split, "stale_functional")
    scored = _pair_scores(ctx, _evaluable(ctx, flagged, "S_stale"))
    ties = sum(g == s for g, s in scored)
    if share:
        return share_of(ties, len(flagged), "functional stale questions")
    return Value(ties, of=len(flagged), note=_not_evaluable_note(len(scored), len(flagged)))


def dist_compare(ctx: AuditContext, split: str, outcome: str) -> Value:
    """BM25 gold hop vs distractor over the flagged-functional questions of the split.

    ``pairs`` is the number of flagged questions; ``higher``/``lower``/``tie``
    count the evaluable pairs by outcome and their ``*_share`` divides by
    ``pairs``; ``wins_nonties = higher / (higher + lower)``.
    """
    flagged = _flagged(ctx, split, "dist_functional")
    scored = _pair_scores(ctx, _evaluable(ctx, flagged, "S_dist"))
    note = _not_evaluable_note(len(scored), len(flagged))
    n = len(flagged)
    higher = sum(g > d for g, d in scored)
    lower = sum(g < d for g, d in scored)
    tie = sum(g == d for g, d in scored)
    if outcome == "pairs":
        return Value(n, note=note)
    counts = {"higher": higher, "lower": lower, "tie": tie}
    if outcome in counts:
        return Value(counts[outcome], of=n, note=note)
    if outcome.endswith("_share") and outcome.removesuffix("_share") in counts:
        if n == 0:
            raise NotComputable("no functional distractor questions")
        return Value(counts[outcome.removesuffix("_share")] / n, note=note)
    if outcome == "wins_nonties":
        if higher + lower == 0:
            raise NotComputable("no untied distractor pairs")
        return Value(higher / (higher + lower), note=f"{higher} of {higher + lower} non-tied pairs")
    raise ConfigError(f"dist_compare: unknown outcome {outcome!r}")


def dist_invalid(ctx: AuditContext, split: str = "all", functional: bool = False) -> Value:
    """Share of released distractors invalid at ``t_query``.

    Population: the questions of ``split`` (``all`` = every split) whose
    ``S_dist`` differs from ``S_star``, restricted to ``dist_functional`` ones
    when ``functional``; a question's distractor is invalid when no differing
    ``S_dist`` triple is valid at its ``t_query``.
    """
    qs = _flagged(ctx, split, "dist_functional") if functional else ctx.split_questions(split)
    states = [s for s in (_variant_valid(ctx, q, "S_dist") for q in qs) if s is not None]
    if not states:
        raise NotComputable(f"no distractors in the {split} split{' (functional)' if functional else ''}")
    invalid = sum(not s for s in states)
    skipped = len(qs) - len(states)
    note = f"{invalid} of {len(states)}" + (f"; {skipped} question(s) whose S_dist equals S_star left out" if skipped else "")
    return Value(invalid / len(states), note=note)
