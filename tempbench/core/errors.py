"""Error types that the command line turns into a clean message and exit code 2.

Everything a user can cause (a malformed file, a bad flag, an unknown config key)
raises a subclass of :class:`TempbenchError`; anything else is a bug and exits 1.
"""

from __future__ import annotations

from pathlib import Path


class TempbenchError(Exception):
    """A user-facing error: the CLI prints ``error: <message>`` and exits 2."""


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
        where = self.path if line is None else f"{self.path}:{line}"
        text = f"{where}: {problem}"
        if expected:
            text += f" (expected {expected})"
        super().__init__(text)


class ConfigError(TempbenchError):
    """Invalid configuration: unknown key, wrong type, or bad value."""


class MissingDataError(TempbenchError):
    """A required input file does not exist."""


class EvidenceError(TempbenchError):
    """An evidence item or gold triple that cannot be scored (SPEC §3.1).

    Evidence handed to the scorer in memory has no file and line to name, so
    the message names the question, the item position and what is missing.
    """


class RunMismatchError(TempbenchError):
    """Run records and benchmark questions do not fit together (SPEC §3.2)."""
