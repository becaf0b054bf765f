"""mcpo's Table 1: mean +- s.e. over seeds; one seed has no s.e. (missing, never nan), no seed no mean."""

import math

import numpy as np
import pandas as pd

from repro.papers.mcpo.experiment import table1
from repro.tables import MISSING


def _tidy(values: dict[int, float]) -> pd.DataFrame:
    """Two swept alphas and the baseline on one task; ``reward`` the seed's value plus the method's offset, ``kl``
    defined for no seed."""
    return pd.DataFrame([{"task": "bandit", "seed": s, "method": m, "alpha": a, "reward": v + offset, "kl": math.nan}
                         for s, v in values.items() for m, a, offset in (("alpha1", 1.0, 1.0), ("rloo", math.nan, 0.0),
                                                                         ("alpha0p5", 0.5, 0.5))])


def test_one_seed_has_a_missing_se_never_nan():
    t = table1(_tidy({0: 0.25}))
    assert list(t.method) == ["alpha0p5", "alpha1", "rloo"]
    assert list(t.reward) == [f"0.750 +- {MISSING}", f"1.250 +- {MISSING}", f"0.250 +- {MISSING}"]
    assert "kl" not in t  # a metric no seed of the task has is no column
    t = table1(_tidy({0: 0.25}).assign(kl=lambda d: np.where(d.method == "alpha1", 0.1, np.nan)))
    assert t.set_index("method").kl.to_dict() == {"alpha0p5": MISSING, "alpha1": f"0.100 +- {MISSING}", "rloo": MISSING}
    assert not t[["reward", "kl"]].apply(lambda c: c.str.contains("nan")).any().any()


def test_two_seeds_give_the_closed_form_se():
    t = table1(_tidy({0: 0.25, 1: 0.75})).set_index("method")
    assert (t.n_seeds == 2).all()
    assert t.loc["alpha1", "reward"] == "1.500 +- 0.250"  # s.e. of two values: |a - b| / 2
