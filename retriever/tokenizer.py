"""BM25 tokenization (SPEC §2.1): lowercase, then every maximal match of ``\\w+``.

The pattern is Python's Unicode ``\\w`` (letters, digits and underscore of any
script), applied after :meth:`str.lower`, exactly as the reference does.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Tokens of ``text``: ``re.findall(r"\\w+", text.lower())`` (SPEC §2.1).

    Parameters
    ----------
    text:
        Any string (a label, a document, a question).

    Returns
    -------
    list of str
        The tokens in text order, duplicates kept.
    """
    return _WORD.findall(text.lower())
