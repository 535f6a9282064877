"""The question browser's data: one JSON blob of what ``tempbench show`` shows, per configuration (SPEC §7).

The blob holds every question of any run (in benchmark order) once, and per
configuration one entry per question: each hop's stage (an index into
``stages``, :data:`eval.explain.STAGES`), the anchor, the pool per hop, the
ranked evidence and the cut-off ties. Evidence lines are stored once, in a
string table numbered in order of first use; an evidence row is ``[line
number, score to 4 decimals, mark + 4 * tie group + 8 * hop]`` (marks in
:data:`MARKS`).

Made in parts: :func:`browser_part` makes one configuration's share (or a
span of its questions) with its own string table, so parts can be made in
other processes; :class:`BrowserBlob` merges them in configuration order
into the blob one pass would make (:func:`browser_data`). :func:`browser_json`
is the blob as ``report.html`` embeds it. The parts of one span under
several configurations, made in one process, can share a string table
(:class:`SharedStrings`): most of their strings are the same lines, then
numbered and sent once.

A part's entries travel as JSON text already (a million evidence rows as
Python lists cost far more to pickle, unpickle and walk than their text):
the text has a hole (a NUL byte, which JSON text never holds raw) wherever a
string number goes, and the part lists those numbers in its own table. The
merge fills the holes with the shared table's numbers; the blob holds each
configuration's entries as one :class:`RawJSON`, written as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, repeat
from operator import eq
from typing import Any, NamedTuple

import numpy as np
import orjson

from eval.explain import STAGE_HELP, STAGES, Explainer, Explanation
from eval.question_detail import (
    ALL,
    MARKS,
    ItemSource,
    anchor_view,
    evidence_sources,
    item_line,
    pool_view,
    question_negatives,
    run_anchors,
    triple_view,
)
from eval.report.tables import ordered
from tempbench_core.jsonl import dumps_fragment_bytes, dumps_json, dumps_strict_bytes, loads_fast
from tempbench_core.schema import format_year

#: A stage's code in the blob: its index in ``stages``.
_STAGE_CODE = {stage: i for i, stage in enumerate(STAGES)}

#: Where a string number goes in a part's entries text: raw NUL, which JSON escapes inside a string.
_HOLE_BYTES = b"\x00"
_HOLE = orjson.Fragment(_HOLE_BYTES)


class RawJSON(bytes):
    """JSON text the blob holds as it is (a configuration's entries): :func:`browser_json` writes it verbatim."""

    __slots__ = ()


def _triple_text(t: Mapping[str, Any] | None) -> str:
    if not t:
        return ""
    parts = [t.get(k) if t.get(k) is not None else t.get(f"{k}_id") for k in ("s", "r", "o")]
    return " | ".join(str(p) for p in parts) + f" | {t.get('t')}"


class _Strings(dict):
    """A string table: each distinct string stored once in the blob, numbered in order of first use.

    ``table[text]`` is its number; the strings in number order are ``list(table)``.
    """

    def __call__(self, text: str) -> int:
        return self.setdefault(text, len(self))

    def numbers(self, texts: Iterable[str]) -> list[int]:
        """``[self(text) for text in texts]``, in C: one look-up per text.

        ``map`` takes the table's length just before ``setdefault`` stores a
        new text, so that text is numbered as :meth:`__call__` numbers it.
        """
        return list(map(self.setdefault, texts, map(len, repeat(self))))


class SharedStrings(_Strings):
    """A string table the parts of one span share across configurations, named by ``key`` in the merge.

    Each part then lists only the strings new to the table, and its holes
    hold the table's numbers. Its parts must be merged in the order they were
    made (configurations in order, as :class:`BrowserBlob` takes them), and
    ``key`` must name no other shared table of the blob.
    """

    def __init__(self, key: Hashable) -> None:
        super().__init__()
        self.key = key


class _ItemColumns(NamedTuple):
    """One question's evidence (or cut-off ties) in the blob, column by column, its scores not yet rounded."""

    lines: list[int]
    scores: list[Any]
    codes: list[int]


def _item_columns(source: ItemSource, strings: _Strings) -> _ItemColumns:
    """Line numbers, exact scores and codes of the evidence rows (the module docstring's blob format).

    The code is ``mark + 4 * tie group + 8 * hop`` (mark by its index in
    :data:`MARKS`, hop 0 when none), as
    :meth:`~eval.question_detail.ItemSource.rows` gives them; the lines enter
    the string table in item order. Made by whole columns (C loops), then the
    few marked items patched.
    """
    items = source.items
    if set(map(type, items)) <= _DICT_ONLY:
        scores = list(map(dict.get, items, repeat("score")))
        lines = list(map(dict.get, items, repeat("line")))
    else:
        scores = [item.get("score") for item in items]
        lines = [item.get("line") for item in items]
    if not set(map(type, lines)) <= _STR_ONLY:
        lines = [line if type(line) is str else item_line(item) for item, line in zip(items, lines, strict=True)]
    numbers = strings.numbers(lines)
    group = source.group_score
    if group is ALL:
        codes = [4] * len(items)
    elif group is None:
        codes = [0] * len(items)
    else:
        codes = [4 * bool(tie) for tie in map(eq, scores, repeat(group))]
    for j, (mark, hop) in source.marked().items():
        codes[j] += mark + 8 * (hop or 0)
    return _ItemColumns(numbers, scores, codes)


def _shown_scores(scores: list[Any]) -> list[Any]:
    """``[None if s is None else round(float(s), 4) for s in scores]``: scores as shown (4 decimals).

    Python's ``round`` converts through decimal text, one score at a time; a
    part's float scores are rounded together instead (:func:`_round4`).
    """
    if not set(map(type, scores)) <= _FLOAT_OR_NONE:
        return [None if score is None else round(float(score), 4) for score in scores]
    return _round4(scores)


_DICT_ONLY = frozenset((dict,))
_STR_ONLY = frozenset((str,))
_FLOAT_OR_NONE = frozenset((float, type(None)))
#: Where ``x * 1e4`` is within this of a half-integer, :func:`_round4` asks ``round`` itself.
_TIE_MARGIN = 1e-6
#: ... and where ``|x * 1e4|`` reaches this (its rounding error could then reach the margin).
_SCALED_LIMIT = 1e9


def _round4(values: list[float | None]) -> list[float | None]:
    """``[None if v is None else round(v, 4) for v in values]``, the same floats, computed on arrays.

    ``round(v, 4)`` is the float nearest to ``N / 10**4``, ``N`` the integer
    nearest to the exact ``v * 10**4`` (ties to even). Below
    :data:`_SCALED_LIMIT` the product ``v * 1e4`` is off the exact one by less
    than ``2**-23``, so away from a half-integer its ``rint`` is ``N``, and
    ``N / 1e4`` (both exact, one correctly rounded division) is that nearest
    float. The few values near a tie, large or not finite (or ``None``) go to
    ``round``.
    """
    x = np.array(values, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = x * 1e4
        whole = np.rint(scaled)
        safe = (np.abs(scaled) < _SCALED_LIMIT) & (np.abs(np.abs(scaled - whole) - 0.5) > _TIE_MARGIN)
    out = (whole / 1e4).tolist()
    for i in np.flatnonzero(~safe).tolist():
        value = values[i]
        out[i] = None if value is None else round(value, 4)
    return out


def browser_data(
    questions: Sequence[Mapping[str, Any]],
    runs: Mapping[str, Mapping[Any, Mapping[str, Any]]],
    explainers: Mapping[str, Explainer],
    progress: Callable[[Iterable[Any], int, str], Iterable[Any]] | None = None,
) -> dict[str, Any]:
    """The browser's JSON blob: every question in any run, and per configuration what ``show`` shows.

    Parameters
    ----------
    questions:
        Benchmark records (their order is the browser's order).
    runs:
        Configuration -> ``{question id: run record}``.
    explainers:
        Configuration -> :class:`~eval.explain.Explainer` of that run.
    progress:
        Optional ``progress(iterable, total, description)`` wrapper.

    The blob is :func:`merge_parts` of one :func:`browser_part` per
    configuration, so the parts can also be made in other processes.
    """
    names = [n for n in ordered(runs) if n in explainers]
    chosen = browser_questions(questions, {n: runs[n] for n in names})
    rows_from = row_sources(chosen, names, runs)
    parts = {name: browser_part(chosen, name, runs[name], explainers[name], rows_from[name], progress) for name in names}
    return merge_parts(chosen, names, parts)


def browser_questions(questions: Sequence[Mapping[str, Any]],
                      runs: Mapping[str, Mapping[Any, Any]]) -> list[Mapping[str, Any]]:
    """The browser's questions: those of any run, in benchmark order."""
    wanted = {qid for run in runs.values() for qid in run}
    return [q for q in questions if q["id"] in wanted]


def row_sources(chosen: Sequence[Mapping[str, Any]], names: Sequence[str],
                runs: Mapping[str, Mapping[Any, Any]]) -> dict[str, list[int]]:
    """Per configuration, the questions whose row it describes: those no earlier configuration has."""
    done: set[int] = set()
    out: dict[str, list[int]] = {}
    for name in names:
        run = runs[name]
        mine = [j for j, q in enumerate(chosen) if j not in done and q["id"] in run]
        done.update(mine)
        out[name] = mine
    return out


@dataclass(frozen=True)
class PartSpan:
    """The questions a :func:`browser_part` covers and what it shares with the other configurations' parts of them.

    ``positions``: only these positions of the browser's questions (``None``:
    all); the parts of consecutive spans, in order, merge into what one part
    of them all gives. ``shared``: a cache of what does not depend on the
    configuration, kept by the caller across configurations (the
    replacements and what the evidence marks are decided on:
    :func:`~eval.question_detail.evidence_sources`). ``strings``: a table
    shared with the parts of these positions under other configurations, made
    before this one; a part's ``strings`` are then only those new to it, and
    its holes hold the shared table's numbers.
    """

    positions: range | None = None
    shared: dict[Any, Any] | None = None
    strings: SharedStrings | None = None


def browser_part(
    chosen: Sequence[Mapping[str, Any]],
    name: str,
    run: Mapping[Any, Mapping[str, Any]],
    explainer: Explainer,
    rows_for: Sequence[int],
    progress: Callable[[Iterable[Any], int, str], Iterable[Any]] | None = None,
    span: PartSpan | None = None,
) -> dict[str, Any]:
    """One configuration's share of the blob, with its own string table (see :func:`merge_parts`).

    A dict: ``strings`` (the part's table), ``entries`` (their JSON text with
    holes, see the module docstring; :func:`part_entries` reads it),
    ``holes`` (the string numbers that fill them, in order), ``stages`` (per
    entry its hops' stage codes, ``None`` where the run lacks the question),
    ``rows`` (``[position, question row]``), ``settings`` and ``table``
    (``None``, or with ``strings``: the shared table's key and its size
    before this part).

    ``rows_for``: the positions in ``chosen`` whose question row this part
    makes (:func:`row_sources`). ``span``: the positions of ``chosen`` this
    part covers and what it shares with the other configurations' parts of
    them (:class:`PartSpan`; default: every position, nothing shared).

    It shows what :func:`~eval.question_detail.question_detail` gathers,
    made from the same views but only those the blob holds.
    """
    span = span or PartSpan()
    shared, strings = span.shared, span.strings
    table = _Strings() if strings is None else strings
    first = len(table)
    wanted_rows = set(rows_for)
    qrows: list[list[Any]] = []
    entries: list[Any] = []
    settings: dict[str, Any] | None = None
    positions = range(len(chosen)) if span.positions is None else span.positions
    items: Iterable[tuple[int, Mapping[str, Any]]] = ((j, chosen[j]) for j in positions)
    if progress is not None:
        items = progress(items, len(positions), f"report.html {name}")

    # every entry's evidence and ties, made into rows at the end, once the part's scores are rounded together
    columns: list[tuple[dict[str, Any], list[int], _ItemColumns, _ItemColumns]] = []
    stages: list[list[int] | None] = []
    for j, q in items:
        record = run.get(q["id"])
        if record is None:
            entries.append(None)
            stages.append(None)
            continue
        ex = explainer.explain(q, record)
        if j in wanted_rows:
            qrows.append([j, _question_row(q, ex, shared)])
        made = _entry(explainer, ex, q, record, shared, table)
        columns.append((made.entry, made.texts, made.evidence, made.ties))
        entries.append(made.entry)
        stages.append(made.entry["st"])
        if settings is None:
            settings = made.settings
    shown = iter(_shown_scores([score for _, _, ev, ti in columns for made in (ev, ti) for score in made.scores]))
    # the string numbers in the order the text holds them: per entry the anchor's, the evidence's, the ties'
    holes: list[int] = []
    for entry, anchor_texts, ev, ti in columns:
        holes += anchor_texts
        for key, made in (("ev", ev), ("ti", ti)):
            entry[key] = list(zip(repeat(_HOLE), islice(shown, len(made.scores)), made.codes, strict=False))
            holes += made.lines
    # the entries without the list's brackets, so that consecutive parts join with a comma; every value
    # left is one orjson writes as json would (ints, floats, bools, None, strings), the source aside
    return {"strings": list(islice(table, first, None)), "entries": dumps_fragment_bytes(entries)[1:-1],
            "holes": np.array(holes, dtype=np.int64), "stages": stages, "rows": qrows, "settings": settings,
            "table": None if strings is None else (strings.key, first)}


class _Entry(NamedTuple):
    """One question's entry of a part (its evidence and ties added later), the string numbers of its anchor's
    texts, its evidence's and ties' columns, and the settings it was explained under."""

    entry: dict[str, Any]
    texts: list[int]
    evidence: _ItemColumns
    ties: _ItemColumns
    settings: dict[str, Any]


def _entry(explainer: Explainer, ex: Any, q: Mapping[str, Any], record: Mapping[str, Any],
           shared: dict[Any, Any] | None, table: _Strings) -> _Entry:
    """The :class:`_Entry` of question ``q`` explained as ``ex``, its strings numbered in ``table``."""

    def text(value: Any) -> int | None:
        return None if value is None else table(str(value))

    anchor_idx, gold_idx = run_anchors(explainer, ex, q, record)
    a = anchor_view(explainer, record, anchor_idx, gold_idx, ex.read.gold)
    p = pool_view(explainer, q, anchor_idx, ex.read.tq)
    # strings numbered in order of first use: the anchor's four texts, then the evidence, then the ties
    texts = [text(a["id"]), text(a["label"]), text(a["gold_id"]), text(a["gold_label"])]
    source = a["source"]
    # a source other than a string is written as the whole blob's writer would (orjson cannot write all)
    anchor = [source if type(source) is str else orjson.Fragment(dumps_strict_bytes(source)),
              *[None if i is None else _HOLE for i in texts], a["hit"], a["in_kg"]]
    evidence, ties = evidence_sources(ex, q, record, shared)
    entry: dict[str, Any] = {
        "st": [_STAGE_CODE[h.stage] for h in ex.hops],
        "a": anchor,
        "p": [[p["caps"][h], p["eligible"][h], p["rows"][h], 1 if p["cap_hit"][h] else 0] for h in range(p["hops"])],
        "pr": [p["pool_rows"], p["candidates"]],
    }
    return _Entry(entry, [i for i in texts if i is not None], _item_columns(evidence, table),
                  _item_columns(ties, table), {"rule": a["rule"], "k": explainer.config.k})


def part_entries(part: Mapping[str, Any]) -> list[Any]:
    """A :func:`browser_part`'s entries as Python values, numbering strings in the part's own (or shared) table."""
    return loads_fast(b"[" + _filled(part["entries"], part["holes"]) + b"]")


def _filled(text: bytes, numbers: np.ndarray) -> bytes:
    """``text`` with its holes filled, in order, with ``numbers`` (written as JSON integers)."""
    if not len(numbers):
        return text
    pieces = text.split(_HOLE_BYTES)
    if len(pieces) != len(numbers) + 1:
        raise ValueError(f"{len(pieces) - 1} holes for {len(numbers)} string numbers")
    # orjson writes the integers; joined with the pieces in between (all C loops)
    out: list[bytes] = [b""] * (2 * len(pieces) - 1)
    out[::2] = pieces
    out[1::2] = dumps_fragment_bytes(numbers)[1:-1].split(b",")
    return b"".join(out)


def _question_row(q: Mapping[str, Any], ex: Explanation, shared: dict[Any, Any] | None) -> dict[str, Any]:
    """A question's row of the blob: what it asks, its gold chain and its ``S_stale``/``S_dist`` replacements."""
    answer = q.get("answer")
    t_query = q.get("t_query")
    _, replacements, _ = question_negatives(q, ex.read.gold, shared)
    return {
        "id": str(q.get("id")), "split": q.get("split"), "q": q.get("question"),
        "tq": None if t_query is None else format_year(t_query),
        "a": answer if isinstance(answer, (str, int, float)) else dumps_json(answer, indent=None),
        "op": q.get("operator_type"), "cx": q.get("complexity"),
        "hops": [_triple_text(triple_view(h.triple)) for h in ex.hops],
        "neg": [[variant, _triple_text(p["replaced"]), _triple_text(p["replacement"])]
                for variant, pairs in replacements.items() for p in pairs],
    }


def merge_parts(chosen: Sequence[Mapping[str, Any]], names: Sequence[str],
                parts: Mapping[str, Mapping[str, Any] | Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The blob from one :func:`browser_part` per configuration, in configuration order.

    A configuration may also give a list of parts of consecutive spans (in
    ``chosen`` order), which counts as the one part they make together.
    :class:`BrowserBlob` does the work, one configuration at a time.
    """
    blob = BrowserBlob(chosen, names)
    for name in names:
        blob.add(name, [parts[name]] if isinstance(parts[name], Mapping) else parts[name])
    return blob.finish()


class BrowserBlob:
    """The browser's blob, merged one configuration at a time, in ``names`` order (:func:`merge_parts`).

    Each part's strings enter the shared table in the part's order of first
    use, so the table, and every index into it, is what one pass over the
    configurations in order would make. A configuration can be added as soon
    as its run is made (``tempbench reproduce`` does so while the runs are
    scored).

    Each configuration's entries become one :class:`RawJSON` text: the parts'
    texts with their holes filled, joined. A part made with a
    :class:`SharedStrings` table lists only the strings new to that table:
    the blob keeps the table's numbers so far (those of the parts before it,
    already merged), which its holes index.
    """

    def __init__(self, chosen: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
        self.names = list(names)
        self.number = _Strings()
        self.qrows: list[dict[str, Any]] = [{} for _ in chosen]
        self.per_config: dict[str, RawJSON] = {}
        self.settings: dict[str, dict[str, Any]] = {}
        self.shared: dict[Hashable, np.ndarray] = {}  # a shared table's key -> the blob's number of each of its strings

    def add(self, name: str, parts: Sequence[Mapping[str, Any]]) -> None:
        """Merge configuration ``name``'s parts (consecutive spans, in order); configurations come in ``names`` order."""
        if len(self.per_config) >= len(self.names) or self.names[len(self.per_config)] != name:
            raise ValueError(f"configuration {name!r} added out of order (expected {self.names[len(self.per_config):]})")
        texts: list[bytes] = []
        for part in parts:
            # new strings numbered at their first use, parts in order
            new = np.array(self.number.numbers(part["strings"]), dtype=np.int64)
            if part.get("table") is not None:
                key, first = part["table"]
                known = self.shared.get(key, new[:0])
                if first != len(known):
                    raise ValueError(f"a part of shared table {key!r} starts at string {first}, not {len(known)}: "
                                     "parts merged out of the order they were made")
                new = self.shared[key] = np.concatenate((known, new))
            if part["entries"]:
                texts.append(_filled(part["entries"], new[part["holes"]]))
            for j, row in part["rows"]:
                self.qrows[j] = row
            if part["settings"] is not None and name not in self.settings:
                self.settings[name] = part["settings"]
        self.per_config[name] = RawJSON(b"[" + b",".join(texts) + b"]")

    def finish(self) -> dict[str, Any]:
        """The blob (every configuration added)."""
        missing = [n for n in self.names if n not in self.per_config]
        if missing:
            raise ValueError(f"configurations not added: {missing}")
        return {
            "configs": list(self.names),
            "stages": list(STAGES),
            "stageHelp": [STAGE_HELP[s] for s in STAGES],
            "marks": list(MARKS),
            "strings": list(self.number),
            "questions": self.qrows,
            "runs": self.per_config,
            "settings": self.settings,
        }


def _json_for_script(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` left to parse as HTML.

    A :class:`RawJSON` value of a dict (at any depth of dicts) is written as it is.
    """
    return _script_json(data).decode("utf-8")


def _script_json(data: Any) -> bytes:
    """:func:`_json_for_script` as UTF-8 bytes."""
    # compact; a NaN or infinity (a score, an answer) as null, which JSON.parse reads. Escaped as
    # UTF-8 bytes (these three characters are single bytes there).
    try:
        raw = dumps_strict_bytes(_raw_as(data, orjson.Fragment))
    except TypeError:
        # the writer fell back to json, which cannot write a fragment: the same bytes from the values read back
        raw = dumps_strict_bytes(_raw_as(data, loads_fast))
    return raw.replace(b"&", b"\\u0026").replace(b"<", b"\\u003c").replace(b">", b"\\u003e")


def _raw_as(data: Any, convert: Callable[[bytes], Any]) -> Any:
    """``data`` with each :class:`RawJSON` value of a dict (at any depth of dicts) converted."""
    if type(data) is RawJSON:
        return convert(bytes(data))
    if isinstance(data, Mapping):
        return {key: _raw_as(value, convert) for key, value in data.items()}
    return data


def browser_json(data: Mapping[str, Any] | None) -> str:
    """The browser's blob as the page embeds it (:func:`render_html`'s ``data_json``)."""
    return browser_json_bytes(data).decode("utf-8")


def browser_json_bytes(data: Mapping[str, Any] | None) -> bytes:
    """:func:`browser_json` as UTF-8 bytes: what ``report.html`` holds, never decoded when only written."""
    return _script_json(data if data is not None else {"configs": [], "questions": [], "runs": {}})
