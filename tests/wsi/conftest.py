"""Fixtures of the WSI tests: a few small synthetic slides, drawn once per session."""

from __future__ import annotations

import numpy as np
import pytest

from repro.wsi.synth import SynthConfig, generate_slide, plant_layout, render_slide, write_pyramid_tiff

#: small slides keep the tests fast: 1344 px = 672 um at 0.5 um/px, 3 pyramid levels
SMALL = SynthConfig(n_slides=3, size=1344)


@pytest.fixture(scope="session")
def small_cfg() -> SynthConfig:
    return SMALL


@pytest.fixture(scope="session")
def synth_slides(tmp_path_factory):
    """Three synthetic slides: ``[(slide_path, truth_path, summary), ...]``."""
    d = tmp_path_factory.mktemp("synth")
    out = []
    for i in range(3):
        sid = f"S{i:04d}"
        summary = generate_slide(sid, i, 11, SMALL, d / f"{sid}.tiff", d / f"{sid}.npz")
        out.append((d / f"{sid}.tiff", d / f"{sid}.npz", summary))
    return out


@pytest.fixture(scope="session")
def written_slide(tmp_path_factory):
    """A slide and the exact level-0 pixels that were written into it: ``(path, rgb)``."""
    d = tmp_path_factory.mktemp("written")
    rng = np.random.default_rng(3)
    lay = plant_layout(rng, SMALL.size // SMALL.map_downsample)
    rgb = render_slide(rng, lay["type_map"], lay["subtype"], SMALL)
    path = d / "written.tiff"
    write_pyramid_tiff(path, rgb, mpp=SMALL.mpp, objective_power=SMALL.objective_power, tile=SMALL.tile,
                       quality=SMALL.jpeg_quality, min_level_size=SMALL.min_level_size, name="written")
    return path, rgb
