"""A cache of values that depend on one object alone (a question), kept by a caller that asks again.

An entry is keyed by a caller-chosen key (the question's id and what is asked)
and serves only the very object it was made for: another question with the
same id (another benchmark, a copy) gets its own value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def kept_for(shared: dict[Any, Any] | None, key: Any, owner: Any, make: Callable[[], T]) -> T:
    """``make()``, kept in ``shared`` under ``key`` for ``owner`` (made each time when ``shared`` is None)."""
    if shared is None:
        return make()
    known = shared.get(key)  # (owner, value), as kept() reads it, inline: this is called on every hot path
    if known is None or known[0] is not owner:
        known = shared[key] = (owner, make())
    return known[1]


def kept(shared: dict[Any, Any] | None, key: Any, owner: Any) -> tuple[Any] | None:
    """``(value,)`` when ``shared`` keeps a value under ``key`` for ``owner``, else ``None``.

    For a caller that makes the missing values of many owners at once, then
    :func:`keep` s them.
    """
    known = None if shared is None else shared.get(key)
    return None if known is None or known[0] is not owner else (known[1],)


def keep(shared: dict[Any, Any] | None, key: Any, owner: Any, value: Any) -> None:
    """Keep ``value`` in ``shared`` under ``key`` for ``owner`` (nothing when ``shared`` is None)."""
    if shared is not None:
        shared[key] = (owner, value)
