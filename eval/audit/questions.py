"""Audit claims about the questions themselves: split sizes, the interval leak,
the query year in the text, and the no-retrieval "copy t_query" answer (SPEC §4).

Readings (the card leaves them open; alternatives are parameters and ``-alt``
rows of ``configs/paper_numbers.toml``):

- *answer year*: an answer (or any alias of a list answer) that is an integer
  literal, optionally followed by ``.0``; the leak holds when it equals
  ``float(t_query)`` (``check="numeric"``). Alternative ``check="prefix"``: the
  card's own snippet, ``str(t_query).startswith(str(answer))``.
- *text contains the query year*: the decimal year of a whole-number
  ``t_query`` occurs in the question not adjacent to another digit
  (``match="digits"``); alternatives ``"substring"`` (plain ``str(year) in
  text``) and ``"token"`` (a ``\\w+`` token of the lowercased text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from eval.answers import exact_match, gold_aliases
from eval.audit.context import AuditContext
from eval.audit.values import NotComputable, Value, share_of
from retriever import tokenize
from tempbench_core.errors import ConfigError
from tempbench_core.schema import format_year, whole_year

_INT_LITERAL = re.compile(r"^\s*(-?\d+)(?:\.0*)?\s*$")


def answer_years(answer: Any) -> list[int]:
    """Years an answer states: integer literals (``"1994"``, ``1994``, ``"1994.0"``), any alias of a list."""
    values = answer if isinstance(answer, (list, tuple)) else [answer]
    years = []
    for value in values:
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int):
            years.append(value)
        elif isinstance(value, float) and value.is_integer():
            years.append(int(value))
        elif isinstance(value, str):
            m = _INT_LITERAL.match(value)
            if m:
                years.append(int(m.group(1)))
    return years


def tquery_is_answer(question: Mapping[str, Any], check: str = "numeric") -> bool:
    """The leak test: ``t_query`` equals the answer year.

    ``check="numeric"`` (default): an answer year (:func:`answer_years`) equals
    ``float(t_query)``. ``check="prefix"``: the card's snippet,
    ``str(t_query).startswith(str(answer))``.
    """
    if check == "prefix":
        return str(question["t_query"]).startswith(str(question.get("answer")))
    if check != "numeric":
        raise ConfigError(f"unknown leak check {check!r} (expected numeric or prefix)")
    tq = float(question["t_query"])
    return any(float(y) == tq for y in answer_years(question.get("answer")))


def text_has_year(text: str, year: int, match: str = "digits") -> bool:
    """Whether ``text`` contains the decimal ``year``.

    ``match="digits"`` (default): not adjacent to another digit;
    ``"substring"``: ``str(year) in text``; ``"token"``: one of the ``\\w+``
    tokens of the lowercased text (SPEC §2.1 tokenizer) equals ``str(year)``.
    """
    if match == "digits":
        return re.search(rf"(?<!\d){year}(?!\d)", text) is not None
    if match == "substring":
        return str(year) in text
    if match == "token":
        return str(year) in tokenize(text)
    raise ConfigError(f"unknown year match {match!r} (expected digits, substring or token)")


def split_questions(ctx: AuditContext, split: str) -> Value:
    """Number of questions of ``split``."""
    return Value(len(ctx.split_questions(split)))


def split_interval(ctx: AuditContext, split: str) -> Value:
    """Interval questions of ``split``, of all its questions."""
    qs = ctx.split_questions(split)
    return Value(sum(q.get("operator_type") == "interval" for q in qs), of=len(qs))


def split_interval_share(ctx: AuditContext, split: str) -> Value:
    qs = ctx.split_questions(split)
    if not qs:
        raise NotComputable(f"no {split} questions")
    return Value(sum(q.get("operator_type") == "interval" for q in qs) / len(qs))


def _operator_set(ctx: AuditContext, operator: str) -> list[dict[str, Any]]:
    if operator == "other":
        return [q for q in ctx.questions if q.get("operator_type") != "interval"]
    return [q for q in ctx.questions if q.get("operator_type") == operator]


def leak_interval_count(ctx: AuditContext, check: str = "numeric") -> Value:
    """Interval questions (all splits) whose ``t_query`` is the answer year, of all interval questions."""
    qs = _operator_set(ctx, "interval")
    return Value(sum(tquery_is_answer(q, check) for q in qs), of=len(qs))


def leak_rate(ctx: AuditContext, operator: str, check: str = "numeric") -> Value:
    """Share of the operator's questions (all splits; ``other`` = not interval) with the leak."""
    qs = _operator_set(ctx, operator)
    if not qs:
        raise NotComputable(f"no {operator} questions")
    hits = sum(tquery_is_answer(q, check) for q in qs)
    return Value(hits / len(qs), note=f"{hits} of {len(qs)}")


def text_contains_year(ctx: AuditContext, share: bool = False, match: str = "digits") -> Value:
    """Interval questions (all splits) whose text contains the year of ``t_query`` (:func:`text_has_year`)."""
    qs = _operator_set(ctx, "interval")
    n = 0
    for q in qs:
        year = whole_year(q["t_query"])
        if year is not None and text_has_year(str(q.get("question", "")), year, match):
            n += 1
    return share_of(n, len(qs), "interval questions") if share else Value(n, of=len(qs))


def copy_tquery_predictions(questions: Sequence[Mapping[str, Any]]) -> dict[Any, str]:
    """The no-retrieval baseline: answer the year of ``t_query`` (its float text when not whole)."""
    return {q["id"]: format_year(q["t_query"]) for q in questions}


def copy_tquery_em(ctx: AuditContext, split: str, operator: str) -> Value:
    """EM of the no-retrieval answer "the year of ``t_query``" on one operator's questions."""
    qs = [q for q in ctx.split_questions(split) if q.get("operator_type") == operator]
    if not qs:
        raise NotComputable(f"no {operator} questions in the {split} split")
    preds = copy_tquery_predictions(qs)
    hits = sum(exact_match(preds[q["id"]], gold_aliases(q)) for q in qs)
    return Value(hits / len(qs), note=f"{hits} of {len(qs)}")
