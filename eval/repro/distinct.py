"""The runs of one configuration read, resolved and scored together, each distinct record once.

An original and its reproduction mostly hold byte-identical records. Here the
runs of one configuration (a *group*) are read line by line as bytes
(:func:`tempbench_core.runlines.run_lines`), side by side; a line is decoded
into the fields read in its question's key space
(:func:`tempbench_core.runlines.parse_line`) and made its
row (:func:`eval.plain_table.line_row`) once, and a line equal to another
run's line at the same place shares that row.
The distinct rows make one evidence table (:func:`eval.plain_table.rows_table`),
scored by the kernels (:func:`eval.repro.values.run_values`) and written as
document ids (:func:`eval.trec.run_document_codes`) once. Each run's values
are then its rows' values: the kernels' per-question values depend on the
question's row alone (cumulative sums along a row, per-row counts,
per-question closed forms), not on the other rows of the table.

Whatever this fast path does not cover (another SPEC §1.4 form, a gzip
stream it cannot read, an unknown id, a record resolve must read item by
item, mixed key spaces, any problem to report) is prepared run by run as
before (:func:`eval.repro.job.prepare`), with the same results and messages.

Document codes are the positions of the ids in the sorted ids of the group's
runs: they sort like the ids and are equal exactly when the ids are, all that
KTU and RBO read of them, and those compare a configuration's two runs only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from eval.plain_table import NO_ITEMS, Classes, PlainRow, line_row, plain_row, question_classes, rows_table
from eval.repro.doclists import DocLists
from eval.repro.values import RunValues
from eval.trec import DocumentCodes, run_document_codes
from tempbench_core.errors import EvidenceError, TempbenchError
from tempbench_core.runlines import RunLine, parse_line, run_lines, same_record


@dataclass
class Source:
    """One run's records in its order: their ids and rows (one row object per distinct record of the group)."""

    qids: list[Any]
    rows: list[PlainRow]


class Reader:
    """Reads a group's records into :class:`~eval.plain_table.PlainRow` rows, each distinct record once.

    A record of a file is its line's bytes (:meth:`files`); a record given in
    memory, its object. ``None`` for a record the fast path leaves to the
    run-by-run path: one read_run would not keep as it is, an id not in the
    benchmark, items resolve must read one by one.
    """

    def __init__(self, questions: Sequence[Mapping[str, Any]], key: str, shared: dict[Any, Any] | None) -> None:
        self.by_id = {q["id"]: q for q in questions}
        self.key, self.shared = key, shared
        self.known: dict[Any, PlainRow | None] = {}
        self._missing = object()
        # a line is decoded first in the space the previous line's question read (at the start: ids, unless the
        # key says labels), so a benchmark of one space decodes each line once whichever space it is
        self._first, self._second = ("label", "id") if key == "label" else ("id", "label")

    def _row(self, question: Mapping[str, Any] | None, record: Mapping[str, Any] | None) -> PlainRow | None:
        if question is None:
            return None  # select names the unknown id
        # what eval.repro.job.prepare reads of a record (none: an empty retrieval)
        evidence = record.get("evidence", []) if record is not None else []
        ties = (record.get("cutoff_ties") or []) if record is not None else []
        return plain_row(question, evidence, ties, self.key, self.shared, run_form=True)

    def files(self, paths: Sequence[str | Path]) -> list[list[PlainRow | None] | None]:
        """The rows of run files read side by side, line by line; ``None`` for a file read_run must read.

        A line equal to an earlier file's line at the same place is that
        line's row (the runs of a configuration list the questions in the same
        order: a byte comparison, no hashing of every line), and so is a line
        that decodes to the same record (:func:`~tempbench_core.runlines.same_record`:
        another tool's bytes for the same values). Only the lines being
        compared are held.
        """
        streams: dict[int, Iterator[bytes]] = {}
        rows: list[list[PlainRow | None] | None] = []
        for i, path in enumerate(paths):
            try:
                lines = run_lines(path)
            except TempbenchError:
                lines = None  # read_run reports it
            rows.append(None if lines is None else [])
            if lines is not None:
                streams[i] = lines
        while streams:
            at: dict[int, bytes] = {}
            for i, lines in list(streams.items()):
                try:
                    at[i] = next(lines)
                except StopIteration:
                    del streams[i]
                except TempbenchError:  # a gzip stream broken off: read_run reports it
                    del streams[i]
                    rows[i] = None
            decoded: dict[int, RunLine] = {}  # the records decoded at this place, by file
            for i, line in at.items():
                mine = rows[i]
                if mine is None:
                    continue
                row = self._missing
                for j, other in at.items():
                    if j == i:
                        break
                    theirs = rows[j]
                    if theirs is not None and other == line:
                        row = theirs[-1]
                        break
                if row is self._missing:
                    read = self._decode(line)
                    row = None
                    if read is not None:
                        rec, question, classes = read
                        decoded[i] = rec
                        row = self._same_as_decoded(rec, decoded, rows)
                        if row is self._missing:
                            row = line_row(question, rec, classes)
                mine.append(row)  # type: ignore[arg-type]
        return rows

    def _same_as_decoded(self, rec: RunLine, decoded: Mapping[int, RunLine],
                         rows: Sequence[list[PlainRow | None] | None]) -> PlainRow | None | object:
        """The row of an earlier file's record at this place equal to ``rec`` in every field read, else missing."""
        for j, theirs in decoded.items():
            held = rows[j]
            if theirs is not rec and held is not None and same_record(theirs, rec):
                return held[-1]
        return self._missing

    def _decode(self, line: bytes) -> tuple[RunLine, Mapping[str, Any], Classes] | None:
        """One run line decoded in the key space its question's items are read in, with the question and its classes."""
        rec = parse_line(line, self._first) or parse_line(line, self._second)
        question = None if rec is None else self.by_id.get(rec.id)
        if question is None:
            return None  # select names the unknown id
        try:
            classes = question_classes(question, self.key, self.shared)
        except EvidenceError:
            return None
        if rec.space != classes[1]:  # type: ignore[union-attr]
            self._first, self._second = classes[1], rec.space  # type: ignore[union-attr]
            rec = parse_line(line, classes[1])
        return None if rec is None else (rec, question, classes)

    def record(self, qid: Any, record: Mapping[str, Any]) -> PlainRow | None:
        """The row of a record given in memory under ``qid``."""
        key = ("object", qid, id(record))
        if key not in self.known:
            self.known[key] = self._row(self.by_id.get(qid), record)
        return self.known[key]

    def empty(self, question: Mapping[str, Any]) -> PlainRow | None:
        """The row of a question a run lacks (an empty retrieval)."""
        key = ("missing", question["id"])
        if key not in self.known:
            self.known[key] = self._row(question, None)
        return self.known[key]


def file_sources(paths: Sequence[str | Path], reader: Reader) -> list[Source | None]:
    """Run files' records as rows, read side by side (:meth:`Reader.files`); ``None`` for a file read run by run."""
    out: list[Source | None] = []
    for rows in reader.files(paths):
        if rows is None or any(row is None for row in rows):
            out.append(None)
            continue
        qids = [row.question["id"] for row in rows]  # type: ignore[union-attr]
        # read_run names a duplicate
        out.append(Source(qids, rows) if len(set(qids)) == len(qids) else None)  # type: ignore[arg-type]
    return out


def mapping_source(run: Mapping[Any, Mapping[str, Any]], reader: Reader) -> Source | None:
    """A run given as ``{question id: record}``, or ``None`` when it is prepared on its own."""
    rows = [reader.record(qid, rec) for qid, rec in run.items()]
    if any(row is None for row in rows):
        return None
    return Source(list(run), rows)  # type: ignore[arg-type]


@dataclass
class Chosen:
    """One run's scored questions (SPEC §3.2, :func:`eval.scoring.select`'s rules) and their rows of the group table."""

    qids: list[Any]
    rows: np.ndarray
    reproduced: bool


def choose(source: Source, split_questions: Sequence[Mapping[str, Any]] | None, reader: Reader
           ) -> tuple[list[Any], list[PlainRow]] | None:
    """The run's questions and rows: the split's questions (a missing one an empty retrieval), else the run's own."""
    if split_questions is None:
        return list(source.qids), source.rows
    where = {qid: i for i, qid in enumerate(source.qids)}
    rows = []
    for q in split_questions:
        i = where.get(q["id"])
        row = source.rows[i] if i is not None else reader.empty(q)
        if row is None:
            return None
        rows.append(row)
    return [q["id"] for q in split_questions], rows


def row_spaces(table: Any) -> tuple[np.ndarray, np.ndarray]:
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
    # every id once: the union's (distinct already, run_document_codes), then those only the other lists hold
    names = list(union.names) if union is not None else []
    if lists:
        known = set(names)
        for docs in lists.values():
            for d in docs:
                for name in d:
                    if name not in known:
                        known.add(name)
                        names.append(name)
    # an id's code is its rank among the sorted ids
    code = np.empty(len(names), dtype=np.int64)
    code[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    out = {}
    if union is not None and union_rows:
        width = int(union.lengths.max()) if len(union.lengths) else 0
        matrix = np.full((len(union.lengths), width), -1, dtype=np.int64)
        matrix[np.repeat(np.arange(len(union.lengths)), union.lengths), _within(union.lengths)] = code[union.flat]
        for slot, rows in union_rows.items():
            lengths = union.lengths[rows]
            out[slot] = DocLists(matrix[rows, :int(lengths.max()) if len(lengths) else 0], lengths.astype(np.int64))
    position = dict(zip(names, code.tolist(), strict=True)) if lists else {}
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


def score_group(sources: Mapping[Any, Source], split_questions: Sequence[Mapping[str, Any]] | None, reader: Reader,
                score: Callable[[Any, np.ndarray | None], RunValues], reproduced: Callable[[Any], bool]
                ) -> GroupTable | None:
    """Resolve and score the rows of ``sources`` (slot -> run) at once; ``None`` where the runs need their own path.

    ``score(table, tie_rows)``: the per-row values, with the tie ranges of the
    rows ``tie_rows`` (sorted; ``None``: of none); ``reproduced(slot)``: whether
    the run's tie ranges are read. A row no such run reads is scored without
    its cut-off ties, which only tie ranges read. Runs left out of the result (a
    key-space mix, a split question the fast path cannot read) are prepared on
    their own by the caller.
    """
    index: dict[int, int] = {}
    rows: list[PlainRow] = []
    chosen = {}
    for slot, source in sources.items():
        got = choose(source, split_questions, reader)
        if got is None:
            continue
        at = []
        for row in got[1]:
            i = index.get(id(row))
            if i is None:
                i = index[id(row)] = len(rows)
                rows.append(row)
            at.append(i)
        chosen[slot] = Chosen(got[0], np.array(at, dtype=np.int64), reproduced(slot))
    if not chosen:
        return None
    read_ties = np.zeros(len(rows), dtype=bool)
    for c in chosen.values():
        read_ties[c.rows] |= c.reproduced
    rows = [row if keep else row._replace(extra=NO_ITEMS) for row, keep in zip(rows, read_ties.tolist(), strict=True)]
    table = rows_table(rows, reader.key, reader.shared)
    if table is None:
        return None
    on_ids, on_labels = row_spaces(table)
    spaces = {slot: chosen_space(on_ids, on_labels, c.rows, reader.key) for slot, c in chosen.items()}
    chosen = {slot: c for slot, c in chosen.items() if spaces[slot] is not False}
    used = {spaces[slot] for slot in chosen} - {None}
    if not chosen or len(used) > 1:
        return None  # one_space names the runs of each space
    try:
        docs = run_document_codes(table, used.pop() if used else "id")
    except TempbenchError:
        return None  # question_run's message, run by run
    values = score(table, np.flatnonzero(read_ties) if any(c.reproduced for c in chosen.values()) else None)
    return GroupTable(values, docs, chosen, {slot: spaces[slot] for slot in chosen})  # type: ignore[misc]
