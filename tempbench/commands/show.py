"""``tempbench show QID``: one question at a glance (SPEC §7).

The question, ``t_query``, answer, operator and complexity; the gold chain
with each hop's SPEC §7 stage; the ``S_stale`` and ``S_dist`` replacements;
the anchor (and, for the linker, the gold subject it should have found); the
pool size per hop and which caps were hit; the ranked evidence with gold /
stale / distractor marks, scores and the tie group at the cut-off.

The evidence comes from ``--run RUN.jsonl`` (configuration from its
``.meta.json``, else ``--config``), or, without ``--run``, from running
``--config`` (default ``oracle``) on this one question; a ``--run`` whose
``.meta.json`` says it was made on other data is refused (``--force``: a
warning), as by ``tempbench score``. Tables fit an
80-column terminal; ``--json`` prints the same content as one JSON object.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from eval.explain import STAGE_HELP
from eval.question_detail import question_detail
from retriever import load_config
from tempbench.commands._scoring import RETRIEVAL_INPUTS, add_force_argument, check_runs
from tempbench.commands.explain import load_explainer, resolve_config
from tempbench.data import CACHE_DIR_HELP, add_data_arguments, data_from_args
from tempbench_core.console import print_table
from tempbench_core.errors import RunMismatchError
from tempbench_core.jsonl import terminal_json
from tempbench_core.runfile import read_run
from tempbench_core.schema import format_year
from tempbench_core.text import terminal_text

#: Widths of the wrapped text columns, so every table stays within 80 columns.
WIDTH = 78
MARK_HELP = ("marks: gold N = gold hop N valid at t_query; stale N = gold hop N at an invalid time; "
             "dist = S_dist replacement")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``tempbench show``."""
    parser.description = ("Show one question: gold chain with each hop's SPEC §7 stage, negatives, anchor, pool per "
                          "hop and caps hit, ranked evidence with marks and the cut-off tie group.")
    parser.add_argument("qid", metavar="QID", help="question id")
    parser.add_argument("--run", metavar="RUN.jsonl", help="take the evidence from this run file")
    parser.add_argument("--config", metavar="NAME|FILE",
                        help="configuration: run it on the question (default oracle), or that of --run when it has "
                             "no .meta.json")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--cache-dir", metavar="DIR", help=CACHE_DIR_HELP)
    add_force_argument(parser)
    add_data_arguments(parser)


def _find(mapping_or_list: Any, qid: str) -> Any:
    """The entry whose id is ``qid`` (ids may be numbers in the files: compared as text)."""
    if isinstance(mapping_or_list, dict):
        if qid in mapping_or_list:
            return mapping_or_list[qid]
        return next((v for k, v in mapping_or_list.items() if str(k) == qid), None)
    return next((q for q in mapping_or_list if str(q.get("id")) == qid), None)


def detail_for(args: argparse.Namespace) -> dict[str, Any]:
    """Load what is needed and build :func:`eval.question_detail.question_detail`."""
    data = data_from_args(args)
    if args.run:
        check_runs(args, args.run, names=RETRIEVAL_INPUTS)  # the evidence shown is from a run of this data
        config = resolve_config(args.run, args.config)
    else:
        config = load_config(args.config or "oracle")
    explainer, questions = load_explainer(data, config, args.cache_dir)
    question = _find(questions, args.qid)
    if question is None:
        raise RunMismatchError(f"question {args.qid!r} is not in {data.benchmark}")
    if args.run:
        record = _find(read_run(args.run), args.qid)
        if record is None:
            raise RunMismatchError(f"question {args.qid!r} is not in the run {args.run}")
    else:
        record = explainer.retriever.retrieve(question)
    return question_detail(explainer, question, record)


def _wrap(text: Any, width: int) -> str:
    """``text`` escaped (:func:`~tempbench_core.text.terminal_text`: it is data), then wrapped to ``width``."""
    return "\n".join(textwrap.wrap(terminal_text(text), width, break_long_words=True, break_on_hyphens=False)) or "-"


def _table(title: str, columns: list[str], rows: list[list[Any]]) -> None:
    """:func:`print_table` of cells wrapped here: their line breaks are kept (the data in them is escaped first)."""
    print_table(title, columns, rows, wrapped=True)


def _triple(t: dict[str, Any] | None) -> str:
    if t is None:
        return "-"
    s, r, o = (t.get(k) if t.get(k) is not None else t.get(k + "_id") for k in ("s", "r", "o"))
    return f"{s} | {r} | {o} | {t.get('t')}"


def print_detail(d: dict[str, Any]) -> None:
    """The tables of ``show``, each at most 80 columns wide."""
    facts = [
        ["question", _wrap(d["question"], 60)],
        ["id / split", terminal_text(f"{d['id']} / {d['split']}")],
        ["t_query", format_year(d["t_query"]) if d["t_query"] is not None else "-"],
        ["answer", _wrap(d["answer"], 60)],
        ["operator", terminal_text(d["operator"])],
        ["complexity", terminal_text(d["complexity"])],
        ["config", terminal_text(f"{d['config']} (k = {d['k']})")],
    ]
    _table(f"question {d['id']}", ["field", "value"], facts)

    rows = [[h["hop"], _wrap(_triple(h), 44), h["stage"]] for h in d["hops"]]
    _table("gold chain, each hop's stage (SPEC §7)", ["hop", "s | r | o | t", "stage"], rows)
    used = sorted({h["stage"] for h in d["hops"]}, key=list(STAGE_HELP).index)
    for stage in used:
        print(textwrap.fill(f"{stage}: {STAGE_HELP[stage]}", WIDTH, subsequent_indent="  "))

    rows = []
    for variant, pairs in d["replacements"].items():
        for p in pairs:
            rows.append([variant, _wrap(_triple(p["replaced"]), 30), _wrap(_triple(p["replacement"]), 30)])
    if rows:
        _table("negatives: replaced hop -> replacement", ["list", "replaced hop", "replacement"], rows)

    a = d["anchor"]
    hit = {True: "yes", False: "NO", None: "- (no gold subject)"}[a["hit"]]
    rows = [
        ["rule", terminal_text(a["rule"])],
        ["anchor", _wrap(f"{a['label']} ({a['id']}), source {a['source']}" if a["id"] is not None else "none", 56)],
        ["gold subject", _wrap(f"{a['gold_label']} ({a['gold_id']})", 56)],
        ["anchor is gold", hit],
    ]
    if a["id"] is not None and not a["in_kg"]:
        rows.append(["note", "the anchor is not a KG entity: empty pool"])
    _table("anchor (SPEC §2.3)", ["field", "value"], rows)

    p = d["pool"]
    rows = [[h + 1, p["caps"][h], p["eligible"][h], p["rows"][h], "yes" if p["cap_hit"][h] else "no"] for h in range(p["hops"])]
    _table(f"pool (SPEC §2.4): {p['pool_rows']} rows, {p['candidates']} candidates",
           ["hop", "cap", "eligible rows", "taken", "cap hit"], rows)

    def evidence_rows(items: list[dict[str, Any]]) -> list[list[Any]]:
        return [[it["rank"], f"{it['mark']} {it['hop']}" if it["mark"] and it["hop"] else it["mark"],
                 "-" if it["score"] is None else f"{it['score']:.4f}",
                 "*" if it["tie_group"] else "", _wrap(it["line"], 44)] for it in items]

    _table(f"evidence, ranked (k = {d['k']})", ["#", "mark", "score", "tie", "line"], evidence_rows(d["evidence"]))
    if d["cutoff_ties"]:
        _table("cut-off ties (same score as the k-th, below it)", ["#", "mark", "score", "tie", "line"],
               evidence_rows(d["cutoff_ties"]))
        print(textwrap.fill("tie * = the tie group at the cut-off: equal scores straddling rank k (SPEC §3.5)", WIDTH))
    print(textwrap.fill(MARK_HELP, WIDTH))


def run(args: argparse.Namespace) -> int:
    """Print one question (tables, or JSON with ``--json``)."""
    detail = detail_for(args)
    if args.json:
        sys.stdout.write(terminal_json(detail) + "\n")
    else:
        print_detail(detail)
    return 0
