"""Memory housekeeping shared by the layers: pausing Python's cyclic garbage collector for a block."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for a block (reference counting still frees memory at once).

    A run, a scoring pass or a reproduction allocates millions of short-lived
    objects while millions more (runs, the benchmark, labels) stay alive: every
    full collection walks all of them, which can cost more than the work itself,
    and none of this code makes reference cycles that must be freed early. The
    collector's previous state is restored on exit.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
