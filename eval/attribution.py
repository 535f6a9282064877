"""A run's loss attribution (SPEC §7): every question's stages, their summary, and its JSON.

:func:`attribute_run` explains every question of a run with an
:class:`~eval.explain.Explainer` (the stage at which each gold hop is lost);
:func:`summarize` counts the stages overall, per slice and per hop position;
:func:`attribution_json` is the text ``tempbench explain --json`` writes;
:func:`run_config` finds the configuration a run was made with.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import chain, zip_longest
from typing import Any

from eval.explain import STAGES, Explainer
from retriever import RetrieverConfig, load_config
from tempbench_core.errors import ConfigError, RunMismatchError
from tempbench_core.jsonl import dumps_compact, dumps_json
from tempbench_core.runchecks import FORCE_WAY_OUT
from tempbench_core.runfile import meta_path, read_meta
from tempbench_core.schema import SHIPPED_CONFIGS

_STAGE_SET = frozenset(STAGES)
#: What pads a question's stages beyond its last hop in the columns of :func:`summarize` (no stage is it).
_NO_HOP = object()

#: The slices of the summary (SPEC §7 terminal table), as ``(summary key, question field)``.
SLICES: tuple[tuple[str, str], ...] = (("complexity", "complexity"), ("operator", "operator_type"))


def run_questions(run: Mapping[Any, Mapping[str, Any]], questions: Sequence[Mapping[str, Any]]) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """``(question, record)`` for every record of the run, in run order; unknown ids are an error."""
    by_id = {q["id"]: q for q in questions}
    unknown = [qid for qid in run if qid not in by_id]
    if unknown:
        where = getattr(run, "where", None)
        prefix = f"{where(unknown[0])}: " if callable(where) and getattr(run, "path", None) is not None else ""
        raise RunMismatchError(f"{prefix}{len(unknown)} run record(s) have ids that are not in the benchmark, "
                               f"e.g. {unknown[0]!r} (wrong --benchmark or --data?)")
    return [(by_id[qid], record) for qid, record in run.items()]


def attribute_run(
    explainer: Explainer,
    run: Mapping[Any, Mapping[str, Any]],
    questions: Sequence[Mapping[str, Any]],
    progress: Callable[[Iterable[Any], int], Iterable[Any]] | None = None,
) -> dict[str, Any]:
    """The attribution of every question of a run: ``{"questions": {qid: [stage, ...]}, "summary": ...}`` (SPEC §7).

    Parameters
    ----------
    explainer:
        :class:`Explainer` of the run's index and configuration.
    run:
        ``{question id: record}`` (:func:`tempbench_core.runfile.read_run`).
    questions:
        Benchmark records; every run record must have one.
    progress:
        Optional ``progress(iterable, total)`` wrapper (a progress bar).
    """
    pairs = run_questions(run, questions)
    explainer.prepare(pairs)
    items: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]] = pairs
    if progress is not None:
        items = progress(pairs, len(pairs))
    stages: dict[Any, list[str]] = {}
    for question, record in items:
        stages[question["id"]] = explainer.explain(question, record).stages
    return {"questions": stages, "summary": summarize([q for q, _ in pairs], stages, explainer.config)}


def attribution_json(result: Mapping[str, Any]) -> str:
    """The text of ``tempbench explain --json``: one line per question, the summary indented.

    ``{"questions": {QID: [stage, ...]}, "summary": {...}}``; question ids are
    written as JSON strings. A ``provenance`` of ``result`` (the command's) follows the summary.
    """
    questions = result["questions"]
    lines = ["{", '  "questions": {']
    if questions:
        # every id written by one call, then cut out of the list's text (each is dumps_compact(str(qid)))
        quoted = _JSON_STRING.findall(dumps_compact([str(qid) for qid in questions]))
        lines.append(",\n".join([f"    {qid}: {_stage_list(stages)}"
                                  for qid, stages in zip(quoted, questions.values(), strict=True)]))
    lines.append("  },")
    summary = dumps_json(result["summary"], indent=2).replace("\n", "\n  ")
    lines.append(f'  "summary": {summary}')
    if "provenance" in result:
        lines[-1] += ","
        lines.append('  "provenance": ' + dumps_json(result["provenance"], indent=2).replace("\n", "\n  "))
    lines.append("}")
    return "\n".join(lines) + "\n"


_QUOTED_STAGES = {s: f'"{s}"' for s in STAGES}
#: A JSON string as json.dumps writes it: inside the quotes, a quote or backslash only escaped (``\"``, ``\\``).
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)


def _stage_list(stages: Sequence[str]) -> str:
    """``json.dumps(list(stages))``; stage names are plain ASCII words, quoted as they are."""
    try:
        return "[" + ", ".join([_QUOTED_STAGES[s] for s in stages]) + "]"
    except (KeyError, TypeError):
        return dumps_json(list(stages), indent=None)


def _tally(stage_lists: Sequence[list[str]]) -> dict[str, Any]:
    """The counts and shares of the stages of ``stage_lists`` (one list per question)."""
    return _tallied(Counter(chain.from_iterable(stage_lists)), len(stage_lists))


def _tallied(found: Counter[str], n_questions: int) -> dict[str, Any]:
    """:func:`_tally` of the questions whose stages ``found`` counts: every stage, in :data:`STAGES` order."""
    unknown = found.keys() - _STAGE_SET
    if unknown:
        # the first one met, as counting stage by stage into a dict of the stages would fail on it
        raise KeyError(next(s for s in found if s in unknown))
    counts = {s: found[s] for s in STAGES}
    n_hops = sum(counts.values())
    return {
        "n_questions": n_questions,
        "n_hops": n_hops,
        "counts": counts,
        "shares": {s: (counts[s] / n_hops if n_hops else None) for s in STAGES},
    }


def summarize(questions: Sequence[Mapping[str, Any]], stages: Mapping[Any, list[str]], config: Any = None) -> dict[str, Any]:
    """Counts and shares of gold hops per stage: overall, per slice and per hop position.

    Slices (complexity, operator) are ordered by ``str(value)`` as in SPEC
    §3.2; ``by_hop`` groups hops by their place among a question's distinct
    hops (``"1"``, ``"2"``, ...).
    """
    present = [q for q in questions if q["id"] in stages]
    out: dict[str, Any] = {"stages": list(STAGES)}
    if config is not None:
        out["config"] = {k: config.to_dict()[k] for k in ("name", "anchor", "hops", "caps", "temporal_filter", "k",
                                                          "cap_scope", "cap_counts")}
    lists = [stages[q["id"]] for q in present]
    out.update(_tally(lists))
    for name, fld in SLICES:
        groups: dict[Any, list[list[str]]] = {}
        for q, found in zip(present, lists, strict=True):
            groups.setdefault(q.get(fld), []).append(found)
        out[f"by_{name}"] = {str(v): _tally(groups[v]) for v in sorted(groups, key=str)}
    # per hop position, its stage in each question with that many hops (a column of the lists, padded)
    by_hop: dict[str, Any] = {}
    for j, column in enumerate(zip_longest(*lists, fillvalue=_NO_HOP)):
        found = Counter(column)
        missing = found.pop(_NO_HOP, 0)
        by_hop[str(j + 1)] = _tallied(found, len(column) - missing)
    out["by_hop"] = by_hop
    return out


@functools.cache
def role_settings() -> tuple[str, ...]:
    """The settings that tell the shipped configurations apart (anchor, hops, k, the temporal filter): the paper's
    ablations. Read from the shipped configurations, so a new one brings its own."""
    shipped = [load_config(name).to_dict() for name in SHIPPED_CONFIGS]
    keys = [k for k in shipped[0] if k not in ("name", "description")]
    return tuple(k for k in keys if len({repr(c.get(k)) for c in shipped}) > 1)


def role_problem(run_path: Any, role: str) -> str | None:
    """What contradicts that ``run_path`` is a run of the shipped configuration ``role``; ``None``: nothing does.

    Its ``.meta.json`` (SPEC §6.1) must record ``role``'s :func:`role_settings`;
    any other setting (a decision option: ``cap_counts``, the tie order) may
    differ, since that is what a reproduction is compared on. A run without a
    ``.meta.json``, or named after no shipped configuration, is taken as it is.
    """
    recorded = (read_meta(run_path) or {}).get("config")
    if role not in SHIPPED_CONFIGS or not isinstance(recorded, Mapping):
        return None
    expected = load_config(role).to_dict()
    differs = [k for k in role_settings() if recorded.get(k) != expected[k]]
    if not differs:
        return None
    made = recorded.get("name")
    return (f"{run_path} stands for configuration {role!r}, but its .meta.json records "
            + ", ".join(f"{k}={recorded.get(k)!r}" for k in differs)
            + f" (the shipped {role} has " + ", ".join(f"{k}={expected[k]!r}" for k in differs) + ")"
            + (f": it is a run of {made!r}" if isinstance(made, str) and made != role else ""))


def check_run_role(run_path: Any, role: str, force: bool = False, way_out: str = FORCE_WAY_OUT) -> list[str]:
    """Refuse a run that its ``.meta.json`` says is not of configuration ``role`` (:func:`role_problem`).

    With ``force``, the problem is returned (for a warning) instead.

    Raises
    ------
    RunMismatchError
        Without ``force``, when there is a problem; the message ends with ``way_out``.
    """
    problem = role_problem(run_path, role)
    if problem is None:
        return []
    if force:
        return [problem]
    raise RunMismatchError(f"{problem} (name the file after the configuration it was made with, or {way_out})")


def longer_than_k(records: Mapping[Any, Mapping[str, Any]], config: Any) -> str | None:
    """The first record with more evidence than ``config.k`` (a run cut to another k), said with its file and line.

    ``records``: as :func:`tempbench_core.runfile.read_run` returns them (its
    ``path`` and ``lines`` name the place, when it has them).
    """
    for qid, record in records.items():
        evidence = record.get("evidence") or []
        if len(evidence) > config.k:
            path, lines = getattr(records, "path", None), getattr(records, "lines", None) or {}
            where = f"{path}:{lines[qid]}: " if path is not None and qid in lines else ""
            return (f"{where}question {qid!r} has {len(evidence)} evidence items, more than the k={config.k} of "
                    f"configuration {config.name!r}: the run was not made with it")
    return None


def run_config(run_path: Any, fallback: Any = None) -> tuple[Any, str]:
    """The configuration a run was made with: its ``.meta.json`` (SPEC §6.1), else ``fallback``.

    Returns ``(config, source)`` with ``source`` naming where it came from.
    Without metadata and without a fallback it is an error that says what to give.
    """
    meta = read_meta(run_path)
    if meta is not None and isinstance(meta.get("config"), Mapping):
        return RetrieverConfig.from_mapping(dict(meta["config"]), source=str(meta_path(run_path))), str(meta_path(run_path))
    if fallback is None:
        raise ConfigError(f"{run_path} has no readable {meta_path(run_path).name} with its configuration; "
                          "give --config NAME (oracle, nonoracle, stale_blind, hop3_k25 or a TOML file)")
    return fallback, "--config"
