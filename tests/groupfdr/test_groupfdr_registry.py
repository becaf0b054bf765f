"""Every registered group selector runs on a small grouped design and behaves like an FDR procedure."""

import numpy as np
import pytest

from repro.methods.fdr_selectors import SELECTORS, run_selector
from repro.papers.groupfdr.synth import simulate_grouped

FAST_NEURAL = {"hidden": (8,), "max_iter": 30, "n_explain": 15, "n_background": 5, "hsic_samples": 60}


@pytest.mark.parametrize("name", SELECTORS.names())
def test_selector_returns_nested_selections_of_known_groups(name):
    data = simulate_grouped(150, 8, 2, rho_within=0.3, rho_between=0.1, n_true=3, amplitude=8.0,
                            rng=np.random.default_rng(0))
    qs = [0.05, 0.2, 0.5]
    out = run_selector(name, data, qs, np.random.default_rng(1), **(FAST_NEURAL if "ngm" in name else {}))
    labels = set(np.unique(data.groups).tolist())
    for q in qs:
        assert set(np.asarray(out["selected"][q]).tolist()) <= labels
    # one set of statistics thresholded at a larger q can only select more (tau_q decreases in q; BH too)
    for small, large in zip(qs, qs[1:]):
        assert set(out["selected"][small].tolist()) <= set(out["selected"][large].tolist())
    if out["stats"] is not None:
        assert len(out["stats"]) == len(labels)


def test_unknown_selector_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown FDR group selector 'gmm'"):
        run_selector("gmm", None, [0.1], np.random.default_rng(0))
