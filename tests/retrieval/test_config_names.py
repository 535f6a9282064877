"""Configuration names and ``--set`` mistakes that teach (issue 11 §4, issue 12 §2)."""

from __future__ import annotations

import pytest

from retriever.config import load_config, looks_like_path, override_name, parse_override
from tempbench_core.errors import ConfigError, did_you_mean


@pytest.mark.parametrize(("text", "path"), [("oracle", False), ("oracle.toml", True), ("./oracle", True),
                                            ("configs/x", True), ("my.TOML", True), ("nonoracle", False)])
def test_a_name_is_a_path_only_when_it_looks_like_one(text, path):
    assert looks_like_path(text) is path


def test_a_shipped_name_wins_over_a_file_of_that_name_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "oracle").write_text("k = 3\n", encoding="utf-8")  # a file, not a shipped config
    (tmp_path / "stale_blind").mkdir()  # a folder
    assert load_config("oracle").k == 15 and load_config("oracle").name == "oracle"
    assert load_config("stale_blind").temporal_filter is False
    (tmp_path / "mine.toml").write_text("k = 3\n", encoding="utf-8")
    assert load_config("mine.toml").k == 3 and load_config("./mine.toml").name == "mine"


@pytest.mark.parametrize(("args", "expected"), [
    (("oracel",), "did you mean 'oracle'"),
    (("oracle.toml",), "the shipped configuration is named 'oracle' (--config oracle)"),
    (("oracle", ["kk=5"]), "unknown config key 'kk' (did you mean 'k'?)"),
    (("oracle", ["temporal_filter=False"]), "did you mean temporal_filter=false?"),
    (("oracle", ["caps=60,200,400"]), "did you mean caps=[60,200,400]?"),
    (("oracle", ["anchor=linkr"]), "invalid value 'linkr' (did you mean 'linker'?)"),
    (("oracle", ["tie_break=reverse-lex"]), "did you mean 'reverse_lex'?"),
])
def test_mistakes_get_a_hint(tmp_path, monkeypatch, args, expected):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        load_config(*args)
    assert expected in str(err.value)


def test_did_you_mean_is_empty_when_nothing_is_close():
    assert did_you_mean("zzz", ["oracle", "nonoracle"]) == ""
    assert did_you_mean("ORACLE", ["oracle"]) == " (did you mean 'oracle'?)"


def test_overrides_name_the_configuration_and_never_collide():
    assert load_config("oracle", ["k=5"]).name == "oracle+k=5"
    assert load_config("oracle", ["k=5", "name=mine"]).name == "mine"
    a = override_name("oracle", ['line_template="{s}/{r}"'])
    b = override_name("oracle", ['line_template="{s}|{r}"'])
    assert a != b and "/" not in a and "|" not in b
    assert parse_override("caps=[60, 200]") == ("caps", [60, 200])
