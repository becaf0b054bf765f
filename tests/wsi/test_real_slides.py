"""The real fixtures of ../shared/data/wsi: Aperio JPEG (with mpp) and Aperio JPEG 2000 (no mpp)."""

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
CFG = {"encoders": {"efficientnet_lite0": {"kind": "efficientnet_lite0"}}, "patch": {"max_patches": 6},
       "features": {"batch_size": 3}}


@pytest.fixture
def wsi_dir(request):
    """``../shared/data/wsi`` via the ``shared_dir`` fixture; a git worktree (whose ``..`` is not the
    workspace) may point ``REPRO_SHARED_DIR`` at the shared folder instead."""
    if os.environ.get("REPRO_SHARED_DIR"):
        shared = Path(os.environ["REPRO_SHARED_DIR"])
    else:
        shared = request.getfixturevalue("shared_dir")  # skips with its reason when ../shared is absent
    d = shared / "data" / "wsi"
    if not (d / CMU).is_file() or not (d / TCGA).is_file():
        pytest.skip(f"{d} lacks the real slide fixtures {CMU}, {TCGA}")
    return d


def test_reader_reports_resolution(wsi_dir, caplog):
    with open_slide(wsi_dir / CMU) as s:
        assert s.mpp == pytest.approx(0.499) and s.objective_power == 20 and s.level_count == 1
        assert s.level_for_mpp(1.0) == 0  # only level 0 exists: read there and resize
    with open_slide(wsi_dir / TCGA) as s:
        assert s.mpp is None and s.level_count == 2
        with pytest.raises(ValueError, match=f"{TCGA}.*no mpp"):
            s.require_mpp()
    with caplog.at_level(logging.WARNING), open_slide(wsi_dir / TCGA, default_mpp=0.25) as s:
        assert s.mpp == 0.25 and s.mpp_source == "default_mpp"
        assert s.level_for_mpp(0.5) == 1  # level 1 is a 2x downsample: exactly 0.5 um/px
    assert any("default_mpp" in r.getMessage() and TCGA in r.getMessage() for r in caplog.records)


def test_jpeg2000_tiles_decode(wsi_dir):
    with open_slide(wsi_dir / TCGA) as s:
        region = s.read_region((1800, 1500), 0, (256, 256))
    # The centre of the TCGA section is stained tissue, not white glass or a black decode failure.
    assert 60 < region.mean() < 235 and region.std() > 10


@pytest.mark.parametrize("name, default_mpp, min_tissue", [(CMU, None, 0.2), (TCGA, 0.5, 0.4)])
def test_tissue_patching_features(wsi_dir, tmp_path, name, default_mpp, min_tissue):
    cfg = {**CFG, "reader": {"default_mpp": default_mpp}}
    tm = tissue_step(wsi_dir / name, tmp_path / "t.npz", cfg)
    # Both sections are large pieces of tissue on glass (see the README); the CMU strip covers
    # about a third of its small region, the TCGA section about two thirds.
    assert min_tissue < tm.mask.mean() < 0.95
    info = patch_step(wsi_dir / name, tmp_path / "t.npz", tmp_path / "p.h5", tmp_path / "p.png", cfg)
    assert info["n_patches"] == 6
    features_step(wsi_dir / name, tmp_path / "p.h5", tmp_path / "f.h5", "efficientnet_lite0", cfg)
    feats, coords, attrs = read_features(tmp_path / "f.h5")
    assert feats.shape == (6, 1280) and np.isfinite(feats).all()
    assert np.abs(feats).sum(axis=1).min() > 0 and len(np.unique(feats.round(4), axis=0)) == 6
    assert attrs["mpp"] == pytest.approx(0.499 if default_mpp is None else default_mpp)


def test_physical_patch_size_without_mpp_is_a_clear_error(wsi_dir, tmp_path):
    tissue_step(wsi_dir / TCGA, tmp_path / "t.npz", CFG)  # segmentation alone uses its own fallback
    with pytest.raises(ValueError, match=f"{TCGA}.*no mpp"):
        patch_step(wsi_dir / TCGA, tmp_path / "t.npz", tmp_path / "p.h5", None, CFG)
    assert not (tmp_path / "p.h5").exists()
    with open_slide(wsi_dir / TCGA) as s, pytest.raises(ValueError, match="default_mpp"):
        make_grid(s, None, PatchConfig())
