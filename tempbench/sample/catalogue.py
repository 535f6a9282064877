"""The relation catalogue of the generated world, read from a data file (SPEC §5).

Which Wikidata properties the generated KG uses, between which entity types,
how often and with which run lengths is data, not code: it lives in
``tempbench/sample/relations.toml``, shipped inside the package and read
through :mod:`importlib.resources` so that an installed wheel finds it too. The
file's header comment documents every field.

:func:`load_catalogue` validates the whole file on load: an unknown entity
type, a missing or unknown field, a value of the wrong type or a mirror without
a label is a :class:`~tempbench_core.errors.ConfigError` naming the file and
the ``[[relation]]`` row, never a ``KeyError`` deep inside the generator.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tempbench_core.errors import ConfigError, did_you_mean
from tempbench_core.tomlfile import load_toml

__all__ = [
    "TYPE_NAMES", "COUNTRY", "CITY", "PERSON", "ORG", "UNIVERSITY", "TEAM", "PARTY", "POSITION", "AWARD", "EVENT",
    "KINDS", "RelSpec", "Catalogue", "CATALOGUE_FILE", "shipped_catalogue_path", "load_catalogue", "default_catalogue",
]

# Entity types, in internal index order (the generator's entity blocks follow it;
# the label code in world.py is written per type, so the list is code, not data).
COUNTRY, CITY, PERSON, ORG, UNIVERSITY, TEAM, PARTY, POSITION, AWARD, EVENT = range(10)
TYPE_NAMES = ("country", "city", "person", "organisation", "university", "team", "party", "position", "award", "event")
KINDS = ("career", "run", "oneoff", "succession")
CATALOGUE_FILE = "relations.toml"
# properties the generator refers to by id (office holders' P39/P1308 rows)
REQUIRED_PIDS = ("P6", "P35", "P39", "P1308")

_PID = re.compile(r"P[1-9][0-9]*")
_REQUIRED = ("pid", "label", "subject", "object", "kind", "mean", "weight")
_OPTIONAL = {"mirror": None, "hub": 1.1, "dated": 0.0}


@dataclass(frozen=True)
class RelSpec:
    """How one relation's facts are drawn (one ``[[relation]]`` row of the catalogue).

    ``subj``/``obj`` are entity type codes (indexes into :data:`TYPE_NAMES`), in
    the file's order; ``weight`` is the relation's share of the row budget
    before mirrors; ``mean`` the mean run length in years (geometric);
    ``mirror`` the property emitted for the inverse statement (``"sym"`` for
    the same property swapped); ``hub`` the Zipf exponent of object popularity;
    ``dated`` the share of facts set in their event's own year.
    """

    pid: str
    label: str
    subj: tuple[int, ...]
    obj: tuple[int, ...]
    kind: str
    mean: float
    weight: float
    mirror: str | None = None
    hub: float = 1.1
    dated: float = 0.0


@dataclass(frozen=True)
class Catalogue:
    """The validated catalogue: named relations in file order, mirror labels, type shares."""

    relations: tuple[RelSpec, ...]
    mirror_labels: dict[str, str]
    type_shares: dict[int, float]
    path: str


def shipped_catalogue_path() -> Path:
    """Path of the catalogue shipped with the package (a real file in a source tree or an installed wheel)."""
    return Path(str(resources.files("tempbench.sample").joinpath(CATALOGUE_FILE)))


@functools.lru_cache(maxsize=1)
def default_catalogue() -> Catalogue:
    """The shipped catalogue, loaded and validated once per process.

    :func:`importlib.resources.as_file` gives a real file even when the package
    is imported from a zip archive.
    """
    with resources.as_file(resources.files("tempbench.sample").joinpath(CATALOGUE_FILE)) as path:
        return load_catalogue(path)


def load_catalogue(path: str | Path) -> Catalogue:
    """Read and validate a relation catalogue file (format: the header of ``relations.toml``).

    Raises
    ------
    ConfigError
        Naming ``path`` (and the ``[[relation]]`` row) for an unknown entity
        type, a missing or unknown field, a wrong value or type, a duplicate
        property, a mirror without a label, or a property the generator needs
        that is absent. A missing file is a ``MissingDataError``.
    """
    where = str(path)
    data = load_toml(path, what="relation catalogue")
    unknown = set(data) - {"type_shares", "mirror_labels", "relation"}
    if unknown:
        word = sorted(unknown)[0]
        raise ConfigError(f"{where}: unknown table {word!r}{did_you_mean(word, ('type_shares', 'mirror_labels', 'relation'))} "
                          "(expected [type_shares], [mirror_labels] and [[relation]] rows)")
    shares = _type_shares(where, data.get("type_shares"))
    mirror_labels = _mirror_labels(where, data.get("mirror_labels"))
    rows = data.get("relation")
    if not isinstance(rows, list) or not rows:
        raise ConfigError(f"{where}: no [[relation]] rows (expected at least one relation)")
    relations = tuple(_relation(where, i, row) for i, row in enumerate(rows, start=1))
    seen: set[str] = set()
    for i, spec in enumerate(relations, start=1):
        if spec.pid in seen:
            raise ConfigError(f"{where}: [[relation]] #{i}: property {spec.pid} is listed twice (expected each property once)")
        seen.add(spec.pid)
        if spec.mirror not in (None, "sym") and spec.mirror not in mirror_labels:
            raise ConfigError(f"{where}: [[relation]] #{i} ({spec.pid}): mirror {spec.mirror} has no label "
                              f"(expected an entry {spec.mirror} = \"…\" in [mirror_labels])")
    present = seen | set(mirror_labels)
    missing = [p for p in REQUIRED_PIDS if p not in present]
    if missing:
        raise ConfigError(f"{where}: the generator needs properties {', '.join(missing)} "
                          "(expected them as [[relation]] rows or mirrors)")
    return Catalogue(relations, mirror_labels, shares, where)


def _type_code(where: str, context: str, name: Any) -> int:
    if not isinstance(name, str) or name not in TYPE_NAMES:
        raise ConfigError(f"{where}: {context}: unknown entity type {name!r}{did_you_mean(name, TYPE_NAMES)} "
                          f"(expected one of {', '.join(TYPE_NAMES)})")
    return TYPE_NAMES.index(name)


def _number(where: str, context: str, key: str, value: Any, low: float = 0.0) -> float | int:
    # bool is an int subclass: reject it explicitly (weight = true is a typo)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= low:
        raise ConfigError(f"{where}: {context}: {key} = {value!r} (expected a number >= {low:g})")
    return value


def _type_shares(where: str, table: Any) -> dict[int, float]:
    if not isinstance(table, dict) or not table:
        raise ConfigError(f"{where}: missing [type_shares] (expected a share for each entity type but country and event)")
    shares: dict[int, float] = {}
    for name, value in table.items():
        code = _type_code(where, "[type_shares]", name)
        if code in (COUNTRY, EVENT):
            raise ConfigError(f"{where}: [type_shares]: {name} cannot have a share "
                              "(expected types other than country, set per scale, and event, which take the rest)")
        shares[code] = _number(where, "[type_shares]", name, value)
    missing = [TYPE_NAMES[t] for t in range(len(TYPE_NAMES)) if t not in shares and t not in (COUNTRY, EVENT)]
    if missing:
        raise ConfigError(f"{where}: [type_shares]: missing field {missing[0]} (expected a share for every type but country and event)")
    return shares


def _mirror_labels(where: str, table: Any) -> dict[str, str]:
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: mirror_labels must be a table (expected [mirror_labels] with PID = \"label\" lines)")
    for pid, label in table.items():
        if not _PID.fullmatch(pid) or not isinstance(label, str) or not label:
            raise ConfigError(f"{where}: [mirror_labels]: {pid} = {label!r} (expected a property id P… and a non-empty label)")
    return dict(table)


def _relation(where: str, i: int, row: Any) -> RelSpec:
    context = f"[[relation]] #{i}"
    if not isinstance(row, dict):
        raise ConfigError(f"{where}: {context}: not a table (expected [[relation]] rows)")
    if isinstance(row.get("pid"), str):
        context += f" ({row['pid']})"
    for key in _REQUIRED:
        if key not in row:
            raise ConfigError(f"{where}: {context}: missing field {key!r} (expected fields {', '.join(_REQUIRED)})")
    extra = [k for k in row if k not in _REQUIRED and k not in _OPTIONAL]
    if extra:
        allowed = _REQUIRED + tuple(_OPTIONAL)
        raise ConfigError(f"{where}: {context}: unknown field {extra[0]!r}{did_you_mean(extra[0], allowed)} "
                          f"(expected fields among {', '.join(allowed)})")
    pid, label, kind = row["pid"], row["label"], row["kind"]
    if not isinstance(pid, str) or not _PID.fullmatch(pid):
        raise ConfigError(f"{where}: {context}: pid = {pid!r} (expected a property id such as \"P27\")")
    if not isinstance(label, str) or not label.strip():
        raise ConfigError(f"{where}: {context}: label = {label!r} (expected a non-empty English label)")
    if kind not in KINDS:
        raise ConfigError(f"{where}: {context}: kind = {kind!r}{did_you_mean(kind, KINDS)} (expected one of {', '.join(KINDS)})")
    types = []
    for key in ("subject", "object"):
        value = row[key]
        if not isinstance(value, list) or not value:
            raise ConfigError(f"{where}: {context}: {key} = {value!r} (expected a non-empty list of entity types)")
        types.append(tuple(_type_code(where, f"{context} {key}", name) for name in value))
    mean = _number(where, context, "mean", row["mean"])
    if kind in ("run", "succession") and not mean >= 1:
        raise ConfigError(f"{where}: {context}: mean = {mean!r} (expected a mean run length >= 1 year for kind {kind!r})")
    mirror = row.get("mirror", _OPTIONAL["mirror"])
    if mirror is not None and (not isinstance(mirror, str) or not (mirror == "sym" or _PID.fullmatch(mirror))):
        raise ConfigError(f"{where}: {context}: mirror = {mirror!r} (expected a property id or \"sym\")")
    dated = _number(where, context, "dated", row.get("dated", _OPTIONAL["dated"]))
    if dated > 1:
        raise ConfigError(f"{where}: {context}: dated = {dated!r} (expected a share in [0, 1])")
    return RelSpec(pid, label, types[0], types[1], kind, mean, _number(where, context, "weight", row["weight"]),
                   mirror, _number(where, context, "hub", row.get("hub", _OPTIONAL["hub"])), dated)
