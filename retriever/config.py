"""Retriever configuration: every rule of SPEC §2 is a key with SPEC's default.

A configuration is a flat TOML file (see ``configs/README.md`` for every key,
its default, and whether SPEC fixes it or it is our *decision*). The four
configurations of SPEC §2.6 ship in ``configs/`` and are loaded by name.
Command-line overrides ``--set key=value`` are parsed as TOML values
(``--set caps=[60,200]``, ``--set temporal_filter=false``); a value that is not
valid TOML is taken as a bare string (``--set anchor=linker``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tempbench_core.digest import sha256_json
from tempbench_core.errors import ConfigError, did_you_mean
from tempbench_core.layout import shipped_configs_dir
from tempbench_core.schema import SHIPPED_CONFIGS
from tempbench_core.text import unsafe_characters
from tempbench_core.tomlfile import TOMLDecodeError, load_toml, loads_toml

# key -> allowed values, for the string-valued choice keys.
CHOICES: dict[str, tuple[str, ...]] = {
    "anchor": ("oracle", "linker"),
    "cap_scope": ("per_hop", "per_node"),
    "cap_counts": ("rows", "unique_triples"),
    "linker_match": ("substring", "word"),
    "oracle_label_ties": ("first", "none"),
    "tie_break": ("reverse_lex", "pool_order"),
    "homonym_order": ("pool", "edge_id"),
}

# Fields a line template may use (SPEC §2.5): labels, ids and the rendered time.
TEMPLATE_FIELDS = ("s", "r", "o", "t", "s_id", "r_id", "o_id", "t_start", "t_end")
#: The integer fields (years); every other field is text.
_INT_FIELDS = frozenset({"t_start", "t_end"})
#: The largest width or precision of a template field: enough to align a column of evidence,
#: small enough that no line can exhaust memory (``{s:>99999999999}`` would).
TEMPLATE_MAX_WIDTH = 100
#: Conversions a field may have: ``!s`` (the text) and ``!r`` (quoted). ``!a`` would write
#: non-ASCII letters as escapes, which no label the linker or the tie-break compares has.
_CONVERSIONS = frozenset({None, "s", "r"})
#: Presentation types of an integer field: decimal, other bases, as a float. Not ``c`` (the
#: character of a year's code point, an error for a negative year) nor ``n`` (locale-dependent:
#: the same run would differ between machines).
_INT_TYPES = frozenset("bdoxXeEfFgG%")
# [[fill]align][sign][z][#][0][width][grouping][.precision][type], Python's format-spec mini-language
_SPEC = re.compile(r"(?:(?P<fill>.)?(?P<align>[<>=^]))?(?P<sign>[-+ ])?z?#?0?(?P<width>\d+)?[,_]?"
                   r"(?:\.(?P<precision>\d+))?(?P<type>[a-zA-Z%])?", re.DOTALL)


@dataclass(frozen=True)
class RetrieverConfig:
    """One retriever configuration (SPEC §2.3-§2.6).

    Attributes
    ----------
    name:
        Run name; the run file is ``<name>.jsonl``.
    description:
        Free text, copied to the run's metadata.
    anchor:
        ``"oracle"`` (gold first-hop subject, §2.3 fixed) or ``"linker"``
        (longest-substring linker, §2.3).
    hops:
        BFS depth ``H`` (§2.4; 2, or 3 in the ablation).
    caps:
        Per-hop caps ``C[h]`` for hops 1..H (§2.4 fixed: 60, 200, 400).
    temporal_filter:
        Keep only rows with ``t_start <= t_query <= t_end`` (§2.4 fixed, on);
        off is the stale-blind ablation.
    k:
        Number of evidence lines returned (§2.5 fixed: 15; 25 for 3 hops).
    cap_scope:
        ``"per_hop"`` (decision, default): the cap bounds the rows one hop adds.
        ``"per_node"``: each frontier node contributes at most ``C[h]`` rows.
    cap_counts:
        ``"rows"`` (decision, default): the cap counts rows before the
        ``(s, r, o)`` deduplication. ``"unique_triples"``: it counts triples new
        to the pool.
    line_template:
        ``str.format`` template of an evidence line (§2.5 decision); fields
        ``s r o t s_id r_id o_id t_start t_end``.
    linker_match:
        ``"substring"`` (decision, default) or ``"word"``: the match must not
        touch a ``\\w`` character on either side.
    linker_min_length:
        Minimum length of a lowercased label the linker considers (decision: 2).
    query_includes_t_query:
        Append the query year to the BM25 query (§2.2 decision: no).
    oracle_label_ties:
        When the oracle falls back to a label that several KG entities render
        as: ``"first"`` in entity load order (§2.3 decision) or ``"none"``
        (no anchor).
    tie_break:
        Order among equal scores: ``"reverse_lex"`` on the rendered line (§2.5
        fixed) or ``"pool_order"`` (the stable sort of the card's earlier
        scripts; for diffs only).
    homonym_order:
        Order among identical lines with equal scores: ``"pool"`` order (§2.5
        decision) or ascending ``"edge_id"`` of the kept row.
    """

    name: str = "custom"
    description: str = ""
    anchor: str = "oracle"
    hops: int = 2
    caps: tuple[int, ...] = (60, 200, 400)
    temporal_filter: bool = True
    k: int = 15
    cap_scope: str = "per_hop"
    cap_counts: str = "rows"
    line_template: str = "{s} | {r} | {o} | {t}"
    linker_match: str = "substring"
    linker_min_length: int = 2
    query_includes_t_query: bool = False
    oracle_label_ties: str = "first"
    tie_break: str = "reverse_lex"
    homonym_order: str = "pool"

    def __post_init__(self) -> None:
        validate(self)

    def to_dict(self) -> dict[str, Any]:
        """Every key and value, JSON-serialisable, in declaration order."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_mapping(cls, values: dict[str, Any], source: str = "config") -> RetrieverConfig:
        """A configuration from a flat mapping (a run's ``.meta.json``); unknown keys are an error listing the valid ones."""
        return from_mapping(values, source)

    def replace(self, **changes: Any) -> RetrieverConfig:
        """A copy with some keys changed (validated)."""
        return from_mapping({**self.to_dict(), **changes}, source="replace()")


def valid_keys() -> list[str]:
    """The configuration keys, in declaration order."""
    return [f.name for f in dataclasses.fields(RetrieverConfig) if not f.name.startswith("_")]


def _expect(key: str, value: Any, expected: str, hint: str = "") -> ConfigError:
    return ConfigError(f"config key '{key}' has invalid value {value!r}{hint} (expected {expected})")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate(cfg: RetrieverConfig) -> None:
    """Raise :class:`ConfigError` naming the key, the value and what was expected."""
    for key in ("name", "description", "line_template"):
        if not isinstance(getattr(cfg, key), str):
            raise _expect(key, getattr(cfg, key), "a string")
    if not cfg.name or any(ch in cfg.name for ch in "/\\\0"):
        raise _expect("name", cfg.name, "a non-empty file name without path separators")
    unsafe = unsafe_characters(cfg.name)
    if unsafe:
        # The name becomes a file name, a table title and a report heading: a line break or an
        # ESC in it would make a file no shell lists cleanly and reshape what shows it.
        raise _expect("name", cfg.name, "a file name of printable characters, without path separators",
                      f" (it holds {', '.join(unsafe)})")
    for key, allowed in CHOICES.items():
        if getattr(cfg, key) not in allowed:
            raise _expect(key, getattr(cfg, key), "one of " + ", ".join(repr(a) for a in allowed),
                          did_you_mean(getattr(cfg, key), allowed))
    for key in ("temporal_filter", "query_includes_t_query"):
        if not isinstance(getattr(cfg, key), bool):
            raise _expect(key, getattr(cfg, key), "true or false")
    for key, low in (("hops", 1), ("k", 1), ("linker_min_length", 1)):
        if not _is_int(getattr(cfg, key)) or getattr(cfg, key) < low:
            raise _expect(key, getattr(cfg, key), f"an integer >= {low}")
    caps = cfg.caps
    if not isinstance(caps, tuple) or not all(_is_int(c) and c >= 0 for c in caps):
        raise _expect("caps", list(caps) if isinstance(caps, tuple) else caps, "a list of integers >= 0")
    if len(caps) < cfg.hops:
        raise _expect("caps", list(caps), f"at least hops={cfg.hops} entries, one cap per hop")
    problem = template_problem(cfg.line_template)
    if problem:
        raise _expect("line_template", cfg.line_template,
                      "a str.format template with fields among " + ", ".join(TEMPLATE_FIELDS) + "; widths and "
                      f"precisions at most {TEMPLATE_MAX_WIDTH}; conversions !s or !r; see configs/README.md",
                      f" ({problem})")


def template_problem(template: str) -> str | None:
    """What is wrong with a ``line_template`` (``None`` when nothing is).

    The whole template is checked, not only its field names, so that no
    evidence line can fail or exhaust memory when it is rendered: only named
    :data:`TEMPLATE_FIELDS`, without attribute access or indexing (``{s.upper}``
    prints a memory address, ``{s[3]}`` fails on a short label); conversions
    ``!s`` and ``!r``; a format spec without nested fields, with a width and
    precision of at most :data:`TEMPLATE_MAX_WIDTH` and a presentation type its
    field's type has; no control character (an evidence line is one line).
    Then the template is rendered once with a text and an integer of each
    field's type, which catches what is left (``{s:=10}``, ``{s:,}``).
    """
    unsafe = unsafe_characters(template)
    if unsafe:
        return f"it holds {', '.join(unsafe)}; an evidence line is one line of printable text"
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        return str(exc)
    for _literal, name, spec, conversion in parts:
        if name is None:
            continue
        field = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        if name not in TEMPLATE_FIELDS:
            if name == "" or name.isdigit():
                return "fields are named, e.g. {s}, not positional"
            base = re.split(r"[.\[]", name, maxsplit=1)[0]
            if base in TEMPLATE_FIELDS:
                return f"{field}: attribute access and indexing are not allowed"
            return f"unknown field {{{name}}}{did_you_mean(base, TEMPLATE_FIELDS)}"
        if conversion not in _CONVERSIONS:
            return f"{field}: conversion !{conversion} is not allowed"
        if "{" in spec or "}" in spec:
            return f"{field}: nested fields in a format spec are not allowed"
        match = _SPEC.fullmatch(spec)
        if match is None:
            return f"{field}: invalid format spec"
        for part in ("width", "precision"):
            if match.group(part) is not None and int(match.group(part)) > TEMPLATE_MAX_WIDTH:
                return f"{field}: {part} {int(match.group(part)):,} is above {TEMPLATE_MAX_WIDTH}"
        kind = match.group("type")
        as_int = name in _INT_FIELDS and conversion is None
        if kind is not None and kind not in (_INT_TYPES if as_int else {"s"}):
            return (f"{field}: presentation type {kind!r} is not for "
                    + ("an integer year (allowed: " + " ".join(sorted(_INT_TYPES)) + ")" if as_int else "text"))
    try:
        for year in (2000, -44):  # the years of the KG are integers, BCE ones negative
            template.format(**{f: year if f in _INT_FIELDS else "Ada" for f in TEMPLATE_FIELDS})
    except (ValueError, TypeError) as exc:
        return str(exc)
    return None


def from_mapping(values: dict[str, Any], source: str = "config") -> RetrieverConfig:
    """Build a config from a flat mapping; unknown keys are an error listing the valid ones."""
    keys = valid_keys()
    unknown = [k for k in values if k not in keys]
    if unknown:
        raise ConfigError(
            f"{source}: unknown config key{'s' if len(unknown) > 1 else ''} "
            + ", ".join(repr(k) + did_you_mean(k, keys) for k in unknown)
            + " (valid keys: "
            + ", ".join(keys)
            + ")"
        )
    kwargs = dict(values)
    if "caps" in kwargs:
        caps = kwargs["caps"]
        if not isinstance(caps, (list, tuple)):
            raise _expect("caps", caps, "a list of integers >= 0")
        kwargs["caps"] = tuple(caps)
    try:
        return RetrieverConfig(**kwargs)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def _read_toml(path: Path) -> dict[str, Any]:
    data = load_toml(path, "config file")
    nested = [k for k, v in data.items() if isinstance(v, dict)]
    if nested:
        raise ConfigError(f"{path}: tables are not allowed ({', '.join(nested)}); keys are flat (valid keys: {', '.join(valid_keys())})")
    return data


#: Keys whose values are TOML booleans, for the hint on ``--set temporal_filter=False``.
_BOOL_KEYS = ("temporal_filter", "query_includes_t_query")
_BARE_INT_LIST = re.compile(r"^\s*\d+(\s*,\s*\d+)+\s*$")


def parse_override(text: str) -> tuple[str, Any]:
    """Parse one ``key=value``; the value is TOML, or a bare string when it is not.

    Common slips get a hint instead of a confusing type error: a key close to a
    valid one (``kk=5``), ``True``/``False`` for a boolean (TOML writes ``true``),
    and ``caps=60,200,400`` for a list (``caps=[60,200,400]``).
    """
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected key=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    raw = raw.strip()
    if key not in valid_keys():
        raise ConfigError(f"--set {text!r}: unknown config key {key!r}{did_you_mean(key, valid_keys())} "
                          f"(valid keys: {', '.join(valid_keys())})")
    try:
        value = loads_toml(f"v = {raw}")["v"]
    except TOMLDecodeError:
        value = raw
    if key in _BOOL_KEYS and isinstance(value, str) and value.lower() in ("true", "false"):
        raise ConfigError(f"--set {text!r}: TOML booleans are lowercase (did you mean {key}={value.lower()}?)")
    if key == "caps" and isinstance(value, str) and _BARE_INT_LIST.match(value):
        raise ConfigError(f"--set {text!r}: a list is written in brackets (did you mean caps=[{value.replace(' ', '')}]?)")
    return key, value


def override_name(name: str, overrides: Sequence[str]) -> str:
    """The name of a configuration with ``--set`` overrides: ``oracle+k=5``.

    It names the run in its metadata, in table titles and in the default run
    file, so an ablation never takes the shipped configuration's name (and
    file). Characters that cannot be in a file name become ``_``; when that
    changed anything, a short hash of the overrides keeps two different
    overrides from sharing a name.
    """
    parts = []
    lossy = False
    for item in overrides:
        clean = re.sub(r"[^\w.=-]+", "_", item.replace(" ", "")).strip("_")
        lossy = lossy or clean != item
        if clean:
            parts.append(clean)
    if lossy:
        parts.append(sha256_json(list(overrides))[:8])
    return "+".join([name, *parts])


def looks_like_path(text: str) -> bool:
    """A ``--config`` value is a file path only when it looks like one: a separator or a ``.toml`` suffix."""
    return "/" in text or "\\" in text or (os.sep in text) or text.lower().endswith(".toml")


def toml_value(value: Any) -> str:
    """``value`` as ``--set`` would write it: TOML, except a string, which ``--set`` takes bare (``anchor=linker``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(toml_value(v) for v in value) + "]"
    return str(value)


def _check_once(items: Sequence[str]) -> None:
    """A key set twice (``--set k=5 --set k=7``) is an error: which value was meant cannot be known.

    (Letting the last win would also be a choice the run's name could
    contradict, ``oracle+k=5+k=7`` for a run made with k=7.)
    """
    by_key: dict[str, list[str]] = {}
    for item in items:
        by_key.setdefault(item.split("=", 1)[0].strip(), []).append(item)
    twice = {k: v for k, v in by_key.items() if len(v) > 1}
    if twice:
        key, given = next(iter(twice.items()))
        raise ConfigError(f"--set {' --set '.join(given)}: the key {key!r} is given {len(given)} times; "
                          "give each key once")


def load_config(name_or_path: str | Path, overrides: Sequence[str] = (), **settings: Any) -> RetrieverConfig:
    """Load a shipped configuration by name, or a TOML file, then apply overrides.

    Parameters
    ----------
    name_or_path:
        ``oracle``, ``nonoracle``, ``stale_blind``, ``hop3_k25`` (SPEC §2.6) or a
        path to a TOML file. A text is a path only when it looks like one
        (:func:`looks_like_path`), so ``oracle`` is the shipped configuration
        even where the current directory holds a file named ``oracle``. A file
        without ``name`` takes its file stem.
    overrides:
        ``key=value`` strings as ``--set`` takes them, values parsed as TOML.
    **settings:
        Overrides from Python, as values: ``load_config("oracle", k=5,
        caps=[60, 200])`` is ``--set k=5 --set caps=[60,200]``, with the same
        validation and hints (an unknown key gets a "did you mean").

    Returns
    -------
    RetrieverConfig
        With overrides, its name gains them (:func:`override_name`:
        ``oracle+k=5``, the name ``tempbench run`` gives the run) unless one
        sets ``name``.

    Raises
    ------
    ConfigError
        An unknown configuration or key, an invalid value, or a key given
        twice (``--set k=5 --set k=7``, or in both ``overrides`` and
        ``settings``).
    """
    if settings:
        unknown = [k for k in settings if k not in valid_keys()]
        if unknown:
            raise ConfigError(f"load_config({str(name_or_path)!r}): unknown config key "
                              + ", ".join(repr(k) + did_you_mean(k, valid_keys()) for k in unknown)
                              + f" (valid keys: {', '.join(valid_keys())})")
    # the Python values are used as they are; their text names the configuration as --set would
    given = [*overrides, *(f"{k}={toml_value(v)}" for k, v in settings.items())]
    text = str(name_or_path)
    if isinstance(name_or_path, Path) or looks_like_path(text):
        path = Path(text)
        if path.is_dir():
            raise ConfigError(f"config {text!r} is a folder; expected a configuration TOML file or a shipped name "
                              f"({', '.join(SHIPPED_CONFIGS)})")
        if not path.is_file():
            stem = Path(text).stem
            hint = (f"; the shipped configuration is named {stem!r} (--config {stem})" if stem in SHIPPED_CONFIGS
                    else "")
            raise ConfigError(f"config file {text!r} not found{hint}")
    elif text in SHIPPED_CONFIGS:
        path = shipped_configs_dir() / f"{text}.toml"
    else:
        raise ConfigError(f"unknown configuration {text!r}{did_you_mean(text, SHIPPED_CONFIGS)}: the shipped ones are "
                          f"{', '.join(SHIPPED_CONFIGS)}; a file path needs a '/' or a .toml suffix")
    values = _read_toml(path)
    values.setdefault("name", path.stem)
    base = from_mapping(values, source=str(path))
    if not given:
        return base
    parsed = [parse_override(item) for item in overrides]  # each in turn: the first bad one is the error
    _check_once(given)
    for key, value in parsed:
        values[key] = value
    values.update(settings)
    if "name" not in settings and not any(item.split("=", 1)[0].strip() == "name" for item in overrides):
        values["name"] = override_name(values["name"], given)
    source = " ".join([*(f"--set {item}" for item in overrides),
                       *(f"{k}={v!r}" for k, v in settings.items())])
    return from_mapping(values, source=f"{source} (on {path.name})")


#: Every key at its default (SPEC §2's fixed rules and this project's decisions): the one place a default is
#: written; the retriever's parts take theirs from here.
DEFAULTS = RetrieverConfig(name="defaults")
