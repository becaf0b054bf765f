"""The real fixtures: Aperio JPEG with mpp (CMU, CC0, shipped in tests/data/wsi) and Aperio JPEG 2000
without mpp (TCGA, no stated licence, only among the workspace's shared fixtures)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest

from repro.wsi.patching import PatchConfig, make_grid
from repro.wsi.pipeline import features_step, patch_step, tissue_step
from repro.wsi.reader import open_slide
from repro.wsi.features import read_features

CMU = "cmu-1-small-region.svs"
TCGA = "tcga-cr-7395-01a-01-ts1.svs"
SHIPPED = Path(__file__).resolve().parents[1] / "data" / "wsi"  # tests/data/wsi: slides the repository ships
CFG = {"encoders": {"efficientnet_lite0": {"kind": "efficientnet_lite0"}}, "patch": {"max_patches": 6},
       "features": {"batch_size": 3}}


def _find(name: str, request) -> Path:
    """``name`` from the repository's test data first, else from the workspace's shared fixtures
    (``data/wsi`` of ``shared_dir``, or of ``$REPRO_SHARED_DIR`` for a git worktree whose ``..`` is not
    the workspace); skips with the reason when neither has it."""
    if (SHIPPED / name).is_file():
        return SHIPPED / name
    if os.environ.get("REPRO_SHARED_DIR"):
        shared = Path(os.environ["REPRO_SHARED_DIR"])
    else:
        shared = request.getfixturevalue("shared_dir")  # skips, saying why, without the workspace's shared fixtures
    if not (shared / "data" / "wsi" / name).is_file():
        pytest.skip(f"{shared / 'data' / 'wsi'} lacks the real slide fixture {name}")
    return shared / "data" / "wsi" / name


@pytest.fixture
def cmu(request) -> Path:
    return _find(CMU, request)


@pytest.fixture
def tcga(request) -> Path:
    return _find(TCGA, request)


def test_cmu_is_shipped_with_the_repository():
    """The CC0 slide runs in every clone; the unlicensed one must never be committed."""
    assert (SHIPPED / CMU).is_file() and (SHIPPED / "README.md").is_file()
    assert not (SHIPPED / TCGA).exists()


def test_cmu_mpp_matches_its_objective_power(cmu):
    """The 10 um / objective convention the reader falls back on, checked on a slide recording both."""
    from repro.wsi.reader import mpp_from_objective

    with open_slide(cmu) as s:
        assert s.mpp_source == "openslide.mpp" and s.objective_power == 20
        assert mpp_from_objective(s.objective_power) == pytest.approx(s.mpp, rel=0.01)  # 0.5 vs 0.499


def test_reader_reports_resolution(cmu, tcga, caplog):
    with open_slide(cmu) as s:
        assert s.mpp == pytest.approx(0.499) and s.objective_power == 20 and s.level_count == 1
        assert s.level_for_mpp(1.0) == 0  # only level 0 exists: read there and resize
    with open_slide(tcga) as s:
        assert s.mpp is None and s.level_count == 2
        with pytest.raises(ValueError, match=f"{TCGA}.*no mpp"):
            s.require_mpp()
    with caplog.at_level(logging.WARNING), open_slide(tcga, default_mpp=0.25) as s:
        assert s.mpp == 0.25 and s.mpp_source == "default_mpp"
        assert s.level_for_mpp(0.5) == 1  # level 1 is a 2x downsample: exactly 0.5 um/px
    assert any("default_mpp" in r.getMessage() and TCGA in r.getMessage() for r in caplog.records)


def test_jpeg2000_tiles_decode(tcga):
    with open_slide(tcga) as s:
        region = s.read_region((1800, 1500), 0, (256, 256))
    # The centre of the TCGA section is stained tissue, not white glass or a black decode failure.
    assert 60 < region.mean() < 235 and region.std() > 10


@pytest.mark.parametrize("name, default_mpp, min_tissue", [(CMU, None, 0.2), (TCGA, 0.5, 0.4)])
def test_tissue_patching_features(request, tmp_path, name, default_mpp, min_tissue, caplog):
    slide = _find(name, request)
    cfg = {**CFG, "reader": {"default_mpp": default_mpp}}
    with caplog.at_level(logging.INFO, logger="repro.wsi.tissue"):
        tm = tissue_step(slide, tmp_path / "t.npz", cfg)
    # default settings (modality auto) see both H&E slides as brightfield, and say so
    assert tm.modality == "brightfield"
    assert any(f"{name}: modality auto -> brightfield" in r.getMessage() for r in caplog.records)
    # Both sections are large pieces of tissue on glass (see the README); the CMU strip covers
    # about a third of its small region, the TCGA section about two thirds.
    assert min_tissue < tm.mask.mean() < 0.95
    info = patch_step(slide, tmp_path / "t.npz", tmp_path / "p.h5", tmp_path / "p.png", cfg)
    assert info["n_patches"] == 6
    features_step(slide, tmp_path / "p.h5", tmp_path / "f.h5", "efficientnet_lite0", cfg)
    feats, coords, attrs = read_features(tmp_path / "f.h5")
    assert feats.shape == (6, 1280) and np.isfinite(feats).all()
    assert np.abs(feats).sum(axis=1).min() > 0 and len(np.unique(feats.round(4), axis=0)) == 6
    assert attrs["mpp"] == pytest.approx(0.499 if default_mpp is None else default_mpp)


def test_physical_patch_size_without_mpp_is_a_clear_error(tcga, tmp_path):
    tissue_step(tcga, tmp_path / "t.npz", CFG)  # segmentation alone uses its own fallback
    with pytest.raises(ValueError, match=f"{TCGA}.*no mpp"):
        patch_step(tcga, tmp_path / "t.npz", tmp_path / "p.h5", None, CFG)
    assert not (tmp_path / "p.h5").exists()
    with open_slide(tcga) as s, pytest.raises(ValueError, match=r"default_mpp.*0\.25 um/px for a 40x.*0\.5 for 20x"):
        make_grid(s, None, PatchConfig())
