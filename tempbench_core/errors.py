"""Error types that the command line turns into a clean message and exit code 2.

Everything a user can cause (a malformed file, a bad flag, an unknown config key)
raises a subclass of :class:`TempbenchError`; anything else is a bug and exits 1.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from tempbench_core.text import terminal_text


class TempbenchError(Exception):
    """A user-facing error: the CLI prints ``error: <message>`` and exits 2.

    The message is printed as one line (:func:`tempbench_core.text.terminal_text`:
    a line break quoted from a file name is shown as ``\\n``); an error whose
    message lists one problem per line on purpose sets ``multiline = True``.
    """

    multiline: bool = False


class InputError(TempbenchError):
    """Malformed input file.

    Parameters
    ----------
    path:
        The file that is wrong.
    line:
        1-based physical line number, or ``None`` when the problem is not tied to
        one line (a missing column in the header is line 1).
    problem:
        What is wrong, e.g. ``"non-integer year 'abc'"``.
    expected:
        What was expected instead, e.g. ``"an integer year"``.
    """

    def __init__(
        self,
        path: str | Path,
        line: int | None,
        problem: str,
        expected: str | None = None,
    ) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        self.expected = expected
        # The path is shown escaped (a file name may hold a line break or an ESC); ``path`` keeps it.
        shown = terminal_text(self.path)
        where = shown if line is None else f"{shown}:{line}"
        text = f"{where}: {problem}"
        if expected:
            text += f" (expected {expected})"
        super().__init__(text)


class ConfigError(TempbenchError):
    """Invalid configuration: unknown key, wrong type, or bad value."""


class MissingDataError(TempbenchError):
    """A required input file does not exist."""


class OutputError(TempbenchError):
    """An output cannot be written (or must not be: it would overwrite an input)."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(f"cannot write {terminal_text(self.path)}: {problem}")

    def __reduce__(self) -> tuple[type[OutputError], tuple[str, str]]:
        # raised in a worker process, it reaches the parent pickled: made again from its two fields
        return type(self), (self.path, self.problem)


class EvidenceError(TempbenchError):
    """An evidence item or gold triple that cannot be scored (SPEC §3.1).

    Evidence handed to the scorer in memory has no file and line to name, so
    the message names the question, the item position and what is missing.
    """


class RunMismatchError(TempbenchError):
    """Run records and benchmark questions do not fit together (SPEC §3.2)."""


def did_you_mean(word: object, options: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``options`` to a mistyped ``word``, else ``""``."""
    names = {str(o): o for o in options}
    close = difflib.get_close_matches(str(word), list(names), n=1, cutoff=0.6)
    if not close and isinstance(word, str):  # case slips: 'False', 'ORACLE'
        close = [n for n in names if n.lower() == word.lower()][:1]
    return f" (did you mean {names[close[0]]!r}?)" if close else ""
