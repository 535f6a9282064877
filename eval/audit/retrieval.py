"""Audit claims about retrieval: the index size, the linker's gold-anchor recall,
and the slice metrics and negative rates of the four configurations (SPEC §4).

*Gold-anchor recall*: over the split's questions whose gold first-hop subject
resolves to an entity id as the oracle resolves it (SPEC §2.3), the share whose
linker anchor (from the ``nonoracle`` run) is that id; a question missing from
the run counts as a miss. Alternative ``over="all"``: every question of the
split in the denominator.
"""

from __future__ import annotations

from eval.audit.context import AuditContext
from eval.audit.values import NotComputable, Value
from retriever import OracleAnchor
from tempbench_core.errors import ConfigError


def bm25_documents(ctx: AuditContext) -> Value:
    """Number of BM25 documents (KG rows) of the index."""
    return Value(int(ctx.index.bm25.N))


def anchor_recall(ctx: AuditContext, config: str = "nonoracle", over: str = "resolved") -> Value:
    """Share of the split's questions whose linker anchor is the gold first-hop subject's id.

    The gold id is ``S_star[0]`` resolved as the oracle resolves it (SPEC
    §2.3); the linker's anchor is the ``anchor.id`` of ``config``'s run record
    (a question missing from the run is a miss). ``over="resolved"``: questions
    with a gold id; ``over="all"``: every question of the split.
    """
    if over not in ("resolved", "all"):
        raise ConfigError(f"anchor_recall: unknown over {over!r} (expected resolved or all)")
    linked = ctx.anchors(config)
    kg = ctx.index.kg
    oracle = OracleAnchor(kg.entity_ids, kg.entity_index, ctx.index.entity_labels)
    n = hit = 0
    for q in ctx.split_questions(ctx.split):
        gold_id = oracle.gold_subject(q).id
        if gold_id is None and over == "resolved":
            continue
        n += 1
        hit += gold_id is not None and linked.get(q["id"]) == gold_id
    if n == 0:
        raise NotComputable("no question with a gold anchor in the split")
    return Value(hit / n, note=f"{hit} of {n}")


def slice_metric(ctx: AuditContext, config: str, field: str, value: str, metric: str) -> Value:
    """A metric of one slice (``field=value``) of a configuration's score."""
    agg = ctx.scores(config)["trp_ccr"]
    per = agg.get(f"by_{field}", {})
    if value not in per:
        raise NotComputable(f"no {field}={value} questions in the {ctx.split} split")
    return Value(per[value][metric], note=f"n={per[value]['n']}")


def slice_metric_range(ctx: AuditContext, config: str, field: str, exclude: str, metric: str) -> Value:
    """``[min, max]`` of a metric over the slices of ``field`` other than ``exclude``."""
    per = ctx.scores(config)["trp_ccr"].get(f"by_{field}", {})
    vals = {k: v[metric] for k, v in per.items() if k != exclude}
    if not vals:
        raise NotComputable(f"no {field} other than {exclude} in the {ctx.split} split")
    return Value([min(vals.values()), max(vals.values())], note=", ".join(f"{k} {v:.3f}" for k, v in vals.items()))


def negative_rate(ctx: AuditContext, config: str, name: str) -> Value:
    """A typed-negative hit rate (SPEC §3.3) of a configuration."""
    neg = ctx.scores(config).get("negatives") or {}
    entry = neg.get(name)
    if not isinstance(entry, dict) or entry.get("rate") is None:
        raise NotComputable(f"negative rate {name!r} not available ({'no flags' if ctx.flags is None else 'no evaluable questions'})")
    return Value(entry["rate"], note=f"n={entry.get('n')}")
