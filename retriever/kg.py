"""The TGB edge list as column arrays (SPEC §1.1).

A KG row ``i`` (0-based data row, CSV load order) is the quadruple
``(s=head[i], r=relation[i], o=tail[i], t=year[i])``; it is also BM25 document
``i`` and edge id ``i``. Entities and relations are interned to dense integer ids
in *load order*: an entity's place is its first row, the head before the tail
within a row; a relation's place is its first row.

The loader never builds per-row Python objects that outlive a chunk: the CSV is
parsed by pandas' C engine in chunks, ids are interned with :func:`pandas.factorize`
and a dictionary over the *distinct* ids only. A slow, line-by-line scan with the
:mod:`csv` module runs only after the fast path has found something wrong, to
report the exact 1-based physical line.

Decision (extra columns): columns other than ``ts``/``timestamp``, ``head``,
``tail`` and ``relation_type`` are allowed and ignored, but every row must still
have as many fields as the header (a ragged row is an error). Files with extra
columns therefore get a second, line-by-line pass that checks the field count.

Header read by position: TGB's own loader reads ``tkgl-smallpedia_edgelist.csv``
by position (timestamp, head, tail, relation type) and skips the first line
whatever it says. A header with exactly four columns whose names are not the
recognised ones is therefore read the same way, by position; the fact is kept
on the :class:`KG` (``header_by_position``) and by :func:`read_edgelist_header`,
so that ``tempbench check`` and the run metadata can say it. A recognised name
standing at another column than its positional role (``head,ts,x,y``) is an
error, as is a header of another column count that lacks a required name:
neither is ever read silently.

A ``.gz`` file is decompressed on the fly (SPEC §1.5 names plus ``.gz``).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from retriever.strings import IdLookup
from tempbench_core.errors import InputError
from tempbench_core.jsonl import GZIP_ERRORS, gzip_problem, open_input, physical_lines, require_file
from tempbench_core.schema import format_year

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

REQUIRED = ("ts", "head", "tail", "relation_type")
TS_ALIASES = ("ts", "timestamp")
EXPECTED_HEADER = ("header ts,head,tail,relation_type (timestamp accepted for ts), "
                   "or any 4-column header, read by position as TGB's loader does")
# An integer year: optional sign, ASCII digits, optional surrounding blanks
# (int() alone would also take '1_994' and non-ASCII digits). At most 18 digits, so
# that every year fits the int64 year column with room to compute spans.
_STR = frozenset((str,))
_INT = re.compile(r"[ \t]*[+-]?[0-9]{1,18}[ \t]*")
# An integer of any length: what is out of range rather than not an integer.
_ANY_INT = re.compile(r"[ \t]*[+-]?[0-9]+[ \t]*")
#: The range of a ``ts`` (what :data:`_INT` accepts), for the message of one outside it.
TS_RANGE_TEXT = f"an integer year from {format_year(-(10**18 - 1))} to {format_year(10**18 - 1)} (18 digits)"
_CHUNK_ROWS = 2_000_000


@dataclass(frozen=True, eq=False)
class KG:
    """A temporal KG in column form (SPEC §1.1).

    Attributes
    ----------
    head, tail, relation:
        ``int32`` arrays of length ``n_rows``: interned entity / relation ids.
    year:
        ``int64`` array of length ``n_rows``: the row's ``ts``.
    entity_ids, relation_ids:
        The original id strings, index = interned id, in load order.
    entity_index, relation_index:
        Inverse maps id string -> interned id (built when not given).
    source:
        The file the KG was read from, if any.
    header:
        The column names of the file's first line (``None`` when unknown, e.g.
        a KG loaded from the index cache).
    header_by_position:
        The header named none of the recognised columns and was read by
        position (timestamp, head, tail, relation type), as TGB's loader does.
    """

    head: np.ndarray
    tail: np.ndarray
    relation: np.ndarray
    year: np.ndarray
    entity_ids: Sequence[str]
    relation_ids: Sequence[str]
    entity_index: Mapping[str, int] = field(default=None)  # type: ignore[assignment]
    relation_index: Mapping[str, int] = field(default=None)  # type: ignore[assignment]
    source: str | None = None
    header: tuple[str, ...] | None = None
    header_by_position: bool = False

    def __post_init__(self) -> None:
        if self.entity_index is None:
            object.__setattr__(self, "entity_index", IdLookup.of(self.entity_ids))
        if self.relation_index is None:
            object.__setattr__(self, "relation_index", IdLookup.of(self.relation_ids))

    @property
    def n_rows(self) -> int:
        """Number of rows (= BM25 documents = edge ids)."""
        return int(self.head.shape[0])

    @property
    def n_entities(self) -> int:
        """Number of distinct entities (ids seen as head or tail)."""
        return len(self.entity_ids)

    @property
    def n_relations(self) -> int:
        """Number of distinct relation ids."""
        return len(self.relation_ids)

    def to_networkx(self) -> nx.MultiGraph:
        """The entity graph as an undirected :class:`networkx.MultiGraph`.

        Nodes are entity id strings in load order; one edge per row, keyed by the
        row id, with attributes ``relation`` (id string), ``year`` and ``row``. Meant
        for analysis, not for the retriever's hot path.
        """
        import networkx as nx

        graph = nx.MultiGraph()
        graph.add_nodes_from(self.entity_ids)
        ents, rels = self.entity_ids, self.relation_ids
        graph.add_edges_from(
            (ents[h], ents[t], i, {"relation": rels[r], "year": y, "row": i})
            for i, (h, t, r, y) in enumerate(
                zip(self.head.tolist(), self.tail.tolist(), self.relation.tolist(), self.year.tolist(), strict=True)
            )
        )
        return graph


def load_edgelist(path: str | Path) -> KG:
    """Read a TGB edge list (SPEC §1.1) into a :class:`KG`.

    Parameters
    ----------
    path:
        CSV with header ``ts,head,tail,relation_type`` (``timestamp`` accepted for
        ``ts``; columns in any order; extra columns ignored), or any 4-column
        header, then read by position. UTF-8, optional BOM, LF or CRLF line
        endings, blank lines skipped; ``.gz`` decompressed. Rows need not be sorted.

    Returns
    -------
    KG
        Rows in CSV order; entities and relations interned in load order.

    Raises
    ------
    MissingDataError
        The file does not exist.
    InputError
        Missing column, non-integer ``ts``, empty id, ragged row, undecodable
        bytes, or no data rows; with the 1-based physical line number.
    """
    path = require_file(path, "KG edge list")
    header = read_edgelist_header(path)
    names, columns = list(header.names), dict(header.columns)
    try:
        arrays = _fast_load(path, names, columns)
    except _Suspect as exc:
        _locate_error(path, names, columns)
        raise InputError(path, None, f"could not parse the edge list ({exc.__cause__ or exc})", "a TGB edge list") from exc
    if len(names) > len(REQUIRED):
        # pandas pads a short row with "" and an ignored extra column is never
        # checked, so a row missing only extra fields would pass silently; the
        # line-by-line scan enforces the field count (only for such files).
        _locate_error(path, names, columns)
    head, tail, relation, year, entity_ids, relation_ids = arrays
    if head.shape[0] == 0:
        raise InputError(path, None, "no data rows", "at least one row after the header")
    return KG(head, tail, relation, year, entity_ids, relation_ids, source=str(path),
              header=header.names, header_by_position=header.by_position)


class _Suspect(Exception):
    """Raised by the fast path when the file needs the line-accurate scan."""


@dataclass(frozen=True)
class EdgelistHeader:
    """The first line of an edge list and how its columns are read (SPEC §1.1).

    Attributes
    ----------
    names:
        Column names of line 1, stripped.
    columns:
        Position of each required column (``ts``, ``head``, ``tail``,
        ``relation_type``).
    by_position:
        ``True`` when the names were not recognised and the four columns are
        read by position, as TGB's own loader reads the file.
    """

    names: tuple[str, ...]
    columns: dict[str, int]
    by_position: bool = False

    def describe(self) -> str:
        """One line for people: the header and how it is read."""
        shown = ",".join(self.names)
        if self.by_position:
            return f"header {shown!r} read by position as ts,head,tail,relation_type (as TGB's loader does)"
        return f"header {shown!r}"


def read_edgelist_header(path: str | Path) -> EdgelistHeader:
    """Read and interpret line 1 of an edge list (see the module docstring for the rules).

    Raises
    ------
    MissingDataError
        The file does not exist.
    InputError
        Undecodable or empty header, a duplicated column, or a header that is
        neither recognised nor 4 columns (or that puts a recognised name at
        another column than its positional role).
    """
    path = require_file(path, "KG edge list")
    names, columns = _read_header(path)
    missing = [name for name in REQUIRED if name not in columns]
    if not missing:
        return EdgelistHeader(tuple(names), columns)
    if len(names) == len(REQUIRED):
        # TGB reads this file by position whatever its first line says; a
        # recognised name elsewhere than its role would contradict that reading.
        clash = [f"{name!r} in column {pos + 1}" for name, pos in columns.items() if REQUIRED[pos] != name]
        if clash:
            raise InputError(
                path, 1, f"header {names} names {', '.join(clash)} but lacks {', '.join(missing)}: "
                "it can be read neither by name nor by position", EXPECTED_HEADER,
            )
        return EdgelistHeader(tuple(names), {name: pos for pos, name in enumerate(REQUIRED)}, by_position=True)
    raise InputError(path, 1, f"missing column(s) {', '.join(missing)} in header {names}", EXPECTED_HEADER)


def _read_header(path: Path) -> tuple[list[str], dict[str, int]]:
    """Column names of line 1 and the positions of the required columns it names."""
    try:
        with open_input(path) as handle:
            raw = handle.readline()
    except GZIP_ERRORS as exc:
        raise InputError(path, 1, gzip_problem(exc), "a complete gzip file") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, 1, f"header is not valid UTF-8 ({exc.reason})", EXPECTED_HEADER) from exc
    text = text.rstrip("\r\n")
    if not text.strip():
        raise InputError(path, 1, "empty first line where the header belongs", EXPECTED_HEADER)
    try:
        names = [name.strip() for name in next(csv.reader([text]))]
    except csv.Error as exc:  # e.g. a lone "\r" or (Python < 3.11) a NUL inside the header
        raise InputError(path, 1, f"malformed CSV header ({exc})", EXPECTED_HEADER) from None
    columns: dict[str, int] = {}
    for pos, name in enumerate(names):
        key = "ts" if name in TS_ALIASES else name
        if key in REQUIRED:
            if key in columns:
                raise InputError(path, 1, f"column {key!r} appears twice in the header {names}", EXPECTED_HEADER)
            columns[key] = pos
    return names, columns


def _fast_load(path: Path, names: list[str], columns: dict[str, int]) -> tuple[Any, ...]:
    """Chunked C-engine parse; raises :class:`_Suspect` on anything irregular."""
    import pandas as pd

    entity_index: dict[str, int] = {}
    relation_index: dict[str, int] = {}
    year_of: dict[str, int] = {}
    heads, tails, rels, years = [], [], [], []
    synthetic = [f"c{i}" for i in range(len(names))]
    try:
        reader = pd.read_csv(
            path,
            header=0,
            names=synthetic,
            dtype=object,
            na_filter=False,
            keep_default_na=False,
            engine="c",
            encoding="utf-8-sig",
            skip_blank_lines=True,
            chunksize=_CHUNK_ROWS,
        )
        with reader:
            for chunk in reader:
                n = len(chunk)
                ts = chunk[synthetic[columns["ts"]]].to_numpy(dtype=object)
                both = np.empty(2 * n, dtype=object)
                # Interleaving puts each row's head before its tail, so
                # first-appearance order of the pair column is load order.
                both[0::2] = chunk[synthetic[columns["head"]]].to_numpy(dtype=object)
                both[1::2] = chunk[synthetic[columns["tail"]]].to_numpy(dtype=object)
                rel = chunk[synthetic[columns["relation_type"]]].to_numpy(dtype=object)
                del chunk
                ent_codes = _intern(both, entity_index)
                heads.append(ent_codes[0::2].copy())
                tails.append(ent_codes[1::2].copy())
                del both, ent_codes
                rels.append(_intern(rel, relation_index))
                years.append(_years(ts, year_of))
    except _Suspect:
        raise
    except (ValueError, UnicodeDecodeError, *GZIP_ERRORS) as exc:  # pandas ParserError is a ValueError
        raise _Suspect(str(exc)) from exc

    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)

    return (
        cat(heads, np.int32),
        cat(tails, np.int32),
        cat(rels, np.int32),
        cat(years, np.int64),
        list(entity_index),
        list(relation_index),
    )


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pandas' codes and distinct values of the text fields of a chunk, in first-appearance order.

    The CSV reader gives strings only (``na_filter=False``), so no missing
    value can take the sentinel code -1: asking for the sentinel spares
    pandas its scan for missing values, and a -1 is refused all the same.
    """
    import pandas as pd

    codes, uniques = pd.factorize(values, sort=False)
    if len(codes) and codes.min() < 0:
        raise _Suspect("a missing value")
    return codes, uniques


def _intern(values: np.ndarray, index: dict[str, int]) -> np.ndarray:
    """Global ids of ``values``; new ids get the next number in first-appearance order."""
    codes, uniques = _factorize(values)
    distinct = uniques.tolist()
    lut = np.fromiter(map(index.get, distinct, repeat(-1)), dtype=np.int64, count=len(distinct))
    unseen = np.flatnonzero(lut < 0)
    if len(unseen):
        # ids met for the first time, numbered in their order of first appearance (factorize's order)
        new = [distinct[k] for k in unseen.tolist()]
        if not set(map(type, new)) <= _STR or not all(map(str.strip, new)):
            raise _Suspect("empty id")
        ids = np.arange(len(index), len(index) + len(new), dtype=np.int64)
        index.update(zip(new, ids.tolist(), strict=True))
        lut[unseen] = ids
    return lut[codes]


def _years(values: np.ndarray, cache: dict[str, int]) -> np.ndarray:
    codes, uniques = _factorize(values)
    lut = np.empty(len(uniques), dtype=np.int64)
    for k, value in enumerate(uniques.tolist()):
        year = cache.get(value)
        if year is None:
            if not isinstance(value, str) or not _INT.fullmatch(value):
                raise _Suspect("non-integer ts")
            year = cache[value] = int(value)
        lut[k] = year
    return lut[codes]


def _locate_error(path: Path, names: list[str], columns: dict[str, int]) -> None:
    """Scan line by line and raise :class:`InputError` at the first bad row."""
    # The csv module refuses fields over 128 KiB by default; pandas does not, so
    # a long (valid) id would otherwise be reported as the error.
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, 2**31 - 1))
    try:
        _scan_rows(path, names, columns)
    finally:
        csv.field_size_limit(limit)


def _scan_rows(path: Path, names: list[str], columns: dict[str, int]) -> None:
    lines = physical_lines(path)
    next(lines)  # header, validated already
    current = [1]

    def feed() -> Iterator[str]:
        for number, text in lines:
            current[0] = number
            yield text

    reader = csv.reader(feed())
    ncols = len(names)
    expected_row = f"{ncols} comma-separated fields ({','.join(names)})"
    while True:
        start = current[0] + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(path, current[0], f"malformed CSV ({exc})", expected_row) from exc
        if not fields or (len(fields) == 1 and not fields[0].strip(" \t\r\n")):
            continue  # blank line
        if len(fields) != ncols and current[0] > start and any("\n" in f for f in fields):
            # A quoted field that swallowed line breaks: report where it opened.
            raise InputError(path, start, "a quoted field runs over several lines (unclosed quote?)", expected_row)
        if len(fields) != ncols:
            what = "too few" if len(fields) < ncols else "too many"
            raise InputError(path, start, f"ragged row: {what} fields ({len(fields)})", expected_row)
        ts = fields[columns["ts"]]
        if not _INT.fullmatch(ts):
            shown = repr(ts) if len(ts) <= 40 else repr(ts[:40]) + f"... ({len(ts)} characters)"
            if _ANY_INT.fullmatch(ts):  # an integer, but too long: say so, not "non-integer"
                digits = len(ts.strip().lstrip("+-"))
                raise InputError(path, start, f"ts {shown} is out of range: {digits} digits, more than 18", TS_RANGE_TEXT)
            raise InputError(path, start, f"non-integer ts {shown}", "an integer year")
        for name in ("head", "tail", "relation_type"):
            if not fields[columns[name]].strip():
                raise InputError(path, start, f"empty {name} id", f"a non-empty {name} id")
