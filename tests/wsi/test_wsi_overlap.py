"""Feature extraction with slide reading overlapped with the encoder: same bytes as the
serial path, reader errors surface, torch threads follow the job."""

from __future__ import annotations

import numpy as np
import pytest

from repro.wsi.features import _prefetched, create_encoder, extract_features
from repro.wsi.patching import PatchConfig, make_grid
from repro.wsi.reader import open_slide
from repro.wsi.tissue import detect_tissue


def test_overlapped_reading_gives_byte_identical_features(synth_slides, tmp_path):
    enc = create_encoder("tiny", {"kind": "timm", "model": "resnet10t"}, seed=1)
    with open_slide(synth_slides[0][0]) as slide:
        grid = make_grid(slide, detect_tissue(slide), PatchConfig(max_patches=11, patch_size=64))
        attrs = grid.attrs()
        serial = extract_features(slide, grid.coords, attrs, enc, batch_size=4, prefetch=False, threads=1)
        for depth in (1, 3):
            over = extract_features(slide, grid.coords, attrs, enc, batch_size=4, prefetch=True, queue_depth=depth,
                                    threads=1)
            assert over.tobytes() == serial.tobytes()
    assert serial.shape == (11, enc.dim) and np.abs(serial).sum(axis=1).min() > 0


def test_reader_thread_errors_surface_and_early_exit_stops_it():
    import threading

    def failing():
        yield np.zeros(1)
        raise OSError("slide x.svs: cannot decode region")

    it = _prefetched(failing(), 2)
    assert next(it).shape == (1,)
    with pytest.raises(OSError, match="x.svs"):
        next(it)

    before = threading.active_count()
    it = _prefetched((np.zeros(1) for _ in range(1000)), 2)
    next(it)
    it.close()  # the consumer leaves early: the reader must not stay blocked on a full queue
    assert threading.active_count() == before


def test_torch_threads_follow_the_job_and_are_restored(synth_slides):
    import torch

    from repro.wsi.features import torch_threads

    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
