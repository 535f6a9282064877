"""Each question's ranked documents, as integer codes shared by every run (SPEC §8's document identity).

A document is the stable TREC document id of SPEC §3.4 (:func:`eval.docids.docid`,
``Q42|P31|Q5|1994``), in one document space shared by every run compared, as
``tempbench export-trec`` writes the runs (:func:`eval.trec.run_documents`:
the evidence in rank order, repeats of a whole item removed). The codes of
:class:`DocLists` are the positions of the ids in the sorted list of every id
of every run, so two runs' codes are equal exactly when their ids are, and
sort like the ids (what Kendall's tau Union needs, :mod:`eval.repro.ktu`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from eval.evidence import SPACES, EvidenceTable
from tempbench_core.errors import EvidenceError


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


def same_lists(orig: np.ndarray, orig_len: np.ndarray, rep: np.ndarray, rep_len: np.ndarray) -> np.ndarray:
    """Per question: its two padded code rows hold one list of distinct documents.

    Where they do, KTU and RBO have closed forms (:mod:`eval.repro.ktu`,
    :mod:`eval.repro.rbo`): a reproduction mostly repeats its original's lists.
    """
    width = min(orig.shape[1], rep.shape[1])
    same = (orig_len == rep_len) & (orig_len <= width)
    same[same] = (orig[same, :width] == rep[same, :width]).all(axis=1)
    ranked = np.sort(orig[same, :width], axis=1)
    same[same] = ~((ranked[:, 1:] == ranked[:, :-1]) & (ranked[:, 1:] >= 0)).any(axis=1)
    return same


def run_space(table: EvidenceTable, key: str) -> str | None:
    """The one space a run's items were compared in (``key`` when forced; ``None``: no item at all).

    A run comparing items in both spaces is an error: a document must have one
    id (the rule of :func:`eval.trec.document_space`).
    """
    if key in ("id", "label"):
        return key
    ids, labels = np.bincount(table.items.space.astype(np.int64), minlength=2).tolist()
    if ids and labels:
        raise EvidenceError(
            f"a run compares {ids:,} evidence items on ids and {labels:,} on labels (SPEC §3.1 key='auto'), but a "
            "document must have one id in every run (SPEC §8): give --key label or --key id")
    return SPACES[0] if ids else (SPACES[1] if labels else None)


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
