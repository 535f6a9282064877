"""``report.html``: the reproduction report plus a question browser, in one self-contained file.

The page holds everything ``report.md`` has (its Markdown converted here:
headings, paragraphs, lists, tables, inline code and bold; the plots inlined as
``data:`` URIs) and a *question browser*: every question of the split,
filterable by configuration, complexity, operator, stage (optionally at one
hop position, e.g. "3+hop questions whose second hop was capped") and free
text; clicking one shows what ``tempbench show`` shows (SPEC §7).

Links into the browser: the address ``report.html#browser&cfg=stale_blind&stage=capped&q=q01201``
opens the browser with those filters and that question (keys ``cfg``, ``cx``,
``op``, ``stage`` by name, ``hop``, ``text``, ``q``; values URI-encoded; an
unknown value leaves its filter as it is). As the user filters or clicks a
question the page rewrites its address in place (``history.replaceState``, no
history entry per change), so the address bar always holds a link to the view.
The stages, their chips and their filter come from the blob's ``stages``
(:data:`eval.explain.STAGES`) and their colours from
:func:`eval.report.plots.stage_colours`, so a new stage needs no edit here.

Three parts, one module each: the report converted from Markdown
(:mod:`eval.report.markdown_html`), the browser's data
(:mod:`eval.report.browser`), and this module, the page around them. The
page's template, style sheet and script are package data
(``eval/report/assets/page.html``, ``page.css``, ``browser.js``, read with
:mod:`importlib.resources`), filled in one pass.

Self-contained by construction: inline CSS and JavaScript, no font, image,
style or script from anywhere else, and a Content-Security-Policy that forbids
any network load, so it opens offline from a file in current Chromium and
Firefox. The browser's data is one JSON blob (evidence lines stored once in a
string table) and the list is paginated, so 8,710 questions x 4
configurations never put more than one page of rows into the document. All
data is escaped: the report's text with :func:`html.escape`, the JSON blob
with ``<``, ``>`` and ``&`` as ``\\u`` escapes, and the script only ever writes
data through ``textContent``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from eval.explain import STAGES
from eval.report.browser import (
    MARKS,
    BrowserBlob,
    browser_data,
    browser_json,
    browser_json_bytes,
    browser_part,
    browser_questions,
    merge_parts,
    row_sources,
)
from eval.report.markdown_html import markdown_to_html
from eval.report.plots import stage_colours, text_colour
from tempbench_core.atomic import atomic_open

#: The template's placeholders, each filled once (text inserted from the data is never scanned again).
_PLACEHOLDER = re.compile(r"@@(TITLE|CSS|REPORT|DATA|JS)@@")

# The browser's and the converter's names, importable from the page's module as before the split.
__all__ = [
    "MARKS", "BrowserBlob", "browser_data", "browser_json", "browser_json_bytes", "browser_part", "browser_questions", "markdown_to_html",
    "merge_parts", "render_html", "row_sources", "write_html",
]


@cache
def _asset(name: str) -> str:
    """A file of ``eval/report/assets`` (package data, so it is in the wheel too)."""
    return files("eval.report").joinpath("assets", name).read_text(encoding="utf-8")


@cache
def _template() -> list[str]:
    """``page.html`` split at its placeholders: text, placeholder name, text, ..., text."""
    return _PLACEHOLDER.split(_asset("page.html"))


@cache
def _css() -> str:
    # the stage chips take the colours of the report's stacked-bar plot, one per stage of SPEC §7 (a new
    # stage gets its own without an edit here), with dark text on the light ones
    return _asset("page.css") + "".join(f".st-{stage}{{background:{colour};color:{text_colour(colour)}}}\n"
                                        for stage, colour in stage_colours(STAGES).items())


def _page(report_markdown: str, data: Mapping[str, Any] | None, base: Path | None, title: str,
          data_json: str | bytes | None) -> list[str | bytes]:
    """The page's pieces in order: the template's text and what fills its placeholders (the data maybe as bytes)."""
    parts: dict[str, str | bytes] = {
        "TITLE": html.escape(title),
        "CSS": _css(),
        "REPORT": markdown_to_html(report_markdown, base),
        "DATA": browser_json(data) if data_json is None else data_json,
        "JS": _asset("browser.js"),
    }
    return [parts[piece] if i % 2 else piece for i, piece in enumerate(_template())]


def render_html(report_markdown: str, data: Mapping[str, Any] | None, base: Path | None = None,
                title: str = "TempBench reproduction report", data_json: str | bytes | None = None) -> str:
    """The whole page as a string (see the module docstring).

    ``data_json``: :func:`browser_json` (or :func:`browser_json_bytes`) of the
    blob, when already made (then ``data`` is not read).
    """
    return "".join(piece if isinstance(piece, str) else piece.decode("utf-8") for piece in
                   _page(report_markdown, data, base, title, data_json))


def write_html(out_dir: str | Path, report_markdown: str, data: Mapping[str, Any] | None,
               title: str = "TempBench reproduction report", data_json: str | bytes | None = None) -> Path:
    """Write ``report.html`` into ``out_dir`` (atomically); plots are read from ``out_dir/plots``.

    The page is written piece by piece as UTF-8: a ``data_json`` given as
    bytes (tens of MB) is never decoded, nor the page joined into one string.
    """
    out = Path(out_dir)
    target = out / "report.html"
    pieces = _page(report_markdown, data, out, title, data_json)
    with atomic_open(target, "wb") as handle:
        for piece in pieces:
            # encoded inside the block: text that cannot be written is the same OutputError as for a text file
            handle.write(piece.encode("utf-8") if isinstance(piece, str) else piece)
    return target
