"""grokcap's experiment (repro.papers.grokcap.experiment): the aggregation of planted runs into the
paper's quantities, and one grid cell's strict config."""

from __future__ import annotations

import json
import math

import pytest
import yaml

from repro.config import known_keys, workflow_config
from repro.methods.grokking import GrokConfig
from repro.papers.grokcap.experiment import run_grokcap, summarise
from repro.papers.grokcap.grid import DATA_KEYS, GRID_KEYS, train_config
from repro.papers.grokcap.synth import seed_dataset
from tests.conftest import REPO


def _record(task, width, seed, P, t_train, t_val=None, cap=3000):
    return {"task": task, "width": width, "seed": seed, "P": P, "n_train": 100, "steps": cap, "max_steps": cap,
            "t_train": t_train, "t_val": t_val, "train_acc": 1.0, "val_acc": 1.0, "bits": 2.0 * P,
            "dataset_bits": 1e9, "curve": []}


def test_summarise_on_planted_runs():
    # T_mem = 1e7 / P and T_gen = 1e4 P^-0.25 cross at P = 1e4 (see above); grokking from P = 2e4 on
    widths = {8: 2500.0, 12: 5000.0, 16: 10000.0, 24: 20000.0, 32: 40000.0}
    recs = []
    for s in range(6):  # six seeds, the fewest from which a 95% interval can be given
        for w, P in widths.items():
            tm, tg = 1e7 / P, 1e4 * P**-0.25
            recs.append(_record("random", w, s, P, tm if tm < 3000 else None))  # P = 2500: censored
            t_train = tg / 3 if P >= 2e4 else tg
            recs.append(_record("modular", w, s, P, t_train, tg))
        recs.append(_record("capacity", 4, s, 900.0, None))
    metrics, runs = summarise(recs)
    assert metrics["crossing"]["empirical_P"] == pytest.approx(1e4, rel=1e-9)
    assert math.isnan(metrics["crossing"]["empirical_P_upper_bound"])
    assert metrics["power_law"]["t_gen"]["b"] == pytest.approx(-0.25, abs=1e-9)
    assert metrics["power_law"]["t_mem"]["b"] == pytest.approx(-1.0, abs=1e-3)  # Tobit: censored point agrees
    assert metrics["grokking"]["first_grokking_P"] == 2e4
    assert metrics["grokking"]["threshold_P"] == pytest.approx(math.sqrt(1e4 * 2e4))
    assert metrics["capacity"]["bits_per_param"] == pytest.approx(2.0)
    assert metrics["capacity"]["P_to_memorise_train"] == pytest.approx(1e9 / 2.0)
    assert metrics["censoring"]["random"]["n_censored"] == 6
    # all seeds are identical, so every bootstrap resample gives the same ratio: a point interval
    # at log10(threshold / crossing) = log10(sqrt(2) 1e4 / 1e4)
    ratio = metrics["threshold_vs_crossing"]["log10_ratio_empirical"]
    assert ratio["n_undefined"] == 0
    assert ratio["interval"]["low"] == pytest.approx(math.log10(math.sqrt(2)), abs=1e-9)
    assert ratio["interval"]["high"] == pytest.approx(math.log10(math.sqrt(2)), abs=1e-9)


def test_summarise_bounds_a_crossing_outside_the_grid():
    # memorisation faster than generalisation at every width where the order is known; at the
    # smallest width both are censored, so the medians place the crossing below P = 5000 only
    widths = {8: 2500.0, 12: 5000.0, 16: 10000.0}
    recs = []
    for s in range(3):
        for w, P in widths.items():
            known = P > 2500
            recs.append(_record("random", w, s, P, 1e6 / P if known else None))
            recs.append(_record("modular", w, s, P, 100.0, 2500.0 if P == 1e4 else None))
    metrics, _ = summarise(recs)
    assert math.isnan(metrics["crossing"]["empirical_P"])
    assert metrics["crossing"]["empirical_P_upper_bound"] == 5000.0
    assert math.isnan(metrics["crossing"]["empirical_P_lower_bound"])
    # no crossing in any resample: the bootstrap gives no interval, and says why
    ratio = metrics["threshold_vs_crossing"]["log10_ratio_empirical"]
    assert ratio["interval"] is None and ratio["n_undefined"] == ratio["n_boot"]  # no estimate: NOT RUN


def _planted(n_seeds, grokking_seeds):
    widths = {8: 2500.0, 12: 5000.0, 16: 10000.0, 24: 20000.0, 32: 40000.0}
    recs = []
    for s in range(n_seeds):
        for w, P in widths.items():
            tm, tg = 1e7 / P, 1e4 * P**-0.25
            recs.append(_record("random", w, s, P, tm if tm < 3000 else None))
            t_train = tg / 3 if (P >= 2e4 and s < grokking_seeds) else tg
            recs.append(_record("modular", w, s, P, t_train, tg))
    return recs


def test_seed_bootstrap_counts_undefined_resamples_against_both_ends():
    # six seeds; seed 5 never groks, so resamples holding it 3 times or more have no threshold
    metrics, _ = summarise(_planted(6, 5), n_boot=1000)
    ratio = metrics["threshold_vs_crossing"]["log10_ratio_empirical"]
    # P(Binomial(6, 1/6) >= 3) = 0.062: more than the 2.5% each end can absorb
    assert 0.035 < ratio["n_undefined"] / 1000 < 0.09 and "low" not in ratio["interval"]
    assert ratio["no_interval_because"].startswith("undefined in")
    assert ratio["interval"]["undecided"] == ratio["no_interval_because"]
    assert ratio["estimate"] == pytest.approx(math.log10(math.sqrt(2)), abs=1e-9)


def test_seed_bootstrap_gives_no_interval_from_too_few_seeds(tmp_path):
    # three identical seeds: every resample agrees, yet 3 units cannot carry a 95% interval
    metrics, _ = summarise(_planted(3, 3), n_boot=200)
    ratio = metrics["threshold_vs_crossing"]["log10_ratio_empirical"]
    assert ratio["n_undefined"] == 0 and "low" not in ratio["interval"]
    assert "3 seed replicates cannot give a 95% interval (at least 6" in ratio["no_interval_because"]
    # the checker reports the claim INCONCLUSIVE with that reason, not NOT RUN
    from repro.claims import INCONCLUSIVE, evaluate, load_claims

    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(metrics, default=float))
    claims = load_claims(REPO / "workflow/claims/grokcap.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    (result,) = [r for r in evaluate(claims, path) if r.claim.id == "threshold_near_crossing"]
    assert result.status == INCONCLUSIVE and "3 seed replicates cannot give" in result.reason


def test_a_misspelt_run_setting_is_refused_with_its_path():
    data = seed_dataset(p=7, operation="add", train_fraction=0.5, seed=0)
    with pytest.raises(ValueError, match=r"grokcap\.small\.weight_decay_gruk .*did you mean 'weight_decay_grok'"):
        run_grokcap({"p": 7, "weight_decay_gruk": 1.0}, task="modular", width=8, replicate=0, data=data, seed=0,
                    where="grokcap.small")


def test_each_preset_key_is_a_run_setting_or_the_grids():
    """The training job gets the preset less the grid's keys, which must be exactly GrokConfig's
    settings (its width comes from the wildcard): a key in neither would fail every job."""
    schema = yaml.safe_load((REPO / "workflow/schemas/grokcap.schema.yaml").read_text())
    keys = set(schema["properties"])
    assert keys - set(GRID_KEYS) == set(known_keys(GrokConfig)) - {"width"}
    assert set(DATA_KEYS) <= keys - set(GRID_KEYS)
    config = workflow_config(REPO)["grokcap"]
    for scale in ("smoke", "small", "paper"):
        assert set(train_config(config[scale])) <= set(known_keys(GrokConfig))
