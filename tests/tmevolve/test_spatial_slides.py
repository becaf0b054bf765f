"""The spatial cohort as whole-slide images, read back by the WSI stage, and the encoder probe.

The slides must carry exactly the cohort the bag generator plants (same layouts, same labels), the
WSI stage's grid must fall on the planted patches, and the probe must read classes that are there.
"""

import numpy as np
import pandas as pd
import pytest

from repro.papers.tmevolve.synth import FAT, TISSUE_TYPES, generate_spatial_cohort, write_spatial_slides
from tests.conftest import REPO

CFG = {"n_slides": 2, "blocks": 4}
WSI = {  # the WSI stage's small preset (workflow/presets/wsi.yaml)
    "reader": {"default_mpp": None},
    "tissue": {"modality": "auto", "seg_mpp": 4.0, "median": 7, "threshold": "otsu", "min_saturation": 8,
               "min_intensity": 8, "close_um": 16.0, "min_tissue_area_um2": 10000.0, "max_hole_area_um2": 4000.0},
    "patch": {"target_mpp": 1.0, "patch_size": 112, "min_tissue_fraction": 0.5, "max_patches": 0},
    "features": {"batch_size": 16, "prefetch": False},
    "encoders": {"efficientnet_lite0": {"kind": "efficientnet_lite0"}},
}


@pytest.fixture(scope="module")
def slides(tmp_path_factory):
    root = tmp_path_factory.mktemp("spatial")
    man = write_spatial_slides(CFG, seed=11, patch_um=112.0, slides_dir=root / "slides", truth_dir=root / "truth",
                               manifest_path=root / "manifest.csv")
    return root, man


def test_slides_carry_the_layouts_and_labels_of_the_bag_generator(slides):
    root, man = slides
    bags, planted = generate_spatial_cohort(CFG, seed=11)
    pd.testing.assert_frame_equal(man[planted.columns], planted)       # same labels, same planted summaries
    assert pd.read_csv(root / "manifest.csv", dtype={"slide_id": str}).slide_id.tolist() == planted.slide_id.tolist()
    for sid, bag in bags.items():
        truth = np.load(root / "truth" / f"{sid}.npz")
        np.testing.assert_array_equal(truth["patch_type_map"], bag.type_map)
        assert int(truth["patch_size_level0"]) == 112                   # 112 um at 1.0 um/px


def test_the_wsi_stage_finds_the_planted_patches_with_their_types(slides, tmp_path):
    from repro.wsi.bags import load_bags, read_bag_attrs
    from repro.wsi.pipeline import extract_cohort

    root, man = slides
    ids = man.slide_id.tolist()
    summary = extract_cohort({s: root / "slides" / f"{s}.tiff" for s in ids}, tmp_path / "bags.h5", WSI,
                             "efficientnet_lite0", cohort="spatial", truth={s: root / "truth" / f"{s}.npz" for s in ids})
    assert summary["n_slides"] == 2
    assert read_bag_attrs(tmp_path / "bags.h5")["tissue_types"][1:] == list(TISSUE_TYPES)   # 0 is glass
    for sid, bag in load_bags(tmp_path / "bags.h5").items():
        truth = np.load(root / "truth" / f"{sid}.npz")
        planted, margin = truth["patch_type_map"], int(truth["margin"])
        gx, gy = (bag.coords // 112 - margin).T
        assert (gx >= 0).all() and (gy >= 0).all()                     # no patch on the glass margin
        # each patch's ground truth is the planted type of its cell (the synth's ids are ours + 1)
        np.testing.assert_array_equal(bag.patch_types, planted[gy, gx] + 1)
        # every planted patch but fat (white, like glass to a tissue detector) is found
        found = np.zeros_like(planted, bool)
        found[gy, gx] = True
        assert found[planted != FAT].all()
        assert bag.features.shape[1] == 1280 and np.isfinite(bag.features).all()


def _cohort(features_of):
    """A CohortData of the bag generator's spatial cohort with features ``features_of(types)``."""
    from repro.methods.mil import SlideBag
    from repro.methods.mil_train import CohortData

    bags, man = generate_spatial_cohort({"n_slides": 30, "blocks": 4}, seed=2)
    slide_bags = [SlideBag.from_arrays(features_of(b.patch_types), b.coords, 224, patch_types=b.patch_types, slide_id=s)
                  for s, b in bags.items()]
    return CohortData(slide_bags, man, list(TISSUE_TYPES))


def test_a_probe_on_features_that_name_the_type_reads_every_class_and_the_oracles_do_not_change():
    from repro.papers.tmevolve.experiment import encoder_probe, make_repeated_folds

    data = _cohort(lambda t: np.eye(len(TISSUE_TYPES), dtype=np.float32)[t])    # one-hot: the type, exactly
    folds = make_repeated_folds(data.table, 3, 1, seed=0)
    seeds = {(0, f): f for f in range(3)}
    out = encoder_probe(data, folds, seeds, ["survival"])
    assert out["accuracy"]["values"] == [1.0, 1.0, 1.0]
    assert all(v == 1.0 for s in out["per_class"].values() for v in s["values"])
    assert max(out["majority"]["values"]) < 1.0
    for oracle in ("oracle_composition", "oracle_arrangement"):   # the classes read are the true ones
        assert out["survival"][f"{oracle}_predicted"]["folds"] == out["survival"][oracle]["folds"]


def test_a_probe_on_features_without_the_type_sits_at_the_majority_share():
    from repro.papers.tmevolve.experiment import encoder_probe, make_repeated_folds

    rng = np.random.default_rng(0)
    data = _cohort(lambda t: rng.normal(size=(len(t), 4)).astype(np.float32))   # noise: no class information
    folds = make_repeated_folds(data.table, 3, 1, seed=0)
    out = encoder_probe(data, folds, {(0, f): f for f in range(3)}, [])
    # a probe of pure noise predicts (about) the majority class: its accuracy cannot beat the majority share
    # by more than sampling noise (~2,000 test patches per fold: sd of an accuracy about 0.011)
    assert np.mean(out["accuracy"]["values"]) < np.mean(out["majority"]["values"]) + 0.03


def test_survival_points_are_paired_differences_from_the_best_baseline():
    from repro.claims import load_claims, sample
    from repro.papers.tmevolve.experiment import survival_points

    claims = load_claims(REPO / "workflow/claims/tmevolve.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    ids = [f"u{i}" for i in range(8)]
    mean = np.full(8, 0.60)
    abmil = np.array([0.61, 0.62, 0.60, 0.63, 0.62, 0.61, 0.64, 0.62])   # the best baseline (mean 0.61875)
    ours = abmil + np.array([0.01, 0.03, 0.02, 0.02, 0.01, 0.03, 0.02, 0.02])

    def summary(v):
        return {"mean": float(np.mean(v)), "sd": float(np.std(v, ddof=1)), "folds": list(v),
                "per_unit": sample(v, ids, "fold_seed", cv=0.25)}

    pts = survival_points({"mean": summary(mean), "abmil": summary(abmil), "tmevolve": summary(ours)},
                          ["mean", "abmil", "tmevolve"], claims).set_index("method")
    assert (pts.reference == "abmil").all()
    assert pts.loc["tmevolve", "diff"] == pytest.approx(0.02)               # worked by hand: mean of the increments
    assert pts.loc["mean", "diff"] == pytest.approx(0.60 - 0.61875)
    assert np.isnan(pts.loc["abmil", "low"]) and pts.loc["abmil", "diff"] == 0.0
    lo, hi = pts.loc["tmevolve", ["low", "high"]]
    assert lo < 0.02 < hi and lo > 0.0                                       # increments all positive
    assert pts.loc["tmevolve", "claim"] == "survival_beats_best_baseline" and pts.loc["mean", "claim"] == ""
    # fewer units than a 95% interval needs: the point without an interval
    few = {m: {**s, "per_unit": sample(s["folds"][:4], ids[:4], "fold_seed")}
           for m, s in {"abmil": summary(abmil), "tmevolve": summary(ours)}.items()}
    assert survival_points(few, ["abmil", "tmevolve"], claims).low.isna().all()


def test_fig3_draws_the_interval_the_survival_verdict_reads(tmp_path):
    """The comparison's TMEvolve row is the claim's interval as evaluate() judges it on the metrics.json the
    aggregate writes from the same runs (and every other row the same check on that run); the table's n,
    level and what each bar is come with it."""
    import json

    from repro.claims import claim_interval, evaluate, load_claims, sample
    from repro.papers.tmevolve.experiment import aggregate_metrics, survival_points

    claims = load_claims(REPO / "workflow/claims/tmevolve.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    rng = np.random.default_rng(4)
    ids = [f"r{r}_fold{f}_s{r}" for r in range(2) for f in range(4)]
    methods = ["mean", "abmil", "dsmil", "tmevolve", "shuffled_tmevolve", "oracle_true"]
    levels = {"mean": 0.55, "abmil": 0.6, "dsmil": 0.58, "tmevolve": 0.62, "shuffled_tmevolve": 0.6, "oracle_true": 0.8}
    summaries = {}
    for m, level in levels.items():
        v = level + rng.normal(0, 0.02, len(ids))
        summaries[m] = {"mean": float(v.mean()), "sd": float(v.std(ddof=1)),
                        "per_unit": sample(v, ids, "fold_seed", cv=0.25)}
    metrics = aggregate_metrics({"survival": summaries}, {"methods": methods})
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(metrics))
    (verdict,) = [r for r in evaluate(claims, path) if r.claim.id == "survival_beats_best_baseline"]
    pts = survival_points(summaries, methods, claims).set_index("method")
    iv = verdict.interval
    assert tuple(pts.loc["tmevolve", ["diff", "low", "high", "n", "level"]]) == (iv.estimate, iv.low, iv.high, iv.n,
                                                                                  iv.level)
    assert pts.loc["tmevolve", "status"] == verdict.status
    claim = next(c for c in claims if c.id == "survival_beats_best_baseline")
    on_disk = json.loads(path.read_text())
    for m in ("mean", "dsmil", "shuffled_tmevolve", "oracle_true"):
        other, _ = claim_interval(claim, on_disk, f"survival.{m}")
        assert tuple(pts.loc[m, ["diff", "low", "high"]]) == (other.estimate, other.low, other.high), m
        assert pts.loc[m, "interval"].startswith("survival_beats_best_baseline's rule, no claim: 95% bootstrap")
    assert pts.loc["abmil", "interval"] == "none: the reference itself"
