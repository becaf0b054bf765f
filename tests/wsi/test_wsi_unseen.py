"""Slides the stage has never seen: fluorescence scans, blank images, slides without mpp."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from repro.wsi.synth import SynthConfig, generate_slide, write_pyramid_tiff
from repro.wsi.patching import PatchConfig, make_grid
from repro.wsi.pipeline import load_tissue, patch_step, tissue_step
from repro.wsi.reader import open_slide
from repro.wsi.tissue import TissueConfig, _otsu, detect_modality, detect_tissue, segment_rgb

FLUO = SynthConfig(n_slides=3, size=1344, modality="fluorescence")


@pytest.fixture(scope="module")
def fluo_slides(tmp_path_factory):
    """Two DAPI-like synthetic slides (nuclei in blue on black glass): ``[(slide, truth), ...]``."""
    d = tmp_path_factory.mktemp("fluo")
    out = []
    for i in range(2):
        generate_slide(f"F{i}", i, 11, FLUO, d / f"F{i}.tiff", d / f"F{i}.npz")
        out.append((d / f"F{i}.tiff", d / f"F{i}.npz"))
    return out


def _truth(truth, tm=None, *, downsample=None, shape=None) -> np.ndarray:
    """The planted tissue at the resolution of ``tm`` (or of ``downsample`` and ``shape``)."""
    downsample, shape = (tm.downsample, tm.mask.shape) if tm is not None else (downsample, shape)
    z = np.load(truth)
    k = int(round(float(z["downsample"]) / downsample))
    return np.repeat(np.repeat(z["type_map"] > 0, k, axis=0), k, axis=1)[: shape[0], : shape[1]]


def test_fluorescence_slide_is_black_glass_with_blue_nuclei(fluo_slides):
    with open_slide(fluo_slides[0][0]) as s:
        img = s.read_level(s.level_count - 1).astype(int)
        ds = s.level_downsamples[-1]
    glass = ~_truth(fluo_slides[0][1], downsample=ds, shape=img.shape[:2])
    assert np.median(img[glass].max(axis=-1)) < 10  # the background is black
    assert img[..., 2].max() > 150 and img[..., :2].mean() < 3  # signal in the blue channel only


def test_auto_mode_recovers_planted_fluorescence_tissue(fluo_slides, caplog):
    for slide_path, truth in fluo_slides:
        with caplog.at_level(logging.INFO, logger="repro.wsi.tissue"), open_slide(slide_path) as slide:
            tm = detect_tissue(slide)
        want = _truth(truth, tm)
        assert tm.modality == "fluorescence"
        assert any(f"{slide_path.name}: modality auto -> fluorescence" in r.getMessage() for r in caplog.records)
        iou = (tm.mask & want).sum() / (tm.mask | want).sum()
        # the planted piece is a third to a half of the slide; misses are fat (no nuclei, dark)
        assert 0.2 < want.mean() < 0.65
        assert abs(tm.mask.mean() - want.mean()) < 0.05, (slide_path.name, tm.mask.mean(), want.mean())
        assert iou > 0.85, f"{slide_path.name}: IoU {iou:.3f}"


def test_saturation_on_a_fluorescence_slide_is_what_broke(fluo_slides):
    """The control: CLAM's saturation path, forced, does not find the planted tissue on black glass."""
    slide_path, truth = fluo_slides[0]
    with open_slide(slide_path) as slide:
        tm = detect_tissue(slide, {"modality": "brightfield"})
        fl = detect_tissue(slide, {"modality": "fluorescence"})
    want = _truth(truth, tm)
    iou_bf = (tm.mask & want).sum() / max((tm.mask | want).sum(), 1)
    iou_fl = (fl.mask & want).sum() / (fl.mask | want).sum()
    assert iou_bf < 0.7 < 0.85 < iou_fl


def test_fluorescence_slide_patches_and_pipeline(fluo_slides, tmp_path):
    slide_path, truth = fluo_slides[1]
    cfg = {"patch": {"max_patches": 0}}
    tissue_step(slide_path, tmp_path / "t.npz", cfg)
    assert load_tissue(tmp_path / "t.npz").modality == "fluorescence"
    info = patch_step(slide_path, tmp_path / "t.npz", tmp_path / "p.h5", None, cfg)
    assert info["n_patches"] > 5


@pytest.mark.parametrize("value, modality", [((255, 255, 255), "brightfield"), ((0, 0, 0), "fluorescence"),
                                             ((243, 243, 243), "brightfield"), ((0, 0, 1), "fluorescence")])
def test_constant_image_gives_empty_mask_and_a_message(value, modality, caplog):
    img = np.empty((120, 90, 3), dtype=np.uint8)
    img[...] = value
    assert detect_modality(img)[0] == modality
    for mode in ("auto", "brightfield", "fluorescence"):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="repro.wsi.tissue"):
            mask, thr = segment_rgb(img, 4.0, TissueConfig(modality=mode), name="slide blank.svs")
        assert mask.shape == (120, 90) and not mask.any() and np.isfinite(thr)
        assert any("blank.svs" in r.getMessage() and "constant" in r.getMessage() for r in caplog.records)


def test_otsu_of_a_constant_is_undefined_not_nan():
    assert _otsu(np.full(100, 7.0)) is None
    assert _otsu(np.r_[np.zeros(50), np.full(50, 200.0)]) == pytest.approx(0.5)  # between the two bins


@pytest.mark.parametrize("value", [255, 0])
def test_blank_slide_runs_through_with_an_empty_mask(tmp_path, value, caplog):
    path = tmp_path / f"blank{value}.tiff"
    write_pyramid_tiff(path, np.full((1024, 1024, 3), value, dtype=np.uint8), mpp=0.5, objective_power=20,
                       min_level_size=256)
    with caplog.at_level(logging.WARNING):
        tm = tissue_step(path, tmp_path / "t.npz", {})
        info = patch_step(path, tmp_path / "t.npz", tmp_path / "p.h5", None, {})
    assert not tm.mask.any() and info["n_patches"] == 0
    assert any(path.name in r.getMessage() and "no tissue" in r.getMessage() for r in caplog.records)


def test_vendor_background_colour_decides_before_the_image():
    bright = np.full((10, 10, 3), 240, dtype=np.uint8)
    modality, reason = detect_modality(bright, {"openslide.background-color": "000000"})
    assert modality == "fluorescence" and "openslide.background-color" in reason
    assert detect_modality(bright, {"openslide.background-color": "FFFFFF"})[0] == "brightfield"
    assert detect_modality(bright, {"openslide.background-color": "garbage"})[0] == "brightfield"


def test_unknown_modality_is_an_error_naming_the_key():
    with pytest.raises(ValueError, match=r"wsi\.<scale>\.tissue\.modality.*'dapi'"):
        TissueConfig(modality="dapi")


# ------------------------------------------------------------------------------------------ mpp

@pytest.fixture(scope="module")
def unscaled(tmp_path_factory):
    """A slide with an objective power but no mpp, and one with neither."""
    d = tmp_path_factory.mktemp("unscaled")
    rgb = np.full((1024, 1024, 3), 240, dtype=np.uint8)
    rgb[300:700, 200:800] = (200, 120, 180)
    write_pyramid_tiff(d / "mag40.tiff", rgb, mpp=None, objective_power=40, min_level_size=256)
    write_pyramid_tiff(d / "bare.tiff", rgb, mpp=None, objective_power=None, min_level_size=256)
    return d


def test_mpp_from_objective_power(unscaled, caplog):
    with caplog.at_level(logging.WARNING), open_slide(unscaled / "mag40.tiff") as s:
        assert s.objective_power == 40 and s.mpp == pytest.approx(0.25) and s.mpp_source == "objective-power"
        grid = make_grid(s, detect_tissue(s), PatchConfig(target_mpp=1.0, patch_size=32))
        assert grid.patch_size_level0 == 128  # 32 px at 1 um/px on a 0.25 um/px scan
    assert any("mag40.tiff" in r.getMessage() and "objective power 40" in r.getMessage() for r in caplog.records)


def test_no_mpp_no_objective_suggests_values(unscaled):
    with open_slide(unscaled / "bare.tiff") as s:
        assert s.mpp is None and s.objective_power is None
        with pytest.raises(ValueError, match=r"bare\.tiff.*wsi\.<scale>\.reader\.default_mpp.*0\.25 um/px for a 40x "
                                             r"scan, 0\.5 for 20x"):
            s.require_mpp()
    with open_slide(unscaled / "bare.tiff", default_mpp=0.5) as s:
        assert s.mpp == 0.5 and s.mpp_source == "default_mpp"
