"""Terminal output helpers: tables on stdout, messages on stderr."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

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


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a table with rich (plain ASCII box when not a terminal).

    Numeric columns are right-aligned, text columns left-aligned; long cells
    (paths) wrap instead of being cut with an ellipsis. When stdout is not a
    terminal (a pipe, a log file) the table is printed at its natural width,
    so it is never wrapped at an arbitrary 80 columns.
    """
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    terminal = console.is_terminal
    # The table is at least as wide as its title, so the title stays on one line.
    table = Table(title=title, box=box.SIMPLE_HEAVY if terminal else box.ASCII, min_width=len(title) or None)
    for i, name in enumerate(columns):
        right = i > 0 and _numeric_column([row[i] for row in rows if i < len(row)])
        table.add_column(name, justify="right" if right else "left", overflow="fold")
    for row in rows:
        table.add_row(*(format_cell(v) for v in row))
    if not terminal:
        natural = console.measure(table, options=console.options.update(width=100_000)).maximum
        console = Console(width=max(natural, 80))
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


def info(message: str) -> None:
    """A progress or status message on stderr."""
    import sys

    print(message, file=sys.stderr)
