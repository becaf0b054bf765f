"""tmevolve's Fig. 3: the comparison's intervals are error bars the figure lint sees, with n beside them."""

from __future__ import annotations

import numpy as np

from repro.figures import lint
from repro.papers.tmevolve.figures import build_fig3
from tests.foundation.test_figures import tmevolve_inputs


def _comparison_label(fig) -> str:
    """The x label of panel (g), the comparison of every run."""
    (ax,) = [ax for ax in fig.axes if ax.get_title("left").startswith("(g)")]
    return ax.get_xlabel()


def test_intervals_are_drawn_as_error_bars_with_n_in_the_label():
    patches, points, facts, thumb = tmevolve_inputs()
    # at smoke (2 units) the checker forms no interval: plant one about each difference but the reference's
    planted = points["diff"].where(points["method"] != points["reference"])
    points = points.assign(low=planted - 0.01, high=planted + 0.02)
    fig = build_fig3(patches, points, facts, thumb)
    assert lint.uncertainty(fig) == lint.DRAWN
    label = _comparison_label(fig)
    assert f"95% interval of the survival claim's check, paired over n = {int(points.n.max())} folds x repeats" in label
    assert lint.check(fig) == []


def test_too_few_units_draw_no_interval_and_say_so():
    patches, points, facts, thumb = tmevolve_inputs()
    points = points.assign(low=np.nan, high=np.nan)       # fewer units than a 95% interval needs
    fig = build_fig3(patches, points, facts, thumb)
    assert lint.uncertainty(fig) == lint.MISSING
    assert "no interval (too few units for 95%)" in _comparison_label(fig)
    assert lint.check(fig) == []


def test_a_slide_without_ground_truth_titles_its_region_ari_missing_not_nan_and_says_why_b_is_empty():
    """On a slide without ground-truth patch types (a real slide) the region ARIs are undefined (nan): the region
    panels say "ARI n/a", and the tissue panel says why it is empty; a slide with them prints the ARI."""
    patches, points, facts, thumb = tmevolve_inputs()
    def titles(fig):  # panels (c) and (d), their letters in front
        return [ax.get_title("left") for ax in fig.axes if ax.get_title("left")[4:].startswith("regions")]

    assert titles(build_fig3(patches, points, facts, thumb)) == ["(c) regions, q = 0\n(ARI 0.12)",
                                                                 f"(d) regions, q = {facts['Q']}\n(ARI 0.34)"]
    unknown = patches.assign(truth=-1)
    fig = build_fig3(unknown, points, {**facts, "ari_q0": float("nan"), "ari_final": float("nan")}, thumb)
    assert titles(fig) == ["(c) regions, q = 0\n(ARI n/a)", f"(d) regions, q = {facts['Q']}\n(ARI n/a)"]
    assert lint.check(fig) == []  # panel (b), with no tissue type to show, says so instead of empty axes
