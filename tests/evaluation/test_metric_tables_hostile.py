"""Hostile metric tables (eval.metric_tables): refused with a message naming file, line and what was expected."""

from __future__ import annotations

import json

import pytest

from eval.baselines import load_baseline
from eval.metric_tables import MetricBaseline, read_csv_table
from tempbench_core.errors import InputError


def _csv(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8", newline="")
    return p


def _refused(path, reader=read_csv_table) -> InputError:
    with pytest.raises(InputError) as err:
        reader(path)
    text = str(err.value)
    assert path.name in text and "Traceback" not in text
    return err.value


# ---------------------------------------------------------------- 1. a row longer than its header


@pytest.mark.parametrize("text, line, fields, header", [
    ("slice,TRP,CCR\nall,0.2,0.3,0.4\n", 2, 4, 3),                 # wide form
    ("metric,slice,value\nTRP,all,0.2\nCCR,all,0.3,x\n", 3, 4, 3),  # long form, a later row
    ("metric,value\nTRP,0,2\n", 2, 3, 2),                           # a decimal comma, unquoted
])
def test_row_longer_than_header_is_refused_naming_the_line(tmp_path, text, line, fields, header):
    p = _csv(tmp_path, "wide.csv", text)
    err = _refused(p)
    assert err.line == line
    assert f"the row has {fields} fields, the header (line 1) {header}" in err.problem
    assert f"at most {header} fields" in err.expected
    assert f"wide.csv:{line}:" in str(err)


def test_trailing_empty_fields_are_no_extra_values(tmp_path):
    # a trailing delimiter (spreadsheet export) adds an empty field, no value: still read
    m = read_csv_table(_csv(tmp_path, "t.csv", "slice,TRP,CCR\nall,0.2,0.3,\n"))
    assert m.values == {(None, "all", "TRP"): 0.2, (None, "all", "CCR"): 0.3}


# ---------------------------------------------------------------- 2. duplicates


@pytest.mark.parametrize("text, line, what", [
    ("metric,value\nTRP,0.2\nTRP,0.3\n", 3, "TRP (slice all)"),                            # duplicate rows
    ("slice,TRP\ncomplexity=1hop,0.2\n1hop,0.3\n", 3, None),                               # (bare value: no field)
    ("complexity,TRP\n1hop,0.2\n2hop,0.4\n1hop,0.3\n", 4, "TRP (slice complexity=1hop)"),  # duplicate slice row
    ("metric,slice,value\nCCR,all,0.1\nTRP,1hop,0.2\nTRP,1hop,0.3\n", 4, "TRP (slice 1hop)"),  # long form
    ("config,metric,value\noracle,TRP,0.2\noracle,TRP,0.3\n", 3, "TRP (slice all, configuration oracle)"),
    ("metric,all,overall\nTRP,0.2,0.3\n", 2, "TRP (slice all)"),                          # two columns, one slice
])
def test_same_metric_and_slice_twice_is_refused(tmp_path, text, line, what):
    p = _csv(tmp_path, "dup.csv", text)
    if what is None:  # complexity=1hop and the bare 1hop are different keys until the run places the bare one
        assert len(read_csv_table(p).values) == 2
        return
    err = _refused(p)
    assert err.line == line
    assert f"{what} is given a second time" in err.problem
    assert "expected each metric (and slice) once" in str(err)


def test_duplicate_column_name_is_refused(tmp_path):
    err = _refused(_csv(tmp_path, "cols.csv", "slice,TRP,TRP\nall,0.2,0.3\n"))
    assert err.line == 1 and "column 'TRP' is given twice in the header (columns 2 and 3)" in err.problem
    assert "each metric (and slice) once" in err.expected


def test_json_same_metric_and_slice_twice_is_refused(tmp_path):
    # json.loads itself keeps the last of two equal keys (eval.baselines parses the text); two keys
    # naming one slice or one metric are seen here
    p = tmp_path / "nested.json"
    p.write_text(json.dumps({"TRP": {"all": 0.2, "overall": 0.3}}), encoding="utf-8")
    err = _refused(p, load_baseline)
    assert err.line is None and 'TRP (slice all) is given twice: at ["TRP"]["all"] and at ["TRP"]["overall"]' in err.problem
    p.write_text(json.dumps({"all": {"TRP": 0.2, "TRP_macro": 0.3}}), encoding="utf-8")
    assert "TRP (slice all) is given twice" in _refused(p, load_baseline).problem
    p.write_text(json.dumps([{"metric": "TRP", "value": 0.2}, {"metric": "TRP", "value": 0.3}]), encoding="utf-8")
    assert "row 2: TRP (slice all) is given a second time (first on row 1)" in _refused(p, load_baseline).problem


# ---------------------------------------------------------------- 3. a JSON string where a number is expected


@pytest.mark.parametrize("obj, where", [
    ({"TRP": {"all": "0.2"}}, '["TRP"]["all"]'),
    ({"oracle": {"all": {"TRP": "0.2"}}}, '["oracle"]["all"]["TRP"]'),
    ({"TRP_macro": "0.25", "CCR": 0.5}, '["TRP_macro"]'),
    ({"TRP": {"all": True}}, '["TRP"]["all"]'),
])
def test_json_non_number_is_refused(tmp_path, obj, where):
    p = tmp_path / "strings.json"
    p.write_text(json.dumps(obj), encoding="utf-8")
    err = _refused(p, load_baseline)
    assert f"at {where} is" in err.problem and "not a number" in err.problem
    assert "a JSON number" in err.expected


def test_json_null_and_empty_string_are_no_value(tmp_path):
    # null is how the project's JSON writes "no value" (strict JSON): passed over, as before
    p = tmp_path / "nulls.json"
    p.write_text(json.dumps({"TRP": {"all": 0.2, "complexity=1hop": None, "complexity=2hop": ""}}), encoding="utf-8")
    assert load_baseline(p).values == {(None, "all", "TRP"): 0.2}


def test_refusal_noted_by_a_flattener_is_raised_with_the_path():
    # the flatteners have no file name: what they refuse is raised by the MetricBaseline made with the path
    from eval.metric_tables import metric_table_from_json

    values: dict = {}
    assert metric_table_from_json({"TRP": {"all": "0.2"}}, values)
    with pytest.raises(InputError, match=r"^t\.json: the value of TRP at \[\"TRP\"\]\[\"all\"\] is the string"):
        MetricBaseline(path="t.json", values=values)


# ---------------------------------------------------------------- 4. messages that say what is wrong


@pytest.mark.parametrize("raw, shown", [("abc", "'abc'"), ('"0,2"', "'0,2'")])
def test_unreadable_value_names_the_cell(tmp_path, raw, shown):
    err = _refused(_csv(tmp_path, "cell.csv", f"metric,value\nTRP,{raw}\n"))
    assert err.line == 2
    assert f"column 'value': {shown} is not a number" in err.problem and "found columns" not in err.problem
    assert err.expected.startswith("a number")


def test_unreadable_value_among_readable_ones_is_listed(tmp_path):
    m = read_csv_table(_csv(tmp_path, "part.csv", "metric,value\nTRP,0.2\nCCR,abc\n"))
    assert m.values == {(None, "all", "TRP"): 0.2}
    assert m.skipped == ["line 3, column 'value': 'abc' is not a number"]


def test_header_only_and_empty_files(tmp_path):
    err = _refused(_csv(tmp_path, "hdr.csv", "metric,value\n"))
    assert err.line == 1 and "no data rows" in err.problem and "found columns []" not in str(err)
    err = _refused(_csv(tmp_path, "empty.csv", ""))
    assert "empty file" in err.problem


def test_unclosed_quote_names_its_line(tmp_path):
    err = _refused(_csv(tmp_path, "q.csv", 'metric,"value\nTRP,0.2\n'))
    assert err.line == 1 and "unterminated quote" in err.problem
    # a quote opened in a row swallows the rows after it: refused too, not read in part
    err = _refused(_csv(tmp_path, "q2.csv", 'metric,value\nTRP,0.2\nCCR,"0.3\nn,5\n'))
    assert err.line == 3 and "unterminated quote" in err.problem


def test_blank_lines_keep_line_numbers_physical(tmp_path):
    err = _refused(_csv(tmp_path, "blank.csv", "metric,value\n\nTRP,0.2\n\nTRP,0.3\n"))
    assert err.line == 5 and "(first on line 3)" in err.problem


# ---------------------------------------------------------------- accepted tables read as before


def test_valid_tables_read_to_the_same_values(tmp_path):
    wide = read_csv_table(_csv(tmp_path, "wide.csv", "operator,TRP,CCR\ninterval,0.376,0.920\nbefore,0.1,\n"))
    assert wide.values == {(None, "operator=interval", "TRP"): 0.376, (None, "operator=interval", "CCR"): 0.92,
                           (None, "operator=before", "TRP"): 0.1}
    assert wide.skipped == []
    long = read_csv_table(_csv(tmp_path, "long.csv",
                               "config,metric,slice,value\noracle,TRP,complexity=3+hop,0.203\noracle,CCR,all,12%\n"
                               "oracle,CCR,complexity=1hop,nan\n"))
    assert long.values == {("oracle", "complexity=3+hop", "TRP"): 0.203, ("oracle", "all", "CCR"): pytest.approx(0.12)}
    assert long.invalid_lines() == ["oracle CCR (complexity=1hop) = nan: not a finite number (line 4)"]
    tsv = read_csv_table(_csv(tmp_path, "m.tsv", "metric\tall\tcomplexity=1hop\nTRP\t0.2\t0.3\n"))
    assert tsv.values == {(None, "all", "TRP"): 0.2, (None, "complexity=1hop", "TRP"): 0.3}

    p = tmp_path / "nested.json"
    p.write_text(json.dumps({"oracle": {"overall": {"TRP": 0.2, "note": "table 3"}, "3+hop": {"CCR": 0.014}}}),
                 encoding="utf-8")
    assert load_baseline(p).values == {("oracle", "all", "TRP"): 0.2, ("oracle", "3+hop", "CCR"): 0.014}
    agg = {"n_questions": 10, "coverage": 0.9, "TRP_macro": 0.25, "TRP_micro": 0.2, "CCR": 0.5,
           "by_complexity": {"1hop": {"n": 4, "TRP": 0.3, "CCR": 0.75}}}
    p = tmp_path / "score.json"
    p.write_text(json.dumps({"trp_ccr": agg, "coverage": {"overall": 0.9, "by_complexity": {"1hop": 1.0}},
                             "rank": {"mrr": None}, "ci": {"TRP": {"low": 0.1}}}), encoding="utf-8")
    m = load_baseline(p)
    assert m.values[(None, "all", "TRP")] == 0.25 and m.values[(None, "complexity=1hop", "CCR")] == 0.75
    assert m.values[(None, "complexity=1hop", "coverage")] == 1.0 and m.values[(None, "all", "n")] == 10
