"""Terminal output helpers: tables on stdout, messages on stderr.

Everything printed here goes through :func:`tempbench_core.text.terminal_text`
(labels, question texts and file names come from data, and an ESC or BEL in
them must not reach the terminal), and table text is handed to rich as plain
:class:`rich.text.Text`, never as markup: ``[link=...]`` or ``[red]`` in a label is
shown as written, and rich's emoji codes (``:warning:``) are not replaced.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Sequence
from typing import Any

from tempbench_core.text import terminal_text

# A cell that reads as a number (``1,500``, ``-0.003``, ``[0.1, 0.2]``, ``300 of 300``)
# is right-aligned; anything else (names, paths, variants) reads better left-aligned.
_NUMERIC = re.compile(r"^[-+\[(]?\d")


def _numeric_column(cells: Sequence[Any]) -> bool:
    """True when every non-empty cell of a column is a number or reads as one."""
    seen = False
    for value in cells:
        if value is None or value == "" or value == "-":
            continue
        seen = True
        if isinstance(value, bool):
            return False
        if isinstance(value, (int, float)):
            continue
        if not _NUMERIC.match(str(value)):
            return False
    return seen


def _console(**kwargs: Any) -> Any:
    """A rich console whose closed stdout raises :class:`BrokenPipeError` for the entry point to handle.

    rich's own handling ends the process with exit status 1 from inside the
    library; ``tempbench ... | head`` is no failure, and the one place that
    decides how a closed stdout ends a command is :func:`tempbench.cli.main`.
    """
    from rich.console import Console

    class _PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "stdout was closed")

    return _PipeConsole(**kwargs)


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], wrapped: bool = False) -> None:
    """Print a table with rich (plain ASCII box when not a terminal).

    Numeric columns are right-aligned, text columns left-aligned; long cells
    (paths) wrap instead of being cut with an ellipsis. When stdout is not a
    terminal (a pipe, a log file) the table is printed at its natural width,
    so it is never wrapped at an arbitrary 80 columns. Every title, header and
    cell is :func:`~tempbench_core.text.terminal_text`; ``wrapped=True`` keeps
    the line breaks of cells the caller wrapped itself (after escaping the
    text it wrapped).
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    console = _console()
    terminal = console.is_terminal
    title = terminal_text(title)
    # The table is at least as wide as its title, so the title stays on one line.
    table = Table(title=Text(title, style="table.title"), box=box.SIMPLE_HEAVY if terminal else box.ASCII,
                  min_width=len(title) or None)
    for i, name in enumerate(columns):
        right = i > 0 and _numeric_column([row[i] for row in rows if i < len(row)])
        table.add_column(Text(terminal_text(name)), justify="right" if right else "left",
                         overflow="fold")
    for row in rows:
        table.add_row(*(Text(terminal_text(format_cell(v), keep_newlines=wrapped)) for v in row))
    if not terminal:
        natural = console.measure(table, options=console.options.update(width=100_000)).maximum
        console = _console(width=max(natural, 80))
    console.print(table)


def format_cell(value: Any) -> str:
    """Render one table cell: floats with 3 decimals, ``None`` as a dash."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def info(message: str, multiline: bool = False) -> None:
    """A progress or status message on stderr, as one line.

    Messages quote file names and data, so every control character is shown
    escaped, a line break too (a file name holding one cannot fake a second
    message); ``multiline=True`` keeps the line breaks of a message that lists
    one thing per line on purpose.
    """
    import sys

    print(terminal_text(message, keep_newlines=multiline), file=sys.stderr)
