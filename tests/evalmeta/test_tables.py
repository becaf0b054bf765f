"""evalmeta's Table 1: a rate whose bootstrap formed no interval (one item) says so beside its mean, with the count
of items, never the mean alone (which would read as exact); a rate with no item at all is the missing marker."""

import math

import pandas as pd

from repro.papers.evalmeta.experiment import _mean_ci
from repro.papers.evalmeta.figures import table1
from repro.tables import MISSING


def _row(safe: tuple, refusal: tuple) -> dict:
    (s, s_lo, s_hi, n), (r, r_lo, r_hi, _) = safe, refusal
    return {"column": "agentharm", "model": "trait", "safe": s, "safe_low": s_lo, "safe_high": s_hi,
            "refusal": r, "refusal_low": r_lo, "refusal_high": r_hi, "safe_unaware": s, "safe_logprob": math.nan,
            "aware": 0.0, "n_items": n}


def _sample(values: list[float]) -> dict:
    return {"values": values, "ids": [f"item{i}/phr/s0" for i in range(len(values))]}


def test_one_item_has_no_interval_and_the_cell_says_so_with_its_count():
    one = _mean_ci(_sample([1.0]))
    assert math.isnan(one[1]) and one[3] == 1  # the bootstrap forms no interval over one item
    cells = table1(pd.DataFrame([_row(one, one)])).iloc[0]
    assert cells["safe"] == cells["refusal"] == "1.00 [no interval: n = 1 item]"


def test_several_items_give_the_interval_and_no_item_the_missing_marker():
    three = _mean_ci(_sample([0.0, 1.0, 1.0]))
    none = _mean_ci(None)
    cells = table1(pd.DataFrame([_row(three, none)])).iloc[0]
    assert cells["safe"] == f"0.67 [{three[1]:.2f}, {three[2]:.2f}]" and three[1] < three[0] < three[2]
    assert cells["refusal"] == MISSING


def test_a_table_read_back_from_its_csv_keeps_the_missing_interval(tmp_path):
    one = _mean_ci(_sample([0.0]))
    path = tmp_path / "table.csv"
    pd.DataFrame([_row(one, one)]).to_csv(path, index=False)
    assert table1(pd.read_csv(path)).iloc[0]["safe"] == "0.00 [no interval: n = 1 item]"
