"""Progress bars that stay quiet when the output is not a terminal."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tempbench_core.text import terminal_text

T = TypeVar("T")


def progress(items: Iterable[T], total: int | None = None, description: str = "", enabled: bool | None = None) -> Iterator[T]:
    """Yield ``items`` with a rich progress bar on stderr when it is a terminal.

    ``enabled=None`` shows the bar only on an interactive stderr, so logs and CI
    output carry no control characters.
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield from items
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    # The bar belongs on stderr with the other status messages: stdout may be a
    # pipe or a file holding the tables, and rich's default console is stdout.
    from rich.markup import escape

    with Progress(*columns, transient=True, console=Console(stderr=True)) as bar:
        # the description names a run (a user's configuration name) or a file: shown as
        # written, never as rich markup ("[link=...]") nor with a control character
        task = bar.add_task(escape(terminal_text(description)), total=total)
        for item in items:
            yield item
            bar.advance(task)
