"""Document ids: one key of an evidence item or KG row that every run of the same KG shares (SPEC §3.4).

``docid((s, r, o), t_start, t_end)`` is ``S|R|O|T``: the item's ``s, r, o`` in
the question's *document space* (ids when the gold and the items carry ids, as
SPEC §3.1 ``key='auto'`` resolves it; labels otherwise) and ``T`` its time as
:func:`tempbench_core.schema.format_span` renders it (``1994``, or
``1990-1994`` when the ends differ). So the KG row ``(Q42, P31, Q5, 1994)`` is
``Q42|P31|Q5|1994`` in every run. Each of ``S, R, O`` is percent-encoded: ``%``,
``|``, every whitespace character and every non-printable one become the
``%XX`` of their UTF-8 bytes (upper-case hex). The id is therefore one
whitespace-free token (TREC readers split lines on whitespace), a label holding
a space or ``|`` cannot collide with another item's id, and :func:`parse_docid`
inverts :func:`docid` exactly (it accepts only the canonical form). An item
compared in another space than the question's document space (mixed-space
evidence, possible in memory; ``tempbench export-trec`` refuses it) gets a fifth
field naming its space, ``S|R|O|T|label``, so that it can never take the id of
a row of the other space.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from tempbench_core.errors import TempbenchError
from tempbench_core.schema import format_span, format_year

#: Field separator of a document id.
SEPARATOR = "|"

_ESCAPED_RUN = re.compile(r"(?:%[0-9A-F]{2})+")


class DocidError(TempbenchError, ValueError):
    """A string that is not a canonical document id of :func:`docid`."""


class DocKey(NamedTuple):
    """What a document id names: ``s, r, o``, the window, and the space when it is marked."""

    s: str
    r: str
    o: str
    t_start: float
    t_end: float
    space: str | None = None


def _needs_escape(ch: str) -> bool:
    return ch == "%" or ch == SEPARATOR or ch.isspace() or not ch.isprintable()


# ``\s`` is ``str.isspace`` (both are Py_UNICODE_ISSPACE): with ``isprintable`` it finds what
# _needs_escape finds without a Python call per character
_SPECIAL = re.compile(r"[%" + re.escape(SEPARATOR) + r"\s]")


def escape(text: str) -> str:
    """``text`` with ``%``, ``|``, whitespace and non-printable characters as ``%XX`` UTF-8 bytes.

    Lone surrogates (JSON may carry them) are encoded with ``surrogatepass``
    so that every Python string round-trips through :func:`unescape`.
    """
    if text.isprintable() and _SPECIAL.search(text) is None:
        return text
    return "".join(
        "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass")) if _needs_escape(ch) else ch for ch in text
    )


def escape_all(texts: list[str]) -> list[str]:
    """``[escape(t) for t in texts]``, tested for what needs escaping once over all of them.

    What :func:`escape` looks for is single characters, so the texts laid end
    to end hold one exactly when one of them does; only then is each escaped.
    """
    joined = "".join(texts)
    if joined.isprintable() and _SPECIAL.search(joined) is None:
        return list(texts)
    return list(map(escape, texts))


def unescape(token: str) -> str:
    """Inverse of :func:`escape`; :class:`DocidError` on a stray ``%`` or bytes that are not UTF-8."""

    def decode(m: re.Match[str]) -> str:
        raw = bytes.fromhex(m.group(0).replace("%", ""))
        try:
            return raw.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            raise DocidError(f"{token!r}: {m.group(0)} is not UTF-8") from None

    text = _ESCAPED_RUN.sub(decode, token)
    if "%" in _ESCAPED_RUN.sub("", token):
        raise DocidError(f"{token!r}: '%' must start an escape %XX (two upper-case hex digits)")
    return text


def docid(srot: Sequence[Any], t_start: float, t_end: float, space: str | None = None) -> str:
    """The document id ``S|R|O|T`` (``S|R|O|T|space`` when ``space`` is given) of an item or KG row.

    ``srot`` values that are not strings are written with ``str``; ``T`` is
    :func:`~tempbench_core.schema.format_span` of the window. A dense
    retriever's run joins the export's files by writing its rows' ids with this
    function, e.g. ``docid((s_id, r_id, o_id), year, year)``.
    """
    return joined_docid([escape(v if isinstance(v, str) else str(v)) for v in srot], t_start, t_end, space)


def joined_docid(escaped: list[str], t_start: float, t_end: float, space: str | None = None) -> str:
    """The document id of escaped ``s, r, o`` (the one place its form is written)."""
    escaped.append(format_span(t_start, t_end))
    if space is not None:
        escaped.append(escape(space))
    return SEPARATOR.join(escaped)


def _canonical_float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if format_year(value) == text else None


def _parse_span(text: str) -> tuple[float, float] | None:
    single = _canonical_float(text)
    if single is not None:
        return single, single
    # A window "a-b": format_year never puts a '-' inside a number except
    # after an exponent's 'e', which no canonical left part ends with, so at
    # most one split point gives two canonical numbers.
    for i in range(1, len(text)):
        if text[i] == "-":
            a, b = _canonical_float(text[:i]), _canonical_float(text[i + 1:])
            if a is not None and b is not None:
                return a, b
    return None


def parse_docid(doc: str) -> DocKey:
    """The :class:`DocKey` of a document id; inverse of :func:`docid`.

    Raises
    ------
    DocidError
        When ``doc`` is not exactly what :func:`docid` writes for some item
        (wrong number of fields, a bad escape, a time that is not a year or
        window in canonical form).
    """
    parts = doc.split(SEPARATOR)
    if len(parts) not in (4, 5):
        raise DocidError(f"{doc!r} has {len(parts)} '|'-separated fields; expected S|R|O|T or S|R|O|T|space")
    try:
        s, r, o = (unescape(p) for p in parts[:3])
        space = unescape(parts[4]) if len(parts) == 5 else None
    except DocidError as exc:
        raise DocidError(f"{doc!r}: {exc}") from None
    span = _parse_span(parts[3])
    if span is None:
        raise DocidError(f"{doc!r}: time {parts[3]!r} is not a year or a window 'start-end'")
    key = DocKey(s, r, o, span[0], span[1], space)
    if docid((s, r, o), span[0], span[1], space) != doc:
        raise DocidError(f"{doc!r} is not in canonical form (expected {docid((s, r, o), span[0], span[1], space)!r})")
    return key
