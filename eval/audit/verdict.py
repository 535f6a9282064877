"""Verdict of one reproduced number against the published one (SPEC §4).

The tolerances are data, written once: they live in ``configs/paper_numbers.toml``
under ``[tolerance.<kind>]`` (read by :func:`eval.audit.claims.load_claims`), and
a claim may override them with its own ``tolerance`` table.

Rule, with ``d = reproduced - paper`` and every bound inclusive (plus a
``1e-9`` slack so a decimal boundary such as ``0.208 - 0.203`` lands on the
boundary despite binary floating point):

- ``count``: ``OK`` iff ``d == 0``; ``OKish`` iff ``|d| <= okish_rel * max(|paper|, 1)``;
  else ``FAIL``.
- ``rate``: ``OK`` iff ``|d| <= ok_abs``; ``OKish`` iff ``|d| <= okish_abs``; else ``FAIL``.
- ``range``: the paper value is ``[low, high]`` and the reproduced value
  ``[min, max]``; ``d`` is how far the reproduced interval reaches outside the
  paper's, ``max(low - min, max - high, 0)``; then the ``rate`` rule on ``d``.
- A reproduced value of ``None`` (not computable from the files given) is ``n/a``.
- A claim that lists the data's origin in its ``by_construction`` (the
  sample generator and ``build-benchmark`` make it true, whatever the KG) is
  ``by-construction`` on that data, whatever its value: never OK, OKish or
  FAIL (:func:`eval.audit.run.run_audit`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

OK = "OK"
OKISH = "OKish"
FAIL = "FAIL"
NA = "n/a"
#: A count that grows with the data's size, on data that is not the release (``scales`` in the claims file).
SCALE = "scale"
#: A claim that tempbench's builder makes true, on data that builder made (``by_construction`` in the claims file).
BY_CONSTRUCTION = "by-construction"

#: Slack for decimal boundaries (binary floats cannot hold 0.005 exactly).
EPS = 1e-9

#: The bounds each kind's rule reads (their values: the claims file's ``[tolerance.<kind>]``).
BOUNDS: dict[str, tuple[str, ...]] = {
    "count": ("okish_rel",),
    "rate": ("ok_abs", "okish_abs"),
    "range": ("ok_abs", "okish_abs"),
}

KINDS = tuple(BOUNDS)


def delta(paper: Any, reproduced: Any, kind: str) -> float | None:
    """Signed difference ``reproduced - paper`` (for ``range``: the distance outside).

    Parameters
    ----------
    paper, reproduced:
        Numbers, or ``[low, high]`` pairs for ``kind='range'``.
    kind:
        ``count``, ``rate`` or ``range``.

    Returns
    -------
    float or None
        ``None`` when ``reproduced`` is ``None``. For ``range`` the value is
        ``max(low - min, max - high, 0)`` (never negative).
    """
    if reproduced is None:
        return None
    if kind == "range":
        low, high = _pair(paper)
        rmin, rmax = _pair(reproduced)
        return max(low - rmin, rmax - high, 0.0)
    if kind not in BOUNDS:
        raise ValueError(f"unknown claim kind {kind!r}; expected one of {', '.join(KINDS)}")
    d = float(reproduced) - float(paper)
    return int(d) if kind == "count" and d == int(d) else d


def verdict(
    paper: Any,
    reproduced: Any,
    kind: str,
    tolerance: Mapping[str, float],
) -> str:
    """``OK`` / ``OKish`` / ``FAIL`` (or ``n/a``) by the rule of the module docstring.

    Parameters
    ----------
    paper, reproduced:
        The published and the recomputed value (``[low, high]`` for ``range``).
    kind:
        ``count``, ``rate`` or ``range``.
    tolerance:
        The kind's bounds (:data:`BOUNDS`): its class in the claims file
        (:func:`eval.audit.claims.load_claims`), with the claim's own overrides.
    """
    if kind not in BOUNDS:
        raise ValueError(f"unknown claim kind {kind!r}; expected one of {', '.join(KINDS)}")
    if reproduced is None:
        return NA
    missing = [b for b in BOUNDS[kind] if b not in tolerance]
    if missing:
        raise ValueError(f"the {kind} rule needs the tolerance {', '.join(missing)}")
    d = delta(paper, reproduced, kind)
    assert d is not None
    if kind == "count":
        if d == 0:
            return OK
        limit = tolerance["okish_rel"] * max(abs(float(paper)), 1.0)
        return OKISH if abs(d) <= limit + EPS else FAIL
    if abs(d) <= tolerance["ok_abs"] + EPS:
        return OK
    if abs(d) <= tolerance["okish_abs"] + EPS:
        return OKISH
    return FAIL


def tolerances_from_toml(table: Mapping[str, Any] | None,
                         defaults: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, dict[str, float]]:
    """Class tolerances from a ``[tolerance]`` table, what it leaves out taken from ``defaults``.

    Every kind of :data:`BOUNDS` must end with each of its bounds.
    """
    out: dict[str, dict[str, float]] = {k: dict((defaults or {}).get(k, {})) for k in KINDS}
    if table is not None and not isinstance(table, Mapping):
        raise ValueError(f"[tolerance] is {table!r}, not a table (expected [tolerance.<class>] tables of bounds)")
    for kind, values in (table or {}).items():
        if kind not in out:
            raise ValueError(f"unknown tolerance class {kind!r}; expected one of {', '.join(KINDS)}")
        if not isinstance(values, Mapping):
            raise ValueError(f"tolerance {kind} = {values!r} is not a table (expected bounds such as okish_rel = 0.1)")
        for k, v in values.items():
            number = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan
            if not math.isfinite(number) or number < 0:  # a NaN bound would make every verdict FAIL silently
                raise ValueError(f"tolerance {kind}.{k} = {v!r} (expected a finite number >= 0)")
            out[kind][str(k)] = number
    for kind, bounds in BOUNDS.items():
        missing = [b for b in bounds if b not in out[kind]]
        if missing:
            raise ValueError(f"tolerance class {kind} lacks {', '.join(missing)}")
    return out


def _pair(value: Any) -> tuple[float, float]:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2:
        raise ValueError(f"a range value must be [low, high], got {value!r}")
    return float(value[0]), float(value[1])
