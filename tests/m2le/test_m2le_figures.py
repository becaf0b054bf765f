"""m2le's figures draw each claim's quantity with the interval its verdict is decided on (paired by seed), through
the aggregate's table as the figures read it; the curves stay mean ± s.e. over seeds and say so."""

from __future__ import annotations

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from repro.claims import evaluate, load_claims
from repro.figures import lint
from repro.papers.m2le.experiment import MODULATION_BINS, aggregate, claim_intervals
from repro.papers.m2le.figures import CURVE_BARS, FIG1_CLAIMS, fig1, fig1_table, fig2, fig2_table
from tests.conftest import REPO
from tests.foundation.test_figure_claims import drawn_bars

CLAIMS = load_claims(REPO / "workflow/claims/m2le.yaml", REPO / "workflow/schemas/claims.schema.yaml")
METHODS = ("seq", "fixed", "pm", "olora", "ewc", "him", "m2le", "joint")
#: Planted average accuracy after the last task per method; each seed adds its own offset to every method
#: (shared by the methods: the pairing removes it) and a small noise of its own.
PLANTED = {"seq": 0.40, "fixed": 0.50, "pm": 0.52, "olora": 0.45, "ewc": 0.47, "him": 0.58, "m2le": 0.62,
           "joint": 0.80}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _runs(seeds: int, sequences=("blocks", "split_digits"), n_tasks: int = 3) -> dict:
    rng = np.random.default_rng(0)
    runs = {}
    for sequence in sequences:
        for seed in range(seeds):
            shift = rng.normal(0, 0.05)  # the seed's offset, shared by its methods
            methods = {}
            for method, level in PLANTED.items():
                acc = np.clip(level + shift + rng.normal(0, 0.005, (n_tasks, n_tasks)), 0, 1)
                acc[np.triu_indices(n_tasks, 1)] = np.nan  # a task not yet seen
                if method == "joint":
                    acc[:-1] = np.nan
                layers = [{"layer": i, "mean": 0.5, "sd": 0.3 + 0.01 * seed, "at_zero": 0.1, "at_one": 0.2,
                           "hist": rng.integers(0, 20, len(MODULATION_BINS) - 1).tolist()} for i in range(2)]
                modulation = [{"task": t, "alpha": 0.6, "layers": layers} for t in range(1, n_tasks)] \
                    if method in ("him", "m2le") else []
                methods[method] = {"acc": acc.tolist(), "alphas": [0.6] * (n_tasks - 1), "modulation": modulation}
            runs[(sequence, seed)] = {"sequence": sequence, "methods": methods}
    return runs


def _built(tmp_path, seeds: int):
    """metrics.json and the claims' table as the aggregate writes them, and the tables the figures read."""
    metrics, _, curve, modulation = aggregate(_runs(seeds), {})
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(metrics))
    claim_intervals(json.loads(path.read_text()), CLAIMS).to_csv(tmp_path / "claims.csv", index=False)
    claims = pd.read_csv(tmp_path / "claims.csv", float_precision="round_trip")
    return path, claims, curve, modulation


def test_the_claims_table_is_the_checkers_interval_to_the_last_bit(tmp_path):
    path, claims, _, _ = _built(tmp_path, seeds=6)
    results = {r.claim.id: r for r in evaluate(CLAIMS, path)}
    own = claims[claims["claim"].notna()]
    assert set(own["claim"]) == {c.id for c in CLAIMS if "perm_digits" not in c.id and "shapes" not in c.id}
    for row in own.itertuples():
        iv = results[row.claim].interval
        assert (row.estimate, row.low, row.high, row.n) == (iv.estimate, iv.low, iv.high, iv.n), row.claim
        assert row.status == results[row.claim].status
    # the planted gains hold on every seed: M²LE over the best PEFT (HIM, 0.04), HIM over the best scalar (0.06)
    assert results["m2le_best_peft_blocks"].status == results["him_beats_best_scalar_split_digits"].status == "PASS"
    # the spread's rule on a sequence no claim reads: the same check, marked as no claim
    other = claims[claims["metric"] == "modulation_sd.split_digits"].iloc[0]
    assert pd.isna(other["claim"]) and other["interval"].startswith("modulation_far_from_uniform's rule, no claim")
    assert other["low"] < other["estimate"] < other["high"]


def test_fig1_draws_each_claims_interval_and_the_curves_say_they_are_se(tmp_path):
    path, claims, curve, _ = _built(tmp_path, seeds=6)
    results = {r.claim.id: r for r in evaluate(CLAIMS, path)}
    table = fig1_table(curve, claims)
    drawn = table[table["panel"] == "claim"]
    assert len(drawn) == 2 * len(FIG1_CLAIMS) and (drawn["n_seeds"] == 6).all()
    for row in drawn.itertuples():
        iv = results[row.claim].interval
        assert (row.mean, row.low, row.high) == (iv.estimate, iv.low, iv.high)
    curves = table[table["panel"] == "curve"]
    assert (curves["interval"] == CURVE_BARS).all() and curves["low"].between(0, 1).all()
    fig = fig1(table)
    assert lint.check(fig) == []
    for row, sequence in enumerate(sorted(set(curves["sequence"]))):
        ax = fig.axes[3 * row + 2]
        want = drawn[drawn["sequence"] == sequence].set_index("metric").loc[list(FIG1_CLAIMS)]
        np.testing.assert_allclose(drawn_bars(ax)[:, 1:], want[["mean", "low", "high"]].to_numpy(float), rtol=1e-12)


def test_fig2_draws_the_spread_with_the_claims_interval_on_the_blocks(tmp_path):
    path, claims, _, modulation = _built(tmp_path, seeds=6)
    (spread,) = [r for r in evaluate(CLAIMS, path) if r.claim.id == "modulation_far_from_uniform"]
    table = fig2_table(modulation, claims)
    drawn = table[table["panel"] == "claim"].set_index("sequence")
    iv = spread.interval
    assert tuple(drawn.loc["blocks", ["estimate", "low", "high"]]) == (iv.estimate, iv.low, iv.high)
    fig = fig2(table)
    assert lint.check(fig) == []
    bars = drawn_bars(fig.axes[-1])
    np.testing.assert_allclose(bars[:, 1:], drawn.sort_index()[["estimate", "low", "high"]].to_numpy(float), rtol=1e-12)


def test_too_few_seeds_draw_the_paired_estimate_without_a_bar_and_say_why(tmp_path):
    """At smoke (2 seeds) the checker forms no interval: each claim's point is its mean paired difference
    (what its verdict's estimate is), drawn without a bar, and the panel says why."""
    path, claims, curve, modulation = _built(tmp_path, seeds=2)
    metrics = json.loads(path.read_text())
    table = fig1_table(curve, claims)
    drawn = table[table["panel"] == "claim"].set_index(["sequence", "metric"])
    assert drawn[["low", "high"]].isna().all().all() and (drawn["n_seeds"] == 2).all()
    assert drawn.loc[("blocks", "tsp_gain"), "mean"] == pytest.approx(np.mean(metrics["tsp_gain"]["blocks"]["values"]))
    fig = fig1(table)
    assert "no interval: 6 seeds\nneeded at 95%" in fig.axes[-1].get_xlabel()
    assert lint.check(fig) == []
    fig = fig2(fig2_table(modulation, claims))
    assert "no interval: 6 seeds\nneeded at 95%" in fig.axes[-1].get_xlabel()
    assert lint.check(fig) == []
