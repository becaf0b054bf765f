"""A number a job wrote that is undefined, read back: missing, never 0 and never a crash.

A job records an undefined number as NaN: a rate with no denominator, a diagnostic that failed in the job
(an LLC chain that left the model's domain), a score a judge could not give, a metric at a cut-off no group
reaches. JSON has no NaN, so :func:`repro.io.write_json` writes it (and an infinity) as ``null``, and
:func:`repro.io.read_json` gives it back as ``None``, where a few values are ``None`` on purpose too (a
fraction the grid does not have). A reader that calls ``float`` on it, formats it, or does arithmetic with it
fails with a ``TypeError``; one that reads ``None`` as 0 gets a wrong number. :func:`as_float` turns it back
into NaN, which the reader then leaves out with a count (``np.nanmean``, ``dropna``, a claims sample's
undefined units) or keeps missing, and which tables print as :data:`repro.tables.MISSING` and figures mark
with :func:`repro.figures.style.mark_missing`. :func:`is_missing` says whether a value read back is one.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["as_float", "is_missing"]


def as_float(value: Any) -> float:
    """``value`` as a float; NaN where it is missing (``None``: an undefined number written as ``null``)."""
    return math.nan if value is None else float(value)


def is_missing(value: Any) -> bool:
    """Whether ``value`` is missing: ``None`` (``null`` in a job's JSON) or NaN."""
    return value is None or (isinstance(value, float) and math.isnan(value))
