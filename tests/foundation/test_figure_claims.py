"""repro.figures.claims: the table a figure reads holds the checker's own intervals (an 'each' claim's settings
with their paths, a claim's rule on other metrics marked as no claim), and draw_claims draws exactly those
bounds, the claimed threshold or band, and no bar (or n/a) where the checker has none."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml

from repro.claims import claim_interval, evaluate, interval_rows, load_claims, sample
from repro.figures import lint
from repro.claimtables import CLAIM_COLUMNS, claim_table, same_rule_table
from repro.figures.claims import draw_claims, no_interval_text, relation_text
from repro.figures.style import MISSING_GID, n_text, subplots
from repro.io import write_json
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/claims.schema.yaml"
DOC = {"paper": "demo", "title": "Demo", "rebuild": "hand-written metrics", "kind": "reproduction",
       "kind_reason": "the demo's own",
       "claims": [
           {"id": "beats", "claim": "ours > base", "source": "Table 1", "metric": "acc.ours",
            "check": {"op": ">", "rhs": "acc.base", "unit": "seed"}, "scale": "smoke"},
           {"id": "same", "claim": "ours ~ ref", "source": "Table 1", "metric": "gap",
            "check": {"op": "within", "rhs": 0, "tol": 0.05, "unit": "seed"}, "scale": "smoke"},
           {"id": "every", "claim": "each > 0", "source": "Fig. 2", "metric": "gain",
            "check": {"op": ">", "rhs": 0, "unit": "seed", "each": True}, "scale": "smoke"}]}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _metrics(seeds: int) -> dict:
    rng = np.random.default_rng(0)
    ids = [f"seed{s}" for s in range(seeds)]
    base = rng.normal(0.6, 0.05, seeds)  # the seed's difficulty, shared: the pairing removes it
    return {"acc": {m: sample(base + shift + rng.normal(0, 0.005, seeds), ids, "seed")
                    for m, shift in (("ours", 0.04), ("base", 0.0), ("other", 0.01))},
            "gap": sample(rng.normal(0, 0.01, seeds), ids, "seed"),
            "gain": {k: sample(rng.normal(mu, 0.01, seeds), ids, "seed") for k, mu in (("a", 0.1), ("b", 0.2))}}


def _claims(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(DOC))
    return load_claims(path, SCHEMA)


def test_the_table_is_interval_rows_with_each_settings_paths(tmp_path):
    claims, metrics = _claims(tmp_path), _metrics(8)
    table = claim_table(claims, metrics)
    rows = pd.DataFrame(interval_rows(claims, metrics))
    assert tuple(table.columns) == CLAIM_COLUMNS
    pd.testing.assert_frame_equal(table[list(rows.columns)], rows)
    assert list(zip(table["metric"], table["rhs"])) == [("acc.ours", "acc.base"), ("gap", 0), ("gain.a", 0),
                                                        ("gain.b", 0)]


def test_a_claims_rule_on_other_metrics_is_the_checkers_and_says_it_is_no_claim(tmp_path):
    claims, metrics = _claims(tmp_path), _metrics(8)
    write_json(tmp_path / "metrics.json", metrics)
    beats = next(c for c in claims if c.id == "beats")
    table = same_rule_table(beats, metrics, ["acc.ours", "acc.other", "acc.absent"]).set_index("metric")
    assert list(table.index) == ["acc.ours", "acc.other"]  # a metric the build lacks gives no row
    (verdict,) = [r for r in evaluate(claims, tmp_path / "metrics.json") if r.claim.id == "beats"]
    own = table.loc["acc.ours"]
    assert (own["claim"], own["status"]) == ("beats", verdict.status)
    assert (own["estimate"], own["low"], own["high"]) == (verdict.interval.estimate, verdict.interval.low,
                                                          verdict.interval.high)
    other, iv = table.loc["acc.other"], claim_interval(beats, metrics, "acc.other")[0]
    assert (other["claim"], other["status"]) == ("", "") and other["interval"].startswith("beats's rule, no claim")
    assert (other["estimate"], other["low"], other["high"]) == (iv.estimate, iv.low, iv.high)
    with pytest.raises(ValueError, match="each"):
        same_rule_table(next(c for c in claims if c.each), metrics, ["gain.a"])


def drawn_bars(ax) -> np.ndarray:
    """(x, y, low, high) of each error bar drawn in ``ax``, in drawing order (NaN bounds where it has none).
    The bounds are read back from the bar's ends (centre -+ its lengths): equal to the table's to rounding."""
    out = []
    for c in ax.containers:
        x, y = (float(np.asarray(v, dtype=float)[0]) for v in c.lines[0].get_data())
        # a bar with missing bounds has one empty segment (matplotlib drops the NaN ends)
        seg = np.asarray(c.lines[2][0].get_segments()).reshape(-1, 2, 2) if c.lines[2] else np.empty((0, 2, 2))
        out.append([x, y, seg[0, 0, 1], seg[0, 1, 1]] if len(seg) else [x, y, np.nan, np.nan])
    return np.array(out)


def test_draw_claims_draws_the_tables_bounds_and_the_claimed_relation(tmp_path):
    claims, metrics = _claims(tmp_path), _metrics(8)
    table = claim_table(claims, metrics)
    fig, ax = subplots(width="column", height=2.2)
    draw_claims(ax, table)
    ax.set_xlabel(n_text(table["n"], "seed"))
    np.testing.assert_allclose(drawn_bars(ax)[:, 1:], table[["estimate", "low", "high"]].to_numpy(float), rtol=1e-12)
    assert [p.get_height() for p in ax.patches] == [pytest.approx(0.1)]  # the within claim's band, 0 +- 0.05
    assert lint.check(fig) == [] and lint.uncertainty(fig) == lint.DRAWN
    assert [relation_text(r) for _, r in table.iterrows()] == ["> 0", "within 0 ± 0.05", "> 0", "> 0"]
    assert relation_text(table.iloc[1], short=True) == "in ±0.05" and no_interval_text(table, "seed") == ""
    margin = {**table.iloc[0], "op": "noninferior", "tol": 5.0}  # a non-inferiority claim's label, in two lines
    assert relation_text(margin) == "non-inferior to 0, margin 5"
    assert relation_text(margin, short=True) == "non-inferior,\nmargin 5"


def test_too_few_units_draw_the_estimate_without_a_bar_and_a_missing_one_as_na(tmp_path):
    claims, metrics = _claims(tmp_path), _metrics(3)
    table = claim_table(claims, metrics)
    assert table[["low", "high"]].isna().all().all() and table["estimate"].notna().all()
    assert no_interval_text(table, "seed") == "no interval: 7 seeds\nneeded at 97.5%"  # the each claim: Bonferroni over 2
    fig, ax = subplots(width="column", height=2.2)
    draw_claims(ax, table.assign(estimate=[np.nan, *table["estimate"].iloc[1:]]))
    assert lint.uncertainty(fig) == lint.MISSING
    assert [t.get_text() for t in ax.texts if t.get_gid() == MISSING_GID] == ["n/a"]


def test_a_non_inferiority_claim_is_dashed_at_the_edge_its_interval_must_clear(tmp_path):
    """With the side that is better (a ``better`` column), a non-inferiority row's dashed line is its margin's edge
    (threshold - margin where higher is better: PASS when the interval lies above it), the margin shaded between
    it and the threshold; without it, the threshold as before (the row does not say which side the edge is on)."""
    from repro.figures.claims import noninferior_edge

    claims, metrics = _claims(tmp_path), _metrics(8)
    row = claim_table(claims, metrics).iloc[[0]].assign(op="noninferior", tol=0.05)
    for better, edge in (("higher", -0.05), ("lower", 0.05), (None, None)):
        fig, ax = subplots(width="column", height=2.2)
        rows = row.assign(better=better) if better else row
        draw_claims(ax, rows)
        levels = [seg[0][1] for c in ax.collections for seg in c.get_segments()
                  if len(seg) == 2 and seg[0][1] == seg[1][1]]
        assert levels == [0.0 if edge is None else edge]
        assert [(p.get_y(), p.get_height()) for p in ax.patches] == \
            ([] if edge is None else [(pytest.approx(min(edge, 0.0)), pytest.approx(0.05))])
        assert (np.isnan(noninferior_edge(rows.iloc[0])) if edge is None else
                noninferior_edge(rows.iloc[0]) == pytest.approx(edge))
        plt.close(fig)
