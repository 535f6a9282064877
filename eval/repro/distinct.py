"""The runs of one configuration read, resolved and scored together, each distinct record once.

An original and its reproduction mostly hold byte-identical records. Here the
runs of one configuration (a *group*) are read line by line as bytes
(:func:`tempbench_core.runlines.run_lines`), each distinct line is parsed
once, and every distinct ``(question, record)`` is one row of a single
evidence table (:func:`eval.plain_table.plain_table`), scored by the kernels
(:func:`eval.repro.values.run_values`) and written as document ids
(:func:`eval.trec.run_document_codes`) once. Each run's values are then its
rows' values: the kernels' per-question values depend on the question's row
alone (cumulative sums along a row, per-row counts, per-question closed
forms), not on the other rows of the table.

Whatever this fast path does not cover (another SPEC §1.4 form, a gzip
stream it cannot read, an unknown id, a record resolve must read item by
item, mixed key spaces, any problem to report) is prepared run by run as
before (:func:`eval.repro.job.prepare`), with the same results and messages.

Document codes are the positions of the ids in the sorted ids of the group's
runs: they sort like the ids and are equal exactly when the ids are, all that
KTU and RBO read of them, and those compare a configuration's two runs only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eval.plain_table import plain_table
from eval.repro.doclists import DocLists
from eval.repro.values import RunValues
from eval.trec import DocumentCodes, run_document_codes
from tempbench_core.errors import TempbenchError
from tempbench_core.runlines import as_run_record, parse_line, plain_records, run_lines


@dataclass
class Source:
    """One run's records in its order: ids, records, and a key per record equal for equal records of the group."""

    qids: list[Any]
    records: list[Mapping[str, Any]]
    keys: list[Any]
    #: False: its items are read_run's to check (the records of a file)
    checked: bool = True


@dataclass
class Chosen:
    """One run's scored questions (SPEC §3.2 via :func:`eval.scoring.select`'s rules) as rows of the group table."""

    qids: list[Any]
    rows: np.ndarray
    reproduced: bool


def file_sources(paths: Mapping[Any, str | Path]) -> dict[Any, Source]:
    """The runs of ``paths`` (slot -> run file) that the fast path reads; each distinct line parsed once."""
    lines: dict[Any, list[bytes]] = {}
    for slot, path in paths.items():
        try:
            got = run_lines(path)
        except TempbenchError:
            continue  # read run by run, which reports it
        if got is not None:
            lines[slot] = got
    index: dict[bytes, int] = {}
    parsed: list[dict[str, Any] | None] = []
    keys: dict[Any, list[int]] = {}
    for slot, raw in lines.items():
        at = keys[slot] = []
        for line in raw:
            k = index.get(line)
            if k is None:
                k = index[line] = len(parsed)
                parsed.append(parse_line(line))
            at.append(k)
    out = {}
    for slot, at in keys.items():
        records = [parsed[k] for k in at]
        if any(rec is None for rec in records):
            continue
        qids = [rec["id"] for rec in records]  # type: ignore[index]
        if len(set(qids)) != len(qids):
            continue  # read_run names the duplicate
        # the items are checked where they are read (plain_table's run_form), the others' in choose
        out[slot] = Source(qids, [as_run_record(rec) for rec in records], at, checked=False)  # type: ignore[arg-type]
    return out


def mapping_source(run: Mapping[Any, Mapping[str, Any]]) -> Source:
    """A run given as ``{question id: record}``: a record is shared only as the same object."""
    records = list(run.values())
    return Source(list(run), records, [("object", id(rec)) for rec in records])


class Rows:
    """The distinct ``(question, record)`` rows of a group, in order of first use."""

    def __init__(self) -> None:
        self.index: dict[Any, int] = {}
        self.questions: list[Mapping[str, Any]] = []
        self.evidence: list[Any] = []
        self.ties: list[Any] = []

    def add(self, question: Mapping[str, Any], record: Mapping[str, Any] | None, key: Any) -> int:
        row_key = (question["id"], key)
        at = self.index.get(row_key)
        if at is None:
            at = self.index[row_key] = len(self.questions)
            self.questions.append(question)
            # what eval.repro.job.prepare reads of a record (a missing record: an empty retrieval)
            self.evidence.append(record.get("evidence", []) if record is not None else [])
            self.ties.append((record.get("cutoff_ties") or []) if record is not None else [])
        return at


def choose(source: Source, by_id: Mapping[Any, Mapping[str, Any]], split_questions: Sequence[Mapping[str, Any]] | None,
           rows: Rows, reproduced: bool) -> Chosen | None:
    """The run's questions as rows (``split_questions``: the split's, else the run's own).

    ``None``: an unknown id, or a record left out that read_run would not keep as it is.
    """
    if any(qid not in by_id for qid in source.qids):
        return None  # select reports it
    if split_questions is None:
        at = [rows.add(by_id[qid], rec, key) for qid, rec, key in zip(source.qids, source.records, source.keys,
                                                                       strict=True)]
        return Chosen(list(source.qids), np.array(at, dtype=np.int64), reproduced)
    where = {qid: i for i, qid in enumerate(source.qids)}
    at = []
    for q in split_questions:
        i = where.pop(q["id"], None)
        at.append(rows.add(q, None, None) if i is None else rows.add(q, source.records[i], source.keys[i]))
    if not source.checked and where and not plain_records([source.records[i] for i in where.values()]):
        return None  # a record outside the split that read_run would normalise or refuse
    return Chosen([q["id"] for q in split_questions], np.array(at, dtype=np.int64), reproduced)


def row_spaces(table: Any, key: str) -> tuple[np.ndarray, np.ndarray]:
    """Per row, its evidence items compared on ids and on labels (what :func:`eval.repro.doclists.run_space` counts)."""
    items = table.items
    on_ids = np.bincount(items.q[items.space == 0], minlength=table.n)
    on_labels = np.bincount(items.q[items.space == 1], minlength=table.n)
    return on_ids, on_labels


def chosen_space(on_ids: np.ndarray, on_labels: np.ndarray, rows: np.ndarray, key: str) -> str | None | bool:
    """:func:`~eval.repro.doclists.run_space` of one run's rows; ``False`` where it would raise."""
    if key in ("id", "label"):
        return key
    ids, labels = int(on_ids[rows].sum()), int(on_labels[rows].sum())
    if ids and labels:
        return False
    return "id" if ids else ("label" if labels else None)


def values_of(values: RunValues, rows: np.ndarray, ties: bool) -> RunValues:
    """One run's per-question values: its rows' (tie ranges only where read)."""
    return RunValues({n: v[rows] for n, v in values.values.items()},
                     {n: v[rows] for n, v in values.tie_min.items()} if ties else {},
                     {n: v[rows] for n, v in values.tie_max.items()} if ties else {})


def group_codes(union: DocumentCodes | None, union_rows: Mapping[Any, np.ndarray],
                lists: Mapping[Any, list[list[str]]]) -> dict[Any, DocLists]:
    """:class:`DocLists` of the group's runs, coded by the sorted ids of them all (module docstring).

    ``union_rows``: slot -> its rows of ``union`` (the group table's ids);
    ``lists``: slot -> the ids of a run prepared on its own.
    """
    names = set(union.names) if union is not None else set()
    for docs in lists.values():
        for d in docs:
            names.update(d)
    position = {name: i for i, name in enumerate(sorted(names))}
    out = {}
    if union is not None and union_rows:
        rank = np.fromiter(map(position.__getitem__, union.names), dtype=np.int64, count=len(union.names))
        width = int(union.lengths.max()) if len(union.lengths) else 0
        matrix = np.full((len(union.lengths), width), -1, dtype=np.int64)
        matrix[np.repeat(np.arange(len(union.lengths)), union.lengths), _within(union.lengths)] = rank[union.flat]
        for slot, rows in union_rows.items():
            lengths = union.lengths[rows]
            out[slot] = DocLists(matrix[rows, :int(lengths.max()) if len(lengths) else 0], lengths.astype(np.int64))
    for slot, docs in lists.items():
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=len(docs))
        matrix = np.full((len(docs), int(lengths.max()) if len(docs) else 0), -1, dtype=np.int64)
        matrix[np.repeat(np.arange(len(docs)), lengths), _within(lengths)] = np.fromiter(
            (position[d] for row in docs for d in row), dtype=np.int64, count=int(lengths.sum()))
        out[slot] = DocLists(matrix, lengths)
    return out


def _within(lengths: np.ndarray) -> np.ndarray:
    """Each element's position within its row, for rows of these lengths laid end to end."""
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64) if len(lengths) else lengths
    return np.arange(int(lengths.sum())) - np.repeat(starts, lengths)


@dataclass
class GroupTable:
    """The group's table scored once: per-row values and document codes, and each run's rows and space."""

    values: RunValues
    docs: DocumentCodes
    chosen: dict[Any, Chosen]
    spaces: dict[Any, str | None]


def score_group(sources: Mapping[Any, Source], questions: Sequence[Mapping[str, Any]], split_questions: Any,
                score: Callable[[Any, bool], RunValues], key: str, shared: dict[Any, Any] | None,
                reproduced: Callable[[Any], bool]) -> GroupTable | None:
    """Resolve and score the rows of ``sources`` (slot -> run) at once; ``None`` where a run needs its own path.

    ``score(table, ties)``: the per-row values; ``reproduced(slot)``: whether the
    run's tie ranges are read. Runs left out of the result (an unknown id, a
    key-space mix) are prepared on their own by the caller.
    """
    by_id = {q["id"]: q for q in questions}
    rows = Rows()
    chosen = {}
    for slot, source in sources.items():
        got = choose(source, by_id, split_questions, rows, reproduced(slot))
        if got is not None:
            chosen[slot] = got
    if not chosen:
        return None
    table = plain_table(rows.questions, rows.evidence, rows.ties, key, shared, run_form=True)
    if table is None:
        return None
    on_ids, on_labels = row_spaces(table, key)
    spaces = {slot: chosen_space(on_ids, on_labels, c.rows, key) for slot, c in chosen.items()}
    chosen = {slot: c for slot, c in chosen.items() if spaces[slot] is not False}
    used = {spaces[slot] for slot in chosen} - {None}
    if not chosen or len(used) > 1:
        return None  # one_space names the runs of each space
    try:
        docs = run_document_codes(table, used.pop() if used else "id")
    except TempbenchError:
        return None  # question_run's message, run by run
    values = score(table, any(c.reproduced for c in chosen.values()))
    return GroupTable(values, docs, chosen, {slot: spaces[slot] for slot in chosen})  # type: ignore[misc]
