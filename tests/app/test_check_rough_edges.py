"""``tempbench check``'s rough edges of issue 24 item 5: years printed plain, duplicate rows and the caps.

The expected texts are written out here, never taken from the checker's output.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from retriever import load_config
from tempbench.check import check_data
from tempbench.cli import main
from tempbench_core.layout import KG_FILE, MANIFEST, find_inputs
from tempbench_core.schema import format_year


@pytest.fixture()
def root(small_sample, tmp_path) -> Path:
    """A copy of the generated sample without its manifest: a user's root."""
    out = tmp_path / "root"
    shutil.copytree(small_sample, out)
    (out / MANIFEST).unlink()
    return out


def _keep_rows(root: Path, keep) -> list[str]:
    kg = root / KG_FILE
    lines = kg.read_text(encoding="utf-8").splitlines(keepends=True)
    body = [line for line in lines[1:] if keep(line)]
    kg.write_text(lines[0] + "".join(body), encoding="utf-8")
    return body


def _finding(report, code):
    hits = [f for f in report.findings if f.code == code]
    assert hits, f"no finding {code}: {[f.to_dict() for f in report.findings]}"
    return hits[0]


def test_years_are_plain_integers_in_messages_and_tables(root, capsys):
    _keep_rows(root, lambda line: int(line.split(",")[0]) >= 2005)
    assert main(["check", "--data", str(root)]) == 0
    out = capsys.readouterr().out
    assert "kg first year 2005 (card 1900)" in out
    assert "2,005" not in out and "1,900" not in out and "2,024" not in out
    # the counts table too
    assert any(line.split("|")[1].strip() == "kg first year" and line.split("|")[2].strip() == "2005"
               for line in out.splitlines() if line.count("|") >= 4)


def test_missing_kg_counts_show_card_years_plain(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["check", "--data", str(empty)]) == 2
    out = capsys.readouterr().out
    assert "kg first year n/a (card 1900)" in out and "kg last year n/a (card 2024)" in out


def test_format_year_is_exact_for_long_integers():
    assert format_year(999_999_999_999_999_999) == "999999999999999999"
    assert format_year(-(10**18 - 1)) == "-999999999999999999"
    assert format_year(1994.0) == "1994" and format_year(1994.5) == "1994.5"


def _dedupe_then_copy(root: Path, n: int) -> None:
    """Leave exactly ``n`` exact duplicate rows: the rows made unique, then ``n`` of them written twice."""
    kg = root / KG_FILE
    lines = kg.read_text(encoding="utf-8").splitlines(keepends=True)
    unique = list(dict.fromkeys(lines[1:]))
    kg.write_text(lines[0] + "".join(unique) + "".join(unique[:n]), encoding="utf-8")


def test_duplicate_rows_are_a_warning_under_cap_counts_rows(root, capsys):
    _dedupe_then_copy(root, 7)
    report = check_data(find_inputs(root))  # the shipped configurations: cap_counts=rows
    finding = _finding(report, "kg.duplicates")
    assert finding.level == "warning" and finding.file == KG_FILE
    assert finding.message.startswith("7 exact duplicate row(s)")
    assert "cap_counts=rows" in finding.message and "uses up" in finding.message
    assert main(["check", "--data", str(root), "--config", "oracle"]) == 0  # a warning: still exit 0
    assert "under cap_counts=rows (oracle)" in capsys.readouterr().out


def test_duplicate_rows_are_info_when_no_configuration_counts_rows(root, tmp_path, capsys):
    _dedupe_then_copy(root, 3)
    config = tmp_path / "unique.toml"
    config.write_text('name = "unique"\ncap_counts = "unique_triples"\n', encoding="utf-8")
    assert main(["check", "--data", str(root), "--config", str(config), "--json", str(tmp_path / "c.json")]) == 0
    doc = __import__("json").loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    dup = [f for f in doc["findings"] if f["code"] == "kg.duplicates"]
    assert [f["level"] for f in dup] == ["info"] and "cap_counts=unique_triples" in dup[0]["message"]
    # one configuration of two counting rows is enough for the warning
    report = check_data(find_inputs(root), configs=[load_config(str(config)), load_config("oracle")])
    assert _finding(report, "kg.duplicates").level == "warning"


def test_no_duplicate_finding_without_duplicates(root):
    _dedupe_then_copy(root, 0)
    report = check_data(find_inputs(root))
    assert not [f for f in report.findings if f.code == "kg.duplicates"]


def test_an_unknown_check_config_is_an_input_error(root, capsys):
    assert main(["check", "--data", str(root), "--config", "oracel"]) == 2
    assert "oracle" in capsys.readouterr().err
