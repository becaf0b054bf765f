"""gtp's Tables 1 and 2: the s.e. over seeds, missing (never 0) where there is one seed."""

import math

import pandas as pd
import pytest

from repro.papers.gtp.control import control_table
from repro.papers.gtp.experiment import table1
from repro.tables import MISSING, markdown_table


def _maze_tidy(seeds: list[int]) -> pd.DataFrame:
    """Per (method, budget, bucket, seed) means as gtp's aggregate writes them: two buckets, two methods,
    a second budget that Table 1 leaves out."""
    rows = []
    for s in seeds:
        for m, base in (("gtp", 0.8), ("mppi", 0.5)):
            for n in (16, 64):
                for b in (0, 1):
                    rows.append({"method": m, "n_samples": n, "bucket": b, "dist_lo": b, "dist_hi": b + 1, "seed": s,
                                 "score": base - 0.1 * b + 0.05 * s, "success": 1.0 - 0.5 * b - 0.25 * s,
                                 "evals": 100.0 + s, "denoiser": 20.0, "episodes": 4})
    return pd.DataFrame(rows)


def _control_tidy(seeds: list[int]) -> pd.DataFrame:
    return pd.DataFrame([{"task": "pendulum", "method": m, "seed": s, "ret": r + 10.0 * s, "steps": 40.0,
                          "evals": 50.0, "denoiser": 8.0, "episodes": 3}
                         for s in seeds for m, r in (("gtp", -200.0), ("mppi", -400.0))])


def test_one_seed_gives_a_missing_se_in_both_tables():
    t1 = table1(_maze_tidy([0]), main_n=16)
    assert t1[["score_se", "success_se"]].isna().all().all()
    t2 = control_table(_control_tidy([0]))
    assert t2.return_se.isna().all()
    for table in (t1, t2):
        row = markdown_table(table).splitlines()[2].split(" | ")
        assert MISSING in row and "0" not in row  # printed as missing, not as an exact 0


def test_two_seeds_give_the_closed_form_se():
    # two seeds a, b: s.e. = sd / sqrt(2) = |a - b| / 2
    t1 = table1(_maze_tidy([0, 1]), main_n=16).set_index("method")
    assert list(t1.index) == ["gtp", "mppi"] and (t1.seeds == 2).all()
    assert t1.loc["gtp", "score"] == pytest.approx(0.775)          # (0.8 - 0.05 + 0.8 + 0.05 - 0.05) / 2 per seed
    assert t1.loc["gtp", "score_se"] == pytest.approx(0.05 / 2)
    assert t1.loc["mppi", "success_se"] == pytest.approx(0.25 / 2)
    assert t1.loc["gtp", "model_evals_per_decision"] == pytest.approx(100.5)
    t2 = control_table(_control_tidy([0, 1])).set_index("method")
    assert t2.loc["gtp", "return"] == pytest.approx(-195.0) and t2.loc["gtp", "return_se"] == pytest.approx(5.0)
    assert not any(math.isnan(v) for v in t2.return_se)
