"""toolgap's figures: a missing rate is marked, never drawn as a bar of 0; each claim's quantity is drawn with the
interval its verdict is decided on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from repro.figures import lint
from repro.papers.toolgap.figures import fig1
from tests.foundation.test_figure_claims import drawn_bars

TABLE = Path(__file__).resolve().parents[1] / "data" / "figures" / "toolgap_fig1.csv"


def test_a_missing_rate_is_marked_na_in_its_slot():
    table = pd.read_csv(TABLE)
    model, task = table.model.iloc[0], table.task.iloc[0]
    table.loc[(table.model == model) & (table.task == task), "rate"] = np.nan
    fig = fig1(table)
    tasks, models = list(dict.fromkeys(table.task)), list(dict.fromkeys(table.model))
    # the pair's slot says n/a in its stack and in its floor claim's panel beneath; the other slots have their bars
    for ax in (fig.axes[tasks.index(task)], fig.axes[len(tasks) + tasks.index(task)]):
        marks = [t for t in ax.texts if t.get_text() == "n/a"]
        assert len(marks) == 1 and marks[0].get_position()[0] == models.index(model)
    assert sum(t.get_text() == "n/a" for a in fig.axes for t in a.texts) == 2
    assert lint.check(fig) == []


def test_no_mark_where_every_rate_is_there():
    fig = fig1(pd.read_csv(TABLE))
    assert not [t for ax in fig.axes for t in ax.texts if t.get_text() == "n/a"]


def _runs(rng):
    runs = {}
    for model, task, n in (("a", "arithmetic", 40), ("a", "knowledge", 30), ("b", "arithmetic", 50)):
        nec, call = rng.random(n) < 0.6, rng.random(n) < 0.3
        recs = [{"id": f"q{k}", "necessary": bool(nec[k]), "called": bool(call[k]), "seen": False} for k in range(n)]
        runs[(model, task)] = {"records": recs, "probes": {
            "decomposition": {"mismatched": int((nec != call).sum()), "cognition_to_action": 0, "cognition": 0,
                              "undecided": int((nec != call).sum())},
            "cross_fit": False, "n_layers": 1, "cognition": None, "action": None, "cosine_last": None}}
    return runs


def test_each_mismatch_claim_is_drawn_with_the_interval_its_verdict_is_decided_on(tmp_path):
    """The aggregate's claim table carries, per model and task, the interval the mismatch claim decides that
    rate on: Wilson over the pair's items at the Bonferroni level of the pairs (here 3, so 98.33%), the same
    bounds the claims checker gives (the verdict's shown pair among them); and the floor claim's (the mismatch
    minus the call-rate floor, paired by item). Fig. 1's table and figure draw exactly those bounds, around
    the stack's total and beneath it, with each claim's threshold; the floor beside each stack is |p - c|."""
    import json

    from matplotlib.container import ErrorbarContainer

    from repro.claims import evaluate, load_claims
    from repro.claimtables import claim_table
    from repro.papers.toolgap.experiment import summarise
    from repro.papers.toolgap.figures import FIG1_CLAIMS, fig1_table
    from repro.stats.intervals import wilson_interval
    from tests.conftest import REPO

    claims = load_claims(REPO / "workflow/claims/toolgap.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    metrics, table, _ = summarise(_runs(np.random.default_rng(7)))
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    checked = claim_table(claims, json.loads((tmp_path / "metrics.json").read_text()), list(FIG1_CLAIMS))
    results = {r.claim.id: r for r in evaluate([c for c in claims if c.id in FIG1_CLAIMS], tmp_path / "metrics.json")}
    level = 1 - 0.05 / 3
    mismatch = checked[checked.claim == "mismatch_substantial_every_model"].set_index("setting")
    for row in table:
        iv = wilson_interval(row["mismatched"], row["n"], level=level)
        got = mismatch.loc[f"{row['model']}__{row['task']}"]
        assert (got["low"], got["high"], got["level"], got["n"]) == (iv.low, iv.high, level, row["n"])
        assert got["threshold"] == 0.2 and got["op"] == ">" and "Bonferroni over 3 settings" in got["interval"]
    for cid, result in results.items():  # the verdict's shown pair has the verdict's interval
        shown = result.reason.split("shown: ")[1].split(")")[0]
        got = checked[(checked.claim == cid) & (checked.setting == shown)].iloc[0]
        assert (got["low"], got["high"]) == (result.interval.low, result.interval.high)
    tidy = fig1_table(pd.DataFrame(table), checked)
    assert set(tidy.direction) == {"missed_call", "over_call", "call_rate_floor", *FIG1_CLAIMS.values()}
    assert tidy[~tidy.direction.isin(list(FIG1_CLAIMS.values()))]["low"].isna().all()
    floors = tidy[tidy.direction == "call_rate_floor"].set_index(["model", "task"])["rate"]
    for row in table:
        assert floors[(row["model"], row["task"])] == pytest.approx(abs(row["necessary"] - row["called"]) / row["n"])
    fig = fig1(tidy)
    tasks = list(dict.fromkeys(tidy.task))
    for axes, direction in ((fig.axes[:len(tasks)], "mismatch"), (fig.axes[len(tasks):], "beyond_call_rate_floor")):
        bars = [c for ax in axes for c in ax.containers if isinstance(c, ErrorbarContainer)]
        drawn = sorted((float(seg[0][1]), float(seg[1][1])) for c in bars for seg in c.lines[2][0].get_segments()
                       if len(seg))
        want = tidy[tidy.direction == direction]
        np.testing.assert_allclose(drawn, sorted(zip(want["low"], want["high"])))
        levels = {seg[0][1] for ax in axes for c in ax.collections for seg in c.get_segments()
                  if len(seg) == 2 and seg[0][1] == seg[1][1]}
        assert float(want["threshold"].iloc[0]) in levels
    assert lint.check(fig) == []


def test_fig2_draws_the_probe_and_cosine_claims_with_their_intervals():
    """Fig. 2's claims panels draw the rows of the aggregate's claim table, bounds as the checker gives them."""
    from repro.papers.toolgap.figures import FIG2_CLAIMS, fig2

    table = pd.read_csv(TABLE.with_name("toolgap_fig2.csv"), float_precision="round_trip")
    claims = table[table.panel == "claim"]
    assert set(claims.claim) == set(FIG2_CLAIMS)  # every probe and cosine claim the smoke build checks
    fig = fig2(table)
    bars = np.concatenate([drawn_bars(ax) for ax in fig.axes[-3:] if ax.axison])
    np.testing.assert_allclose(bars[:, 2:], claims[["low", "high"]].to_numpy(float), rtol=1e-5)
    assert lint.check(fig) == []
