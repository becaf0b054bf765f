"""The smoke DAG of the WSI stage builds the cohort's bags from an empty folder."""

from __future__ import annotations

import h5py
import numpy as np
import pandas as pd
import pytest
from conftest import run_snakemake

from repro.wsi.bags import load_bags, read_bag_attrs

BAGS = "results/wsi/synthetic/bags/efficientnet_lite0.h5"


@pytest.mark.slow
def test_smoke_dag_builds_bags(tmp_path, workflow_run):
    workflow_run(tmp_path, BAGS)
    manifest = pd.read_csv(tmp_path / "results/wsi/synthetic/manifest.csv")
    bags = load_bags(tmp_path / BAGS)
    attrs = read_bag_attrs(tmp_path / BAGS)
    ids = [f"S{i:04d}" for i in range(10)]  # the smoke preset: 10 slides
    assert list(manifest.slide_id) == ids and list(bags) == ids
    assert (manifest.survival_months > 0).all() and set(manifest.event) <= {0, 1}
    assert attrs["encoder"] == "efficientnet_lite0" and attrs["dim"] == 1280 and attrs["cohort"] == "synthetic"
    assert attrs["patch_size_level0"] == 224 and attrs["tissue_types"][0] == "background"
    step = attrs["patch_size_level0"]
    for sid, bag in bags.items():
        assert len(bag) > 0 and np.isfinite(bag.features).all()
        assert (bag.coords % step == 0).all()
    types = np.concatenate([b.patch_types for b in bags.values()])
    # Patches sit on planted tissue: only a patch at the tissue edge may be mostly glass (the mask
    # is detected, not planted; white fat at an edge looks like glass).
    assert (types >= 1).mean() > 0.95
    for sid, bag in bags.items():
        with h5py.File(tmp_path / f"results/wsi/synthetic/patches/{sid}.h5") as f:
            np.testing.assert_array_equal(f["coords"][()], bag.coords)
        assert (tmp_path / f"results/wsi/synthetic/previews/{sid}.png").is_file()
        assert (tmp_path / f"benchmarks/wsi/features/synthetic/efficientnet_lite0/{sid}.tsv").is_file()
    # Coordinates, pixels, features and ground truth line up: pretrained features tell planted
    # tumour from stroma patches (leave-one-slide-out, so no slide is in its own training set).
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import LeaveOneGroupOut, cross_val_score

    X = np.concatenate([b.features for b in bags.values()])
    y = np.concatenate([b.patch_types for b in bags.values()])
    g = np.concatenate([[k] * len(b) for k, b in enumerate(bags.values())])
    keep = np.isin(y, [1, 2])  # tumour, stroma: the two types most patches of a smoke cohort have
    assert keep.sum() > 60
    acc = cross_val_score(LogisticRegression(max_iter=2000, C=0.1), X[keep], y[keep] == 1, groups=g[keep],
                          cv=LeaveOneGroupOut()).mean()
    majority = max((y[keep] == 1).mean(), (y[keep] == 2).mean())
    # About 100 patches: the accuracy's sd is about 0.05; tumour and stroma differ grossly in colour
    # and nuclei, so a working chain sits far above the majority rate.
    assert acc > max(0.8, majority + 0.1)


@pytest.mark.parametrize("overlay, says", [
    ({"source": "remote"}, "wsi.source chooses nothing"),
    ({"small": {"cohort": "mine"}}, "wsi.small"),
])
def test_keys_that_choose_nothing_are_refused_before_anything_runs(tmp_path, overlay, says):
    proc = run_snakemake(tmp_path, "-n", BAGS, config={"wsi": overlay}, check=False)
    assert proc.returncode != 0 and says in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()
