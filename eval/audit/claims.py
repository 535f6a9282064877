"""The claims of the dataset card, read from ``configs/paper_numbers.toml`` (SPEC §4).

Each claim names a computation of :data:`eval.audit.registry.COMPUTE` and its
parameters, the published value, its kind (``count``, ``rate``, ``range``: the
tolerance class of :mod:`eval.audit.verdict`) and the command that reproduces
it. Rows whose ``section`` ends in ``-alt`` are alternative readings of an
ambiguous claim: shown, but left out of the verdict count. ``by_construction``
lists the data origins (:data:`tempbench_core.provenance.ORIGINS`, the
release excepted) on which the claim holds because tempbench's builder made
it so: there its verdict is ``by-construction``.
"""

from __future__ import annotations

import functools
import inspect
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.audit.registry import COMPUTE
from eval.audit.verdict import tolerances_from_toml
from tempbench_core.errors import ConfigError
from tempbench_core.layout import shipped_configs_dir
from tempbench_core.provenance import ORIGINS
from tempbench_core.schema import SPLIT_CHOICES
from tempbench_core.tomlfile import load_toml


@dataclass(frozen=True)
class Claim:
    """One row of ``configs/paper_numbers.toml``."""

    id: str
    section: str
    group: str
    what: str
    paper: Any
    kind: str
    compute: str
    params: dict[str, Any]
    command: str
    paper_of: int | None = None
    note: str | None = None
    tolerance: dict[str, float] = field(default_factory=dict)
    scales: bool = False
    share: str | None = None
    by_construction: tuple[str, ...] = ()


#: The origins a claim may be true by construction on (the release is what the claims are about).
CONSTRUCTED_ORIGINS = tuple(o for o in ORIGINS if o != "release")


def _by_construction(p: Path, cid: str, value: Any) -> tuple[str, ...]:
    """A claim's ``by_construction`` list, checked: origins of :data:`CONSTRUCTED_ORIGINS`, each once."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{p}: claim {cid!r} has by_construction = {value!r} (expected a list of origins, "
                          f"e.g. [\"generated\", \"built\"])")
    bad = [v for v in value if v not in CONSTRUCTED_ORIGINS]
    if bad or len(set(value)) != len(value):
        raise ConfigError(f"{p}: claim {cid!r} has by_construction = {value!r} (expected distinct origins among "
                          f"{', '.join(CONSTRUCTED_ORIGINS)}; the release is never true by construction)")
    return tuple(value)


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def paper_value_problem(kind: str, value: Any) -> str | None:
    """Why ``value`` cannot be a published value of ``kind`` (``None`` when it can).

    A published number that no claim can have (TOML writes ``nan`` and ``inf``
    too) would show as "paper nan" with a delta of ±inf: it is refused when
    the file is read. A count is a whole number >= 0, a rate a share in
    [0, 1], a range ``[low, high]`` of two such shares with ``low <= high``.
    """
    if kind == "count":
        ok = _finite_number(value) and value >= 0 and float(value).is_integer()
        return None if ok else "expected a whole number >= 0 (a count)"
    if kind == "rate":
        return None if _finite_number(value) and 0 <= value <= 1 else "expected a share in [0, 1] (9.86% is 0.0986)"
    if kind == "range":
        ok = (isinstance(value, list) and len(value) == 2 and all(_finite_number(v) and 0 <= v <= 1 for v in value)
              and value[0] <= value[1])
        return None if ok else "expected [low, high], two shares in [0, 1] with low <= high"
    return None


def paper_numbers_path() -> Path:
    """The shipped ``paper_numbers.toml``."""
    return shipped_configs_dir() / "paper_numbers.toml"


def shipped_tolerances() -> dict[str, dict[str, float]]:
    """The tolerance classes of the shipped ``paper_numbers.toml``: what a claims file of one's own leaves out."""
    return {kind: dict(bounds) for kind, bounds in _shipped_tolerances().items()}


@functools.cache
def _shipped_tolerances() -> dict[str, dict[str, float]]:
    p = paper_numbers_path()
    try:
        return tolerances_from_toml(load_toml(p, "paper numbers file").get("tolerance"))
    except ValueError as exc:
        raise ConfigError(f"{p}: {exc}") from None


def _params_problem(compute: str, params: Any) -> str | None:
    """What is wrong with a claim's ``params`` for its compute function (``None``: nothing), said with the valid names."""
    if not isinstance(params, dict):
        return f"params is {params!r} (expected a table of the compute function's parameters)"
    signature = inspect.signature(COMPUTE[compute])
    accepted = list(signature.parameters.values())[1:]  # the first is the audit context
    if any(par.kind is inspect.Parameter.VAR_KEYWORD for par in accepted):
        return None
    names = [par.name for par in accepted]
    unknown = [k for k in params if k not in names]
    if unknown:
        return (f"compute {compute!r} takes no param {unknown[0]!r} (its params: {', '.join(names) or 'none'})")
    missing = [par.name for par in accepted if par.default is inspect.Parameter.empty and par.name not in params
               and par.kind is not inspect.Parameter.VAR_POSITIONAL]
    if missing:
        return f"compute {compute!r} needs param {missing[0]!r} (its params: {', '.join(names)})"
    if "split" in params and params["split"] not in SPLIT_CHOICES:  # else an error only when the claim is computed
        return f"params split = {params['split']!r} (expected one of {', '.join(SPLIT_CHOICES)})"
    return None


def load_claims(path: str | Path | None = None) -> tuple[list[Claim], dict[str, dict[str, float]]]:
    """Read the claims and the tolerance classes; validate every row."""
    p = Path(path) if path is not None else paper_numbers_path()
    data = load_toml(p, "paper numbers file")
    try:
        tolerances = tolerances_from_toml(data.get("tolerance"), shipped_tolerances())
    except ValueError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    claims = []
    seen: set[str] = set()
    required = ("id", "section", "group", "what", "paper", "kind", "compute", "command")
    rows = data.get("claim", [])
    if not isinstance(rows, list) or not rows:
        raise ConfigError(f"{p}: no [[claim]] tables (expected the card's claims, one [[claim]] table each, as in "
                          "the shipped configs/paper_numbers.toml)")
    for i, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            raise ConfigError(f"{p}: claim #{i} is {row!r}, not a table (expected a [[claim]] table)")
        for key in ("params", "tolerance"):
            if not isinstance(row.get(key, {}), dict):
                raise ConfigError(f"{p}: claim {row.get('id', f'#{i}')!r} has {key} = {row[key]!r}, not a table "
                                  f"(expected {key} = {{name = value, ...}})")
        missing = [k for k in required if k not in row]
        if missing:
            raise ConfigError(f"{p}: claim #{i} lacks {', '.join(missing)}")
        if row["id"] in seen:
            raise ConfigError(f"{p}: claim id {row['id']!r} appears twice")
        seen.add(row["id"])
        if row["kind"] not in tolerances:
            raise ConfigError(f"{p}: claim {row['id']!r} has kind {row['kind']!r} (expected one of {', '.join(tolerances)})")
        if row["compute"] not in COMPUTE:
            raise ConfigError(f"{p}: claim {row['id']!r} names compute {row['compute']!r} (known: {', '.join(sorted(COMPUTE))})")
        params_problem = _params_problem(row["compute"], row.get("params", {}))
        if params_problem:
            raise ConfigError(f"{p}: claim {row['id']!r}: {params_problem}")
        problem = paper_value_problem(row["kind"], row["paper"])
        if problem:
            raise ConfigError(f"{p}: claim {row['id']!r} has paper = {row['paper']!r}: {problem}")
        for name, tol in dict(row.get("tolerance", {})).items():
            if not _finite_number(tol) or tol < 0:
                raise ConfigError(f"{p}: claim {row['id']!r} has tolerance {name} = {tol!r} (expected a finite number >= 0)")
        claims.append(Claim(
            id=row["id"], section=str(row["section"]), group=row["group"], what=row["what"], paper=row["paper"],
            kind=row["kind"], compute=row["compute"], params=dict(row.get("params", {})), command=row["command"],
            paper_of=row.get("paper_of"), note=row.get("note"), tolerance=dict(row.get("tolerance", {})),
            scales=bool(row.get("scales", False)), share=row.get("share"),
            by_construction=_by_construction(p, row["id"], row.get("by_construction", [])),
        ))
    ids = {c.id for c in claims}
    for c in claims:
        if c.share is not None and c.share not in ids:
            raise ConfigError(f"{p}: claim {c.id!r} names share {c.share!r}, which is no claim id")
        if c.share is not None and not c.scales:
            raise ConfigError(f"{p}: claim {c.id!r} has a share row but is not marked scales = true")
    return claims, tolerances
