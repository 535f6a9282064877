"""Is a data root what the pipeline expects, and what will the pipeline see? (SPEC §1, §4)

:func:`check_data` inspects a data root (SPEC §1.5) without running the
retriever and returns a :class:`CheckReport`:

- every input file found or missing, and its form (plain or ``.gz``, TSV or JSON);
- counts (KG rows, entities, relations, years; questions and interval questions
  per split; functional flags on the test split) beside the dataset card's
  (SPEC §1.1, §1.3, §4; the benchmark's from ``configs/paper_numbers.toml``), and a
  "looks like the release v1.0.1" verdict;
- the key spaces the benchmark triples carry, and how many questions have an
  id-space twin in ``benchmark.jsonl`` (SPEC §2.3 fallback otherwise);
- label coverage of the KG's entities and relations (an id without a label is
  rendered as itself, which changes BM25, SPEC §1.2, §2.1);
- the share of gold hops (``S_star`` triples) that exist in the KG at a year
  valid at ``t_query`` (a low share means another KG version);
- oracle anchors (SPEC §2.3) that resolve to a KG entity;
- published baselines (SPEC §1.4) recognised, per file and form.

Each conclusion is a :class:`Finding` with a level: ``error`` (the pipeline
cannot run), ``warning`` (it runs, but its numbers will differ from the
paper's, or some will be missing), ``info``. The generated stand-in (it has a
``MANIFEST.json``) is not the release, so its counts differing from the card
is reported as ``info``; it passes with no warning.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from eval.audit.claims import load_claims
from eval.baselines import is_baseline_file, load_baseline, match_config
from retriever import (
    OracleAnchor,
    combine_labels,
    harvest_labels,
    load_benchmark,
    load_edgelist,
    load_flags,
    load_labels,
)
from tempbench_core.digest import sha256_file
from tempbench_core.errors import InputError, TempbenchError
from tempbench_core.jsonl import is_gzip, plain_name, read_jsonl
from tempbench_core.layout import GZ, LOCK_FILE, MANIFEST, PROVENANCE, DataPaths
from tempbench_core.lock import LockError, compare_lock
from tempbench_core.progress import progress
from tempbench_core.runfile import RunRecords
from tempbench_core.schema import ID_KEYS, LABEL_KEYS, SHIPPED_CONFIGS, SPLITS, TRIPLE_LISTS, whole_year

LEVELS = ("error", "warning", "info")
RELEASE = "v1.0.1"
#: The KG of the card (SPEC §1.1): tkgl-smallpedia as TGB 2.0 ships it.
KG_CARD = {"kg rows": 550_376, "kg entities": 47_433, "kg relations": 283, "kg first year": 1900, "kg last year": 2024}
#: Below this share of gold hops found at a valid year, the KG is another version (a warning).
GOLD_HOPS_OK = 0.99
#: Above this share of KG entities or relations rendered as raw ids, a warning. The card itself says
#: unresolvable QIDs fall back to the raw id, so a few percent is normal (the generated sample has
#: 1.5%); what this catches is a missing or cut-down labels file.
RAW_LABELS_OK = 0.05
_TRUE_ID = (str, int)


@dataclass(frozen=True)
class Finding:
    """One conclusion of the check.

    Attributes
    ----------
    level:
        ``error``, ``warning`` or ``info`` (see the module docstring).
    file:
        The file it concerns, relative to the data root when inside it.
    message:
        One line for people.
    code:
        Stable identifier (``kg.gold_hops``, ``labels.coverage``, ...).
    """

    level: str
    file: str
    message: str
    code: str

    def to_dict(self) -> dict[str, str]:
        """JSON form: ``{"level", "file", "message", "code"}``."""
        return {"level": self.level, "file": self.file, "message": self.message, "code": self.code}


@dataclass
class CheckReport:
    """Everything :func:`check_data` found (``to_json`` is what ``--json`` writes)."""

    root: str | None
    generated: bool
    files: list[dict[str, Any]] = field(default_factory=list)
    counts: list[dict[str, Any]] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    looks_like_release: bool = False

    def add(self, level: str, file: str, message: str, code: str) -> None:
        """Record one finding."""
        assert level in LEVELS, level
        self.findings.append(Finding(level, file, message, code))

    def by_level(self, level: str) -> list[Finding]:
        """The findings of one level, in the order found."""
        return [f for f in self.findings if f.level == level]

    @property
    def ok(self) -> bool:
        """No error-level finding: the pipeline can run."""
        return not self.by_level("error")

    def summary(self) -> dict[str, int]:
        """Number of findings per level."""
        return {level: len(self.by_level(level)) for level in LEVELS}

    def to_json(self) -> dict[str, Any]:
        """The JSON document: findings first, then the details."""
        return {
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
            "root": self.root,
            "generated": self.generated,
            "release": RELEASE,
            "looks_like_release": self.looks_like_release,
            "files": self.files,
            "counts": self.counts,
            "facts": self.facts,
        }


def card_counts(paper_numbers: str | Path | None = None) -> dict[str, int]:
    """The card's counts, in display order (SPEC §1.1, §1.3; benchmark values from ``paper_numbers.toml``)."""
    claims = {c.id: c for c in load_claims(paper_numbers)[0]}

    def claim(cid: str, fallback: int) -> int:
        return int(claims[cid].paper) if cid in claims else fallback

    card = dict(KG_CARD)
    card["kg rows"] = claim("bm25.documents", KG_CARD["kg rows"])  # one BM25 document per KG row
    for split in ("all", *SPLITS):
        card[f"questions ({split})"] = claim(f"split.{split}.questions", 0)
        card[f"interval questions ({split})"] = claim(f"split.{split}.interval", 0)
    card["functional stale (test)"] = claim("stale.functional", 0)
    card["functional distractor (test)"] = claim("dist.pairs", 0)
    return card


# --- helpers --------------------------------------------------------------------------


def _rel(path: Path | str | None, root: Path | None) -> str:
    if path is None:
        return "-"
    path = Path(path)
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def _form(path: Path) -> str:
    if path.is_dir():
        return "folder"
    kind = Path(plain_name(path)).suffix.lstrip(".").lower() or "file"
    return f"{kind}.gz" if is_gzip(path) else kind


def _pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def _valid_ids(triple: dict[str, Any]) -> bool:
    return all(isinstance(triple.get(k), _TRUE_ID) and not isinstance(triple.get(k), bool) and triple.get(k) != "" for k in ID_KEYS)


def _valid_labels(triple: dict[str, Any]) -> bool:
    return all(triple.get(k) is not None for k in LABEL_KEYS)


def _dense(*columns: np.ndarray) -> np.ndarray:
    """A dense int64 id per distinct tuple of the (non-negative int) columns, without overflow."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col in columns:
        col = col.astype(np.int64)
        width = int(col.max()) + 1 if len(col) else 1
        _, key = np.unique(key * width + col, return_inverse=True)
        key = key.astype(np.int64).reshape(-1)
    return key


def gold_hops_in_kg(kg_cols: tuple[np.ndarray, np.ndarray, np.ndarray], year: np.ndarray,
                    hop_cols: tuple[np.ndarray, np.ndarray, np.ndarray], hop_year: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which hops exist in the KG, at any year and at the hop's valid year.

    Parameters
    ----------
    kg_cols:
        ``(s, r, o)`` codes of every KG row (non-negative ints in one key space).
    year:
        The rows' years.
    hop_cols:
        ``(s, r, o)`` codes of the hops in the same space; ``-1`` for a code the
        KG does not have.
    hop_year:
        Per hop, the one KG year valid at its question's ``t_query``: on the
        point-in-time KG ``valid_at(y, y, t_query)`` holds exactly for
        ``y == t_query`` (SPEC §2.4). A ``t_query`` that is not a whole year
        has no valid year: give any value outside the KG's years.

    Returns
    -------
    (ndarray, ndarray)
        Boolean arrays over the hops: in the KG at any year; at the valid year.
        Vectorised: one sort of the KG, binary searches for the hops.
    """
    n = len(hop_year)
    known = np.ones(n, dtype=bool)
    for col in hop_cols:
        known &= col >= 0
    if not len(year) or not n:
        return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    # Codes shared by KG rows and hops, densified together so the keys never overflow.
    both = [np.concatenate([k.astype(np.int64), np.where(known, h, 0).astype(np.int64)]) for k, h in zip(kg_cols, hop_cols, strict=True)]
    triple = _dense(*both)
    kg_triple, hop_triple = triple[: len(year)], triple[len(year):]
    y0 = int(year.min())
    span = int(year.max()) - y0 + 1
    kg_key = np.sort(kg_triple * span + (year.astype(np.int64) - y0))
    lo = np.searchsorted(kg_key, hop_triple * span, side="left")
    hi = np.searchsorted(kg_key, hop_triple * span + span, side="left")
    any_year = known & (hi > lo)
    offset = hop_year.astype(np.int64) - y0
    in_range = (offset >= 0) & (offset < span)
    probe = hop_triple * span + np.clip(offset, 0, span - 1)
    pos = np.searchsorted(kg_key, probe, side="left")
    found = (pos < len(kg_key)) & (kg_key[np.minimum(pos, len(kg_key) - 1)] == probe)
    return any_year, any_year & in_range & found


# --- the check --------------------------------------------------------------------------


def check_data(data: DataPaths, paper_numbers: str | Path | None = None, card: dict[str, int] | None = None,
               show_progress: bool | None = None) -> CheckReport:
    """Inspect the inputs of ``data`` (see the module docstring for what is checked).

    Parameters
    ----------
    data:
        The resolved input files (:func:`tempbench.data.resolve_data`).
    paper_numbers:
        The claims file with the card's benchmark counts (default: the shipped one).
    card:
        Override the card's counts (tests); default :func:`card_counts`.
    show_progress:
        Progress bar over the steps (default: on a terminal).
    """
    root = Path(data.root) if data.root is not None else None
    report = CheckReport(root=None if root is None else str(root), generated=data.generated)
    card = card_counts(paper_numbers) if card is None else card
    state: dict[str, Any] = {"data": data, "root": root, "card": card, "found": {}}
    steps = (_files, _recorded, _kg, _labels, _benchmark, _flags, _anchors, _gold_hops, _baselines, _verdict)
    for step in progress(steps, total=len(steps), description="check", enabled=show_progress):
        step(report, state)
    return report


def _files(report: CheckReport, st: dict[str, Any]) -> None:
    data: DataPaths = st["data"]
    root = st["root"]
    roles = (("kg", data.kg), ("labels", data.labels), ("benchmark", data.benchmark),
             ("benchmark_ids", data.benchmark_ids), ("flags", data.flags), ("baselines", data.baselines))
    for role, path in roles:
        exists = path is not None and Path(path).exists()
        entry: dict[str, Any] = {"role": role, "path": _rel(path, root), "found": exists}
        if exists:
            p = Path(path)
            entry["form"] = _form(p)
            entry["bytes"] = p.stat().st_size if p.is_file() else None
            if p.is_file() and not is_gzip(p) and p.with_name(p.name + GZ).exists():
                report.add("info", _rel(p, root), f"both {p.name} and {p.name}{GZ} exist; {p.name} is read", f"{role}.both_forms")
        report.files.append(entry)
    if not _exists(data.kg):
        report.add("error", _rel(data.kg, root), "KG edge list not found: the pipeline cannot run "
                   "(get it with 'tempbench fetch tgb --out DIR')", "kg.missing")
    if not _exists(data.benchmark):
        report.add("error", _rel(data.benchmark, root), "benchmark_labelled.jsonl not found: the pipeline cannot run "
                   "(lay out the release with 'tempbench fetch release --from SRC --out DIR')", "benchmark.missing")
    if not _exists(data.labels):
        report.add("info", "labels.tsv", "no labels file (labels.tsv or labels.json): labels come only from the "
                   "benchmark files (see the label coverage finding)", "labels.missing")
    if _exists(data.benchmark) and not _exists(data.benchmark_ids):
        report.add("warning", "benchmark/benchmark.jsonl", "no id-space twin benchmark.jsonl: every oracle anchor "
                   "resolves by label, gold hops are scored by label and no labels are harvested by id (SPEC §2.3)",
                   "benchmark_ids.missing")
    if _exists(data.benchmark) and not _exists(data.flags):
        report.add("warning", "benchmark/functional_negatives.jsonl", "no functional_negatives.jsonl: the typed-negative "
                   "rates (SPEC §3.3) and the functional audit rows will be n/a", "flags.missing")
    if data.baselines is None:
        report.add("info", "baselines/", "no baselines/ folder: 'tempbench reproduce' will not diff against the "
                   "published retriever outputs", "baselines.missing")


def _exists(path: Path | None) -> bool:
    return path is not None and Path(path).is_file()


def _recorded(report: CheckReport, st: dict[str, Any]) -> None:
    """Compare the files with the record of the sample generator or with the lock of ``tempbench fetch``."""
    root: Path | None = st["root"]
    if root is None:
        return
    manifest = root / MANIFEST
    if manifest.is_file():
        try:
            doc = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            report.add("warning", MANIFEST, f"unreadable ({exc}): the generated data cannot be verified", "manifest.unreadable")
            doc = {}
        changed = [rel for rel, rec in (doc.get("files") or {}).items()
                   if not (root / rel).is_file() or sha256_file(root / rel) != rec.get("sha256")]
        st["manifest"] = doc
        report.facts["generated"] = {"scale": doc.get("scale"), "seed": doc.get("seed"), "changed_files": changed}
        report.add("info", MANIFEST, f"generated stand-in data ('tempbench sample', scale {doc.get('scale')}, seed "
                   f"{doc.get('seed')}): not the release; it has the release's format, not its content, so its counts "
                   "differ from the card's by design", "generated")
        if changed:
            report.add("warning", MANIFEST, f"{len(changed)} file(s) changed since they were generated: "
                       f"{', '.join(changed)}", "manifest.changed")
    _locked(report, root)


def _locked(report: CheckReport, root: Path) -> None:
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
        "sources": {group: {k: entry.get(k) for k in ("source", "fetched_at", "revision") if k in entry}
                    for group, entry in sorted(lock.sources.items())},
    }

    def origin(rel: str) -> str:
        entry = lock.files[rel]
        # Groups are the operations that write a lock: 'fetch tgb', 'fetch release', and any other command's name.
        command = f"fetch {entry.group}" if entry.group in ("tgb", "release") else entry.group
        return f"'tempbench {command}' from {entry.source} at {entry.fetched_at}"

    for rel, what in comparison.changed:
        report.add("warning", rel, f"changed since {origin(rel)} recorded it in {name}: now {what}", "lock.changed")
    for rel in comparison.missing:
        report.add("warning", rel, f"missing: {origin(rel)} recorded it in {name}", "lock.missing")
    if comparison.ok:
        groups = ", ".join(f"{g} from {e.get('source')} at {e.get('fetched_at')}" for g, e in sorted(lock.sources.items()))
        report.add("info", name, f"{len(comparison.ok)} of {len(lock.files)} file(s) match what {name} records "
                   f"({groups})", "lock.ok")


def _kg(report: CheckReport, st: dict[str, Any]) -> None:
    data: DataPaths = st["data"]
    if not _exists(data.kg):
        return
    name = _rel(data.kg, st["root"])
    try:
        kg = load_edgelist(data.kg)
    except TempbenchError as exc:
        report.add("error", name, f"unreadable: {exc}", "kg.unreadable")
        return
    st["kg"] = kg
    years = kg.year
    found = st["found"]
    found.update({"kg rows": kg.n_rows, "kg entities": kg.n_entities, "kg relations": kg.n_relations,
                  "kg first year": int(years.min()), "kg last year": int(years.max())})
    sorted_by_ts = bool(np.all(years[1:] >= years[:-1]))
    order = np.lexsort((kg.tail, kg.relation, kg.head, years))
    keys = np.stack([years[order], kg.head[order], kg.relation[order], kg.tail[order]])
    duplicates = int(np.count_nonzero(np.all(keys[:, 1:] == keys[:, :-1], axis=0)))
    report.facts["kg"] = {"header": list(kg.header or ()), "read_by_position": kg.header_by_position,
                          "sorted_by_ts": sorted_by_ts, "duplicate_rows": duplicates}
    report.add("info", name, f"{kg.n_rows:,} rows, {kg.n_entities:,} entities, {kg.n_relations:,} relations, years "
               f"{int(years.min())}-{int(years.max())}; {duplicates:,} exact duplicate row(s); "
               + ("sorted by ts" if sorted_by_ts else "not sorted by ts (the released file is; CSV load order decides "
                  "which rows the BFS caps keep)"), "kg.summary")
    if kg.header_by_position:
        header = ",".join(kg.header or ())
        looks_like_row = kg.header is not None and whole_year_text(kg.header[0])
        if looks_like_row:
            report.add("warning", name, f"line 1 ({header!r}) looks like a data row, not a header; it is skipped as "
                       "TGB's loader skips it, so the KG has one row fewer", "kg.header_is_data")
        else:
            report.add("info", name, f"header {header!r} is not ts,head,tail,relation_type; its 4 columns are read by "
                       "position (timestamp, head, tail, relation type) as TGB's loader reads them", "kg.header_by_position")


def whole_year_text(text: str) -> bool:
    """Whether a header cell reads as an integer (a year): then line 1 is probably a data row."""
    return text.strip().lstrip("+-").isdigit()


def _labels(report: CheckReport, st: dict[str, Any]) -> None:
    data: DataPaths = st["data"]
    root = st["root"]
    file_labels: dict[str, str] = {}
    if _exists(data.labels):
        try:
            file_labels = load_labels(data.labels)
        except TempbenchError as exc:
            report.add("error", _rel(data.labels, root), f"unreadable: {exc}", "labels.unreadable")
    harvested: dict[str, str] = {}
    if _exists(data.benchmark):
        try:
            harvested = harvest_labels(data.benchmark, data.benchmark_ids if _exists(data.benchmark_ids) else None)
        except TempbenchError:
            pass  # the benchmark step reports unreadable benchmark files
    labels = combine_labels(file_labels, harvested)
    st["labels"] = labels
    kg: Any = st.get("kg")
    if kg is None:
        return
    entity_labels = [labels.render(e) for e in kg.entity_ids]
    relation_labels = [labels.render(r) for r in kg.relation_ids]
    st["entity_labels"], st["relation_labels"] = entity_labels, relation_labels
    raw_e = sum(1 for e, lab in zip(kg.entity_ids, entity_labels, strict=True) if lab == e)
    raw_r = sum(1 for r, lab in zip(kg.relation_ids, relation_labels, strict=True) if lab == r)
    from_file = sum(1 for e in kg.entity_ids if file_labels.get(e))
    report.facts["labels"] = {"file_ids": len(file_labels), "harvested_ids": len(harvested),
                              "entities_raw": raw_e, "entities": kg.n_entities, "relations_raw": raw_r,
                              "relations": kg.n_relations, "entities_from_file": from_file}
    where = _rel(data.labels, root) if _exists(data.labels) else "labels.tsv"
    share_e = raw_e / kg.n_entities if kg.n_entities else 0.0
    share_r = raw_r / kg.n_relations if kg.n_relations else 0.0
    text = (f"{raw_e:,} of {kg.n_entities:,} KG entities ({_pct(raw_e, kg.n_entities)}) and {raw_r:,} of "
            f"{kg.n_relations:,} relations ({_pct(raw_r, kg.n_relations)}) have no label and are rendered as their raw id "
            f"(labels file: {len(file_labels):,} ids; harvested from the benchmark: {len(harvested):,})")
    if share_e > RAW_LABELS_OK or share_r > RAW_LABELS_OK:
        report.add("warning", where, text + ": a raw id is one token no question contains and shortens its documents, "
                   "so BM25 scores and rankings change (SPEC §1.2, §2.1)", "labels.coverage")
    else:
        report.add("info", where, text, "labels.coverage")


def _benchmark(report: CheckReport, st: dict[str, Any]) -> None:
    data: DataPaths = st["data"]
    root = st["root"]
    if not _exists(data.benchmark):
        return
    ids_path = data.benchmark_ids if _exists(data.benchmark_ids) else None
    try:
        questions = load_benchmark(data.benchmark, ids_path)
    except TempbenchError as exc:
        where = exc.path if isinstance(exc, InputError) else data.benchmark
        report.add("error", _rel(where, root), f"unreadable: {exc}", "benchmark.unreadable")
        return
    st["questions"] = questions
    found = st["found"]
    splits = Counter(q["split"] for q in questions)
    interval = Counter(q["split"] for q in questions if q.get("operator_type") == "interval")
    found["questions (all)"] = len(questions)
    found["interval questions (all)"] = sum(interval.values())
    for split in SPLITS:
        found[f"questions ({split})"] = splits.get(split, 0)
        found[f"interval questions ({split})"] = interval.get(split, 0)
    name = _rel(data.benchmark, root)
    # Key spaces of the triples, as the pipeline sees them (ids merged from the twin).
    spaces = Counter()
    for q in questions:
        for lst in TRIPLE_LISTS:
            for t in q[lst]:
                spaces["triples"] += 1
                spaces["id"] += _valid_ids(t)
                spaces["label"] += _valid_labels(t)
    twin_ids: set[Any] = set()
    if ids_path is not None:
        own = {q["id"] for q in questions}
        twin_ids = own & {rec.get("id") for _, rec in read_jsonl(ids_path)}
    first_by_label = sum(1 for q in questions if q["S_star"][0].get("s_id") in (None, ""))
    report.facts["benchmark"] = {"questions": len(questions), "splits": dict(sorted(splits.items())),
                                 "interval": dict(sorted(interval.items())), "triples": spaces["triples"],
                                 "triples_with_ids": spaces["id"], "triples_with_labels": spaces["label"],
                                 "questions_with_id_twin": len(twin_ids), "oracle_by_label": first_by_label}
    report.add("info", name, f"{len(questions):,} questions ({', '.join(f'{s} {splits.get(s, 0):,}' for s in SPLITS)}), "
               f"{sum(interval.values()):,} interval ({_pct(sum(interval.values()), len(questions))}); key spaces: "
               f"{spaces['label']:,} of {spaces['triples']:,} triples carry labels, {spaces['id']:,} carry ids",
               "benchmark.summary")
    if ids_path is None:
        return
    ids_name = _rel(ids_path, root)
    missing = len(questions) - len(twin_ids)
    if missing:
        report.add("warning", ids_name, f"{missing:,} of {len(questions):,} questions have no id-space twin: their "
                   "oracle anchor resolves by label (first in load order when several entities share it), they "
                   "harvest no labels and their gold hops are scored by label (SPEC §2.3)", "benchmark_ids.partial")
    twinned = [t for q in questions if q["id"] in twin_ids for lst in TRIPLE_LISTS for t in q[lst]]
    without = sum(1 for t in twinned if not _valid_ids(t))
    if without:
        report.add("warning", ids_name, f"{without:,} of {len(twinned):,} triples of the questions with a twin have no "
                   f"ids in {Path(ids_path).name}: they are scored by label", "benchmark_ids.triples_without_ids")
    if not missing and not without:
        report.add("info", ids_name, f"every question has its id-space twin; all {spaces['triples']:,} triples carry ids",
                   "benchmark_ids.complete")


def _flags(report: CheckReport, st: dict[str, Any]) -> None:
    data: DataPaths = st["data"]
    root = st["root"]
    questions = st.get("questions")
    if not _exists(data.flags):
        return
    name = _rel(data.flags, root)
    try:
        flags = load_flags(data.flags)
    except TempbenchError as exc:
        report.add("error", name, f"unreadable: {exc}", "flags.unreadable")
        return
    if questions is None:
        return
    split_of = {q["id"]: q["split"] for q in questions}
    test = [qid for qid, s in split_of.items() if s == "test"]
    st["found"]["functional stale (test)"] = sum(1 for qid in test if flags.get(qid, {}).get("stale_functional"))
    st["found"]["functional distractor (test)"] = sum(1 for qid in test if flags.get(qid, {}).get("dist_functional"))
    unknown = [qid for qid in flags if qid not in split_of]
    absent = [qid for qid in split_of if qid not in flags]
    report.facts["flags"] = {"entries": len(flags), "unknown_ids": len(unknown), "questions_without_flags": len(absent)}
    if unknown:
        report.add("warning", name, f"{len(unknown):,} flag line(s) name questions the benchmark does not have "
                   f"(e.g. {unknown[0]!r}): another benchmark version?", "flags.unknown_ids")
    if absent:
        report.add("warning", name, f"{len(absent):,} of {len(split_of):,} questions have no functional flags (e.g. "
                   f"{absent[0]!r}): they count as not functional in the typed-negative rates", "flags.incomplete")
    if not unknown and not absent:
        report.add("info", name, f"functional flags for all {len(split_of):,} questions", "flags.complete")


def _anchors(report: CheckReport, st: dict[str, Any]) -> None:
    kg: Any = st.get("kg")
    questions = st.get("questions")
    if kg is None or questions is None or "entity_labels" not in st:
        return
    oracle = OracleAnchor(kg.entity_ids, kg.entity_index, st["entity_labels"])
    outcome = Counter()
    for q in questions:
        first = q["S_star"][0]
        anchor = oracle(q)
        by_id = first.get("s_id") not in (None, "")
        if anchor.index is not None:
            outcome["by_id" if by_id else "by_label"] += 1
            outcome["ambiguous"] += int(anchor.ambiguous)
        else:
            outcome["id_not_in_kg" if by_id else "label_not_found"] += 1
    resolved = outcome["by_id"] + outcome["by_label"]
    report.facts["oracle_anchors"] = {"questions": len(questions), **{k: outcome[k] for k in
                                      ("by_id", "by_label", "ambiguous", "id_not_in_kg", "label_not_found")}}
    name = _rel(st["data"].benchmark, st["root"])
    text = (f"{resolved:,} of {len(questions):,} oracle anchors resolve to a KG entity ({outcome['by_id']:,} by s_id, "
            f"{outcome['by_label']:,} by label)")
    if resolved < len(questions):
        report.add("warning", name, text + f"; {outcome['id_not_in_kg']:,} s_id(s) are not in the KG and "
                   f"{outcome['label_not_found']:,} label(s) match no entity: those questions get an empty retrieval",
                   "anchors.unresolved")
    else:
        report.add("info", name, text, "anchors.resolved")
    if outcome["ambiguous"]:
        report.add("warning", name, f"{outcome['ambiguous']:,} oracle anchor(s) resolve by a label that several KG "
                   "entities share; the first in load order is taken (SPEC §2.3 decision), which may not be the "
                   "paper's entity", "anchors.ambiguous")


def _gold_hops(report: CheckReport, st: dict[str, Any]) -> None:
    kg: Any = st.get("kg")
    questions = st.get("questions")
    if kg is None or questions is None or "entity_labels" not in st:
        return
    # Label space: a code per distinct rendered label, for the KG rows and the hops alike.
    ent_text, ent_code = np.unique(np.asarray(st["entity_labels"], dtype=object), return_inverse=True)
    rel_text, rel_code = np.unique(np.asarray(st["relation_labels"], dtype=object), return_inverse=True)
    ent_lookup = {t: i for i, t in enumerate(ent_text.tolist())}
    rel_lookup = {t: i for i, t in enumerate(rel_text.tolist())}
    ids: list[tuple[int, int, int, int]] = []
    labs: list[tuple[int, int, int, int]] = []
    for q in questions:
        year = whole_year(q["t_query"])
        y = -(1 << 40) if year is None else year
        for t in q["S_star"]:
            if _valid_ids(t):
                ids.append((kg.entity_index.get(str(t["s_id"]), -1), kg.relation_index.get(str(t["r_id"]), -1),
                            kg.entity_index.get(str(t["o_id"]), -1), y))
            else:
                labs.append((ent_lookup.get(str(t["s"]), -1), rel_lookup.get(str(t["r"]), -1),
                             ent_lookup.get(str(t["o"]), -1), y))
    any_year = valid = 0
    for rows, cols in ((ids, (kg.head, kg.relation, kg.tail)),
                       (labs, (ent_code.reshape(-1)[kg.head], rel_code.reshape(-1)[kg.relation], ent_code.reshape(-1)[kg.tail]))):
        if not rows:
            continue
        hop = np.asarray(rows, dtype=np.int64)
        a, v = gold_hops_in_kg(cols, kg.year, (hop[:, 0], hop[:, 1], hop[:, 2]), hop[:, 3])
        any_year += int(a.sum())
        valid += int(v.sum())
    total = len(ids) + len(labs)
    report.facts["gold_hops"] = {"hops": total, "by_id": len(ids), "by_label": len(labs),
                                 "in_kg_any_year": any_year, "in_kg_valid_year": valid}
    name = _rel(st["data"].kg, st["root"])
    text = (f"{valid:,} of {total:,} gold hops ({_pct(valid, total)}) exist in the KG at a year valid at t_query "
            f"({any_year:,}, {_pct(any_year, total)}, at any year)")
    if total and valid / total < GOLD_HOPS_OK:
        hint = ("a foreign KG: the benchmark was not built from it" if any_year / total < 0.5
                else "another version of the KG than the one the benchmark was built from")
        report.add("warning", name, f"only {text}: {hint}; the hops it lacks can never be retrieved", "kg.gold_hops")
    else:
        report.add("info", name, text, "kg.gold_hops")


def _baselines(report: CheckReport, st: dict[str, Any]) -> None:
    data: DataPaths = st["data"]
    if data.baselines is None:
        return
    root = st["root"]
    folder = Path(data.baselines)
    known = {q["id"] for q in st.get("questions") or []}
    entries = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = _rel(path, root)
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


def _verdict(report: CheckReport, st: dict[str, Any]) -> None:
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
    shown = "; ".join(f"{r['quantity']} {_fmt(r['found'])} (card {_fmt(r['card'])})" for r in differ[:6])
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
            text = "; ".join(f"{r['quantity']} {_fmt(r['found'])} (card {_fmt(r['card'])})" for r in mism)
            report.add("warning", _rel(path, st["root"]), f"{meaning}: {text}; the paper's numbers will not be reproduced",
                       "release.counts")
    report.add("info", "-", f"does not look like the release {RELEASE}: {shown}{more}", "release.verdict")


def _fmt(value: Any) -> str:
    return "n/a" if value is None else f"{value:,}" if isinstance(value, int) else str(value)
