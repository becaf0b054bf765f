"""The units of MDA-DD's claims: per-unit samples with matching ids, and seeds from the unit, not the method.

A claim compares two methods paired by unit (distillation seed k, unseen initialisation i). That is
only sound when (1) both sides' samples carry the same ids and (2) a unit's seeds are the same for
every method: the distillation and evaluation scripts are run here, as Snakemake would run them, for
several methods and units.
"""

import json
import runpy

import numpy as np
import pandas as pd
import pytest

from repro.claims import PASS, Claim, evaluate, load_claims
from repro.figures.lint import check
from repro.jobs import Job
from repro.methods.distill import DistilledSet, standardised
from repro.methods.distill.core import sample_real_pairs
from repro.methods.distill.features import SplitFeatures, read_features, write_features
from repro.papers.mdadd import figures
from repro.papers.mdadd.experiment import (RECALL_KEYS, UNIT, claim_intervals, cost_summary, cost_table, init_gap,
                                           summary_metrics, tidy_recalls)
from repro.papers.mdadd.grid import distill_params
from repro.seeding import job_seed
from tests.conftest import REPO
from tests.foundation.test_figure_claims import drawn_bars

BASELINES = ["random", "herding", "covmatch", "lors"]
SEEN = {"random": 0, "herding": 0, "covmatch": 1, "lors": 2, "mdadd_noqueue": 1, "mdadd": 2}
#: planted mean TR@1 (other recalls follow it): covmatch is the best baseline, MDA-DD beats it by 6.
LEVEL = {"random": 20.0, "herding": 22.0, "covmatch": 30.0, "lors": 27.0, "mdadd_noqueue": 31.0, "mdadd": 36.0}


def _records(seeds=6, inits=2, sizes=(10, 40), noise=0.3, rng_seed=0):
    """Evaluation records as the evaluate jobs write them, with a shared per-unit effect (paired noise)."""
    rng = np.random.default_rng(rng_seed)
    unit_effect = rng.normal(0, 5, size=(seeds, inits))  # what one student initialisation does to every method
    records = []
    for method, level in LEVEL.items():
        for n in sizes:
            for k in range(seeds):
                def rec(v):
                    return {m: float(v + (j - 3) * 0.5) for j, m in enumerate(RECALL_KEYS)}
                unseen = [rec(level + n / 10 + unit_effect[k, i] + rng.normal(0, noise)) for i in range(inits)]
                seen = [rec(level + n / 10 + 8.0 - (4.0 if method == "mdadd" else 0.0) + rng.normal(0, noise))
                        for _ in range(SEEN[method])]
                records.append({"method": method, "n_pairs": n, "distill_seed": k,
                                "recall": {"unseen": unseen, "seen": seen}})
    return records


def _cost(reps=6):
    rows = []
    for r in range(reps):
        for d in (64, 128, 256, 512):
            rows.append({"dim": d, "form": "socm", "rep": r, "time_s": 1e-3 * d * (1 + 0.05 * r), "memory_bytes": 10,
                         "rel_diff": 0.0})
            rows.append({"dim": d, "form": "naive", "rep": r, "time_s": 1e-6 * d * d * (1 + 0.05 * r),
                         "memory_bytes": 8 * d * d, "rel_diff": 0.0})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def metrics():
    return summary_metrics(tidy_recalls(_records()), _cost(), method="mdadd", ablation="mdadd_noqueue",
                           baselines=BASELINES)


def test_compared_samples_carry_the_same_unit_ids(metrics):
    ev = metrics["evidence"]
    ids = [f"s{k}i{i}" for k in range(6) for i in range(2)]
    pairs = [("mdadd_tr1_smallest", "best_baseline_tr1_smallest"), ("mdadd_ir1_smallest", "best_baseline_ir1_smallest"),
             ("mdadd_mr_smallest", "best_baseline_mr_largest"), ("gap_r1_mdadd", "gap_r1_noqueue")]
    for lhs, rhs in pairs:
        a = ev[lhs]
        b = ev[rhs].get("per_unit", ev[rhs])
        assert a["unit"] == b["unit"] == UNIT
        assert a["ids"] == b["ids"] == ids, (lhs, rhs)
        # the inits of one distillation seed share its distilled set: the checker resamples seeds
        assert a["cluster"] == b["cluster"] == [u.split("i")[0] for u in ids], (lhs, rhs)
    # every method's per-unit recall in the table block has the same ids too
    for method in LEVEL:
        assert metrics["recall"][method]["n10"]["TR@1"]["per_unit"]["ids"] == ids


def test_samples_agree_with_the_summary_numbers(metrics):
    ev, summary = metrics["evidence"], metrics["summary"]
    assert np.mean(ev["mdadd_tr1_smallest"]["values"]) == pytest.approx(summary["mdadd_tr1_smallest"])
    assert np.mean(ev["best_baseline_tr1_smallest"]["per_unit"]["values"]) == \
        pytest.approx(summary["best_baseline_tr1_smallest"])
    assert np.mean(ev["gap_r1_mdadd"]["values"]) == pytest.approx(summary["gap_r1_mdadd"])
    assert np.mean(ev["gap_r1_noqueue"]["values"]) == pytest.approx(summary["gap_r1_noqueue"])
    gaps = init_gap(tidy_recalls(_records())).groupby("method")["gap"].mean()
    assert summary["gap_r1_noqueue"] == pytest.approx(gaps["mdadd_noqueue"])
    assert set(metrics["init_gap_r1"]) == {"covmatch", "lors", "mdadd_noqueue", "mdadd"}  # methods with seen inits


def test_best_baseline_is_the_highest_mean(metrics):
    ev = metrics["evidence"]
    assert ev["best_baseline_tr1_smallest"]["method"] == "covmatch"
    assert ev["best_baseline_mr_largest"]["method"] == "covmatch"
    # planted: the queue lowers the seen-unseen gap by 4 points in every unit
    diff = np.subtract(ev["gap_r1_noqueue"]["values"], ev["gap_r1_mdadd"]["values"])
    assert diff.mean() == pytest.approx(4.0, abs=1.0)


def test_claims_decide_the_planted_effects_paired(metrics, tmp_path):
    """A 6-point gain under a 5-point init effect shared by all methods: PASS only because it is paired
    (6 distillation seeds, the fewest that decide: n counts seeds, not seed x init units)."""
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(metrics))
    claims = {c.id: c for c in load_claims(REPO / "workflow/claims/mdadd.yaml", REPO / "workflow/schemas/claims.schema.yaml")}
    results = {r.claim.id: r for r in evaluate(list(claims.values()), path)}
    for cid in ("tr1_beats_baselines_100", "ir1_beats_baselines_100", "queue_reduces_init_overfitting",
                "socm_cost_scales_better"):
        assert results[cid].status == PASS, (cid, results[cid].reason, results[cid].interval)
        assert results[cid].interval.n == 6
    unpaired = Claim(**{**claims["tr1_beats_baselines_100"].__dict__, "paired": False})
    (r,) = evaluate([unpaired], path)
    paired_width = results["tr1_beats_baselines_100"].interval.high - results["tr1_beats_baselines_100"].interval.low
    assert r.interval.high - r.interval.low > 2 * paired_width  # pairing removes the shared init effect


def test_figures_draw_the_interval_each_claim_is_decided_on(metrics, tmp_path):
    """Fig. 1 (c), Fig. 2 (b) and Fig. 3 (c) draw the claims' paired differences with the bounds evaluate judges,
    and their claimed relations, through the tables as the figures read them (Figs. 1-2 the aggregate's, Fig. 3
    its own from the timings); the per-method bars are sd and say so."""
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(metrics))
    claims = load_claims(REPO / "workflow/claims/mdadd.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    results = {r.claim.id: r for r in evaluate(claims, path)}
    claim_intervals(json.loads(path.read_text()), claims).to_csv(tmp_path / "claims.csv", index=False)
    table = pd.read_csv(tmp_path / "claims.csv", float_precision="round_trip")
    for row in table.itertuples():
        iv = results[row.claim].interval
        assert (row.estimate, row.low, row.high) == (iv.estimate, iv.low, iv.high), row.claim
    assert table.set_index("claim").loc["tr1_beats_baselines_100", "rhs_method"] == "covmatch"
    tidy = tidy_recalls(_records())
    t1, t2 = figures.fig1_table(tidy, table, claims), figures.fig2_table(tidy, table)
    t3 = figures.fig3_table(_cost(), claims)
    c1 = t1[t1["panel"] == "claim"]
    assert list(c1["claim"]) == list(figures.FIG1_CLAIMS)
    assert list(c1["metric"]) == ["TR@1", "IR@1", "mR", "mR"] and (c1["method"] == "mdadd - covmatch").all()
    assert list(c1["rhs_pairs"]) == [10, 10, 40, 40] and (c1["n_pairs"] == 10).all()
    (c2,) = t2[t2["claim"] == "queue_reduces_init_overfitting"].itertuples()
    (c3,) = t3[t3["panel"] == "claim"].itertuples()
    drawn = [*zip(c1["claim"], c1[["low", "high"]].to_numpy()), (c2.claim, (c2.low, c2.high)),
             (c3.claim, (c3.low, c3.high))]
    for claim, (low, high) in drawn:
        assert (low, high) == (results[claim].interval.low, results[claim].interval.high), claim
        assert np.isfinite([low, high]).all()
    assert (c3.op, c3.threshold, c3.status) == ("<", 0.0, results["socm_cost_scales_better"].status)
    assert c1.set_index("claim").loc["hundred_pairs_match_baselines_at_500_noninferior", "tol"] == 5.0
    fig = figures.fig1(t1)
    assert not check(fig)  # the figure lint, with the claims' intervals drawn
    np.testing.assert_allclose(drawn_bars(fig.axes[2])[:, 2:], c1[["low", "high"]].to_numpy(), rtol=1e-12)
    # the claimed relation beside each slot, dashed: 0, and the non-inferiority claim's edge, 5 points below
    levels = [seg[0][1] for c in fig.axes[2].collections for seg in c.get_segments()
              if len(seg) == 2 and seg[0][1] == seg[1][1]]
    assert levels == [0.0, 0.0, 0.0, -5.0] and list(c1["better"]) == ["higher"] * 4
    ticks = [t.get_text() for t in fig.axes[2].get_xticklabels()]
    assert ticks[0].endswith("(> 0)") and "at 40" in ticks[2] and ticks[3].endswith("margin 5)")
    fig = figures.fig2(t2)
    assert not check(fig)
    bars = drawn_bars(fig.axes[1])  # per size without a bar (no claim reads one size), then the claim's
    assert np.isnan(bars[:-1, 2:]).all()
    np.testing.assert_allclose(bars[-1, 2:], [c2.low, c2.high], rtol=1e-12)
    fig = figures.fig3(t3)
    assert not check(fig)
    np.testing.assert_allclose(drawn_bars(fig.axes[2])[:, 2:], [[c3.low, c3.high]], rtol=1e-12)
    recall = t1[t1["panel"] == "recall"]
    assert (recall["interval"] == figures.SD_BARS).all() and (recall["n"] == 12).all()
    # Fig. 2 (b): the per-size paired differences average to the claim's quantity (sizes weigh equally)
    per_size = t2[(t2["panel"] == "claim") & t2["n_pairs"].notna()]
    assert per_size["mean"].mean() == pytest.approx(c2.mean) and per_size["low"].isna().all()


def test_one_distillation_seed_draws_the_claims_difference_without_an_interval():
    """At smoke one distillation seed is one cluster: the claims have no interval, the figure draws the paired
    mean difference without a bar and its axis says why."""
    tidy = tidy_recalls(_records(seeds=1))
    m = summary_metrics(tidy, _cost(), method="mdadd", ablation="mdadd_noqueue", baselines=BASELINES)
    claims = load_claims(REPO / "workflow/claims/mdadd.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    table = claim_intervals(m, claims)
    t1 = figures.fig1_table(tidy, table)
    c1 = t1[t1["panel"] == "claim"]
    assert c1["low"].isna().all() and c1["high"].isna().all() and (c1["n_seeds"] == 1).all()
    ev = m["evidence"]
    diff = np.subtract(ev["mdadd_tr1_smallest"]["values"], ev["best_baseline_tr1_smallest"]["per_unit"]["values"])
    assert c1["mean"].iloc[0] == pytest.approx(diff.mean())
    fig = figures.fig1(t1)
    assert "no interval: 6 distillation seeds" in fig.axes[2].get_xlabel()
    assert np.isnan(drawn_bars(fig.axes[2])[:, 2:]).all() and not check(fig)


def test_cost_slopes_per_repeat_are_paired_and_match_the_minimum():
    cost = _cost()
    out = cost_summary(cost)
    s, n = out["per_repeat"]["slope_socm"], out["per_repeat"]["slope_naive"]
    assert s["unit"] == n["unit"] == "repeat" and s["ids"] == n["ids"] == [f"r{i}" for i in range(6)]
    assert np.allclose(s["values"], 1.0) and np.allclose(n["values"], 2.0)  # planted t ~ d and t ~ d^2
    assert out["slope_socm"] == pytest.approx(1.0) and out["slope_naive"] == pytest.approx(2.0)
    table = cost_table(cost).set_index(["dim", "form"])
    assert len(table) == 8
    mins = cost.groupby(["dim", "form"])["time_s"].min()
    np.testing.assert_allclose(table.loc[mins.index, "time_s"], mins)  # Fig. 3 plots the minimum over repeats


# ------------------------------------------------------------------------------------------------
# the pipeline scripts, run as Snakemake runs them
# ------------------------------------------------------------------------------------------------
STUDENT = {"embed_dim": 8, "image_hidden": 16, "projection": "asymmetric", "temperature": 0.1}
DISTILL = {"mdadd": {"iterations": 3, "lr": 0.02, "real_batch": 32, "queue_size": 2, "stagger": 2, "model_lr": 0.001},
           "covmatch": {}, "lors": {"iterations": 2, "rank": 2, "experts": 2, "expert_steps": 6, "checkpoint_every": 2,
                                    "syn_steps": 2, "expert_span": 1, "max_start": 2, "real_batch": 16}}
EVAL = {"unseen_inits": 2, "seen_inits": 2, "steps": 3, "full_steps": 3, "lr": 0.001, "batch_size": 16}


class _Smk:
    """The slice of Snakemake's ``snakemake`` script object that :class:`repro.jobs.Job` and the scripts read."""

    class _NS(dict):
        __getattr__ = dict.__getitem__

    def __init__(self, rule, wildcards, inputs, outputs, log, cfg):
        self.rule, self.threads, self.log = rule, 1, [str(log)]
        self.wildcards, self.input, self.output = self._NS(wildcards), self._NS(inputs), self._NS(outputs)
        self.params = self._NS(cfg=cfg)
        self.config = {"seed": 7, "scale": "smoke"}


def _run(script, smk):
    runpy.run_path(str(REPO / "workflow/scripts/mdadd" / script), init_globals={"snakemake": smk})


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """Distil and evaluate mdadd, mdadd_noqueue, random and lors for units k = 0, 1 through the scripts."""
    tmp = tmp_path_factory.mktemp("units")
    rng = np.random.default_rng(3)
    z = rng.normal(size=(80, 4))

    def split(n):
        owner = np.repeat(np.arange(n), 2)
        return SplitFeatures(image=(z[:n] @ rng.normal(size=(4, 12))).astype(np.float32),
                             text=(z[owner] @ rng.normal(size=(4, 6)) + 0.1 * rng.normal(size=(2 * n, 6))).astype(np.float32),
                             caption_image=owner)

    features = tmp / "features.h5"
    write_features(features, {"train": split(60), "test": split(20)}, dataset="synthetic", image_size=64)
    out = {}
    for method in ("mdadd", "mdadd_noqueue", "random", "lors"):
        for k in (0, 1):
            wc = {"dataset": "synthetic", "method": method, "n_pairs": "6", "seed": str(k)}
            npz, js = tmp / f"{method}_s{k}.npz", tmp / f"{method}_s{k}.json"
            _run("distill.py", _Smk("mdadd_distill", wc, {"features": str(features)}, {"distilled": str(npz)},
                                    tmp / f"{method}_{k}_d.log", distill_params(method, STUDENT, DISTILL)))
            _run("evaluate.py", _Smk("mdadd_evaluate", wc, {"features": str(features), "distilled": str(npz)},
                                     {"metrics": str(js)}, tmp / f"{method}_{k}_e.log",
                                     {"student": STUDENT, "eval": EVAL}))
            out[method, k] = (json.loads(js.read_text()), DistilledSet.load(npz),
                              (tmp / f"{method}_{k}_d.log").read_text())
    out["features"] = features
    return out


def test_one_unit_gets_the_same_seeds_for_every_method(evaluated):
    for k in (0, 1):
        unseen = {m: evaluated[m, k][0]["inits"]["unseen"] for m in ("mdadd", "mdadd_noqueue", "random", "lors")}
        assert len(set(map(tuple, unseen.values()))) == 1, unseen  # same students for every method
        assert evaluated["mdadd", k][0]["distill_seed"] == k
        # the queue's first student is the no-queue ablation's single student: the same distillation seed
        assert evaluated["mdadd", k][1].seen_seeds[0] == evaluated["mdadd_noqueue", k][1].seen_seeds[0]
        assert evaluated["mdadd_noqueue", k][0]["inits"]["seen"] == evaluated["mdadd", k][0]["inits"]["seen"][:1]
    # different units are different draws
    assert evaluated["mdadd", 0][0]["inits"]["unseen"] != evaluated["mdadd", 1][0]["inits"]["unseen"]
    assert evaluated["mdadd", 0][1].seen_seeds[0] != evaluated["mdadd", 1][1].seen_seeds[0]
    assert not np.array_equal(evaluated["random", 0][1].image, evaluated["random", 1][1].image)


def test_the_job_seed_differs_by_method_but_is_not_what_the_unit_uses(evaluated):
    """The jobs' own seeds (rule + wildcards) do differ by method: the scripts must not use them."""
    def job_seed_of(log):
        return int(log.split("seed=")[1].split()[0])

    assert job_seed_of(evaluated["mdadd", 0][2]) != job_seed_of(evaluated["mdadd_noqueue", 0][2])
    lors_seen = evaluated["lors", 0][1].seen_seeds
    assert lors_seen and lors_seen[0] not in evaluated["mdadd", 0][1].seen_seeds  # experts: their own stream


def test_random_subset_is_the_distillations_starting_point(evaluated):
    """Common random numbers: for the same unit, random picks the real pairs MDA-DD starts from."""
    seed = Job(rule="x", seed=0, scale="smoke", global_seed=7).seed_for("mdadd-distill", seed=0)  # 7: _Smk's seed
    (train,) = standardised(read_features(evaluated["features"])["train"])
    image, _ = sample_real_pairs(train, 6, np.random.default_rng(job_seed(seed, "init")))
    np.testing.assert_array_equal(evaluated["random", 0][1].image, image)
