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
