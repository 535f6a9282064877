"""The *Reproducibility* section of ``tempbench reproduce`` (SPEC §8), when ``DATA/baselines/`` holds the four runs.

The section's figures are those of ``tempbench repro DATA/baselines OUT/runs
--split S`` (the same object, written as ``reproducibility.json``); the report
has the three tables and the ER-against-ΔRI plot; the score objects do not
change.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from retriever import Retriever, load_benchmark, load_config
from tempbench.cli import main
from tempbench.data import resolve_data
from tempbench_core.runfile import write_run
from tempbench_core.schema import SHIPPED_CONFIGS


def test_reproduce_writes_the_reproducibility_section(small_sample: Path, small_index, tmp_path: Path) -> None:
    root = tmp_path / "data"
    shutil.copytree(small_sample, root)
    paths = resolve_data(data=root)
    questions = [q for q in load_benchmark(paths.benchmark, paths.benchmark_ids) if q["split"] == "test"]
    (root / "baselines").mkdir()
    for name in SHIPPED_CONFIGS:
        retriever = Retriever(small_index, load_config(name, ["cap_counts=unique_triples"]))
        write_run(root / "baselines" / f"{name}.jsonl", (retriever.retrieve(q) for q in questions))
    out = tmp_path / "out"
    assert main(["reproduce", "--data", str(root), "--out", str(out), "--workers", "1", "--boot", "50"]) == 0
    report = (out / "report.md").read_text(encoding="utf-8")
    section = report.split("## Reproducibility (SPEC §8)", 1)[1].split("\n## ", 1)[0]
    for heading in ("### Document order", "### Effectiveness", "### Overall effects"):
        assert heading in section
    assert "![ER against ΔRI](plots/reproducibility.png)" in section and "(1, 0) is perfect" in section
    assert (out / "plots" / "reproducibility.png").stat().st_size > 0
    assert "Reproducibility (SPEC §8)" in (out / "report.html").read_text(encoding="utf-8")

    written = json.loads((out / "reproducibility.json").read_text(encoding="utf-8"))
    again = tmp_path / "repro.json"
    assert main(["repro", str(root / "baselines"), str(out / "runs"), "--data", str(root), "--split", "test",
                 "--workers", "1", "--json", str(again)]) == 0
    assert written == json.loads(again.read_text(encoding="utf-8"))
    assert written["configs"]["stale_blind"]["rmse"]["CCR"] > 0  # the option changes the stale-blind run
    # provenance beside each JSON (SPEC §8's object keeps its keys): the job's, and the repro command's
    job = json.loads((out / "reproducibility.meta.json").read_text(encoding="utf-8"))["provenance"]
    assert job["origin"] == "generated" and job["command"].startswith("tempbench reproduce ")
    assert json.loads((tmp_path / "repro.meta.json").read_text(encoding="utf-8"))["provenance"]["origin"] == "generated"

    # with workers, the plot is drawn by a drawing process, the same bytes: matplotlib never enters this process
    # (its import's reference cycles would stay in a process whose collector is paused)
    code = ("import sys; from tempbench.cli import main; rc = main(sys.argv[1:]); "
            "print('matplotlib in the job:', 'matplotlib' in sys.modules); sys.exit(rc)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", code, "reproduce", "--data", str(root), "--out", str(tmp_path / "two"),
                           "--workers", "2", "--boot", "50"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "matplotlib in the job: False"
    assert ((tmp_path / "two" / "plots" / "reproducibility.png").read_bytes()
            == (out / "plots" / "reproducibility.png").read_bytes())
