"""collapse's recursion against its planted truth, the aggregate's metrics, and bad configurations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from repro import claims
from repro.papers.collapse import grid
from repro.papers.collapse.experiment import CollapseConfig, run_recursion, summarise, trend_change

REPO = Path(__file__).resolve().parents[2]

FAST = dict(weights=[0.4, 0.3, 0.25, 0.05], n=100, generations=60, fisher_draws=200, llc_steps=300,
            llc_burn_in=100, diagnose_every=5)


def test_smallest_planted_component_is_the_one_lost_without_fresh_data():
    """Self-consumption drifts the weights like Wright-Fisher: at n = 100 a component of weight p is
    lost after about 2 n p ln(1/p) / (1 - p) generations, ~32 for the planted 0.05 component and
    ~90 or more for the others. Over 60 generations the small one is lost in most replicates and
    far more often than any heavy one (16 replicates: expected ~13 against ~3 at most)."""
    runs = [run_recursion(FAST, inject=0.0, replicate=r, seed=100 + r, diagnosed=False) for r in range(16)]
    lost = np.array([[e is not None for e in r["first_extinct"]] for r in runs])  # (replicate, component)
    assert lost[:, 3].sum() >= 10 and lost[:, 3].sum() > lost[:, :3].sum(0).max() + 4
    first = [min((e, k) for k, e in enumerate(r["first_extinct"]) if e is not None)[1] for r in runs if lost[runs.index(r)].any()]
    assert first.count(3) >= 0.75 * len(first)
    # without fresh data extinction is nearly absorbing: a component below the floor (n w < 0.1
    # expected points) gets a point again only rarely, or when its mean is captured by a neighbour's
    # tail and it splits that cluster (EM's responsibilities are soft); this happens, but rarely
    revived = sum(bool((np.array([g["weights"][3] for g in r["generations"]])[r["first_extinct"][3]:] >= 1e-3).any())
                  for r in runs if r["first_extinct"][3] is not None)
    assert revived <= 0.25 * lost[:, 3].sum()


def test_fresh_data_keeps_components_alive():
    """With half the points fresh each generation the small component gets ~2.5 real points a
    generation and its weight is pulled back towards 0.05 (a generation without any of its points,
    probability ~e^-5, leaves a hole the next fresh draw refills); at the horizon it is alive in
    most replicates, while without fresh data it is dead in most (the same replicate seeds)."""
    alive = {inject: [run_recursion(FAST, inject=inject, replicate=r, seed=100 + r, diagnosed=False)["survived"]
                      for r in range(8)] for inject in (0.0, 0.5)}
    assert sum(alive[0.5]) >= 6 and sum(alive[0.5]) > sum(alive[0.0]) + 2


def test_replicate_seed_gives_the_same_generation_zero_at_every_fraction():
    a = run_recursion(FAST | {"generations": 2}, inject=0.0, replicate=0, seed=7, diagnosed=False)
    b = run_recursion(FAST | {"generations": 2}, inject=0.4, replicate=0, seed=7, diagnosed=False)
    assert a["generations"][0]["weights"] == b["generations"][0]["weights"]
    assert a["generations"][1]["weights"] != b["generations"][1]["weights"]


def test_diagnostics_see_the_dead_component():
    """After the small component dies (weight ~0), the Fisher nullity is d + 1 = 3 (its mean and its
    weight direction, see repro.methods.gmm), and the stratum's RLCT drops by d/2."""
    cfg = FAST | {"generations": 40, "diagnose_every": 40}
    run = next(r for r in (run_recursion(cfg, inject=0.0, replicate=i, seed=100 + i, diagnosed=True) for i in range(8))
               if r["generations"][-1]["n_extinct"] == 1)
    first, last = run["generations"][0], run["generations"][-1]
    assert first["nullity"] == 0 and last["nullity"] == 3
    assert first["rlct_stratum"] == 5.5 and last["rlct_stratum"] == 4.5
    assert last["curvature"][3] < 1e-3 * first["curvature"][3]


def test_summarise_writes_checkable_samples():
    cfg = FAST | {"generations": 30, "diagnose_every": 3}
    records = [run_recursion(cfg, inject=i, replicate=r, seed=200 + r, diagnosed=(i == 0.0))
               for i in (0.0, 0.5) for r in range(6)]
    metrics, df = summarise(records)
    assert set(df.inject) == {0.0, 0.5} and df.component.nunique() == 4
    geo = metrics["synthetic_only"]
    slope = geo["nullity_slope_per_extinction"]
    ev = claims.as_evidence(slope, "nullity") if slope else None
    assert ev is not None
    # every replicate's nullity rises by d + 1 = 3 per extinct component (weight ~0, see above)
    if "values" in slope:
        assert np.allclose(slope["values"], 3.0, atol=0.5)
    assert metrics["injection"]["by_inject"]["inject0p5"]["n"] == 6


def test_bad_config_is_refused_with_its_key():
    with pytest.raises(ValueError, match=r"collapse\.small\.n_gens"):
        run_recursion({"n_gens": 3}, inject=0.0, replicate=0, seed=0, diagnosed=False, where="collapse.small")
    with pytest.raises(ValueError, match="extinction_floor"):
        CollapseConfig(extinction_floor=0.5)
    with pytest.raises(ValueError, match="injection fraction"):
        run_recursion(FAST, inject=1.5, replicate=0, seed=0, diagnosed=False)
    with pytest.raises(ValueError, match="diagnose_injections"):
        grid.run_targets({"injections": [0.0, 0.2], "replicates": 2, "diagnose_injections": [0.1]})


def test_trend_change_is_the_least_squares_line_over_the_horizon():
    """Worked by hand: generations 0, 3, 6 with LLC 5, 4, 2: centred g = -3, 0, 3 and v - 11/3 = 4/3, 1/3, -5/3,
    slope = (-4 - 5) / 18 = -1/2, times the horizon 6 = -3 (the two ends alone say -3 too; the middle point
    moves the line's ends, not its slope here). A flat trajectory has 0; a rise of 1 per stratum step is +."""
    assert trend_change([0, 3, 6], [5.0, 4.0, 2.0]) == pytest.approx(-3.0)
    assert trend_change([0, 3, 6], [5.0, 5.0, 5.0]) == pytest.approx(0.0)
    assert trend_change([0, 2, 4, 6], [1.0, 4.0, 1.0, 4.0]) == pytest.approx(0.6 * 6 / 2)  # slope 0.3 by hand
    assert np.isnan(trend_change([3], [1.0]))


def test_mixture_non_descending_claim_reads_the_injected_trend(tmp_path):
    """The claim's margin is one stratum (d/2 = 1): a trend of -0.5 per replicate with a small spread passes,
    -2 fails (two strata down), and the metric sits in the injected arm's geometry."""
    spec = [c for c in claims.load_claims(REPO / "workflow/claims/collapse.yaml",
                                          REPO / "workflow/schemas/claims.schema.yaml")
            if c.id == "injection_llc_not_descending"]
    for centre, verdict in ((-0.5, "PASS"), (-2.0, "FAIL")):
        values = (centre + 0.05 * np.array([-1, 1, -1, 1, 0, 0, 0.5, -0.5])).tolist()
        path = tmp_path / f"metrics{centre}.json"
        path.write_text(json.dumps({"injected": {"llc_trend_change": claims.sample(values, list(range(8)), "replicate")}}))
        assert claims.evaluate(spec, path)[0].status == verdict
