"""The ``scale`` verdict: counts that grow with the data's size, on data that is not the release (SPEC §4)."""

from __future__ import annotations

from types import SimpleNamespace

from eval.audit.claims import Claim, load_claims
from eval.audit.format import verdict_summary
from eval.audit.run import is_release, run_audit


class _Context:
    def __init__(self, n: int, generated: bool) -> None:
        self.questions = [{"id": f"q{i}", "split": "test"} for i in range(n)]
        self.data = SimpleNamespace(generated=generated, root=None)

    def split_questions(self, split: str) -> list[dict]:
        return [q for q in self.questions if split == "all" or q["split"] == split]


def _claim(cid: str, paper: int, scales: bool, section: str = "4") -> Claim:
    return Claim(id=cid, section=section, group="g", what=cid, paper=paper, kind="count", compute="split_questions",
                 params={"split": "all"}, command="tempbench audit", scales=scales)


def test_scale_only_for_scaling_counts_that_differ_on_data_that_is_not_the_release():
    claims = [_claim("split.all.questions", 10, True), _claim("other", 12, False), _claim("same", 7, True)]
    tolerances = {"count": {"okish_rel": 0.01}}
    small = _Context(7, generated=False)  # 7 questions, the card says 10: not the release
    rows = {r["id"]: r for r in run_audit(small, claims, tolerances)}
    assert rows["split.all.questions"]["verdict"] == "scale" and "scales with the data's size" in rows["split.all.questions"]["note"]
    assert rows["other"]["verdict"] == "FAIL"  # not a scaling count: stays FAIL
    assert rows["same"]["verdict"] == "OK"  # an equal count stays OK
    # on data of the release's size that is not generated, a differing scaling count is a FAIL
    release_sized = _Context(10, generated=False)
    claims[0] = _claim("split.all.questions", 10, True)
    claims[2] = _claim("same", 9, True)
    rows = {r["id"]: r for r in run_audit(release_sized, claims, tolerances)}
    assert is_release(release_sized, claims) and rows["same"]["verdict"] == "FAIL"
    # generated data is never the release, even at the release's size
    assert not is_release(_Context(10, generated=True), claims)


def test_summary_counts_the_headline_rows_only():
    rows = [{"section": "4", "verdict": "OK"}, {"section": "4", "verdict": "scale"}, {"section": "4-alt", "verdict": "FAIL"}]
    assert verdict_summary(rows) == "2 headline claims (1 alternative readings not counted): OK 1, scale 1"


def test_every_share_row_exists_and_belongs_to_a_scaling_count():
    claims, _ = load_claims()
    by_id = {c.id: c for c in claims}
    assert any(c.scales for c in claims)
    for c in claims:
        if c.share:
            assert c.scales and by_id[c.share].kind == "rate"
