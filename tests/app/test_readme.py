"""README.md shows what ``tempbench reproduce`` prints: the block must stay equal to the real output.

The fenced block under "## What `tempbench reproduce` prints" is a terminal
transcript: ``$ COMMAND``, the progress messages (stderr), the headline table
(stdout), the audit's verdict line and the closing "wrote ... in X s" line
(stderr). The command is run on the default data (the session's small sample,
``tempbench_commands`` in ``tests/conftest.py``) and the block must equal its
output line for line, except the elapsed seconds and trailing blanks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
HEADING = "## What `tempbench reproduce` prints"
AUDIT_LINE = "audit of the card's claims"


def section(heading: str) -> str:
    """README.md's text from ``heading`` to the next heading of a section or subsection."""
    text = README.read_text(encoding="utf-8")
    assert heading in text, f"README.md has no heading {heading!r}"
    return re.split(r"(?m)^##+ ", text.split(heading, 1)[1], maxsplit=1)[0]


def fenced_blocks(text: str) -> list[list[str]]:
    """The lines of each fenced (```) block of ``text``, in order."""
    return [block.splitlines() for block in re.findall(r"(?ms)^```[^\n]*\n(.*?)^```", text)]


def readme_block() -> list[str]:
    """The lines of the first fenced block after the heading."""
    blocks = fenced_blocks(section(HEADING))
    assert blocks, f"no fenced block under {HEADING!r}"
    return blocks[0]


def _normalise(lines: list[str]) -> list[str]:
    out = [line.rstrip() for line in lines]
    if out and out[-1].startswith("wrote "):
        out[-1] = re.sub(r" in \d+(\.\d+)? s$", " in X s", out[-1])
    return out


def transcript(stdout: str, stderr: str) -> list[str]:
    """What a terminal shows: the messages before the table, the table, the messages after it.

    ``reproduce`` prints its table (stdout) after the runs' messages and before
    the audit line (stderr), which fixes the interleaving.
    """
    err = stderr.splitlines()
    at = next((i for i, line in enumerate(err) if line.startswith(AUDIT_LINE)), len(err))
    return err[:at] + stdout.splitlines() + err[at:]


# README.md was written before the audit gained its 'scale' verdict and headline count; until the
# lead replaces that line (and this marker with it) the test must fail, and only on that line.
_STALE_AUDIT_LINE = "audit of the card's claims (SPEC §4): FAIL 33, OK 15, OKish 2 (generated data"


@pytest.mark.tempbench_commands(readme_block()[0].removeprefix("$ "))
@pytest.mark.xfail(_STALE_AUDIT_LINE in README.read_text(encoding="utf-8"), strict=True,
                   reason="README.md still shows the audit line of before the 'scale' verdict")
def test_readme_block_equals_reproduce_output(tempbench_commands):
    block = readme_block()
    assert block[0].startswith("$ tempbench reproduce"), block[0]
    proc = tempbench_commands(block[0].removeprefix("$ "))
    printed = _normalise(transcript(proc.stdout, proc.stderr))
    assert any(line.startswith(AUDIT_LINE) for line in printed) and any("TempBench reproduction" in line for line in printed)
    assert _normalise(block[1:]) == printed, "README.md's block differs; the real output is:\n" + "\n".join(
        [block[0], *printed])


def test_transcript_interleaving_and_normalisation():
    out = "  title  \n| table |\n"
    err = "running a\nrunning b\naudit of the card's claims (SPEC §4): OK 1\nwrote x/report.md in 12.3 s\n"
    assert _normalise(transcript(out, err)) == ["running a", "running b", "  title", "| table |",
                                                "audit of the card's claims (SPEC §4): OK 1", "wrote x/report.md in X s"]


REPRO_HEADING = "### How close is the reproduction? (SPEC §8)"


def repro_example() -> tuple[list[str], list[str]]:
    """The worked example under :data:`REPRO_HEADING`: its commands (the shell loop unrolled) and its quoted rows.

    The section's first indented block is the commands, the second the table rows it quotes.
    """
    blocks = [[line[4:] for line in block.group(0).splitlines()]
              for block in re.finditer(r"(?m)(?:^    .*\n)+", section(REPRO_HEADING))]
    assert len(blocks) >= 2, f"expected two indented blocks under {REPRO_HEADING!r}"
    commands: list[str] = []
    lines = iter(blocks[0])
    for line in lines:
        line = line.split("#", 1)[0].strip()
        loop = re.fullmatch(r"for (\w+) in ([^;]+); do", line)
        if loop is None:
            commands.append(line)
            continue
        body = []
        for inner in lines:
            if inner.strip() == "done":
                break
            body.append(inner.strip())
        commands += [b.replace(f"${loop.group(1)}", value) for value in loop.group(2).split() for b in body]
    return commands, [row.rstrip() for row in blocks[1]]


def test_readme_repro_example_prints_what_it_quotes(tempbench_commands):
    commands, rows = repro_example()
    assert [c.split()[:2] for c in commands if c.startswith("tempbench")][-1] == ["tempbench", "repro"], commands
    printed = None
    for command in commands:
        if command.startswith("mkdir "):
            (tempbench_commands.workdir / command.split()[1]).mkdir(exist_ok=True)
        else:
            printed = tempbench_commands(command).stdout
    assert printed is not None
    shown = {line.rstrip() for line in printed.splitlines()}
    missing = [row for row in rows if row not in shown]
    assert not missing, "README.md quotes rows repro does not print:\n" + "\n".join(missing) + "\nit prints:\n" + printed
    # the prose: the other configurations keep every score, their evidence differs in a question or two
    figures = json.loads((tempbench_commands.workdir / "repro.json").read_text(encoding="utf-8"))["configs"]
    others = {name: fig for name, fig in figures.items() if name != "stale_blind"}
    assert sorted(others) == ["hop3_k25", "nonoracle", "oracle"]
    for name, fig in others.items():
        assert set(fig["rmse"].values()) == {0.0} and set(fig["p_value"].values()) == {1.0}, name
        assert 0.997 <= round(fig["ktu"], 3) <= 0.998, (name, fig["ktu"])


TREC_HEADING = "### TREC export: compare, fuse and pool runs with ranx, ir_measures, trec_eval"


def trec_example() -> tuple[list[str], list[str]]:
    """The TREC section's transcript (first fenced block) and its ranx table (the last)."""
    blocks = fenced_blocks(section(TREC_HEADING))
    assert len(blocks) >= 3, f"expected a transcript, the ranx code and its output under {TREC_HEADING!r}"
    return blocks[0], blocks[-1]


def test_readme_trec_export_transcript_and_table(tempbench_commands):
    # The transcript exports the runs of `tempbench reproduce --out /tmp/rep` from inside its runs/ folder;
    # the session's `tempbench reproduce` made the same runs (same data, same split) in tempbench-out/runs/.
    transcript_lines, table = trec_example()
    command = next(line for line in transcript_lines if line.startswith("$ tempbench export-trec "))
    words = command.removeprefix("$ ").split()
    runs = [w for w in words[2:] if w.endswith(".jsonl")]
    assert [w.removesuffix(".jsonl") for w in runs] == ["oracle", "nonoracle", "stale_blind", "hop3_k25"], command
    tempbench_commands("tempbench reproduce")
    shown = transcript_lines[transcript_lines.index(command) + 1:]
    rewritten = " ".join(f"tempbench-out/runs/{w}" if w in runs else w for w in words)
    proc = tempbench_commands(rewritten)
    assert _normalise(shown) == _normalise(proc.stderr.splitlines()), "README.md's export-trec lines differ:\n" + proc.stderr
    # ranx's table: its values equal `tempbench score` of the same runs (the superscripts are ranx's test)
    header = table[0].split()
    assert header[:2] == ["#", "Model"] and [h.lower() for h in header[2:]] == ["recall@10", "ndcg@10", "mrr"], header
    for row in table[2:6]:
        _, name, *values = row.split()
        score = json.loads((tempbench_commands.workdir / "tempbench-out" / "scores" / f"{name}.json").read_text())["rank"]
        quoted = [float(re.match(r"[0-9.]+", v).group(0)) for v in values]
        assert quoted == [round(score[m], 3) for m in ("recall@10", "ndcg@10", "mrr")], (name, quoted)
