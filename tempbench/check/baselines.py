"""Published baselines under ``DATA/baselines/`` (SPEC §1.4): recognised, per file and form.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from eval.baselines import is_baseline_file, load_baseline, match_config
from tempbench.check.report import CheckReport, rel_path
from tempbench_core.errors import TempbenchError
from tempbench_core.layout import DataPaths
from tempbench_core.runfile import RunRecords
from tempbench_core.schema import SHIPPED_CONFIGS


def check_baselines(report: CheckReport, st: dict[str, Any]) -> None:
    """Recognise every file under ``baselines/`` as ``tempbench reproduce`` will read it (SPEC §1.4).

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    data: DataPaths = st["data"]
    if data.baselines is None:
        return
    root = st["root"]
    folder = Path(data.baselines)
    known = {q["id"] for q in st.get("questions") or []}
    entries = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = rel_path(path, root)
        if not is_baseline_file(path):
            report.add("info", name, "not read: 'tempbench reproduce' diffs only .jsonl, .json, .csv and .tsv files",
                       "baselines.ignored")
            continue
        config = match_config(path.stem, list(SHIPPED_CONFIGS))
        try:
            baseline = load_baseline(path)
        except TempbenchError as exc:
            entries.append({"file": name, "recognised": False})
            report.add("warning", name, f"unrecognised baselines file, skipped by 'tempbench reproduce': {exc}",
                       "baselines.unrecognised")
            continue
        if isinstance(baseline, RunRecords):
            foreign = [qid for qid in baseline if known and qid not in known]
            entries.append({"file": name, "recognised": True, "form": "per-question", "records": len(baseline),
                            "id_key": baseline.id_key, "evidence_key": baseline.evidence_key,
                            "item_form": baseline.item_form, "config": config or "oracle"})
            target = config if config else "oracle (its name names no configuration)"
            report.add("info", name, f"per-question evidence: {len(baseline):,} records (id key {baseline.id_key!r}, "
                       f"evidence key {baseline.evidence_key!r}, items as {baseline.item_form or 'nothing'}); diffed "
                       f"against the {target} run", "baselines.recognised")
            if foreign:
                report.add("warning", name, f"{len(foreign):,} of {len(baseline):,} records name questions the "
                           f"benchmark does not have (e.g. {foreign[0]!r}): another benchmark version?",
                           "baselines.unknown_ids")
        else:
            configs = [c for c in baseline.configs() if c is not None]
            entries.append({"file": name, "recognised": True, "form": "metric table", "values": len(baseline.values),
                            "configs": configs, "impossible": len(baseline.invalid)})
            target = (", ".join(configs) if configs else (config or "oracle (its name names no configuration)"))
            impossible = f" (and {len(baseline.invalid):,} impossible, below)" if baseline.invalid else ""
            report.add("info", name, f"metric table: {len(baseline.values):,} values{impossible}; compared with {target}",
                       "baselines.recognised")
            if baseline.invalid:
                # a published number no metric can have: the table is wrong there, whatever the run gives
                lines = baseline.invalid_lines()
                report.add("error", name, f"{len(lines):,} impossible value(s), not compared by 'tempbench reproduce': "
                           + "; ".join(lines[:5]) + ("; ..." if len(lines) > 5 else "")
                           + " (expected finite shares in [0, 1], question counts whole numbers >= 0)",
                           "baselines.impossible")
    report.facts["baselines"] = entries


