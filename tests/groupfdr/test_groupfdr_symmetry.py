"""Null sign symmetry of the lasso mirrors across designs, and FDR within Monte Carlo error.

The mirror's FDR argument needs null statistics symmetric about 0. Per replicate, D = #{null M > 0} -
#{null M < 0}; over R independent replicates its mean is within z standard errors of 0 when the signs
are balanced (the nulls of one replicate share its data, so the replicate is the unit). FDR: the
knockoff+ form of the rule controls FDR <= q and Eq. 2.5 (no +1) the modified FDR E[V / (R_sel + 1/q)]
under symmetric, independent null signs; each mean over R replicates is checked against
q + z sqrt(q (1 - q) / R) (an FDP in [0, 1] with mean <= q has variance <= q (1 - q)). z = 3 for the
family of cells (designs x mirrors x levels, about 1.5% one-sided each under the normal approximation
before Bonferroni).
"""

import numpy as np
import pytest

from repro.papers.groupfdr.symmetry import run_design, summarise, symmetry_replicate, table3
from tests.conftest import REPO
from repro.config import workflow_config

SMOKE = workflow_config(REPO)["groupfdr"]["smoke"]["symmetry"]


def test_one_replicate_counts_every_null_once_and_shares_the_statistics_across_rules():
    spec = SMOKE["designs"]["low_r05"]
    for method, n_null in (("group_gm", spec["p"] - spec["n_true"]), ("gm", (spec["p"] - spec["n_true"]) * spec["d"])):
        rec = symmetry_replicate(spec, method, data_seed=1, method_seed=2, qs=[0.1, 0.2])
        assert rec["null_pos"] + rec["null_neg"] + rec["null_zero"] == rec["n_null"] == n_null
        cells = {(c["rule"], c["q"]): c for c in rec["cells"]}
        assert set(cells) == {(r, q) for r in ("gm_package", "min_t", "min_t_plus") for q in (0.1, 0.2)}
        # knockoff+ is Eq. 2.5 with one more false discovery counted: never selects more
        for q in (0.1, 0.2):
            assert cells["min_t_plus", q]["n_selected"] <= cells["min_t", q]["n_selected"]


def test_summary_and_table_carry_sign_balance_and_errors():
    spec = SMOKE["designs"]["low_r05"]
    records = run_design(spec, data_seeds=[1, 2, 3], method_seeds=[4, 5, 6], qs=[0.1])
    rows = summarise("low_r05", spec, records)
    assert {r["method"] for r in rows} == {"group_gm", "gm"} and all(r["replicates"] == 3 for r in rows)
    tab = table3(rows)
    assert list(tab.design) == ["low_r05", "low_r05"] and "(+ - -) / se" in tab.columns
    with pytest.raises(ValueError, match="3 data seeds but 2 method seeds"):
        run_design(spec, data_seeds=[1, 2, 3], method_seeds=[4, 5], qs=[0.1])


@pytest.mark.slow
@pytest.mark.parametrize("design", sorted(SMOKE["designs"]))
def test_null_signs_balanced_and_fdr_within_monte_carlo_error(design):
    R, z = 40, 3.0
    spec = SMOKE["designs"][design]
    records = run_design(spec, data_seeds=range(1000, 1000 + R), method_seeds=range(5000, 5000 + R), qs=[0.1, 0.2])
    for method, reps in records.items():
        diff = np.array([r["null_pos"] - r["null_neg"] for r in reps], dtype=float)
        assert abs(diff.mean()) <= z * diff.std(ddof=1) / np.sqrt(R), (design, method, diff.mean())
        for q in (0.1, 0.2):
            bound = q + z * np.sqrt(q * (1 - q) / R)
            plus = [c["fdp"] for r in reps for c in r["cells"] if c["rule"] == "min_t_plus" and c["q"] == q]
            mfdr = [c["n_false"] / (c["n_selected"] + 1 / q) for r in reps for c in r["cells"]
                    if c["rule"] == "min_t" and c["q"] == q]
            assert np.mean(plus) <= bound, (design, method, q, "FDR", np.mean(plus))
            assert np.mean(mfdr) <= bound, (design, method, q, "mFDR", np.mean(mfdr))
