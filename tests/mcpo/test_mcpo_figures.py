"""mcpo's figures draw each claim's quantity (the metric minus its right-hand side, paired by seed) with the
interval its verdict is decided on, through the aggregate's table as the figures read it; the curves stay
mean ± s.e. over seeds, cut at the metric's bounds, and say so."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from repro.claims import evaluate, load_claims
from repro.figures import lint
from repro.claimtables import claim_table
from repro.papers.mcpo.experiment import aggregate
from repro.papers.mcpo.figures import (CURVE_BARS, FIG1_CLAIMS, FIG2_CLAIMS, FIG3_CLAIMS, fig1, fig1_table, fig2,
                                       fig2_table, fig3, frontier_table)
from tests.conftest import REPO
from tests.foundation.test_figure_claims import drawn_bars

CLAIMS = load_claims(REPO / "workflow/claims/mcpo.yaml", REPO / "workflow/schemas/claims.schema.yaml")
CFG = {"alphas": [0.0, 1.0], "ks": [8], "claim_k": 8, "arithmetic": {"alphas": [0.0, 1.0], "ks": [8]},
       "safety": {"alphas": [0.0, 1.0], "ks": [8]}}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _metrics(rng, shift: float, alpha: float | None, arithmetic: bool) -> dict:
    """One policy's metrics: mode-seeking (alpha 0) concentrates, mode-covering (alpha 1) spreads (planted)."""
    a = 0.5 if alpha is None else alpha
    pass1 = 0.6 + shift - 0.05 * a + rng.normal(0, 0.005)
    out = {"pass1": pass1, "pass8": 1 - (1 - pass1 - 0.1 * a) ** 8, "coverage": min(1.0, 0.7 + 0.2 * a + shift),
           "kl_reverse": 0.3 + 0.1 * a + rng.normal(0, 0.003), "kl_forward": 0.5 - 0.2 * a, "reward": pass1}
    if arithmetic:
        out |= {"form_tv": 0.2 - 0.1 * a, "form_entropy": 0.6 + 0.3 * a + rng.normal(0, 0.01)}
    return out


def _runs(seeds: int, arithmetic: bool = False) -> dict[int, dict]:
    rng = np.random.default_rng(1 + arithmetic)
    runs = {}
    for s in range(seeds):
        shift = rng.normal(0, 0.05)  # the seed's task instance, shared by every method
        methods = {"alpha0": _metrics(rng, shift, 0.0, arithmetic), "alpha1": _metrics(rng, shift, 1.0, arithmetic),
                   "pi_star": _metrics(rng, shift + 0.2, None, arithmetic),
                   "pi_ref": _metrics(rng, shift - 0.3, None, arithmetic)}
        methods["rloo"] = {k: v + rng.normal(0, 0.002) if k in ("pass1", "kl_reverse") else v
                           for k, v in methods["alpha0"].items()}
        runs[s] = {"data_seed": s, "train_seed": s, "alphas": [0.0, 1.0], "methods": methods}
    return runs


def _safety(seeds: int) -> dict[int, dict]:
    """Over-refusal: the compliant reference's fits fall with alpha, the cautious one's barely move (planted)."""
    rng = np.random.default_rng(3)
    runs = {}
    for s in range(seeds):
        def fits(start, slope, ref):
            rates = {"alpha0": start, "alpha1": start + slope, "pi_ref": ref, "pi_star": ref - 0.1}
            return {"methods": {m: {"over_refusal": v + rng.normal(0, 0.005), "harmful_refusal": 0.8 - 0.1 * v,
                                    "pass1": 0.5, "pass8": 0.9} for m, v in rates.items()}}
        runs[s] = {"data_seed": s, "train_seed": s, "alphas": [0.0, 1.0],
                   "references": {"compliant": fits(0.5, -0.3, 0.6), "cautious": fits(0.8, -0.02, 0.85)}}
    return runs


def _built(tmp_path, seeds: int):
    """metrics.json and the claims' table as the aggregate writes them; the tidy table the figures read."""
    metrics, tidy = aggregate(_runs(seeds), CFG, _runs(seeds, arithmetic=True), _safety(seeds))
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(metrics))
    claim_table(CLAIMS, json.loads(path.read_text())).to_csv(tmp_path / "claims.csv", index=False)
    return path, pd.read_csv(tmp_path / "claims.csv", float_precision="round_trip"), tidy


def test_each_figure_draws_the_interval_each_claim_is_decided_on(tmp_path):
    path, claims, tidy = _built(tmp_path, seeds=6)
    results = {r.claim.id: r for r in evaluate(CLAIMS, path)}
    assert set(claims["claim"]) == {c.id for c in CLAIMS}
    for row in claims.itertuples():  # the table is the checker's interval to the last bit
        iv = results[row.claim].interval
        assert (row.estimate, row.low, row.high, row.n) == (iv.estimate, iv.low, iv.high, iv.n), row.claim
    # planted: alpha 0 concentrates (pass@1 up), alpha 1 covers (pass@k, coverage, form entropy up)
    assert results["pass1_favours_mode_seeking"].status == results["passk_favours_mode_covering"].status == "PASS"
    assert results["safety_tradeoff_depends_on_reference"].status == "PASS"  # slopes -0.02 vs -0.3: 0.28 apart
    figures = {"fig1": (fig1_table(tidy, claims, 8), lambda t: fig1(t, 8), FIG1_CLAIMS),
               "fig2": (fig2_table(tidy, claims), fig2, FIG2_CLAIMS),
               "fig3": (frontier_table(tidy, claims), fig3, {"safety": FIG3_CLAIMS})}
    for name, (table, build, drawn) in figures.items():
        curves, rows = table[table["panel"] == "curve"], table[table["panel"] == "claim"]
        assert (curves["interval"] == CURVE_BARS).all()
        fig = build(table)
        assert lint.check(fig) == [], name
        panels = [ax for ax in fig.axes if ax.get_title("left").endswith(("claims", "claim"))]
        if name == "fig2":  # one quantity per axis: each claim in its own panel, beneath the quantity it reads
            drawn = {(task, cid): [cid] for task, ids in drawn.items() for cid in ids}
        assert len(panels) == len(drawn), name
        for ax, (task, ids) in zip(panels, drawn.items()):
            task = task[0] if isinstance(task, tuple) else task
            want = rows[rows["task"] == task].set_index("claim").loc[list(ids)]
            for cid, r in want.iterrows():
                iv = results[cid].interval
                assert (r["mean"], r["low"], r["high"]) == (iv.estimate, iv.low, iv.high)
            np.testing.assert_allclose(drawn_bars(ax)[:, 1:], want[["mean", "low", "high"]].to_numpy(float), rtol=1e-12,
                                       err_msg=name)  # the bar's ends are the centre -+ its lengths


def test_a_rate_bar_is_cut_at_its_bounds():
    tidy = pd.DataFrame({"task": "bandit", "seed": [0, 1], "method": "alpha1", "alpha": 1.0, "coverage": [1.0, 0.9],
                         "kl_reverse": [0.01, 0.3]})
    from repro.papers.mcpo.figures import curve_table

    t = curve_table(tidy, ["coverage", "kl_reverse"]).set_index("metric")
    assert t.loc["coverage", "high"] == 1.0 and t.loc["coverage", "low"] == pytest.approx(0.9)
    assert t.loc["kl_reverse", "high"] == pytest.approx(0.155 + 0.145)  # a divergence has no upper bound


def test_too_few_seeds_draw_the_paired_estimate_without_a_bar_and_say_why(tmp_path):
    """At smoke (2-3 seeds) the checker forms no interval: each claim's point is its mean paired difference,
    drawn without a bar, and the panel says why."""
    path, claims, tidy = _built(tmp_path, seeds=3)
    metrics = json.loads(path.read_text())
    table = fig1_table(tidy, claims, 8)
    rows = table[table["panel"] == "claim"].set_index("claim")
    assert rows[["low", "high"]].isna().all().all() and (rows["n_seeds"] == 3).all()
    diff = np.subtract(metrics["pass1"]["alpha0"]["per_unit"]["values"], metrics["pass1"]["alpha1"]["per_unit"]["values"])
    assert rows.loc["pass1_favours_mode_seeking", "mean"] == pytest.approx(diff.mean())
    fig = fig1(table, 8)
    panel = next(ax for ax in fig.axes if ax.get_title("left").endswith("claims"))
    assert "no interval: 6 seeds\nneeded at 95%" in panel.get_xlabel()
    assert lint.check(fig) == []


def test_fig2_puts_each_quantity_on_its_own_axis_and_each_claim_beneath_its_quantity(tmp_path):
    """Fig. 2 mixes no quantities on an axis: one curve metric per panel, and each claim, in its metric's unit,
    in a panel of its own directly beneath the panel of the metric it reads."""
    from repro.papers.mcpo.figures import FIG2_PANELS

    _, claims, tidy = _built(tmp_path, seeds=6)
    table = fig2_table(tidy, claims)
    fig = fig2(table)
    curve_axes = [ax for ax in fig.axes if ax.get_xlabel().startswith("alpha")]
    labels = [ax.get_ylabel() for ax in curve_axes]
    assert labels == [label for task in ("bandit", "arithmetic") for _, label, _, _ in FIG2_PANELS[task]]
    mcpo_lines = [[line for line in ax.get_lines() if line.get_label() == "MCPO"] for ax in curve_axes]
    assert all(len(lines) <= 1 for lines in mcpo_lines)  # one MCPO curve per axis
    claim_axes = [ax for ax in fig.axes if ax.get_title("left").endswith("claim")]
    reads = [label for task in ("bandit", "arithmetic") for _, label, cid, _ in FIG2_PANELS[task] if cid]
    assert len(claim_axes) == len(reads)
    for ax, label in zip(claim_axes, reads):  # directly beneath the panel of the metric it reads
        box = ax.get_position()
        column = [c for c in curve_axes if abs(c.get_position().x0 - box.x0) < 1e-6 and c.get_position().y0 > box.y1]
        nearest = min(column, key=lambda c: c.get_position().y0 - box.y1)
        assert nearest.get_ylabel() == label and "claim: paired" in ax.get_ylabel()
    assert lint.check(fig) == []
