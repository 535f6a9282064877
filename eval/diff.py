"""Diff a run against published baselines or another run (SPEC §6.3).

Per question, the two evidence lists are compared as multisets of items and as
sequences:

- ``missing``: items the baseline has and the run lacks;
- ``extra``: items the run has and the baseline lacks;
- ``changed``: a missing and an extra item with the same ``(s, r, o)`` but a
  different time, paired up and reported once as a changed time (so a changed
  year is named as such, not as one missing plus one extra);
- ``reordered``: items both lists have, whose order differs: each with its
  1-based rank in the run and in the baseline.

A question is reproduced *exactly* when both lists are equal item by item.
The exact-match share is over the baseline's questions (a question the run
lacks is not reproduced).

Items are compared in one *space* chosen for the whole file: ``id``
(``s_id, r_id, o_id, t_start, t_end``) when every item on both sides carries
ids, else ``label`` (``s, r, o, t_start, t_end``), else ``line`` (the rendered
evidence line, which is what a baseline of rendered lines allows). A file
whose questions carry different spaces (one question's items only ids,
another's only labels: SPEC §1.4 allows either) has no such space; with
``auto`` each question is then compared in the first space its items on both
sides allow, in the same order (:data:`PER_QUESTION`).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any

from eval.evidence import resolve
from eval.keyspace import DEFAULT_KEY, KEY_CHOICES
from eval.metric_tables import MetricBaseline, flatten_scores, resolve_slice
from eval.scoring import ScoreOptions, score_run
from eval.trp_ccr import aggregate, coverage_by
from eval.trp_ccr import rows as question_rows
from tempbench_core.errors import EvidenceError, TempbenchError
from tempbench_core.runfile import RunRecords
from tempbench_core.schema import format_span
from tempbench_core.text import terminal_text

SPACES = ("id", "label", "line")
#: The ``space`` of a diff whose questions are each compared in their own (module docstring).
PER_QUESTION = "per question"
_FIELDS = {"id": ("s_id", "r_id", "o_id"), "label": ("s", "r", "o")}


def _has(item: Mapping[str, Any], keys: Iterable[str]) -> bool:
    return all(item.get(k) is not None for k in keys)


def _in_space(items: Sequence[Mapping[str, Any]], space: str) -> bool:
    """Every item carries what ``space`` compares: its three keys and both times, or an evidence line."""
    if space == "line":
        return all(it.get("line") is not None for it in items)
    return all(it.get("t_start") is not None and it.get("t_end") is not None and _has(it, _FIELDS[space])
               for it in items)


def choose_space(run_items: Iterable[Mapping[str, Any]], base_items: Iterable[Mapping[str, Any]], base_form: str = "triple",
                 forced: str | None = None) -> str:
    """The comparison space for two collections of items (module docstring); ``forced``: that space, checked."""
    run_items = list(run_items)
    base_items = list(base_items)
    both = run_items + base_items
    candidates = [forced] if forced is not None else ["id", "label", "line"] if base_form != "line" else ["line"]
    for space in candidates:
        if _in_space(both, space):
            return space
    have_run = sorted({k for it in run_items for k, v in it.items() if v is not None})
    have_base = sorted({k for it in base_items for k, v in it.items() if v is not None})
    if forced is not None:
        keys = "an evidence line" if forced == "line" else f"{'/'.join(_FIELDS[forced])} with t_start/t_end"
        raise TempbenchError(
            f"cannot compare evidence in the {forced} space: not every item carries {keys} "
            f"(run items carry {have_run}, baseline items carry {have_base}; expected both to, or --space auto)")
    raise TempbenchError(
        "cannot compare evidence: no common item space "
        f"(run items carry {have_run}, baseline items carry {have_base}; "
        "expected both to carry s_id/r_id/o_id or s/r/o with t_start/t_end, or both an evidence line)"
    )


def item_key(item: Mapping[str, Any], space: str) -> tuple | str:
    """The comparable identity of an item in ``space``."""
    if space == "line":
        return str(item["line"])
    a, b, c = _FIELDS[space]
    return (str(item[a]), str(item[b]), str(item[c]), float(item["t_start"]), float(item["t_end"]))


def triple_of(item: Mapping[str, Any], space: str) -> tuple | None:
    """``(s, r, o)`` of an item in ``space`` (labels parsed from a line when possible)."""
    fields = _FIELDS.get(space, _FIELDS["label"])
    if _has(item, fields):
        return tuple(str(item[f]) for f in fields)
    return None


def show(item: Mapping[str, Any]) -> str:
    """A readable one-line rendering of an item."""
    if item.get("line"):
        return str(item["line"])
    s = item.get("s") or item.get("s_id")
    r = item.get("r") or item.get("r_id")
    o = item.get("o") or item.get("o_id")
    ts, te = item.get("t_start"), item.get("t_end")
    t = "?" if ts is None else format_span(float(ts), float(te))
    return f"{s} | {r} | {o} | {t}"


def diff_lists(run_items: Sequence[Mapping[str, Any]], base_items: Sequence[Mapping[str, Any]], space: str) -> dict[str, Any]:
    """Compare two evidence lists of one question.

    Returns
    -------
    dict
        ``exact`` (bool), ``missing`` / ``extra`` (lists of ``{item, rank}``,
        rank 1-based in the list that has the item), ``changed`` (list of
        ``{triple, run_time, baseline_time, run_rank, baseline_rank}``),
        ``reordered`` (list of ``{item, run_rank, baseline_rank}``).
    """
    run_keys = [item_key(it, space) for it in run_items]
    base_keys = [item_key(it, space) for it in base_items]
    exact = run_keys == base_keys
    out: dict[str, Any] = {"exact": exact, "missing": [], "extra": [], "changed": [], "reordered": []}
    if exact:
        return out
    run_count, base_count = Counter(run_keys), Counter(base_keys)
    common = run_count & base_count
    # Walk each list; the first `common[key]` copies are shared, the rest differ.
    def split(keys: list, items: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[int]]:
        budget = Counter(common)
        shared, own = [], []
        for i, key in enumerate(keys):
            if budget[key] > 0:
                budget[key] -= 1
                shared.append(i)
            else:
                own.append(i)
        return shared, own

    run_shared, run_own = split(run_keys, run_items)
    base_shared, base_own = split(base_keys, base_items)
    # Pair missing and extra items of the same (s, r, o): a changed time.
    if space != "line":
        by_triple: dict[tuple, list[int]] = {}
        for i in base_own:
            by_triple.setdefault(triple_of(base_items[i], space), []).append(i)
        paired_run, paired_base = set(), set()
        for i in run_own:
            cands = by_triple.get(triple_of(run_items[i], space))
            if cands:
                j = cands.pop(0)
                paired_run.add(i)
                paired_base.add(j)
                out["changed"].append({
                    "triple": list(triple_of(run_items[i], space)),
                    "run_time": [run_items[i]["t_start"], run_items[i]["t_end"]],
                    "baseline_time": [base_items[j]["t_start"], base_items[j]["t_end"]],
                    "run_rank": i + 1,
                    "baseline_rank": j + 1,
                })
        run_own = [i for i in run_own if i not in paired_run]
        base_own = [j for j in base_own if j not in paired_base]
    out["missing"] = [{"item": show(base_items[j]), "rank": j + 1} for j in base_own]
    out["extra"] = [{"item": show(run_items[i]), "rank": i + 1} for i in run_own]
    # Shared items in run order vs baseline order: same multiset, compare sequences.
    run_seq = [run_keys[i] for i in run_shared]
    base_seq = [base_keys[j] for j in base_shared]
    if run_seq != base_seq:
        for pos, (rk, bk) in enumerate(zip(run_seq, base_seq, strict=True)):
            if rk != bk:
                # rank of this run item in the baseline: the matching copy in order
                occurrence = run_seq[: pos + 1].count(rk)
                bpos = [p for p, k in enumerate(base_seq) if k == rk][occurrence - 1]
                out["reordered"].append({
                    "item": show(run_items[run_shared[pos]]),
                    "run_rank": run_shared[pos] + 1,
                    "baseline_rank": base_shared[bpos] + 1,
                })
    return out


def diff_evidence(
    run: Mapping[str, Sequence[Mapping[str, Any]]],
    baseline: Mapping[str, Sequence[Mapping[str, Any]]],
    base_form: str = "triple",
    space: str = "auto",
) -> dict[str, Any]:
    """Diff every question of two ``{question id: evidence list}`` mappings.

    Parameters
    ----------
    run, baseline:
        Question id -> evidence items (dicts as in SPEC §6.1, or the normalised
        items of :class:`eval.baselines.EvidenceBaseline`).
    base_form:
        The baseline's item form (``"line"`` forces the line space).
    space:
        ``"auto"`` (module docstring) or one of ``id``, ``label``, ``line``.

    Returns
    -------
    dict
        ``space``, ``summary`` (counts and ``exact_share``) and ``questions``
        (id -> per-question diff, only the questions that differ, in baseline
        order then run-only ids).
    """
    try:
        space = comparison_space(run, baseline, base_form, space)
    except TempbenchError:
        if space != "auto":
            raise
        spaces = question_spaces(run, baseline, base_form)
        return {"space": PER_QUESTION, **_question_diffs(
            run, baseline, lambda qid: {**diff_lists(run[qid], baseline[qid], spaces[qid]), "space": spaces[qid]})}
    return {"space": space, **_question_diffs(run, baseline, lambda qid: diff_lists(run[qid], baseline[qid], space))}


def question_spaces(run: Mapping[str, Sequence[Mapping[str, Any]]], baseline: Mapping[str, Sequence[Mapping[str, Any]]],
                    base_form: str) -> dict[str, str]:
    """Each common question's own comparison space (:func:`choose_space` of its items on both sides).

    Raises
    ------
    TempbenchError
        A question whose items share no space, named with what its items carry.
    """
    spaces = {}
    for qid in baseline:
        if qid in run:
            try:
                spaces[qid] = choose_space(run[qid], baseline[qid], base_form)
            except TempbenchError as exc:
                raise TempbenchError(f"question {terminal_text(str(qid))}: {exc}") from None
    return spaces


def comparison_space(run: Mapping[str, Sequence[Mapping[str, Any]]], baseline: Mapping[str, Sequence[Mapping[str, Any]]],
                     base_form: str, space: str) -> str:
    """The space :func:`diff_evidence` compares in: ``space``, or the first that the common questions' items allow."""
    if space != "auto" and space not in SPACES:
        raise TempbenchError(f"unknown comparison space {space!r}; expected auto, {', '.join(SPACES)}")
    common = [q for q in baseline if q in run]
    return choose_space(itertools.chain.from_iterable(run[q] for q in common),
                        itertools.chain.from_iterable(baseline[q] for q in common),
                        base_form, None if space == "auto" else space)


def _question_diffs(run: Mapping[str, Any], baseline: Mapping[str, Any],
                    diff_of: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
    """``summary`` and ``questions`` of :func:`diff_evidence`, ``diff_of(qid)`` the :func:`diff_lists` of a common question."""
    questions: dict[str, Any] = {}
    n_exact = 0
    counts = Counter()
    for qid in baseline:
        if qid not in run:
            questions[qid] = {"exact": False, "only_in": "baseline"}
            counts["only_in_baseline"] += 1
            continue
        d = diff_of(qid)
        if d["exact"]:
            n_exact += 1
            continue
        questions[qid] = d
        for key in ("missing", "extra", "changed", "reordered"):
            if d[key]:
                counts[f"questions_with_{key}"] += 1
                counts[f"items_{key}"] += len(d[key])
    for qid in run:
        if qid not in baseline:
            questions[qid] = {"exact": False, "only_in": "run"}
            counts["only_in_run"] += 1
    n_base = len(baseline)
    summary = {
        "baseline_questions": n_base,
        "run_questions": len(run),
        "common_questions": sum(qid in run for qid in baseline),
        "exact": n_exact,
        "exact_share": n_exact / n_base if n_base else 0.0,
    }
    for key in ("only_in_baseline", "only_in_run", "questions_with_missing", "questions_with_extra",
                "questions_with_changed", "questions_with_reordered", "items_missing", "items_extra",
                "items_changed", "items_reordered"):
        summary[key] = counts.get(key, 0)
    return {"summary": summary, "questions": questions}


_TIME_TYPES = frozenset((int, float, type(None)))
_T_START, _T_END = itemgetter("t_start"), itemgetter("t_end")


def diff_read_evidence(run: Mapping[Any, Mapping[str, Any]], baseline: RunRecords, space: str = "auto"
                       ) -> dict[str, Any]:
    """:func:`diff_evidence` of ``run_evidence(run)`` and ``run_evidence(baseline)``: the same result, made faster.

    When every item of both is a plain dict whose times, where present, are
    numbers (the run-file form: :func:`diff_item` then neither fails nor
    changes what is compared), the questions both have are compared by their
    items' keys (:func:`item_key`), computed from the items as read, and only
    the questions that differ are converted and diffed item by item. Anything
    else, and a space that cannot be chosen, is diffed as before.
    """
    run_lists = {str(qid): rec.get("evidence") or [] for qid, rec in run.items()}
    base_lists = {str(qid): rec.get("evidence") or [] for qid, rec in baseline.items()}
    # every record's items, also of a record whose str(id) a later one takes over: run_evidence converts them all
    flat = list(itertools.chain.from_iterable(rec.get("evidence") or [] for rec in itertools.chain(run.values(),
                                                                                                  baseline.values())))
    plain = (set(map(type, flat)) <= {dict}
             and set(map(type, map(dict.get, flat, itertools.repeat("t_start")))) <= _TIME_TYPES
             and set(map(type, map(dict.get, flat, itertools.repeat("t_end")))) <= _TIME_TYPES)
    try:
        # _in_space reads only which fields of an item are not None: the same of an item as read and converted
        chosen = comparison_space(run_lists, base_lists, baseline.item_form, space) if plain else None
    except TempbenchError:
        chosen = None  # said as the slow path says it
    if chosen is None:
        return diff_evidence(run_evidence(run), run_evidence(baseline), baseline.item_form, space)
    common = [q for q in base_lists if q in run_lists]
    run_keys = _common_keys([run_lists[q] for q in common], chosen)
    base_keys = _common_keys([base_lists[q] for q in common], chosen)
    same = {q for q, mine, theirs in zip(common, run_keys, base_keys, strict=True) if mine == theirs}

    def diff_of(qid: str) -> dict[str, Any]:
        if qid in same:
            return {"exact": True}
        return diff_lists([diff_item(it) for it in run_lists[qid]], [diff_item(it) for it in base_lists[qid]], chosen)

    return {"space": chosen, **_question_diffs(run_lists, base_lists, diff_of)}


def _common_keys(lists: Sequence[Sequence[Mapping[str, Any]]], space: str) -> list[list[Any]]:
    """Per list, :func:`item_key` of each item (as read, every field of ``space`` present), computed column-wise."""
    flat = list(itertools.chain.from_iterable(lists))
    if space == "line":
        keys: list[Any] = list(map(str, map(itemgetter("line"), flat)))
    else:
        a, b, c = (map(str, map(itemgetter(field), flat)) for field in _FIELDS[space])
        keys = list(zip(a, b, c, map(float, map(_T_START, flat)), map(float, map(_T_END, flat)), strict=True))
    out, at = [], 0
    for items in lists:
        out.append(keys[at:at + len(items)])
        at += len(items)
    return out


def exact_share(run: Mapping[str, Sequence[Mapping[str, Any]]], baseline: Mapping[str, Sequence[Mapping[str, Any]]],
                space: str | Mapping[str, str]) -> tuple[int, int]:
    """``(questions reproduced exactly, baseline questions)`` in ``space`` (or each question's, :func:`space_of`)."""
    n = 0
    for qid, items in baseline.items():
        got = run.get(qid)
        if got is not None and [item_key(i, space_of(space, qid)) for i in got] == \
                [item_key(i, space_of(space, qid)) for i in items]:
            n += 1
    return n, len(baseline)


def space_of(space: str | Mapping[str, str], qid: str) -> str:
    """The space question ``qid`` is compared in: ``space``, or its own of a mapping (:func:`question_spaces`)."""
    return space if isinstance(space, str) else space[qid]


# --------------------------------------------------------------------------- items

_ITEM_FIELDS = ("s", "r", "o", "s_id", "r_id", "o_id", "t_start", "t_end", "line")


def diff_item(raw: Any) -> dict[str, Any]:
    """An evidence item as read by :func:`~tempbench_core.runfile.read_run`, in the diff's form.

    Every key of ``s r o s_id r_id o_id t_start t_end line`` is present
    (``None`` where the item lacks it): ids and labels as strings, times as
    floats. A 5-list left as a 5-list by the reader is in the label space.
    """
    item = dict.fromkeys(_ITEM_FIELDS)
    if isinstance(raw, (list, tuple)):
        raw = dict(zip(("s", "r", "o", "t_start", "t_end"), raw, strict=True))
    for key in ("s", "r", "o", "s_id", "r_id", "o_id", "line"):
        if raw.get(key) is not None:
            item[key] = str(raw[key])
    for key in ("t_start", "t_end"):
        if raw.get(key) is not None:
            item[key] = float(raw[key])
    return item


def run_evidence(run: Mapping[Any, Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """``{str(question id): evidence in the diff's form}`` of records read by ``read_run``."""
    return {str(qid): [diff_item(it) for it in (rec.get("evidence") or [])] for qid, rec in run.items()}


# --------------------------------------------------------------------------- metrics


def metric_deltas(run_values: Mapping[tuple[str, str], float], base_values: Mapping[tuple[str, str], float]) -> list[dict[str, Any]]:
    """Rows ``{slice, metric, run, baseline, delta}`` for every key the baseline has.

    (:func:`compare` appends a row for each impossible value of a metric table,
    with ``baseline`` and ``delta`` ``None`` and ``invalid: {given, problem}``.)

    ``delta = run - baseline``; ``run`` is ``None`` (and so is ``delta``) when the
    run has no value for that slice and metric. Rows keep the baseline's order.
    """
    rows = []
    for key, base in base_values.items():
        got = run_values.get(key)
        rows.append({
            "slice": key[0], "metric": key[1], "run": got, "baseline": base,
            "delta": None if got is None else got - base,
        })
    return rows


def slice_values(values: Mapping[tuple[str, str], float]) -> dict[str, set[str]]:
    """The slice values per field present in flattened scores (for bare slice names)."""
    known: dict[str, set[str]] = {"complexity": set(), "operator": set()}
    for sl, _ in values:
        if "=" in sl:
            fld, val = sl.split("=", 1)
            known.setdefault(fld, set()).add(val)
    return known


def evidence_scores(questions_by_id: Mapping[str, Mapping[str, Any]], records: Mapping[Any, Mapping[str, Any]],
                    qids: Sequence[str], key: str = DEFAULT_KEY,
                    shared: dict[Any, Any] | None = None) -> dict[tuple[str, str], float]:
    """TRP/CCR/coverage overall and by slice (SPEC §3.1-§3.2) of ``qids``, flattened.

    The questions are resolved as one table (:func:`eval.evidence.resolve`);
    ``shared`` keeps what depends on the question alone for the next call on
    the same question objects (the run, then its baseline).
    """
    by_str = {str(qid): rec for qid, rec in records.items()}
    table = resolve([questions_by_id[q] for q in qids], [by_str[q].get("evidence") or [] for q in qids], key=key,
                    shared=shared, light=True)
    scored = question_rows(table)
    return flatten_scores({"trp_ccr": aggregate(scored), "coverage": coverage_by(scored)})


#: Metric values are shown with this many decimals; a delta that rounds to zero there is no difference to show.
METRIC_DIGITS = 3


def differing_metrics(rows: Sequence[Mapping[str, Any]], digits: int = METRIC_DIGITS) -> list[Mapping[str, Any]]:
    """The metric-delta rows (:func:`metric_deltas`) that differ when shown with ``digits`` decimals.

    A row whose delta rounds to ``0.000`` would print as "differing by 0.000":
    it is left out (the JSON keeps every row with its exact delta); a row
    without a run value (``delta`` is ``None``) always differs.
    """
    return [m for m in rows if m["delta"] is None or round(abs(m["delta"]), digits) > 0]


def metrics_agreement(rows: Sequence[Mapping[str, Any]], digits: int = METRIC_DIGITS) -> str:
    """``"all 12 (slice, metric) values equal"`` (or "equal to 3 decimals"), for when no row differs."""
    exact = all(m["delta"] is not None and abs(m["delta"]) <= 1e-12 for m in rows)
    return f"all {len(rows)} (slice, metric) values equal" + ("" if exact else f" to {digits} decimals")


# --------------------------------------------------------------------------- the whole comparison


def compare(
    run: Mapping[Any, Mapping[str, Any]],
    baseline: RunRecords | MetricBaseline,
    questions: Sequence[Mapping[str, Any]] | None = None,
    flags: Mapping[Any, Mapping[str, bool]] | None = None,
    config: str | None = None,
    space: str = "auto",
    key: str = DEFAULT_KEY,
) -> dict[str, Any]:
    """Diff a run against a loaded baseline (:func:`eval.baselines.load_baseline`).

    Parameters
    ----------
    run:
        ``{question id: run record}``.
    baseline:
        Per-question evidence (:class:`~tempbench_core.runfile.RunRecords`) or
        a :class:`~eval.metric_tables.MetricBaseline`.
    questions, flags:
        Benchmark records and functional flags, for the metric deltas (omitted
        when ``None``).
    config:
        The run's configuration name: selects the rows of a metric table that
        names configurations.
    key:
        Key space of the metric deltas (SPEC §3.1).

    Returns
    -------
    dict
        ``baseline_kind``; for evidence baselines ``space``, ``summary``,
        ``questions`` (as :func:`diff_evidence`); ``metrics`` (rows of
        :func:`metric_deltas`) or ``metrics_note`` saying why there are none.
    """
    if key not in KEY_CHOICES:
        raise TempbenchError(f"unknown key space {key!r}; expected one of {', '.join(KEY_CHOICES)}")
    kind = "metrics" if isinstance(baseline, MetricBaseline) else "evidence"
    out: dict[str, Any] = {"baseline": str(baseline.path), "baseline_kind": kind}
    if isinstance(baseline, MetricBaseline):
        out.update(_compare_table(run, baseline, questions, flags, config, key))
    else:
        by_id = {str(q["id"]): q for q in questions} if questions is not None else None
        out.update(_compare_evidence(run, baseline, by_id, space, key))
    return out


def _compare_evidence(run: Mapping[Any, Mapping[str, Any]], baseline: RunRecords,
                      by_id: Mapping[str, Mapping[str, Any]] | None, space: str, key: str) -> dict[str, Any]:
    """:func:`compare` against per-question evidence: the diff, then the metric deltas on the common questions."""
    out: dict[str, Any] = dict(diff_read_evidence(run, baseline, space))
    out["item_form"] = baseline.item_form
    ran = {str(qid) for qid in run}
    common = [q for q in dict.fromkeys(map(str, baseline)) if q in ran]
    if by_id is None:
        out["metrics_note"] = "no benchmark questions given: metric deltas skipped"
    elif not common:
        out["metrics_note"] = "no question in common"
    else:
        unknown = [q for q in common if q not in by_id]
        if unknown:
            out["metrics_note"] = f"{len(unknown)} question id(s) not in the benchmark, e.g. {unknown[0]!r}: metric deltas skipped"
        else:
            try:
                shared: dict[Any, Any] = {}
                base_values = evidence_scores(by_id, baseline, common, key, shared)
            except EvidenceError as exc:
                out["metrics_note"] = f"baseline items cannot be scored ({exc}): metric deltas skipped"
            else:
                out["metrics"] = metric_deltas(evidence_scores(by_id, run, common, key, shared), base_values)
    return out


def _compare_table(run: Mapping[Any, Mapping[str, Any]], baseline: MetricBaseline,
                   questions: Sequence[Mapping[str, Any]] | None, flags: Mapping[Any, Mapping[str, bool]] | None,
                   config: str | None, key: str) -> dict[str, Any]:
    """:func:`compare` against a metric table: score the run, then compare every (slice, metric) the table has."""
    configs = baseline.configs()
    if config in configs:
        chosen = config
    elif len(configs) == 1:
        chosen = configs[0]
    else:
        raise TempbenchError(
            f"{baseline.path}: the table has configurations {[c for c in configs if c]}; "
            "say which one the run is with --config NAME"
        )
    out: dict[str, Any] = {"table_config": chosen}
    if baseline.skipped:
        out["skipped_rows"] = list(baseline.skipped)
    if questions is None:
        out["metrics_note"] = "no benchmark questions given: metric deltas skipped"
        return out
    scores = score_run(dict(run), list(questions), flags, options=ScoreOptions(key=key, n_boot=1))
    run_values = flatten_scores(scores)
    known = slice_values(run_values)
    base_values = {(resolve_slice(sl, known), metric): v for (cfg, sl, metric), v in baseline.values.items() if cfg == chosen}
    out["metrics"] = metric_deltas(run_values, base_values)
    # An impossible published value (NaN, infinite, a share outside [0, 1]) is shown as what it is,
    # beside our value, and never subtracted: no delta, no NaN in the JSON.
    for (cfg, sl, metric), bad in baseline.invalid.items():
        if cfg == chosen:
            cell = (resolve_slice(sl, known), metric)
            out["metrics"].append({"slice": cell[0], "metric": cell[1], "run": run_values.get(cell), "baseline": None,
                                   "delta": None, "invalid": {"given": bad.given, "problem": bad.problem}})
    return out


def diff_file_name(key: str) -> str:
    """The file of ``diff/`` for a baselines file (``a/b.csv [oracle]`` -> ``a__b.csv.oracle.json``).

    The key is a file name from the data: a control character in it is
    written as its escape (:func:`tempbench_core.text.terminal_text`), so the
    project never creates a file whose name holds a line break or an ESC.
    """
    return terminal_text(key.replace("/", "__").replace(" [", ".").replace("]", "")) + ".json"


def baseline_cell(row: Mapping[str, Any]) -> Any:
    """What a table shows as a metric row's baseline: its value, or ``invalid: nan`` for an impossible one."""
    bad = row.get("invalid")
    return row["baseline"] if not bad else f"invalid: {bad['given']}"
