"""The relation catalogue is a data file shipped with the package, validated on load (SPEC §5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tempbench.sample.catalogue import (
    CATALOGUE_FILE,
    COUNTRY,
    EVENT,
    ORG,
    PARTY,
    PERSON,
    TYPE_NAMES,
    default_catalogue,
    load_catalogue,
    shipped_catalogue_path,
)
from tempbench.sample.world import build_world
from tempbench_core.errors import ConfigError, MissingDataError
from tempbench_core.tomlfile import loads_toml

SHIPPED = shipped_catalogue_path()


def test_the_catalogue_ships_inside_the_package() -> None:
    import tempbench.sample

    assert SHIPPED.name == CATALOGUE_FILE
    assert SHIPPED.parent == Path(tempbench.sample.__file__).parent
    assert SHIPPED.is_file()


def test_shipped_catalogue_loads_with_the_values_written_in_it() -> None:
    cat = default_catalogue()
    # a plain TOML read of the same file, without the catalogue's validation
    raw = loads_toml(SHIPPED.read_text(encoding="utf-8"))
    assert [r.pid for r in cat.relations] == [row["pid"] for row in raw["relation"]]
    assert len(cat.relations) == 37
    by_pid = {r.pid: r for r in cat.relations}
    p27 = by_pid["P27"]
    assert (p27.label, p27.subj, p27.obj, p27.kind, p27.hub) == ("country of citizenship", (PERSON,), (COUNTRY,), "career", 2.0)
    # list order is kept: it decides which block of entities a draw lands in
    assert by_pid["P488"].subj == (PARTY, ORG)
    assert by_pid["P1344"].mirror == "P710" and by_pid["P1344"].dated == 0.9
    assert by_pid["P26"].mirror == "sym"
    # defaults of the optional fields
    assert by_pid["P6"].hub == 1.1 and by_pid["P6"].dated == 0.0 and by_pid["P6"].mirror is None
    assert cat.mirror_labels == {"P1308": "officeholder", "P1346": "winner", "P710": "participant", "P1365": "replaces"}
    assert sum(cat.type_shares.values()) == 44_600
    assert COUNTRY not in cat.type_shares and EVENT not in cat.type_shares
    for row in raw["relation"]:
        for name in row["subject"] + row["object"]:
            assert name in TYPE_NAMES


def _broken(tmp_path: Path, old: str, new: str, count: int = 1) -> Path:
    text = SHIPPED.read_text(encoding="utf-8")
    assert old in text, old
    path = tmp_path / "bad relations.toml"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return path


@pytest.mark.parametrize(("old", "new", "message"), [
    ('subject = ["person"]\nobject = ["country"]', 'subject = ["person"]\nobject = ["nation"]', r"unknown entity type 'nation'"),
    ('subject = ["person"]\nobject = ["country"]', 'subject = ["persn"]\nobject = ["country"]', r"did you mean 'person'"),
    ('label = "country of citizenship"\n', "", r"#1 \(P27\): missing field 'label'"),
    ('kind = "career"\nmean = 0\n', 'kind = "career"\n', r"missing field 'mean'"),
    ('hub = 2.0\n', 'hubb = 2.0\n', r"unknown field 'hubb'"),
    ('kind = "career"', 'kind = "carrer"', r"kind = 'carrer'"),
    ('weight = 10.0', 'weight = -1.0', r"weight = -1.0 \(expected a number >= 0\)"),
    ('weight = 10.0', 'weight = "10"', r"weight = '10'"),
    ('mirror = "P1308"', 'mirror = "P999999"', r"mirror P999999 has no label"),
    ('pid = "P17"', 'pid = "P27"', r"P27 is listed twice"),
    ('pid = "P17"', 'pid = "17"', r"pid = '17'"),
    ('P1308 = "officeholder"\n', "", r"#3 \(P39\): mirror P1308 has no label"),
    ('pid = "P35"', 'pid = "P36"', r"needs properties P35 "),
    ('person = 30000\n', "", r"\[type_shares\]: missing field person"),
    ('\n[type_shares]\n', '\n[type_shares]\ncountry = 10\n', r"country cannot have a share"),
    ('[[relation]]\npid = "P27"', '[[relations]]\npid = "P27"', r"unknown table 'relations'"),
    ('pid = "P27"', 'pid = "P27', r"not valid TOML"),
])
def test_a_malformed_copy_is_a_clear_error_naming_the_file(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = _broken(tmp_path, old, new)
    with pytest.raises(ConfigError) as err:
        load_catalogue(path)
    text = str(err.value)
    assert str(path) in text
    assert re.search(message, text), text


def test_a_missing_catalogue_is_missing_data(tmp_path: Path) -> None:
    with pytest.raises(MissingDataError, match="relation catalogue not found"):
        load_catalogue(tmp_path / "nope.toml")


def test_the_world_is_drawn_from_the_catalogue_it_is_given(tmp_path: Path) -> None:
    # a relabelled property and a changed share show up in the generated world
    path = _broken(tmp_path, 'label = "head of state"', 'label = "monarch or president"')
    cat = load_catalogue(path)
    world = build_world("tiny", 3, catalogue=cat)
    assert world.labels["P35"] == "monarch or president"
    assert build_world("tiny", 3).labels["P35"] == "head of state"
    # an identical copy gives an identical world
    copy = tmp_path / "copy.toml"
    copy.write_bytes(SHIPPED.read_bytes())
    a, b = build_world("tiny", 3, catalogue=load_catalogue(copy)), build_world("tiny", 3)
    assert a.labels == b.labels
    for col in ("head", "tail", "relation", "year"):
        assert (getattr(a, col) == getattr(b, col)).all()
