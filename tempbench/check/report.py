"""What a check finds and reports: levels, :class:`Finding`, :class:`CheckReport`, the card's counts (SPEC §1.1, §1.3, §4).

Also the small rules every step shares: paths relative to the root, a file's form, shares as percentages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.audit.claims import load_claims
from tempbench_core.jsonl import is_gzip, plain_name
from tempbench_core.provenance import KG_CARD, RELEASE
from tempbench_core.schema import SPLITS, format_year

LEVELS = ("error", "warning", "info")
#: Below this share of gold hops found at a valid year, the KG is another version (a warning).
GOLD_HOPS_OK = 0.99
#: Above this share of KG entities or relations rendered as raw ids, a warning. The card itself says
#: unresolvable QIDs fall back to the raw id, so a few percent is normal (the generated sample has
#: 1.5%); what this catches is a missing or cut-down labels file.
RAW_LABELS_OK = 0.05


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


def rel_path(path: Path | str | None, root: Path | None) -> str:
    """``path`` relative to the data root when inside it, else as given; ``-`` for none."""
    if path is None:
        return "-"
    path = Path(path)
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def file_form(path: Path) -> str:
    """The form of an input: ``folder``, or its kind (``csv``, ``jsonl``, ...) with ``.gz`` when compressed."""
    if path.is_dir():
        return "folder"
    kind = Path(plain_name(path)).suffix.lstrip(".").lower() or "file"
    return f"{kind}.gz" if is_gzip(path) else kind


def pct(part: int, whole: int) -> str:
    """``part`` as a percentage of ``whole`` with one decimal; ``-`` when ``whole`` is 0."""
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def exists(path: Path | None) -> bool:
    """Whether ``path`` is given and is a regular file."""
    return path is not None and Path(path).is_file()


def is_year(quantity: str) -> bool:
    """Whether a count of the card (:func:`card_counts`) is a year (``kg first year``, ``kg last year``)."""
    return "year" in quantity


def count_cell(quantity: str, value: int | None) -> str | int | None:
    """A count as a table cell: a year as a plain integer (:func:`~tempbench_core.schema.format_year`), else as is."""
    return format_year(value) if value is not None and is_year(quantity) else value


def count_text(quantity: str, value: Any) -> str:
    """A count as a message shows it: ``n/a`` for none, a year plain (``2005``), other counts with separators."""
    if value is None:
        return "n/a"
    if is_year(quantity):
        return format_year(value)
    return f"{value:,}" if isinstance(value, int) else str(value)
