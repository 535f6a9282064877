"""The diff's exact-match reading of SPEC §6.3, one question at a time (reference of :mod:`eval.diff`).

As the project's diff documents it: the evidence of the questions both sides
have is compared in one space for the whole file, ``id`` (``s_id, r_id, o_id,
t_start, t_end``) when every such item on both sides carries them, else
``label`` (``s, r, o, t_start, t_end``), else ``line``; a baseline of
rendered lines is compared by line; a 5-list item is ``[s, r, o, t_start,
t_end]`` (SPEC §1.4). A question is reproduced exactly when both lists are
equal item by item in that space. When no space holds every such item (the
questions carry different spaces), each common question is compared in the
first space of that order that its own items on both sides carry, and the
diff's space reads ``per question``. Written from that text on the records as
read, importing nothing of the project.
"""

from __future__ import annotations

from typing import Any

FIELDS = {"id": ("s_id", "r_id", "o_id"), "label": ("s", "r", "o")}


def _carries(item: dict[str, Any], space: str) -> bool:
    wanted = ("line",) if space == "line" else (*FIELDS[space], "t_start", "t_end")
    return all(item.get(field) is not None for field in wanted)


def _key(item: dict[str, Any], space: str) -> Any:
    if space == "line":
        return str(item["line"])
    s, r, o = (str(item[field]) for field in FIELDS[space])
    return s, r, o, float(item["t_start"]), float(item["t_end"])


def exact_reading(run: dict[Any, dict[str, Any]], baseline: dict[Any, dict[str, Any]], base_form: str
                  ) -> tuple[str | None, set[str], int, int, int]:
    """``(space, differing common question ids, exact, only in the baseline, only in the run)``.

    Question ids compared as strings, the later record of two equal strings
    taking the earlier's place; ``space`` is ``None`` when a common question's items share no space.
    """
    def items_of(rec: dict[str, Any]) -> list[dict[str, Any]]:
        return [dict(zip(("s", "r", "o", "t_start", "t_end"), it, strict=True)) if isinstance(it, list) else it
                for it in rec.get("evidence") or []]

    run_ev = {str(qid): items_of(rec) for qid, rec in run.items()}
    base_ev = {str(qid): items_of(rec) for qid, rec in baseline.items()}
    common = [q for q in base_ev if q in run_ev]
    items = [it for q in common for it in run_ev[q] + base_ev[q]]
    candidates = ["line"] if base_form == "line" else ["id", "label", "line"]
    space = next((s for s in candidates if all(_carries(it, s) for it in items)), None)
    own = {}
    for q in common:
        mine = space or next((s for s in candidates if all(_carries(it, s) for it in run_ev[q] + base_ev[q])), None)
        if mine is None:
            return None, set(), 0, 0, 0
        own[q] = mine
    differing = set()
    exact = 0
    for q in common:
        if [_key(it, own[q]) for it in run_ev[q]] == [_key(it, own[q]) for it in base_ev[q]]:
            exact += 1
        else:
            differing.add(q)
    return (space or "per question", differing, exact, sum(q not in run_ev for q in base_ev),
            sum(q not in base_ev for q in run_ev))
