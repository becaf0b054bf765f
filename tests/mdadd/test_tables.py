"""mdadd's Table 1: mean +- sd over units (distillation seed x unseen initialisation); one unit has no sd
(missing, never 0)."""

import math

import pandas as pd

from repro.papers.mdadd.experiment import RECALL_KEYS, table1, tidy_recalls
from repro.tables import MISSING


def _tidy(per_unit: list[float]) -> pd.DataFrame:
    """MDA-DD at 10 pairs, one distillation seed, one unseen initialisation per value (every recall that value),
    and one seen initialisation, which the table leaves out."""
    records = [{"method": "mdadd", "n_pairs": 10, "distill_seed": 0,
                "recall": {"unseen": [dict.fromkeys(RECALL_KEYS, v) for v in per_unit],
                           "seen": [dict.fromkeys(RECALL_KEYS, 99.0)]}}]
    return tidy_recalls(records)


def test_one_unit_has_a_missing_sd():
    row = table1(_tidy([42.25]), ["mdadd"]).iloc[0]
    assert all(row[k] == f"42.2 +- {MISSING}" for k in RECALL_KEYS)


def test_two_units_give_the_sample_sd():
    row = table1(_tidy([40.0, 45.0]), ["mdadd"]).iloc[0]
    assert row.pairs == 10
    assert all(row[k] == f"42.5 +- {5 / math.sqrt(2):.1f}" for k in RECALL_KEYS)  # sd of two: |a - b| / sqrt(2)
