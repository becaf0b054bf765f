"""The spatial cohort (version 2): composition drawn first, arrangement second, labels from patch adjacency.

The claim under test needs a cohort where only a model of the arrangement can predict the labels:
a model on the true patch-type histogram must sit near chance, an adjacency-aware one far above.
Tolerances: with 300 slides and ~30 % censoring, the sd of one out-of-fold C-index is about 0.03,
so "near chance" is C < 0.58 (0.5 + 2.5 sd) and "far above" is at least 0.12 higher.
"""

import numpy as np
import pytest
from scipy import ndimage

from repro.metrics.survival import concordance_index
from repro.papers.tmevolve.synth import (LYMPH, SPATIAL_PHENOTYPES, TISSUE_TYPES, TUMOUR, SpatialConfig,
                                         generate_spatial_cohort, spatial_layout, spatial_summary)

HIST = [f"frac_{n}" for n in TISSUE_TYPES[:-1]]   # the last fraction is 1 - the others


@pytest.fixture(scope="module")
def cohort():
    return generate_spatial_cohort({"n_slides": 300}, seed=5)


def _oof_cox(man, cols, seed=0):
    """Out-of-fold partial hazards of a ridge-penalised Cox model (5 folds)."""
    from lifelines import CoxPHFitter
    from sklearn.model_selection import KFold

    score = np.zeros(len(man))
    for tr, te in KFold(5, shuffle=True, random_state=seed).split(man):
        fit = CoxPHFitter(penalizer=0.1).fit(man.iloc[tr][cols + ["survival_months", "event"]], "survival_months", "event")
        score[te] = fit.predict_log_partial_hazard(man.iloc[te][cols]).to_numpy()
    return concordance_index(man.event.to_numpy(), man.survival_months.to_numpy(), score)


def test_histogram_model_is_near_chance_and_adjacency_oracle_far_above(cohort):
    _, man = cohort
    c_hist = _oof_cox(man, HIST)
    c_adj = _oof_cox(man, ["contact"])
    assert c_hist < 0.58, c_hist
    assert c_adj > c_hist + 0.12, (c_adj, c_hist)
    # the true hazard is the ceiling; the adjacency oracle reaches it (it reads the planted quantity)
    c_true = concordance_index(man.event.to_numpy(), man.survival_months.to_numpy(), man.log_hazard.to_numpy())
    assert abs(c_adj - c_true) < 0.03


def test_composition_does_not_tell_the_phenotype(cohort):
    _, man = cohort
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score

    acc_hist = cross_val_score(LogisticRegression(max_iter=2000), man[HIST], man.subtype, cv=5).mean()
    acc_adj = cross_val_score(LogisticRegression(max_iter=2000), man[HIST + ["contact"]], man.subtype, cv=5).mean()
    assert acc_hist < 1 / 3 + 0.12          # chance is 1/3 (three phenotypes, uniform)
    assert acc_adj > acc_hist + 0.25


def test_compartments_are_at_least_two_patches_wide_and_phenotypes_place_the_lymphocytes():
    cfg = SpatialConfig(n_slides=2)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        lay = spatial_layout(rng, cfg)
        t = lay["type_map"]
        blocks = t.reshape(cfg.blocks, cfg.block, cfg.blocks, cfg.block)
        assert (blocks == blocks[:, :1, :, :1]).all()      # every block x block compartment is one type
        s = spatial_summary(t)
        name = SPATIAL_PHENOTYPES[lay["phenotype"]]
        seen.add(name)
        if name == "excluded":
            assert s["contact"] == 0 and s["tl_edges"] == 0
        if name == "inflamed":
            assert s["contact"] > 0
        tumour = t == TUMOUR
        lab, n = ndimage.label(tumour, structure=np.ones((3, 3)))
        assert n == 1                                       # one connected tumour
        assert (t == LYMPH).any()
    assert seen == set(SPATIAL_PHENOTYPES)


def test_a_slide_depends_only_on_the_seed_and_its_index():
    b1, m1 = generate_spatial_cohort({"n_slides": 4}, seed=9)
    b2, m2 = generate_spatial_cohort({"n_slides": 6}, seed=9)
    for sid in b1:
        np.testing.assert_array_equal(b1[sid].type_map, b2[sid].type_map)
        np.testing.assert_array_equal(b1[sid].features, b2[sid].features)
    b3, _ = generate_spatial_cohort({"n_slides": 4}, seed=10)
    assert any(not np.array_equal(b1[s].type_map, b3[s].type_map) for s in b1)


def test_compartments_narrower_than_two_patches_are_an_error():
    with pytest.raises(ValueError, match="block must be >= 2"):
        SpatialConfig(block=1)
