"""The verdict: the counts beside the card's and whether the root looks like the release.
"""

from __future__ import annotations

from typing import Any

from tempbench.check.report import RELEASE, CheckReport, count_text, rel_path
from tempbench_core.layout import DataPaths


def check_verdict(report: CheckReport, st: dict[str, Any]) -> None:
    """Compare the counts found with the card's and say whether the root looks like the release.

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    card: dict[str, int] = st["card"]
    found: dict[str, int] = st["found"]
    rows = []
    for key, expected in card.items():
        value = found.get(key)
        rows.append({"quantity": key, "found": value, "card": expected, "match": value == expected})
    report.counts = rows
    differ = [r for r in rows if not r["match"]]
    report.looks_like_release = not differ and report.ok
    if report.looks_like_release:
        report.add("info", "-", f"looks like the release {RELEASE}: every count matches the card", "release.verdict")
        return
    shown = "; ".join(f"{r['quantity']} {count_text(r['quantity'], r['found'])} (card {count_text(r['quantity'], r['card'])})" for r in differ[:6])
    more = f"; and {len(differ) - 6} more" if len(differ) > 6 else ""
    if report.generated:
        report.add("info", "-", f"does not look like the release {RELEASE}, as expected of generated data: "
                   f"{len(differ)} of {len(rows)} counts differ from the card", "release.verdict")
        return
    data: DataPaths = st["data"]
    groups = ((("kg ",), data.kg, "the KG is not the tkgl-smallpedia edge list the card describes"),
              (("questions", "interval"), data.benchmark, "the benchmark is not the release's"),
              (("functional",), data.flags, "the functional flags are not the release's"))
    for prefixes, path, meaning in groups:
        mism = [r for r in differ if r["found"] is not None and r["quantity"].startswith(prefixes)]
        if mism:
            text = "; ".join(f"{r['quantity']} {count_text(r['quantity'], r['found'])} (card {count_text(r['quantity'], r['card'])})" for r in mism)
            report.add("warning", rel_path(path, st["root"]), f"{meaning}: {text}; the paper's numbers will not be reproduced",
                       "release.counts")
    report.add("info", "-", f"does not look like the release {RELEASE}: {shown}{more}", "release.verdict")


