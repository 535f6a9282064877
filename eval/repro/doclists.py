"""Each question's ranked documents, as integer codes shared by every run (SPEC §8's document identity).

A document is the stable TREC document id of SPEC §3.4 (:func:`eval.trec.docid`,
``Q42|P31|Q5|1994``), in one document space shared by every run compared, as
``tempbench export-trec`` writes the runs (:func:`eval.trec.question_run`: the
evidence in rank order, repeats of a whole item removed). The codes of
:class:`DocLists` are the positions of the ids in the sorted list of every id
of every run, so two runs' codes are equal exactly when their ids are, and
sort like the ids (what Kendall's tau Union needs, :mod:`eval.repro.ktu`).

Speed: a question whose evidence is the plain run-file form (dict items in the
document space, string ``s, r, o``, point-in-time numeric years) and whose gold
triples are point-in-time has its ids made straight from its items; any other
question (5-lists, windows, mixed spaces, odd values) goes through the
Evaluation's own resolution and :func:`eval.trec.question_run`, which covers
every rule of the export. The two give the same ids (tested).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval.trec import SEPARATOR, escape, question_run
from tempbench_core.errors import EvidenceError
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, format_span

_NUMBER = (int, float)
_KEYS = {"id": ID_KEYS, "label": LABEL_KEYS}


@dataclass
class DocLists:
    """The ranked documents of every question of one run.

    Attributes
    ----------
    codes:
        ``(questions, width)`` ``int64``: row ``i`` holds question ``i``'s
        document codes in rank order, padded with ``-1``.
    lengths:
        The number of documents of each question.
    """

    codes: np.ndarray
    lengths: np.ndarray


@dataclass
class ParsedRun:
    """One run's evidence read for its document ids: per question, plain items or the resolved question."""

    plain: list[list[tuple[str, tuple[str, str, str], float]] | None]
    resolved: dict[int, Any]
    spaces: dict[str, int]


def _gold_spaces(question: Mapping[str, Any], key: str) -> set[str] | None:
    """The spaces every gold triple carries (``{key}`` when forced), or ``None`` when the gold is not plain."""
    gold = question.get("S_star")
    if type(gold) is not list:
        return None
    spaces = {"id", "label"}
    for triple in gold:
        if type(triple) is not dict:
            return None
        ts, te = triple.get("t_start"), triple.get("t_end")
        if type(ts) not in _NUMBER or type(te) not in _NUMBER or float(ts) != float(te):
            return None
        spaces &= {s for s, names in _KEYS.items() if all(k in triple for k in names)}
    if not spaces:
        return None
    return {key} if key != "auto" else spaces


def plain_items(question: Mapping[str, Any], evidence: Any, key: str) -> list[tuple[str, tuple[str, str, str], float]] | None:
    """``[(space, (s, r, o), year)]`` of evidence in the plain run-file form, else ``None`` (see the module docstring).

    ``space`` is the one SPEC §3.1 ``key`` compares the item in (under
    ``auto``: ids when the item and the gold carry them, else labels).
    """
    if type(evidence) is not list:
        return None
    gold = _gold_spaces(question, key)
    if gold is None:
        return None
    out = []
    first = "id" if "id" in gold else "label"
    names = _KEYS[first]
    other = "label" if first == "id" and "label" in gold else None
    for item in evidence:
        if type(item) is not dict:
            return None
        ts = item.get("t_start")
        # a window (or NaN: never equal to itself) takes the export's rules for windows
        if ts != item.get("t_end") or (type(ts) is not float and type(ts) is not int):
            return None
        te = item["t_end"]
        if type(te) is not float and type(te) is not int:
            return None
        space, keys = first, names
        if keys[0] not in item or keys[1] not in item or keys[2] not in item:
            if other is None:
                return None
            space, keys = other, _KEYS[other]
            if keys[0] not in item or keys[1] not in item or keys[2] not in item:
                return None
        s, r, o = item[keys[0]], item[keys[1]], item[keys[2]]
        if type(s) is not str or type(r) is not str or type(o) is not str:
            return None
        out.append((space, (s, r, o), float(ts)))
    # one space per question: then the gold classes are keyed on it and no hit is renamed (eval.trec)
    if out and other is not None and len({space for space, _, _ in out}) > 1:
        return None
    return out


def parse_run(evaluation: Any, records: Sequence[Mapping[str, Any] | None], key: str) -> ParsedRun:
    """Read one scored run's evidence for its document ids.

    Parameters
    ----------
    evaluation:
        The run's :class:`eval.scoring.Evaluation` (its questions, and its
        resolution of any question that is not plain).
    records:
        The run's record of each of ``evaluation.questions`` (``None``: absent, an empty retrieval).
    key:
        The SPEC §3.1 key option the run was scored under.
    """
    plain: list[Any] = []
    resolved: dict[int, Any] = {}
    spaces = {"id": 0, "label": 0}
    for i, (question, record) in enumerate(zip(evaluation.questions, records, strict=True)):
        evidence = record.get("evidence", []) if record is not None else []
        items = plain_items(question, evidence, key)
        if items is None:
            res = evaluation.resolved[i]
            resolved[i] = res
            for item in res.items:
                spaces[item.space] += 1
        else:
            for space, _, _ in items:
                spaces[space] += 1
        plain.append(items)
    return ParsedRun(plain, resolved, spaces)


def run_space(run: ParsedRun, key: str) -> str | None:
    """The one space a run's items were compared in (``key`` when forced; ``None``: no item at all).

    A run comparing items in both spaces is an error: a document must have one
    id (the rule of :func:`eval.trec.document_space`).
    """
    if key in ("id", "label"):
        return key
    ids, labels = run.spaces["id"], run.spaces["label"]
    if ids and labels:
        raise EvidenceError(
            f"a run compares {ids:,} evidence items on ids and {labels:,} on labels (SPEC §3.1 key='auto'), but a "
            "document must have one id in every run (SPEC §8): give --key label or --key id")
    return "id" if ids else ("label" if labels else None)


def one_space(spaces: Mapping[str, str | None]) -> str | None:
    """The space shared by every run (name -> :func:`run_space`); runs in different spaces are an error."""
    used = {space for space in spaces.values() if space is not None}
    if len(used) > 1:
        by = {s: [name for name, v in spaces.items() if v == s] for s in sorted(used)}
        raise EvidenceError(
            "the runs compare their evidence in different key spaces (SPEC §3.1 key='auto'): "
            + "; ".join(f"{s}: {', '.join(names)}" for s, names in by.items())
            + ". A document must have one id in every run (SPEC §8): give --key label (when every run carries "
              "labels, e.g. a published baseline of rendered lines) or --key id")
    return used.pop() if used else None


class DocidMaker:
    """:func:`eval.trec.docid` of point-in-time items, each escaped ``s``/``r``/``o`` and year made once."""

    def __init__(self) -> None:
        self.parts: dict[str, str] = {}
        self.years: dict[float, str] = {}

    def __call__(self, srot: tuple[str, str, str], year: float) -> str:
        parts = self.parts
        out = []
        for value in srot:
            part = parts.get(value)
            if part is None:
                part = parts[value] = escape(value)
            out.append(part)
        span = self.years.get(year)
        if span is None:
            span = self.years[year] = format_span(year, year)
        out.append(span)
        return SEPARATOR.join(out)


def run_docids(run: ParsedRun, space: str, maker: DocidMaker | None = None) -> list[list[str]]:
    """Each question's document ids in rank order, repeats removed (SPEC §8, as the TREC export writes them)."""
    maker = maker or DocidMaker()
    out = []
    for i, items in enumerate(run.plain):
        if items is None:
            out.append(question_run(run.resolved[i], space).docs)
            continue
        docs = []
        seen = set()
        for _, srot, year in items:
            whole = (srot, year)
            if whole in seen:
                continue
            seen.add(whole)
            docs.append(maker(srot, year))
        out.append(docs)
    return out


def encode(runs: Sequence[Sequence[Sequence[str]]]) -> list[DocLists]:
    """:class:`DocLists` of several runs over the same questions, codes shared (the sorted ids' positions)."""
    vocabulary = sorted({doc for run in runs for docs in run for doc in docs})
    code = {doc: i for i, doc in enumerate(vocabulary)}
    out = []
    for run in runs:
        lengths = np.fromiter((len(docs) for docs in run), dtype=np.int64, count=len(run))
        width = int(lengths.max()) if len(lengths) else 0
        codes = np.full((len(run), width), -1, dtype=np.int64)
        flat = np.fromiter((code[doc] for docs in run for doc in docs), dtype=np.int64, count=int(lengths.sum()))
        rows = np.repeat(np.arange(len(run)), lengths)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(run) else np.zeros(0, dtype=np.int64)
        cols = np.arange(len(flat)) - np.repeat(starts, lengths)
        codes[rows, cols] = flat
        out.append(DocLists(codes, lengths))
    return out
