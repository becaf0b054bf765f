"""matt's Fig. 1 draws each claim on the token-budget variant with the interval its verdict is decided on."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from matplotlib.container import ErrorbarContainer

from repro.claims import evaluate, load_claims
from repro.figures import lint
from repro.papers.matt.experiment import COMPARISON_COLUMNS, FIG1_CLAIMS, comparisons, summarise
from repro.papers.matt.figures import fig1, fig1_table
from tests.conftest import REPO

CLAIMS = load_claims(REPO / "workflow/claims/matt.yaml", REPO / "workflow/schemas/claims.schema.yaml")


def _runs(n_mc=24, n_bpc=12, seeds=2, methods=("mean", "fvt", "focus", "matt")):
    """Planted runs as the transfer jobs write them: per item scores at two budgets, MATT a little better."""
    rng = np.random.default_rng(3)
    runs = {}
    for m, gain in zip(methods, (0.0, 0.05, 0.1, 0.2)):
        runs[m] = []
        for s in range(seeds):
            checkpoints = [{"budget": b, "tokens": b, "cpu_s": 1.0 + b / 1000,
                            "mc": (rng.random(n_mc) < 0.4 + gain + 0.05 * k).astype(float).tolist(),
                            "gen": [0.0] * 6,
                            "bpc": (5.0 - gain - 0.3 * k + rng.normal(0, 0.2, n_bpc)).tolist()}
                           for k, b in enumerate((0, 4096))]
            runs[m].append({"unit": f"seed{s}", "seed": 100 + s, "checkpoints": checkpoints, "aim_tokens": 64,
                            "aim_loss": [1.0, 0.5]})
    source = {"mc": [1.0] * n_mc, "gen": [0.0] * 6, "bpc": [3.0] * n_bpc}
    return source, runs


def test_each_claim_on_the_variant_is_drawn_with_the_interval_its_verdict_is_decided_on(tmp_path):
    source, runs = _runs()
    metrics, recovery = summarise(source, runs)
    rows = pd.DataFrame(comparisons(metrics, CLAIMS), columns=COMPARISON_COLUMNS)
    assert list(rows["claim"]) == list(FIG1_CLAIMS)
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    results = {r.claim.id: r for r in evaluate([c for c in CLAIMS if c.id in FIG1_CLAIMS], tmp_path / "metrics.json")}
    for _, row in rows.iterrows():
        iv = results[row["claim"]].interval
        assert (row["estimate"], row["low"], row["high"], row["level"], row["n"]) == \
            (iv.estimate, iv.low, iv.high, iv.level, iv.n)
        assert row["status"] == results[row["claim"]].status and row["threshold"] == 0.0 and np.isnan(row["tol"])
        assert "paired difference" in row["interval"] or row["claim"] == "gain_largest_early"
    table = fig1_table(pd.DataFrame(recovery), rows)
    assert set(table["quantity"]) == {"recovery", "claim"}
    fig = fig1(table)
    bars = [c for ax in fig.axes for c in ax.containers if isinstance(c, ErrorbarContainer)]
    drawn = sorted((float(seg[0][1]), float(seg[1][1])) for c in bars for seg in c.lines[2][0].get_segments())
    np.testing.assert_allclose(drawn, sorted(zip(rows["low"], rows["high"])))
    # each claim's threshold dashed beside its point, and its claimed side under its label
    levels = [seg[0][1] for ax in fig.axes for c in ax.collections for seg in c.get_segments()
              if len(seg) == 2 and seg[0][1] == seg[1][1]]
    assert levels == [0.0] * len(rows)
    ticks = [t.get_text() for ax in fig.axes[3:] if ax.axison for t in ax.get_xticklabels()]
    assert sorted(t.rsplit("(", 1)[1] for t in ticks) == sorted(f"{op} 0)" for op in rows["op"])
    assert lint.check(fig) == []


def test_a_claim_whose_method_was_not_trained_gives_no_row():
    source, runs = _runs(methods=("mean", "focus", "matt"))
    metrics, _ = summarise(source, {m: rs for m, rs in runs.items() if m != "fvt"})
    assert "matt_beats_fvt_bpc" not in {r["claim"] for r in comparisons(metrics, CLAIMS)}
