"""The decision sweep against a baseline (SPEC §6.3): which retriever options reproduce a published run.

``tempbench diff RUN BASELINE --sweep`` reruns the retriever for every variant
of :class:`retriever.DecisionSweep` and ranks the variants by the share of the
baseline's questions they reproduce exactly (:func:`eval.diff.exact_share`);
variants with identical evidence on every question form one row, and the swept
keys that never changed the evidence are named (:func:`keys_without_effect`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from eval.diff import choose_space, diff_lists, exact_share, item_key, question_spaces, space_of
from retriever import DecisionSweep
from tempbench_core.errors import TempbenchError

__all__ = ["REPRODUCED_SHARE", "keys_without_effect", "run_sweep"]


#: A sweep whose best variant matches fewer baseline questions than this share reproduces nothing.
REPRODUCED_SHARE = 0.95


def run_sweep(
    index: Any,
    base: Any,
    questions: Sequence[Mapping[str, Any]],
    baseline: Mapping[str, Sequence[Mapping[str, Any]]],
    base_form: str = "triple",
    keys: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Rerun the retriever for every sweep variant (:mod:`retriever.sweep`) and rank by exact-match share.

    Parameters
    ----------
    index:
        A loaded :class:`retriever.KGIndex`.
    base:
        The :class:`retriever.RetrieverConfig` the variants start from.
    questions:
        Benchmark questions (SPEC §1.3) for the baseline's question ids.
    baseline:
        Question id -> evidence items (:func:`run_evidence`).
    keys:
        The decision keys to vary (default: every one that can change ``base``'s output).

    Returns
    -------
    dict
        ``keys``; ``rows``: one row per group of variants with identical
        evidence on every question, ``{variant, variants, agree, changes, exact,
        n, share}`` sorted by ``share`` descending, then fewer changed keys,
        then sweep order (so the default wins ties); ``reproduced``: whether the
        best row matches at least :data:`REPRODUCED_SHARE` of the baseline's
        questions; ``no_effect``: the swept keys that never changed the
        evidence (:func:`keys_without_effect`) and ``no_effect_combinations``,
        the number of combinations of their values (a group of that size around
        one variant is "that variant, whatever their value");
        ``first_difference``: the first baseline question (file
        order) where the best row differs, with its per-question diff.
    """
    wanted = [q for q in questions if str(q["id"]) in baseline]
    sweep = DecisionSweep(base, keys)
    variants = sweep.variants
    groups, group_of, space = _variant_groups(sweep.runs(index, wanted), baseline, base_form)
    rows = [_group_row(group) for group in groups.values()]
    rows.sort(key=lambda r: (-r["share"], len(r["changes"]), r["_order"]))
    best = rows[0] if rows else None
    first = None if best is None else _first_difference(best["_run"], baseline, space)
    for r in rows:
        del r["_order"], r["_run"]
    swept = sweep.keys
    idle = keys_without_effect(base, swept, variants, group_of)
    return {
        "keys": swept,
        "variants": len(variants),
        "rows": rows,
        "no_effect": idle,
        "no_effect_combinations": math.prod(len({repr(c.get(k, getattr(base, k))) for c in variants}) for k in idle),
        "reproduced": best is not None and best["share"] >= REPRODUCED_SHARE,
        "threshold": REPRODUCED_SHARE,
        "first_difference": first,
    }


def _variant_groups(runs: Iterable[tuple[Any, Mapping[Any, Sequence[Any]]]],
                    baseline: Mapping[str, Sequence[Mapping[str, Any]]], base_form: str
                    ) -> tuple[dict[int, dict[str, Any]], list[int], str | None]:
    """The sweep's variants grouped by identical evidence on every baseline question.

    Returns ``(groups, group_of, space)``: per group its first run, its
    members ``(sweep order, changes)`` and its exact-match count; each
    variant's group, in sweep order; the key space the evidence is compared in.
    """
    group_of: list[int] = []
    space: str | dict[str, str] | None = None
    groups: dict[int, dict[str, Any]] = {}
    fingerprints: dict[tuple, int] = {}
    for order, (changes, run) in enumerate(runs):
        if space is None or base_form == "line":
            space = _sweep_space(run, baseline, base_form)
        # identical evidence on every question -> one group (the same object when shared by construction)
        fingerprint = tuple(tuple(item_key(it, space_of(space, q)) for it in run.get(q, ())) for q in baseline)
        gid = fingerprints.setdefault(fingerprint, len(fingerprints))
        if gid not in groups:
            n, total = exact_share(run, baseline, space)
            groups[gid] = {"run": run, "members": [], "exact": n, "n": total}
        groups[gid]["members"].append((order, dict(changes)))
        group_of.append(gid)
    return groups, group_of, space


def _sweep_space(run: Mapping[str, Sequence[Mapping[str, Any]]], baseline: Mapping[str, Sequence[Mapping[str, Any]]],
                 base_form: str) -> str | dict[str, str]:
    """The space of the whole comparison (:func:`~eval.diff.choose_space`); else, when the baseline's questions
    carry different spaces, each question's own (as :func:`~eval.diff.diff_evidence` compares them)."""
    try:
        return choose_space(itertools.chain.from_iterable(run.values()),
                            itertools.chain.from_iterable(baseline.values()), base_form)
    except TempbenchError:
        return question_spaces({q: run.get(q, []) for q in baseline}, baseline, base_form)


def _keys(items: Sequence[Mapping[str, Any]], space: str) -> list[Any]:
    return [item_key(it, space) for it in items]


def _group_row(group: Mapping[str, Any]) -> dict[str, Any]:
    """A group's row of :func:`run_sweep`, led by its member with the fewest changes (then the first swept)."""
    members = sorted(group["members"], key=lambda m: (len(m[1]), m[0]))
    lead_order, lead = members[0]
    return {
        "variant": DecisionSweep.describe(lead), "changes": lead, "agree": len(members),
        "variants": [DecisionSweep.describe(c) for _, c in members],
        "exact": group["exact"], "n": group["n"], "share": group["exact"] / group["n"] if group["n"] else 0.0,
        "_order": lead_order, "_run": group["run"],
    }


def _first_difference(run: Mapping[Any, Sequence[Any]], baseline: Mapping[str, Sequence[Mapping[str, Any]]],
                      space: str | Mapping[str, str] | None) -> dict[str, Any] | None:
    """The first baseline question (file order) where ``run`` differs, with its per-question diff."""
    for qid, items in baseline.items():
        got = run.get(qid, [])
        if _keys(got, space_of(space, qid)) != _keys(items, space_of(space, qid)):
            return {"question": qid, **diff_lists(got, items, space_of(space, qid))}
    return None


def keys_without_effect(base: Any, keys: Sequence[str], variants: Sequence[Mapping[str, Any]],
                        group_of: Sequence[int]) -> list[str]:
    """The swept keys whose value never changed the evidence: on this data, they have no effect.

    The variants are every combination of the keys' values (:class:`retriever.DecisionSweep`);
    a key has no effect when any two variants that differ in that key alone
    fall in the same group of identical evidence (``group_of[i]`` is variant
    ``i``'s group). A key that took a single value is not listed.
    """
    values = [{k: c.get(k, getattr(base, k)) for k in keys} for c in variants]
    out = []
    for key in keys:
        seen: dict[tuple, int] = {}
        varied = len({repr(v[key]) for v in values}) > 1
        same = True
        for v, gid in zip(values, group_of, strict=True):
            rest = tuple(repr(v[k]) for k in keys if k != key)
            if seen.setdefault(rest, gid) != gid:
                same = False
                break
        if varied and same:
            out.append(key)
    return out
