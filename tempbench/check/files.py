"""The files of a data root: found or missing, their form, and what recorded them (the sample's manifest, the lock).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tempbench.check.origin import BUILD_GROUP, Origin
from tempbench.check.report import CheckReport, exists, file_form, rel_path
from tempbench_core.digest import sha256_file
from tempbench_core.jsonl import is_gzip
from tempbench_core.layout import GZ, KG_FILE, LABELS_JSON, LABELS_TSV, LOCK_FILE, MANIFEST, PROVENANCE, DataPaths
from tempbench_core.lock import LockError, compare_lock


def check_files(report: CheckReport, st: dict[str, Any]) -> None:
    """Every input file found or missing, with its form and size; the missing ones as findings.

    Parameters
    ----------
    report:
        Where the findings go.
    st:
        The check's state, shared by the steps in order (``data``, ``root``, ``card``, ``found``, ...).
    """
    data: DataPaths = st["data"]
    root = st["root"]
    roles = (("kg", data.kg), ("labels", data.labels), ("benchmark", data.benchmark),
             ("benchmark_ids", data.benchmark_ids), ("flags", data.flags), ("baselines", data.baselines))
    for role, path in roles:
        present = path is not None and Path(path).exists()
        entry: dict[str, Any] = {"role": role, "path": rel_path(path, root), "found": present}
        if present:
            p = Path(path)
            entry["form"] = file_form(p)
            entry["bytes"] = p.stat().st_size if p.is_file() else None
            if p.is_file() and not is_gzip(p) and p.with_name(p.name + GZ).exists():
                report.add("info", rel_path(p, root), f"both {p.name} and {p.name}{GZ} exist; {p.name} is read", f"{role}.both_forms")
        report.files.append(entry)
    origin: Origin = st["origin"]
    if not exists(data.kg):
        name = rel_path(data.kg, root)
        report.add("error", name, f"KG edge list not found: the pipeline cannot run ({origin.hint(name, 'kg')})",
                   "kg.missing")
    if not exists(data.benchmark):
        name = rel_path(data.benchmark, root)
        report.add("error", name, "benchmark_labelled.jsonl not found: the pipeline cannot run "
                   f"({origin.hint(name, 'benchmark')})", "benchmark.missing")
    if not exists(data.labels):
        report.add("info", "labels.tsv", "no labels file (labels.tsv or labels.json): labels come only from the "
                   "benchmark files (see the label coverage finding)", "labels.missing")
    if exists(data.benchmark) and not exists(data.benchmark_ids):
        report.add("warning", "benchmark/benchmark.jsonl", "no id-space twin benchmark.jsonl: every oracle anchor "
                   "resolves by label, gold hops are scored by label and no labels are harvested by id (SPEC §2.3)",
                   "benchmark_ids.missing")
    if exists(data.benchmark) and not exists(data.flags):
        report.add("warning", "benchmark/functional_negatives.jsonl", "no functional_negatives.jsonl: the typed-negative "
                   "rates (SPEC §3.3) and the functional audit rows will be n/a", "flags.missing")
    if data.baselines is None:
        report.add("info", "baselines/", "no baselines/ folder: 'tempbench reproduce' will not diff against the "
                   "published retriever outputs", "baselines.missing")


def check_recorded(report: CheckReport, st: dict[str, Any]) -> None:
    """Compare the files with the record of the sample generator or with the lock of ``tempbench fetch``."""
    root: Path | None = st["root"]
    if root is None:
        return
    manifest = root / MANIFEST
    if manifest.is_file():
        doc, problem = _manifest(manifest)
        if problem is not None:
            report.add("warning", MANIFEST, f"{problem}: the generated data cannot be verified", "manifest.unreadable")
        changed = [rel for rel, rec in doc.get("files", {}).items()
                   if not (root / rel).is_file() or sha256_file(root / rel) != rec.get("sha256")]
        st["manifest"] = doc
        report.facts["generated"] = {"scale": doc.get("scale"), "seed": doc.get("seed"), "changed_files": changed}
        report.add("info", MANIFEST, f"generated stand-in data ('tempbench sample', scale {doc.get('scale')}, seed "
                   f"{doc.get('seed')}): not the release; it has the release's format, not its content, so its counts "
                   "differ from the card's by design", "generated")
        if changed:
            report.add("warning", MANIFEST, f"{len(changed)} file(s) changed since they were generated: "
                       f"{', '.join(changed)}", "manifest.changed")
    origin: Origin = st["origin"]
    if origin.kind == "built":
        report.add("info", LOCK_FILE, f"{origin.describe()}: not the release; its counts differ from the card's "
                   "by construction", "built")
    _locked(report, root, origin)


def _manifest(path: Path) -> tuple[dict[str, Any], str | None]:
    """The sample's manifest (``{}`` when it cannot be read as one) and what is wrong with it (``None``: nothing).

    What :mod:`tempbench.sample` writes: a JSON object whose ``files`` maps each
    file's path in the root to an object with its ``sha256``.
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, f"unreadable ({exc})"
    if not isinstance(doc, dict):
        return {}, f"a JSON {type(doc).__name__}, not the object 'tempbench sample' writes"
    files = doc.get("files", {})
    if not isinstance(files, dict) or not all(isinstance(rel, str) and isinstance(rec, dict)
                                              and isinstance(rec.get("sha256"), str) for rel, rec in files.items()):
        return {**doc, "files": {}}, ("its 'files' is not an object of {path: {\"sha256\": hex digest}} "
                                      "as 'tempbench sample' writes")
    return doc, None


def _locked(report: CheckReport, root: Path, origin: Origin) -> None:
    """Compare the root with its lock (``tempbench.lock``: what 'tempbench fetch' laid out, file by file)."""
    try:
        comparison = compare_lock(root)
    except LockError as exc:
        report.add("warning", LOCK_FILE, f"unreadable, so the fetched files cannot be verified: {exc}", "lock.unreadable")
        return
    lock = comparison.lock
    if not lock.files:
        return
    name = PROVENANCE if lock.legacy else LOCK_FILE
    changed = [rel for rel, _ in comparison.changed]
    report.facts["lock"] = {
        "file": name, "files": len(lock.files), "changed": changed, "missing": comparison.missing,
        "sources": {group: {k: entry.get(k) for k in ("source", "fetched_at", "revision", "command") if k in entry}
                    for group, entry in sorted(lock.sources.items())},
    }

    def where(rel: str) -> str:
        entry = lock.files[rel]
        # Groups are the operations that write a lock: 'fetch tgb', 'fetch release', and any other command's name.
        command = f"fetch {entry.group}" if entry.group in ("tgb", "release") else entry.group
        return f"'tempbench {command}' from {entry.source} at {entry.fetched_at}"

    def hint(rel: str) -> str:
        # a built root's file comes back from the user's file or the recorded command; a fetched one as before
        return f"; {origin.hint(rel, _role(rel))}" if lock.files[rel].group == BUILD_GROUP else ""

    for rel, what in comparison.changed:
        report.add("warning", rel, f"changed since {where(rel)} recorded it in {name}: now {what}{hint(rel)}",
                   "lock.changed")
    for rel in comparison.missing:
        report.add("warning", rel, f"missing: {where(rel)} recorded it in {name}{hint(rel)}", "lock.missing")
    if comparison.ok:
        groups = ", ".join(origin.describe() if g == BUILD_GROUP else f"{g} from {e.get('source')} at {e.get('fetched_at')}"
                           for g, e in sorted(lock.sources.items()))
        report.add("info", name, f"{len(comparison.ok)} of {len(lock.files)} file(s) match what {name} records "
                   f"({groups})", "lock.ok")




def _role(rel: str) -> str:
    """The role of a data-root file by its layout name (``kg``, ``labels``, else ``benchmark``)."""
    plain = rel[: -len(GZ)] if rel.endswith(GZ) else rel
    if plain == KG_FILE:
        return "kg"
    return "labels" if plain in (LABELS_TSV, LABELS_JSON) else "benchmark"
