"""Retriever configuration: defaults, shipped files, overrides, errors (SPEC §2, §2.6)."""

from __future__ import annotations

import pytest

from retriever.config import RetrieverConfig, from_mapping, load_config, valid_keys
from tempbench_core.errors import ConfigError


def test_defaults_follow_spec():
    cfg = RetrieverConfig()
    assert (cfg.anchor, cfg.hops, cfg.caps, cfg.temporal_filter, cfg.k) == ("oracle", 2, (60, 200, 400), True, 15)
    assert (cfg.cap_scope, cfg.cap_counts, cfg.linker_match, cfg.linker_min_length) == ("per_hop", "rows", "substring", 2)
    assert cfg.line_template == "{s} | {r} | {o} | {t}"
    assert (cfg.query_includes_t_query, cfg.tie_break, cfg.homonym_order, cfg.oracle_label_ties) == (
        False, "reverse_lex", "pool", "first")


@pytest.mark.parametrize(
    ("name", "anchor", "hops", "filt", "k"),
    [("oracle", "oracle", 2, True, 15), ("nonoracle", "linker", 2, True, 15),
     ("stale_blind", "oracle", 2, False, 15), ("hop3_k25", "oracle", 3, True, 25)],
)
def test_shipped_configs_match_spec_table(name, anchor, hops, filt, k):
    cfg = load_config(name)
    assert (cfg.name, cfg.anchor, cfg.hops, cfg.temporal_filter, cfg.k, cfg.caps) == (name, anchor, hops, filt, k, (60, 200, 400))
    # every other key keeps SPEC's default
    rest = {key: value for key, value in cfg.to_dict().items() if key not in ("name", "description", "anchor", "hops", "temporal_filter", "k")}
    default = {key: value for key, value in RetrieverConfig().to_dict().items() if key in rest}
    assert rest == default


def test_overrides_are_toml_values():
    cfg = load_config("oracle", ["caps=[1, 2, 3]", "temporal_filter=false", "anchor=linker", "k=7",
                                 'line_template="{s} {r} {o}"', "name=mine"])
    assert cfg.caps == (1, 2, 3) and cfg.temporal_filter is False and cfg.anchor == "linker" and cfg.k == 7
    assert cfg.line_template == "{s} {r} {o}" and cfg.name == "mine"


def test_toml_file_and_stem_name(tmp_path):
    path = tmp_path / "my_run.toml"
    path.write_text('anchor = "linker"\nhops = 3\nk = 25\n', encoding="utf-8")
    cfg = load_config(path)
    assert cfg.name == "my_run" and cfg.anchor == "linker" and cfg.hops == 3


def test_unknown_key_lists_valid_keys(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("hop = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert "'hop'" in str(err.value) and all(key in str(err.value) for key in valid_keys())
    with pytest.raises(ConfigError, match="valid keys"):
        load_config("oracle", ["topk=3"])


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        ("hops='2'", "hops"), ("k=0", "k"), ("temporal_filter=1", "temporal_filter"), ("hops=3", "caps"),
        ("anchor=foo", "anchor"), ('line_template="{x}"', "line_template"), ("caps=[60, -1]", "caps"),
        ('line_template="{s"', "line_template"), ("cap_scope=per_edge", "cap_scope"), ("k=true", "k"),
        ('name="a/b"', "name"),
    ],
)
def test_bad_values_name_key_value_and_expectation(override, fragment):
    cfgs = {"hops=3": ["caps=[60, 200]", "hops=3"]}
    with pytest.raises(ConfigError) as err:
        load_config("oracle", cfgs.get(override, [override]))
    assert fragment in str(err.value) and "expected" in str(err.value)


def test_missing_config_and_bad_toml(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("k = [\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_to_dict_round_trip():
    cfg = load_config("hop3_k25", ["cap_scope=per_node"])
    assert from_mapping(cfg.to_dict()) == cfg
    assert list(cfg.to_dict()) == valid_keys()


def test_readme_documents_every_key():
    from tempbench_core.layout import shipped_configs_dir

    text = (shipped_configs_dir() / "README.md").read_text(encoding="utf-8")
    for key in valid_keys():
        assert f"`{key}`" in text, key
