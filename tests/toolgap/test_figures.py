"""toolgap's figures: a missing rate is marked, never drawn as a bar of 0."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from repro.figures import lint
from repro.papers.toolgap.figures import fig1

TABLE = Path(__file__).resolve().parents[1] / "data" / "figures" / "toolgap_fig1.csv"


def test_a_missing_rate_is_marked_na_in_its_slot():
    table = pd.read_csv(TABLE)
    model, task = table.model.iloc[0], table.task.iloc[0]
    table.loc[(table.model == model) & (table.task == task), "rate"] = np.nan
    fig = fig1(table)
    ax = fig.axes[list(dict.fromkeys(table.task)).index(task)]
    marks = [t for t in ax.texts if t.get_text() == "n/a"]
    assert len(marks) == 1 and marks[0].get_position()[0] == list(dict.fromkeys(table.model)).index(model)
    assert sum(t.get_text() == "n/a" for a in fig.axes for t in a.texts) == 1  # the other slots have their bars
    assert lint.check(fig) == []


def test_no_mark_where_every_rate_is_there():
    fig = fig1(pd.read_csv(TABLE))
    assert not [t for ax in fig.axes for t in ax.texts if t.get_text() == "n/a"]


def test_each_mismatch_rate_is_drawn_with_the_interval_its_claim_is_decided_on(tmp_path):
    """The aggregate's table carries, per model and task, the interval the mismatch claim decides that
    rate on: Wilson over the pair's items at the Bonferroni level of the pairs (here 3, so 98.33%), the
    same bounds the claims checker gives (the verdict's shown pair among them); Fig. 1's table and
    figure draw exactly those bounds around the stack's total, and the claim's threshold."""
    import json

    from matplotlib.container import ErrorbarContainer

    from repro.claims import evaluate, load_claims
    from repro.papers.toolgap.experiment import MISMATCH_CLAIM, summarise
    from repro.papers.toolgap.figures import fig1_table
    from repro.stats.intervals import wilson_interval
    from tests.conftest import REPO

    rng = np.random.default_rng(7)
    runs = {}
    for model, task, n in (("a", "arithmetic", 40), ("a", "knowledge", 30), ("b", "arithmetic", 50)):
        nec, call = rng.random(n) < 0.6, rng.random(n) < 0.3
        recs = [{"id": f"q{k}", "necessary": bool(nec[k]), "called": bool(call[k]), "seen": False} for k in range(n)]
        runs[(model, task)] = {"records": recs, "probes": {
            "decomposition": {"mismatched": int((nec != call).sum()), "cognition_to_action": 0, "cognition": 0,
                              "undecided": int((nec != call).sum())},
            "cross_fit": False, "n_layers": 1, "cognition": None, "action": None, "cosine_last": None}}
    claims = load_claims(REPO / "workflow/claims/toolgap.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    metrics, table, _ = summarise(runs, claims=claims)
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    (result,) = evaluate([c for c in claims if c.id == MISMATCH_CLAIM], tmp_path / "metrics.json")
    level = 1 - 0.05 / 3
    for row in table:
        iv = wilson_interval(row["mismatched"], row["n"], level=level)
        assert (row["claim_low"], row["claim_high"], row["claim_level"], row["claim_n"]) == (iv.low, iv.high, level, row["n"])
        assert row["claim"] == MISMATCH_CLAIM and row["claim_threshold"] == 0.2 and row["claim_op"] == ">"
        assert "Wilson" in row["claim_interval"] and "Bonferroni over 3 settings" in row["claim_interval"]
    shown = result.reason.split("shown: ")[1].split(")")[0]
    row = next(r for r in table if f"{r['model']}__{r['task']}" == shown)
    assert (row["claim_low"], row["claim_high"]) == (result.interval.low, result.interval.high)
    tidy = fig1_table(pd.DataFrame(table))
    totals = tidy[tidy.direction == "mismatch"]
    assert len(totals) == 3 and tidy[tidy.direction != "mismatch"]["low"].isna().all()
    fig = fig1(tidy)
    bars = [c for ax in fig.axes for c in ax.containers if isinstance(c, ErrorbarContainer)]
    drawn = sorted((float(seg[0][1]), float(seg[1][1])) for c in bars for seg in c.lines[2][0].get_segments() if len(seg))
    np.testing.assert_allclose(drawn, sorted(zip(totals["low"], totals["high"])))
    assert any(line.get_linestyle() == "--" and list(line.get_ydata()) == [0.2, 0.2] for ax in fig.axes for line in ax.lines)
    assert lint.check(fig) == []
