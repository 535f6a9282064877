"""TREC run and qrels form of scored runs (SPEC §3.4), for trec_eval, ranx, ir_measures.

The files are meant to be compared *across* runs (paired tests, fusion,
pooling, ``trec_eval -q``), so a document id is a key of the evidence item that
every run of the same KG shares, not a position.

Document ids are :mod:`eval.docids`' (``S|R|O|T``, shared by every run of a KG).

Qrels
-----
Per question, one line per relevant gold triple of SPEC §3.4 (an ``S_star``
triple valid at ``t_query``), relevance 1, under the id of its valid
time-version: for a point-in-time gold triple valid at ``t_query`` (every
gold triple of a benchmark built on the point-in-time KG of SPEC §1.1) that is
the row of year ``t_query``, exactly the id the retriever's item carries; for a
gold triple with a window, its own window (a class with several valid members
prefers a point-in-time one, else the first in ``S_star`` order). One id per
triple keeps
``|rel|`` the denominator of recall and ideal DCG. Questions with an empty
``rel`` have no qrels line: TREC tools then leave them out of the average, as
SPEC §3.4 does.

Runs, and what SPEC §3.4 rules TREC files cannot express
---------------------------------------------------------
Each question's returned list is written in returned order with the score
``L - i`` for the ``i``-th written item (0-based) of ``L``: strictly decreasing
integers. TREC tools re-sort a run by score and break ties by document id
(trec_eval, ranx, ir_measures), which with the retriever's own BM25 scores (full
of ties, SPEC §3.5) would reorder the list; distinct decreasing scores leave
nothing to break. The ``rank`` column is ``i + 1``.

SPEC §3.4 scores the list deduplicated on the whole item, first occurrence
kept, and counts a triple once. The export follows it:

* a repeat of a whole item is *left out* of the run file (a TREC run cannot
  hold one document twice, and SPEC says a repeat neither helps nor pushes the
  later items down, which is what leaving it out does);
* a second *valid* copy of an already-hit triple (the same ``s, r, o`` with
  another window containing ``t_query``) stays at its rank under its own id,
  which the qrels do not list: it counts as a non-relevant document, as in SPEC
  (leaving it out would move the later items up one rank, which SPEC does not);
  a wrong-time copy likewise;
* a hit whose window differs from the qrels time of its triple (a window
  containing ``t_query`` other than that of the qrels line; possible only when
  items or gold carry windows, never on the point-in-time KG) is written under
  the qrels id of its triple, because SPEC §3.4 judges it that relevant triple;
  a later copy whose own id is that qrels id takes the hit's own id instead.

With these rules recall@k, nDCG@k and MRR computed by ir_measures, ranx or
``trec_eval -c`` from the files equal ``tempbench score`` exactly (the test
suite checks ir_measures and ranx on random runs with ties, repeats and
copies). A question with relevant triples and an empty retrieval has no run
line; it counts 0 in ir_measures, in ranx with ``make_comparable=True`` and in
``trec_eval -c`` (plain ``trec_eval`` averages over the queries of the run only).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from eval.docids import SEPARATOR, docid, escape, escape_all
from eval.evidence import SPACES, EvidenceTable, Item, Resolved, resolve
from eval.keyspace import DEFAULT_KEY, gold_classes
from eval.relevance import group_ids, hit_matrix
from tempbench_core.arrays import unique_inverse
from tempbench_core.atomic import write_text
from tempbench_core.errors import EvidenceError, RunMismatchError, TempbenchError
from tempbench_core.memo import kept_for
from tempbench_core.schema import format_span, valid_at
from tempbench_core.text import terminal_text

#: File names of :func:`write_export`: the shared qrels and the run suffix.
QRELS_NAME = "qrels.txt"
RUN_SUFFIX = ".trec"

_STR = frozenset((str,))


def item_docid(item: Item, space: str) -> str:
    """The id of an evidence item whose question has document space ``space``."""
    return docid(item.srot, item.t_start, item.t_end, None if item.space == space else item.space)


def relevant_docids(res: Resolved, space: str | None = None) -> dict[int, str]:
    """Gold class -> its qrels id, for the relevant classes of SPEC §3.4 (see the module docstring).

    ``space`` defaults to the question's key space (``res.gold_space``).
    """
    space = space or res.gold_space
    primary = res.gold_space
    out: dict[int, str] = {}
    for c in (c for c, valid in enumerate(res.class_valid) if valid):
        keys = res.class_keys[c]
        if space not in keys:
            raise EvidenceError(f"question {res.qid!r}: gold triple {keys[primary]!r} carries no {space} keys")
        valid = [g for g in res.gold if g.keys.get(primary) == keys[primary] and valid_at(g.t_start, g.t_end, res.tq)]
        chosen = next((g for g in valid if g.t_start == g.t_end), valid[0])
        out[c] = docid(keys[space], chosen.t_start, chosen.t_end)
    return out


def question_qrels(res: Resolved, space: str | None = None) -> dict[str, int]:
    """``docid -> 1`` for each relevant triple of one question (empty when ``rel`` is)."""
    return {doc: 1 for doc in relevant_docids(res, space).values()}


@dataclass
class QuestionRun:
    """One question's written list: ids in rank order, and what the SPEC rules changed."""

    docs: list[str]
    hits: int = 0  # SPEC §3.4 hits among them
    left_out: int = 0  # repeats of a whole item
    renamed: int = 0  # hits written under their triple's qrels id


def question_run(res: Resolved, kept: Sequence[bool], hits: Sequence[bool], space: str | None = None) -> QuestionRun:
    """The documents of one question in returned order (module docstring: SPEC §3.4 rules).

    ``kept``: per returned item, not a repeat of an earlier whole item;
    ``hits``: per returned item, a SPEC §3.4 hit (:func:`eval.relevance.hit_matrix`).
    """
    space = space or res.gold_space
    items = [it for it, keep in zip(res.items, kept, strict=True) if keep]
    flags = [hit for hit, keep in zip(hits, kept, strict=True) if keep]
    ids = [item_docid(it, space) for it in items]
    renamed = 0
    if any(flags):
        qrels_id = relevant_docids(res, space)
        for i, (it, hit) in enumerate(zip(items, flags, strict=True)):
            target = qrels_id[it.cls] if hit else ids[i]
            if target != ids[i]:
                # Only a later valid copy of the same triple can carry the
                # qrels id itself (an earlier one would have been the hit).
                for j in range(i + 1, len(ids)):
                    if ids[j] == target:
                        ids[j] = ids[i]
                        break
                ids[i] = target
                renamed += 1
    seen: dict[str, int] = {}
    for i, doc in enumerate(ids):
        if doc in seen:
            raise EvidenceError(
                f"question {res.qid!r}: evidence items {items[seen[doc]].whole!r} and {items[i].whole!r} would share the "
                f"TREC document id {doc!r} (s/r/o values that are not strings?)"
            )
        seen[doc] = i
    return QuestionRun(ids, hits=sum(flags), left_out=len(res.items) - len(items), renamed=renamed)


def question_runs(table: EvidenceTable, space: str | None = None) -> list[tuple[Resolved, QuestionRun]]:
    """Every question of a run with its written list (:func:`question_run`), in question order."""
    matrix = hit_matrix(table)
    kept = (matrix.dedup_pos >= 0).tolist()
    hits = matrix.hit.tolist()
    start = table.items.start.tolist()
    out = []
    for i in range(table.n):
        res = table.question(i)
        lo, hi = start[i], start[i + 1]
        out.append((res, question_run(res, kept[lo:hi], hits[lo:hi], space)))
    return out


def scored(docs: Sequence[str]) -> dict[str, float]:
    """``docid -> score`` with strictly decreasing scores ``L - i`` (rank order kept by every TREC tool)."""
    length = len(docs)
    return {doc: float(length - i) for i, doc in enumerate(docs)}


class DocumentCodes(NamedTuple):
    """A run's written document ids as codes: ``names[flat[j]]`` is the ``j``-th id, question after question.

    ``names`` holds each id once; ``lengths[i]`` is question ``i``'s number of ids.
    """

    names: list[str]
    flat: np.ndarray
    lengths: np.ndarray

    def lists(self) -> list[list[str]]:
        """Each question's ids, as :func:`question_run` writes them."""
        docs = np.array(self.names, dtype=object)[self.flat].tolist() if len(self.flat) else []
        bounds = np.concatenate([[0], np.cumsum(self.lengths)]).tolist()
        return [docs[bounds[i]:bounds[i + 1]] for i in range(len(self.lengths))]


def run_documents(table: EvidenceTable, space: str) -> list[list[str]]:
    """Each question's written document ids in rank order (:func:`question_run`'s ``docs``), for a whole run."""
    return run_document_codes(table, space).lists()


def _plain_questions(table: EvidenceTable, space: str, hit: np.ndarray) -> np.ndarray:
    """The questions whose ids are their items' own (see :func:`run_document_codes`)."""
    items = table.items
    code = SPACES.index(space)
    foreign = np.bincount(items.q[items.space != code], minlength=table.n) > 0
    windowed_hit = np.bincount(items.q[hit & (items.ts != items.te)], minlength=table.n) > 0
    plain = ~foreign & ~windowed_hit & np.array([gs == space for gs in table.gold_space], dtype=bool)
    if not set(map(type, table.values)) <= _STR:
        plain[:] = False  # str() of other values could make two items one id: question_run reports it
    # a hit's triple must have a point-in-time valid time-version (its qrels time is then the item's)
    rows = np.flatnonzero(plain & (np.bincount(items.q[hit], minlength=table.n) > 0)).tolist()
    point = np.zeros(len(table.class_valid), dtype=bool)
    cls_start = table.cls_start.tolist()
    for i in rows:
        point[cls_start[i]:cls_start[i + 1]] = _point_classes(table, i, space)
    # (a hit's gid is its class's: a hit is a gold triple)
    off_point = np.bincount(items.q[hit & ~point[np.maximum(items.gid, 0)]], minlength=table.n) > 0
    plain[rows] = ~off_point[rows]
    return plain


def _point_classes(table: EvidenceTable, i: int, space: str) -> list[bool]:
    """Per gold class of question ``i``: a member keyed like it in ``space`` is a point in time at ``t_query``."""
    question = table.questions[i]

    def make() -> list[bool]:
        tq = float(table.tq[i])
        gold = table.gold(i)
        _, class_keys, _ = gold_classes(gold, table.gold_space[i], tq)
        return [any(g.keys.get(space) == keys.get(space) and g.t_start == g.t_end == tq for g in gold)
                for keys in class_keys]

    return kept_for(table.shared, ("point classes", question.get("id"), table.key, table.gold_space[i], space),
                    question, make)


def _spans(ts: np.ndarray, te: np.ndarray) -> list[str]:
    """``format_span`` of each ``(t_start, t_end)``, made once per distinct pair of float bit patterns."""
    starts, start_of = unique_inverse(ts.view(np.int64))
    ends, end_of = unique_inverse(te.view(np.int64))
    pairs, inverse = unique_inverse(start_of * max(len(ends), 1) + end_of)
    first, second = np.divmod(pairs, max(len(ends), 1))
    texts = [format_span(a, b) for a, b in zip(starts[first].view(np.float64).tolist(),
                                               ends[second].view(np.float64).tolist(), strict=True)]
    return np.array(texts, dtype=object)[inverse].tolist() if len(texts) else []


def run_document_codes(table: EvidenceTable, space: str) -> DocumentCodes:
    """:func:`run_documents` as :class:`DocumentCodes`, each distinct id made once.

    Most questions are written as their items are: every item compared in
    ``space``, classes keyed on it, and every hit a point-in-time item of a
    triple with a point-in-time time-version valid at ``t_query`` (then no hit
    takes another id). Their ids are made from the table's columns, once per
    distinct whole item; any other question goes through :func:`question_run`.
    """
    items = table.items
    matrix = hit_matrix(table)
    kept = matrix.dedup_pos >= 0
    plain = _plain_questions(table, space, matrix.hit)
    ids, firsts = group_ids([items.s[kept], items.r[kept], items.o[kept], items.ts[kept], items.te[kept]])
    sel = np.flatnonzero(kept)[firsts]
    s_codes, r_codes, o_codes = items.s[sel], items.r[sel], items.o[sel]
    # each value escaped once (a run repeats its entities and relations on many items)
    is_used = np.zeros(len(table.values), dtype=bool)
    for codes in (s_codes, r_codes, o_codes):
        is_used[codes] = True
    used = np.flatnonzero(is_used)  # sorted and distinct
    escaped = np.empty(len(table.values), dtype=object)
    escaped[used] = escape_all([v if isinstance(v, str) else str(v) for v in (table.values[c] for c in used.tolist())])
    names = list(map(SEPARATOR.join, zip(escaped[s_codes].tolist(), escaped[r_codes].tolist(),
                                          escaped[o_codes].tolist(), _spans(items.ts[sel], items.te[sel]),
                                          strict=True)))
    # equal ids (never from distinct plain items, but question_run's may repeat them) share one code
    code = dict(zip(names, range(len(names)), strict=True))
    if len(code) == len(names):
        flat = ids  # every name distinct: its code is its group's number
    else:
        code = {name: i for i, name in enumerate(dict.fromkeys(names))}
        flat = np.fromiter(map(code.__getitem__, names), dtype=np.int64, count=len(names))[ids]
    lengths = np.bincount(items.q[kept], minlength=table.n)
    if not plain.all():
        bounds = np.concatenate([[0], np.cumsum(lengths)]).tolist()
        pieces = [flat[bounds[i]:bounds[i + 1]] for i in range(table.n)]
        for i in np.flatnonzero(~plain).tolist():
            lo, hi = int(items.start[i]), int(items.start[i + 1])
            docs = question_run(table.question(i), kept[lo:hi].tolist(), matrix.hit[lo:hi].tolist(), space).docs
            pieces[i] = np.fromiter((code.setdefault(doc, len(code)) for doc in docs), dtype=np.int64, count=len(docs))
            lengths[i] = len(docs)
        flat = np.concatenate(pieces) if pieces else flat
    return DocumentCodes(list(code), flat, lengths)


def trec_run_and_qrels(table: EvidenceTable, space: str | None = None
                       ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    """``(run, qrels)`` of a run as nested dicts ``qid -> docid -> score / relevance``.

    ``space`` is the document space of every question (default: each
    question's own key space). A question without returned items has no run
    entry; one with an empty ``rel`` has no qrels entry.
    """
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for res, written in question_runs(table, space):
        qid = str(res.qid)
        rel = question_qrels(res, space)
        if rel:
            qrels[qid] = rel
        if written.docs:
            run[qid] = scored(written.docs)
    return run, qrels


def _format_score(score: float) -> str:
    score = float(score)
    return str(int(score)) if math.isfinite(score) and score.is_integer() else repr(score)


def format_run(run: Mapping[str, Mapping[str, float]], tag: str = "tempbench") -> str:
    """TREC run lines ``qid Q0 docid rank score tag``, by decreasing score within a question."""
    lines = []
    for qid, docs in run.items():
        for rank, (doc, score) in enumerate(sorted(docs.items(), key=lambda kv: -kv[1]), start=1):
            lines.append(f"{qid} Q0 {doc} {rank} {_format_score(score)} {tag}")
    return "\n".join(lines) + ("\n" if lines else "")


def format_qrels(qrels: Mapping[str, Mapping[str, int]]) -> str:
    """TREC qrels lines ``qid 0 docid relevance``."""
    lines = [f"{qid} 0 {doc} {rel}" for qid, docs in qrels.items() for doc, rel in docs.items()]
    return "\n".join(lines) + ("\n" if lines else "")


def is_token(text: str) -> bool:
    """Whether ``text`` is one non-empty field of a whitespace-separated TREC line."""
    return bool(text) and text.split() == [text]


def document_space(runs: Sequence[EvidenceTable], key: str = DEFAULT_KEY) -> str:
    """The one key space of every document id of an export (SPEC §3.1).

    ``key='id'``/``'label'`` forces it. Under ``'auto'`` it is the space the
    items were compared in (ids when both the gold and the items carry them);
    with no item at all, ids when every gold triple carries them. Items of the
    runs compared in both spaces are an error: the same row would get two ids.
    """
    if key in ("id", "label"):
        return key
    count = {"id": 0, "label": 0}
    for table in runs:
        by_space = np.bincount(table.items.space.astype(np.int64), minlength=2)
        for code, name in enumerate(SPACES):
            count[name] += int(by_space[code])
    if count["id"] and count["label"]:
        raise EvidenceError(
            f"the runs compare {count['id']} evidence items on ids and {count['label']} on labels (SPEC §3.1 key='auto'); "
            "document ids shared by every run need one key space: give --key id or --key label"
        )
    if count["id"] or count["label"]:
        return "id" if count["id"] else "label"
    gold_ids = all("id" in g.keys for table in runs for i in range(table.n) for g in table.gold(i))
    return "id" if gold_ids else "label"


@dataclass
class TrecExport:
    """Shared qrels and one run per input, ready to write (:func:`build_export`)."""

    space: str
    qrels: dict[str, dict[str, int]]
    runs: dict[str, dict[str, dict[str, float]]]
    n_questions: int
    empty_rel: int = 0
    stats: dict[str, dict[str, int]] = field(default_factory=dict)  # run -> lines, questions, left_out, renamed, empty


def build_export(questions: Sequence[Mapping[str, Any]], runs: Mapping[str, EvidenceTable],
                 key: str = DEFAULT_KEY) -> TrecExport:
    """Qrels shared by every run, and each run's documents, in one document space.

    Parameters
    ----------
    questions:
        The exported benchmark questions, in output order. Their qrels come
        from the gold alone (resolved in the document space without evidence),
        so they do not depend on any run.
    runs:
        Run name -> the same questions resolved with the run's evidence under
        ``key`` (:func:`~eval.evidence.resolve`, same order).
    key:
        The SPEC §3.1 option the runs were resolved under.

    Raises
    ------
    TempbenchError
        A question id that is empty or holds whitespace (it could not be one
        TREC field), two ids with the same text, or runs mixing key spaces.
    """
    space = document_space(list(runs.values()), key)
    gold_table = resolve(questions, [[] for _ in questions], None, key=space)
    gold = [gold_table.question(i) for i in range(gold_table.n)]
    qids = []
    for res in gold:
        qid = str(res.qid)
        if not is_token(qid):
            raise RunMismatchError(
                f"question id {res.qid!r} is empty or contains whitespace: a TREC line separates its fields by "
                "whitespace, so the question cannot be written (rename it in the benchmark and the runs)"
            )
        qids.append(qid)
    if len(set(qids)) != len(qids):
        dup = next(q for q in qids if qids.count(q) > 1)
        raise RunMismatchError(f"two questions have the id {dup!r} once written as text; TREC ids must be distinct")
    qrels: dict[str, dict[str, int]] = {}
    for qid, res in zip(qids, gold, strict=True):
        rel = question_qrels(res, space)
        if rel:
            qrels[qid] = rel
    out = TrecExport(space=space, qrels=qrels, runs={}, n_questions=len(qids), empty_rel=len(qids) - len(qrels))
    for name, table in runs.items():
        if table.n != len(gold):
            raise RunMismatchError(f"run {name!r} has {table.n} questions, the qrels {len(gold)}")
        run: dict[str, dict[str, float]] = {}
        stat = {"lines": 0, "questions": 0, "left_out": 0, "renamed": 0, "empty": 0}
        for qid, (_, q) in zip(qids, question_runs(table, space), strict=True):
            judged = qrels.get(qid, {})
            # The qrels come from the gold alone, the hits from the run: they must meet exactly.
            if sum(doc in judged for doc in q.docs) != q.hits:
                raise AssertionError(f"run {name!r}, question {qid!r}: the relevant ids are not the SPEC §3.4 hits")
            stat["left_out"] += q.left_out
            stat["renamed"] += q.renamed
            if not q.docs:
                stat["empty"] += 1
                continue
            run[qid] = scored(q.docs)
            stat["lines"] += len(q.docs)
            stat["questions"] += 1
        out.runs[name] = run
        out.stats[name] = stat
    return out


def run_file_name(name: str) -> str:
    """The ``.trec`` file of run ``name``: a control character in the name (from a file name) is written as its escape."""
    return terminal_text(name) + RUN_SUFFIX


def write_export(out_dir: str | Path, export: TrecExport, tags: Mapping[str, str] | None = None) -> list[Path]:
    """Write ``DIR/qrels.txt`` and ``DIR/<name>.trec`` per run, atomically; return the paths (qrels first).

    ``tags`` maps a run name to its TREC tag (default: the escaped name, which
    ranx reads as the run's name).
    """
    out_dir = Path(out_dir)
    tags = dict(tags or {})
    paths = [out_dir / QRELS_NAME]
    texts = [format_qrels(export.qrels)]
    for name, run in export.runs.items():
        tag = tags.get(name) or escape(name)
        if not is_token(tag):
            raise TempbenchError(f"TREC tag {tag!r} must be one non-empty field without whitespace")
        paths.append(out_dir / run_file_name(name))
        texts.append(format_run(run, tag))
    for path, text in zip(paths, texts, strict=True):
        write_text(path, text)
    return paths
