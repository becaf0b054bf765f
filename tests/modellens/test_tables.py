"""modellens' Table 1: mean +- s.e. over seeds; one seed has no s.e. (missing, never 0)."""

import math

import numpy as np
import pandas as pd

from repro.papers.modellens.experiment import table1
from repro.tables import MISSING

K = 5
COLS = (f"ndcg@{K}", f"recall@{K}", f"hit@{K}", "hit@1", "tau_bottom", "tau_top")


def _tidy(values: dict[int, float]) -> pd.DataFrame:
    """One method and split, every column the seed's value (NaN: not defined in that seed)."""
    return pd.DataFrame([{"method": "modellens", "split": "test", "seed": s, **dict.fromkeys(COLS, v)}
                         for s, v in values.items()])


def test_one_seed_has_a_missing_se():
    row = table1(_tidy({0: 0.5}), K).iloc[0]
    assert all(row[c] == f"0.500 +- {MISSING}" for c in COLS)
    # two seeds, one of which has no value (no group with k candidates): the cell is over one seed
    assert table1(_tidy({0: 0.5, 1: math.nan}), K).iloc[0][COLS[0]] == f"0.500 +- {MISSING}"
    assert table1(_tidy({0: math.nan}), K).iloc[0][COLS[0]] == MISSING


def test_two_seeds_give_the_closed_form_se():
    row = table1(_tidy({0: 0.25, 1: 0.75}), K).iloc[0]
    assert row.n_seeds == 2 and all(row[c] == "0.500 +- 0.250" for c in COLS)  # s.e. of two values: |a - b| / 2
    x = np.array([0.31, 0.47, 0.52])
    assert table1(_tidy(dict(enumerate(x))), K).iloc[0][COLS[0]] == \
        f"{x.mean():.3f} +- {x.std(ddof=1) / np.sqrt(3):.3f}"
