"""TREC run and qrels form of a scored run (SPEC §3.4), for trec_eval, ranx, ir_measures.

Per question the deduplicated returned list of SPEC §3.4 is written in rank
order. Document ids are synthetic and per question:

* ``rel<c>`` for relevant gold triple ``c`` (the qrels list every triple of
  ``rel``, retrieved or not, so ``|rel|`` counts the unretrieved ones too); the
  hit item of that triple carries this id;
* ``n<i>`` for any other item at 0-based position ``i`` (irrelevant triples,
  wrong-time copies, a second copy of an already-hit triple).

Scores are ``L - i`` (strictly decreasing), because trec_eval re-sorts by score
and breaks ties by document id, which would change the order that was returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from eval.keyspace import Resolved
from eval.relevance import deduplicated, hit_list, relevant_classes
from tempbench.core.atomic import write_text
from tempbench.core.errors import TempbenchError


def trec_run_and_qrels(resolved: Sequence[Resolved]) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """``(run, qrels)`` as nested dicts ``qid -> docid -> score / relevance``."""
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for res in resolved:
        qid = str(res.qid)
        rel = relevant_classes(res)
        if rel:
            qrels[qid] = {f"rel{c}": 1 for c in rel}
        flags, _ = hit_list(res)
        deduped = deduplicated(res.items)  # the list hit_list flagged
        length = len(deduped)
        docs: dict[str, float] = {}
        for i, (it, hit) in enumerate(zip(deduped, flags, strict=True)):
            docs[f"rel{it.cls}" if hit else f"n{i}"] = float(length - i)
        run[qid] = docs
    return run, qrels


def format_run(run: dict[str, dict[str, float]], tag: str = "tempbench") -> str:
    """TREC run lines ``qid Q0 docid rank score tag``."""
    lines = []
    for qid, docs in run.items():
        for rank, (doc, score) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {score:g} {tag}")
    return "\n".join(lines) + ("\n" if lines else "")


def format_qrels(qrels: dict[str, dict[str, int]]) -> str:
    """TREC qrels lines ``qid 0 docid relevance``."""
    lines = [f"{qid} 0 {doc} {rel}" for qid, docs in qrels.items() for doc, rel in docs.items()]
    return "\n".join(lines) + ("\n" if lines else "")


def write_trec(prefix: str | Path, resolved: Sequence[Resolved], tag: str = "tempbench") -> tuple[Path, Path]:
    """Write ``PREFIX.run`` and ``PREFIX.qrels`` atomically; return both paths."""
    run, qrels = trec_run_and_qrels(resolved)
    prefix = Path(prefix)
    run_path = prefix.with_name(prefix.name + ".run")
    qrels_path = prefix.with_name(prefix.name + ".qrels")
    for qid in run:
        if any(ch.isspace() for ch in qid):
            raise TempbenchError(f"question id {qid!r} contains whitespace and cannot be written in TREC format")
    write_text(run_path, format_run(run, tag))
    write_text(qrels_path, format_qrels(qrels))
    return run_path, qrels_path
