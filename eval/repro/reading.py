"""What each SPEC §8 figure says, in words: the tables' rows and one-line readings for the terminal and the report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Shown for an ER or ΔRI that is undefined (a zero denominator).
NO_EFFECT = "n/a (original shows no effect)"

#: One line per figure: how to read it.
READINGS: dict[str, str] = {
    "ktu": "KTU (Kendall's tau Union, -1..1): 1 = the documents of both lists, cut to the shorter, in the same "
           "order; 0 = unrelated orders; -1 = reversed",
    "rbo": "RBO (rank-biased overlap, 0..1): 1 = the same documents at every depth, weighted towards the top; "
           "0 = nothing in common",
    "rmse": "RMSE (0 = the same score on every question; in the measure's units)",
    "nrmse": "nRMSE (0..1): RMSE divided by the largest RMSE any reproduction could reach; 0 = identical scores",
    "p_value": "p-value (paired two-sided t-test): small (< 0.05) = the score distributions differ; large = no "
               "difference detected; 1 = identical",
    "tie": "tie-sensitive: the original's mean lies within our [min, max] over the orders of equal BM25 scores "
           "(SPEC §3.5), so the difference may come from tie order alone",
    "er": "ER (effect ratio): 1 = the ablation's effect reproduced in full; 0..1 = smaller, > 1 = larger, < 0 = "
          "the opposite direction",
    "delta_ri": "ΔRI (delta relative improvement): 0 = the same relative effect; > 0 = a smaller relative "
                "effect than the original's, < 0 = a larger one; n/a = a zero denominator (for ER: the original's "
                "two means are equal; for ΔRI: a mean of the baseline configuration is 0)",
    "plot": "ER against ΔRI: the point (1, 0) is perfect reproduction of an effect; to the right of ER = 1 "
            "a larger effect, to the left a smaller one; above ΔRI = 0 a smaller relative improvement",
}


def fmt(value: float | None, digits: int = 3) -> str:
    """A figure for a table: ``-`` when undefined."""
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_p(value: float | None) -> str:
    """A p-value: three decimals, ``< 0.001`` below."""
    if value is None:
        return "-"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def fmt_effect(value: float | None) -> str:
    """An ER or ΔRI: :data:`NO_EFFECT` when undefined."""
    return NO_EFFECT if value is None else f"{value:.3f}"


def order_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """``config | KTU | RBO`` per configuration."""
    return [[name, fmt(c["ktu"]), fmt(c["rbo"])] for name, c in result["configs"].items()]


def effectiveness_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """``config | measure | original | reproduced | RMSE | nRMSE | p-value | tie`` per configuration and measure."""
    rows = []
    for name, c in result["configs"].items():
        for m in result["measures"]:
            tie = "tie-sensitive" if c["tie_sensitive"][m] else ""
            rows.append([name, m, fmt(c["mean"]["original"][m]), fmt(c["mean"]["reproduced"][m]), fmt(c["rmse"][m]),
                         fmt(c["nrmse"][m]), fmt_p(c["p_value"][m]), tie])
    return rows


def effect_rows(result: Mapping[str, Any]) -> list[list[str]]:
    """``ablation | measure | ER | ΔRI`` per advanced configuration and measure."""
    return [[name, m, fmt_effect(e["er"][m]), fmt_effect(e["delta_ri"][m])]
            for name, e in result["effects"].items() for m in result["measures"]]


ORDER_COLUMNS = ["config", "KTU", "RBO"]
EFFECTIVENESS_COLUMNS = ["config", "measure", "original", "reproduced", "RMSE", "nRMSE", "p-value", "ties (SPEC §3.5)"]
EFFECT_COLUMNS = ["ablation", "measure", "ER", "ΔRI"]


def verdict(result: Mapping[str, Any]) -> list[str]:
    """A few sentences on what the figures say, for the report."""
    lines = []
    identical = [n for n, c in result["configs"].items()
                 if c["ktu"] in (1.0, None) and c["rbo"] in (1.0, None)
                 and all(v in (0.0, None) for v in c["rmse"].values())]
    if identical:
        lines.append(f"Reproduced exactly (same documents in the same order, same scores): {', '.join(identical)}.")
    differ = [(n, m) for n, c in result["configs"].items() for m in result["measures"]
              if c["p_value"][m] is not None and c["p_value"][m] < 0.05]
    if differ:
        lines.append("Score distributions that differ (paired t-test p < 0.05): "
                     + ", ".join(f"{n} {m}" for n, m in differ) + ".")
    ties = [(n, m) for n, c in result["configs"].items() for m in result["measures"]
            if c["tie_sensitive"][m] and c["rmse"][m] not in (0.0, None)]
    if ties:
        lines.append("Differences within the tie range, which the order of equal BM25 scores alone can explain: "
                     + ", ".join(f"{n} {m}" for n, m in ties) + ".")
    undefined = [(n, m) for n, e in result["effects"].items() for m in result["measures"] if e["er"][m] is None]
    if undefined:
        lines.append("No effect in the original, so no effect ratio: " + ", ".join(f"{n} {m}" for n, m in undefined) + ".")
    return lines
