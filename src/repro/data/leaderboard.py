"""Real leaderboard dumps in long format: one row per (model, dataset, metric) result.

Required columns: ``model, dataset, metric, value``. Optional: ``higher_is_better`` (bool),
``model_card`` and ``dataset_desc`` (text; the reference code's ``dataset_desp`` is accepted), ``task``,
``family``, and the numbers ``size_b`` (parameters, billions) and ``downloads``.
A group is a (dataset, metric) pair, as in ModelLens (luisrui/ModelLens, commit 009e4c1). The
reference has no direction field; ours is required per metric: taken from ``higher_is_better``, or,
without that column, from :data:`KNOWN_DIRECTIONS` by metric name. A metric listed with both
directions, an unknown metric without the column, a missing column or a non-finite value is an
error naming the file and the offending value.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

__all__ = ["REQUIRED", "KNOWN_DIRECTIONS", "load_leaderboard"]

REQUIRED = ("model", "dataset", "metric", "value")
#: Metric name (lower case) -> higher is better, for dumps without a ``higher_is_better`` column.
KNOWN_DIRECTIONS = {"accuracy": True, "acc": True, "f1": True, "exact_match": True, "bleu": True, "rouge": True,
                    "auc": True, "map": True, "ndcg": True, "pass@1": True, "error_rate": False, "error": False,
                    "wer": False, "cer": False, "perplexity": False, "log_loss": False, "loss": False,
                    "rmse": False, "mae": False}
_TRUE = {"true", "1", "yes", "higher"}
_FALSE = {"false", "0", "no", "lower"}


def _direction(raw, path, metric) -> bool:
    text = str(raw).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{path}: metric {metric!r} has higher_is_better={raw!r}; expected true/false")


def load_leaderboard(path: str | os.PathLike) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read a long-format dump; return ``(records, groups)``.

    ``records``: model, group, value, dataset, metric (+ text columns when present);
    ``groups``: group, dataset, metric, higher_is_better.
    """
    try:
        table = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not a readable CSV ({err})") from None
    if "dataset_desp" in table.columns and "dataset_desc" not in table.columns:
        table = table.rename(columns={"dataset_desp": "dataset_desc"})
    missing = [c for c in REQUIRED if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; a leaderboard dump needs {list(REQUIRED)}")
    for col in ("model", "dataset", "metric"):
        empty = table[col].isna() | (table[col].astype(str).str.strip() == "")
        if empty.any():
            raise ValueError(f"{path}: row {int(np.flatnonzero(empty.to_numpy())[0]) + 2} has no {col}")
    values = pd.to_numeric(table["value"], errors="coerce")
    bad = ~np.isfinite(values.to_numpy(dtype=float))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{path}: row {row + 2} has value {str(table['value'].iloc[row])!r}; values must be finite numbers")
    for col in ("size_b", "downloads"):
        if col in table.columns:
            num = pd.to_numeric(table[col], errors="coerce")
            bad = table[col].notna() & ~np.isfinite(num.to_numpy(dtype=float))
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy())[0])
                raise ValueError(f"{path}: row {row + 2} has {col} {str(table[col].iloc[row])!r}; expected a number")
            table[col] = num
    table = table.assign(value=values.astype(float), metric=table["metric"].astype(str))
    directions = {}
    for metric, part in table.groupby("metric", sort=True):
        if "higher_is_better" in table.columns:
            seen = {_direction(v, path, metric) for v in part["higher_is_better"].dropna()}
            if len(seen) > 1:
                raise ValueError(f"{path}: metric {metric!r} is listed with mixed directions (higher_is_better "
                                 "both true and false); split it into two metric names")
            if not seen:
                raise ValueError(f"{path}: metric {metric!r} has no higher_is_better value")
            directions[metric] = seen.pop()
        elif metric.lower() in KNOWN_DIRECTIONS:
            directions[metric] = KNOWN_DIRECTIONS[metric.lower()]
        else:
            raise ValueError(f"{path}: metric {metric!r} has unknown direction; add a higher_is_better column")
    table["group"] = table["dataset"].astype(str) + "|" + table["metric"]
    groups = (table[["group", "dataset", "metric"]].drop_duplicates("group").sort_values("group")
              .reset_index(drop=True))
    groups["higher_is_better"] = groups["metric"].map(directions)
    keep = [c for c in ("model", "group", "value", "dataset", "metric", "task", "model_card", "dataset_desc", "family",
                        "size_b", "downloads")
            if c in table.columns]
    return table[keep].reset_index(drop=True), groups
