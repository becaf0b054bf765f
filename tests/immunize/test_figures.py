"""immunize's Fig. 1 puts each setting's curves in the panel of its model, mode, optimiser and learning rate, marks
a setting a model was not attacked in as not run, and reads every setting key the experiment writes."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from repro.figures import lint
from repro.figures.style import NOT_BUILT_GID
from repro.papers.immunize.experiment import setting_key
from repro.papers.immunize.figures import _parse_setting, fig1

STEPS = [1, 10, 100]


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("mode, optimizer, lr", [("probe", "sgd", 0.1), ("full", "adam", 1.0), ("full", "sgd", 10.0),
                                                 ("probe", "adam", 1e-5)])
def test_setting_keys_read_back(mode, optimizer, lr):
    assert _parse_setting(setting_key(mode, optimizer, lr)) == (mode, optimizer, lr)


def test_a_key_of_another_form_is_named():
    with pytest.raises(ValueError, match="full_adam"):
        _parse_setting("full_adam")


def _table() -> tuple[pd.DataFrame, list[tuple[str, str, str, float]]]:
    """The table and its open-weights cells (model, mode, optimiser, lr): two models; the mlp lacks full fine-tuning
    with SGD. Each curve's level encodes its panel and method."""
    rows = []
    cells = [(mo, md, opt, lr) for mo in ("linear", "mlp") for md in ("full", "probe")
             for opt, lr in (("adam", 0.1), ("sgd", 1.0)) if not (mo == "mlp" and md == "full" and opt == "sgd")]
    for i, (mo, md, opt, lr) in enumerate(cells):
        for k, method in enumerate(("none", "ours")):
            rows += [{"model": mo, "setting": setting_key(md, opt, lr), "method": method, "step": s,
                      "mean": (10 * i + k) / 100, "se": 0.01, "n_seeds": 3} for s in STEPS]
    for j, mo in enumerate(("linear", "mlp")):
        rows += [{"model": mo, "setting": "relearn", "method": "none", "step": s, "mean": 0.9 - j / 10, "se": 0.01,
                  "n_seeds": 3} for s in STEPS]
    return pd.DataFrame(rows), cells


def _levels(ax) -> set[float]:
    """The mean height of each curve in ``ax`` (the data line of each error-bar container)."""
    return {round(float(np.mean(c.lines[0].get_ydata())), 6) for c in ax.containers}


def test_each_curve_is_drawn_in_its_panel_and_a_setting_not_run_says_so():
    table, cells = _table()
    fig = fig1(table)
    top, bottom = fig.subfigs
    grid = np.array(top.axes).reshape(4, 2)  # rows: (linear, full), (linear, probe), (mlp, full), (mlp, probe)
    rows = [("linear", "full"), ("linear", "probe"), ("mlp", "full"), ("mlp", "probe")]
    columns = [("adam", 0.1), ("sgd", 1.0)]
    for r, (mo, md) in enumerate(rows):
        for c, (opt, lr) in enumerate(columns):
            ax = grid[r, c]
            if (mo, md, opt, lr) in cells:
                i = cells.index((mo, md, opt, lr))
                assert _levels(ax) == {round(10 * i / 100, 6), round((10 * i + 1) / 100, 6)}
            else:
                assert not ax.lines and [t.get_gid() for t in ax.texts] == [NOT_BUILT_GID]
    assert [_levels(ax) for ax in bottom.axes] == [{0.9}, {0.8}]
    assert lint.check(fig) == []
