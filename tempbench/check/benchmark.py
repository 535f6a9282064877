"""The benchmark files (SPEC §1.3): questions per split, key spaces, the id-space twin, functional flags, oracle anchors (§2.3).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from retriever import (
    OracleAnchor,
    load_benchmark,
    load_flags,
)
from tempbench.check.report import CheckReport, exists, pct, rel_path
from tempbench_core.errors import InputError, TempbenchError
from tempbench_core.jsonl import read_jsonl
from tempbench_core.layout import DataPaths
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, SPLITS, TRIPLE_LISTS

#: A triple's id is a non-empty string or an integer (never a bool, which is an int to Python).
_TRUE_ID = (str, int)


def valid_ids(triple: dict[str, Any]) -> bool:
    """Whether every id key of ``triple`` holds a usable id (a non-empty string or an integer)."""
    return all(isinstance(triple.get(k), _TRUE_ID) and not isinstance(triple.get(k), bool) and triple.get(k) != "" for k in ID_KEYS)


def valid_labels(triple: dict[str, Any]) -> bool:
    """Whether every label key of ``triple`` is present."""
    return all(triple.get(k) is not None for k in LABEL_KEYS)


def check_benchmark(report: CheckReport, st: dict[str, Any]) -> None:
    """Count questions per split, the key spaces of their triples and the id-space twin (SPEC §1.3, §2.3).

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    data: DataPaths = st["data"]
    root = st["root"]
    if not exists(data.benchmark):
        return
    ids_path = data.benchmark_ids if exists(data.benchmark_ids) else None
    try:
        questions = load_benchmark(data.benchmark, ids_path)
    except TempbenchError as exc:
        where = exc.path if isinstance(exc, InputError) else data.benchmark
        report.add("error", rel_path(where, root), f"unreadable: {exc}", "benchmark.unreadable")
        return
    if not questions:
        report.add("error", rel_path(data.benchmark, root), "holds no question (expected one JSON question record "
                   "per line, SPEC §1.3)", "benchmark.empty")
        return
    st["questions"] = questions
    found = st["found"]
    splits = Counter(q["split"] for q in questions)
    interval = Counter(q["split"] for q in questions if q.get("operator_type") == "interval")
    found["questions (all)"] = len(questions)
    found["interval questions (all)"] = sum(interval.values())
    for split in SPLITS:
        found[f"questions ({split})"] = splits.get(split, 0)
        found[f"interval questions ({split})"] = interval.get(split, 0)
    name = rel_path(data.benchmark, root)
    # Key spaces of the triples, as the pipeline sees them (ids merged from the twin).
    spaces = Counter()
    for q in questions:
        for lst in TRIPLE_LISTS:
            for t in q[lst]:
                spaces["triples"] += 1
                spaces["id"] += valid_ids(t)
                spaces["label"] += valid_labels(t)
    twin_ids: set[Any] = set()
    if ids_path is not None:
        own = {q["id"] for q in questions}
        twin_ids = own & {rec.get("id") for _, rec in read_jsonl(ids_path)}
    first_by_label = sum(1 for q in questions if q["S_star"][0].get("s_id") in (None, ""))
    report.facts["benchmark"] = {"questions": len(questions), "splits": dict(sorted(splits.items())),
                                 "interval": dict(sorted(interval.items())), "triples": spaces["triples"],
                                 "triples_with_ids": spaces["id"], "triples_with_labels": spaces["label"],
                                 "questions_with_id_twin": len(twin_ids), "oracle_by_label": first_by_label}
    report.add("info", name, f"{len(questions):,} questions ({', '.join(f'{s} {splits.get(s, 0):,}' for s in SPLITS)}), "
               f"{sum(interval.values()):,} interval ({pct(sum(interval.values()), len(questions))}); key spaces: "
               f"{spaces['label']:,} of {spaces['triples']:,} triples carry labels, {spaces['id']:,} carry ids",
               "benchmark.summary")
    if ids_path is None:
        return
    ids_name = rel_path(ids_path, root)
    missing = len(questions) - len(twin_ids)
    if missing:
        report.add("warning", ids_name, f"{missing:,} of {len(questions):,} questions have no id-space twin: their "
                   "oracle anchor resolves by label (first in load order when several entities share it), they "
                   "harvest no labels and their gold hops are scored by label (SPEC §2.3)", "benchmark_ids.partial")
    twinned = [t for q in questions if q["id"] in twin_ids for lst in TRIPLE_LISTS for t in q[lst]]
    without = sum(1 for t in twinned if not valid_ids(t))
    if without:
        report.add("warning", ids_name, f"{without:,} of {len(twinned):,} triples of the questions with a twin have no "
                   f"ids in {Path(ids_path).name}: they are scored by label", "benchmark_ids.triples_without_ids")
    if not missing and not without:
        report.add("info", ids_name, f"every question has its id-space twin; all {spaces['triples']:,} triples carry ids",
                   "benchmark_ids.complete")


def check_flags(report: CheckReport, st: dict[str, Any]) -> None:
    """Count the functional flags of the test split; flags naming unknown questions, questions without flags.

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    data: DataPaths = st["data"]
    root = st["root"]
    questions = st.get("questions")
    if not exists(data.flags):
        return
    name = rel_path(data.flags, root)
    try:
        flags = load_flags(data.flags)
    except TempbenchError as exc:
        report.add("error", name, f"unreadable: {exc}", "flags.unreadable")
        return
    if questions is None:
        return
    split_of = {q["id"]: q["split"] for q in questions}
    test = [qid for qid, s in split_of.items() if s == "test"]
    st["found"]["functional stale (test)"] = sum(1 for qid in test if flags.get(qid, {}).get("stale_functional"))
    st["found"]["functional distractor (test)"] = sum(1 for qid in test if flags.get(qid, {}).get("dist_functional"))
    unknown = [qid for qid in flags if qid not in split_of]
    absent = [qid for qid in split_of if qid not in flags]
    report.facts["flags"] = {"entries": len(flags), "unknown_ids": len(unknown), "questions_without_flags": len(absent)}
    if unknown:
        report.add("warning", name, f"{len(unknown):,} flag line(s) name questions the benchmark does not have "
                   f"(e.g. {unknown[0]!r}): another benchmark version?", "flags.unknown_ids")
    if absent:
        report.add("warning", name, f"{len(absent):,} of {len(split_of):,} questions have no functional flags (e.g. "
                   f"{absent[0]!r}): they count as not functional in the typed-negative rates", "flags.incomplete")
    if not unknown and not absent:
        report.add("info", name, f"functional flags for all {len(split_of):,} questions", "flags.complete")


def check_anchors(report: CheckReport, st: dict[str, Any]) -> None:
    """How many oracle anchors (SPEC §2.3) resolve to a KG entity, by id or by label, and how many ambiguously.

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    kg: Any = st.get("kg")
    questions = st.get("questions")
    if kg is None or questions is None or "entity_labels" not in st:
        return
    oracle = OracleAnchor(kg.entity_ids, kg.entity_index, st["entity_labels"])
    outcome = Counter()
    for q in questions:
        first = q["S_star"][0]
        anchor = oracle(q)
        by_id = first.get("s_id") not in (None, "")
        if anchor.index is not None:
            outcome["by_id" if by_id else "by_label"] += 1
            outcome["ambiguous"] += int(anchor.ambiguous)
        else:
            outcome["id_not_in_kg" if by_id else "label_not_found"] += 1
    resolved = outcome["by_id"] + outcome["by_label"]
    report.facts["oracle_anchors"] = {"questions": len(questions), **{k: outcome[k] for k in
                                      ("by_id", "by_label", "ambiguous", "id_not_in_kg", "label_not_found")}}
    name = rel_path(st["data"].benchmark, st["root"])
    text = (f"{resolved:,} of {len(questions):,} oracle anchors resolve to a KG entity ({outcome['by_id']:,} by s_id, "
            f"{outcome['by_label']:,} by label)")
    if resolved < len(questions):
        report.add("warning", name, text + f"; {outcome['id_not_in_kg']:,} s_id(s) are not in the KG and "
                   f"{outcome['label_not_found']:,} label(s) match no entity: those questions get an empty retrieval",
                   "anchors.unresolved")
    else:
        report.add("info", name, text, "anchors.resolved")
    if outcome["ambiguous"]:
        report.add("warning", name, f"{outcome['ambiguous']:,} oracle anchor(s) resolve by a label that several KG "
                   "entities share; the first in load order is taken (SPEC §2.3 decision), which may not be the "
                   "paper's entity", "anchors.ambiguous")


