"""The report's *Reproducibility* section (SPEC §8): published per-question runs against the reproduction.

When a ``baselines/`` folder holds per-question runs of the four shipped
configurations (``oracle.jsonl``, ``nonoracle.jsonl``, ``stale_blind.jsonl``,
``hop3_k25.jsonl``, any SPEC §1.4 form), :func:`reproducibility_report` compares
them with the job's runs (:func:`eval.repro.job.reproducibility`, on the job's
split, default measures and options), writes ``reproducibility.json`` (the
object of ``tempbench repro --json``) and the plot of ER against ΔRI, and
:func:`reproducibility_lines` renders the section: the three tables, the plot
and the reading in words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from eval.report.plots import plot_effects
from eval.report.tables import md_table
from eval.repro.folders import list_runs
from eval.repro.job import Scope, reproducibility
from eval.repro.options import DEFAULT_BASELINE, DEFAULT_MEASURES, ReproOptions
from eval.repro.reading import (
    EFFECT_COLUMNS,
    EFFECTIVENESS_COLUMNS,
    READINGS,
    effect_rows,
    effectiveness_rows,
    fmt,
    verdict,
)
from eval.repro.values import parse_measures
from tempbench_core.atomic import write_json
from tempbench_core.errors import TempbenchError
from tempbench_core.schema import SHIPPED_CONFIGS

PLOT = "reproducibility"
JSON_NAME = "reproducibility.json"
META_NAME = "reproducibility.meta.json"


def baseline_runs(baselines: Path, configs: Sequence[str] = SHIPPED_CONFIGS) -> dict[str, Path] | None:
    """The per-question runs of ``configs`` in ``baselines`` (``<config>.jsonl``/``.json``), or ``None`` when one lacks."""
    if not Path(baselines).is_dir():
        return None
    runs = list_runs(baselines, "baselines").runs
    return {name: runs[name] for name in configs} if all(name in runs for name in configs) else None


def reproducibility_report(baselines: Path, runs: Mapping[str, Path | Mapping[Any, Any]],
                           questions: Sequence[Mapping[str, Any]], out: Path, split: str | None,
                           workers: int = 1, provenance: Mapping[str, Any] | None = None,
                           draw: Callable[[Mapping[str, Any], Path], bool] = plot_effects) -> dict[str, Any] | None:
    """Compare the baselines' runs with the job's, write ``reproducibility.json`` and the plot; ``None`` without baselines.

    Returns ``{"result", "extras", "plot"}`` (``plot`` the PNG's path, or
    ``None`` when no effect is defined), or ``{"error": message}`` when the
    baselines cannot be compared (the report says why). ``provenance`` (the
    job's record) goes to ``reproducibility.meta.json`` beside the JSON, whose
    keys stay exactly SPEC §8's. ``draw``: what draws the plot
    (:func:`~eval.report.plots.plot_effects`, or a call of it in a process
    that has matplotlib imported already).
    """
    original = baseline_runs(baselines)
    if original is None:
        return None
    try:
        extras: dict[str, Any] = {}
        result = reproducibility(original, {n: runs[n] for n in original}, questions,
                                 parse_measures(DEFAULT_MEASURES), Scope(DEFAULT_BASELINE, split), ReproOptions(),
                                 workers, extras)
    except TempbenchError as exc:
        return {"error": str(exc)}
    if provenance is not None:
        write_json(out / META_NAME, {"provenance": dict(provenance)})
    write_json(out / JSON_NAME, result)
    plot = out / "plots" / f"{PLOT}.png"
    drawn = draw(result, plot)
    return {"result": result, "extras": extras, "plot": plot if drawn else None}


def reproducibility_lines(section: Mapping[str, Any] | None) -> list[str]:
    """The *Reproducibility* section of ``report.md`` (empty without baselines)."""
    if not section:
        return []
    lines = ["## Reproducibility (SPEC §8)", ""]
    if section.get("error"):
        return lines + [f"Skipped: {section['error']}", ""]
    result, extras = section["result"], section.get("extras") or {}
    ceiling = extras.get("rbo_ceiling", {})
    lines += [f"The published per-question runs of `baselines/` (original) against this reproduction, on "
              f"{result['questions']:,} questions, with the measures of Breuer et al. (SIGIR 2020) as `repro_eval` "
              f"computes them; effects against `{result['baseline']}`. All figures: `{JSON_NAME}` (the object of "
              "`tempbench repro baselines/ runs/ --json`).", ""]
    lines += [*verdict(result), ""] if verdict(result) else []
    lines += ["### Document order", "",
              md_table(["config", "KTU", "RBO", "RBO if identical"],
                       [[n, fmt(c["ktu"]), fmt(c["rbo"]), fmt(ceiling.get(n))] for n, c in result["configs"].items()]),
              "", f"- {READINGS['ktu']}.", f"- {READINGS['rbo']}; *RBO if identical* is what a perfect reproduction "
              "scores with these list lengths (below 1 when the lists are shorter than RBO's depth).", ""]
    lines += ["### Effectiveness", "", md_table(EFFECTIVENESS_COLUMNS, effectiveness_rows(result)), "",
              *(f"- {READINGS[k]}." for k in ("rmse", "nrmse", "p_value", "tie")), ""]
    if result["effects"]:
        lines += ["### Overall effects", "", md_table(EFFECT_COLUMNS, effect_rows(result)), "",
                  *(f"- {READINGS[k]}." for k in ("er", "delta_ri")), ""]
        if section.get("plot") is not None:
            lines += [f"![ER against ΔRI](plots/{PLOT}.png)", "", f"{READINGS['plot']}.", ""]
    return lines
