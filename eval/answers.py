"""Answer metrics: EM and token F1, overall and without the interval slice (SPEC §3.6).

Normalisation: lowercase, drop punctuation, drop the articles ``a, an, the``,
collapse white space. With ``p`` the normalised prediction and ``g`` a normalised
gold alias::

    EM = 1  iff  p != ''  and  some g != '' has  p in g  or  g in p   (substring containment)
    F1 = max over aliases of 2 P R / (P + R),  P = common / |tokens(p)|, R = common / |tokens(g)|

An empty prediction scores 0 on both (the common recipe lets ``''`` match every
answer through containment). Gold aliases are ``answer`` (a string, number or
list) plus ``answer_aliases`` / ``aliases`` when a record has them.

The interval slice (``operator_type == 'interval'``) has ``t_query`` equal to
the answer year (SPEC §1.3), so EM is always reported with and without it, and
the interval EM is flagged as leak-contaminated when the protocol exposed
``t_query``.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tempbench_core.errors import InputError
from tempbench_core.jsonl import read_jsonl, require_file

_PUNCT = str.maketrans("", "", string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize(text: Any) -> str:
    """Lowercase, strip punctuation and articles, collapse spaces."""
    text = str(text).lower().translate(_PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def gold_aliases(question: Mapping[str, Any]) -> list[str]:
    """Gold answer strings of a question: ``answer`` plus any alias fields."""
    out: list[str] = []
    for name in ("answer", "answer_aliases", "aliases"):
        value = question.get(name)
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            out.extend(_number_text(v) for v in value)
        else:
            out.append(_number_text(value))
    return out


def _number_text(value: Any) -> str:
    # A year stored as 1994.0 is the answer "1994".
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def exact_match(prediction: str, aliases: Sequence[str]) -> int:
    """Containment EM with an empty prediction scoring 0."""
    p = normalize(prediction)
    if not p:
        return 0
    for alias in aliases:
        g = normalize(alias)
        if g and (p in g or g in p):
            return 1
    return 0


def token_f1(prediction: str, aliases: Sequence[str]) -> float:
    """Best token F1 of the prediction against any alias (0 for an empty prediction)."""
    p_tokens = normalize(prediction).split()
    if not p_tokens:
        return 0.0
    best = 0.0
    for alias in aliases:
        g_tokens = normalize(alias).split()
        if not g_tokens:
            continue
        common = sum((Counter(p_tokens) & Counter(g_tokens)).values())
        if common == 0:
            continue
        precision = common / len(p_tokens)
        recall = common / len(g_tokens)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def answer_rows(questions: Sequence[Mapping[str, Any]], predictions: Mapping[Any, str]) -> list[dict[str, Any]]:
    """One row per question: ``id, operator, em, f1, predicted`` (a missing prediction scores 0)."""
    rows = []
    for q in questions:
        qid = q.get("id")
        pred = predictions.get(qid)
        aliases = gold_aliases(q)
        rows.append(
            {
                "id": qid,
                "operator": q.get("operator_type"),
                "em": exact_match(pred or "", aliases),
                "f1": token_f1(pred or "", aliases),
                "predicted": pred is not None,
            }
        )
    return rows


def answers_report(rows: Sequence[Mapping[str, Any]], t_query_exposed: bool = True) -> dict[str, Any]:
    """EM/F1 overall and without interval, side by side, with per-operator slices."""

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    no_iv = [r for r in rows if r["operator"] != "interval"]
    by_op: dict[Any, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_op.setdefault(r["operator"], []).append(r)
    return {
        "n": len(rows),
        "n_without_interval": len(no_iv),
        "missing_predictions": sum(1 for r in rows if not r["predicted"]),
        "EM": mean([r["em"] for r in rows]),
        "EM_without_interval": mean([r["em"] for r in no_iv]),
        "F1": mean([r["f1"] for r in rows]),
        "F1_without_interval": mean([r["f1"] for r in no_iv]),
        "by_operator": {
            op: {"n": len(v), "EM": mean([r["em"] for r in v]), "F1": mean([r["f1"] for r in v])}
            for op, v in sorted(by_op.items(), key=lambda kv: str(kv[0]))
        },
        "t_query_exposed": t_query_exposed,
        "interval_leak_contaminated": bool(t_query_exposed and any(r["operator"] == "interval" for r in rows)),
    }


def read_predictions(path: str | Path) -> dict[Any, str]:
    """Read a predictions JSONL (``id``, ``prediction``) into ``{id: prediction}`` (SPEC §3.6)."""
    path = require_file(path, "predictions file")
    out: dict[Any, str] = {}
    for number, rec in read_jsonl(path, objects_only=False):
        if not isinstance(rec, dict) or "id" not in rec or "prediction" not in rec:
            raise InputError(path, number, "a record without 'id' and 'prediction'", '{"id": ..., "prediction": ...}')
        if isinstance(rec["id"], (bool, float, list, dict)) or rec["id"] is None:
            raise InputError(path, number, f"id is {rec['id']!r}", "a string id")
        pred = rec["prediction"]
        if pred is None:
            pred = ""
        if isinstance(pred, bool) or not isinstance(pred, (str, int, float)):
            raise InputError(path, number, f"prediction is {pred!r}", "a string")
        if rec["id"] in out:
            raise InputError(path, number, f"duplicate id {rec['id']!r}", "one prediction per question")
        out[rec["id"]] = str(pred)
    return out
