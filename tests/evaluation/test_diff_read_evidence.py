"""``diff_read_evidence`` (keys from the items as read, only differing questions converted) equals the diff of
the converted evidence (``diff_evidence`` of ``run_evidence``), result or error, on generated runs; its space,
exact matches and differing questions equal the slow reading of :mod:`reference.diff`."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference.diff import exact_reading

from eval import diff as diff_module
from eval.diff import diff_evidence, diff_read_evidence, run_evidence
from tempbench_core.errors import TempbenchError
from tempbench_core.runfile import RunRecords

_NAMES = st.sampled_from(["a", "b", "c", "Q1", "Q2", 7])
_TIMES = st.one_of(st.sampled_from([1990, 1991, 1990.0, 1991.5, -0.0, 0]), st.sampled_from(["1990", "abc", True, None, [1990]]))
_LINES = st.sampled_from(["a | b | c | 1990", "a | b | c | 1991", "x"])


@st.composite
def _items(draw: Any) -> Any:
    form = draw(st.sampled_from(["id", "label", "both", "line", "partial", "list5"]))
    if form == "list5":
        return [draw(_NAMES), draw(_NAMES), draw(_NAMES), draw(_TIMES), draw(_TIMES)]
    item: dict[str, Any] = {}
    if form in ("id", "both", "partial"):
        item.update(s_id=draw(_NAMES), r_id=draw(_NAMES), o_id=draw(_NAMES))
    if form in ("label", "both"):
        item.update(s=draw(_NAMES), r=draw(_NAMES), o=draw(_NAMES))
    if form == "partial":
        del item[draw(st.sampled_from(["s_id", "r_id", "o_id"]))]
    if form != "line":
        item.update(t_start=draw(_TIMES), t_end=draw(_TIMES))
    if form == "line" or draw(st.booleans()):
        item["line"] = draw(_LINES)
    if draw(st.booleans()):
        item["score"] = draw(st.sampled_from([1.5, 2, None]))
    return item


@st.composite
def _pair(draw: Any) -> tuple[RunRecords, RunRecords]:
    """A run and a baseline over overlapping questions, the baseline mostly a copy with some changes."""
    plain = draw(st.booleans())  # mostly run-file items, where the fast path applies
    items = st.builds(lambda s, r, o, t, u: {"s_id": s, "r_id": r, "o_id": o, "t_start": t, "t_end": u},
                      _NAMES, _NAMES, _NAMES, st.sampled_from([1990, 1991, 1992.5]),
                      st.sampled_from([1990, 1991])) if plain else _items()
    qids = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4", 5, "5"]), unique=True, max_size=5))
    run = RunRecords()
    for q in qids:
        run[q] = {"id": q, "evidence": draw(st.lists(items, max_size=4)), "cutoff_ties": []}
    base = RunRecords()
    base.item_form = draw(st.sampled_from(["triple", "line", "list5", "mixed", ""]))
    for q in qids:
        if draw(st.integers(0, 5)) == 0:
            continue  # only in the run
        ev = list(run[q]["evidence"])
        change = draw(st.integers(0, 5))
        if change == 1 and ev:
            ev.reverse()
        elif change == 2:
            ev.append(draw(items))
        elif change in (3, 4) and ev and isinstance(ev[0], dict):
            ev[0] = {**ev[0], "t_start" if change == 3 else "t_end": draw(st.sampled_from([1985, 1991, "abc"]))}
        base[q] = {"id": q, "evidence": ev, "cutoff_ties": []}
    for q in draw(st.lists(st.sampled_from(["b1", "b2", "q1"]), unique=True, max_size=2)):
        if q not in base:
            base[q] = {"id": q, "evidence": draw(st.lists(items, max_size=3)), "cutoff_ties": []}
    return run, base


def _outcome(make: Any) -> Any:
    try:
        return "result", make()
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return "error", type(exc).__name__, str(exc)


@settings(max_examples=600, deadline=None)
@given(pair=_pair(), space=st.sampled_from(["auto", "id", "label", "line", "bogus"]))
def test_same_as_converted(pair: tuple[RunRecords, RunRecords], space: str) -> None:
    run, base = pair
    fast = _outcome(lambda: diff_read_evidence(run, base, space))
    slow = _outcome(lambda: diff_evidence(run_evidence(run), run_evidence(base), base.item_form, space))
    assert fast == slow
    if fast[0] == "result" and space == "auto":
        out = fast[1]
        summary = out["summary"]
        reference = exact_reading(run, base, base.item_form)
        assert (out["space"], set(out["questions"]) - {q for q, d in out["questions"].items() if "only_in" in d},
                summary["exact"], summary["only_in_baseline"], summary["only_in_run"]) == reference


def test_only_differing_questions_converted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run-file items: the questions whose keys agree are not converted item by item."""
    item = {"s_id": "a", "r_id": "b", "o_id": "c", "t_start": 1990, "t_end": 1990, "score": 1.0}
    run, base = RunRecords(), RunRecords()
    for q in range(50):
        run[f"q{q}"] = {"id": f"q{q}", "evidence": [dict(item)], "cutoff_ties": []}
        base[f"q{q}"] = {"id": f"q{q}", "evidence": [dict(item)], "cutoff_ties": []}
    base["q3"]["evidence"] = [{**item, "t_start": 1991}]
    converted: list[Any] = []
    real = diff_module.diff_item
    monkeypatch.setattr(diff_module, "diff_item", lambda raw: converted.append(raw) or real(raw))
    out = diff_read_evidence(run, base)
    assert out["summary"]["exact"] == 49 and list(out["questions"]) == ["q3"]
    assert len(converted) == 2
    assert out["questions"]["q3"]["changed"][0]["baseline_time"] == [1991.0, 1990.0]


def test_questions_of_different_spaces_are_each_compared_in_their_own() -> None:
    """SPEC §1.4 lets each item be in the label or the id space: a file whose questions differ is still diffed."""
    by_label = {"s": "A", "r": "rel", "o": "B", "t_start": 1990, "t_end": 1990}
    by_id = {"s_id": "Q1", "r_id": "P1", "o_id": "Q2", "t_start": 1975, "t_end": 1975}
    run, base = RunRecords(), RunRecords()
    run["q1"] = {"id": "q1", "evidence": [dict(by_label)], "cutoff_ties": []}
    base["q1"] = {"id": "q1", "evidence": [dict(by_label)], "cutoff_ties": []}
    run["q2"] = {"id": "q2", "evidence": [dict(by_id)], "cutoff_ties": []}
    base["q2"] = {"id": "q2", "evidence": [{**by_id, "t_start": 1976}], "cutoff_ties": []}
    for out in (diff_read_evidence(run, base), diff_evidence(run_evidence(run), run_evidence(base))):
        assert out["space"] == diff_module.PER_QUESTION
        assert out["summary"]["exact"] == 1 and list(out["questions"]) == ["q2"]
        assert out["questions"]["q2"]["space"] == "id" and len(out["questions"]["q2"]["changed"]) == 1
    assert exact_reading(run, base, base.item_form) == ("per question", {"q2"}, 1, 0, 0)
    with pytest.raises(TempbenchError, match="in the id space"):
        diff_read_evidence(run, base, "id")  # a space asked for must hold every item, as before
    base["q1"] = {"id": "q1", "evidence": [dict(by_id)], "cutoff_ties": []}  # q1: labels in the run, ids here
    with pytest.raises(TempbenchError, match="question q1: cannot compare evidence"):
        diff_read_evidence(run, base)
