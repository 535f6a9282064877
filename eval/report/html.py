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

import base64
import html
import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from eval.explain import STAGE_HELP, STAGES, Explainer
from eval.question_detail import question_detail
from eval.report.plots import stage_colours, text_colour
from eval.report.tables import ordered
from tempbench_core.atomic import write_text
from tempbench_core.jsonl import dumps_json, dumps_strict_bytes
from tempbench_core.schema import format_year

#: Evidence marks of ``tempbench show``, by their code in the blob.
MARKS = ("", "gold", "stale", "dist")

_IMAGE = re.compile(r"^!\[([^\]]*)\]\(([^)]+)\)$")
# A code span (a run of backticks, the text, the same run: CommonMark, so a name holding a
# backtick, fenced by tempbench_core.text.markdown_code, stays one span) or **bold**.
_INLINE = re.compile(r"(?<!`)(?P<fence>`+)(?!`)(?P<code>.+?)(?<!`)(?P=fence)(?!`)|\*\*(?P<bold>[^*]+)\*\*")


# -- the Markdown of report.md -----------------------------------------------------------------

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


# -- the question browser's data -----------------------------------------------------------------

def _triple_text(t: Mapping[str, Any] | None) -> str:
    if not t:
        return ""
    parts = [t.get(k) if t.get(k) is not None else t.get(f"{k}_id") for k in ("s", "r", "o")]
    return " | ".join(str(p) for p in parts) + f" | {t.get('t')}"


class _Strings(dict):
    """A string table: each distinct string stored once in the blob, numbered in order of first use.

    ``table[text]`` is its number; the strings in number order are ``list(table)``.
    """

    def __call__(self, text: str) -> int:
        return self.setdefault(text, len(self))


def _score(value: Any) -> float | None:
    # shown with 4 decimals; the tie group is decided here on the exact scores
    return None if value is None else round(float(value), 4)


_MARK_CODE = {mark: i for i, mark in enumerate(MARKS)}


def _code(mark: str, tie_group: bool, hop: int | None) -> int:
    """Mark, tie-group flag and hop of an evidence item in one small integer: ``mark + 4 * tie + 8 * hop``."""
    return _MARK_CODE[mark] + 4 * bool(tie_group) + 8 * (hop or 0)


def _item_rows(rows: Sequence[tuple[Any, ...]], strings: _Strings) -> list[list[Any]]:
    """``[line number, _score(score), _code(mark, tie, hop)]`` per evidence row (:data:`~eval.question_detail.EVIDENCE_FIELDS` order).

    The browser's most frequent rows: :func:`_score` and :func:`_code` are inlined.
    """
    add = strings.setdefault
    return [[add(line, len(strings)), None if score is None else round(float(score), 4),
             _MARK_CODE[mark] + 4 * bool(tie) + 8 * (hop or 0)]
            for _, mark, hop, score, line, tie in rows]


def browser_data(
    questions: Sequence[Mapping[str, Any]],
    runs: Mapping[str, Mapping[Any, Mapping[str, Any]]],
    explainers: Mapping[str, Explainer],
    progress: Callable[[Iterable[Any], int, str], Iterable[Any]] | None = None,
) -> dict[str, Any]:
    """The browser's JSON blob: every question in any run, and per configuration what ``show`` shows.

    Parameters
    ----------
    questions:
        Benchmark records (their order is the browser's order).
    runs:
        Configuration -> ``{question id: run record}``.
    explainers:
        Configuration -> :class:`~eval.explain.Explainer` of that run.
    progress:
        Optional ``progress(iterable, total, description)`` wrapper.

    The blob is :func:`merge_parts` of one :func:`browser_part` per
    configuration, so the parts can also be made in other processes.
    """
    names = [n for n in ordered(runs) if n in explainers]
    chosen = browser_questions(questions, {n: runs[n] for n in names})
    rows_from = row_sources(chosen, names, runs)
    parts = {name: browser_part(chosen, name, runs[name], explainers[name], rows_from[name], progress) for name in names}
    return merge_parts(chosen, names, parts)


def browser_questions(questions: Sequence[Mapping[str, Any]],
                      runs: Mapping[str, Mapping[Any, Any]]) -> list[Mapping[str, Any]]:
    """The browser's questions: those of any run, in benchmark order."""
    wanted = {qid for run in runs.values() for qid in run}
    return [q for q in questions if q["id"] in wanted]


def row_sources(chosen: Sequence[Mapping[str, Any]], names: Sequence[str],
                runs: Mapping[str, Mapping[Any, Any]]) -> dict[str, list[int]]:
    """Per configuration, the questions whose row it describes: those no earlier configuration has."""
    done: set[int] = set()
    out: dict[str, list[int]] = {}
    for name in names:
        run = runs[name]
        mine = [j for j, q in enumerate(chosen) if j not in done and q["id"] in run]
        done.update(mine)
        out[name] = mine
    return out


def browser_part(
    chosen: Sequence[Mapping[str, Any]],
    name: str,
    run: Mapping[Any, Mapping[str, Any]],
    explainer: Explainer,
    rows_for: Sequence[int],
    progress: Callable[[Iterable[Any], int, str], Iterable[Any]] | None = None,
    span: range | None = None,
    shared: dict[Any, Any] | None = None,
) -> dict[str, Any]:
    """One configuration's share of the blob, JSON-ready, with its own string table (see :func:`merge_parts`).

    ``rows_for``: the positions in ``chosen`` whose question row this part
    makes (:func:`row_sources`). ``span``: only these positions of ``chosen``
    (default: all); the parts of consecutive spans, in order, merge into what
    one part of them all gives. ``shared``: a cache of what does not depend on
    the configuration, kept by the caller across configurations
    (:func:`~eval.question_detail.question_detail`).
    """
    strings = _Strings()
    wanted_rows = set(rows_for)
    qrows: list[list[Any]] = []
    entries: list[Any] = []
    settings: dict[str, Any] | None = None
    positions = range(len(chosen)) if span is None else span
    items: Iterable[tuple[int, Mapping[str, Any]]] = ((j, chosen[j]) for j in positions)
    if progress is not None:
        items = progress(items, len(positions), f"report.html {name}")

    def text(value: Any) -> int | None:
        return None if value is None else strings(str(value))

    for j, q in items:
        record = run.get(q["id"])
        if record is None:
            entries.append(None)
            continue
        d = question_detail(explainer, q, record, facts=False, shared=shared, item_rows=True)
        if j in wanted_rows:
            qrows.append([j, {
                "id": str(d["id"]), "split": d["split"], "q": d["question"],
                "tq": None if d["t_query"] is None else format_year(d["t_query"]),
                "a": d["answer"] if isinstance(d["answer"], (str, int, float)) else dumps_json(d["answer"], indent=None),
                "op": d["operator"], "cx": d["complexity"],
                "hops": [_triple_text(h) for h in d["hops"]],
                "neg": [[variant, _triple_text(p["replaced"]), _triple_text(p["replacement"])]
                        for variant, pairs in d["replacements"].items() for p in pairs],
            }])
        a, p = d["anchor"], d["pool"]
        entries.append({
            "st": [STAGES.index(h["stage"]) for h in d["hops"]],
            "a": [a["source"], text(a["id"]), text(a["label"]), text(a["gold_id"]), text(a["gold_label"]),
                  a["hit"], a["in_kg"]],
            "p": [[p["caps"][h], p["eligible"][h], p["rows"][h], 1 if p["cap_hit"][h] else 0] for h in range(p["hops"])],
            "pr": [p["pool_rows"], p["candidates"]],
            "ev": _item_rows(d["evidence"], strings),
            "ti": _item_rows(d["cutoff_ties"], strings),
        })
        if settings is None:
            settings = {"rule": a["rule"], "k": d["k"]}
    return {"strings": list(strings), "entries": entries, "rows": qrows, "settings": settings}


def merge_parts(chosen: Sequence[Mapping[str, Any]], names: Sequence[str],
                parts: Mapping[str, Mapping[str, Any] | Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The blob from one :func:`browser_part` per configuration, in configuration order.

    A configuration may also give a list of parts of consecutive spans (in
    ``chosen`` order), which counts as the one part they make together.
    :class:`BrowserBlob` does the work, one configuration at a time.
    """
    blob = BrowserBlob(chosen, names)
    for name in names:
        blob.add(name, [parts[name]] if isinstance(parts[name], Mapping) else parts[name])
    return blob.finish()


class BrowserBlob:
    """The browser's blob, merged one configuration at a time, in ``names`` order (:func:`merge_parts`).

    Each part's strings enter the shared table in the part's order of first
    use, so the table, and every index into it, is what one pass over the
    configurations in order would make. A configuration can be added as soon
    as its run is made (``tempbench reproduce`` does so while the next run
    goes on).

    The parts are consumed: their entries are renumbered in place and become
    the blob's (no copy of the browser's million rows is made, nor freed).
    """

    def __init__(self, chosen: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
        self.names = list(names)
        self.number: dict[str, int] = {}
        self.qrows: list[dict[str, Any]] = [{} for _ in chosen]
        self.per_config: dict[str, list[Any]] = {}
        self.settings: dict[str, dict[str, Any]] = {}

    def add(self, name: str, parts: Sequence[Mapping[str, Any]]) -> None:
        """Merge configuration ``name``'s parts (consecutive spans, in order); configurations come in ``names`` order."""
        if len(self.per_config) >= len(self.names) or self.names[len(self.per_config)] != name:
            raise ValueError(f"configuration {name!r} added out of order (expected {self.names[len(self.per_config):]})")
        number = self.number
        # new strings numbered at their first use (the dict keeps insertion order)
        number.update(zip(dict.fromkeys(t for part in parts for t in part["strings"] if t not in number),
                          itertools.count(len(number))))
        entries: list[Any] = []
        for part in parts:
            new = list(map(number.__getitem__, part["strings"]))
            for e in part["entries"]:
                if e is not None:
                    a = e["a"]
                    a[1:5] = [None if i is None else new[i] for i in a[1:5]]
                    for x in e["ev"]:
                        x[0] = new[x[0]]
                    for x in e["ti"]:
                        x[0] = new[x[0]]
                entries.append(e)
            for j, row in part["rows"]:
                self.qrows[j] = row
            if part["settings"] is not None and name not in self.settings:
                self.settings[name] = part["settings"]
        self.per_config[name] = entries

    def finish(self) -> dict[str, Any]:
        """The blob (every configuration added)."""
        missing = [n for n in self.names if n not in self.per_config]
        if missing:
            raise ValueError(f"configurations not added: {missing}")
        return {
            "configs": list(self.names),
            "stages": list(STAGES),
            "stageHelp": [STAGE_HELP[s] for s in STAGES],
            "marks": list(MARKS),
            "strings": list(self.number),
            "questions": self.qrows,
            "runs": self.per_config,
            "settings": self.settings,
        }


def _json_for_script(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` left to parse as HTML."""
    # compact; a NaN or infinity (a score, an answer) as null, which JSON.parse reads. Escaped as
    # UTF-8 bytes (these three characters are single bytes there), decoded once.
    raw = dumps_strict_bytes(data)
    return raw.replace(b"&", b"\\u0026").replace(b"<", b"\\u003c").replace(b">", b"\\u003e").decode("utf-8")


def browser_json(data: Mapping[str, Any] | None) -> str:
    """The browser's blob as the page embeds it (:func:`render_html`'s ``data_json``)."""
    return _json_for_script(data if data is not None else {"configs": [], "questions": [], "runs": {}})


def render_html(report_markdown: str, data: Mapping[str, Any] | None, base: Path | None = None,
                title: str = "TempBench reproduction report", data_json: str | None = None) -> str:
    """The whole page as a string (see the module docstring).

    ``data_json``: :func:`browser_json` of the blob, when already made (then ``data`` is not read).
    """
    parts = {
        "TITLE": html.escape(title),
        "CSS": _CSS,
        "REPORT": markdown_to_html(report_markdown, base),
        "DATA": browser_json(data) if data_json is None else data_json,
        "JS": _JS,
    }
    # one pass: text inserted from the data is never scanned for placeholders again
    return re.sub(r"@@(TITLE|CSS|REPORT|DATA|JS)@@", lambda m: parts[m.group(1)], _TEMPLATE)


def write_html(out_dir: str | Path, report_markdown: str, data: Mapping[str, Any] | None,
               title: str = "TempBench reproduction report", data_json: str | None = None) -> Path:
    """Write ``report.html`` into ``out_dir`` (atomically); plots are read from ``out_dir/plots``."""
    out = Path(out_dir)
    target = out / "report.html"
    write_text(target, render_html(report_markdown, data, base=out, title=title, data_json=data_json))
    return target


_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>@@TITLE@@</title>
<style>@@CSS@@</style>
</head>
<body>
<header>
<h1 class="title">@@TITLE@@</h1>
<nav role="tablist">
<button id="tab-report" class="tab active" type="button" role="tab" aria-controls="page-report">Report</button>
<button id="tab-browser" class="tab" type="button" role="tab" aria-controls="page-browser">Question browser</button>
</nav>
</header>
<main>
<section id="page-report" class="page">
@@REPORT@@
</section>
<section id="page-browser" class="page" hidden>
<div class="filters">
<label>configuration <select id="f-config"></select></label>
<label>complexity <select id="f-cx"></select></label>
<label>operator <select id="f-op"></select></label>
<label>stage <select id="f-stage"></select></label>
<label>at <select id="f-hop"></select></label>
<label class="grow">text <input id="f-text" type="search" placeholder="id, question, answer or gold label"></label>
</div>
<div class="pager"><span id="count"></span>
<button id="prev" type="button">&larr; previous</button><span id="page"></span><button id="next" type="button">next &rarr;</button></div>
<div class="browser">
<div class="list scroll"><table id="qtable"><thead><tr><th>id</th><th>complexity</th><th>operator</th><th>question</th><th>stages per hop</th></tr></thead>
<tbody id="rows"></tbody></table></div>
<aside id="detail" class="detail"><p class="muted">Click a question to see its gold chain, anchor, pool and ranked evidence.</p></aside>
</div>
<p class="muted" id="legend"></p>
</section>
</main>
<noscript><p>The question browser needs JavaScript; the report above does not.</p></noscript>
<script id="tb-data" type="application/json">@@DATA@@</script>
<script>@@JS@@</script>
</body>
</html>
"""

_CSS = """
:root { --fg:#1b1b1b; --muted:#666; --line:#ddd; --bg:#fff; --hi:#eef4ff; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color:var(--fg); background:var(--bg); }
header { position:sticky; top:0; z-index:2; background:#f7f7f7; border-bottom:1px solid var(--line); padding:.4rem 1rem; display:flex; gap:1rem; align-items:center; flex-wrap:wrap; }
h1.title { font-size:1.1rem; margin:0; }
.tab { border:1px solid var(--line); background:#fff; padding:.3rem .8rem; cursor:pointer; border-radius:4px; }
.tab.active { background:#1565c0; color:#fff; border-color:#1565c0; }
main { padding: 0 1rem 2rem; }
.page { max-width: 1600px; }
table { border-collapse:collapse; font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:.2rem .45rem; vertical-align:top; }
th { background:#fafafa; text-align:left; }
td.right, th.right { text-align:right; font-variant-numeric: tabular-nums; }
.scroll { overflow:auto; }
figure { margin:1rem 0; } figure img { max-width:100%; height:auto; border:1px solid var(--line); }
figcaption { color:var(--muted); font-size:12px; }
code { background:#f3f3f3; padding:0 .2rem; border-radius:3px; }
.filters { display:flex; flex-wrap:wrap; gap:.6rem 1rem; margin:1rem 0 .5rem; align-items:end; }
.filters label { display:flex; flex-direction:column; font-size:12px; color:var(--muted); }
.filters .grow { flex: 1 1 16rem; } .filters input { width:100%; }
select, input { font: inherit; padding:.15rem .3rem; }
.pager { display:flex; gap:.6rem; align-items:center; margin:.3rem 0; }
#count { font-weight:600; margin-right:1rem; }
.browser { display:grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap:1rem; align-items:start; }
@media (max-width: 1000px) { .browser { grid-template-columns: 1fr; } }
.list { max-height: 75vh; }
#qtable tbody tr { cursor:pointer; }
#qtable tbody tr:hover { background:var(--hi); }
#qtable tbody tr.selected { background:#dbe8ff; }
#qtable { width:100%; table-layout:fixed; }
#qtable th:nth-child(1) { width:7rem; } #qtable th:nth-child(2) { width:5.5rem; }
#qtable th:nth-child(3) { width:7.5rem; } #qtable th:nth-child(5) { width:17rem; }
#qtable td { overflow:hidden; text-overflow:ellipsis; }
#qtable td.q { white-space:nowrap; }
.detail { border:1px solid var(--line); border-radius:6px; padding:.6rem .8rem; position:sticky; top:3.2rem; max-height: 85vh; overflow:auto; }
.detail h2 { font-size:1rem; margin:.2rem 0 .5rem; } .detail h3 { font-size:.9rem; margin:.9rem 0 .3rem; }
.detail dl { display:grid; grid-template-columns: max-content 1fr; gap:.1rem .8rem; margin:0; }
.detail dt { color:var(--muted); } .detail dd { margin:0; }
.chip { display:inline-block; padding:0 .4rem; margin:0 .15rem .1rem 0; border-radius:9px; font-size:12px; color:#fff; white-space:nowrap; }
.mark-gold { color:#2e7d32; font-weight:600; } .mark-stale { color:#9e6a00; font-weight:600; } .mark-dist { color:#ad1457; font-weight:600; }
.muted { color:var(--muted); }
"""
# the stage chips take the colours of the report's stacked-bar plot, one per stage of SPEC §7 (a new
# stage gets its own without an edit here), with dark text on the light ones
_CSS += "".join(f".st-{stage}{{background:{colour};color:{text_colour(colour)}}}\n"
                for stage, colour in stage_colours(STAGES).items())

_JS = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("tb-data").textContent);
  var Q = D.questions, S = D.strings, PAGE = 50;
  var state = { cfg: D.configs[0], cx: "", op: "", stage: "", hop: "", text: "", page: 0, sel: -1 };
  var matches = [];
  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function chip(stageIndex) {
    var name = D.stages[stageIndex];
    var c = el("span", name, "chip st-" + name);
    c.title = D.stageHelp[stageIndex];
    return c;
  }
  function option(select, value, label) {
    var o = el("option", label); o.value = value; select.appendChild(o);
  }
  function distinct(key) {
    var seen = new Set();
    Q.forEach(function (q) { if (q[key] !== null && q[key] !== undefined) seen.add(String(q[key])); });
    return Array.from(seen).sort();
  }
  // tabs
  function showTab(which) {
    ["report", "browser"].forEach(function (t) {
      $("page-" + t).hidden = t !== which;
      $("tab-" + t).classList.toggle("active", t === which);
    });
  }
  $("tab-report").addEventListener("click", function () { showTab("report"); share(); });
  $("tab-browser").addEventListener("click", function () { showTab("browser"); share(); });
  // filters
  D.configs.forEach(function (c) { option($("f-config"), c, c); });
  option($("f-cx"), "", "all"); distinct("cx").forEach(function (v) { option($("f-cx"), v, v); });
  option($("f-op"), "", "all"); distinct("op").forEach(function (v) { option($("f-op"), v, v); });
  option($("f-stage"), "", "any"); D.stages.forEach(function (s, i) { option($("f-stage"), String(i), s); });
  var maxHops = 0; Q.forEach(function (q) { maxHops = Math.max(maxHops, q.hops.length); });
  option($("f-hop"), "", "any hop");
  for (var h = 1; h <= maxHops; h++) option($("f-hop"), String(h), "hop " + h);
  var hay = Q.map(function (q) {
    return [q.id, q.q, q.a, q.hops.join(" ")].join("\n").toLowerCase();
  });
  function keep(i) {
    var q = Q[i], r = (D.runs[state.cfg] || [])[i];
    if (!r) return false;
    if (state.cx && q.cx !== state.cx) return false;
    if (state.op && q.op !== state.op) return false;
    if (state.hop && r.st.length < +state.hop) return false;
    if (state.stage !== "") {
      var s = +state.stage;
      if (state.hop) { if (r.st[+state.hop - 1] !== s) return false; }
      else if (r.st.indexOf(s) < 0) return false;
    }
    if (state.text && hay[i].indexOf(state.text) < 0) return false;
    return true;
  }
  function filter() {
    matches = [];
    for (var i = 0; i < Q.length; i++) if (keep(i)) matches.push(i);
    state.page = 0;
    render();
    share();
  }
  // The address names the view (#browser&cfg=..&stage=capped&q=..), so it can be shared; the
  // browser's history is not filled with every keystroke (replaceState, not pushState).
  var HASH_KEYS = ["cfg", "cx", "op", "stage", "hop", "text", "q"];
  var applying = false;
  function viewHash() {
    if ($("page-browser").hidden) return "";
    var parts = ["browser"], values = {
      cfg: state.cfg, cx: state.cx, op: state.op, stage: state.stage === "" ? "" : D.stages[+state.stage],
      hop: state.hop, text: $("f-text").value.trim(), q: state.sel >= 0 ? Q[state.sel].id : ""
    };
    HASH_KEYS.forEach(function (k) {
      if (values[k] !== "" && values[k] !== null && values[k] !== undefined) parts.push(k + "=" + encodeURIComponent(values[k]));
    });
    return "#" + parts.join("&");
  }
  function share() {
    if (applying || !window.history || !history.replaceState) return;
    var hash = viewHash();
    // on the report tab the address is left alone unless it names a browser view (a heading's anchor stays)
    if (hash === location.hash || (hash === "" && location.hash.indexOf("#browser") !== 0)) return;
    try { history.replaceState(null, "", hash || location.pathname + location.search); } catch (e) { /* an address the page may not set */ }
  }
  function readHash(hash) {
    var parts = hash.replace(/^#/, "").split("&"), out = { tab: parts[0] };
    parts.slice(1).forEach(function (p) {
      var at = p.indexOf("=");
      if (at < 0) return;
      try { out[p.slice(0, at)] = decodeURIComponent(p.slice(at + 1).replace(/\+/g, " ")); } catch (e) { /* a malformed escape: ignored */ }
    });
    return out;
  }
  function choose(id, value) {
    // only a value the select offers: an unknown one leaves the filter as it is
    var sel = $(id);
    for (var j = 0; j < sel.options.length; j++) if (sel.options[j].value === value) { sel.value = value; return true; }
    return false;
  }
  function applyHash() {
    var h = readHash(location.hash);
    if (h.tab === "report") showTab("report");
    if (h.tab !== "browser") return;
    showTab("browser");
    applying = true;
    if (h.cfg !== undefined && choose("f-config", h.cfg)) state.cfg = h.cfg;
    if (h.cx !== undefined && choose("f-cx", h.cx)) state.cx = h.cx;
    if (h.op !== undefined && choose("f-op", h.op)) state.op = h.op;
    if (h.stage !== undefined) {
      var s = D.stages.indexOf(h.stage);
      if (choose("f-stage", s < 0 ? h.stage : String(s))) state.stage = $("f-stage").value;
    }
    if (h.hop !== undefined && choose("f-hop", h.hop)) state.hop = h.hop;
    if (h.text !== undefined) { $("f-text").value = h.text; state.text = h.text.trim().toLowerCase(); }
    filter();
    var at = -1;
    if (h.q !== undefined) for (var i = 0; i < Q.length; i++) if (String(Q[i].id) === h.q) { at = i; break; }
    if (at >= 0 && D.runs[state.cfg][at]) {
      var pos = matches.indexOf(at);
      if (pos >= 0) state.page = Math.floor(pos / PAGE);
      select(at);
      var row = document.querySelector('#rows tr[data-index="' + at + '"]');
      if (row && row.scrollIntoView) row.scrollIntoView({ block: "nearest" });
    }
    applying = false;
    share();
  }
  function render() {
    var pages = Math.max(1, Math.ceil(matches.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    $("count").textContent = matches.length + " of " + Q.length + " questions";
    $("page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0; $("next").disabled = state.page >= pages - 1;
    var body = $("rows"); body.textContent = "";
    var frag = document.createDocumentFragment();
    matches.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (i) {
      var q = Q[i], r = D.runs[state.cfg][i];
      var tr = el("tr"); tr.dataset.index = i; tr.dataset.qid = q.id;
      if (i === state.sel) tr.className = "selected";
      tr.appendChild(el("td", q.id)); tr.appendChild(el("td", q.cx)); tr.appendChild(el("td", q.op));
      var tq = el("td", q.q, "q"); tq.title = q.q; tr.appendChild(tq);
      var ts = el("td"); r.st.forEach(function (s) { ts.appendChild(chip(s)); }); tr.appendChild(ts);
      tr.addEventListener("click", function () { select(i); });
      frag.appendChild(tr);
    });
    body.appendChild(frag);
  }
  function table(head, rows, aligns) {
    var t = el("table"), th = el("thead"), tr = el("tr");
    head.forEach(function (h, j) { tr.appendChild(el("th", h, aligns && aligns[j])); });
    th.appendChild(tr); t.appendChild(th);
    var tb = el("tbody");
    rows.forEach(function (row) {
      var r = el("tr");
      row.forEach(function (c, j) {
        var td = el("td", null, aligns && aligns[j]);
        if (c instanceof Node) td.appendChild(c); else td.textContent = c === null || c === undefined ? "-" : String(c);
        r.appendChild(td);
      });
      tb.appendChild(r);
    });
    t.appendChild(tb);
    var wrap = el("div", null, "scroll"); wrap.appendChild(t); return wrap;
  }
  function fmtScore(s) { return s === null || s === undefined ? "-" : s.toFixed(4); }
  function markCell(code) {
    var name = D.marks[code & 3], hop = code >> 3;
    return name ? el("span", name + (hop ? " " + hop : ""), "mark-" + name) : "";
  }
  function str(j) { return j === null || j === undefined ? null : S[j]; }
  function select(i) {
    state.sel = i; render(); share();
    var q = Q[i], r = D.runs[state.cfg][i], box = $("detail");
    box.textContent = "";
    box.dataset.qid = q.id;
    box.appendChild(el("h2", "question " + q.id + " (" + q.split + "), " + state.cfg));
    var dl = el("dl");
    var set = D.settings[state.cfg];
    [["question", q.q], ["t_query", q.tq], ["answer", q.a], ["operator", q.op], ["complexity", q.cx], ["k", set.k]]
      .forEach(function (p) { dl.appendChild(el("dt", p[0])); dl.appendChild(el("dd", p[1])); });
    box.appendChild(dl);
    box.appendChild(el("h3", "gold chain, each hop's stage (SPEC \u00a77)"));
    box.appendChild(table(["hop", "s | r | o | t", "stage"], q.hops.map(function (h, j) { return [j + 1, h, chip(r.st[j])]; })));
    var others = D.configs.filter(function (c) { return D.runs[c][i]; }).map(function (c) {
      var span = el("span"); D.runs[c][i].st.forEach(function (s) { span.appendChild(chip(s)); }); return [c, span];
    });
    box.appendChild(el("h3", "stages in every configuration"));
    box.appendChild(table(["config", "stages per hop"], others));
    if (q.neg.length) {
      box.appendChild(el("h3", "negatives: replaced hop \u2192 replacement"));
      box.appendChild(table(["list", "replaced hop", "replacement"], q.neg));
    }
    var a = r.a;
    box.appendChild(el("h3", "anchor (SPEC \u00a72.3)"));
    box.appendChild(table(["field", "value"], [
      ["rule", set.rule],
      ["anchor", a[1] === null ? "none" : str(a[2]) + " (" + str(a[1]) + "), source " + a[0] + (a[6] ? "" : ", not a KG entity")],
      ["gold subject", str(a[4]) + " (" + str(a[3]) + ")"],
      ["anchor is gold", a[5] === null ? "- (no gold subject)" : (a[5] ? "yes" : "NO")]]));
    box.appendChild(el("h3", "pool (SPEC \u00a72.4): " + r.pr[0] + " rows, " + r.pr[1] + " candidates"));
    box.appendChild(table(["hop", "cap", "eligible rows", "taken", "cap hit"],
      r.p.map(function (p, j) { return [j + 1, p[0], p[1], p[2], p[3] ? "yes" : "no"]; }), ["", "right", "right", "right", ""]));
    var evRows = function (items, start) {
      return items.map(function (e, j) { return [start + j, markCell(e[2]), fmtScore(e[1]), (e[2] >> 2) & 1 ? "*" : "", S[e[0]]]; });
    };
    box.appendChild(el("h3", "evidence, ranked (k = " + set.k + ")"));
    box.appendChild(table(["#", "mark", "score", "tie", "line"], evRows(r.ev, 1), ["right", "", "right", "", ""]));
    if (r.ti.length) {
      box.appendChild(el("h3", "cut-off ties (same score as the k-th, below it)"));
      box.appendChild(table(["#", "mark", "score", "tie", "line"], evRows(r.ti, r.ev.length + 1), ["right", "", "right", "", ""]));
      box.appendChild(el("p", "tie * = the tie group at the cut-off: equal scores straddling rank k (SPEC \u00a73.5)", "muted"));
    }
    box.appendChild(el("p", "marks: gold = gold hop valid at t_query; stale = gold hop at an invalid time; dist = S_dist replacement (the number is the hop)", "muted"));
  }
  var timer = null;
  $("f-text").addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.text = $("f-text").value.trim().toLowerCase(); filter(); }, 150);
  });
  [["f-config", "cfg"], ["f-cx", "cx"], ["f-op", "op"], ["f-stage", "stage"], ["f-hop", "hop"]].forEach(function (p) {
    $(p[0]).addEventListener("change", function () {
      state[p[1]] = $(p[0]).value; filter();
      if (p[1] === "cfg" && state.sel >= 0 && D.runs[state.cfg][state.sel]) select(state.sel);
    });
  });
  $("prev").addEventListener("click", function () { state.page -= 1; render(); });
  $("next").addEventListener("click", function () { state.page += 1; render(); });
  var legend = $("legend");
  D.stages.forEach(function (s, j) { legend.appendChild(chip(j)); legend.appendChild(document.createTextNode(D.stageHelp[j] + "  ")); });
  if (D.configs.length) {
    applying = true; filter(); applying = false;  // the address is read before it is written
    applyHash();
    window.addEventListener("hashchange", applyHash);  // a link or an edited address opens its view
  } else $("count").textContent = "no runs";
})();
"""
