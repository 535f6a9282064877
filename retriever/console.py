"""Terminal output helpers: tables on stdout, messages on stderr."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print a table with rich (plain ASCII-safe box when not a terminal)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=title, box=box.SIMPLE_HEAVY if console.is_terminal else box.ASCII)
    for i, name in enumerate(columns):
        table.add_column(name, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*(format_cell(v) for v in row))
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
