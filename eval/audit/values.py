"""What an audit computation returns: a :class:`Value`, or :class:`NotComputable` with the reason."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class NotComputable(Exception):
    """A claim cannot be recomputed from the files given (the reason is the message)."""


@dataclass(frozen=True)
class Value:
    """A reproduced value, with an optional denominator and remark."""

    value: Any
    of: int | None = None
    note: str | None = None


def share_of(n: int, of: int, what: str) -> Value:
    """``n / of`` with the counts as the note; not computable when ``of`` is 0."""
    if of == 0:
        raise NotComputable(f"no {what}")
    return Value(n / of, note=f"{n} of {of}")
