"""immunize's Table 1: mean ± sd over seeds; one seed has no sd (missing, never 0), no seed no mean."""

import math

import numpy as np
import pandas as pd

from repro.papers.immunize.experiment import table1
from repro.tables import MISSING

COLS = ["benign_acc", "downstream_acc", "time_s", "relearn_auc", "kappa_harmful_after", "kappa_benign_after", "rir",
        "service_harm_a"]


def _tidy(values: dict[int, float]) -> pd.DataFrame:
    return pd.DataFrame([{"model": "linear", "method": "ours", "n_params": 40, "seed": s, **dict.fromkeys(COLS, v)}
                         for s, v in values.items()])


def test_one_seed_has_a_missing_sd_and_no_seed_the_missing_marker():
    row = table1(_tidy({0: 0.8125})).iloc[0]
    assert all(row[c] == f"0.812 ± {MISSING}" for c in COLS)
    # a seed without a value is left out: the cell is over the one seed that has it
    assert table1(_tidy({0: 0.8125, 1: math.nan})).iloc[0]["rir"] == f"0.812 ± {MISSING}"
    assert table1(_tidy({0: math.nan})).iloc[0]["rir"] == MISSING


def test_two_seeds_give_the_sample_sd():
    x = np.array([0.8125, 0.7])
    row = table1(_tidy(dict(enumerate(x)))).iloc[0]
    assert row.n_seeds == 2
    assert all(row[c] == f"{x.mean():.3g} ± {abs(x[0] - x[1]) / math.sqrt(2):.2g}" for c in COLS)  # sd of two
