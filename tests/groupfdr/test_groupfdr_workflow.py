"""The groupfdr DAG builds from an empty folder at scale=smoke, and its outputs say what they should."""

import json

import numpy as np
import pandas as pd
import pytest

from tests.conftest import REPO
from repro.claims import interval_rows, load_claims
from repro.papers.groupfdr.experiment import SE_INTERVAL

TARGETS = ["reports/groupfdr_fig1.pdf", "reports/groupfdr_fig2.pdf", "reports/groupfdr_table1.md",
           "reports/groupfdr_table2.md", "reports/groupfdr_table3.md", "results/groupfdr/metrics.json",
           "results/groupfdr/runtime.json"]


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_run):
    tmp_path = smoke_dir  # shared with the whole-workflow tests (the AE report reuses these builds)
    workflow_run(tmp_path, *TARGETS)
    for target in TARGETS:
        assert (tmp_path / target).stat().st_size > 0, target
    metrics = json.loads((tmp_path / "results/groupfdr/metrics.json").read_text())
    # block size 1: the group code reproduces the Gaussian mirror up to rounding
    assert metrics["exactness"]["gm_max_abs_diff"] < 1e-8 and metrics["exactness"]["same_selection"]
    # every setting x method x q cell is present, with FDR and power in [0, 1]
    summary = pd.read_csv(tmp_path / "results/groupfdr/summary.csv").drop_duplicates(["setting", "method", "q"])
    assert len(summary) == 17 * 3
    assert summary[["fdr", "power"]].apply(lambda c: c.between(0, 1)).all().all()
    # BH on group F-tests: the oracle-like baseline finds the planted groups at smoke signal strength
    assert summary[(summary.method == "bh") & (summary.setting == "rho00")].power.min() == 1.0
    # Fig. 2's CSV holds the one replicate it plots: true groups among the largest statistics
    fig2 = pd.read_csv(tmp_path / "reports/groupfdr_fig2.csv")
    assert fig2.is_true.sum() == 4 and fig2.sort_values("M").is_true.iloc[-1]
    # the symmetry grid: one row per (design, mirror), sign counts that add up to the nulls
    table3 = pd.read_csv(tmp_path / "reports/groupfdr_table3.csv")
    assert len(table3) == 2 * 2
    sym = pd.read_csv(tmp_path / "results/groupfdr/symmetry_summary.csv")
    assert ((sym.null_pos + sym.null_neg + sym.null_zero) > 0).all() and sym.rule.nunique() == 3
    # the claims' evidence: per-replicate samples, ids = replicates, the same for every method
    fdp = metrics["fdr_control"]["group_gm"]["linear"]["fdp"]
    assert fdp["rho05_q10"]["unit"] == "replicate" and len(fdp["rho05_q10"]["values"]) == 6
    assert metrics["power"]["group_gm"]["highdim"]["ids"] == metrics["power"]["gm"]["highdim"]["ids"]
    # Fig. 1: where a claim decides a point, the bounds are the claim's (at smoke none: 6 replicates cannot
    # give the Bonferroni level of 12 cells, 9 are needed), to the last bit in the summary, to the CSV's 6
    # digits in the figure's table; every other bar is named for what it is
    claims = {c.id: c for c in load_claims(REPO / "workflow/claims/groupfdr.yaml", REPO / "workflow/schemas/claims.schema.yaml")}
    full = pd.read_csv(tmp_path / "results/groupfdr/summary.csv", float_precision="round_trip")
    fig1 = pd.read_csv(tmp_path / "reports/groupfdr_fig1.csv")
    for cell in interval_rows(list(claims.values()), metrics, ["group_gm_fdr_control_linear"]):
        setting, qkey = cell["setting"].rsplit("_", 1)  # <setting>_q10
        for table, exact in ((full, True), (fig1, False)):
            row = table[(table.method == "group_gm") & (table.setting == setting) & np.isclose(table.q, int(qkey[1:]) / 100)]
            if table is fig1 and row.empty:
                continue  # a setting Fig. 1 does not sweep
            got = row[["fdr_low", "fdr_high"]].to_numpy(float)
            want = np.tile([cell["low"], cell["high"]], (len(row), 1))
            np.testing.assert_allclose(got, want, rtol=0 if exact else 1e-5, equal_nan=True)
            assert (row.fdr_interval == f"claim group_gm_fdr_control_linear: {cell['interval']}").all()
    for cell in interval_rows(list(claims.values()), metrics, ["group_gm_power_vs_gm"]):
        row = full[(full.method == "gm") & (full.setting == cell["setting"]) & np.isclose(full.q, 0.1)]
        np.testing.assert_array_equal(row[["power_gain", "power_gain_low", "power_gain_high"]].to_numpy(float),
                                      np.tile([cell["estimate"], cell["low"], cell["high"]], (len(row), 1)))
    assert (fig1.loc[fig1.method != "group_gm", "fdr_interval"] == SE_INTERVAL).all()
    # the real table: every macrodata series appears as a group for every method and q
    table2 = pd.read_csv(tmp_path / "reports/groupfdr_table2.csv")
    assert table2.groupby(["method", "q"]).group.nunique().eq(12).all()
