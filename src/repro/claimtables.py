"""The interval each claim is decided on, as a table a paper's aggregate writes beside its metrics.

A figure that draws what a claim compares draws the checker's own interval of it
(:func:`repro.claims.interval_rows`: the same unit, level, statistic, pairing, Bonferroni level and
resampling seed as the verdict), never one of its own, so that the figure and the artifact-evaluation
report show one interval. The aggregate writes these tables; :mod:`repro.figures.claims` draws them.
Kept apart from the figure code because the jobs that compute a paper's results import this, and
what they import is what the paper's verdicts depend on (:mod:`repro.staleness`); the figure style is not.

- :func:`claim_table`: the interval each claim is decided on, one row per setting, with the claim's
  metric and right-hand side (for the figure to place the row).
- :func:`same_rule_table`: the interval a claim's check would form for other metrics (other methods,
  other sequences: the claim's rule on quantities no claim reads), marked as not a claim.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from repro.claims import INTERVAL_COLUMNS, Claim, interval_rows

__all__ = ["CLAIM_COLUMNS", "claim_table", "same_rule_table"]

#: The columns of :func:`claim_table` and :func:`same_rule_table`: :data:`repro.claims.INTERVAL_COLUMNS`, then
#: the metric the row compares and what it is compared with (a number, or a metric: a paired difference).
CLAIM_COLUMNS = (*INTERVAL_COLUMNS, "metric", "rhs")


def claim_table(claims: Sequence[Claim], metrics: Mapping[str, Any], ids: list[str] | None = None) -> pd.DataFrame:
    """The interval each claim (of ``ids``, default all) is decided on, one row per setting
    (:func:`repro.claims.interval_rows`), with the claim's ``metric`` and ``rhs`` (an ``each`` claim's
    setting appended to both paths); a claim whose metric ``metrics`` lacks gives no row."""
    by_id = {c.id: c for c in claims}
    rows = []
    for row in interval_rows(list(claims), metrics, ids):
        claim = by_id[row["claim"]]
        suffix = f".{row['setting']}" if claim.each else ""
        rhs = f"{claim.rhs}{suffix}" if isinstance(claim.rhs, str) else claim.rhs
        rows.append({**row, "metric": f"{claim.metric}{suffix}", "rhs": rhs})
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))


def same_rule_table(claim: Claim, metrics: Mapping[str, Any], paths: Sequence[str],
                    rhs: float | str | None = None) -> pd.DataFrame:
    """The interval ``claim``'s check forms for each metric of ``paths`` compared with ``rhs`` (default the
    claim's): the same unit, level, statistic, pairing and resampling seed as its verdict
    (:func:`repro.claims.claim_interval`'s rule), one row per path that ``metrics`` holds, in order.

    The row of the claim's own metric and right-hand side is the claim's (``claim`` its id, ``status`` its
    verdict); every other row is not a claim: ``claim`` and ``status`` are empty and ``interval`` says
    whose rule it follows.
    """
    if claim.each:
        raise ValueError(f"{claim.paper}.{claim.id}: an 'each' claim has one interval per setting; "
                         "use claim_table")
    rhs = claim.rhs if rhs is None else rhs
    rows = []
    for path in paths:
        variant = replace(claim, metric=path, rhs=rhs)
        for row in interval_rows([variant], metrics):
            if (path, rhs) != (claim.metric, claim.rhs):
                row = {**row, "claim": "", "status": "", "interval": f"{claim.id}'s rule, no claim: {row['interval']}"}
            rows.append({**row, "metric": path, "rhs": rhs})
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))
