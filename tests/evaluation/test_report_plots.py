"""The report's plots, checked by what they draw (issue 26): axes scaled to the data, whiskers, labels, palettes.

Each plot function is called with a figure-capturing ``_save``, and the test
reads the drawn artists back: bar heights, whisker ends, label texts, axis
limits, colours. The palettes are checked under simulated colour-vision
deficiencies (Machado, Oliveira and Fernandes 2009, severity 1), as CIE L*a*b*
distances.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from eval.explain import STAGES
from eval.report import plots
from eval.report.plots import CONFIG_COLOURS, STAGE_COLOURS, config_colours, stage_colours, text_colour, write_plots

CONFIGS = ("oracle", "nonoracle", "stale_blind", "hop3_k25")


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plot functions would save, in order (not saved, not closed)."""
    figures = []
    monkeypatch.setattr(plots, "_save", lambda fig, path: figures.append(fig))
    yield figures
    plt = plots.pyplot()
    for fig in figures:
        plt.close(fig)


def _scores(trp, ccr, groups=("1hop", "2hop", "3+hop")):
    """Score objects (SPEC §6.2) with given per-slice TRP and CCR, one list per configuration."""
    out = {}
    for name, t, c in zip(CONFIGS, trp, ccr, strict=False):
        out[name] = {"trp_ccr": {"n_questions": 30, "by_complexity": {
            g: {"n": 10, "TRP": tv, "CCR": cv} for g, tv, cv in zip(groups, t, c, strict=True)}}}
    return out


def _bars(ax):
    return [p for p in ax.patches if p.get_height() == p.get_height()]  # NaN-height bars are not drawn


def test_slice_plot_scales_each_axis_to_its_data_and_labels_every_bar(drawn, tmp_path):
    scores = _scores(trp=[[0.18, 0.21, 0.15], [0.19, 0.2, 0.15]], ccr=[[0.99, 0.79, 0.0], [0.76, 0.66, 0.0]])
    assert plots.plot_by_slice(scores, "complexity", tmp_path / "x.png")
    trp_ax, ccr_ax = drawn[0].axes
    # TRP is at most 0.21 here: its axis ends a little above it, not at 1.0
    assert 0.21 < trp_ax.get_ylim()[1] < 0.3
    assert 0.99 < ccr_ax.get_ylim()[1] <= 1.12
    # every bar has its value written above it, a 0.000 bar included
    for ax, values in ((trp_ax, [0.18, 0.21, 0.15, 0.19, 0.2, 0.15]), (ccr_ax, [0.99, 0.79, 0.0, 0.76, 0.66, 0.0])):
        assert sorted(round(b.get_height(), 3) for b in _bars(ax)) == sorted(values)
        assert sorted(t.get_text() for t in ax.texts) == sorted(f"{v:.3f}" for v in values)
    assert [t.get_text() for t in trp_ax.get_xticklabels()] == ["1hop\n(n=10)", "2hop\n(n=10)", "3+hop\n(n=10)"]


def test_slice_plot_whiskers_are_the_intervals_given(drawn, tmp_path):
    scores = _scores(trp=[[0.1, 0.2, 0.05]], ccr=[[0.5, 0.4, 0.0]])
    intervals = {"oracle": {"complexity": {
        "1hop": {"TRP": [0.05, 0.16], "CCR": [0.3, 0.7]}, "2hop": {"TRP": [0.12, 0.31], "CCR": [0.2, 0.6]},
        "3+hop": {"TRP": [0.01, 0.09], "CCR": [0.0, 0.0]}}}}
    assert plots.plot_by_slice(scores, "complexity", tmp_path / "x.png", intervals)
    trp_ax, ccr_ax = drawn[0].axes
    for ax, metric in ((trp_ax, "TRP"), (ccr_ax, "CCR")):
        whiskers = [c for c in ax.collections if c.get_segments()]
        ends = sorted((round(float(s[0][1]), 6), round(float(s[1][1]), 6)) for c in whiskers for s in c.get_segments())
        want = sorted((round(v[metric][0], 6), round(v[metric][1], 6)) for v in intervals["oracle"]["complexity"].values())
        assert ends == want
        # the axis holds the whole interval, and each label sits above its whisker
        top = max(v[metric][1] for v in intervals["oracle"]["complexity"].values())
        assert ax.get_ylim()[1] > top
        for text in ax.texts:
            assert text.xy[1] >= float(text.get_text()) - 1e-9
    assert "95% bootstrap interval" in drawn[0].get_suptitle()


def test_slice_intervals_are_the_projects_bootstrap_of_each_slice(oracle_evaluation):
    from eval.bootstrap import bootstrap_ci
    from eval.per_question import slice_intervals
    from eval.scoring import headline_metrics
    from eval.trp_ccr import aggregate

    ev = oracle_evaluation
    got = slice_intervals(ev, n_boot=200, seed=0)
    assert got == slice_intervals(ev, n_boot=200, seed=0)  # fixed seed: the same every time
    memo: dict = {}
    assert got == slice_intervals(ev, n_boot=200, seed=0, memo=memo) == slice_intervals(ev, n_boot=200, seed=0, memo=memo)
    assert memo  # the count matrices were kept
    agg = aggregate(ev.rows)
    for field in ("complexity", "operator"):
        assert set(got[field]) == {str(v) for v in agg[f"by_{field}"]}
        for value, cis in got[field].items():
            idx = np.array([i for i, r in enumerate(ev.rows) if str(r[field]) == value])
            ref = headline_metrics(ev, idx)
            want = bootstrap_ci({"TRP": ref["TRP_macro"], "CCR": ref["CCR"]}, n_boot=200, seed=0)
            assert cis == want
            # the interval is around the slice's own value, the bar's height
            slice_value = agg[f"by_{field}"][next(v for v in agg[f"by_{field}"] if str(v) == value)]
            assert ref["TRP_macro"].value() == pytest.approx(slice_value["TRP"])
            assert ref["CCR"].value() == pytest.approx(slice_value["CCR"])


def _tie_scores():
    ties = {
        "oracle": {"TRP": (0.187, 0.187, 0.186, 0.1873), "CCR": (0.68, 0.681, 0.68, 0.683)},
        "nonoracle": {"TRP": (0.185, 0.185, 0.184, 0.185), "CCR": (0.547, 0.547, 0.547, 0.547)},
        "hop3_k25": {"TRP": (0.114, 0.1141, 0.113, 0.115), "CCR": (0.737, 0.745, 0.727, 0.763)},
    }
    return {n: {"ties": {m: dict(zip(("observed", "expected", "min", "max"), v, strict=True)) for m, v in t.items()}}
            for n, t in ties.items()}


def test_tie_plot_draws_ranges_as_bars_on_axes_of_their_own(drawn, tmp_path):
    scores = _tie_scores()
    assert plots.plot_ties(scores, tmp_path / "t.png", metrics=("TRP", "CCR"))
    axes = [ax for ax in drawn[0].axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["TRP", "CCR"]
    for ax, metric in zip(axes, ("TRP", "CCR"), strict=True):
        bars = sorted((round(p.get_x(), 6), round(p.get_x() + p.get_width(), 6)) for p in ax.patches)
        assert bars == sorted((round(scores[n]["ties"][metric]["min"], 6), round(scores[n]["ties"][metric]["max"], 6))
                              for n in scores)
        lo, hi = ax.get_xlim()
        values = [v for n in scores for v in scores[n]["ties"][metric].values()]
        assert lo < min(values) and hi > max(values) and hi - lo < 0.7  # not a 0-1 axis
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels[0].startswith("oracle\n") and f"[{scores['oracle']['ties'][metric]['min']:.3f}," in labels[0]


def test_every_stage_has_its_own_colour_and_a_new_one_gets_one():
    colours = stage_colours()
    assert list(colours) == list(STAGES) and len(set(colours.values())) == len(STAGES)
    assert "too_deep" in STAGE_COLOURS  # SPEC §7's new stage has its colour before it is in STAGES
    extended = stage_colours([*STAGES, "too_deep", "a_new_stage", "another_one"])
    assert len(set(extended.values())) == len(extended)
    assert {s: extended[s] for s in STAGES} == colours
    assert config_colours(["oracle", "mine", "yours"]) == {"oracle": CONFIG_COLOURS["oracle"],
                                                           "mine": "#56B4E9", "yours": "#D55E00"}
    assert text_colour("#F0E442") == "#111111" and text_colour("#000000") == "#ffffff"


# -- colour-vision deficiencies ------------------------------------------------------------------

_CVD = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}


def _lab(colour: str, vision: str) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour as seen with ``vision`` (Machado et al. 2009, on linear RGB)."""
    rgb = np.array([int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    linear = np.clip(_CVD[vision] @ linear, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ linear
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _distance(a: str, b: str) -> float:
    """The smallest CIE76 distance of two colours over normal vision and the three dichromacies."""
    return min(float(np.linalg.norm(_lab(a, v) - _lab(b, v))) for v in _CVD)


def test_stage_palette_is_colour_blind_safe():
    colours = {**stage_colours(), "too_deep": STAGE_COLOURS["too_deep"]}
    # the four stages a reader must tell apart (issue 26) are far apart for every vision
    key = ("capped", "unreachable", "too_deep", "filtered")
    for a, b in itertools.combinations(key, 2):
        assert _distance(colours[a], colours[b]) > 20, (a, b)
    # and no two stages are close (a CIE76 distance of about 2 is "just noticeable")
    for a, b in itertools.combinations(colours, 2):
        assert _distance(colours[a], colours[b]) > 12, (a, b)
    for a, b in itertools.combinations(CONFIG_COLOURS.values(), 2):
        assert _distance(a, b) > 15


def test_attribution_plot_colours_its_stages_including_too_deep(drawn, tmp_path):
    stages = [*STAGES[:5], "too_deep", *STAGES[5:]] if "too_deep" not in STAGES else list(STAGES)
    shares = dict.fromkeys(stages, 0.0) | {"retrieved": 0.5, "too_deep": 0.2, "unreachable": 0.1, "capped": 0.2}
    summary = {"stages": stages, "n_hops": 10, "shares": shares,
               "by_complexity": {"3+hop": {"n_hops": 10, "shares": shares}}}
    assert plots.plot_attribution({"oracle": summary}, tmp_path / "a.png")
    ax = drawn[0].axes[0]
    handles, labels = ax.get_legend_handles_labels()
    assert labels == stages
    colours = stage_colours(stages)
    for handle, stage in zip(handles, labels, strict=True):
        face = "#{:02X}{:02X}{:02X}".format(*(round(c * 255) for c in handle.patches[0].get_facecolor()[:3]))
        assert face == colours[stage].upper()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["all\n(10 hops)", "3+hop\n(10 hops)"]


def test_plots_are_the_same_bytes_for_the_same_data(tmp_path):
    scores = _scores(trp=[[0.1, 0.2, 0.05], [0.1, 0.0, 0.3]], ccr=[[0.5, 0.4, 0.0], [0.2, 0.1, 0.0]])
    for name in scores:
        scores[name].update(_tie_scores().get(name, {}))
    a = write_plots(scores, tmp_path / "a")
    b = write_plots(scores, tmp_path / "b")
    assert sorted(a) == sorted(b) and {"by_complexity", "ties"} <= set(a)
    for name in a:
        assert a[name].read_bytes() == b[name].read_bytes()


def test_laying_out_before_saving_gives_matplotlibs_own_bytes(monkeypatch, tmp_path):
    """``_save`` lays the figure out itself so that savefig draws once: the PNG is the one savefig alone makes."""
    scores = _scores(trp=[[0.1, 0.2, 0.05], [0.1, 0.0, 0.3]], ccr=[[0.5, 0.4, 0.0], [0.2, 0.1, 0.0]])
    for name in scores:
        scores[name].update(_tie_scores().get(name, {}))
    laid_out = write_plots(scores, tmp_path / "laid_out")

    def savefig_alone(fig, path):
        fig.savefig(path, format="png", dpi=plots.SAVE_DPI, metadata={"Software": None})
        plots.pyplot().close(fig)

    monkeypatch.setattr(plots, "_save", savefig_alone)
    (tmp_path / "alone").mkdir()
    alone = write_plots(scores, tmp_path / "alone")
    assert sorted(laid_out) == sorted(alone) and {"by_complexity", "ties"} <= set(alone)
    for name in alone:
        assert laid_out[name].read_bytes() == alone[name].read_bytes(), name
