"""The KG edge list and its labels as the pipeline will see them (SPEC §1.1, §1.2): counts, header, order, duplicates, label coverage.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from retriever import (
    combine_labels,
    harvest_labels,
    load_edgelist,
    load_labels,
)
from tempbench.check.report import RAW_LABELS_OK, CheckReport, exists, pct, rel_path
from tempbench_core.errors import TempbenchError
from tempbench_core.layout import DataPaths
from tempbench_core.schema import format_year


def check_kg(report: CheckReport, st: dict[str, Any]) -> None:
    """Read the KG as the pipeline does: counts, years, order, exact duplicates, a header read by position.

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    data: DataPaths = st["data"]
    if not exists(data.kg):
        return
    name = rel_path(data.kg, st["root"])
    try:
        kg = load_edgelist(data.kg)
    except TempbenchError as exc:
        report.add("error", name, f"unreadable: {exc}", "kg.unreadable")
        return
    st["kg"] = kg
    years = kg.year
    found = st["found"]
    found.update({"kg rows": kg.n_rows, "kg entities": kg.n_entities, "kg relations": kg.n_relations,
                  "kg first year": int(years.min()), "kg last year": int(years.max())})
    sorted_by_ts = bool(np.all(years[1:] >= years[:-1]))
    order = np.lexsort((kg.tail, kg.relation, kg.head, years))
    keys = np.stack([years[order], kg.head[order], kg.relation[order], kg.tail[order]])
    duplicates = int(np.count_nonzero(np.all(keys[:, 1:] == keys[:, :-1], axis=0)))
    report.facts["kg"] = {"header": list(kg.header or ()), "read_by_position": kg.header_by_position,
                          "sorted_by_ts": sorted_by_ts, "duplicate_rows": duplicates}
    report.add("info", name, f"{kg.n_rows:,} rows, {kg.n_entities:,} entities, {kg.n_relations:,} relations, years "
               f"{format_year(years.min())}-{format_year(years.max())}; {duplicates:,} exact duplicate row(s); "
               + ("sorted by ts" if sorted_by_ts else "not sorted by ts (the released file is; CSV load order decides "
                  "which rows the BFS caps keep)"), "kg.summary")
    if duplicates:
        _duplicates(report, st, name, duplicates)
    if kg.header_by_position:
        header = ",".join(kg.header or ())
        looks_like_row = kg.header is not None and whole_year_text(kg.header[0])
        if looks_like_row:
            report.add("warning", name, f"line 1 ({header!r}) looks like a data row, not a header; it is skipped as "
                       "TGB's loader skips it, so the KG has one row fewer", "kg.header_is_data")
        else:
            report.add("info", name, f"header {header!r} is not ts,head,tail,relation_type; its 4 columns are read by "
                       "position (timestamp, head, tail, relation type) as TGB's loader reads them", "kg.header_by_position")


def _duplicates(report: CheckReport, st: dict[str, Any], name: str, duplicates: int) -> None:
    """Exact duplicate rows and the caps: a warning when a configuration counts rows against them (SPEC §2.4).

    With ``cap_counts=rows`` (the default) every copy of a row takes a place in
    the hop's cap that a distinct triple could have had, and the deduplication
    after the caps removes it: a likely cause of ``capped`` losses (SPEC §7).
    The generated sample has a few on purpose, in the release's proportion, and
    passes with no warning: there it is ``info``.
    """
    configs = st["configs"]
    by_rows = [c.name for c in configs if c.cap_counts == "rows"]
    text = f"{duplicates:,} exact duplicate row(s) (same ts, head, relation and tail)"
    if not by_rows:
        report.add("info", name, f"{text}: every configuration checked ({', '.join(c.name for c in configs)}) has "
                   "cap_counts=unique_triples, so a copy does not use up a place in the BFS caps (SPEC §2.4)",
                   "kg.duplicates")
        return
    effect = (f"{text}: under cap_counts=rows ({', '.join(by_rows)}) each copy uses up a place in the BFS caps "
              "(SPEC §2.4) that a distinct triple could have taken, so more gold hops are lost as 'capped'")
    if report.generated:
        report.add("info", name, effect + " (the generator adds them on purpose, as the release has a few)",
                   "kg.duplicates")
        return
    report.add("warning", name, effect + "; deduplicate the KG or run with --set cap_counts=unique_triples",
               "kg.duplicates")


def whole_year_text(text: str) -> bool:
    """Whether a header cell reads as an integer (a year): then line 1 is probably a data row."""
    return text.strip().lstrip("+-").isdigit()


def check_labels(report: CheckReport, st: dict[str, Any]) -> None:
    """Label coverage of the KG's entities and relations (a raw id changes BM25, SPEC §1.2, §2.1).

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    data: DataPaths = st["data"]
    root = st["root"]
    file_labels: dict[str, str] = {}
    if exists(data.labels):
        try:
            file_labels = load_labels(data.labels)
        except TempbenchError as exc:
            report.add("error", rel_path(data.labels, root), f"unreadable: {exc}", "labels.unreadable")
    harvested: dict[str, str] = {}
    if exists(data.benchmark):
        try:
            harvested = harvest_labels(data.benchmark, data.benchmark_ids if exists(data.benchmark_ids) else None)
        except TempbenchError:
            pass  # the benchmark step reports unreadable benchmark files
    labels = combine_labels(file_labels, harvested)
    st["labels"] = labels
    kg: Any = st.get("kg")
    if kg is None:
        return
    entity_labels = [labels.render(e) for e in kg.entity_ids]
    relation_labels = [labels.render(r) for r in kg.relation_ids]
    st["entity_labels"], st["relation_labels"] = entity_labels, relation_labels
    raw_e = sum(1 for e, lab in zip(kg.entity_ids, entity_labels, strict=True) if lab == e)
    raw_r = sum(1 for r, lab in zip(kg.relation_ids, relation_labels, strict=True) if lab == r)
    from_file = sum(1 for e in kg.entity_ids if file_labels.get(e))
    report.facts["labels"] = {"file_ids": len(file_labels), "harvested_ids": len(harvested),
                              "entities_raw": raw_e, "entities": kg.n_entities, "relations_raw": raw_r,
                              "relations": kg.n_relations, "entities_from_file": from_file}
    where = rel_path(data.labels, root) if exists(data.labels) else "labels.tsv"
    share_e = raw_e / kg.n_entities if kg.n_entities else 0.0
    share_r = raw_r / kg.n_relations if kg.n_relations else 0.0
    text = (f"{raw_e:,} of {kg.n_entities:,} KG entities ({pct(raw_e, kg.n_entities)}) and {raw_r:,} of "
            f"{kg.n_relations:,} relations ({pct(raw_r, kg.n_relations)}) have no label and are rendered as their raw id "
            f"(labels file: {len(file_labels):,} ids; harvested from the benchmark: {len(harvested):,})")
    if share_e > RAW_LABELS_OK or share_r > RAW_LABELS_OK:
        report.add("warning", where, text + ": a raw id is one token no question contains and shortens its documents, "
                   "so BM25 scores and rankings change (SPEC §1.2, §2.1)", "labels.coverage")
    else:
        report.add("info", where, text, "labels.coverage")


