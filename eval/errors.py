"""Error types of the evaluation side.

Evidence handed to the scorer in memory has no file and line to name, so it gets
its own :class:`~retriever.errors.TempbenchError` subclass; file problems use
:class:`retriever.errors.InputError`.
"""

from __future__ import annotations

from retriever.errors import TempbenchError


class EvidenceError(TempbenchError):
    """An evidence item or gold triple that cannot be scored (SPEC §3.1).

    The message names the question, the item position and what is missing.
    """


class RunMismatchError(TempbenchError):
    """Run records and benchmark questions do not fit together (SPEC §3.2)."""
