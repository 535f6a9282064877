"""The Markdown subset ``report.md`` uses, as HTML: the report half of ``report.html``.

Headings (each with a unique ``id``, its slug), paragraphs, ``- `` lists,
pipe tables (``\\|`` a literal bar in a cell; a right-aligned column by its
``---:`` rule), inline code spans and ``**bold**``; a line that is only an
image ``![alt](plots/x.png)`` becomes a figure with the PNG inlined as a
``data:`` URI (read under ``base``), or a note when the file is missing. All
text goes through :func:`html.escape`; nothing else of Markdown is read.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)$")
# A code span (a run of backticks, the text, the same run: CommonMark, so a name holding a
# backtick, fenced by tempbench_core.text.markdown_code, stays one span) or **bold**.
_INLINE = re.compile(r"(?<!`)(?P<fence>`+)(?!`)(?P<code>.+?)(?<!`)(?P=fence)(?!`)|\*\*(?P<bold>[^*]+)\*\*")


def _inline(text: str) -> str:
    """Escape one line of Markdown text, turning `code` and **bold** into HTML."""
    out = []
    at = 0
    for match in _INLINE.finditer(text):
        out.append(html.escape(text[at:match.start()]))
        code = match.group("code")
        if code is not None:
            if len(code) > 2 and code.startswith(" ") and code.endswith(" ") and code.strip():
                code = code[1:-1]  # the padding of a span that starts or ends with a backtick
            out.append(f"<code>{html.escape(code)}</code>")
        else:
            out.append(f"<strong>{html.escape(match.group('bold'))}</strong>")
        at = match.end()
    out.append(html.escape(text[at:]))
    return "".join(out)


def _cells(line: str) -> list[str]:
    """Cells of a Markdown table row; ``\\|`` is a literal bar inside a cell."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def _slug(text: str, used: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, n = base, 2
    while slug in used:
        slug, n = f"{base}-{n}", n + 1
    used.add(slug)
    return slug


def _image(alt: str, target: str, base: Path | None) -> str:
    path = (base / target) if base is not None else Path(target)
    if target.lower().endswith(".png") and path.is_file():
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return (f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(alt)}</figcaption></figure>")
    return f"<p><em>[{html.escape(alt)}: {html.escape(target)} not found]</em></p>"


def markdown_to_html(text: str, base: Path | None = None) -> str:
    """HTML of the Markdown subset ``report.md`` uses; images under ``base`` become ``data:`` URIs."""
    lines = text.splitlines()
    out: list[str] = []
    used: set[str] = set()
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        heading = re.match(r"^(#{1,6})\s+(.*)$", stripped)
        if heading:
            level = len(heading.group(1))
            out.append(f'<h{level} id="{_slug(heading.group(2), used)}">{_inline(heading.group(2))}</h{level}>')
            i += 1
            continue
        image = _IMAGE.match(stripped)
        if image:
            out.append(_image(image.group(1), image.group(2), base))
            i += 1
            continue
        if stripped.startswith("|"):
            block = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                block.append(lines[i])
                i += 1
            out.append(_table(block))
            continue
        if stripped.startswith("- "):
            items = []
            while i < len(lines) and lines[i].strip().startswith("- "):
                items.append(f"<li>{_inline(lines[i].strip()[2:])}</li>")
                i += 1
            out.append("<ul>" + "".join(items) + "</ul>")
            continue
        para = []
        while i < len(lines) and lines[i].strip() and not re.match(r"^(#{1,6}\s|\||- |!\[)", lines[i].strip()):
            para.append(lines[i].strip())
            i += 1
        out.append(f"<p>{_inline(' '.join(para))}</p>")
    return "\n".join(out)


def _table(block: list[str]) -> str:
    header = _cells(block[0])
    aligns = ["left"] * len(header)
    body = block[1:]
    if body and re.fullmatch(r"\|?[\s:|-]+\|?", body[0].strip()):
        aligns = ["right" if c.endswith(":") and not c.startswith(":") else "left" for c in _cells(body[0])]
        body = body[1:]

    def row(cells: list[str], tag: str) -> str:
        return "<tr>" + "".join(
            f'<{tag} class="{aligns[j] if j < len(aligns) else "left"}">{_inline(c)}</{tag}>' for j, c in enumerate(cells)
        ) + "</tr>"

    return ('<div class="scroll"><table class="md"><thead>' + row(header, "th") + "</thead><tbody>"
            + "".join(row(_cells(r), "td") for r in body) + "</tbody></table></div>")
