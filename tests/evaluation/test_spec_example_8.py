"""docs/specification.md, worked example 8: every number, from the kernels and from repro_eval."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from eval.repro.doclists import encode
from eval.repro.effects import delta_ri, effect_ratio
from eval.repro.ktu import ktu
from eval.repro.rbo import rbo, rbo_ceiling_kernel
from eval.repro.rmse import nrmse, rmse
from eval.repro.ttest import p_value

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from repro_eval.measure.effectiveness import RMSE, nRMSE
    from repro_eval.measure.overall_effects import DRI, ER
    from repro_eval.measure.statistics import ttest

ORIGINAL = [["a", "b", "c"], ["d", "e"]]
REPRODUCED = [["a", "c", "b"], ["d"]]
O_B, O_A = np.array([0.5, 0.0]), np.array([1.0, 0.5])
R_B, R_A = np.array([0.5, 0.5]), np.array([1.0, 0.5])


def _topics(values: np.ndarray) -> dict:
    return {f"q{i + 1}": {"m": float(v)} for i, v in enumerate(values)}


def test_document_order() -> None:
    o, r = encode([ORIGINAL, REPRODUCED])
    mean, per_q = ktu(o, r)
    assert per_q[0] == pytest.approx(1 / 3) and np.isnan(per_q[1]) and mean == pytest.approx(1 / 3)
    mean, per_q = rbo(o, r, p=0.5, depth=3)
    assert per_q.tolist() == pytest.approx([6 / 7, 16 / 21]) and mean == pytest.approx(17 / 21)
    assert rbo_ceiling_kernel(o.lengths, r.lengths, 0.5, 3).tolist() == pytest.approx([1.0, 16 / 21])


def test_effectiveness_of_the_baseline() -> None:
    assert rmse(O_B, R_B) == pytest.approx(0.125 ** 0.5) == RMSE(_topics(O_B), _topics(R_B))["m"]
    assert nrmse(O_B, R_B) == pytest.approx(5 ** -0.5) == pytest.approx(nRMSE(_topics(O_B), _topics(R_B))["m"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert p_value(O_B, R_B) == pytest.approx(0.5) == pytest.approx(ttest(_topics(O_B), _topics(R_B))["m"])


def test_the_ablation_effect() -> None:
    assert effect_ratio(O_A, O_B, R_A, R_B) == pytest.approx(0.5)
    assert ER(_topics(O_A), _topics(O_B), _topics(R_A), _topics(R_B))["m"] == pytest.approx(0.5)
    assert delta_ri(O_A, O_B, R_A, R_B) == pytest.approx(1.5)
    assert DRI(_topics(O_A), _topics(O_B), _topics(R_A), _topics(R_B))["m"] == pytest.approx(1.5)
