"""m2le's Table 1: mean ± sd over seeds; one seed has no sd (missing, never 0), no seed no mean."""

import math

import numpy as np
import pandas as pd

from repro.papers.m2le.experiment import table1
from repro.tables import MISSING

COLS = ("avg_acc", "forgetting", "bwt")


def _tidy(values: dict[int, float]) -> pd.DataFrame:
    return pd.DataFrame([{"sequence": "blocks", "method": m, "seed": s, **dict.fromkeys(COLS, v)}
                         for s, v in values.items() for m in ("m2le", "seq")])


def test_one_seed_has_a_missing_sd_and_no_seed_the_missing_marker():
    t = table1(_tidy({0: 0.625}))
    assert list(t.method) == ["seq", "m2le"]  # the paper's order
    assert all(v == f"0.625 ± {MISSING}" for v in t[list(COLS)].to_numpy().ravel())
    assert table1(_tidy({0: 0.625, 1: math.nan})).iloc[0]["bwt"] == f"0.625 ± {MISSING}"
    assert table1(_tidy({0: math.nan})).iloc[0]["bwt"] == MISSING


def test_two_seeds_give_the_sample_sd():
    x = np.array([0.625, 0.5])
    row = table1(_tidy(dict(enumerate(x)))).iloc[0]
    assert row.n_seeds == 2
    assert all(row[c] == f"{x.mean():.3f} ± {abs(x[0] - x[1]) / math.sqrt(2):.3f}" for c in COLS)  # sd of two
