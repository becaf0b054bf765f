"""Real grouped / time-series tables for groupfdr: a user's own file, and statsmodels' macrodata.

A user's table is either

- long (``time``, ``group``, ``value`` columns; one row per series and time point): each series
  becomes one group, whose block is its lags 1..d, and the response is the ``target`` series at
  time t (a Granger-type question: which series' past predicts the target?); or
- wide (one column per series, rows in time order): call :func:`lagged_design` directly.

:func:`load_grouped_table` reads CSV or Parquet and raises a ``ValueError`` naming the problem: a
missing column, non-numeric values (with the group and an example), a missing target series, or a
group whose block would be constant (a constant series, e.g. a single constant column).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["LaggedDesign", "load_grouped_table", "lagged_design", "macrodata_frame"]

log = logging.getLogger(__name__)


@dataclass
class LaggedDesign:
    X: np.ndarray  # (n, G * d) standardised lag columns
    y: np.ndarray  # (n,) centred response
    groups: np.ndarray  # (G * d,) group names
    columns: list[str]  # "<group>_lag<l>"
    Sigma: None = None  # unknown for real data: knockoffs estimate it


def _read(path: Path) -> pd.DataFrame:
    if path.suffix.lower() == ".csv":
        return pd.read_csv(path)
    if path.suffix.lower() in {".parquet", ".pq"}:
        return pd.read_parquet(path)
    raise ValueError(f"{path}: unsupported format {path.suffix!r}; use .csv or .parquet")


def load_grouped_table(path: str | Path, *, target: str, lags: int = 4, time_col: str = "time",
                       group_col: str = "group", value_col: str = "value") -> LaggedDesign:
    """Read a long table (time, group, value) and build the lagged grouped design for ``target``.

    Parameters
    ----------
    path : CSV or Parquet file.
    target : the group whose value at time t is the response.
    lags : block size d (lags 1..d of every series, the target's own past included).
    time_col, group_col, value_col : column names.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    df = _read(path)
    missing = [c for c in (time_col, group_col, value_col) if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; found {list(df.columns)}")
    values = pd.to_numeric(df[value_col], errors="coerce")
    bad = values.isna() & df[value_col].notna()
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise ValueError(f"{path}: column {value_col!r} has non-numeric values, e.g. {df[value_col].iloc[i]!r} "
                         f"in group {df[group_col].iloc[i]!r} at {time_col}={df[time_col].iloc[i]!r}")
    if values.isna().any():
        i = int(np.argmax(values.isna().to_numpy()))
        raise ValueError(f"{path}: column {value_col!r} has missing values, e.g. in group {df[group_col].iloc[i]!r}")
    dup = df.duplicated([time_col, group_col])
    if dup.any():
        i = int(np.argmax(dup.to_numpy()))
        raise ValueError(f"{path}: duplicate ({time_col}, {group_col}) = ({df[time_col].iloc[i]!r}, "
                         f"{df[group_col].iloc[i]!r})")
    wide = df.assign(**{value_col: values}).pivot(index=time_col, columns=group_col, values=value_col).sort_index()
    if wide.isna().any().any():
        gaps = wide.columns[wide.isna().any()].tolist()
        raise ValueError(f"{path}: series {gaps} are not observed at every {time_col}")
    return lagged_design(wide, target=target, lags=lags, source=str(path))


def lagged_design(wide: pd.DataFrame, *, target: str, lags: int, source: str = "table") -> LaggedDesign:
    """Blocks of lags 1..d of every column of ``wide`` (rows in time order) and y = wide[target]."""
    if target not in wide.columns:
        raise ValueError(f"{source}: target series {target!r} not found; series: {list(map(str, wide.columns))}")
    if lags < 1 or len(wide) <= 2 * lags:
        raise ValueError(f"{source}: lags={lags} needs more than {2 * lags} time points, found {len(wide)}")
    for col in wide.columns:
        if not pd.api.types.is_numeric_dtype(wide[col]):
            raise ValueError(f"{source}: series {col!r} is not numeric")
        if np.nanstd(wide[col].to_numpy(float)) == 0:
            raise ValueError(f"{source}: group {col!r} is constant: its lag block has no variation "
                             f"(drop it or check the data)")
    arr = wide.to_numpy(float)
    n = len(wide) - lags
    blocks, columns, groups = [], [], []
    for k, col in enumerate(wide.columns):
        for lag in range(1, lags + 1):
            blocks.append(arr[lags - lag:lags - lag + n, k])
            columns.append(f"{col}_lag{lag}")
            groups.append(str(col))
    X = np.column_stack(blocks)
    const = X.std(0) == 0
    if const.any():
        raise ValueError(f"{source}: lag column(s) {[c for c, b in zip(columns, const) if b]} are constant")
    X = (X - X.mean(0)) / X.std(0)
    y = arr[lags:, list(wide.columns).index(target)]
    return LaggedDesign(X=X, y=y - y.mean(), groups=np.array(groups), columns=columns)


#: macrodata series in levels (-> 100 x log-difference) and in rates (-> first difference)
MACRO_LEVELS = ("realgdp", "realcons", "realinv", "realgovt", "realdpi", "cpi", "m1", "pop")
MACRO_RATES = ("tbilrate", "unemp", "infl", "realint")


def macrodata_frame() -> pd.DataFrame:
    """statsmodels' US macrodata (1959Q1-2009Q3) made stationary, as a long (time, group, value) table."""
    from statsmodels.datasets import macrodata

    raw = macrodata.load_pandas().data
    time = raw["year"].astype(int).astype(str) + "Q" + raw["quarter"].astype(int).astype(str)
    series = {c: 100 * np.log(raw[c]).diff() for c in MACRO_LEVELS}
    series.update({c: raw[c].diff() for c in MACRO_RATES})
    wide = pd.DataFrame(series).assign(time=time).iloc[1:]
    return wide.melt(id_vars="time", var_name="group", value_name="value")
