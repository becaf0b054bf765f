"""A table's cell of a mean and its spread over units ("0.512 +- 0.031"), as text.

A spread (a standard deviation or a standard error) over a single unit (one seed, one fold) is undefined,
not 0: a cell that printed ``+- 0`` would read as an exact number, and one that printed ``+- nan`` as a
formatting slip. Both functions print an undefined spread as :data:`repro.tables.MISSING`, the one marker of
a missing value in every table (:func:`repro.tables.markdown_table` prints a NaN as it), and a cell with no
mean at all (no unit has the value) as that marker alone.

- :func:`mean_spread`: the cell of a mean and a spread computed elsewhere (a ``groupby`` aggregate, a
  summary a job wrote, where a spread read back from its JSON may be ``None``).
- :func:`mean_spread_of`: the cell of the units' own values, with their sample standard deviation
  (``ddof = 1``) or its standard error ``sd / sqrt(n)``; a unit whose value is missing (NaN, or ``None`` read
  back from a job's JSON, :mod:`repro.missing`) is left out, and ``n`` counts the units that have one.

The separator and the number formats are the table's own (a table that printed ``±`` keeps it), so that a
table of two or more units reads exactly as before.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

from repro.missing import as_float, is_missing
from repro.tables import MISSING

__all__ = ["SPREADS", "mean_spread", "mean_spread_of"]

#: The spreads :func:`mean_spread_of` computes: the sample standard deviation and the standard error of the mean.
SPREADS = ("sd", "se")


def mean_spread(mean: Any, spread: Any, *, fmt: str = ".3f", spread_fmt: str | None = None, sep: str = " +- ") -> str:
    """``"<mean><sep><spread>"``, the spread :data:`~repro.tables.MISSING` where it is undefined (one unit).

    Parameters
    ----------
    mean, spread : a number, NaN or ``None`` (missing).
    fmt : the format spec of the mean (``format(mean, fmt)``), and of the spread unless ``spread_fmt`` is given.
    sep : what stands between them (``" +- "`` or ``" ± "``).

    A missing mean gives :data:`~repro.tables.MISSING` alone: nothing was measured.
    """
    if is_missing(mean):
        return MISSING
    text = MISSING if is_missing(spread) else format(float(spread), spread_fmt or fmt)
    return f"{format(float(mean), fmt)}{sep}{text}"


def mean_spread_of(values: Iterable[Any], spread: str = "se", *, fmt: str = ".3f", spread_fmt: str | None = None,
                   sep: str = " +- ") -> str:
    """The cell of the units' ``values``: their mean and their ``spread`` (``"sd"`` or ``"se"``, :data:`SPREADS`).

    Missing values (NaN, ``None``) are left out; over one unit left the spread is undefined and prints as
    :data:`~repro.tables.MISSING`, over none the whole cell does. Formats as in :func:`mean_spread`.
    """
    if spread not in SPREADS:
        raise ValueError(f"mean_spread_of: spread {spread!r} is not one of {SPREADS}")
    x = pd.Series([as_float(v) for v in values], dtype=float).dropna()
    if x.empty:
        return MISSING
    sd = x.std(ddof=1) if len(x) > 1 else math.nan
    return mean_spread(x.mean(), sd if spread == "sd" else sd / math.sqrt(len(x)), fmt=fmt, spread_fmt=spread_fmt,
                       sep=sep)
