"""The synthetic cohort: real pyramidal files OpenSlide reads, exact pixels, planted labels."""

from __future__ import annotations

import numpy as np
import openslide
import pytest

from repro.wsi.synth import (
    LYMPH,
    TUMOUR,
    SynthConfig,
    generate_cohort,
    generate_slide,
    layout_summary,
    plant_labels,
    plant_layout,
)


def test_openslide_opens_every_level_with_mpp(written_slide, small_cfg):
    SMALL = small_cfg
    path, rgb = written_slide
    osr = openslide.OpenSlide(str(path))
    assert osr.properties["openslide.vendor"] == "aperio"
    assert float(osr.properties["openslide.mpp-x"]) == pytest.approx(SMALL.mpp)
    assert float(osr.properties["openslide.mpp-y"]) == pytest.approx(SMALL.mpp)
    assert float(osr.properties["openslide.objective-power"]) == SMALL.objective_power
    # 1344 -> 672 -> 336: halved until the smaller side is <= min_level_size (512)
    assert osr.level_dimensions == ((1344, 1344), (672, 672), (336, 336))
    assert osr.level_downsamples == pytest.approx((1.0, 2.0, 4.0))
    for level, ds in enumerate(osr.level_downsamples):
        w, h = osr.level_dimensions[level]
        got = np.asarray(osr.read_region((0, 0), level, (w, h)))[..., :3].astype(float)
        k = int(ds)
        want = rgb.reshape(h, k, w, k, 3).mean(axis=(1, 3))
        # Each level is the 2x2 mean of the one above (rounded), then JPEG q90: a few grey levels.
        assert np.abs(got - want).mean() < 4.0, f"level {level}"


def test_level0_region_equals_written_pixels(written_slide):
    path, rgb = written_slide
    osr = openslide.OpenSlide(str(path))
    x, y, w, h = 301, 517, 400, 300  # crosses tile borders (256 px tiles)
    got = np.asarray(osr.read_region((x, y), 0, (w, h)))[..., :3].astype(float)
    want = rgb[y : y + h, x : x + w].astype(float)
    err = got - want
    # JPEG error: quality 90 with 4:2:0 chroma subsampling on sharp-edged nuclei measured a mean
    # absolute error of 3.6 grey levels (PSNR about 35 dB) here; the bounds leave room for codec
    # versions. An 8-pixel shift (a misplaced read) more than triples the error.
    assert np.abs(err).mean() < 6.0
    psnr = 10 * np.log10(255**2 / np.mean(err**2))
    assert psnr > 28.0
    shifted = rgb[y + 8 : y + h + 8, x : x + w].astype(float)
    assert np.abs(got - shifted).mean() > 3 * np.abs(err).mean()


def test_slides_are_deterministic_per_seed(tmp_path, small_cfg):
    SMALL = small_cfg
    a = generate_slide("S0001", 1, 5, SMALL, tmp_path / "a.tiff", tmp_path / "a.npz")
    b = generate_slide("S0001", 1, 5, SMALL, tmp_path / "b.tiff", tmp_path / "b.npz")
    generate_slide("S0001", 1, 6, SMALL, tmp_path / "c.tiff", tmp_path / "c.npz")
    assert (tmp_path / "a.tiff").read_bytes() == (tmp_path / "b.tiff").read_bytes()
    assert a == b
    ta, tc = np.load(tmp_path / "a.npz")["type_map"], np.load(tmp_path / "c.npz")["type_map"]
    assert not np.array_equal(ta, tc)


def test_cohort_manifest_matches_truth(tmp_path):
    cfg = SynthConfig(n_slides=4, size=672)
    df = generate_cohort(cfg, seed=1, slides_dir=tmp_path / "slides", truth_dir=tmp_path / "truth",
                         manifest_path=tmp_path / "manifest.csv")
    assert list(df.slide_id) == ["S0000", "S0001", "S0002", "S0003"]
    assert (df.survival_months > 0).all() and set(df.event) <= {0, 1}
    for _, row in df.iterrows():
        t = np.load(tmp_path / "truth" / f"{row.slide_id}.npz")
        assert int(t["subtype"]) == row.subtype
        s = layout_summary(t["type_map"], t["tumour_region"], cfg.map_downsample * cfg.mpp)
        assert s["interface_um"] == pytest.approx(row.interface_um, rel=1e-5)
        assert s["infiltration"] == pytest.approx(row.infiltration, rel=1e-5, abs=1e-6)


def test_interface_length_closed_form():
    tmap = np.zeros((6, 6), dtype=np.uint8)
    tmap[1:4, 1:4] = TUMOUR
    tmap[1:4, 4] = LYMPH  # 3 tumour-lymphocyte edges on the right side of the tumour square
    tmap[2, 2] = LYMPH  # an infiltrate inside: 4 more edges, 1 of 9 tumour-region pixels
    region = tmap > 0
    region[:, 4] = False
    s = layout_summary(tmap, region, um_per_map_px=8.0)
    assert s["interface_um"] == pytest.approx((3 + 4) * 8.0)
    assert s["infiltration"] == pytest.approx(1 / 9)


def test_labels_follow_the_interaction_not_only_composition():
    from lifelines.utils import concordance_index

    rows, lymph_frac = [], []
    for i in range(200):
        lay = plant_layout(np.random.default_rng([7, i]), 84)
        rows.append(layout_summary(lay["type_map"], lay["tumour_region"], 16.0))
        lymph_frac.append(lay["lymph_frac_drawn"])
    cfg = SynthConfig()
    lab = plant_labels(rows, cfg, np.random.default_rng(0))
    t, e = lab["survival_months"], lab["event"]
    # Expected censored fraction 0.3; binomial sd with 200 slides is 0.032: 3 sd = 0.1.
    assert abs((1 - e.mean()) - cfg.censor_rate) < 0.1
    c_truth = concordance_index(t, -lab["log_hazard"], e)
    c_interface = concordance_index(t, [r["interface_um"] for r in rows], e)
    c_composition = concordance_index(t, lymph_frac, e)
    # The C-index sd at n = 200 is about 0.025; the planted risk should be well above chance, and
    # the interface (interaction) more prognostic than the lymphocyte amount (composition).
    assert c_truth > 0.7
    assert c_interface > c_composition + 0.05
    # Gene expression is planted from lymphocyte density inside the tumour (effect 1.2, noise 0.5
    # on the standardised scale: r = 1.2 / sqrt(1.44 + 0.25) = 0.92 in expectation).
    r = np.corrcoef(lab["gene_expr"], [s["infiltration"] for s in rows])[0, 1]
    assert r > 0.8


def test_a_misspelt_cohort_setting_is_an_error_naming_its_path(tmp_path):
    with pytest.raises(ValueError, match=r"wsi\.<scale>\.synthetic\.n_slide\b.*did you mean 'n_slides'"):
        generate_cohort({"n_slide": 2, "size": 672}, seed=1, slides_dir=tmp_path, truth_dir=tmp_path,
                        manifest_path=tmp_path / "manifest.csv")
    with pytest.raises(ValueError, match="not a multiple of map_downsample"):
        SynthConfig(size=670)
    assert not list(tmp_path.iterdir())
