"""Text from data made safe where it is written: the terminal, Markdown, file names (issue 25, class 6).

Labels, question texts, file names and table cells come from files the user did
not write. Written raw, an ESC or BEL drives the terminal (colours, the window
title, a cleared screen, OSC 8 links), a line break adds a heading or a row to
``report.md``, and a ``|`` or a backtick reshapes a table or a code span. Two
rules, applied where such text is written and nowhere else:

* :func:`terminal_text`: every character that is not printable text is shown as
  its Python escape (``\\x1b``, ``\\n``, ``\\u202e``, ``\\ud800``): C0 and C1
  controls and DEL, lone surrogates (which cannot even be encoded), the line and
  paragraph separators, and the bidirectional embeddings, overrides and
  isolates (they reorder what the terminal shows, "Trojan Source"). Printable
  text, non-ASCII letters included, is unchanged, so ordinary output keeps its
  bytes. A backslash is left as it is: the rule protects the terminal, it is not
  a reversible encoding.
* :func:`markdown_cell`, :func:`markdown_code`, :func:`markdown_text`: the same
  escapes (a line break can no longer end a row or start a heading), and in a
  table cell every ``|`` escaped, so a cell stays one cell; a code span gets a
  backtick fence longer than any run of backticks inside it (CommonMark).

:func:`unsafe_characters` says whether a name the project chooses (a run name)
holds such a character, so that it can be refused instead.
"""

from __future__ import annotations

import re
from typing import Any

#: What is never written raw: C0 controls, DEL and C1 controls; the line and paragraph
#: separators; the bidirectional embeddings/overrides (U+202A-U+202E) and isolates
#: (U+2066-U+2069); lone surrogates. The bidirectional *marks* (LRM, RLM, ALM) and the
#: zero-width joiners are left alone: they are part of ordinary Arabic, Hebrew, Persian
#: and Indic names, and they reorder nothing beyond the neighbouring punctuation.
_UNSAFE = "\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_RE = re.compile(f"[{_UNSAFE}]")
#: The same without the line feed: messages (errors, notes) may span lines on purpose.
_UNSAFE_BUT_NEWLINE_RE = re.compile("[\x00-\x09\x0b-\x1f" + _UNSAFE[len("\x00-\x1f"):] + "]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: A run of backslashes followed by a bar: the backslashes are doubled and the bar
#: escaped, so that no backslash of the text can pair with the escaping one.
_BAR = re.compile(r"(\\*)\|")
_BACKTICKS = re.compile(r"`+")


def _escape_char(match: re.Match[str]) -> str:
    char = match.group()
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any, where: str = "") -> tuple[str, str] | None:
    """``(where, escape)`` of the first lone surrogate in a decoded JSON value, else ``None``.

    A JSON text may escape half of a UTF-16 pair on its own (``"\\ud800"``);
    Python decodes it to a character no UTF-8 file can hold, so a label or
    a question holding one fails only later, when something is written.
    ``where`` is the key path (``S_star[0].s``, ``question``, ``the key 'Q1'``),
    shown escaped.
    """
    if isinstance(value, str):
        found = _SURROGATE_RE.search(value)
        return None if found is None else (where or "a string", _escape_char(found))
    if isinstance(value, dict):
        for key, item in value.items():
            found = _SURROGATE_RE.search(key) if isinstance(key, str) else None
            if found is not None:
                return f"the key '{terminal_text(key)}'" + (f" of {where}" if where else ""), _escape_char(found)
            hit = lone_surrogate(item, terminal_text(f"{where}.{key}" if where else str(key)))
            if hit:
                return hit
    elif isinstance(value, list):
        for i, item in enumerate(value):
            hit = lone_surrogate(item, f"{where}[{i}]")
            if hit:
                return hit
    return None


def unsafe_characters(text: str) -> list[str]:
    """The distinct characters of ``text`` that :func:`terminal_text` escapes, as their escapes, in order."""
    return list(dict.fromkeys(_escape_char(m) for m in _UNSAFE_RE.finditer(text)))


def terminal_text(value: Any, keep_newlines: bool = False) -> str:
    """``str(value)`` with every unsafe character shown as its escape (see the module docstring).

    ``keep_newlines=True`` keeps ``\\n`` (a message that spans lines on purpose);
    a carriage return is escaped even then, since it lets a line overwrite itself.
    """
    text = value if isinstance(value, str) else str(value)
    pattern = _UNSAFE_BUT_NEWLINE_RE if keep_newlines else _UNSAFE_RE
    if pattern.search(text) is None:  # the usual case: no copy
        return text
    return pattern.sub(_escape_char, text)


def markdown_text(value: Any) -> str:
    """Text from data inside a Markdown line (a list item, a paragraph): one line, nothing raw."""
    return terminal_text(value)


def markdown_cell(value: Any) -> str:
    """Text from data as one cell of a Markdown table: one line, every ``|`` escaped.

    A backslash right before a bar is doubled as well (``a\\|b`` becomes
    ``a\\\\\\|b``), so GitHub's table parser, which reads ``\\\\`` as one escaped
    backslash, still sees an escaped bar.
    """
    text = terminal_text(value)
    if "|" not in text:
        return text
    return _BAR.sub(lambda m: m.group(1) * 2 + "\\|", text)


def markdown_code(value: Any) -> str:
    """Text from data as a Markdown code span: one line, a fence no backtick inside can close.

    Text without a backtick gets single backticks (```name```, as before); with
    one, the fence is one backtick longer than the longest run inside, and
    padded with a space where the text starts or ends with a backtick. Inside
    a table, :func:`markdown_cell` is applied to the whole cell afterwards.
    """
    text = terminal_text(value)
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in _BACKTICKS.findall(text)) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
