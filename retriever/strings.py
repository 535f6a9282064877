"""Large lists of strings kept as arrays: the KG's ids and labels, and the id -> position lookup.

A KG of TGB's largest size has a million entities: a Python list of their ids
and labels, and a dict from id to position, take a second to make from JSON at
every start. Here they are arrays that the index cache stores as ``.npy`` files
and maps without copying (:mod:`retriever.index`):

* :class:`StringTable`: a sequence of strings stored as one UTF-8 blob and
  the byte offsets of each string; an item is decoded when it is read, the
  whole list only when it is iterated;
* :class:`IdLookup`: the mapping from a string to its position, by binary
  search in the strings sorted as fixed-width bytes (every id of a KG is short);
  a table whose strings do not fit that form (long strings, a trailing NUL
  byte, which fixed-width bytes cannot hold) falls back to a dict.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import numpy as np

#: Strings longer than this (in UTF-8 bytes) make :class:`IdLookup` use a dict.
MAX_KEY_BYTES = 64
#: Up to this many strings, :class:`IdLookup` answers from a dict made on its first use (cheap to make, and a
#: dict lookup beats a binary search); above, by binary search (a dict of a million ids takes a second to make).
DICT_UP_TO = 200_000


class StringTable(Sequence[str]):
    """A read-only sequence of strings: ``blob`` (``uint8``) and ``offsets`` (``int64``, ``n + 1``)."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self.blob = blob
        self.offsets = offsets
        self._bytes = memoryview(np.ascontiguousarray(blob)).cast("B")
        self._starts_list: list[int] | None = None
        self._list: list[str] | None = None

    @property
    def _starts(self) -> list[int]:
        if self._starts_list is None:
            self._starts_list = self.offsets.tolist()
        return self._starts_list

    @classmethod
    def of(cls, strings: Sequence[str]) -> StringTable:
        """The table of ``strings``, in order."""
        encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        if encoded:
            np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
        table = cls(np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets)
        table._list = list(strings)
        return table

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: Any) -> Any:
        if self._list is not None:
            return self._list[i]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("StringTable index out of range")
        return bytes(self._bytes[self._starts[i]:self._starts[i + 1]]).decode("utf-8", "surrogatepass")

    def tolist(self) -> list[str]:
        """Every string, as a list (made once)."""
        if self._list is None:
            text = bytes(self._bytes)
            starts = self._starts
            self._list = [text[a:b].decode("utf-8", "surrogatepass") for a, b in zip(starts[:-1], starts[1:], strict=True)]
        return self._list

    def __iter__(self) -> Iterator[str]:
        return iter(self.tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (StringTable, list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def arrays(self) -> dict[str, np.ndarray]:
        """What the cache stores: ``blob`` and ``offsets``."""
        return {"blob": np.ascontiguousarray(self.blob), "offsets": self.offsets}


def as_list(strings: Sequence[str]) -> list[str]:
    """``strings`` as a plain list (a :class:`StringTable`'s, made once), for code that indexes it in a loop."""
    return strings.tolist() if isinstance(strings, StringTable) else list(strings) if not isinstance(strings, list) \
        else strings


def _fixed_width(strings: Sequence[str]) -> np.ndarray | None:
    """The strings as a fixed-width bytes array, or ``None`` when one does not fit that form."""
    encoded = [s.encode("utf-8", "surrogatepass") for s in strings]
    if any(len(e) > MAX_KEY_BYTES or e.endswith(b"\x00") for e in encoded):
        return None
    width = max((len(e) for e in encoded), default=1) or 1
    return np.array(encoded, dtype=f"S{width}")


class IdLookup(Mapping[str, int]):
    """``string -> position`` of a :class:`StringTable` (or any sequence of distinct strings).

    ``keys``: the strings sorted, as fixed-width bytes; ``positions``: each
    sorted string's position in the table. ``None`` for both: a dict is used.
    """

    def __init__(self, keys: np.ndarray | None, positions: np.ndarray | None, table: Sequence[str]) -> None:
        self.keys, self.positions, self.table = keys, positions, table
        self._dict: dict[str, int] | None = None
        if keys is None:
            self._dict = {s: i for i, s in enumerate(table)}

    @classmethod
    def of(cls, table: Sequence[str]) -> IdLookup:
        """The lookup of a table's strings (distinct)."""
        fixed = _fixed_width(table)
        if fixed is None:
            return cls(None, None, table)
        order = np.argsort(fixed, kind="stable")
        return cls(fixed[order], order.astype(np.int64), table)

    def get(self, key: Any, default: Any = None) -> Any:
        if self._dict is not None:
            return self._dict.get(key, default)
        if len(self.table) <= DICT_UP_TO:
            self._dict = {s: i for i, s in enumerate(self.table)}
            return self._dict.get(key, default)
        if type(key) is not str:
            return default
        raw = key.encode("utf-8", "surrogatepass")
        if len(raw) > self.keys.dtype.itemsize or raw.endswith(b"\x00") or not len(self.keys):  # type: ignore[union-attr]
            return default
        i = int(np.searchsorted(self.keys, raw))  # type: ignore[arg-type]
        if i < len(self.keys) and self.keys[i] == raw:  # type: ignore[arg-type, index]
            return int(self.positions[i])  # type: ignore[index]
        return default

    def __getitem__(self, key: str) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.table)

    def __len__(self) -> int:
        return len(self.table)

    def arrays(self) -> dict[str, np.ndarray] | None:
        """What the cache stores (``None``: the dict form, made again on load)."""
        if self.keys is None:
            return None
        return {"keys": self.keys, "positions": self.positions}  # type: ignore[dict-item]


class PairTable(Mapping[str, str]):
    """A mapping stored as two :class:`StringTable` (its keys and its values), a dict made when first read."""

    def __init__(self, keys: StringTable, values: StringTable) -> None:
        self.keys_table, self.values_table = keys, values
        self._dict: dict[str, str] | None = None

    def _mapping(self) -> dict[str, str]:
        if self._dict is None:
            self._dict = dict(zip(self.keys_table, self.values_table, strict=True))
        return self._dict

    def __getitem__(self, key: str) -> str:
        return self._mapping()[key]

    def get(self, key: Any, default: Any = None) -> Any:
        return self._mapping().get(key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self._mapping())

    def __len__(self) -> int:
        return len(self.keys_table)
