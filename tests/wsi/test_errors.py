"""Bad slides fail loudly, name the file, and leave no output behind."""

from __future__ import annotations

import shutil

import pytest

from repro.wsi.pipeline import features_step, patch_step, tissue_step
from repro.wsi.reader import open_slide

CFG = {"encoders": {"efficientnet_lite0": {"kind": "efficientnet_lite0"}}, "patch": {"max_patches": 4}}


def _run_all(slide, tmp_path):
    tissue_step(slide, tmp_path / "t.npz", CFG)
    patch_step(slide, tmp_path / "t.npz", tmp_path / "p.h5", tmp_path / "p.png", CFG)
    features_step(slide, tmp_path / "p.h5", tmp_path / "f.h5", "efficientnet_lite0", CFG)


def _outputs(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".npz", ".h5", ".png") or ".tmp" in p.name)


def test_missing_slide(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.svs"):
        open_slide(tmp_path / "nothere.svs")
    with pytest.raises(FileNotFoundError, match="nothere.svs"):
        tissue_step(tmp_path / "nothere.svs", tmp_path / "t.npz", CFG)
    assert _outputs(tmp_path) == []


def test_unsupported_file(tmp_path):
    bad = tmp_path / "notes.svs"
    bad.write_text("this is not a slide\n" * 100)
    with pytest.raises(OSError, match="notes.svs"):
        _run_all(bad, tmp_path)
    assert _outputs(tmp_path) == []


@pytest.mark.parametrize("keep", [0.02, 0.5, 0.9])
def test_truncated_slide(synth_slides, tmp_path, keep):
    """A slide cut short (an interrupted copy) is an OSError naming it, wherever the cut falls."""
    src = synth_slides[0][0]
    data = src.read_bytes()
    cut = tmp_path / "cut.tiff"
    cut.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(OSError, match="cut.tiff"):
        _run_all(cut, tmp_path)
    # whichever step failed wrote nothing; no HDF5 (complete or partial) exists
    assert not (tmp_path / "f.h5").exists()
    assert not any(".tmp" in p.name for p in tmp_path.iterdir())


def test_good_copy_runs(synth_slides, tmp_path):
    """The control for the truncation test: the same steps on an intact copy succeed."""
    shutil.copy(synth_slides[0][0], tmp_path / "whole.tiff")
    _run_all(tmp_path / "whole.tiff", tmp_path)
    assert (tmp_path / "f.h5").exists()


def test_truncation_is_caught_at_open(synth_slides, tmp_path):
    """Cutting only the last bytes (tiles no step may read) is still caught when the slide opens."""
    data = synth_slides[1][0].read_bytes()
    cut = tmp_path / "tail.tiff"
    cut.write_bytes(data[:-100])
    with pytest.raises(OSError, match="tail.tiff.*truncated"):
        open_slide(cut)
