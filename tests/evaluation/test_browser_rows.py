"""The browser's evidence rows, made by whole columns, against a plain item-by-item reference.

The question browser writes its rows from :meth:`eval.question_detail.ItemSource.marked`
(only the items with a mark or a hop are visited one by one) and rounds a
part's scores together (:func:`eval.report.browser._round4`); ``tempbench show``
reads :meth:`~eval.question_detail.ItemSource.rows`. Both must give what the
plain per-item rules give (SPEC §7; the blob format of :mod:`eval.report.browser`).
"""

from __future__ import annotations

import math
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from eval.keyspace import RawItems
from eval.question_detail import ALL, MARKS, ItemSource, _MarkSets, item_line
from eval.report.browser import _item_columns, _round4, _shown_scores, _Strings
from tempbench_core.schema import valid_at

# -- rounding ------------------------------------------------------------------------------

_near_ties = st.builds(lambda k, nudge, scale: (k + 0.5) / 10 ** 4 * scale + nudge,
                       st.integers(-10 ** 7, 10 ** 7), st.sampled_from([0.0, 1e-12, -1e-12, 5e-17, -5e-17, 1e-9]),
                       st.sampled_from([1.0, -1.0, 10.0]))
_bits = st.integers(0, 2 ** 64 - 1).map(lambda b: struct.unpack("<d", struct.pack("<Q", b))[0])
_scores = st.one_of(st.floats(allow_nan=True, allow_infinity=True), _near_ties, _bits,
                    st.floats(-100, 100), st.sampled_from([0.0, -0.0, 0.00005, -0.00005, 0.00015, 1.23445, 2.5e-5]))


def _same(a: list, b: list) -> bool:
    """Equal as the blob writes them: the same floats (sign of zero included), NaN for NaN, None for None."""
    def key(v):
        return None if v is None else ("nan" if math.isnan(v) else struct.pack("<d", v))
    return [key(v) for v in a] == [key(v) for v in b]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_scores, st.none()), max_size=60))
def test_rounding_together_is_round_each(values):
    expected = [None if v is None else round(v, 4) for v in values]
    assert _same(_round4(values), expected)
    assert _same(_shown_scores(values), expected)


def test_rounding_other_kinds_of_scores_item_by_item():
    values = [1, True, "0.123456", 2.000049999, None, 10 ** 30]
    expected = [None if v is None else round(float(v), 4) for v in values]
    assert _shown_scores(values) == expected


# -- marks and rows ------------------------------------------------------------------------

_names = st.sampled_from(["a", "b", "c"])
_srot = st.tuples(_names, _names, _names)
_space = st.sampled_from(["id", "label"])
_time = st.sampled_from([1990.0, 1995.0, 2000.0, float("nan")])


@st.composite
def _sources(draw):
    n = draw(st.integers(0, 12))
    spaces = draw(st.lists(_space, min_size=n, max_size=n))
    srots = draw(st.lists(_srot, min_size=n, max_size=n))
    ts = draw(st.lists(_time, min_size=n, max_size=n))
    te = draw(st.lists(_time, min_size=n, max_size=n))
    classes = draw(st.lists(st.integers(-1, 2), min_size=n, max_size=n))
    score = st.one_of(st.none(), st.sampled_from([1.0, 2.5, 0.30000000000000004, 1.00005]), st.integers(0, 3))
    items = []
    for k in range(n):
        item = {"score": draw(score)}
        if draw(st.booleans()):
            item["line"] = draw(st.sampled_from(["x | y | z | 1990", "p | q | r | 2000", f"line {k % 3}"]))
        else:
            item.update(dict(zip(("s", "r", "o"), srots[k], strict=True)), t_start=ts[k], t_end=te[k])
        items.append(item)
    dist_keys = set(draw(st.lists(st.tuples(_space, _srot), max_size=3)))
    stale_five = {(*srot, a, b) for srot, a, b in draw(st.lists(st.tuples(_srot, _time, _time), max_size=3))}
    hop_of = {key: k + 1 for k, key in enumerate(draw(st.lists(st.tuples(_space, _srot), max_size=3)))}
    # as eval.question_detail makes it: every (s, r, o) of a replacement or a hop, in any space
    special = {five[:3] for five in stale_five} | {srot for _, srot in dist_keys} | {srot for _, srot in hop_of}
    marks = _MarkSets(draw(_time), dist_keys, stale_five, hop_of, special)
    group = draw(st.one_of(st.none(), st.just(ALL), st.sampled_from([1.0, 2.5, 2])))
    return ItemSource(items, RawItems(spaces, srots, ts, te, [math.nan] * n), classes, draw(st.integers(1, 5)),
                      group, marks)


def _plain_rows(source: ItemSource) -> list[tuple]:
    """The rows, each item's mark and hop decided on its own (the rules of SPEC §7's ``show``)."""
    tq, dist_keys, stale_five, hop_of, _ = source.marks
    raw, out = source.raw, []
    for j, (item, space, srot, ts, te, cls) in enumerate(zip(source.items, raw.spaces, raw.srots, raw.t_start,
                                                              raw.t_end, source.classes, strict=True)):
        if cls >= 0:
            mark = "gold" if valid_at(ts, te, tq) else "stale"
        elif (*srot, ts, te) in stale_five:
            mark = "stale"
        elif (space, srot) in dist_keys:
            mark = "dist"
        else:
            mark = ""
        score = item.get("score")
        group = source.group_score
        out.append((source.start + j, mark, hop_of.get((space, srot)), score, item_line(item),
                    group is ALL or (group is not None and score == group)))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(_sources(), min_size=1, max_size=4))
def test_rows_and_columns_are_the_plain_rows(sources):
    strings, plain_strings = _Strings(), _Strings()
    for source in sources:
        plain = _plain_rows(source)
        assert source.rows() == plain
        made = _item_columns(source, strings)
        rows = [list(row) for row in zip(made.lines, _shown_scores(made.scores), made.codes, strict=True)]
        expected = [[plain_strings(line), None if score is None else round(float(score), 4),
                     MARKS.index(mark) + 4 * bool(tie) + 8 * (hop or 0)]
                    for _, mark, hop, score, line, tie in plain]
        assert rows == expected
    assert list(strings) == list(plain_strings)
