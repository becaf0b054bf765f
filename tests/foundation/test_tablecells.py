"""repro.tablecells: a mean and its spread as a table's cell; one unit has no spread (missing, never 0 or nan)."""

import math

import numpy as np
import pytest

from repro.tablecells import mean_spread, mean_spread_of
from repro.tables import MISSING


def test_one_unit_has_a_missing_spread_never_zero_or_nan():
    for spread in ("sd", "se"):
        assert mean_spread_of([0.5], spread) == f"0.500 +- {MISSING}"
        assert mean_spread_of([0.5, math.nan, None], spread) == f"0.500 +- {MISSING}"  # one unit with a value
    assert mean_spread(0.5, math.nan) == mean_spread(0.5, None) == f"0.500 +- {MISSING}"


def test_no_unit_gives_the_missing_marker_alone():
    assert mean_spread_of([]) == mean_spread_of([math.nan, None]) == MISSING
    assert mean_spread(math.nan, 0.1) == mean_spread(None, None) == MISSING


def test_two_units_give_the_closed_form_sd_and_se():
    # two values a, b: sd (ddof 1) = |a - b| / sqrt(2), se = sd / sqrt(2) = |a - b| / 2
    assert mean_spread_of([0.2, 0.6], "sd") == f"0.400 +- {0.4 / math.sqrt(2):.3f}"
    assert mean_spread_of([0.2, 0.6], "se") == "0.400 +- 0.200"
    assert mean_spread_of([0.2, None, 0.6], "se") == "0.400 +- 0.200"  # a missing unit is left out of n


def test_formats_and_separator_are_the_tables_own():
    values = np.array([1234.5, 1300.25, 1190.0])
    sd = np.std(values, ddof=1)
    assert mean_spread_of(values, "sd", fmt=".3g", spread_fmt=".2g", sep=" ± ") == \
        f"{values.mean():.3g} ± {sd:.2g}"
    assert mean_spread(12.345, 0.5, fmt=".1f") == "12.3 +- 0.5"


def test_an_unknown_spread_is_named():
    with pytest.raises(ValueError, match="'iqr'"):
        mean_spread_of([1.0, 2.0], "iqr")
