"""SPEC §2.1 tokenization: ``re.findall(r"\\w+", text.lower())`` on Unicode text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.tokenizer import tokenize


def reference(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Barack Obama", ["barack", "obama"]),
        ("Café Déjà-vu", ["café", "déjà", "vu"]),
        ("Straße", ["straße"]),
        ("東京都 Tokyo", ["東京都", "tokyo"]),
        ("FIFA World Cup 2014", ["fifa", "world", "cup", "2014"]),
        ("snake_case_label", ["snake_case_label"]),
        ("Jean-Paul Sartre", ["jean", "paul", "sartre"]),
        ("O'Brien's", ["o", "brien", "s"]),
        # U+0130 lowercases to 'i' + U+0307 (combining dot, not \w): two tokens.
        ("İstanbul", ["i", "stanbul"]),
        ("ΟΔΟΣ ΣΟΦΟΣ", ["οδος", "σοφος"]),
        ("", []),
        ("  ,;  ", []),
        ("½ ² ٣", ["½", "²", "٣"]),
    ],
)
def test_examples(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected
    assert tokenize(text) == reference(text)


def test_final_sigma_is_contextual() -> None:
    # str.lower() turns a word-final capital sigma into 'ς' only in context.
    assert tokenize("ΟΔΟΣ") == ["οδος"]
    assert tokenize("Σ") == ["σ"]


_ALPHABET = st.sampled_from(
    list("abcXYZ019_ -'’.,;:/()") + list("éÉàßẞİıIÇçÖöΣσςΟΔ東京都漢字ひらがなКириллицаٰ٣½²") + ["\u0307", "\u200b", "\t", "\n"]
)
_TEXT = st.lists(_ALPHABET, max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_matches_reference(text: str) -> None:
    assert tokenize(text) == reference(text)


@settings(max_examples=400, deadline=None)
@given(_TEXT, _TEXT, _TEXT)
def test_per_label_tokens_concatenate(s: str, r: str, o: str) -> None:
    """BM25 tokenizes each label once; that must equal tokenizing the document (SPEC §2.1)."""
    assert tokenize(s) + tokenize(r) + tokenize(o) == reference(s + " " + r + " " + o)
