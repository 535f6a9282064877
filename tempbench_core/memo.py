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
    known = shared.get(key)
    if known is None or known[0] is not owner:
        known = shared[key] = (owner, make())
    return known[1]
