"""The real-data loader: a long (time, group, value) table to a lagged grouped design, and its errors."""

import numpy as np
import pandas as pd
import pytest

from repro.data.grouped_tables import load_grouped_table, macrodata_frame


def _long(T=40, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(T)
    b = np.r_[0, a[:-1]] * 0.8 + 0.1 * rng.standard_normal(T)  # b(t) depends on a(t-1)
    return pd.DataFrame({"time": np.tile(np.arange(T), 2), "group": np.repeat(["a", "b"], T),
                         "value": np.r_[a, b]})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_lagged_design_round_trip(tmp_path, suffix):
    df = _long()
    path = tmp_path / f"table{suffix}"
    df.to_csv(path, index=False) if suffix == ".csv" else df.to_parquet(path, index=False)
    design = load_grouped_table(path, target="b", lags=2)
    assert design.columns == ["a_lag1", "a_lag2", "b_lag1", "b_lag2"]
    assert design.X.shape == (38, 4) and design.y.shape == (38,)
    # row t holds a(t-1): the planted dependence b(t) ~ 0.8 a(t-1) shows as a correlation near 1
    assert np.corrcoef(design.X[:, 0], design.y)[0, 1] > 0.95


def test_missing_column(tmp_path):
    path = tmp_path / "t.csv"
    _long().rename(columns={"group": "series"}).to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"missing column\(s\) \['group'\]"):
        load_grouped_table(path, target="b")


def test_non_numeric_values_name_group_and_value(tmp_path):
    df = _long()
    df["value"] = df["value"].astype(object)
    df.loc[45, "value"] = "n/a?"
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"non-numeric values, e.g. 'n/a\?' in group 'b'"):
        load_grouped_table(path, target="b")


def test_constant_group_is_named(tmp_path):
    df = pd.concat([_long(), pd.DataFrame({"time": np.arange(40), "group": "flat", "value": 3.0})])
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match="group 'flat' is constant"):
        load_grouped_table(path, target="b")


def test_missing_target_and_unsupported_format(tmp_path):
    path = tmp_path / "t.csv"
    _long().to_csv(path, index=False)
    with pytest.raises(ValueError, match="target series 'gdp' not found"):
        load_grouped_table(path, target="gdp")
    bad = tmp_path / "t.xlsx"
    bad.write_text("x")
    with pytest.raises(ValueError, match="unsupported format"):
        load_grouped_table(bad, target="b")


def test_macrodata_ships_offline_and_loads(tmp_path):
    path = tmp_path / "macro.csv"
    macrodata_frame().to_csv(path, index=False)
    design = load_grouped_table(path, target="realgdp", lags=4)
    assert len(np.unique(design.groups)) == 12 and design.X.shape == (198, 48)
