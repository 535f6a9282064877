"""The TGB edge list as column arrays (SPEC §1.1).

A KG row ``i`` (0-based data row, CSV load order) is the quadruple
``(s=head[i], r=relation[i], o=tail[i], t=year[i])``; it is also BM25 document
``i`` and edge id ``i``. Entities and relations are interned to dense integer ids
in *load order*: an entity's place is its first row, the head before the tail
within a row; a relation's place is its first row.

The loader never builds per-row Python objects that outlive a chunk: the CSV is
parsed by pandas' C engine in chunks, ids are interned with :func:`pandas.factorize`
and a dictionary over the *distinct* ids only. A large plain file is cut at line
ends into parts parsed side by side in worker processes, each part numbering its
ids in its own order of first appearance; the parts' numberings laid end to end
give the file's load order (the same arrays for any number of parts). A slow,
line-by-line scan with the :mod:`csv` module runs only after the fast path has
found something wrong, to report the exact 1-based physical line.

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
import io
import mmap
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from retriever.strings import IdLookup
from tempbench_core.errors import InputError
from tempbench_core.jsonl import GZIP_ERRORS, gzip_problem, open_input, physical_lines, require_file
from tempbench_core.schema import format_year
from tempbench_core.workers import WorkerPool, cpu_count

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
#: A plain edge list is parsed in parts side by side, one per this many bytes (at most one per core, at most
#: :data:`_MAX_PARTS`): a part's rows are parsed and its ids interned in a process of its own.
_PART_BYTES = 32 * 2**20
_MAX_PARTS = 8
_SPAN_BUFFER = 2**20


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


def load_edgelist(path: str | Path, parts: int | None = None) -> KG:
    """Read a TGB edge list (SPEC §1.1) into a :class:`KG`.

    Parameters
    ----------
    path:
        CSV with header ``ts,head,tail,relation_type`` (``timestamp`` accepted for
        ``ts``; columns in any order; extra columns ignored), or any 4-column
        header, then read by position. UTF-8, optional BOM, LF or CRLF line
        endings, blank lines skipped; ``.gz`` decompressed. Rows need not be sorted.
    parts:
        Pieces of a plain ``.csv`` file parsed side by side in processes of
        their own (default: one per 32 MiB, at most one per core); the result
        is the same for any number.

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
        arrays = _fast_load(path, names, columns, parts)
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


def _fast_load(path: Path, names: list[str], columns: dict[str, int], parts: int | None) -> tuple[Any, ...]:
    """Chunked C-engine parse, in parts side by side; raises :class:`_Suspect` on anything irregular."""
    spans = _spans(path, parts)
    with WorkerPool((path, names, columns), len(spans) - 1, fork=len(spans) > 1) as pool:
        later = [pool.submit(_parse_span, span) for span in spans[1:]]
        results = [_parse_span((path, names, columns), spans[0]), *(future.result() for future in later)]
    if len(results) == 1:
        return results[0]  # one part is the whole file, its numbering the file's
    entity_of, entity_ids = _merged_ids([part[4] for part in results])
    relation_of, relation_ids = _merged_ids([part[5] for part in results])
    return (
        _concat([of[part[0]] for of, part in zip(entity_of, results, strict=True)], np.int32),
        _concat([of[part[1]] for of, part in zip(entity_of, results, strict=True)], np.int32),
        _concat([of[part[2]] for of, part in zip(relation_of, results, strict=True)], np.int32),
        _concat([part[3] for part in results], np.int64),
        entity_ids,
        relation_ids,
    )


def _concat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


def _merged_ids(parts: list[list[str]]) -> tuple[list[np.ndarray], list[str]]:
    """The ids of consecutive parts of a file, each numbered in its own first-appearance order, as one numbering.

    Returns each part's table from its own number to the whole file's, and
    the whole file's ids in load order: those of the first part, then the new
    ones of each later part in its order (first appearance in the parts laid
    end to end, which is first appearance in the file).
    """
    import pandas as pd

    laid = np.empty(sum(map(len, parts)), dtype=object)
    laid[:] = [value for part in parts for value in part]
    codes, uniques = pd.factorize(laid, sort=False)
    bounds = np.cumsum([0, *map(len, parts)]).tolist()
    return [codes[lo:hi].astype(np.int64) for lo, hi in pairwise(bounds)], uniques.tolist()


def _spans(path: Path, parts: int | None) -> list[tuple[int, int | None]]:
    """Byte ranges ``[start, stop)`` of the file, cut after a line feed, to parse side by side (``None``: the end).

    Only a plain ``.csv`` file without any double quote is cut (a quoted field
    may hold a line break; a compressed file cannot be read from the middle);
    every line lies wholly in one range, and the parser reads each line alone,
    so the ranges give the rows of the whole file. ``parts=None``: one range
    per :data:`_PART_BYTES`, at most one per core.
    """
    size = path.stat().st_size
    if parts is None:
        parts = min(cpu_count(), _MAX_PARTS, size // _PART_BYTES)
    if parts <= 1 or path.suffix.lower() != ".csv" or size == 0:
        return [(0, None)]
    try:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            if data.find(b'"') >= 0:
                return [(0, None)]
            cuts = [0]
            for k in range(1, parts):
                cut = data.find(b"\n", max(size * k // parts, cuts[-1])) + 1
                if cut <= 0 or cut >= size:
                    break
                if cut > cuts[-1]:
                    cuts.append(cut)
    except (OSError, ValueError):  # a file that cannot be mapped (a changed size, a file system without mmap)
        return [(0, None)]
    return [*pairwise(cuts), (cuts[-1], None)]


class _Span(io.RawIOBase):
    """Bytes ``[start, stop)`` of a file, read as a file of their own."""

    def __init__(self, path: Path, start: int, stop: int | None) -> None:
        super().__init__()
        self._file = open(path, "rb")  # noqa: SIM115 - closed with this reader
        self._file.seek(start)
        self._left = None if stop is None else stop - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._left is not None:
            view = view[: self._left]
        got = self._file.readinto(view) or 0
        if self._left is not None:
            self._left -= got
        return got

    def close(self) -> None:
        self._file.close()
        super().close()


def _parse_span(context: tuple[Path, list[str], dict[str, int]], span: tuple[int, int | None]) -> tuple[Any, ...]:
    """The rows of one byte range: ids interned in the range's own first-appearance order.

    Returns ``(head, tail, relation, year, entity_ids, relation_ids)``, the
    codes indexing the range's own ``entity_ids`` / ``relation_ids``.
    """
    import pandas as pd

    path, names, columns = context
    start, stop = span
    entity_index: dict[str, int] = {}
    relation_index: dict[str, int] = {}
    year_of: dict[str, int] = {}
    heads, tails, rels, years = [], [], [], []
    synthetic = [f"c{i}" for i in range(len(names))]
    # the whole file from its path (pandas decompresses a .gz); a later range has no header line
    whole = (start, stop) == (0, None)
    source: Any = path if whole else io.BufferedReader(_Span(path, start, stop), _SPAN_BUFFER)
    try:
        reader = pd.read_csv(
            source,
            header=0 if start == 0 else None,
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
                if not isinstance(chunk.index, pd.RangeIndex):
                    # more fields than names in the first row: pandas would take the extra ones as an index
                    raise _Suspect("ragged rows")
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
                heads.append(ent_codes[0::2].astype(np.int32))
                tails.append(ent_codes[1::2].astype(np.int32))
                del both, ent_codes
                rels.append(_intern(rel, relation_index).astype(np.int32))
                years.append(_years(ts, year_of))
    except _Suspect:
        raise
    except pd.errors.EmptyDataError as exc:
        if start == 0:
            raise _Suspect(str(exc)) from exc
        # a later range of blank lines only
    except (ValueError, UnicodeDecodeError, *GZIP_ERRORS) as exc:  # pandas ParserError is a ValueError
        raise _Suspect(str(exc)) from exc
    finally:
        if not whole:
            source.close()  # pandas leaves a handle it did not open to its owner

    return (_concat(heads, np.int32), _concat(tails, np.int32), _concat(rels, np.int32), _concat(years, np.int64),
            list(entity_index), list(relation_index))


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
    """Ids of ``values`` in ``index``; new ids get the next number in first-appearance order."""
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
